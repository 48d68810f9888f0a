"""One inner-product index per corpus; every linear ranker ends in one search here.

COS, LDA, NN1 and NN2 all rank by ``X @ w`` for some direction ``w`` (a logistic or Fisher score
is monotone in it), so they share one top-k with the labelled rows excluded *inside* the search:
on CPU a FAISS ``IndexFlatIP`` with an ``IDSelectorBitmap`` of the allowed rows; on CUDA the
matrix sits on the GPU and the masked top-k runs there.
"""

from __future__ import annotations

import numpy as np


def _faiss():
    import faiss  # imported lazily: pages that never search do not pay for it

    return faiss


class VectorIndex:
    def __init__(self, vectors: np.ndarray, device: str = "cpu"):
        # FAISS wants C-contiguous float32; convert once at the boundary.
        x = np.ascontiguousarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"vectors must be 2-D, got shape {x.shape}")
        self.n, self.dim = x.shape
        self.device = device
        self._torch_x = None
        if device == "cuda":
            import torch

            self._torch_x = torch.from_numpy(x).to("cuda")
            self._x = x
        else:
            faiss = _faiss()
            self._index = faiss.IndexFlatIP(self.dim)
            self._index.add(x)
            # The index holds the only in-memory copy; expose it read-only as our matrix.
            xb = faiss.rev_swig_ptr(self._index.get_xb(), self.n * self.dim)
            self._x = np.asarray(xb).reshape(self.n, self.dim)
        self._x.flags.writeable = False

    @property
    def vectors(self) -> np.ndarray:
        return self._x

    def topk(self, query: np.ndarray, k: int, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows with the k largest ``vectors @ query``, none of ``exclude``, best first."""
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, self.dim))
        exclude = np.zeros(0, np.int64) if exclude is None else np.asarray(exclude, np.int64)
        k = int(min(k, self.n - len(np.unique(exclude))))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if self._torch_x is not None:
            import torch

            s = self._torch_x @ torch.from_numpy(q[0]).to(self._torch_x.device)
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

    def scores(self, query: np.ndarray) -> np.ndarray:
        """``vectors @ query`` for every row (for plots and evaluation, not for top-k)."""
        return self._x @ np.asarray(query, dtype=np.float32)


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device
