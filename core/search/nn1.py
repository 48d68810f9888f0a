"""NN1: one projection vector trained by gradient steps to maximise Fisher's criterion
|mu_in - mu_ex| / (sigma_in + sigma_ex) of the projected included and excluded texts."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from core.search.base import Method, Ranked, SearchContext, one_thread
from core.search.linear import fit_device, labelled, rank_by_direction, to_torch


class FisherProjection(nn.Module):
    def __init__(self, init: torch.Tensor):
        super().__init__()
        self.w = nn.Parameter(init.clone())  # (D,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, D) -> (N,)
        return x @ (self.w / self.w.norm())


def fisher_loss(pi: torch.Tensor, pe: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    sigma = pi.std(unbiased=False) + pe.std(unbiased=False) + eps
    return -(pi.mean() - pe.mean()) / sigma


def train(xi: torch.Tensor, xe: torch.Tensor, steps: int = 100, lr: float = 0.05) -> torch.Tensor:
    """Deterministic without any random draw (the projection starts from the difference of the class
    means; Adam draws nothing): no seed, and nothing touches torch's global generator, which every user
    of the server shares."""
    model = FisherProjection(xi.mean(0) - xe.mean(0))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = fisher_loss(model(xi), model(xe))
        loss.backward()
        opt.step()
    with torch.no_grad():
        w = model.w / model.w.norm()
        if (xi @ w).mean() < (xe @ w).mean():  # keep the included side positive
            w = -w
    return w.detach()


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           *, steps: int = 100) -> Ranked:
    inc, exc, xi, xe = labelled(ctx, included, excluded)
    METHOD.check(inc, exc)
    with one_thread():
        dev = fit_device(ctx, len(xi) + len(xe))
        w = train(to_torch(xi, dev), to_torch(xe, dev), steps=steps)
    return rank_by_direction(ctx, w.cpu().numpy(), inc, exc, k, "nn1")


METHOD = Method("nn1", "NN1", "A projection trained for Fisher's criterion (included vs excluded).",
                1, 1, search, limits={"steps": (1, 100_000)})
