"""Anchored filtering (Deep Amortized Clustering, Lee, Lee & Teh 2019, as the original study used it),
extended to a *set* of anchors and to rows known not to belong.

    X (B, L, D) -> linear reduction to H (+ a learned role vector: unknown / anchor / known non-member)
      (+ a linear map of each row's cosine to the anchors' mean, its largest cosine to an anchor and to
         a known non-member: ``similarity=True``)
      -> ISAB x n1                                  = Hs  (B, L, H)
    h_a  = PMA over the anchor rows of Hs           (B, 1, H)   ("row" pooling: their mean, = the row for one anchor)
    H|a  = MAB(Hs, h_a) + W [Hs * h_a, |Hs - h_a|]  every row conditioned on the anchor(s)
    Hc   = PMA(H|a)                                 (B, 1, H)   a summary of the bag as seen from the anchor
    HM   = MAB(H|a, Hc) -> ISAB x n2 -> rFF -> one logit per row: P(row belongs to the anchor's cluster)

Trained with binary cross-entropy against the true membership mask (:mod:`.train`).

Beyond the study: with a single anchor, MAB(Hs, h_a) attends to one key, so it adds the same vector
to every row and cannot compare a row with the anchor; the interaction term W[...] and the cosine
features let it (on held-out toy topics, membership accuracy went from ~0.6 to >0.9 with them).

``prf`` (issue 31, item 4): a fourth feature, each row's cosine to the pseudo-relevance-feedback centre
(the mean of the anchors and their ``prf`` nearest rows of the bag): the rule that beat the trained
model on every corpus. With it every feature is also given standardised within its bag (a z-score over
the bag's real rows: the cosines' scale differs from corpus to corpus, their order within a bag
does not), and the features reach the logit directly through a linear term as well, so the network
starts from a rule of PRF's kind and learns what to add to it. Models saved without it load as before
(``prf`` 0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from core.cluster.dac.modules import MAB, PMA, Stack

UNKNOWN, ANCHOR, NON_MEMBER = 0, 1, 2  # a row's role in a bag


@dataclass(frozen=True)
class Config:
    dim: int  # input dimension D (the embedding's)
    hidden: int = 128  # H, after the linear reduction
    heads: int = 4
    inducing: int = 32  # m inducing points per ISAB
    n1: int = 2  # ISABs before the anchor
    n2: int = 2  # ISABs after
    norm: bool = True  # LayerNorm in every MAB
    tied: bool = False  # one ISAB applied n times (the DAC authors' code) instead of n blocks
    anchor_pool: str = "pma"  # "pma": attention pooling of the anchor rows; "row": their mean
    similarity: bool = True  # cosine-to-anchor features at the input
    prf: int = 0  # > 0: the PRF-centre cosine (this many feedback rows), standardised features, a direct path

    def __post_init__(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        if self.prf < 0:
            raise ValueError(f"prf must be 0 (off) or a number of feedback rows, got {self.prf}")
        if self.prf and not self.similarity:
            raise ValueError("prf needs similarity=True (it is one of the similarity features)")
        if self.anchor_pool not in ("pma", "row"):
            raise ValueError(f"anchor_pool must be 'pma' or 'row', got {self.anchor_pool!r}")

    def as_dict(self) -> dict:
        return asdict(self)


def similarities(x: torch.Tensor, anchor: torch.Tensor, known: torch.Tensor, mask: torch.Tensor | None = None,
                 prf: int = 0) -> torch.Tensor:
    """(B, L, D), anchor (B, L) bool, known non-members (B, L) bool -> (B, L, 3): each row's cosine to
    the anchors' mean, its largest cosine to an anchor, and to a known non-member (0 if none).
    ``prf`` > 0 (``mask`` (B, L) bool, real rows, needed): (B, L, 8), a fourth, the cosine to the centre
    of the anchors and the ``prf`` real rows nearest their mean, then the four standardised within
    each bag (:func:`standardised`)."""
    u = nn.functional.normalize(x, dim=-1)
    a = anchor.unsqueeze(-1).to(u.dtype)
    centre = nn.functional.normalize((u * a).sum(1, keepdim=True), dim=-1)  # (B, 1, D)
    to_centre = (u * centre).sum(-1)
    pair = u @ u.transpose(1, 2)  # (B, L, L)
    best_anchor = pair.masked_fill(~anchor.unsqueeze(1), -2.0).amax(-1)
    best_known = pair.masked_fill(~known.unsqueeze(1), -2.0).amax(-1)
    best_known = torch.where(known.any(1, keepdim=True), best_known, torch.zeros_like(best_known))
    if not prf:
        return torch.stack([to_centre, best_anchor, best_known], -1)
    if mask is None:
        raise ValueError("the PRF feature needs the bag's mask")
    k = min(prf, x.shape[1])
    near = to_centre.masked_fill(~mask | anchor, -3.0).topk(k, dim=1)  # the feedback rows, per bag
    feedback = torch.zeros_like(to_centre).scatter(1, near.indices, (near.values > -3.0).to(u.dtype))
    w = (feedback + anchor.to(u.dtype)).unsqueeze(-1)
    to_prf = (u * nn.functional.normalize((u * w).sum(1, keepdim=True), dim=-1)).sum(-1)
    raw = torch.stack([to_centre, best_anchor, best_known, to_prf], -1)
    return torch.cat([raw, standardised(raw, mask)], -1)


def standardised(f: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, L, F) features -> their z-scores over each bag's real rows (0 for a constant feature)."""
    m = mask.unsqueeze(-1).to(f.dtype)
    n = m.sum(1, keepdim=True).clamp_min(1.0)
    mean = (f * m).sum(1, keepdim=True) / n
    sd = (((f - mean) ** 2) * m).sum(1, keepdim=True).div(n).sqrt()
    return torch.where(sd > 1e-6, (f - mean) / sd.clamp_min(1e-6), torch.zeros_like(f)) * m


