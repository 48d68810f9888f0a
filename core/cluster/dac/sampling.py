"""Training bags for anchored filtering: rows of the corpus, their roles and their true membership.

A bag is L rows of the corpus (padded where a sampler draws fewer): some are the anchor(s), some may be
marked as known non-members (what an annotator excluded), the rest are to be classified; the target
says which rows belong to the anchors' cluster. Samplers (the training stages of
``python -m precompute.dac train``):

- :class:`Neighbourhoods` (stage ``pretrain``, no labels): ``mode="centres"``, the study's bag: c random
  centres with their m nearest rows each, the first centre's rows positive, plus random rows as noise;
  ``mode="fringe"``: a centre's ``reach`` nearest rows, the innermost ``inner`` positive and a sample
  of the outer ones negative.
- :class:`Labelled` (stages ``kmeans``, ``labels``, ``groups``): rows with a class (a K-Means cluster, a
  label column, a saved group), only the classes given (a held-out class never appears in a training
  bag). Two kinds of bag, mixed by ``episode_share``: ``knn``, the anchors' L nearest rows (what
  inference sees); ``episode``, DAC's own sampler: classes kept with probability 1/2, Dirichlet
  proportions (``concentration``, 1 by default; the authors' recipe uses 5), a bag size between 0.3 and
  1 times L, plus background rows of no class. ``within``: only these rows (one corpus of several
  stacked in one matrix).
- :class:`Pooled` (issue 31, item 4): many tasks at once; each bag comes from one of several samplers
  (corpora, their label columns, K-Means pseudo-classes at several k), drawn by weight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.cluster.dac.model import ANCHOR, NON_MEMBER, UNKNOWN


@dataclass
class Bags:
    rows: torch.Tensor  # (B, L) long, corpus rows (0 where padded)
    mask: torch.Tensor  # (B, L) bool, True for a real row
    role: torch.Tensor  # (B, L) long: UNKNOWN / ANCHOR / NON_MEMBER
    target: torch.Tensor  # (B, L) float, 1 = in the anchors' cluster

    def to(self, device: str) -> "Bags":
        return Bags(*(t.to(device) for t in (self.rows, self.mask, self.role, self.target)))


def stack(bags: list[tuple[np.ndarray, np.ndarray, np.ndarray]], size: int) -> Bags:
    """[(rows, role, target), ...] of up to ``size`` rows each -> padded tensors."""
    b = len(bags)
    rows, role = np.zeros((b, size), np.int64), np.zeros((b, size), np.int64)
    mask, target = np.zeros((b, size), bool), np.zeros((b, size), np.float32)
    for i, (r, ro, t) in enumerate(bags):
        n = len(r)
        rows[i, :n], role[i, :n], target[i, :n], mask[i, :n] = r, ro, t, True
    return Bags(torch.from_numpy(rows), torch.from_numpy(mask), torch.from_numpy(role), torch.from_numpy(target))


def nearest(x: torch.Tensor, query: torch.Tensor, k: int) -> torch.Tensor:
    """Rows of ``x`` (N, D) with the largest inner product with each query (Q, D): (Q, k), best first."""
    return (query @ x.T).topk(min(k, len(x)), dim=1).indices


def roles(n: int, positives: np.ndarray, gen: np.random.Generator, max_anchors: int,
          max_known: int) -> np.ndarray:
    """Roles for a bag whose true members are ``positives`` (bool, n): 1..max_anchors anchors drawn
    among the members (one anchor half of the time, as the study trained), and 0..max_known of the
    non-members marked as known, as an annotator's excluded texts are."""
    role = np.full(n, UNKNOWN, np.int64)
    pos, neg = np.flatnonzero(positives), np.flatnonzero(~positives)
    a = 1 if max_anchors <= 1 or gen.random() < 0.5 else int(gen.integers(1, min(max_anchors, len(pos)) + 1))
    role[gen.choice(pos, min(a, len(pos)), replace=False)] = ANCHOR
    if max_known > 0 and len(neg) and gen.random() < 0.5:
        role[gen.choice(neg, min(int(gen.integers(1, max_known + 1)), len(neg)), replace=False)] = NON_MEMBER
    return role


