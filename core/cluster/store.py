"""The stored clusterings of a corpus: ``data/NAME/clusterings/<method>-k<K>[-<tag>].npz`` (labels,
centroids, adapted embeddings if any, and the metadata) with a ``.json`` copy of the metadata
for listing, and ``<stem>.terms.parquet`` for its key lemmas. Every write is atomic (a killed
write leaves the previous file); the CLI, the Topics page and evaluation all go through here.

A clustering records the import (generation) of the corpus it was computed on: after a
re-import its labels no longer describe the rows, so it is listed as stale and refused on load.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from core import paths
from core.atomic import atomic_path, save_json, save_parquet
from core.cluster.base import Clustering

TAG = re.compile(r"[A-Za-z0-9_.]{1,32}")
STEM = re.compile(r"(?P<method>[a-z0-9_]+)-k(?P<k>\d+|auto)(?:-(?P<tag>[A-Za-z0-9_.]{1,32}))?")


class ClusteringError(ValueError):
    """A stored clustering is missing, damaged or belongs to an earlier import; the message says
    which file and what to run."""


def folder(name: str) -> Path:
    return paths.corpus_dir(name) / "clusterings"


def stem_of(method: str, k: int | None, tag: str | None = None) -> str:
    if tag is not None and not TAG.fullmatch(tag):
        raise ValueError(f"tag {tag!r}: use up to 32 letters, digits, '_' or '.'")
    return f"{method}-k{'auto' if k is None else int(k)}" + (f"-{tag}" if tag else "")


def set_tag(embedding_set: str) -> str | None:
    """The tag of a clustering of an embedding set other than the import's (so it never replaces the
    import's clustering of the same method and k); None for the import's."""
    from core import embedsets

    return None if embedding_set == embedsets.IMPORT else embedding_set.replace("-", "_")[:32]


def current(name: str, stem: str, generation: str | None) -> bool:
    """Whether ``stem`` is stored for the corpus and was computed on its present import."""
    return any(s.stem == stem and not s.stale(generation) for s in listing(name))


def clustering_file(name: str, stem: str) -> Path:
    return folder(name) / f"{stem}.npz"


def terms_file(name: str, stem: str) -> Path:
    return folder(name) / f"{stem}.terms.parquet"


@dataclass(frozen=True)
class Stored:
    """What the listing shows of one stored clustering (its arrays stay on disk)."""

    stem: str
    method: str
    k: int
    meta: dict

    @property
    def created_at(self) -> str:
        return str(self.meta.get("created_at", ""))

    @property
    def objective(self) -> float | None:
        return self.meta.get("objective")

    def stale(self, generation: str | None) -> bool:
        return generation is not None and self.meta.get("generation") not in (None, generation)

    def describe(self) -> str:
        from core.cluster import REGISTRY

        label = REGISTRY[self.method].label if self.method in REGISTRY else self.method
        tag = STEM.fullmatch(self.stem)
        # a clustering of an adapted embedding set says so in words (its file's tag is the set's name
        # with '-' as '_': kmeans-k20-dec_mlm_k20 is "K-Means, k = 20, on the embedding set dec_mlm-k20")
        on_set = self.meta.get("embedding_set")
        extra = (f" on the embedding set {on_set}" if on_set and on_set != "import" else
                 f" [{tag['tag']}]" if tag and tag["tag"] else "")
        when = self.created_at[:16].replace("T", " ")
        return f"{label}, k = {self.k:,}{extra} ({when})"


def generation_of(corpus) -> str:
    """The import a clustering belongs to: the corpus's generation folder."""
    return corpus.data_folder.name


def save(name: str, clustering: Clustering, *, generation: str | None, tag: str | None = None,
         extra: dict | None = None) -> Stored:
    """Write the clustering atomically (arrays + metadata in one .npz, then the .json copy)."""
    stem = stem_of(clustering.method, clustering.k, tag)
    meta = {"method": clustering.method, "k": clustering.k, "tag": tag, "rows": int(len(clustering.labels)),
            "params": clustering.params, "seed": clustering.seed, "device": clustering.device,
            "seconds": round(clustering.seconds, 2), "objective": clustering.objective,
            "objective_kind": clustering.objective_kind,
            "iterations": len(clustering.history), "history": clustering.history, "generation": generation,
            "sizes": {"min": int(clustering.sizes.min()), "max": int(clustering.sizes.max()),
                      "empty": int((clustering.sizes == 0).sum())},
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **(extra or {})}
    arrays = {"labels": np.asarray(clustering.labels, np.int32)}
    if clustering.centroids is not None:
        arrays["centroids"] = np.asarray(clustering.centroids, np.float32)
    if clustering.embeddings is not None:
        arrays["embeddings"] = np.asarray(clustering.embeddings, np.float32)
    target = clustering_file(name, stem)
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, meta=json.dumps(meta, default=str), **arrays)
    save_json(target.with_suffix(".json"), meta)
    old_terms = terms_file(name, stem)
    if old_terms.exists():  # key lemmas of the clustering this one replaces no longer apply
        old_terms.unlink()
    return Stored(stem, clustering.method, clustering.k, meta)


