"""NN2: a small torch classifier (logistic regression, class-balanced, L2-regularised) trained on
the labelled texts; unlabelled rows ranked by P(included)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from core.search.base import Method, Ranked, SearchContext, one_thread
from core.search.linear import fit_device, labelled, rank_by_direction, to_torch


class BalancedLogistic(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        # no random initialisation (it would draw from torch's global generator): train() sets zeros
        self.linear = nn.utils.skip_init(nn.Linear, dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, D) -> (N,) logits
        return self.linear(x).squeeze(-1)


def train(xi: torch.Tensor, xe: torch.Tensor, l2: float = 1e-3, iters: int = 50) -> "BalancedLogistic":
    """Deterministic without any random draw (weights start at zero; L-BFGS draws nothing): no seed, and
    nothing touches torch's global generator, which every user of the server shares."""
    x = torch.cat([xi, xe])
    y = torch.cat([torch.ones(len(xi)), torch.zeros(len(xe))]).to(x.device)
    # balanced: each class weighs half, however many texts it has
    w = torch.where(y > 0, 0.5 / len(xi), 0.5 / len(xe))
    model = BalancedLogistic(x.shape[1]).to(x.device)
    nn.init.zeros_(model.linear.weight)
    nn.init.zeros_(model.linear.bias)
    opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=iters, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (w * nn.functional.binary_cross_entropy_with_logits(model(x), y, reduction="none")).sum()
        loss = loss + l2 * model.linear.weight.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return model


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           *, l2: float = 1e-3) -> Ranked:
    inc, exc, xi, xe = labelled(ctx, included, excluded)
    METHOD.check(inc, exc)
    with one_thread():
        dev = fit_device(ctx, len(xi) + len(xe))
        model = train(to_torch(xi, dev), to_torch(xe, dev), l2=l2)
    w = model.linear.weight.detach()[0].cpu().numpy()
    b = float(model.linear.bias.detach().cpu()[0])
    return rank_by_direction(ctx, w, inc, exc, k, "nn2", bias=b,
                             squash=lambda s: 1.0 / (1.0 + np.exp(-s)))


METHOD = Method("nn2", "NN2", "A logistic classifier trained on the labelled texts; ranks by P(included).",
                1, 1, search, limits={"l2": (0.0, 1e6)})
