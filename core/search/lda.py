"""LDA: two-class linear discriminant (included vs excluded) in closed form, in torch.

The direction is ``Sw^-1 (mu_in - mu_ex)`` with ``Sw`` the prior-weighted within-class
covariance, each class's covariance shrunk by Ledoit-Wolf on standardised features, as in
scikit-learn's ``LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto")``.
"""

from __future__ import annotations

import numpy as np
import torch

from core.search.base import Method, Ranked, SearchContext, one_thread
from core.search.linear import fit_device, labelled, rank_by_direction, to_torch


def ledoit_wolf_cov(z: torch.Tensor) -> torch.Tensor:
    """Ledoit-Wolf shrunk covariance of z (n x p), computed on standardised columns."""
    n, p = z.shape
    zc = z - z.mean(0, keepdim=True)
    scale = zc.pow(2).mean(0).sqrt()
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    x = zc / scale
    emp = x.T @ x / n
    mu = torch.trace(emp) / p
    x2 = x * x
    beta_ = (x2.T @ x2).sum()
    delta_ = (emp * emp).sum()  # = sum((X^T X)^2) / n^2
    beta = (beta_ / n - delta_) / (p * n)
    delta = (delta_ - 2 * mu * torch.trace(emp) + p * mu * mu) / p
    beta = torch.minimum(beta, delta)
    shrink = torch.where(beta == 0, torch.zeros_like(beta), beta / delta) if delta > 0 else torch.zeros_like(beta)
    cov = (1 - shrink) * emp + shrink * mu * torch.eye(p, dtype=z.dtype, device=z.device)
    return scale[:, None] * cov * scale[None, :]


def within_scatter(classes: list[torch.Tensor], ridge: float = 1e-4) -> torch.Tensor:
    """Pooled shrunk covariance of the classes, plus a small ridge that keeps it invertible with
    one or two texts per class (the LDA search and the scatter's projection share it)."""
    n = sum(len(c) for c in classes)
    sw = sum(len(c) * ledoit_wolf_cov(c) for c in classes) / n
    p = sw.shape[0]
    return sw + ridge * (torch.trace(sw) / p + 1e-6) * torch.eye(p, dtype=sw.dtype, device=sw.device)


def fisher_direction(xi: torch.Tensor, xe: torch.Tensor, ridge: float = 1e-4) -> torch.Tensor:
    return torch.linalg.solve(within_scatter([xi, xe], ridge), xi.mean(0) - xe.mean(0))


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10
           ) -> Ranked:
    inc, exc, xi, xe = labelled(ctx, included, excluded)
    METHOD.check(inc, exc)
    with one_thread():
        dev = fit_device(ctx, len(xi) + len(xe))
        w = fisher_direction(to_torch(xi, dev), to_torch(xe, dev))
        w = w / w.norm()
    return rank_by_direction(ctx, w.float().cpu().numpy(), inc, exc, k, "lda")


METHOD = Method("lda", "LDA", "Linear discriminant: towards included, away from excluded.", 1, 1, search)
