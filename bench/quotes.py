"""What *Quoted tweets too* costs the keyword search: 300,000 real tweets (the scale corpus), every ``--share``-th
one made a quote of another tweet of the corpus ("@author: text", as the import writes core.ingest.QUOTED), the
in-memory engine (corpora under 1M rows) and random unit vectors to rank the hits.

    python -m bench.quotes [--rows 300000] [--share 5] [--repeat 7] [--build 10000000]

Prints the quote index's build (seconds, MB traced) and, for bench.keyword_scale's queries, the keyword search
(``core.search.keyword.search``, ranking included) without and with ``quotes``, alternating, the median of
``--repeat`` runs each, with the hits and how many only a quoted tweet found. ``--build N``: also the quote index's
build for N rows (the 300,000 tweets repeated, every ``--share``-th a quote), as a 10M corpus's page builds it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

from bench.keyword_scale import QUERIES
from core.ingest import QUOTED
from core.search.base import SearchContext
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex, QuoteIndex, search
from testbed.common import emit, run_folder
from tests.conftest import shared_file


def corpus(rows: int, share: int, seed: int = 0) -> pd.DataFrame:
    """The first ``rows`` tweets, every ``share``-th quoting a random other one of them."""
    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), dtype=str, keep_default_na=False,
                        usecols=["id", "text", "author"], nrows=rows)
    rng = np.random.default_rng(seed)
    quoted = np.full(len(frame), "", dtype=object)
    quotes = np.arange(0, len(frame), share)
    src = rng.integers(0, len(frame), len(quotes))
    quoted[quotes] = ("@" + frame["author"].to_numpy(object)[src] + ": " + frame["text"].to_numpy(object)[src])
    frame[QUOTED] = quoted
    return frame


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--share", type=int, default=5, help="every n-th tweet is a quote")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--build", type=int, default=0, help="also time the quote index's build for this many rows")
    args = ap.parse_args(argv)
    run_folder("quotes", sys.argv if argv is None else ["bench.quotes", *argv])
    frame = corpus(args.rows, args.share)
    vectors = np.random.default_rng(1).standard_normal((len(frame), 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ctx = SearchContext(VectorIndex(vectors), KeywordIndex(frame["text"].tolist(), prebuild=False), frame)
    tracemalloc.start()
    t0 = time.perf_counter()
    quotes = QuoteIndex(frame[QUOTED])
    built = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    ctx.__dict__["quotes"] = quotes  # SearchContext.quotes, read as the page's warm-up reads it
    emit(step="quote index", rows=len(frame), quotes=int(len(quotes.rows)), seconds=round(built, 3),
         traced_mb=round(traced, 1))
    if args.build:
        many = pd.Series(np.resize(frame[QUOTED].to_numpy(object), args.build), dtype="str")
        t0 = time.perf_counter()
        big = QuoteIndex(many)
        emit(step="quote index", rows=args.build, quotes=int(len(big.rows)), seconds=round(time.perf_counter() - t0, 3))
        del big, many
    none = np.zeros(0, np.int64)
    for name, (query, is_regex) in QUERIES.items():
        times: dict[bool, list[float]] = {False: [], True: []}
        found = {}
        for i in range(args.repeat + 1):
            for with_quotes in ((False, True) if i % 2 else (True, False)):
                t0 = time.perf_counter()
                r = search(ctx, none, none, None, query=query, is_regex=is_regex, quotes=with_quotes, timeout_s=30)
                if i:  # the first round warms both
                    times[with_quotes].append((time.perf_counter() - t0) * 1000)
                found[with_quotes] = r.info
        emit(query=name, without_ms=round(statistics.median(times[False]), 1),
             with_ms=round(statistics.median(times[True]), 1), hits=found[False]["hits"],
             hits_with_quotes=found[True]["hits"], by_quote=found[True].get("by_quote", 0))


if __name__ == "__main__":
    main()
