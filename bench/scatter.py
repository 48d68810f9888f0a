"""The LDA scatter of a whole corpus, alone (the same measurement as ``bench.scale``'s scatter step,
without its import and searches): directions, projection of every row, figure and JSON, and a lasso
around everything.

    python -m bench.scatter scale-300000 scale-1000000 scale-3000000 [--repeat 3]

One JSON object per corpus and space - the sketch the page draws from (where the corpus has one) and the
full vectors, alternating: medians of ``--repeat`` runs in one process (the page cache warm after a first
unmeasured run).
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from bench.scale import scatter
from testbed.common import emit, run_folder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("corpora", nargs="+")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("scatter", sys.argv if argv is None else ["bench/scatter.py", *argv])
    from types import SimpleNamespace

    from core.corpus import load_corpus
    from ui.resources import vector_index

    for name in a.corpora:
        c = load_corpus(name)
        ctx = SimpleNamespace(index=vector_index(c, "cpu"))
        x = ctx.index.vectors
        rng = np.random.default_rng(0)  # the anchor and labels bench.scale uses
        anchor = int(rng.integers(c.n))
        near, _ = ctx.index.topk(np.asarray(x[anchor], np.float32), 200)
        inc, exc = np.sort(near[::10][:20]), np.sort(rng.choice(c.n, 20, replace=False))
        # the page's space (the sketch where the corpus has one) and the full vectors, alternating
        spaces = ["auto", "full"] if scatter(c, ctx, inc, exc)["scatter_space"] == "sketch" else ["full"]
        runs = {s: [] for s in spaces}
        for _ in range(a.repeat):
            for s in spaces:
                runs[s].append(scatter(c, ctx, inc, exc, s))
        for s, rs in runs.items():
            med = {key: statistics.median(r[key] for r in rs) if rs[0][key] is not None else None
                   for key in ("scatter_ready_s", "scatter_projection_s", "lasso_all_s")}
            emit(corpus=name, rows=c.n, repeat=a.repeat, space=rs[0]["scatter_space"], raster=rs[0]["scatter_raster"],
                 **med)


if __name__ == "__main__":
    main()
