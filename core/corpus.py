"""Corpora on disk: import (the one code path for CLI and page), list, load, check.

Layout under the data root: ``<name>/corpus.parquet``, ``<name>/embeddings.npy`` (float32,
N x D, unit rows, same order), ``<name>/manifest.json``. The manifest is written last, and a
folder without one is not a corpus, so an interrupted import never leaves something that loads.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from core import __version__, paths
from core.atomic import save_json, save_npy, save_parquet
from core.embed import DEFAULT_MODEL, Progress, combine, embed_model_chunked, load_model, model_dim
from core.ingest import Columns, InputError, Options, read_table, sha256_file, validate

log = logging.getLogger(__name__)


class CorpusError(ValueError):
    """A corpus on disk is missing, corrupt or inconsistent; the message says what and where."""


@dataclass
class Corpus:
    name: str
    frame: pd.DataFrame  # id, text, [date], [author], extra columns; row i <-> embeddings[i]
    embeddings: np.ndarray  # (N, D) float32, memory-mapped, read-only
    manifest: dict
    folder: Path
    _row_of: dict | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.frame)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def has_dates(self) -> bool:
        return "date" in self.frame.columns and self.frame["date"].notna().any()

    @property
    def has_authors(self) -> bool:
        return "author" in self.frame.columns and (self.frame["author"] != "").any()

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        """Row positions of corpus ids; ids not in the corpus are dropped."""
        if self._row_of is None:
            self._row_of = {v: i for i, v in enumerate(self.frame["id"].tolist())}
        rows = [self._row_of.get(str(i)) for i in ids]
        return np.array([r for r in rows if r is not None], dtype=np.int64)

    def ids_of(self, rows) -> list[str]:
        ids = self.frame["id"].to_numpy()
        return [str(ids[int(r)]) for r in rows]


def list_corpora(root: Path | None = None) -> list[str]:
    root = root or paths.data_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").exists())


def load_manifest(name: str, root: Path | None = None) -> dict:
    mf = paths.manifest_file(name, root)
    if not mf.exists():
        raise CorpusError(f"corpus {name!r}: no manifest at {mf} (not imported, or the import did not finish)")
    try:
        return json.loads(mf.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"corpus {name!r}: {mf} is corrupt: {exc}") from None


def load_corpus(name: str, root: Path | None = None, check: bool = True) -> Corpus:
    """Load a corpus with its embeddings memory-mapped; raise CorpusError on any mismatch."""
    manifest = load_manifest(name, root)
    folder = paths.corpus_dir(name, root)
    cf, ef = paths.corpus_file(name, root), paths.embeddings_file(name, root)
    try:
        frame = pd.read_parquet(cf)
    except Exception as exc:
        raise CorpusError(f"corpus {name!r}: {cf} cannot be read: {exc}") from None
    try:
        emb = np.load(ef, mmap_mode="r")
    except Exception as exc:
        raise CorpusError(f"corpus {name!r}: {ef} cannot be read: {exc}") from None
    corpus = Corpus(name, frame, emb, manifest, folder)
    if check:
        check_corpus(corpus)
    return corpus


def check_corpus(c: Corpus, norm_sample: int = 2000) -> None:
    where = f"corpus {c.name!r}"
    for col in ("id", "text"):
        if col not in c.frame.columns:
            raise CorpusError(f"{where}: corpus.parquet has no {col!r} column")
    if c.embeddings.ndim != 2 or c.embeddings.dtype != np.float32:
        raise CorpusError(f"{where}: embeddings.npy must be a 2-D float32 array, "
                          f"got {c.embeddings.dtype} with shape {c.embeddings.shape}")
    n_rows, n_emb = len(c.frame), c.embeddings.shape[0]
    if n_rows != n_emb:
        raise CorpusError(f"{where}: corpus.parquet has {n_rows} rows but embeddings.npy has {n_emb}")
    if c.manifest.get("rows") not in (None, n_rows):
        raise CorpusError(f"{where}: manifest says {c.manifest['rows']} rows, corpus.parquet has {n_rows}")
    if c.manifest.get("dim") not in (None, c.dim):
        raise CorpusError(f"{where}: manifest says dimension {c.manifest['dim']}, embeddings have {c.dim}")
    if c.frame["id"].duplicated().any():
        dup = c.frame["id"][c.frame["id"].duplicated()].head(3).tolist()
        raise CorpusError(f"{where}: duplicate ids in corpus.parquet, e.g. {dup}")
    if n_emb:
        idx = np.linspace(0, n_emb - 1, min(norm_sample, n_emb)).astype(np.int64)
        norms = np.linalg.norm(np.asarray(c.embeddings[idx]), axis=1)
        bad = np.flatnonzero(np.abs(norms - 1) > 1e-3)
        if bad.size:
            raise CorpusError(f"{where}: embeddings are not unit length (row {int(idx[bad[0]])} "
                              f"has norm {norms[bad[0]]:.4f}); re-run the import")


def summary(c: Corpus, top_authors: int = 10) -> dict:
    out = {"rows": c.n, "dim": c.dim, "models": [m["name"] for m in c.manifest.get("models", [])],
           "created_at": c.manifest.get("created_at"), "source": c.manifest.get("source", {}).get("path")}
    if c.has_dates:
        out["date_min"], out["date_max"] = c.frame["date"].min(), c.frame["date"].max()
    if c.has_authors:
        out["top_authors"] = c.frame["author"].value_counts().head(top_authors)
        out["authors"] = int(c.frame["author"].nunique())
    return out


@dataclass
class ImportSpec:
    input: Path
    name: str
    models: list[str] = field(default_factory=lambda: [DEFAULT_MODEL])
    dim: int = 512
    batch_size: int = 32
    device: str = "auto"
    columns: Columns = field(default_factory=Columns)
    options: Options = field(default_factory=Options)
    chunk_size: int = 2048
    overwrite: bool = False
    seed: int = 0


def import_corpus(spec: ImportSpec, root: Path | None = None, progress: Progress | None = None,
                  model_loader: Callable = load_model) -> Corpus:
    """Validate, embed (checkpointed), reduce, and write a corpus atomically. Resumable."""
    root = root or paths.data_root()
    name = paths.check_name(spec.name)
    if spec.dim < 2:
        raise ValueError(f"--dim must be at least 2, got {spec.dim}")
    final = paths.corpus_dir(name, root)
    if (final / "manifest.json").exists() and not spec.overwrite:
        raise InputError(f"a corpus named {name!r} already exists at {final}; "
                         "choose another name or pass --overwrite")
    frame, report = validate(read_table(spec.input), str(spec.input), spec.columns, spec.options)
    texts = frame["text"].tolist()
    work = paths.work_dir(name, root)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    parts, models_meta = [], []
    for i, model_name in enumerate(spec.models):
        model = model_loader(model_name, spec.device)
        arr = embed_model_chunked(texts, model, model_name, work, chunk_size=spec.chunk_size,
                                  batch_size=spec.batch_size, progress=progress, model_index=i)
        parts.append(arr)
        models_meta.append({"name": model_name, "dim": int(arr.shape[1]) if arr.size else model_dim(model)})
    emb, red = combine(parts, spec.dim, seed=spec.seed)
    manifest = {
        "name": name,
        "source": {"path": str(Path(spec.input).resolve()), "sha256": sha256_file(Path(spec.input))},
        "models": models_meta,
        "concat_dim": red.input_dim,
        "pca": {"target_dim": spec.dim, "applied": red.explained_variance is not None,
                "explained_variance": red.explained_variance},
        "dim": int(emb.shape[1]),
        "rows": len(frame),
        "validation": report.__dict__,
        "options": {"columns": spec.columns.__dict__, **spec.options.__dict__,
                    "batch_size": spec.batch_size, "chunk_size": spec.chunk_size, "seed": spec.seed},
        "embed_seconds": round(time.time() - t0, 2),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool_version": __version__,
    }
    # Build in a staging folder, then swap it in: the old corpus stays loadable until the end.
    staging = root / f".staging-{name}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    save_parquet(staging / "corpus.parquet", frame)
    save_npy(staging / "embeddings.npy", emb)
    save_json(staging / "manifest.json", manifest)
    if final.exists():
        # saved groups refer to ids, not rows: carry the database over to the new corpus
        old = root / f".trash-{name}-{int(time.time())}"
        final.rename(old)
        db = old / "groups.sqlite"
        if db.exists():  # the backup API copies a consistent database, write-ahead log included
            import sqlite3

            src, dst = sqlite3.connect(db), sqlite3.connect(staging / "groups.sqlite")
            try:
                src.backup(dst)
            finally:
                src.close()
                dst.close()
    staging.rename(final)
    shutil.rmtree(work, ignore_errors=True)
    log.info("corpus %s: %d rows, dim %d, written to %s", name, len(frame), emb.shape[1], final)
    return load_corpus(name, root)
