"""What a cluster mostly in a group brings when its other texts are brought into the group (the Topics page's
"Bring the N into the group being built", core.annotate.bring_cluster), on a labelled corpus: each class stands for
a topic, a share of its texts for the group an annotator has found so far. For each threshold, the clusters whose
texts are at least that share in the group bring in their other texts: how many, how many of them belong to the
class (precision), and the class's recall before and after; beside it, the precision of as many texts taken by
cosine to the group's mean (``cosine_precision``: the COS search's way, and the order the brought texts are shown in).

Two ways the group was found: ``random`` (a random share of the class's texts) and ``nearest`` (the share nearest to
one random text of the class, by cosine: a group grown from one example, as semantic searches grow it).

    python -m precompute.embed ../shared/data/stackoverflow.csv --name so
    python -m precompute.cluster --corpus so --method kmeans --k 100
    python -m bench.cluster_bring --corpus so --clustering kmeans-k100 --class-column label [--share 0.3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from core.annotate import bring_cluster
from core.cluster import store
from core.cluster.evaluate import group_in_clusters
from core.corpus import load_corpus
from core.search.index import VectorIndex
from core.session import INCLUDED, Session
from testbed.common import emit, run_folder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.cluster_bring", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--clustering", required=True)
    p.add_argument("--class-column", required=True)
    p.add_argument("--share", type=float, default=0.3, help="the share of a class's texts the group holds")
    p.add_argument("--thresholds", type=float, nargs="+", default=[0.2, 0.3, 0.5, 0.7])
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("cluster-bring", sys.argv if argv is None else ["bench/cluster_bring.py", *argv])
    corpus = load_corpus(a.corpus)
    labels = np.asarray(store.labels_for(corpus, a.clustering))
    sizes = np.bincount(labels)
    classes = corpus.frame[a.class_column].astype(str).to_numpy()
    vectors = np.array(corpus.embeddings, np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    # the page's own step, timed: a group of the largest class's nearest texts, its largest cluster brought in
    c = max(np.unique(classes), key=lambda c: int((classes == c).sum()))
    members = np.flatnonzero(classes == c)
    group = members[np.argsort(-(vectors[members] @ vectors[members[0]]), kind="stable")[:len(members) // 3]]
    target = int(np.argmax(np.bincount(labels[group], minlength=len(sizes))))
    runs = []
    for _ in range(5):
        session = Session()
        session.set_labels(group, INCLUDED)
        t = time.perf_counter()
        step = bring_cluster(session, VectorIndex(corpus.embeddings), np.flatnonzero(labels == target), a.clustering, target)
        runs.append(time.perf_counter() - t)
    emit(op="bring_cluster_seconds", group=len(group), cluster=int(sizes[target]), brought=len(step.shown),
         median=round(statistics.median(runs), 4), runs=[round(x, 4) for x in runs])
    for how in ("random", "nearest"):
        results = {t: [] for t in a.thresholds}
        for seed in range(a.seeds):
            rng = np.random.default_rng(seed)
            for c in np.unique(classes):
                members = np.flatnonzero(classes == c)
                n = max(1, int(round(a.share * len(members))))
                if how == "random":
                    group = rng.choice(members, n, replace=False)
                else:
                    anchor = vectors[rng.choice(members)]
                    group = members[np.argsort(-(vectors[members] @ anchor), kind="stable")[:n]]
                in_group = group_in_clusters(group, labels)["counts"]
                share = in_group / np.maximum(sizes, 1)
                held = np.zeros(len(labels), bool)
                held[group] = True
                centre = vectors[group].mean(0)
                ranked = np.argsort(-(vectors @ centre), kind="stable")
                ranked = ranked[~held[ranked]]
                for t in a.thresholds:
                    brought = np.isin(labels, np.flatnonzero(share >= t)) & ~held
                    right = int((classes[brought] == c).sum())
                    near = int((classes[ranked[:int(brought.sum())]] == c).sum())
                    results[t].append((int(brought.sum()), right, n / len(members), (n + right) / len(members), near))
        for t, rows in results.items():
            r = np.asarray(rows, float)
            emit(op="bring", corpus=a.corpus, clustering=a.clustering, group=how, share=a.share, threshold=t,
                 classes_x_seeds=len(r), brought_mean=round(float(r[:, 0].mean()), 1),
                 precision=round(float(r[:, 1].sum() / max(r[:, 0].sum(), 1)), 4),
                 cosine_precision=round(float(r[:, 4].sum() / max(r[:, 0].sum(), 1)), 4),
                 recall_before=round(float(r[:, 2].mean()), 4), recall_after=round(float(r[:, 3].mean()), 4))


if __name__ == "__main__":
    main()
