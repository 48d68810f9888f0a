"""The store check at a cold open of a large corpus: ``check_corpus`` reads a spread sample of the fp16
store's rows, each a random read of a file not yet in the page cache. Each figure is a fresh process
that first drops the store's pages from the cache (``posix_fadvise DONTNEED``), so every run is cold;
sample sizes alternate in one run, medians of ``--repeat``.

    python -m bench.open_cold [--corpus scale-10000000] [--samples 2000 256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from testbed.common import emit, run_folder

ROOT = Path(__file__).resolve().parents[1]


def one(corpus: str, sample: int) -> float:
    """In this (fresh) process: drop the store from the page cache, open the corpus, time the check."""
    import core.corpus as cc
    from core import paths, vectorstore

    cc.MAPPED_SAMPLE = sample
    manifest = cc.load_manifest(corpus)
    store = paths.corpus_dir(corpus) / manifest.get("data_dir", "") / vectorstore.FILE
    fd = os.open(store, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    c = cc.load_corpus(corpus, check=False)
    assert c.id_index.is_unique  # computed before the clock starts: the figure is the store's reads
    t = time.perf_counter()
    cc.check_corpus(c)
    return time.perf_counter() - t


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="scale-10000000")
    p.add_argument("--samples", type=int, nargs="+", default=[2000, 256])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process's sample size
    a = p.parse_args(argv)
    if a.one is not None:
        print(one(a.corpus, a.one))
        return
    run_folder("open-cold", sys.argv if argv is None else ["bench/open_cold.py", *argv])
    runs: dict[int, list[float]] = {n: [] for n in a.samples}
    for _ in range(a.repeat):
        for n in a.samples:
            out = subprocess.run([sys.executable, "-m", "bench.open_cold", "--corpus", a.corpus, "--one", str(n)],
                                 cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
                                 capture_output=True, text=True).stdout
            runs[n].append(float(out.strip().splitlines()[-1]))
    for n, r in runs.items():
        emit(op="check_corpus_cold", corpus=a.corpus, sample_rows=n, median_s=round(statistics.median(r), 2),
             runs=[round(x, 2) for x in r])


if __name__ == "__main__":
    main()
