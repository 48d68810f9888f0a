"""Vectors computed elsewhere (a GPU box, a Ray cluster), brought to an import instead of embedding
here: a ``.npy`` matrix whose rows follow the input file's data rows, or a Parquet file with an ``id``
column and a vector column (a list of floats per row, any row order) aligned by id.

Everything is checked before a corpus is written, and every refusal names the file and the rows:
the dimension, the row count (.npy) or the ids (Parquet: every corpus id needs exactly one vector),
non-finite values and zero vectors. Rows that are not unit length are normalised (cosine is what
every search ranks by) and counted in the manifest. The matrix is read and written block by block:
a 10-million-row file is never held whole in memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from core.ingest import InputError
from core.paths import ROWS_PER_BLOCK

VECTOR_COLUMN = "embedding"


@dataclass
class Source:
    path: Path
    label: str  # how messages name the file
    kind: str  # "npy" or "parquet"
    rows: int
    dim: int
    column: str = VECTOR_COLUMN


def _shown(rows, ids=None, limit: int = 5) -> str:
    rows = list(rows)
    parts = [f"{int(r) + 1}" + (f" (id {ids[int(r)]!r})" if ids is not None else "") for r in rows[:limit]]
    return ", ".join(parts) + (f" and {len(rows) - limit:,} more" if len(rows) > limit else "")


def probe(path: str | Path, label: str | None = None, column: str = VECTOR_COLUMN) -> Source:
    """What the file holds (kind, rows, dimension), or an InputError naming the file."""
    path = Path(path)
    label = label or str(path)
    if not path.is_file():
        raise InputError(f"{label}: no such file (the vectors to bring)")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        from core.safeload import load_npy

        try:
            x = load_npy(path, mmap_mode="r")
        except Exception as exc:
            raise InputError(f"{label}: not a readable .npy matrix ({exc})") from None
        if x.ndim != 2 or x.shape[1] < 2:
            raise InputError(f"{label}: expected a 2-D matrix (rows x dimension), got shape {x.shape}")
        if x.dtype.kind != "f":
            raise InputError(f"{label}: expected floating-point vectors, got {x.dtype}")
        return Source(path, label, "npy", int(x.shape[0]), int(x.shape[1]))
    if suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:
            raise InputError(f"{label}: not a readable Parquet file ({exc})") from None
        names = pf.schema_arrow.names
        for need in ("id", column):
            if need not in names:
                raise InputError(f"{label}: no column {need!r} (columns: {', '.join(names[:10])}); the vectors need "
                                 f"an 'id' column and the vectors in {column!r}")
        kind = pf.schema_arrow.field(column).type
        if not (pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)) \
                or not pa.types.is_floating(kind.value_type):
            raise InputError(f"{label}: column {column!r} must hold a list of floats per row, got {kind}")
        if pf.metadata.num_rows == 0:
            raise InputError(f"{label}: the file has no rows")
        first = next(pf.iter_batches(batch_size=1, columns=[column])).column(0)
        dim = len(first[0]) if first[0].is_valid else 0
        if dim < 2:
            raise InputError(f"{label}: row 1 of column {column!r} holds {dim} values; expected a vector")
        return Source(path, label, "parquet", int(pf.metadata.num_rows), int(dim), column)
    raise InputError(f"{label}: bring vectors as .npy (rows in the input file's order) or as Parquet "
                     f"(columns 'id' and {column!r}); got a {suffix or 'nameless'} file")


def _checked(block: np.ndarray, rows: np.ndarray, ids: np.ndarray, src: Source) -> tuple[np.ndarray, int]:
    """The block as unit float32 rows and how many were rescaled; refuses NaN/inf and zero rows,
    naming them (``rows``: the corpus rows of the block, 0-based; ``ids`` the corpus ids)."""
    block = np.asarray(block, dtype=np.float32)
    finite = np.isfinite(block).all(axis=1)
    if not finite.all():
        bad = rows[~finite]
        raise InputError(f"{src.label}: non-finite values (NaN or infinity) in the vectors of corpus rows "
                         f"{_shown(bad, ids)}")
    norms = np.linalg.norm(block, axis=1)
    zero = norms < 1e-6
    if zero.any():
        raise InputError(f"{src.label}: zero vectors (no direction to rank by) for corpus rows {_shown(rows[zero], ids)}")
    off = np.abs(norms - 1) > 1e-3
    if off.any():
        block = block / norms[:, None]
    return block, int(off.sum())


def fill(src: Source, out: np.ndarray, ids: np.ndarray, source_rows: np.ndarray | None, rows_read: int,
         progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the vector of every corpus row into ``out`` (N x dim, writeable: an array or a memory map).

    ``ids``: the corpus ids in row order; ``source_rows``: each corpus row's data row in the input
    file (rows dropped by validation have none), for a .npy file; ``rows_read``: the input's data
    rows. Returns what the manifest records."""
    n = len(ids)
    if out.shape != (n, src.dim):
        raise ValueError(f"output of shape {out.shape} for {n} rows of {src.dim}")
    rescaled = 0
    if src.kind == "npy":
        if src.rows != rows_read:
            raise InputError(f"{src.label}: {src.rows:,} vectors for {rows_read:,} data rows in the input; a .npy "
                             "file needs one row per data row, in the input's order (or bring Parquet with ids)")
        x = np.load(src.path, mmap_mode="r")
        where = np.arange(n) if source_rows is None else np.asarray(source_rows, np.int64)
        for s in range(0, n, ROWS_PER_BLOCK):
            rows = np.arange(s, min(n, s + ROWS_PER_BLOCK))
            out[s:s + len(rows)], r = _checked(x[where[rows]], rows, ids, src)
            rescaled += r
            if progress:
                progress(int(rows[-1]) + 1, n)
        extra = 0
    else:
        rescaled, extra = _fill_parquet(src, out, ids, progress)
    return {"path": src.label, "kind": src.kind, "rows_in_file": src.rows, "dim": src.dim,
            "bytes": os.path.getsize(src.path), "normalised_rows": rescaled, "unused_rows": extra}


