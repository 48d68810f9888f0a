"""The vectors of a large corpus on disk as fp16, memory-mapped: one file that is at once a FAISS index
(an fp16 scalar-quantizer flat index, opened with ``IO_FLAG_MMAP_IFC``: searched in place with SIMD, no
copy in memory) and, past its 81-byte header, a plain row-major (N, D) fp16 array that numpy maps for
gathering rows. Nothing holds the matrix in fp32: 10 million 384-d rows are 7.7 GB on disk and in the
page cache, not in the server's own memory.

The file is written block by block (the import never holds the matrix either): FAISS's header for
this index type is made from a one-row index and its two sizes (rows; code bytes) patched.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Iterable

import numpy as np

FILE = "vectors.f16.faiss"
HEADER = 81  # bytes before the codes, for an fp16 IndexScalarQuantizer (magic, d, ntotal, ..., code bytes)
_NTOTAL, _CODE_BYTES = slice(8, 16), slice(73, 81)


def _header(n: int, dim: int) -> bytes:
    import tempfile

    import faiss

    one = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    one.add(np.zeros((1, dim), np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        faiss.write_index(one, str(Path(tmp) / "one"))
        raw = bytearray((Path(tmp) / "one").read_bytes())
    if len(raw) != HEADER + 2 * dim or struct.unpack("<q", raw[_NTOTAL])[0] != 1 or \
            struct.unpack("<Q", raw[_CODE_BYTES])[0] != 2 * dim:
        raise RuntimeError("this FAISS writes fp16 indexes in a layout this tool does not know")
    raw[_NTOTAL] = struct.pack("<q", n)
    raw[_CODE_BYTES] = struct.pack("<Q", n * dim * 2)
    return bytes(raw[:HEADER])


def write(path: Path, blocks: Iterable[np.ndarray], n: int, dim: int) -> None:
    """Write ``n`` rows of dimension ``dim``, given as blocks of rows in order, as the store at ``path``
    (atomically). The rows are stored as fp16 (unit rows lose ~1e-3 of a cosine)."""
    from core.atomic import atomic_path

    written = 0
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(_header(n, dim))
            for block in blocks:
                block = np.ascontiguousarray(block, dtype=np.float16)
                if block.ndim != 2 or block.shape[1] != dim:
                    raise ValueError(f"a block of shape {block.shape} does not fit {dim}-d vectors")
                fh.write(block.tobytes())
                written += len(block)
        if written != n:
            raise ValueError(f"{written:,} rows were written where {n:,} were announced")


def create(path: Path, n: int, dim: int) -> np.memmap:
    """A new store at ``path`` (not atomic: give it a temporary name) as a writeable (N, D) fp16 map
    whose rows the caller fills in any order, then flushes."""
    with open(path, "wb") as fh:
        fh.write(_header(n, dim))
        fh.truncate(HEADER + n * dim * 2)  # sparse until written; a full disk fails on the writes
    return np.memmap(path, dtype=np.float16, mode="r+", offset=HEADER, shape=(n, dim))


def rows_and_dim(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        head = fh.read(HEADER)
    dim = struct.unpack("<i", head[4:8])[0]
    return struct.unpack("<q", head[_NTOTAL])[0], dim


def codes(path: Path) -> np.memmap:
    """The rows as a read-only (N, D) fp16 memory map."""
    n, dim = rows_and_dim(path)
    if os.path.getsize(path) != HEADER + n * dim * 2:
        raise ValueError(f"{Path(path).name}: {os.path.getsize(path):,} bytes, expected {HEADER + n * dim * 2:,} "
                         f"for {n:,} rows of {dim} fp16 values (a truncated file?)")
    return np.memmap(path, dtype=np.float16, mode="r", offset=HEADER, shape=(n, dim))


def index(path: Path):
    """The store as a FAISS index searched in place (memory-mapped)."""
    import faiss

    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)


STEP = 4096  # rows widened to float32 at a time: 6 MB, in cache for the product that follows


def _blocks(x: np.ndarray):
    """(start, the rows as a float32 torch tensor) for each block of a (possibly memory-mapped,
    read-only) fp16 matrix: torch widens them (its vectorised conversion; numpy widens element by
    element, 1.6 s a million rows) into one reused buffer; rows are copied, never written back."""
    import torch

    n, dim = x.shape
    raw = np.empty((min(STEP, n), dim), dtype=np.float16)
    wide = torch.empty((min(STEP, n), dim), dtype=torch.float32)
    for s in range(0, n, STEP):
        m = min(STEP, n - s)
        np.copyto(raw[:m], x[s:s + m])
        wide[:m].copy_(torch.from_numpy(raw[:m]))
        yield s, wide[:m]


def times(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` (float32, (N, k)) for fp16 rows and a few columns w (D, k), exact to the float32 product,
    in one pass. Computed as ``w.T @ rows.T``: torch's ``rows @ w`` with k = 2 ran a slow general product
    (2 ms a block against 0.3), and numpy's BLAS threads beside torch's fought over two cores. Ten
    million rows: ~2.5 s on 2 cores, against 8 s for FAISS's search with k = N (which also sorts) and
    4.9 s for torch's fp16 product (within 2e-4 only)."""
    import torch

    w = np.asarray(w, np.float32)
    w2 = w.reshape(-1, 1) if w.ndim == 1 else w
    out = np.empty((len(x), w2.shape[1]), np.float32)
    if len(x):
        wt = torch.from_numpy(np.array(w2.T, dtype=np.float32, order="C"))  # a copy: w may be read-only
        part = torch.empty((w2.shape[1], min(STEP, len(x))), dtype=torch.float32)
        res = torch.from_numpy(out)
        for s, rows in _blocks(x):
            torch.matmul(wt, rows.t(), out=part[:, :len(rows)])
            res[s:s + len(rows)] = part[:, :len(rows)].t()
    return out[:, 0] if w.ndim == 1 else out


def row_sum(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The sum of the given rows of fp16 x (float64 (D,)), in one sequential pass with a weight per row
    (how often it is given): for a large share of the corpus (a keyword's 1.7M hits of 10M) gathering the rows one by one
    took 5 s."""
    import torch

    weight = np.bincount(np.asarray(rows, np.int64), minlength=len(x)).astype(np.float32)  # a row twice counts twice
    total = torch.zeros(x.shape[1], dtype=torch.float64)
    wt = torch.from_numpy(weight)
    for s, block in _blocks(x):
        total += (wt[s:s + len(block)] @ block).double()
    return total.numpy()
