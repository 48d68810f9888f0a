"""Clustering quality beside the published tables, and K-Means speed at k = 12,000 beside FAISS.

    python -m bench.cluster quality [--datasets stackoverflow biomedical searchsnippets agnews8000]
                                    [--methods sklearn kmeans dec idec dec:keep_k=False] [--seeds 5]
                                    [--k classes|suggested|N]
    python -m bench.cluster speed [--corpora NAME ...] [--n 203057 --dim 512] [--k 12000] [--faiss-niter 20]

``quality``: corpora imported under the data root with the default model
(``python -m precompute.embed ../shared/data/NAME.csv --name NAME``), k = number of classes (``--k
suggested``: the Topics page's first guess for the corpus's size; or a number), every method from the
registry with its defaults (``sklearn`` = scikit-learn's ``KMeans(n_init=10)``, the reference our K-Means
must match; ``METHOD:NAME=VALUE,...`` sets parameters), NMI / ACC x 100 as mean and standard deviation over
seeds, with purity (the share of texts in their cluster's most common class: unlike NMI, it does not
reward fewer clusters than asked for) and the clusters left empty.
``speed``: with ``--corpora``, the stored embeddings of those corpora stacked (real texts);
without, synthetic clustered unit vectors of ``--n`` x ``--dim``. Both write a run folder under
results/ (run.json + lines.jsonl) and print one JSON object per line, then a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from testbed.common import clustered, emit, run_folder
from core.cluster import REGISTRY, ClusterContext
from core.cluster.evaluate import label_scores, purity
from core.cluster.kmeans import kmeans, objective
from core.cluster.topics import suggested_k
from precompute.cluster import parse_param

PUBLISHED = {  # NMI / ACC x 100 from the papers the issue cites (None: not reported)
    "ClusterBERT": {"stackoverflow": (75.6, 79.9), "biomedical": (43.4, 38.2), "searchsnippets": (65.5, 57.6),
                    "agnews8000": (67.2, 87.1)},
    "DEC-CRL": {"stackoverflow": (76.7, 82.3), "biomedical": (41.5, 47.0), "agnews8000": (69.2, 88.9)},
    "SCCL": {"searchsnippets": (None, 85.2), "biomedical": (None, 46.2), "agnews8000": (None, 88.2)},
    "Pugachev & Burtsev 2021": {"stackoverflow": (None, 84.7), "searchsnippets": (None, 87.7),
                                "biomedical": (None, 47.8), "agnews8000": (None, 86.5)},
}


def sklearn_kmeans(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    from sklearn.cluster import KMeans

    return KMeans(k, n_init=10, random_state=seed).fit(x).labels_


def quality(a) -> None:
    from core.corpus import load_corpus

    rows = []
    for name in a.datasets:
        c = load_corpus(name)
        y = c.frame["label"].astype(str).to_numpy()
        x = np.asarray(c.embeddings)
        labelled = y != ""  # an empty label is background (bench.czech_topics): only topics are scored
        x, y = x[labelled], y[labelled]
        k = len(set(y)) if a.k == "classes" else suggested_k(len(y)) if a.k == "suggested" else int(a.k)
        for method in a.methods:
            scores, secs = [], []
            reg, _, given = method.partition(":")
            params = dict(parse_param(p) for p in given.split(",")) if given else {}
            for seed in range(a.seeds):
                t = time.perf_counter()
                if method == "sklearn":
                    labels = sklearn_kmeans(x, k, seed)
                else:
                    labels = REGISTRY[reg].fit(ClusterContext(x), k, seed=seed, **params).labels
                secs.append(time.perf_counter() - t)
                s = label_scores(y, labels)
                sizes = np.bincount(labels, minlength=k)
                s.update(purity=purity(y, labels), empty=int((sizes == 0).sum()))
                scores.append(s)
                emit(op="cluster_quality", dataset=name, method=method, k=k, seed=seed, n=len(x),
                     nmi=round(100 * s["nmi"], 2), acc=round(100 * s["acc"], 2), purity=round(100 * s["purity"], 2),
                     empty=s["empty"], largest=int(sizes.max()), seconds=round(secs[-1], 2))
            row = {"dataset": name, "method": method, "k": k, "seeds": a.seeds,
                   "empty": [s["empty"] for s in scores]}
            for key in ("nmi", "acc", "purity"):
                vals = [100 * s[key] for s in scores]
                row[key] = round(statistics.mean(vals), 1)
                row[key + "_sd"] = round(statistics.stdev(vals), 1) if len(vals) > 1 else 0.0
            row["seconds"] = round(statistics.median(secs), 1)
            emit(op="cluster_quality_summary", **row)
            rows.append(row)
    print("\n| dataset | k | method | NMI | ACC | purity | empty clusters (by seed) | s (median) |\n"
          "|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['k']} | {r['method']} | {r['nmi']} ± {r['nmi_sd']} | "
              f"{r['acc']} ± {r['acc_sd']} | {r['purity']} ± {r['purity_sd']} | {', '.join(map(str, r['empty']))} | "
              f"{r['seconds']} |")


def speed(a) -> None:
    import faiss

    if a.corpora:
        from core.corpus import load_corpus

        x = np.ascontiguousarray(np.vstack([np.asarray(load_corpus(n).embeddings) for n in a.corpora]), np.float32)
        source = "real embeddings of " + "+".join(a.corpora)
    else:
        x, _ = clustered(a.n, a.dim, clusters=a.true_clusters)
        source = "synthetic clustered unit vectors"
    for k in a.k:
        for rep in range(a.repeat):
            t = time.perf_counter()
            ours = kmeans(x, k, niter=a.niter, seed=rep, init="random", n_init=1)  # the measured setting at large k
            t_ours = time.perf_counter() - t
            o_ours = objective(x, ours.labels, ours.centroids)
            row = {"op": "kmeans_speed", "source": source, "k": k, "n": len(x), "dim": x.shape[1], "seed": rep,
                   "ours_s": round(t_ours, 1), "ours_iterations": ours.iterations, "ours_objective": round(o_ours, 1)}
            if a.faiss_niter:
                km = faiss.Kmeans(x.shape[1], k, niter=a.faiss_niter, seed=rep, max_points_per_centroid=10**9)
                t = time.perf_counter()
                km.train(x)
                t_faiss = time.perf_counter() - t
                _, lab = km.index.search(x, 1)
                o_faiss = objective(x, lab[:, 0], km.centroids)
                row.update(faiss_s=round(t_faiss, 1), faiss_niter=a.faiss_niter, faiss_objective=round(o_faiss, 1),
                           objective_vs_faiss=round(o_ours / o_faiss - 1, 4))
            emit(**row)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.cluster", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--datasets", nargs="+", default=["stackoverflow", "biomedical", "searchsnippets", "agnews8000"])
    q.add_argument("--methods", nargs="+", default=["sklearn", *REGISTRY])
    q.add_argument("--seeds", type=int, default=5)
    q.add_argument("--k", default="classes", help="classes (the number of labels), suggested (the Topics page's "
                                                  "first guess for the corpus size) or a number")
    s = sub.add_parser("speed")
    s.add_argument("--corpora", nargs="*", default=[], help="stored corpora whose embeddings are stacked")
    s.add_argument("--n", type=int, default=203_057)
    s.add_argument("--dim", type=int, default=512)
    s.add_argument("--k", type=int, nargs="+", default=[12000])
    s.add_argument("--niter", type=int, default=20)
    s.add_argument("--repeat", type=int, default=1, help="runs per k (seeds 0, 1, ...)")
    s.add_argument("--faiss-niter", type=int, default=20, help="0 skips the FAISS comparison")
    s.add_argument("--true-clusters", type=int, default=2000)
    a = p.parse_args(argv)
    run_folder(f"cluster-{a.cmd}", sys.argv if argv is None else ["bench/cluster.py", *argv])
    quality(a) if a.cmd == "quality" else speed(a)


if __name__ == "__main__":
    main()
