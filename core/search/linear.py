"""Shared by the linear rankers: fit a direction on the labelled rows, then one index search."""

from __future__ import annotations

import numpy as np
import torch

from core.search.base import Ranked, SearchContext, as_rows, unique_rows


def labelled(ctx: SearchContext, included, excluded) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    inc, exc = as_rows(included), as_rows(excluded)
    x = ctx.vectors
    return inc, exc, np.asarray(x[inc], np.float32), np.asarray(x[exc], np.float32)


def to_torch(a: np.ndarray, device: str) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(device)


def rank_by_direction(ctx: SearchContext, w: np.ndarray, included, excluded, k: int | None,
                      method: str, bias: float = 0.0, squash=None, info: dict | None = None) -> Ranked:
    """Top-k unlabelled rows by ``X @ w + bias`` (optionally passed through ``squash``)."""
    exclude = unique_rows(included, excluded)
    rows, scores = ctx.index.topk(w, k if k is not None else ctx.index.n, exclude=exclude)
    scores = scores + np.float32(bias)
    if squash is not None:
        scores = squash(scores).astype(np.float32)
    return Ranked(rows, scores, method, info or {})
