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


GPU_FIT_FROM = 20_000  # labelled (or background) rows from which a fit goes to the index's device


def fit_device(ctx: SearchContext, rows: int) -> str:
    """Where a ranker fits its direction: on the CPU unless the rows are many. The fits are a few hundred
    rows through tens of small steps, so on a GPU they are launch- and sync-bound: measured on an H200
    (results/gpu-search-20261126T001112Z) NN1's fit took ~185 ms, NN2's ~35, LDA's ~10 where one
    thread of a CPU takes 44, 7 and 4 (bench/RESULTS.md); only the scan of the corpus needs the GPU."""
    return ctx.device if rows >= GPU_FIT_FROM else "cpu"


def rank_by_direction(ctx: SearchContext, w: np.ndarray, included, excluded, k: int | None,
                      method: str, bias: float = 0.0, squash=None, info: dict | None = None) -> Ranked:
    """Top-k unlabelled rows by ``X @ w + bias`` (optionally passed through ``squash``)."""
    exclude = unique_rows(included, excluded)
    rows, scores = ctx.index.topk(w, k if k is not None else ctx.index.n, exclude=exclude)
    scores = scores + np.float32(bias)
    if squash is not None:
        scores = squash(scores).astype(np.float32)
    return Ranked(rows, scores, method, info or {})
