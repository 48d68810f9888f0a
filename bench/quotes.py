"""What *Quoted tweets too* costs the keyword search: 300,000 real tweets (the scale corpus), every ``--share``-th
one made a quote of another tweet of the corpus ("@author: text", as the import writes core.ingest.QUOTED), the
in-memory engine (corpora under 1M rows) and random unit vectors to rank the hits.

    python -m bench.quotes [--rows 300000] [--share 5] [--repeat 7] [--build 10000000]

Prints the quote index's build (seconds, MB traced) and, for bench.keyword_scale's queries, the keyword search
(``core.search.keyword.search``, ranking included) without and with ``quotes``, alternating, the median of
``--repeat`` runs each, with the hits and how many only a quoted tweet found. ``--build N``: also the quote index's
index at N rows (the 300,000 tweets' quotes repeated) built on disk as the import builds it for a corpus of 1M rows or
more, and joined in memory as for a smaller one: build, memory, and the quotes' part of each query both ways.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

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


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def at_scale(frame: pd.DataFrame, rows: int, repeat: int) -> None:
    """The quote index of ``rows`` rows (``frame``'s quotes repeated) both ways: joined in memory (corpora under 1M
    rows) and built on disk as the import builds it for larger ones; build, open, memory (resident, MB) and the
    quotes' part of each query (QuoteIndex.find), medians of ``repeat``, the same rows found."""
    import tempfile

    from core.atomic import save_npy
    from core.search import textindex
    from core.search.keyword import QUOTES_ROWS, fold, quoting

    many = pd.Series(np.resize(frame[QUOTED].to_numpy(object), rows), dtype="str")
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        found, quoted = quoting(many)
        textindex.build(Path(folder) / textindex.FILE, quoted.tolist(), len(found), fold)
        save_npy(Path(folder) / QUOTES_ROWS, found)
        built = time.perf_counter() - t0
        del quoted
        before, t0 = _rss_mb(), time.perf_counter()
        disk = QuoteIndex(many, Path(folder))
        emit(step="on disk", rows=rows, quotes=int(len(found)), build_s=round(built, 1),
             open_s=round(time.perf_counter() - t0, 2), resident_mb=round(_rss_mb() - before))
        before, t0 = _rss_mb(), time.perf_counter()
        memory = QuoteIndex(many)
        emit(step="in memory", rows=rows, quotes=int(len(memory.rows)), build_s=round(time.perf_counter() - t0, 1),
             resident_mb=round(_rss_mb() - before))
        for name, (query, is_regex) in QUERIES.items():
            times = {"disk": [], "memory": []}
            for i in range(repeat + 1):
                for kind, index in (("disk", disk), ("memory", memory)):
                    t0 = time.perf_counter()
                    rows_found = index.find(query, is_regex, timeout_s=60)
                    if i:
                        times[kind].append((time.perf_counter() - t0) * 1000)
            assert np.array_equal(disk.find(query, is_regex, timeout_s=60), memory.find(query, is_regex, timeout_s=60))
            emit(query=name, rows=rows, quotes_found=int(len(rows_found)),
                 disk_ms=round(statistics.median(times["disk"]), 1),
                 memory_ms=round(statistics.median(times["memory"]), 1))


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
        at_scale(frame, args.build, args.repeat)
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