def migrate_legacy(name: str) -> int:
    """Clusterings written before this store (``kmeans/k<K>.npz``) move to ``kmeans-k<K>``; returns how
    many moved. Called by the cluster command and once per server process when the Topics page first
    opens a corpus, never by :func:`listing` (a listing only reads)."""
    old = paths.corpus_dir(name) / "kmeans"
    if not old.is_dir():
        return 0
    moved = 0
    for f in sorted(old.glob("k*.npz")):
        k = f.stem[1:]
        if not k.isdigit():
            continue
        with np.load(f) as z:
            stats = json.loads(str(z["stats"]))
            labels, centroids = z["labels"], z["centroids"]
        last = (stats.get("objective") or [None])[-1]
        c = Clustering(labels, centroids, "kmeans", int(k), {}, [{"objective": last}] if last is not None else [],
                       stats.get("seconds") or 0.0, stats.get("seed", 0), stats.get("device", "cpu"))
        when = datetime.fromtimestamp(f.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
        save(name, c, generation=None, extra={"created_at": when, "iterations": stats.get("iterations")})
        terms = old / f"k{k}_terms.parquet"
        if terms.exists():
            os.replace(terms, terms_file(name, f"kmeans-k{k}"))
        f.unlink()
        f.with_suffix(".json").unlink(missing_ok=True)
        moved += 1
    return moved


def listing(name: str) -> list[Stored]:
    """Every stored clustering of the corpus, by method then k (reads only)."""
    d = folder(name)
    out = []
    for f in sorted(d.glob("*.npz")) if d.is_dir() else []:
        m = STEM.fullmatch(f.stem)
        if not m:
            continue
        try:
            meta = json.loads(f.with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            meta = None
        if not isinstance(meta, dict):
            meta = {"method": m["method"], "k": m["k"], "damaged": "its .json is missing or damaged"}
        k = int(m["k"]) if m["k"].isdigit() else int(meta.get("k") or 0)
        out.append(Stored(f.stem, m["method"], k, meta))
    return sorted(out, key=lambda s: (s.method, s.k, s.stem))


def load(name: str, stem: str, generation: str | None = None) -> tuple[Clustering, dict]:
    """The clustering and its metadata; ClusteringError naming the file when it is missing,
    damaged, or from an earlier import of the corpus."""
    path = clustering_file(name, stem)
    if not path.exists():
        m = STEM.fullmatch(stem)
        how = (f"python -m precompute.cluster --corpus {name} --method {m['method']} --k {m['k']}" if m
               else "python -m precompute.cluster")
        raise ClusteringError(f"corpus {name!r} has no clustering {stem!r}; run {how}")
    try:
        if not zipfile.is_zipfile(path):  # numpy would read it as pickled data, and suggest loading it unsafely
            raise ValueError("not an .npz archive")
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            if not isinstance(meta, dict):
                raise ValueError("its metadata is not a JSON object")
            labels = z["labels"]
            centroids = z["centroids"] if "centroids" in z.files else None
            embeddings = z["embeddings"] if "embeddings" in z.files else None
    except (OSError, ValueError, KeyError, EOFError, RecursionError, zipfile.BadZipFile) as exc:
        raise ClusteringError(f"{path.name}: damaged clustering file ({exc}); delete it and run "
                              f"python -m precompute.cluster again") from None
    if generation is not None and meta.get("generation") not in (None, generation):
        raise ClusteringError(f"{path.name} was computed on an earlier import of corpus {name!r}; "
                              f"run python -m precompute.cluster --corpus {name} --method {meta['method']} "
                              f"--k {meta['k']} --force")
    k = int(meta["k"])
    if labels.ndim != 1 or len(labels) != meta.get("rows", len(labels)) or (len(labels) and (
            labels.min() < 0 or labels.max() >= k)):
        raise ClusteringError(f"{path.name}: damaged clustering file (labels do not match its metadata)")
    c = Clustering(labels, centroids, meta["method"], k, meta.get("params", {}), meta.get("history", []),
                   meta.get("seconds") or 0.0, meta.get("seed", 0), meta.get("device", "cpu"), embeddings)
    return c, meta


def labels_for(corpus, stem: str) -> np.ndarray:
    """The labels of a stored clustering of ``corpus``, checked against its rows."""
    c, _ = load(corpus.name, stem, generation_of(corpus))
    if len(c.labels) != corpus.n:
        raise ClusteringError(f"{stem}: {len(c.labels)} labels but corpus {corpus.name!r} has {corpus.n} rows; "
                              f"run python -m precompute.cluster again with --force")
    return c.labels


def delete(name: str, stem: str) -> None:
    for f in (clustering_file(name, stem), clustering_file(name, stem).with_suffix(".json"), terms_file(name, stem)):
        f.unlink(missing_ok=True)


def save_terms(name: str, stem: str, table: pd.DataFrame) -> None:
    save_parquet(terms_file(name, stem), table)


def load_terms(name: str, stem: str) -> pd.DataFrame | None:
    """Key lemmas per cluster, or None when they have not been computed for this clustering."""
    path = terms_file(name, stem)
    return pd.read_parquet(path) if path.exists() else None


def stamp(name: str, stem: str) -> tuple:
    """Changes whenever the clustering or its key lemmas change on disk (for caches)."""
    out = []
    for f in (clustering_file(name, stem), terms_file(name, stem)):
        try:
            st = f.stat()
            out.append((st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)
