"""A large corpus opened cold, as a server does after a start: each figure is a fresh process that first
drops the fp16 store's pages from the page cache (``posix_fadvise DONTNEED``), so every run reads the
store from the disk.

    python -m bench.open_cold [--corpus scale-10000000] [--samples 2000 256] [--repeat 3]
        the store check at open (``check_corpus`` reads a spread sample of the store's rows)
    python -m bench.open_cold --scatter [--delays 0 5] [--trees . /tmp/before] [--repeat 3]
        the first scatter after the server opened the corpus (issue 29's "scatter ready <= 5 s" for the
        first view, which waited on the disk): the corpus and its search context opened as the server
        opens them (``ui.resources``: the store warmed in the background where the tree does that), then,
        after ``delay`` seconds (0: the user asks for the scatter the moment the corpus is open), the
        scatter's LDA directions, projection of every row and figure, timed. ``--trees`` runs the same
        probe with the code of other checkouts (an earlier commit's worktree), alternating, in one run.
        ``--preview`` first times the Scatter page's first look of a large corpus (LDA directions, a
        sixteenth of the rows in spread blocks, its figure), then the full scatter as before (which fits
        the directions again; the page reuses them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from testbed.common import emit, run_folder

ROOT = Path(__file__).resolve().parents[1]


def _drop(corpus: str) -> None:
    import core.corpus as cc
    from core import paths, vectorstore

    from core import sketch

    manifest = cc.load_manifest(corpus)
    data = paths.corpus_dir(corpus) / manifest.get("data_dir", "")
    for f in (data / vectorstore.FILE, data / sketch.FILE):  # the scatter's sketch too, where there is one
        if not f.exists():
            continue
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def one(corpus: str, sample: int) -> float:
    """In this (fresh) process: drop the store from the page cache, open the corpus, time the check."""
    import core.corpus as cc

    cc.MAPPED_SAMPLE = sample
    _drop(corpus)
    c = cc.load_corpus(corpus, check=False)
    assert c.id_index.is_unique  # computed before the clock starts: the figure is the store's reads
    t = time.perf_counter()
    cc.check_corpus(c)
    return time.perf_counter() - t


def first_scatter(corpus: str, delay: float, preview: bool = False) -> dict:
    """In this (fresh) process: drop the store, open the corpus as the server does, wait, time a scatter."""
    import numpy as np

    from bench.scale import scatter
    from core import vectorstore
    from core.corpus import load_corpus
    from ui.resources import search_context_of

    _drop(corpus)
    t = time.perf_counter()
    c = load_corpus(corpus)
    warmed = hasattr(vectorstore, "warm") and vectorstore.warm(c.vector_file) is not None  # as ui.resources
    ctx = search_context_of(c, "cpu")
    opened = time.perf_counter() - t
    time.sleep(delay)
    rng = np.random.default_rng(0)
    inc = np.sort(rng.choice(c.n, 20, replace=False))  # labelled rows anywhere in the store
    exc = np.sort(rng.choice(np.setdiff1d(np.arange(1000), inc), 20, replace=False))
    out = {"open_s": round(opened, 2), "warmed": warmed}
    if preview:  # the page's first look (pages/3_Scatter.py), then the full scatter as before
        from core import projection
        from core.projection import lda_directions

        t = time.perf_counter()
        w = lda_directions(ctx.index.vectors, inc, exc)
        sc, rows = projection.preview_scatter(ctx.index.vectors, w, inc, exc, c.frame["text"])  # as the page
        sc.figure.to_json()
        out.update(preview_ready_s=round(time.perf_counter() - t, 2), preview_rows=int(len(rows)))
    first = scatter(c, ctx, inc, exc)
    return {**out, "scatter_ready_s": first["scatter_ready_s"], "scatter_projection_s": first["scatter_projection_s"]}


def _child(tree: Path, args: list[str]) -> str:
    from core import paths

    env = {**os.environ, "PYTHONPATH": str(tree), "SEMANNO_DATA": str(paths.data_root().resolve())}
    return subprocess.run([sys.executable, str(ROOT / "bench" / "open_cold.py"), *args], cwd=tree, env=env,
                          check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="scale-10000000")
    p.add_argument("--samples", type=int, nargs="+", default=[2000, 256])
    p.add_argument("--scatter", action="store_true", help="the first scatter after opening, not the check")
    p.add_argument("--delays", type=float, nargs="+", default=[0.0, 5.0])
    p.add_argument("--trees", type=Path, nargs="+", default=[ROOT], help="checkouts whose code is measured")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process's sample size
    p.add_argument("--preview", action="store_true", help="with --scatter: time the page's first look first")
    p.add_argument("--one-scatter", type=float, help=argparse.SUPPRESS)  # the child process's delay
    a = p.parse_args(argv)
    if a.one is not None:
        print(one(a.corpus, a.one))
        return
    if a.one_scatter is not None:
        print(json.dumps(first_scatter(a.corpus, a.one_scatter, a.preview)))
        return
    run_folder("open-cold", sys.argv if argv is None else ["bench/open_cold.py", *argv])
    if a.scatter:
        runs: dict = {}
        for _ in range(a.repeat):
            for tree in a.trees:
                for delay in a.delays:
                    line = json.loads(_child(tree.resolve(), ["--corpus", a.corpus, "--one-scatter", str(delay)]
                                             + (["--preview"] if a.preview else [])))
                    runs.setdefault((str(tree), delay), []).append(line)
        for (tree, delay), r in runs.items():
            emit(op="first_scatter_cold", corpus=a.corpus, tree=tree, delay_s=delay,
                 warmed=r[0]["warmed"], **{k: round(statistics.median(x[k] for x in r), 2) for k in
                                             ("open_s", "preview_ready_s", "scatter_ready_s", "scatter_projection_s")
                                             if k in r[0]},
                 runs=[x["scatter_ready_s"] for x in r],
                 **({"preview_runs": [x["preview_ready_s"] for x in r]} if "preview_ready_s" in r[0] else {}))
        return
    runs_s: dict = {}
    for _ in range(a.repeat):
        for tree in a.trees:
            for n in a.samples:
                runs_s.setdefault((str(tree), n), []).append(
                    float(_child(tree.resolve(), ["--corpus", a.corpus, "--one", str(n)])))
    for (tree, n), r in runs_s.items():
        emit(op="check_corpus_cold", corpus=a.corpus, tree=tree, sample_rows=n,
             median_s=round(statistics.median(r), 2), runs=[round(x, 2) for x in r])


if __name__ == "__main__":
    main()
