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

from core import paths
from core.cluster import store as clusterings
from core.cluster.evaluate import column_scores, group_iou
from core.corpus import load_corpus
from core.store import GroupStore
from precompute._cli import run_main


def read_clusters(corpus, spec: str) -> np.ndarray:
    n = corpus.n
    if spec.startswith("kmeans:"):
        spec = clusterings.stem_of("kmeans", int(spec.split(":", 1)[1]))
    if clusterings.STEM.fullmatch(spec) and not spec.endswith((".npy", ".npz")):
        labels = clusterings.labels_for(corpus, spec)
    else:
        path = Path(spec)
        if not path.exists():
            raise ValueError(f"{path}: no such file")
        data = np.load(path)
        labels = data["labels"] if isinstance(data, np.lib.npyio.NpzFile) else data
    if len(labels) != n:
        raise ValueError(f"{spec}: {len(labels)} cluster labels but the corpus has {n} rows")
    return np.asarray(labels)


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
        # the Topics page's scores, over every row: empty cells are no class, the classes coded as integers
        out.update(column_scores(corpus.frame[a.labels_column], clusters))
    else:
        store = GroupStore(paths.groups_db(a.corpus))
        groups = {name: corpus.rows_of(store.load(name).included) for name in store.names()}
        out.update(group_iou(groups, clusters))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