class AnchoredFilter(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        self.reduce = nn.Linear(cfg.dim, h)
        self.role = nn.Embedding(3, h)
        n_sim = 8 if cfg.prf else 3
        self.sim = nn.Linear(n_sim, h) if cfg.similarity else None
        self.direct = nn.Linear(n_sim, 1) if cfg.prf else None  # the features straight to the logit
        if self.direct is not None:  # start from the PRF rule: the top of the bag by PRF cosine are members
            with torch.no_grad():
                self.direct.weight.zero_()
                self.direct.weight[0, 7] = 2.0  # the standardised PRF cosine
                self.direct.bias.fill_(-2.0)
        self.interact = nn.Linear(2 * h, h)
        self.enc = Stack(cfg.n1, h, cfg.heads, cfg.inducing, cfg.norm, cfg.tied)
        self.pool_anchor = PMA(h, cfg.heads, 1, cfg.norm)
        self.condition = MAB(h, cfg.heads, cfg.norm)
        self.pool_bag = PMA(h, cfg.heads, 1, cfg.norm)
        self.mix = MAB(h, cfg.heads, cfg.norm)
        self.dec = Stack(cfg.n2, h, cfg.heads, cfg.inducing, cfg.norm, cfg.tied)
        self.out = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, role: torch.Tensor) -> torch.Tensor:
        """x (B, L, D) float, mask (B, L) bool (True = a real row), role (B, L) long in {UNKNOWN,
        ANCHOR, NON_MEMBER} with at least one anchor per bag -> logits (B, L)."""
        anchor = (role == ANCHOR) & mask
        if not bool(anchor.any(1).all()):
            raise ValueError("every bag needs at least one anchor row")
        h = self.reduce(x) + self.role(role)
        direct = 0.0
        if self.sim is not None:
            f = similarities(x, anchor, (role == NON_MEMBER) & mask, mask, self.cfg.prf)
            h = h + self.sim(f)
            if self.direct is not None:
                direct = self.direct(f).squeeze(-1)
        h = self.enc(h, mask)  # (B, L, H)
        if self.cfg.anchor_pool == "row":
            w = anchor.unsqueeze(-1).to(h.dtype)
            h_a = (h * w).sum(1, keepdim=True) / w.sum(1, keepdim=True)  # (B, 1, H)
        else:
            h_a = self.pool_anchor(h, anchor)  # (B, 1, H)
        h = self.condition(h, h_a) + self.interact(torch.cat([h * h_a, (h - h_a).abs()], -1))  # (B, L, H)
        hc = self.pool_bag(h, mask)  # (B, 1, H)
        h = self.dec(self.mix(h, hc), mask)
        return self.out(h).squeeze(-1) + direct  # (B, L)