def _fill_parquet(src: Source, out: np.ndarray, ids: np.ndarray, progress) -> tuple[int, int]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(src.path)
    vec_ids = pf.read(columns=["id"]).column("id").cast("string").to_numpy(zero_copy_only=False)
    dup = pd.Index(vec_ids).duplicated()
    if dup.any():
        raise InputError(f"{src.label}: ids with more than one vector, e.g. {list(vec_ids[dup][:3])} (rows "
                         f"{_shown(np.flatnonzero(dup))} of the file)")
    target = pd.Index(ids).get_indexer(vec_ids)  # file row -> corpus row, -1 when the corpus has no such id
    found = np.zeros(len(ids), dtype=bool)
    found[target[target >= 0]] = True
    if not found.all():
        missing = np.flatnonzero(~found)
        raise InputError(f"{src.label}: no vector for {len(missing):,} corpus ids, e.g. "
                         f"{', '.join(repr(str(ids[i])) for i in missing[:5])}")
    rescaled, start = 0, 0
    for batch in pf.iter_batches(batch_size=ROWS_PER_BLOCK, columns=[src.column]):
        col = batch.column(0)
        stop = start + len(col)
        lengths = pc.fill_null(pc.list_value_length(col), 0).to_numpy(zero_copy_only=False)
        if (lengths != src.dim).any():
            bad = np.flatnonzero(lengths != src.dim) + start
            raise InputError(f"{src.label}: rows {_shown(bad)} of column {src.column!r} do not hold {src.dim} values "
                             "(every vector needs the same dimension; an empty cell has none)")
        dest = target[start:stop]
        use = dest >= 0
        if use.any():
            flat = pc.list_flatten(col).to_numpy(zero_copy_only=False).reshape(len(col), src.dim)
            block, r = _checked(flat[use], dest[use], ids, src)
            out[dest[use]] = block
            rescaled += r
        start = stop
        if progress:
            progress(min(start, src.rows), src.rows)
    return rescaled, int((target < 0).sum())
