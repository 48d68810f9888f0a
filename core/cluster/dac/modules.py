"""Set Transformer blocks (Lee et al. 2019) with padding masks.

Shapes: B bags, L rows per bag (padded), H features. ``mask`` is (B, L) bool, True for a real row;
padded rows are never attended to, so they cannot change a real row's output (tested). Every block
maps (B, L, H) -> (B, L, H) except PMA, which maps to (B, k, H).

    MAB(Q, K)  = LN(A + rFF(A)),  A = LN(Q + MultiHead(Q, K, K))
    SAB(X)     = MAB(X, X)                       permutation-equivariant
    ISAB(X)    = MAB(X, MAB(I, X))               I: m trainable inducing points; O(L m) not O(L^2)
    PMA(Z)     = MAB(S, Z)                       S: k trainable seeds; permutation-invariant
"""

from __future__ import annotations

import torch
from torch import nn


def _ignore(mask: torch.Tensor | None) -> torch.Tensor | None:
    """nn.MultiheadAttention's key_padding_mask is True where a key is to be *ignored*."""
    return None if mask is None else ~mask


class MAB(nn.Module):
    """Multihead attention block: queries (B, Lq, H) attend to keys (B, Lk, H); residual + row-wise
    feed-forward, LayerNorm optional (``norm``)."""

    def __init__(self, dim: int, heads: int, norm: bool = True):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.norm1 = nn.LayerNorm(dim) if norm else nn.Identity()
        self.norm2 = nn.LayerNorm(dim) if norm else nn.Identity()

    def forward(self, q: torch.Tensor, k: torch.Tensor, k_mask: torch.Tensor | None = None) -> torch.Tensor:
        a = self.norm1(q + self.attn(q, k, k, key_padding_mask=_ignore(k_mask), need_weights=False)[0])
        return self.norm2(a + self.ff(a))


class SAB(nn.Module):
    def __init__(self, dim: int, heads: int, norm: bool = True):
        super().__init__()
        self.mab = MAB(dim, heads, norm)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:  # (B, L, H)
        return self.mab(x, x, mask)


class ISAB(nn.Module):
    def __init__(self, dim: int, heads: int, inducing: int, norm: bool = True):
        super().__init__()
        self.inducing = nn.Parameter(torch.empty(1, inducing, dim))
        nn.init.xavier_uniform_(self.inducing)
        self.mab1 = MAB(dim, heads, norm)  # inducing points summarise the real rows
        self.mab2 = MAB(dim, heads, norm)  # each row reads the summary

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:  # (B, L, H)
        h = self.mab1(self.inducing.expand(len(x), -1, -1), x, mask)  # (B, m, H)
        return self.mab2(x, h)


class PMA(nn.Module):
    def __init__(self, dim: int, heads: int, seeds: int = 1, norm: bool = True):
        super().__init__()
        self.seeds = nn.Parameter(torch.empty(1, seeds, dim))
        nn.init.xavier_uniform_(self.seeds)
        self.mab = MAB(dim, heads, norm)

    def forward(self, z: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:  # (B, L, H) -> (B, k, H)
        return self.mab(self.seeds.expand(len(z), -1, -1), z, mask)


class Stack(nn.Module):
    """``n`` ISABs applied in turn. ``tied``: one block applied n times (what list multiplication
    does in the DAC authors' code); default untied, n separate blocks."""

    def __init__(self, n: int, dim: int, heads: int, inducing: int, norm: bool = True, tied: bool = False):
        super().__init__()
        self.n, self.tied = n, tied
        self.blocks = nn.ModuleList([ISAB(dim, heads, inducing, norm) for _ in range(1 if tied and n else n)])

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for i in range(self.n):
            x = self.blocks[0 if self.tied else i](x, mask)
        return x
