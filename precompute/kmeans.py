"""K-Means of a corpus's embeddings, one file per k (resumable: finished k are skipped).

    python -m precompute.kmeans --corpus NAME --k 1000 [--k 5000 ...] [--niter 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

import numpy as np
from tqdm import tqdm

from core.atomic import atomic_path, save_json
from core.corpus import load_corpus
from core.clusterings import kmeans_file
from core.kmeans import kmeans
from core.embed import pick_device
from precompute._cli import run_main

log = logging.getLogger(__name__)


output = kmeans_file  # where a k's clustering goes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.kmeans", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--k", type=int, action="append", required=True, help="repeat for several k")
    p.add_argument("--niter", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--neighbours", type=int, default=64, help="candidate centroids per point after the early iterations")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--force", action="store_true", help="recompute k that are already done")
    a = p.parse_args(argv)
    corpus = load_corpus(a.corpus)
    device = pick_device(a.device)
    for k in a.k:
        out = output(a.corpus, k)
        if out.exists() and not a.force:
            log.info("k=%d already done (%s); --force recomputes it", k, out)
            continue
        bar = tqdm(total=a.niter, desc=f"k-means k={k}", unit="iter", file=sys.stderr)

        def progress(it: int, obj: float, changed: int) -> None:
            bar.set_postfix(objective=f"{obj:.1f}", changed=changed)
            bar.update(it - bar.n)

        res = kmeans(corpus.embeddings, k, niter=a.niter, seed=a.seed, device=device,
                     neighbours=a.neighbours, progress=progress)
        bar.close()
        stats = {"k": k, "seconds": round(res.seconds, 2), "iterations": res.iterations,
                 "objective": res.objective, "changed": res.changed, "seed": a.seed, "device": device,
                 "rows": corpus.n}
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, labels=res.labels, centroids=res.centroids, stats=json.dumps(stats))
        save_json(out.with_suffix(".json"), stats)
        log.info("k=%d: %d iterations, %.1f s, objective %.1f -> %s", k, res.iterations, res.seconds,
                 res.objective[-1], out)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
