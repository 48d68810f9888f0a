"""The Scatter page's map of a corpus before any group (``core.projection.topic_directions``): how well do its two
axes show a labelled corpus's classes apart, beside the other 2-D views one could draw?

    python -m bench.corpus_map stackoverflow searchsnippets biomedical agnews8000 crisislex_t26 [--seeds 0 1 2]

Each corpus must be imported under its name (``python -m precompute.embed ../shared/data/NAME.csv --name NAME``);
its labels are read from ``../shared/data/NAME.csv`` (column ``label``, by id). For the space the page projects (the
import's sketch where there is one) and the full vectors, one line per view:
- ``pca``: the texts' two largest spreads (principal components of a 20,000-text sample);
- ``topics``: the page's map, seeds 0, 1, 2 (the seed draws the sample and starts K-Means);
- ``true_classes``: a discriminant of the true classes (what a map could show at best with two linear axes; it
  needs the labels, so no page can draw it).
The figure is the accuracy of a 10-nearest-neighbour vote of the true class in the 2-D plane (5-fold, 5,000 texts):
how often a text's neighbours on the map are of its class. Chance is the largest class's share.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

from testbed.common import emit, run_folder

SAMPLE = 20_000
SCORED = 5_000


def neighbour_accuracy(xy: np.ndarray, y: np.ndarray, seed: int = 0) -> float:
    """5-fold accuracy of a 10-nearest-neighbour vote of ``y`` in the plane, on SCORED random rows."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    rows = np.random.default_rng(seed).choice(len(y), min(SCORED, len(y)), replace=False)
    return float(cross_val_score(KNeighborsClassifier(10), xy[rows], y[rows], cv=5).mean())


def pca_directions(x: np.ndarray, seed: int = 0) -> np.ndarray:
    rows = np.sort(np.random.default_rng(seed).choice(len(x), min(SAMPLE, len(x)), replace=False))
    s = np.asarray(x[rows], np.float64)
    vt = np.linalg.svd(s - s.mean(0), full_matrices=False)[2]
    return vt[:2].T.astype(np.float32)


def class_directions(x: np.ndarray, y: np.ndarray, seed: int = 0) -> np.ndarray:
    import torch

    from core.projection import _discriminants

    rows = np.sort(np.random.default_rng(seed).choice(len(x), min(SAMPLE, len(x)), replace=False))
    s, ys = np.asarray(x[rows], np.float32), y[rows]
    w = _discriminants([torch.from_numpy(s[ys == c]) for c in np.unique(ys)])[0][:, :2]
    return (w / w.norm(dim=0, keepdim=True)).numpy()


def labels_of(name: str, ids: pd.Series) -> np.ndarray:
    frame = pd.read_csv(f"../shared/data/{name}.csv", dtype={"id": str}, usecols=["id", "label"])
    return frame.drop_duplicates("id").set_index("id").loc[ids.astype(str), "label"].to_numpy()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpora", nargs="+")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = p.parse_args(argv)
    run_folder("corpus-map", sys.argv if argv is None else ["bench/corpus_map.py", *argv])
    from core import sketch
    from core.corpus import load_corpus
    from core.projection import project, topic_directions

    for name in a.corpora:
        c = load_corpus(name)
        y = labels_of(name, c.frame["id"])
        chance = float(pd.Series(y).value_counts(normalize=True).iloc[0])
        got = sketch.load(c.data_folder, c.n)
        spaces = {"sketch": got[0]} if got else {}
        spaces["vectors"] = np.asarray(c.embeddings, np.float32)
        for space, x in spaces.items():
            x = np.asarray(x, np.float32)
            views = {"pca": [pca_directions(x)], "true_classes": [class_directions(x, y)], "topics": []}
            seconds = []
            for seed in a.seeds:
                t0 = time.perf_counter()
                views["topics"].append(topic_directions(x, seed=seed))
                seconds.append(time.perf_counter() - t0)
            for view, ws in views.items():
                scores = [neighbour_accuracy(project(x, w), y) for w in ws]
                emit(corpus=name, rows=c.n, classes=int(len(np.unique(y))), space=space, dim=int(x.shape[1]),
                     view=view, accuracy=round(statistics.mean(scores), 4),
                     sd=round(statistics.stdev(scores), 4) if len(scores) > 1 else None,
                     runs=[round(s, 4) for s in scores], chance=round(chance, 4),
                     fit_s=round(statistics.median(seconds), 2) if view == "topics" else None)


if __name__ == "__main__":
    main()
