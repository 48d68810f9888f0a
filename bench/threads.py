"""Conversations (core/threads.py) at scale: what reading a corpus's ``conversation_id`` costs once per import, what
opening its kept codes costs, and the first look at a conversation. ``--rows`` text ids (Twitter's: 19 digits, as a
loaded corpus holds them, Arrow-backed strings), threads of about three; medians of ``--repeat``.

    python -m bench.threads [--rows 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from bench.copies import median_seconds
from core.threads import Threads, codes_of
from testbed.common import emit, run_folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("threads", sys.argv if argv is None else ["bench/threads.py", *argv])
    rng = np.random.default_rng(0)
    ids = pd.Series((1_440_000_000_000_000_000 + rng.integers(0, max(1, a.rows // 3), a.rows)).astype(str),
                    dtype="str")
    codes = codes_of(ids)
    emit(op="codes_of", rows=a.rows, conversations=int(codes.max()) + 1,
         median_s=round(median_seconds(lambda: codes_of(ids), a.repeat), 3))
    emit(op="open_kept_codes", rows=a.rows, median_s=round(median_seconds(lambda: Threads(codes), a.repeat), 3))

    def first_look():
        t = Threads(codes)
        t.mates(0)

    emit(op="open_and_first_look", rows=a.rows, median_s=round(median_seconds(first_look, a.repeat), 3))
    t = Threads(codes)
    t.mates(0)  # looked at once: what each of Suggest's steps then pays for 1,000 labelled texts
    labelled = rng.choice(a.rows, 1000, replace=False)
    emit(op="around_1000_labelled", rows=a.rows,
         median_ms=round(1000 * median_seconds(lambda: t.around(labelled), max(a.repeat, 5)), 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
