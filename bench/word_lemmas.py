"""Suggest's words counted by lemma (core/search/lexical.py, ``word_matrix(texts, lang)``): does Suggest, given a
group whose included texts all say a word in one form, bring the texts that say it in another?

    python -m bench.word_lemmas [--corpus politici] [--lang cs] [--words volby energie ...]
                                [--unlisted babiš:babiše,babišovi ...] [--included 20]
                                [--excluded 10] [--k 100] [--seeds 0 1 2] [--sample 10]

For each word and seed: ``--included`` texts that hold the word as typed (a whole word; case and diacritics
aside) are the group's included texts, ``--excluded`` texts holding no form of it (core.wordforms) its excluded
ones; Suggest asks for the next ``--k`` with the words counted three ways, on the same embeddings: as written, by
the dictionary's lemma, and by lemma with the forms of words the dictionary does not list joined
(core.wordforms.unlisted_forms; the app's way). Counted in those k: texts holding another form of the word and not
the form typed (what only the lemma links to the group), and texts holding any form (whole words). A word of
``--words`` is one the dictionary lists, its forms those Every form takes; one of ``--unlisted`` (names, words
Wiktionary lacks) comes with its other forms written by hand. A lexical yardstick, not recall: a text on the topic
that names it otherwise is not counted, and a text holding the word off the topic is. ``--sample N`` writes to
``samples.md`` N texts per word that the app's way brought and the way before it did not (by lemma against as
written for listed words, joined against by lemma for unlisted ones), to read. The corpus is one imported already
(``SEMANNO_DATA`` selects the data root).

    python -m bench.word_lemmas --time-data ../shared/data/russian_troll_tweets_recent300k.csv --lang en [--repeat 3]

times instead the word matrix's build from the file's texts, the three ways (median of ``--repeat``), and
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
# words the dictionary does not list, each with its other forms (Czech declension, written by hand: the yardstick
# must not be the method's own guess)
UNLISTED = ["babiš:babiše,babišovi,babišem,babiši", "okamura:okamury,okamurovi,okamuru,okamurou",
            "zeman:zemana,zemanovi,zemanem", "tomio:tomia,tomiovi,tomiem",
            "kompenzační:kompenzačního,kompenzačnímu,kompenzačním,kompenzačních,kompenzačními",
            "digitalizace:digitalizaci,digitalizací", "dluhopisy:dluhopis,dluhopisu,dluhopisem,dluhopisů,dluhopisům,"
            "dluhopisech", "respirátory:respirátor,respirátoru,respirátorem,respirátorů,respirátorům,respirátorech"]
WAYS = {"as_written": (False, False), "by_lemma": (True, False), "and_unlisted": (True, True)}


def forms(word: str, lang: str) -> tuple[str, set[str]]:
    """(the word, every form of it): those given after a colon (``babiš:babiše,babišovi``), else those the keyword
    search's Every form takes (core.wordforms.paradigm); the word itself and those that hold it included."""
    word, _, given = word.partition(":")
    if given:
        return word, {word.lower(), *given.lower().split(",")}
    listed, made = wordforms.paradigm(word, lang)
    return word, {word.lower()} | listed | made


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
    for way, (lemmas, unlisted) in WAYS.items():
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            m = word_matrix(texts, lang if lemmas else None, unlisted)
            times.append(time.perf_counter() - t0)
        emit(texts=len(texts), words=way, lang=lang, columns=int(m.shape[1]), nnz=int(m.nnz),
             build_s=round(statistics.median(times), 2), runs=[round(t, 2) for t in times])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="politici")
    p.add_argument("--lang", default="cs")
    p.add_argument("--words", nargs="+", default=WORDS, help="words the dictionary lists (their forms: Every form's)")
    p.add_argument("--unlisted", nargs="+", default=UNLISTED,
                   help="words the dictionary does not list, as WORD:FORM,FORM,... (their other forms, by hand)")
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
    for way, (lemmas, unlisted) in WAYS.items():
        t0 = time.perf_counter()
        w = WordIndex(texts, lang=a.lang if lemmas else None, unlisted=unlisted)
        w.matrix
        words[way] = w
        emit(words=way, columns=int(w.matrix.shape[1]), build_s=round(time.perf_counter() - t0, 2))
    samples = []
    for group, listed in (("listed", a.words), ("unlisted", a.unlisted)):
        totals = {way: [0, 0] for way in WAYS}
        for entry in listed:
            word, every_form = forms(entry, a.lang)
            typed = find_rows(kindex, rf"\b{re.escape(word)}\b", is_regex=True)
            every = find_rows(kindex, whole_words(every_form), is_regex=True)
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
                for way in WAYS:
                    ctx = SearchContext(index, kindex, corpus.frame, word_index=words[way])
                    got[way] = REGISTRY["suggest"].search(ctx, inc, exc, a.k).rows
                counts = {way: (int(np.isin(r, other).sum()), int(np.isin(r, list(anyform)).sum()))
                          for way, r in got.items()}
                for way, c in counts.items():
                    totals[way][0] += c[0]
                    totals[way][1] += c[1]
                emit(word=word, seed=seed, typed=int(len(typed)), other_forms_only=int(len(other)),
                     **{way: {"other_form": c[0], "any_form": c[1]} for way, c in counts.items()})
                if seed == a.seeds[0] and a.sample:  # what the last way brought that the one before did not
                    before, last = list(WAYS)[-2:] if group == "unlisted" else list(WAYS)[:2]
                    new = [r for r in got[last] if r not in set(got[before].tolist())]
                    pick = np.random.default_rng(seed).permutation(new)[:a.sample] if new else []
                    samples.append(f"## {word}: {len(new)} of Suggest's {a.k} {last} not among its {a.k} {before}\n")
                    samples += [f"- {'form' if r in anyform else '----'} | " + " ".join(texts[int(r)].split())[:200]
                                for r in pick]
                    samples.append("")
        emit(summary={"words": group, "lang": a.lang, "k": a.k, "seeds": a.seeds,
                      **{way: {"other_form": t[0], "any_form": t[1]} for way, t in totals.items()}})
    if samples:
        (Path(folder) / "samples.md").write_text("\n".join(samples) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
