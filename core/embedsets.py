"""Embedding sets: a corpus's import embeds it once (the set ``import``); a method that adapts the
encoder to the corpus (ClusterBERT) adds a set of its own, with the adapted encoder, so new texts
can be embedded the same way.

Layout: ``data/NAME/embeddings/SET/`` with ``vectors.npy`` (N x D float32, unit rows, corpus order; for a corpus
whose import keeps its vectors as fp16, from a million rows, ``vectors.f16.faiss``, the same store as the import's,
core/vectorstore.py: searched in place, memory-mapped, half the disk), ``manifest.json`` (base model, method,
parameters, seed, date, the import it belongs to) and, for an adapted encoder, ``model/`` (a sentence-transformers
folder: ``SentenceTransformer(path)`` loads it). A set is written into a temporary folder and renamed into place,
so a half-written set never lists; a set computed on an earlier import of the corpus is hidden.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from core import paths, vectorstore
from core.safeload import load_npy

IMPORT = "import"
FLOAT32 = "vectors.npy"
BLOCK = 1 << 18  # rows written at a time to a set's fp16 store
_SET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class EmbeddingSetError(ValueError):
    """A set is missing, damaged or does not match the corpus; the message names it."""


def check_set_name(name: str) -> str:
    if not isinstance(name, str) or not _SET_RE.match(name):
        raise ValueError(f"invalid embedding-set name {name!r}: use 1-64 letters, digits, '_', '.' or '-'")
    return name


def folder(corpus: str, root: Path | None = None) -> Path:
    return paths.corpus_dir(corpus, root) / "embeddings"


@dataclass(frozen=True)
class EmbeddingSet:
    name: str
    manifest: dict
    path: Path | None  # None for the import's set

    @property
    def model_dir(self) -> Path | None:
        d = self.path / "model" if self.path else None
        return d if d and d.is_dir() else None

    def describe(self) -> str:
        if self.path is None:
            return "import (the corpus's own embeddings)"
        m = self.manifest
        if m.get("method") == "quotes":  # core/quoted.py
            return f"{self.name} (each quote read with what it quotes, {str(m.get('created_at', ''))[:10]})"
        return f"{self.name} ({m.get('method', '?')} on {m.get('base_model', '?')}, {str(m.get('created_at', ''))[:10]})"


def listing(corpus) -> list[EmbeddingSet]:
    """The import's set first, then the adapted sets of this import of the corpus, by name."""
    out = [EmbeddingSet(IMPORT, {"method": "import", "models": corpus.manifest.get("models")}, None)]
    d = folder(corpus.name, corpus.folder.parent)
    for sub in sorted(d.iterdir()) if d.is_dir() else []:
        mf = sub / "manifest.json"
        if not (_SET_RE.match(sub.name) and mf.exists() and _vector_file(sub) is not None):
            continue
        try:
            m = json.loads(mf.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(m, dict):  # damaged (not a JSON object): not listed
            continue
        if m.get("generation") == corpus.data_folder.name:
            out.append(EmbeddingSet(sub.name, m, sub))
    return out


def load_vectors(corpus, name: str) -> np.ndarray:
    """The set's (N, D) vectors, memory-mapped; EmbeddingSetError naming the set when they do not
    fit the corpus."""
    if name == IMPORT:
        return corpus.embeddings
    sets = {s.name: s for s in listing(corpus)}
    if name not in sets:
        raise EmbeddingSetError(f"corpus {corpus.name!r} has no embedding set {name!r} "
                                f"(it has: {', '.join(sets)})")
    path = _vector_file(sets[name].path)
    try:
        x = vectorstore.codes(path) if path.name == vectorstore.FILE else load_npy(path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise EmbeddingSetError(f"embedding set {name!r}: {path.name} is not a readable embedding matrix "
                                f"({exc.__class__.__name__}); compute the set again") from None
    if x.ndim != 2 or len(x) != corpus.n:
        raise EmbeddingSetError(f"embedding set {name!r}: {path.name} has shape {x.shape}, which does not match corpus "
                                f"{corpus.name!r} ({corpus.n} rows)")
    return x


def _vector_file(d: Path) -> Path | None:
    """The set's vectors in folder ``d``: its fp16 store, else vectors.npy; None when it has neither."""
    return next((f for f in (d / vectorstore.FILE, d / FLOAT32) if f.exists()), None)


def with_set(corpus, name: str):
    """The corpus with the set's vectors as its embeddings (the same object for ``import``)."""
    return corpus if name == IMPORT else dataclasses.replace(corpus, embeddings=load_vectors(corpus, name),
                                                              id_index=corpus.id_index)


def save(corpus, name: str, vectors: np.ndarray, manifest: dict, model_dir: Path | None = None,
         files: Sequence[Path] = ()) -> EmbeddingSet:
    """Write a set (replacing one of the same name); ``model_dir`` (an adapted encoder's folder) and ``files``
    (what a method keeps beside its vectors: the quoted tweets' vectors of the set quotes) are moved into it. Kept
    as the import keeps its vectors: float32, or for a corpus of fp16 vectors an fp16 store
    written a block of rows at a time (``vectors`` may be a memory map: at 10M rows it is never read whole)."""
    from core.corpus import store_precision

    check_set_name(name)
    if name == IMPORT:
        raise ValueError("'import' is the name of the corpus's own embeddings")
    fp16 = store_precision(corpus.manifest) == "fp16"
    vectors = np.asarray(vectors) if fp16 else np.asarray(vectors, np.float32)  # fp16: a map stays a map, unread
    if vectors.ndim != 2 or len(vectors) != corpus.n:
        raise EmbeddingSetError(f"embedding set {name!r}: shape {vectors.shape} does not match corpus "
                                f"{corpus.name!r} ({corpus.n} rows)")
    base = folder(corpus.name, corpus.folder.parent)
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=base))
    try:
        if fp16:
            blocks = (vectors[start:start + BLOCK] for start in range(0, len(vectors), BLOCK))
            vectorstore.write(tmp / vectorstore.FILE, blocks, len(vectors), vectors.shape[1])
        else:
            np.save(tmp / FLOAT32, vectors)
        if model_dir is not None:
            shutil.move(str(model_dir), tmp / "model")
        for f in files:
            shutil.move(str(f), tmp / Path(f).name)
        meta = {"set": name, "rows": int(len(vectors)), "dim": int(vectors.shape[1]),
                "generation": corpus.data_folder.name,
                "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **manifest}
        (tmp / "manifest.json").write_text(json.dumps(meta, indent=2, default=str), encoding="utf-8")
        target = base / name
        old = None
        if target.exists():
            old = base / f".{name}.old-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}"
            target.rename(old)
        tmp.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return EmbeddingSet(name, meta, target)


def delete(corpus, name: str) -> None:
    if name == IMPORT:
        raise ValueError("the import's embeddings cannot be deleted here")
    shutil.rmtree(folder(corpus.name, corpus.folder.parent) / check_set_name(name), ignore_errors=True)
