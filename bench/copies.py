"""Copies (core/copies.py) on the scale corpus: how many of its tweets are copies of another, what finding them
costs at import (300,000 texts, and ``--times`` x as many, the texts repeated with a row number so that each
repetition is a text of its own), and what a search then pays on the Annotate page for them: keeping each text
once among its hits and bringing in their copies, for 10 hits and for every hit of a frequent word, at 300k rows
and with the codes of a 10M corpus. Medians of ``--repeat``.

    python -m bench.copies [--times 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

from core.copies import Copies, codes_of
from testbed.common import SCALE, emit, run_folder


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--times", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("copies", sys.argv)
    texts = pd.read_csv(SCALE, dtype=str, keep_default_na=False, usecols=["text"])["text"]
    column = pd.Series(texts, dtype="str")  # as a loaded corpus holds its texts (Arrow-backed strings)
    codes = codes_of(column)
    c = Copies(codes)
    exact = texts.duplicated().sum()
    emit(corpus="scale", rows=len(texts), rows_with_copies=c.rows_with_copies,
         copies_of_an_earlier=int(len(codes) - len(np.unique(codes))), same_text_exactly=int(exact),
         find_seconds=round(median_seconds(lambda: codes_of(column), a.repeat), 3),
         index_seconds=round(median_seconds(lambda: Copies(codes), a.repeat), 3))
    rng = np.random.default_rng(0)
    hits = np.sort(rng.choice(len(texts), 10, replace=False))
    word = np.flatnonzero(texts.str.contains("trump", case=False, regex=False).to_numpy())
    for name, rows in (("10 hits", hits), (f"{len(word):,} hits of 'trump'", word)):
        emit(search=name, fold_ms=round(1000 * median_seconds(lambda: c.first_of_each(rows), a.repeat), 3),
             copies_ms=round(1000 * median_seconds(lambda: c.expand(rows), a.repeat), 3),
             copies_brought=int(len(c.expand(rows)) - len(rows)))
    # a 10M corpus's codes: the scale corpus's copies 33 times over (each time texts of their own), and a view of
    # 1.67M of its rows (as many as `trump` finds among 10M tweets): what the Annotate page folds per run
    tiled = np.concatenate([codes + i * (int(codes.max()) + 1) for i in range(33)]).astype(np.int32)
    big_index = Copies(tiled)
    view = np.sort(rng.choice(len(tiled), 1_670_000, replace=False))
    emit(corpus="scale's codes x33 (no texts)", rows=len(tiled),
         index_seconds=round(median_seconds(lambda: Copies(tiled), 1), 2),
         fold_view_of_1670000_ms=round(1000 * median_seconds(lambda: big_index.first_of_each(view), a.repeat), 1),
         copies_of_10_hits_ms=round(1000 * median_seconds(lambda: big_index.expand(view[:10]), a.repeat), 2))
    if a.times > 1:
        big = pd.Series([f"{t} {i}" for i in range(a.times) for t in texts], dtype="str")
        import pyarrow as pa

        big = pa.array(big, from_pandas=True)
        pool = pa.default_memory_pool()
        t = time.perf_counter()
        big_codes = codes_of(big)
        found = time.perf_counter() - t
        emit(corpus=f"scale x{a.times}", rows=len(big), find_seconds=round(found, 2),
             index_seconds=round(median_seconds(lambda: Copies(big_codes), 1), 2),
             texts_gb=round(big.nbytes / 1e9, 2), arrow_peak_gb=round(pool.max_memory() / 1e9, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
