"""The scatter's sketch (core/sketch.py): what it costs in separation, and what it saves in time.

    python -m bench.sketch quality --data ../shared/data/stackoverflow.csv ... [--n 4000] [--dims 16 32 64]
    python -m bench.sketch build --corpus NAME [--dim 32]      (the sketch of a stored corpus, timed)

``quality``: each labelled benchmark (``--n`` texts drawn, embedded with the packaged model) is a corpus;
for every class and ``--trials`` draws, a group of 50 texts of the class included and 25 of other classes
excluded (an annotator's first minutes) is given to the scatter's discriminant, fitted on the full vectors
and on sketches of each size (PCA of the same rows). Printed: the AUC with which the first axis (oriented to
the included side) sets the class's unlabelled texts apart from the rest, and the same for the distance to
the included texts' centre in the 2-D plane; median and mean over classes x draws, beside the full vectors'.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from testbed.common import emit, run_folder


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, score))


def separation(x: np.ndarray, labels: np.ndarray, c, inc: np.ndarray, exc: np.ndarray) -> tuple[float, float]:
    """(AUC of the first axis, AUC of nearness to the included centre in 2-D) for class ``c``."""
    from core.projection import lda_directions

    w = lda_directions(x, inc, exc)
    xy = np.asarray(x, np.float32) @ w
    free = np.ones(len(x), bool)
    free[np.r_[inc, exc]] = False
    side = np.sign(xy[inc, 0].mean() - xy[free, 0].mean()) or 1.0
    y = labels[free] == c
    centre = xy[inc].mean(0)
    near = -np.linalg.norm(xy[free] - centre, axis=1)
    return _auc(y, side * xy[free, 0]), _auc(y, near)


def quality(a: argparse.Namespace) -> None:
    import pandas as pd

    from core.embed import load_model
    from core.sketch import directions

    model = load_model("default", "cpu")
    for path in a.data:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        frame = frame.sample(min(a.n, len(frame)), random_state=0).reset_index(drop=True)
        t = time.perf_counter()
        x = np.asarray(model.encode(frame["text"].tolist(), batch_size=32), np.float32)
        emit(op="embedded", data=Path(path).name, n=len(x), seconds=round(time.perf_counter() - t, 1))
        labels = frame["label"].to_numpy()
        spaces = {"full": x}
        for d in a.dims:
            mean, basis, share = directions(x, d, sample=len(x))
            spaces[f"sketch{d}"] = (x - mean) @ basis
            emit(op="sketch", data=Path(path).name, dim=d, explained_variance=round(share, 4))
        rng = np.random.default_rng(0)
        scores: dict[str, list] = {k: [] for k in spaces}
        for c in np.unique(labels):
            members, others = np.flatnonzero(labels == c), np.flatnonzero(labels != c)
            if len(members) < 60:
                continue
            for _ in range(a.trials):
                inc = rng.choice(members, 50, replace=False)
                exc = rng.choice(others, 25, replace=False)
                for k, xs in spaces.items():
                    scores[k].append(separation(xs, labels, c, inc, exc))
        for k, v in scores.items():
            v = np.asarray(v)
            emit(op="separation", data=Path(path).name, space=k, groups=len(v),
                 ld1_auc_median=round(float(np.median(v[:, 0])), 4), ld1_auc_mean=round(float(v[:, 0].mean()), 4),
                 plane_auc_median=round(float(np.median(v[:, 1])), 4), plane_auc_mean=round(float(v[:, 1].mean()), 4))


def build(a: argparse.Namespace) -> None:
    from core import sketch
    from core.corpus import load_corpus

    c = load_corpus(a.corpus, check=False)
    t = time.perf_counter()
    meta = sketch.build(c.embeddings, c.data_folder, dim=a.dim)
    emit(op="build", corpus=a.corpus, rows=c.n, dim=a.dim, seconds=round(time.perf_counter() - t, 1),
         explained_variance=meta["explained_variance"],
         megabytes=round((c.data_folder / sketch.FILE).stat().st_size / 2**20))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--data", nargs="+", required=True)
    q.add_argument("--n", type=int, default=4000)
    q.add_argument("--dims", type=int, nargs="+", default=[16, 32, 64])
    q.add_argument("--trials", type=int, default=3)
    b = sub.add_parser("build")
    b.add_argument("--corpus", required=True)
    b.add_argument("--dim", type=int, default=32)
    a = p.parse_args(argv)
    run_folder(f"sketch-{a.cmd}", sys.argv if argv is None else ["bench.sketch", *argv])
    {"quality": quality, "build": build}[a.cmd](a)


if __name__ == "__main__":
    main()