class Neighbourhoods:
    """Stage ``pretrain``: pseudo-clusters from the geometry of the embedding alone."""

    def __init__(self, x: torch.Tensor, *, bag: int = 800, mode: str = "centres", centres: int = 3,
                 per_centre: int = 100, reach: int = 3600, inner: int = 300, fringe: int = 500,
                 max_anchors: int = 8, max_known: int = 16):
        if mode not in ("centres", "fringe"):
            raise ValueError(f"mode must be 'centres' or 'fringe', got {mode!r}")
        self.x, self.n = x, len(x)
        self.bag, self.mode = min(bag, self.n), mode
        self.centres, self.per_centre = centres, max(1, min(per_centre, self.bag // (centres + 1)))
        self.reach = min(reach, self.n)
        self.inner = max(1, min(inner, self.reach // 4, self.bag // 2))
        self.fringe = max(1, min(fringe, self.reach - self.inner, self.bag - self.inner))
        self.max_anchors, self.max_known = max_anchors, max_known

    def sample(self, batch: int, gen: np.random.Generator) -> Bags:
        out = []
        for _ in range(batch):
            if self.mode == "centres":
                c = gen.choice(self.n, self.centres, replace=False)
                near = nearest(self.x, self.x[torch.from_numpy(c).to(self.x.device)], self.per_centre).cpu().numpy()
                pos = near[0]
                rows = np.unique(near.ravel())
                rest = np.setdiff1d(gen.choice(self.n, min(self.n, self.bag + len(rows)), replace=False), rows)
                rows = np.concatenate([rows, rest[:max(0, self.bag - len(rows))]])
            else:
                c = int(gen.integers(self.n))
                near = nearest(self.x, self.x[c:c + 1], self.reach)[0].cpu().numpy()
                pos = near[:self.inner]
                outer = near[self.inner:]
                rows = np.concatenate([pos, gen.choice(outer, min(self.fringe, len(outer)), replace=False)])
            rows = gen.permutation(rows)
            member = np.isin(rows, pos)
            out.append((rows, roles(len(rows), member, gen, self.max_anchors, self.max_known), member))
        return stack(out, self.bag)


class Labelled:
    """Stages ``kmeans`` / ``labels`` / ``groups``: bags with true classes. ``labels`` (N,) int, -1 =
    no class (background, never a member); ``classes``: the classes this sampler may show (all
    others' rows are left out of its bags entirely)."""

    def __init__(self, x: torch.Tensor, labels: np.ndarray, classes: np.ndarray | None = None, *,
                 bag: int = 800, episode_share: float = 0.0, background: float = 0.5,
                 max_anchors: int = 8, max_known: int = 16, min_class: int = 2,
                 anchor_classes: np.ndarray | None = None, within: np.ndarray | None = None,
                 concentration: float = 1.0):
        labels = np.asarray(labels, np.int64)
        if len(labels) != len(x):
            raise ValueError(f"{len(labels)} labels for {len(x)} rows")
        if within is not None:  # rows outside are neither a class nor background: never in a bag
            outside = np.ones(len(labels), bool)
            outside[np.asarray(within, np.int64)] = False
            labels = np.where(outside, -2, labels)
        present, counts = np.unique(labels[labels >= 0], return_counts=True)
        classes = present if classes is None else np.intersect1d(np.asarray(classes), present)
        classes = classes[np.isin(classes, present[counts >= min_class])]
        if len(classes) == 0:
            raise ValueError(f"no class with at least {min_class} rows to train on")
        self.x, self.labels, self.classes = x, labels, classes
        # the classes an anchor's bag is drawn around (all of ``classes`` by default): calibration draws
        # bags around held-out classes' anchors from every row the model may see, as the search does
        self.anchor_classes = classes if anchor_classes is None else np.intersect1d(np.asarray(anchor_classes), classes)
        if len(self.anchor_classes) == 0:
            raise ValueError("none of the anchor classes is among the classes with rows")
        allowed = np.isin(labels, classes) | (labels == -1)
        self.pool = np.flatnonzero(allowed)
        # the rows a bag may hold, searched as the span they lie in (a view of x) masked to them
        self.span = (int(self.pool[0]), int(self.pool[-1]) + 1) if len(self.pool) else (0, 0)
        self.allowed_t = torch.from_numpy(allowed[self.span[0]:self.span[1]]).to(x.device)
        self.by_class = {int(c): np.flatnonzero(labels == c) for c in classes}
        self.background_rows = np.flatnonzero(labels == -1)
        self.concentration = concentration
        self.bag = min(bag, len(self.pool))
        self.episode_share, self.background = episode_share, background
        self.max_anchors, self.max_known = max_anchors, max_known

    def nearest_rows(self, seeds: list[int]) -> torch.Tensor:
        """Each seed's ``bag`` nearest rows among those a bag may hold, best first: (len(seeds), bag), on
        x's device (one matrix product over the rows' span, no copy of them)."""
        lo, hi = self.span
        scores = self.x[torch.as_tensor(seeds, device=self.x.device)] @ self.x[lo:hi].T
        scores.masked_fill_(~self.allowed_t, float("-inf"))
        return scores.topk(self.bag, dim=1).indices + lo

    def plan(self, gen: np.random.Generator) -> tuple[int, int] | None:
        """What one bag will be: None for an ``episode``, else a ``knn`` bag's class and the row it is
        drawn around (its nearest rows are searched for with the step's other bags')."""
        if gen.random() < self.episode_share:
            return None
        c = int(gen.choice(self.anchor_classes))
        members = self.by_class[c]
        return c, int(members[gen.integers(len(members))])

    def realise(self, plan: tuple[int, int] | None, near: np.ndarray | None, gen: np.random.Generator):
        """The bag ``plan`` said, ``near`` its seed's nearest allowed rows (best first) for a ``knn`` bag."""
        return self._episode(gen) if plan is None else self._knn(*plan, near, gen)

    def _knn(self, c: int, seed: int, rows: np.ndarray, gen: np.random.Generator):
        """A ``knn`` bag around ``seed`` of class ``c`` from its nearest ``rows`` (best first)."""
        rows = rows.copy()
        if seed not in rows:  # many exact duplicates of another class can crowd it out
            rows[-1] = seed
        member = self.labels[rows] == c
        role = roles(len(rows), member, gen, self.max_anchors, self.max_known)
        order = gen.permutation(len(rows))
        return rows[order], role[order], member[order]

    def _episode(self, gen: np.random.Generator):
        kept = self.classes[gen.random(len(self.classes)) < 0.5]
        if len(kept) < 2:
            kept = gen.choice(self.classes, min(2, len(self.classes)), replace=False)
        size = int(self.bag * gen.uniform(0.3, 1.0))
        n_bg = int(size * self.background * gen.random()) if len(self.background_rows) else 0
        share = gen.dirichlet(np.full(len(kept), self.concentration))
        counts = np.maximum(1, np.round(share * (size - n_bg))).astype(int)
        parts = [gen.choice(self.by_class[int(c)], min(int(n), len(self.by_class[int(c)])), replace=False)
                 for c, n in zip(kept, counts)]
        if n_bg:
            parts.append(gen.choice(self.background_rows, min(n_bg, len(self.background_rows)), replace=False))
        rows = gen.permutation(np.concatenate(parts))[:self.bag]
        i = int(gen.integers(len(kept)))  # the anchors' class
        member = self.labels[rows] == kept[i]
        if not member.any():  # its only rows fell off the end: put one back
            rows[0], member[0] = parts[i][0], True
        return rows, roles(len(rows), member, gen, self.max_anchors, self.max_known), member

    def sample(self, batch: int, gen: np.random.Generator) -> Bags:
        out = []
        for _ in range(batch):  # a bag at a time (:class:`Pooled` searches for a whole step's bags at once)
            plan = self.plan(gen)
            near = None if plan is None else self.nearest_rows([plan[1]])[0].cpu().numpy()
            out.append(self.realise(plan, near, gen))
        return stack(out, self.bag)


class Pooled:
    """Bags from several :class:`Labelled` samplers over one matrix (corpora stacked, each sampler
    ``within`` its own rows): each bag from one sampler, drawn with probability proportional to
    ``weights`` (equal by default)."""

    def __init__(self, samplers: list, weights: list[float] | None = None):
        if not samplers:
            raise ValueError("no sampler to pool")
        if not all(isinstance(s, Labelled) and s.x is samplers[0].x for s in samplers):
            raise ValueError("pooled samplers must be Labelled samplers over one matrix")
        self.samplers = list(samplers)
        w = np.ones(len(samplers)) if weights is None else np.asarray(weights, float)
        if len(w) != len(samplers) or (w < 0).any() or w.sum() <= 0:
            raise ValueError("one non-negative weight per sampler, not all zero")
        self.weights = w / w.sum()
        self.bag = max(s.bag for s in self.samplers)
        self.classes = np.concatenate([np.asarray(s.classes, np.int64) for s in self.samplers])
        # the classes bags are drawn around (a calibration pool: the held-out ones), as calibrate counts them
        self.anchor_classes = np.concatenate([np.asarray(s.anchor_classes, np.int64) for s in self.samplers])

    def sample(self, batch: int, gen: np.random.Generator) -> Bags:
        return stack(self.draw(batch, gen), self.bag)

    def draw(self, batch: int, gen: np.random.Generator) -> list:
        """Each bag's sampler drawn by weight; the step's ``knn`` bags searched for together: one matrix
        product a sampler, over the span of its own rows and masked to them, and one copy from the device a
        step, where a bag at a time cost a search, a copy of the sampler's rows and a copy back each (on the
        CPU one product of many queries reads the rows once)."""
        chosen = [self.samplers[int(i)] for i in gen.choice(len(self.samplers), size=batch, p=self.weights)]
        plans = [s.plan(gen) for s in chosen]
        knn = [(s, p) for s, p in zip(chosen, plans) if p is not None]
        near = None
        if knn:  # one search a sampler (Labelled.nearest_rows), all copied back at once
            found = torch.zeros((len(knn), self.bag), dtype=torch.long, device=knn[0][0].x.device)
            for s in {id(s): s for s, _ in knn}.values():
                at = [i for i, (t, _) in enumerate(knn) if t is s]
                found[at, :s.bag] = s.nearest_rows([knn[i][1][1] for i in at])
            near = iter(found.cpu().numpy())
        return [s.realise(p, None if p is None else next(near)[:s.bag], gen) for s, p in zip(chosen, plans)]


def split_classes(labels: np.ndarray, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Classes for training and for validation, disjoint (never the same class in both)."""
    classes = np.unique(np.asarray(labels)[np.asarray(labels) >= 0])
    if len(classes) < 2:
        raise ValueError("at least two classes are needed to hold some out for validation")
    gen = np.random.default_rng(seed)
    classes = gen.permutation(classes)
    n_val = min(len(classes) - 1, max(1, int(round(held_out * len(classes)))))
    return np.sort(classes[n_val:]), np.sort(classes[:n_val])
