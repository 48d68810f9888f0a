"""Compare a clustering with a label column (NMI, ARI, ACC; rows with an empty cell left out, as on the Topics
page) or with saved groups (IOU); JSON out.

    python -m precompute.evaluate --corpus NAME --clusters STEM|PATH (--labels-column COL | --groups)

STEM: a stored clustering (kmeans-k1000, dec-k20, ...; the older form kmeans:K still works).
PATH: a .npy or .npz (array 'labels') with one cluster label per corpus row.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from core.cluster import store as clusterings
from core.cluster.evaluate import class_column_problem, column_scores, group_iou
from core.corpus import load_corpus
from core.store import open_store
from precompute._cli import run_main


def read_clusters(corpus, spec: str) -> np.ndarray:
    n = corpus.n
    if spec.startswith("kmeans:"):
        k = spec.split(":", 1)[1]
        if not k.isdigit():
            raise ValueError(f"{spec}: write kmeans:K with K the number of clusters, e.g. kmeans:20")
        spec = clusterings.stem_of("kmeans", int(k))
    if clusterings.STEM.fullmatch(spec) and not spec.endswith((".npy", ".npz")):
        labels = clusterings.labels_for(corpus, spec)
    else:
        labels = _labels_file(Path(spec))
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n:
        raise ValueError(f"{spec}: {labels.shape} cluster labels but the corpus has {n} rows (one label a row)")
    if labels.dtype.kind == "f" and np.isfinite(labels).all() and (labels == np.round(labels)).all():
        labels = labels.astype(np.int64)  # whole numbers saved as floats
    if labels.dtype.kind not in "iu" or (n and labels.min() < 0):
        raise ValueError(f"{spec}: cluster labels must be whole numbers from 0 (got {labels.dtype} values such as "
                         f"{labels[:3].tolist()})")
    return labels


def _labels_file(path: Path) -> np.ndarray:
    """The labels of a .npy file, or of the array 'labels' of a .npz; a ValueError naming the file otherwise
    (numpy's "contains pickled (object) data" for a CSV, a KeyError for an .npz without 'labels')."""
    import zipfile

    from core.safeload import is_npy

    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    if not (is_npy(path) or zipfile.is_zipfile(path)):  # numpy read a CSV as pickled data
        raise ValueError(f"{path}: not a .npy or .npz file of cluster labels (numpy.save or numpy.savez writes one)")
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            return data
        if "labels" in data.files:
            return data["labels"]
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not a .npy or .npz file of cluster labels ({exc})") from None
    raise ValueError(f"{path}: no array 'labels' in it (it holds: {', '.join(data.files) or 'none'})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.evaluate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--clusters", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--labels-column")
    g.add_argument("--groups", action="store_true")
    a = p.parse_args(argv)
    corpus = load_corpus(a.corpus)
    clusters = read_clusters(corpus, a.clusters)
    out: dict = {"corpus": a.corpus, "clusters": a.clusters, "n_clusters": int(len(np.unique(clusters)))}
    if a.labels_column:
        if a.labels_column not in corpus.frame.columns:
            raise ValueError(f"corpus {a.corpus!r} has no column {a.labels_column!r}; columns: "
                             + ", ".join(corpus.frame.columns))
        problem = class_column_problem(corpus.frame[a.labels_column])
        if problem:
            raise ValueError(f"--labels-column {a.labels_column}: column {a.labels_column!r} of corpus {a.corpus!r} "
                             f"holds no classes: {problem}")
        # the Topics page's scores, over every row: empty cells are no class, the classes coded as integers
        out.update(column_scores(corpus.frame[a.labels_column], clusters))
    else:
        store = open_store(a.corpus)  # PostgreSQL where SEMANNO_DB names it
        groups = {name: corpus.rows_of(store.load(name).included) for name in store.names()}
        out.update(group_iou(groups, clusters))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
