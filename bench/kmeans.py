"""K-Means seconds and objective against FAISS in the same run; NMI/ACC on the labelled benchmarks.

    python -m bench.kmeans speed [--n 203057] [--dim 512] [--k 1000 5000 12000] [--faiss-niter 20]
    python -m bench.kmeans quality [--datasets stackoverflow biomedical searchsnippets agnews8000]

``speed`` uses synthetic clustered unit vectors; ``quality`` uses corpora imported under the data
root with the default model (python -m precompute.embed ../shared/data/NAME.csv --name NAME),
k = number of classes. One JSON object per line.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.common import clustered, emit
from core.cluster.evaluate import label_scores
from core.cluster.kmeans import kmeans, objective


def speed(a) -> None:
    import faiss

    x, _ = clustered(a.n, a.dim, clusters=a.true_clusters)
    for k in a.k:
        t = time.perf_counter()
        ours = kmeans(x, k, niter=a.niter, seed=0)
        t_ours = time.perf_counter() - t
        o_ours = objective(x, ours.labels, ours.centroids)
        row = {"op": "kmeans", "k": k, "n": a.n, "dim": a.dim, "ours_s": round(t_ours, 1),
               "ours_iterations": ours.iterations, "ours_objective": round(o_ours, 1)}
        if a.faiss_niter:
            km = faiss.Kmeans(a.dim, k, niter=a.faiss_niter, seed=0, max_points_per_centroid=10**9)
            t = time.perf_counter()
            km.train(x)
            t_faiss = time.perf_counter() - t
            _, lab = km.index.search(x, 1)
            o_faiss = objective(x, lab[:, 0], km.centroids)
            row.update(faiss_s=round(t_faiss, 1), faiss_niter=a.faiss_niter, faiss_objective=round(o_faiss, 1),
                       objective_vs_faiss=round(o_ours / o_faiss - 1, 4))
        emit(**row)


def quality(a) -> None:
    from core.corpus import load_corpus

    for name in a.datasets:
        c = load_corpus(name)
        y = c.frame["label"].astype(str).to_numpy()
        k = len(set(y))
        scores = []
        for seed in range(a.seeds):
            r = kmeans(c.embeddings, k, niter=100, seed=seed, tol=0)
            scores.append(label_scores(y, r.labels))
        emit(op="kmeans_quality", dataset=name, k=k, seeds=a.seeds,
             nmi=round(100 * float(np.mean([s["nmi"] for s in scores])), 1),
             acc=round(100 * float(np.mean([s["acc"] for s in scores])), 1))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--n", type=int, default=203_057)
    s.add_argument("--dim", type=int, default=512)
    s.add_argument("--k", type=int, nargs="+", default=[1000, 5000, 12000])
    s.add_argument("--niter", type=int, default=20)
    s.add_argument("--faiss-niter", type=int, default=20, help="0 skips the FAISS comparison")
    s.add_argument("--true-clusters", type=int, default=2000)
    q = sub.add_parser("quality")
    q.add_argument("--datasets", nargs="+", default=["stackoverflow", "biomedical", "searchsnippets", "agnews8000"])
    q.add_argument("--seeds", type=int, default=3)
    a = p.parse_args(argv)
    speed(a) if a.cmd == "speed" else quality(a)


if __name__ == "__main__":
    main()
