"""Keyword hits inside a shortened link's code: how many a short query found only there, before and after the
keyword search stopped reading the codes (core/search/textindex.py, ``without_link_codes``), same run.

    python -m bench.link_codes [--corpus FILE ...] [--words 50] [--repeat 3]

For each corpus (by default the scale corpus, the Czech politicians' tweets and CrisisLex T26), the queries are
its most written words of 3 and of 4 letters (read outside links, as an annotator would type them) and a few
named ones. For each query: the hits of the in-memory engine reading the codes (``before``) and not reading them
(``after``); ``in_code_only`` = before - after, the hits whose text holds the query nowhere but in a link's code
(checked: none of them holds the query in its text once every link is cut out whole). Also the time to
build the default variant of the in-memory engine, median of ``--repeat``, both ways.
"""

from __future__ import annotations

import argparse
import collections
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core.cluster.keyterms import URL as LINK  # a link, as the key lemmas and copies cut it out
from core.search import keyword
from testbed.common import SCALE, SHARED, emit, run_folder

CORPORA = [SCALE, SHARED / "czech_politicians_tweets_2021.csv", SHARED / "crisislex_t26.csv"]
NAMED = {"russian_troll_tweets_recent300k": ["nfl", "fbi", "cnn", "gop", "isis", "war", "gun", "tax"],
         "czech_politicians_tweets_2021": ["ano", "ods", "spd", "kdu", "top", "pir", "covid"],
         "crisislex_t26": ["red", "fire", "flood", "help", "bomb", "rain"]}


def queries(texts: list[str], words: int, named: list[str]) -> list[str]:
    counts = collections.Counter()
    for t in texts:
        counts.update({w for w in re.findall(r"[^\W\d_]+", keyword.fold(LINK.sub(" ", t)))})
    out = list(named)
    for n in (3, 4):
        out += [w for w, _ in counts.most_common() if len(w) == n and w not in out][:words]
    return out


def build(texts: list[str], codes: bool, repeat: int) -> tuple[keyword.KeywordIndex, float]:
    saved = keyword.without_link_codes
    if codes:  # the engine as it was: the codes read like any other letters
        keyword.without_link_codes = lambda s: s
    try:
        runs = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            k = keyword.KeywordIndex(texts, prebuild=False)
            runs.append(time.perf_counter() - t0)
        return k, statistics.median(runs)
    finally:
        keyword.without_link_codes = saved


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.link_codes", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", nargs="+", type=Path, default=CORPORA)
    p.add_argument("--words", type=int, default=50, help="most written words of 3 and of 4 letters taken (each)")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("link_codes", sys.argv if argv is None else ["bench/link_codes.py", *argv])
    for path in a.corpus:
        texts = pd.read_csv(path, usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
        cut = [LINK.sub(" ", t) for t in texts]
        before, t_before = build(texts, True, a.repeat)
        after, t_after = build(texts, False, a.repeat)
        emit(op="build", corpus=path.stem, texts=len(texts), seconds_reading_codes=round(t_before, 3),
             seconds_without_codes=round(t_after, 3))
        shares, noisy = [], []
        for q in queries(texts, a.words, NAMED.get(path.stem, [])):
            b, f = keyword.find_rows(before, q), keyword.find_rows(after, q)
            lost = np.setdiff1d(b, f)
            # every hit no longer found holds the query only inside a link: never in the text around its links
            assert not any(q in keyword.fold(cut[r]) for r in lost), (path.stem, q)
            share = len(lost) / max(len(b), 1)
            shares.append(share)
            if share >= 0.01:
                noisy.append(q)
            emit(op="query", corpus=path.stem, query=q, before=len(b), after=len(f), in_code_only=len(lost),
                 share=round(share, 4))
        emit(op="summary", corpus=path.stem, queries=len(shares), median_share=round(statistics.median(shares), 4),
             max_share=round(max(shares), 4), queries_1pct_or_more=len(noisy), which=noisy)


if __name__ == "__main__":
    main()
