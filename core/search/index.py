"""One inner-product index per corpus; every linear ranker ends in one search here.

COS, LDA, NN1 and NN2 all rank by ``X @ w`` for some direction ``w`` (a logistic or Fisher score
is monotone in it), so they share one top-k with the labelled rows excluded *inside* the search:
on CPU a FAISS ``IndexFlatIP`` with an ``IDSelectorBitmap`` of the allowed rows; on CUDA the
matrix sits on the GPU and the masked top-k runs there.
"""

from __future__ import annotations

import numpy as np

from core import vectorstore
from core.paths import ROWS_PER_BLOCK
from core.rows import unique_rows


def _faiss():
    import faiss  # imported lazily: pages that never search do not pay for it

    return faiss


def device_rows(vectors, device: str, precision: str = "fp16"):
    """The rows as one torch tensor on ``device`` (fp16 or fp32), copied a block at a time: a memory-mapped
    fp16 store goes to the GPU without a float32 copy of the whole matrix on the host (15 GB at 10M x 384)."""
    import torch

    dtype = torch.float16 if precision == "fp16" else torch.float32
    n, dim = vectors.shape
    out = torch.empty((n, dim), dtype=dtype, device=device)
    if n == 0:
        return out
    # one staging block in the rows' stored precision (converted on the device): pinned (page-locked) where
    # a GPU takes it, so each block is copied once on the host, not once by us and again by CUDA's own staging
    stage = torch.from_numpy(np.empty((min(n, ROWS_PER_BLOCK), dim), np.asarray(vectors[:1]).dtype))
    if str(device).startswith("cuda") and torch.cuda.is_available():
        stage = stage.pin_memory()
    for s in range(0, n, ROWS_PER_BLOCK):
        e = min(n, s + ROWS_PER_BLOCK)
        stage.numpy()[: e - s] = vectors[s:e]
        out[s:e] = stage[: e - s].to(device, dtype=dtype)
    return out


