"""Stored K-Means clusterings of a corpus and their key lemmas: where they are, listing, loading.

Written by ``precompute.kmeans`` and ``precompute.keyterms``; read by the Topics page and
``precompute.evaluate``. (The registry of clustering methods of issue 11 will grow from here.)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from core import paths


def kmeans_file(name: str, k: int) -> Path:
    return paths.kmeans_dir(name) / f"k{k}.npz"


def terms_file(name: str, k: int) -> Path:
    return paths.kmeans_dir(name) / f"k{k}_terms.parquet"


def available(name: str) -> list[int]:
    """The k of every stored K-Means of the corpus, ascending."""
    d = paths.kmeans_dir(name)
    return sorted(int(p.stem[1:]) for p in d.glob("k*.npz")) if d.exists() else []


def load_clustering(name: str, k: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """(labels, centroids, stats) of the corpus's K-Means with ``k``; ValueError naming the job to run."""
    path = kmeans_file(name, k)
    if not path.exists():
        raise ValueError(f"corpus {name!r} has no K-Means with k={k}; run python -m precompute.kmeans "
                         f"--corpus {name} --k {k}")
    with np.load(path) as z:
        return z["labels"], z["centroids"], json.loads(str(z["stats"]))


def load_terms(name: str, k: int) -> pd.DataFrame | None:
    """Key lemmas per cluster, or None when ``precompute.keyterms`` has not run for this k."""
    path = terms_file(name, k)
    return pd.read_parquet(path) if path.exists() else None
