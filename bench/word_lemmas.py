"""Suggest's words counted by lemma (core/search/lexical.py, ``word_matrix(texts, lang)``): does Suggest, given a
group whose included texts all say a word in one form, bring the texts that say it in another?

    python -m bench.word_lemmas [--corpus politici] [--lang cs] [--words volby energie ...] [--included 20]
                                [--excluded 10] [--k 100] [--seeds 0 1 2] [--sample 10]

For each word and seed: ``--included`` texts that hold the word as typed (a whole word; case and diacritics
aside) are the group's included texts, ``--excluded`` texts holding no form of it (core.wordforms) its excluded
ones; Suggest asks for the next ``--k`` with the words counted as written and by lemma, on the same embeddings.
Counted in those k: texts holding another form of the word and not the form typed (what only the lemma links to
the group), and texts holding any form (whole words: the forms Every form takes, and those that hold the word).
A lexical yardstick, not recall: a text on the topic that names it otherwise is not counted, and a text holding
the word off the topic is. ``--sample N`` writes to ``samples.md`` N texts per word that Suggest brought by lemma
and not as written, to read. The corpus is one imported already (``SEMANNO_DATA`` selects the data root).

    python -m bench.word_lemmas --time-data ../shared/data/russian_troll_tweets_recent300k.csv --lang en [--repeat 3]

times instead the word matrix's build from the file's texts, as written and by lemma (median of ``--repeat``), and
the dictionary's first read apart; ``--rows N`` repeats the texts up to N (the same vocabulary, N texts' tokens).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))

from core.corpus import load_corpus  # noqa: E402
from core.rows import rows_without  # noqa: E402
from core.search import REGISTRY, SearchContext  # noqa: E402
from core.search.index import VectorIndex  # noqa: E402
from core import wordforms  # noqa: E402
from core.search.keyword import KeywordIndex, find_rows  # noqa: E402
from core.search.lexical import WordIndex  # noqa: E402
from precompute._cli import quiet_logging  # noqa: E402
from testbed.common import emit, run_folder  # noqa: E402

WORDS = ["volby", "energie", "očkování", "škola", "daň", "děti", "nemocnice", "důchod", "koalice", "soud",
         "hranice", "armáda", "uprchlík", "zdravotník"]


def forms(word: str, lang: str) -> set[str]:
    """Every form of ``word`` as the keyword search's Every form takes them (core.wordforms.paradigm), the word itself
    and those that hold it included."""
    listed, made = wordforms.paradigm(word, lang)
    return {word.lower()} | listed | made


def whole_words(words) -> str:
    return r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b"


def build_times(path: Path, lang: str, repeat: int, rows: int | None = None) -> None:
    import pandas as pd

    from core.search.lexical import word_matrix

    texts = pd.read_csv(path, usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
    if rows:  # the file's texts over again up to ``rows``: the same words, more of them
        texts = (texts * (rows // len(texts) + 1))[:rows]
    t0 = time.perf_counter()
    wordforms.dictionary(lang)
    emit(dictionary_read_s=round(time.perf_counter() - t0, 2), lang=lang)
    for way in (None, lang):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            m = word_matrix(texts, way)
            times.append(time.perf_counter() - t0)
        emit(texts=len(texts), words=way or "as written", columns=int(m.shape[1]), nnz=int(m.nnz),
             build_s=round(statistics.median(times), 2), runs=[round(t, 2) for t in times])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="politici")
    p.add_argument("--lang", default="cs")
    p.add_argument("--words", nargs="+", default=WORDS)
    p.add_argument("--included", type=int, default=20)
    p.add_argument("--excluded", type=int, default=10)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--sample", type=int, default=10)
    p.add_argument("--time-data", type=Path, default=None)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rows", type=int, default=None, help="with --time-data: its texts repeated up to N")
    a = p.parse_args(argv)
    folder = run_folder("word-lemmas", sys.argv if argv is None else ["bench/word_lemmas.py", *argv])
    quiet_logging()
    if a.time_data:
        return build_times(a.time_data, a.lang, a.repeat, a.rows)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    corpus = load_corpus(a.corpus)
    texts = corpus.frame["text"].tolist()
    kindex = KeywordIndex(texts)
    index = VectorIndex(corpus.embeddings)
    words = {}
    for lang in (None, a.lang):
        t0 = time.perf_counter()
        w = WordIndex(texts, lang=lang)
        w.matrix
        words[lang] = w
        emit(words=lang or "as written", columns=int(w.matrix.shape[1]), build_s=round(time.perf_counter() - t0, 2))
    samples, totals = [], {None: [0, 0], a.lang: [0, 0]}
    for word in a.words:
        typed = find_rows(kindex, rf"\b{re.escape(word)}\b", is_regex=True)
        every = find_rows(kindex, whole_words(forms(word, a.lang)), is_regex=True)
        other = rows_without(every, typed)
        anyform = set(every.tolist()) | set(typed.tolist())
        if len(typed) < a.included + 5 or not len(other):
            emit(word=word, skipped=f"{len(typed)} texts as typed, {len(other)} in another form only")
            continue
        rest = np.setdiff1d(np.arange(len(texts)), np.fromiter(anyform, np.int64))
        for seed in a.seeds:
            rng = np.random.default_rng(seed)
            inc = np.sort(rng.choice(typed, a.included, replace=False))
            exc = np.sort(rng.choice(rest, a.excluded, replace=False))
            got = {}
            for lang in (None, a.lang):
                ctx = SearchContext(index, kindex, corpus.frame, word_index=words[lang])
                got[lang] = REGISTRY["suggest"].search(ctx, inc, exc, a.k).rows
            counts = {lang: (int(np.isin(r, other).sum()), int(np.isin(r, list(anyform)).sum()))
                      for lang, r in got.items()}
            for lang, c in counts.items():
                totals[lang][0] += c[0]
                totals[lang][1] += c[1]
            emit(word=word, seed=seed, typed=int(len(typed)), other_forms_only=int(len(other)),
                 as_written={"other_form": counts[None][0], "any_form": counts[None][1]},
                 by_lemma={"other_form": counts[a.lang][0], "any_form": counts[a.lang][1]})
            if seed == a.seeds[0] and a.sample:
                new = [r for r in got[a.lang] if r not in set(got[None].tolist())]
                pick = np.random.default_rng(seed).permutation(new)[:a.sample] if new else []
                samples.append(f"## {word}: {len(new)} of Suggest's {a.k} by lemma not among its {a.k} as written\n")
                samples += [f"- {'form' if r in anyform else '----'} | " + " ".join(texts[int(r)].split())[:200]
                            for r in pick]
                samples.append("")
    emit(summary={"words_by_lemma": a.lang, "k": a.k, "seeds": a.seeds,
                  "as_written": {"other_form": totals[None][0], "any_form": totals[None][1]},
                  "by_lemma": {"other_form": totals[a.lang][0], "any_form": totals[a.lang][1]}})
    if samples:
        (Path(folder) / "samples.md").write_text("\n".join(samples) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