class VectorIndex:
    """Inner-product top-k over the rows of ``vectors`` (unit rows: cosine).

    ``precision="fp16"`` stores the rows as half floats in a FAISS ``IndexScalarQuantizer``: half
    the memory traffic of a flat fp32 scan (the scan is memory-bound), scores within ~1e-3 of fp32.
    ``"auto"`` picks fp16 for large corpora and exact fp32 for small ones.
    """

    FP16_FROM = 2_000_000  # rows x dims above which "auto" uses fp16

    def __init__(self, vectors: np.ndarray, device: str = "cpu", precision: str = "auto"):
        if np.ndim(vectors) != 2:
            raise ValueError(f"vectors must be 2-D, got shape {np.shape(vectors)}")
        self.n, self.dim = vectors.shape
        if precision == "auto":
            precision = "fp16" if self.n * self.dim >= self.FP16_FROM else "fp32"
        if precision not in ("fp16", "fp32"):
            raise ValueError(f"precision must be auto, fp16 or fp32, got {precision!r}")
        self.device, self.precision = device, precision
        self._torch_x = None
        if device == "cuda":
            self._torch_x = device_rows(vectors, "cuda", precision)
            self._x = vectors if isinstance(vectors, np.ndarray) else np.asarray(vectors, np.float32)
        elif precision == "fp16":
            faiss = _faiss()
            self._index = faiss.IndexScalarQuantizer(self.dim, faiss.ScalarQuantizer.QT_fp16,
                                                     faiss.METRIC_INNER_PRODUCT)
            # FAISS wants C-contiguous float32: convert in slices, so a memory-mapped corpus is
            # never copied whole; the fp32 rows stay on disk (mapped) for fitting and plots.
            for start in range(0, self.n, ROWS_PER_BLOCK):
                self._index.add(np.ascontiguousarray(vectors[start:start + ROWS_PER_BLOCK], dtype=np.float32))
            self._x = vectors if isinstance(vectors, np.ndarray) and vectors.dtype == np.float32 \
                else np.asarray(vectors, dtype=np.float32)
        else:
            faiss = _faiss()
            x = np.ascontiguousarray(vectors, dtype=np.float32)
            self._index = faiss.IndexFlatIP(self.dim)
            self._index.add(x)
            # The index holds the only in-memory copy; expose it read-only as our matrix.
            xb = faiss.rev_swig_ptr(self._index.get_xb(), self.n * self.dim)
            self._x = np.asarray(xb).reshape(self.n, self.dim)
        if self._x.flags.writeable:
            self._x = self._x.view()
            self._x.flags.writeable = False

    @classmethod
    def mapped(cls, path, device: str = "cpu") -> "VectorIndex":
        """The index of a large corpus: its fp16 store (core/vectorstore.py) searched in place by FAISS,
        memory-mapped; ``vectors`` are the same bytes as a read-only fp16 array. On CUDA the rows go to
        the GPU as fp16 (the scan runs there)."""
        from core import vectorstore

        if device == "cuda":
            return cls(vectorstore.codes(path), device=device, precision="fp16")
        self = cls.__new__(cls)
        self._x = vectorstore.codes(path)
        self.n, self.dim = self._x.shape
        self.device, self.precision, self._torch_x = device, "fp16-mapped", None
        self._index = vectorstore.index(path)
        return self

    @property
    def vectors(self) -> np.ndarray:
        return self._x

    def scores(self, w: np.ndarray) -> np.ndarray:
        """``vectors @ w`` for every row, float32. A mapped store answers through FAISS (one scan of the
        fp16 rows in place, SIMD); in memory it is one matrix-vector product."""
        w = np.ascontiguousarray(np.asarray(w, np.float32).reshape(self.dim))
        if self._torch_x is not None:
            import torch

            return (self._torch_x @ torch.from_numpy(w).to(self._torch_x.device, self._torch_x.dtype)).float().cpu().numpy()
        if self.precision != "fp16-mapped":
            return np.asarray(self._x @ w, dtype=np.float32)
        return vectorstore.times(self._x, w)  # one pass; FAISS's search with k = N also sorted (8 s at 10M)

    def take(self, rows) -> np.ndarray:
        """The given rows as float32 (a copy; gathered in blocks from a mapped store)."""
        rows = np.asarray(rows, np.int64)
        return np.concatenate([np.asarray(self._x[rows[s:s + ROWS_PER_BLOCK]], np.float32)
                               for s in range(0, len(rows), ROWS_PER_BLOCK)] or [np.zeros((0, self.dim), np.float32)])

    def mean_of(self, rows) -> np.ndarray:
        """Mean of the given rows, float32, without holding them all at once."""
        rows = np.sort(np.asarray(rows, np.int64))
        if self.precision == "fp16-mapped" and len(rows) > self.n // 8:  # a large share: one sequential pass
            return (vectorstore.row_sum(self._x, rows) / max(1, len(rows))).astype(np.float32)
        total = np.zeros(self.dim, np.float64)
        for s in range(0, len(rows), ROWS_PER_BLOCK):
            total += np.asarray(self._x[rows[s:s + ROWS_PER_BLOCK]], np.float32).sum(axis=0, dtype=np.float64)
        return (total / max(1, len(rows))).astype(np.float32)

    def scores_of(self, rows, w: np.ndarray) -> np.ndarray:
        """``vectors[rows] @ w`` (float32), in blocks; for a large share of the corpus one full scan."""
        rows = np.asarray(rows, np.int64)
        if self.precision == "fp16-mapped" and len(rows) > self.n // 8:
            return self.scores(w)[rows]
        w = np.asarray(w, np.float32).reshape(self.dim)
        out = np.empty(len(rows), np.float32)
        for s in range(0, len(rows), ROWS_PER_BLOCK):
            out[s:s + ROWS_PER_BLOCK] = np.asarray(self._x[rows[s:s + ROWS_PER_BLOCK]], np.float32) @ w
        return out

    def topk(self, query: np.ndarray, k: int, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows with the k largest ``vectors @ query``, none of ``exclude``, best first."""
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, self.dim))
        exclude = np.zeros(0, np.int64) if exclude is None else np.asarray(exclude, np.int64)
        k = int(min(k, self.n - len(unique_rows(exclude))))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if self._torch_x is not None:
            import torch

            s = (self._torch_x @ torch.from_numpy(q[0]).to(self._torch_x.device, self._torch_x.dtype)).float()
            if len(exclude):
                s[torch.from_numpy(exclude).to(s.device)] = -float("inf")
            v, i = torch.topk(s, k)
            return i.cpu().numpy().astype(np.int64), v.cpu().numpy().astype(np.float32)
        faiss = _faiss()
        params = None
        if len(exclude):
            allowed = np.ones(self.n, dtype=bool)
            allowed[exclude] = False
            bitmap = np.packbits(allowed, bitorder="little")
            sel = faiss.IDSelectorBitmap(self.n, faiss.swig_ptr(bitmap))
            params = faiss.SearchParameters(sel=sel)
        scores, rows = self._index.search(q, k, params=params)
        keep = rows[0] >= 0
        return rows[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)
