"""Every form of a word (core/wordforms.py): how many more texts a Czech keyword finds, which forms find
them, a sample of them to read, and what it costs in time, in memory and through a large corpus's index.

    python -m bench.word_forms [--data ../shared/data/czech_politicians_tweets_2021.csv] [--lang cs]
                               [--words volby energie ...] [--phrases "státní rozpočet" ...] [--repeat 7]
                               [--sample 15] [--rows 1000000]

For each word: the texts found as typed (a substring, case and diacritics aside) and with every form, the
forms that found texts, and the median time of the keyword search both ways (``find_rows``, and for every
form the second scan too, as ``core.search.keyword.search`` runs it). The dictionary's first read (time and
peak memory) is reported once. ``--sample N`` writes N texts found only by another form per word to
``samples.md`` in the run folder, to read. ``--rows N`` also times the words through the on-disk index of
N texts that ``bench.keyword_scale`` builds (or reuses), as a corpus of a million texts or more searches.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path.cwd()))

from core import wordforms  # noqa: E402
from core.rows import rows_without, unique_rows  # noqa: E402
from core.search.keyword import KeywordError, KeywordIndex, find_rows, forms_rows  # noqa: E402
from testbed.common import SHARED, emit, run_folder  # noqa: E402

# topics of Czech politics in 2021, typed as a Czech annotator types them: the dictionary form
WORDS = ["volby", "energie", "vakcína", "očkování", "uprchlík", "daň", "děti", "ceny energií", "zdravotník",
         "nemocnice", "škola", "důchod", "armáda", "koalice", "soud", "hranice"]
# phrases typed as a Czech annotator types them (``--words`` and ``--phrases`` are measured one after the other)
PHRASES = ["státní rozpočet", "Evropská unie", "ústavní soud", "nová vláda", "minimální mzda", "zdravotní pojišťovna",
           "veřejné finance", "hnutí ANO", "Andrej Babiš", "Tomio Okamura", "Petr Fiala"]


def timed(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, round(1000 * statistics.median(times), 2)


def both_ways(kindex: KeywordIndex, word: str, lang: str, repeat: int):
    """(rows as typed, rows with every form, ms as typed, ms with every form, the forms added), every form as the
    keyword search runs it (``forms_rows``: a phrase's words first looked up in the corpus); a KeywordError (a
    phrase refused) as every form's rows."""
    typed, ms_typed = timed(lambda: find_rows(kindex, word), repeat)

    def every():
        rows = find_rows(kindex, word)
        more, _extra, added = forms_rows(kindex, word, lang)
        return unique_rows(rows, more), added

    try:
        (every_rows, added), ms_every = timed(every, repeat)
    except KeywordError as e:
        return typed, e, ms_typed, None, []
    return typed, every_rows, ms_typed, ms_every, added


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=SHARED / "czech_politicians_tweets_2021.csv")
    ap.add_argument("--lang", default="cs")
    ap.add_argument("--words", nargs="*", default=WORDS)
    ap.add_argument("--phrases", nargs="*", default=PHRASES)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sample", type=int, default=15)
    ap.add_argument("--rows", type=int, nargs="*", default=[])
    ap.add_argument("--no-word-set", action="store_true",
                    help="find which forms the corpus holds by scanning its texts, as before its words were built "
                         "in the background (KeywordIndex.words)")
    args = ap.parse_args(argv)
    folder = run_folder("word-forms", sys.argv)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    wordforms.dictionary(args.lang)
    emit(kind="dictionary", folder=str(folder), lang=args.lang, read_s=round(time.perf_counter() - t0, 2),
         peak_mb=round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, 1),
         entries=len(wordforms.dictionary(args.lang).forms.starts))
    texts = pd.read_csv(args.data, usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
    kindex = KeywordIndex(texts, prebuild=False)
    if not args.no_word_set:  # what the app's background thread does once the index is built
        before, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter()
        kindex.build_words()
        emit(kind="word_set", rows=len(texts), words=len(kindex.words), build_s=round(time.perf_counter() - t0, 2),
             peak_mb=round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, 1))
    rng = np.random.default_rng(0)
    samples = [f"# Texts found only by another form ({args.data.name}, {len(texts):,} texts)\n"]
    wordforms.warm(args.lang)  # as the app does while the user types (the analogs, the changes of ending)
    total = {False: [0, 0], True: [0, 0]}  # words, phrases
    for word in [*args.words, *args.phrases]:
        typed, every, ms_typed, ms_every, added = both_ways(kindex, word, args.lang, args.repeat)
        if isinstance(every, KeywordError):
            emit(kind="word", data=args.data.name, rows=len(texts), word=word, typed=len(typed), refused=str(every))
            continue
        only = rows_without(every, typed)
        total[" " in word][0] += len(typed)
        total[" " in word][1] += len(every)
        emit(kind="word", data=args.data.name, rows=len(texts), word=word, typed=len(typed), every_form=len(every),
             gain=round(len(every) / max(1, len(typed)), 2), forms_added=len(added), ms_typed=ms_typed,
             ms_every_form=ms_every)
        picked = rng.choice(only, min(args.sample, len(only)), replace=False) if len(only) else []
        samples.append(f"\n## {word}: {len(typed):,} as typed, {len(every):,} in every form\n")
        samples += [f"- {texts[int(r)].replace(chr(10), ' ')[:300]}\n" for r in sorted(picked)]
    for phrases, (n_typed, n_every) in total.items():
        emit(kind="phrases" if phrases else "words", data=args.data.name,
             count=sum((" " in w) == phrases for w in [*args.words, *args.phrases]), typed=n_typed,
             every_form=n_every, gain=round(n_every / max(1, n_typed), 2))
    (folder / "samples.md").write_text("".join(samples), encoding="utf-8")
    for rows in args.rows:
        from bench.keyword_scale import index_for
        from core.search import textindex

        path, build_s = index_for(rows, fts=False)
        big = KeywordIndex([""] * rows, text_index=textindex.TextIndex(path, rows))
        for word in [*args.words, *args.phrases]:
            typed, every, ms_typed, ms_every, _added = both_ways(big, word, args.lang, args.repeat)
            if isinstance(every, KeywordError):
                emit(kind="word_indexed", rows=rows, word=word, typed=len(typed), refused=str(every))
                continue
            emit(kind="word_indexed", rows=rows, index_build_s=build_s and round(build_s, 1), word=word,
                 typed=len(typed), every_form=len(every), ms_typed=ms_typed, ms_every_form=ms_every)


if __name__ == "__main__":
    main()
