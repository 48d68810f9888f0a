"""How long a group's download takes in each format, and its size: real tweets (the scale corpus's
texts, dates and authors) as the export's frame, ``--sizes`` rows each, median of ``--repeat``.

    python -m bench.export [--sizes 10000 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import pandas as pd

from core.export import FORMATS, to_bytes
from testbed.common import SCALE, emit, run_folder


def frame(n: int) -> pd.DataFrame:
    """``n`` tweets of the scale corpus shaped as core.export.group_frame shapes a group."""
    raw = pd.read_csv(SCALE, nrows=n, dtype=str, keep_default_na=False, usecols=["id", "text", "date", "author"])
    out = raw[["id", "text"]].copy()
    out["label"] = ["excluded" if i % 5 == 0 else "included" for i in range(len(out))]
    out["date"] = pd.to_datetime(raw["date"], format="mixed")
    out["author"] = raw["author"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("export", sys.argv)
    for n in a.sizes:
        f = frame(n)
        for fmt in FORMATS:
            times, size = [], 0
            for _ in range(a.repeat):
                t = time.perf_counter()
                size = len(to_bytes(f, fmt))
                times.append(time.perf_counter() - t)
            emit(rows=len(f), format=fmt, seconds=round(statistics.median(times), 3), mb=round(size / 1e6, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
