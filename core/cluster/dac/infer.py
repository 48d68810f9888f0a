"""Using a trained anchored-filtering model: one anchor's (or a set's) cluster within its bag, and two
ways to cluster a whole corpus with it.

- :func:`members`: the bag is the anchors' ``bag`` nearest rows (cosine to their mean, plus each
  anchor's own neighbours); returns every bag row with its membership probability.
- :func:`iterative` (the study's procedure): an anchor drawn among the unclustered rows, its bag among
  the unclustered rows, the rows with p > threshold become a cluster and leave; repeat.
- :func:`consensus` (the study's proposed improvement): many anchors, each with its predicted members
  (a sparse anchors x rows matrix of probabilities, the co-membership graph); anchors whose
  membership vectors agree (cosine) are joined by average linkage while their mean agreement stays
  above ``agreement``; each group of anchors is a cluster, and each row joins the cluster whose
  anchors give it the highest mean probability. (Joining anchors that predict each other, as
  connected components, chained toy topics together: NMI 0.37 where this gives 0.9+.)

- :func:`grown` (issue 31): the iterative procedure with clusters that outgrow the bag: an anchor's
  predicted members become the anchors of the next bag (:func:`grow`), until nothing new joins. With a
  perfect membership oracle the study's procedure reaches NMI 0.52 on AgNews's unseen half (a cluster
  can never hold more than its bag) where growing reaches 0.99. Growth steps use a stricter cut than
  the first bag (``grow_cut``) so a cluster does not chain into its neighbours.

- :func:`merged` (issue 31): over-cluster with K-Means into many micro-clusters, then let the model
  decide which merge: each cluster's rows anchor a bag of samples of its nearest clusters, a cluster's
  affinity to another is the mean membership of that one's sampled rows, and pairs that claim each
  other (both ways above the cut) merge, best first, round after round, until none do. Clusters are
  never capped by the bag: a bag holds samples of clusters, not whole clusters.

- :func:`chosen` (issue 31, k unknown): K-Means at each candidate k, each clustering judged by the model
  (:func:`separation`: bags of one anchor; a cluster that mixes topics leaves many of its own rows
  unclaimed, one split off a topic has a neighbour whose rows are claimed); the best judged k wins. The
  clusters are K-Means's; the model decides how many.

All dissolve clusters smaller than ``min_size`` into their rows' next best cluster, and find the
number of clusters themselves.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from core.cluster.dac.model import ANCHOR, NON_MEMBER, UNKNOWN, AnchoredFilter
from core.cluster.base import torch_rows
from core.rows import rows_without
from core.progress import Progress



def _device(model: AnchoredFilter) -> torch.device:
    return next(model.parameters()).device


def as_tensor(x, model: AnchoredFilter) -> torch.Tensor:
    """The rows on the model's device (shared, not copied, on the CPU)."""
    return torch_rows(x, str(_device(model)))


@torch.no_grad()
def predict(model: AnchoredFilter, x: torch.Tensor, bags: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Membership probability of every row of each bag [(rows, roles), ...] (padded into one batch)."""
    size = max(len(r) for r, _ in bags)
    dev = x.device
    rows = torch.zeros(len(bags), size, dtype=torch.long, device=dev)
    role = torch.zeros(len(bags), size, dtype=torch.long, device=dev)
    mask = torch.zeros(len(bags), size, dtype=torch.bool, device=dev)
    for i, (r, ro) in enumerate(bags):
        rows[i, :len(r)] = torch.as_tensor(r, device=dev)
        role[i, :len(r)] = torch.as_tensor(ro, device=dev)
        mask[i, :len(r)] = True
    p = torch.sigmoid(model(x[rows], mask, role)).cpu().numpy()
    return [p[i, :len(r)] for i, (r, _) in enumerate(bags)]


def neighbourhood(x: torch.Tensor, anchors: np.ndarray, size: int, *, avoid: np.ndarray | None = None,
                  available: torch.Tensor | None = None) -> np.ndarray:
    """Up to ``size`` rows near the anchors, anchors not included: half by cosine to the anchors'
    mean, the rest taken in turn from each anchor's own nearest rows (so a topic with several
    sides is seen from each). ``avoid``: rows never taken; ``available``: (N,) bool, rows that may be taken."""
    n = len(x)
    ok = torch.ones(n, dtype=torch.bool, device=x.device) if available is None else available.clone()
    ok[torch.as_tensor(anchors, device=x.device)] = False
    if avoid is not None and len(avoid):
        ok[torch.as_tensor(avoid, device=x.device)] = False
    free = int(ok.sum())
    size = min(size, free)
    if size <= 0:
        return np.zeros(0, np.int64)
    a = x[torch.as_tensor(anchors, device=x.device)]
    centre = a.mean(0)
    s = x @ centre
    s[~ok] = -np.inf
    picked = s.topk(max(1, size // 2 if len(anchors) > 1 else size)).indices
    if len(anchors) > 1 and size > len(picked):
        ok[picked] = False
        per = x @ a[:64].T  # (N, A) each anchor's similarities (at most 64 anchors)
        per[~ok] = -np.inf
        want = size - len(picked)
        depth = min(int(ok.sum()), -(-want // per.shape[1]) + 1)
        top = per.topk(depth, dim=0).indices.T.reshape(-1)  # round robin: anchor 1's best, anchor 2's best, ...
        top = top[torch.sort(torch.arange(len(top), device=x.device) % depth, stable=True).indices]
        seen = set(picked.tolist())
        out = [r for r in dict.fromkeys(top.tolist()) if r not in seen][:want]  # first sightings, in turn
        picked = torch.cat([picked, torch.as_tensor(out, dtype=torch.long, device=x.device)])
    return picked.cpu().numpy().astype(np.int64)


def members(model: AnchoredFilter, x, anchors, *, bag: int = 800, non_members=(), max_anchors: int = 64,
            max_known: int = 64, seed: int = 0, available: torch.Tensor | None = None,
            candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the anchors' bag (anchors and known non-members left out) and their membership
    probability, best first. At most ``max_anchors`` anchors and ``max_known`` known non-members
    (those nearest the anchors) go into the bag; ``bag`` counts every row in it. ``candidates``: the
    unlabelled rows of the bag, given (another ranker's best, in any order) instead of the anchors'
    neighbourhood; ``bag`` does not cap them."""
    x = as_tensor(x, model)
    gen = np.random.default_rng(seed)
    anchors = np.unique(np.asarray(anchors, np.int64))
    if len(anchors) == 0:
        raise ValueError("at least one anchor is needed")
    non_members = np.setdiff1d(np.asarray(non_members, np.int64), anchors)
    a = anchors if len(anchors) <= max_anchors else np.sort(gen.choice(anchors, max_anchors, replace=False))
    known = non_members
    if len(known) > max_known:
        sim = (x[torch.as_tensor(known, device=x.device)] @ x[torch.as_tensor(a, device=x.device)].mean(0)).cpu().numpy()
        known = known[np.argsort(-sim)[:max_known]]
    if candidates is None:
        cand = neighbourhood(x, a, max(0, bag - len(a) - len(known)), avoid=np.concatenate([anchors, non_members]),
                             available=available)
    else:
        cand = rows_without(candidates, np.concatenate([anchors, non_members]))
        if len(cand) == 0:
            return cand, np.zeros(0, np.float32)
    rows = np.concatenate([a, known, cand])
    role = np.concatenate([np.full(len(a), ANCHOR), np.full(len(known), NON_MEMBER), np.full(len(cand), UNKNOWN)])
    p = predict(model, x, [(rows, role)])[0][len(a) + len(known):]
    order = np.argsort(-p, kind="stable")
    return cand[order], p[order].astype(np.float32)


def _centres(x: torch.Tensor, groups: list[np.ndarray]) -> torch.Tensor:
    """The unit-length mean of each group's rows (k, D)."""
    means = torch.stack([x[torch.as_tensor(g, device=x.device)].mean(0) for g in groups])
    return torch.nn.functional.normalize(means, dim=-1)


def _dissolve_small(labels: np.ndarray, x: torch.Tensor, min_size: int) -> np.ndarray:
    """Clusters with fewer than ``min_size`` rows give their rows to the nearest remaining
    cluster's centroid; labels renumbered 0..k-1 by size (largest first)."""
    labels = labels.copy()
    sizes = np.bincount(labels)
    big = np.flatnonzero(sizes >= min_size)
    if len(big) == 0:
        big = np.array([int(np.argmax(sizes))])
    small_rows = np.flatnonzero(~np.isin(labels, big))
    if len(small_rows):
        cent = torch.stack([x[torch.as_tensor(np.flatnonzero(labels == c), device=x.device)].mean(0) for c in big])
        near = (x[torch.as_tensor(small_rows, device=x.device)] @ cent.T).argmax(1).cpu().numpy()
        labels[small_rows] = big[near]
    order = np.argsort(-np.bincount(labels, minlength=labels.max() + 1), kind="stable")
    remap = np.empty(len(order), np.int64)
    remap[order] = np.arange(len(order))
    return remap[labels].astype(np.int32)


def _anchor_remove_repeat(x: torch.Tensor, cluster_of, min_size: int, seed: int, progress: Progress | None
                          ) -> tuple[np.ndarray, dict]:
    """An anchor drawn among the unclustered rows, its cluster (``cluster_of(anchor, k, free)`` ->
    (rows, rounds)) taken among the unclustered rows and removed; repeat until every row is taken."""
    t0 = time.perf_counter()
    n = len(x)
    gen = np.random.default_rng(seed)
    labels = np.full(n, -1, np.int64)
    free = torch.ones(n, dtype=torch.bool, device=x.device)
    k, rounds = 0, 0
    while (left := int(free.sum())) > 0:
        pool = torch.nonzero(free).squeeze(1).cpu().numpy()
        a = int(pool[gen.integers(len(pool))])
        free[a] = False
        take, r = cluster_of(a, k, free)
        labels[take] = k
        free[torch.as_tensor(take, device=x.device)] = False
        k, rounds = k + 1, rounds + r
        if progress:
            progress(n - left + len(take), n, {"clusters": k})
    out = _dissolve_small(labels, x, min_size)
    # each anchor gave one cluster before the merge of the small ones
    return out, {"anchors": k, "rounds": rounds, "seconds": time.perf_counter() - t0}


def iterative(model: AnchoredFilter, x, *, bag: int = 800, threshold: float = 0.5, min_size: int = 5,
              seed: int = 0, progress: Progress | None = None) -> tuple[np.ndarray, dict]:
    """The study's procedure; returns (labels, info with the number of anchors used and seconds)."""
    x = as_tensor(x, model)

    def one_bag(a: int, k: int, free: torch.Tensor) -> tuple[np.ndarray, int]:
        cand, p = members(model, x, [a], bag=bag, seed=seed + k, available=free)
        return np.concatenate([[a], cand[p > threshold]]), 1

    return _anchor_remove_repeat(x, one_bag, min_size, seed, progress)


def grow(model: AnchoredFilter, x, anchors, *, bag: int = 800, cut: float = 0.5, grow_cut: float | None = None,
         non_members=(), max_rounds: int = 50, max_anchors: int = 8, reject: bool = True, seed: int = 0,
         available: torch.Tensor | None = None) -> tuple[np.ndarray, dict]:
    """The anchors' cluster, grown past one bag: the rows of the anchors' bag with p > ``cut`` join,
    then (with p > ``grow_cut``, default ``cut``) the rows of the bag around the cluster so far, the
    cluster's members its anchors (``max_anchors`` sampled each round: as many as training showed the
    model); until a round adds nothing or ``max_rounds``. ``reject``: rows a round scored below
    ``cut / 2`` go into later bags as known non-members (on twelve toy topics, without it the clusters
    chained into 6, NMI 0.69; with it 13, NMI 0.91, where the study's procedure gave 0.88). Returns the
    cluster's rows (anchors included, sorted) and {"rounds", "added"}."""
    x = as_tensor(x, model)
    group = np.unique(np.asarray(anchors, np.int64))
    if len(group) == 0:
        raise ValueError("at least one anchor is needed")
    grow_cut = cut if grow_cut is None else grow_cut
    rejected = np.asarray(non_members, np.int64)
    added = []
    for r in range(max_rounds):
        cand, p = members(model, x, group, bag=bag, non_members=rejected, seed=seed + r, available=available,
                          max_anchors=max_anchors)
        new = cand[p > (cut if r == 0 else grow_cut)]
        added.append(int(len(new)))
        if not len(new):
            break
        group = np.union1d(group, new)
        if reject:  # rows the cluster's bag clearly left out are its known non-members from now on
            rejected = np.union1d(rejected, cand[p < cut / 2])
    return group, {"rounds": len(added), "added": added}


def grown(model: AnchoredFilter, x, *, bag: int = 800, threshold: float = 0.5, grow_cut: float | None = None,
          reject: bool = True, min_size: int = 5, max_rounds: int = 50, seed: int = 0, progress: Progress | None = None
          ) -> tuple[np.ndarray, dict]:
    """The iterative procedure with growing clusters: an anchor drawn among the unclustered rows, its
    cluster grown (:func:`grow`) among the unclustered rows, removed; repeat. Returns (labels, info)."""
    x = as_tensor(x, model)

    def grown_from(a: int, k: int, free: torch.Tensor) -> tuple[np.ndarray, int]:
        group, info = grow(model, x, [a], bag=bag, cut=threshold, grow_cut=grow_cut, max_rounds=max_rounds,
                           reject=reject, seed=seed + k, available=free)
        return group, info["rounds"]

    return _anchor_remove_repeat(x, grown_from, min_size, seed, progress)


# Long (~60 lines) on purpose: one algorithm (anchors, co-membership, linkage, assignment) read top to
# bottom as in its description; splitting it would scatter its shared arrays across helpers.
def consensus(model: AnchoredFilter, x, *, anchors: int = 2000, bag: int = 800, threshold: float = 0.5,
              agreement: float = 0.2, min_size: int = 5, batch: int = 16, seed: int = 0,
              progress: Progress | None = None
              ) -> tuple[np.ndarray, dict]:
    """Consensus of many anchors' predictions; returns (labels, info)."""
    from scipy import sparse
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    t0 = time.perf_counter()
    x = as_tensor(x, model)
    n = len(x)
    gen = np.random.default_rng(seed)
    picked = np.sort(gen.choice(n, min(anchors, n), replace=False))
    ri, ci, vi = [], [], []  # (anchor index, row, probability)
    for s in range(0, len(picked), batch):
        chunk = picked[s:s + batch]
        bags = []
        for a in chunk:
            cand = neighbourhood(x, np.array([a]), bag - 1)
            bags.append((np.concatenate([[a], cand]), np.concatenate([[ANCHOR], np.full(len(cand), UNKNOWN)])))
        for j, (p, (rows, _)) in enumerate(zip(predict(model, x, bags), bags)):
            p = p.copy()
            p[0] = 1.0  # the anchor itself
            ri.append(np.full(len(rows), s + j))
            ci.append(rows)
            vi.append(p)
        if progress:
            progress(min(s + batch, len(picked)), len(picked), {"phase": "anchors"})
    P = sparse.csr_matrix((np.concatenate(vi), (np.concatenate(ri), np.concatenate(ci))), shape=(len(picked), n))
    # anchors agree when they predict the same members: cosine of their membership vectors;
    # average linkage (robust to a few wrong predictions, which single links chain through)
    # joins anchors while their mean agreement stays above ``agreement``
    votes = P.multiply(P > threshold).tocsr()  # each anchor's predicted members
    norms = np.sqrt(np.asarray(votes.multiply(votes).sum(1)).ravel()) + 1e-12
    pn = sparse.diags(1.0 / norms) @ votes
    sim = (pn @ pn.T).toarray()
    dist = np.clip(1.0 - sim, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    if len(picked) > 1:
        tree = linkage(squareform(dist, checks=False), method="average")
        comp = fcluster(tree, t=1.0 - agreement, criterion="distance") - 1
    else:
        comp = np.zeros(1, np.int64)
    ncomp = int(comp.max()) + 1
    # each row joins the group of anchors that gives it the highest mean probability
    m = sparse.csr_matrix((np.ones(len(picked)), (np.arange(len(picked)), comp)), shape=(len(picked), ncomp))
    m = m.multiply(1.0 / np.asarray(m.sum(0)).ravel()).tocsc()
    score = np.asarray((P.T @ m).todense())  # (n, ncomp)
    labels = score.argmax(1).astype(np.int64)
    unseen = np.flatnonzero(score.max(1) <= 0)
    if len(unseen):  # rows in no anchor's bag: their nearest anchor's group
        near = (x[torch.as_tensor(unseen, device=x.device)] @ x[torch.as_tensor(picked, device=x.device)].T).argmax(1)
        labels[unseen] = comp[near.cpu().numpy()]
    labels[picked] = comp
    out = _dissolve_small(labels, x, min_size)
    return out, {"anchors": len(picked), "clusters_before_merge": int(ncomp), "unseen_rows": int(len(unseen)),
                 "seconds": time.perf_counter() - t0}


def _merge_bags(x: torch.Tensor, groups: list[np.ndarray], cent: torch.Tensor, bag: int, anchors: int, per: int,
                gen: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For each cluster: (rows, roles, which cluster each row was sampled from): ``anchors`` of its rows
    as anchors, ``per`` more of its own rows, and ``per`` rows of each of its nearest clusters by centroid,
    as many as the bag holds."""
    sims = (cent @ cent.T).cpu().numpy()
    out = []
    for c, g in enumerate(groups):
        a = gen.choice(g, min(anchors, len(g)), replace=False)
        rest = np.setdiff1d(g, a)
        own = gen.choice(rest, min(per, len(rest)), replace=False) if len(rest) else np.zeros(0, np.int64)
        rows, src = [own], [np.full(len(own), c)]
        room = bag - len(a) - len(own)
        for d in np.argsort(-sims[c], kind="stable"):
            if d == c:
                continue
            take = min(per, len(groups[d]), room)
            if take <= 0:
                break
            rows.append(gen.choice(groups[d], take, replace=False))
            src.append(np.full(take, d))
            room -= take
        r, sr = np.concatenate(rows).astype(np.int64), np.concatenate(src)
        out.append((np.concatenate([a, r]), np.concatenate([np.full(len(a), ANCHOR), np.full(len(r), UNKNOWN)]),
                    np.concatenate([np.full(len(a), -1), sr])))
    return out


# Long (~55 lines) on purpose: one algorithm (micro-clusters, rounds of bags, mutual claims, merges) read
# top to bottom as in its description.
def merged(model: AnchoredFilter, x, *, micro: int | None = None, bag: int = 800, threshold: float = 0.5,
           min_size: int = 5, anchors: int = 8, per: int = 20, max_rounds: int = 50, batch: int = 16, seed: int = 0,
           progress: Progress | None = None) -> tuple[np.ndarray, dict]:
    """Micro-clusters (K-Means, ``micro`` of them; by default one per 50 rows, 8 to 400) merged where
    the model says so (see the module's description); returns (labels, info)."""
    from sklearn.cluster import KMeans

    t0 = time.perf_counter()
    x = as_tensor(x, model)
    n = len(x)
    gen = np.random.default_rng(seed)
    k = int(micro or min(400, max(8, n // 50)))
    k = max(1, min(k, n))
    xn = x.detach().cpu().numpy().astype(np.float32, copy=False)
    lab = KMeans(k, n_init=1, random_state=seed).fit(xn).labels_
    groups = [np.flatnonzero(lab == c) for c in range(k) if (lab == c).any()]
    micro_found = len(groups)
    rounds, merges = 0, []
    while len(groups) > 1 and rounds < max_rounds:
        cent = _centres(x, groups)
        bags = _merge_bags(x, groups, cent, bag, anchors, per, gen)
        aff = np.zeros((len(groups), len(groups)), np.float32)
        for s in range(0, len(bags), batch):
            chunk = bags[s:s + batch]
            for c, p in zip(range(s, s + len(chunk)), predict(model, x, [(r, ro) for r, ro, _ in chunk])):
                src = chunk[c - s][2]
                judged = src >= 0
                sums = np.bincount(src[judged], weights=p[judged], minlength=len(groups))
                cnt = np.bincount(src[judged], minlength=len(groups))
                aff[c] = np.where(cnt > 0, sums / np.maximum(cnt, 1), 0.0)
        mutual = np.minimum(aff, aff.T)
        np.fill_diagonal(mutual, 0.0)
        i, j = np.triu_indices(len(groups), 1)
        order = np.argsort(-mutual[i, j], kind="stable")
        used, pairs = set(), []
        for o in order:
            a, b = int(i[o]), int(j[o])
            if mutual[a, b] <= threshold:
                break
            if a in used or b in used:
                continue
            used.update((a, b))
            pairs.append((a, b))
        rounds += 1
        merges.append(len(pairs))
        if progress:
            progress(rounds, max_rounds, {"phase": "merge", "clusters": len(groups) - len(pairs)})
        if not pairs:
            break
        joined = [np.concatenate([groups[a], groups[b]]) for a, b in pairs]
        groups = [g for c, g in enumerate(groups) if c not in used] + joined
    labels = np.empty(n, np.int64)
    for c, g in enumerate(groups):
        labels[g] = c
    out = _dissolve_small(labels, x, min_size)
    return out, {"micro_clusters": micro_found, "rounds": rounds, "merges": merges, "seconds": time.perf_counter() - t0}



# the candidates of ``chosen`` (and of bench.dac's silhouette k)
K_GRID = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40)


def anchors_per_cluster(sizes: np.ndarray, anchors: int, least: int = 3) -> np.ndarray:
    """``anchors`` bags shared among clusters by size, at least ``least`` each (never more than a
    cluster's rows): two clusters get many bags each, forty get a few, so every k is judged on
    about as many anchors."""
    sizes = np.asarray(sizes)
    return np.minimum(sizes, np.maximum(least, np.ceil(anchors * sizes / sizes.sum()).astype(np.int64)))


def _one_anchor_bags(groups: list[np.ndarray], cent: torch.Tensor, bag: int, per_cluster: np.ndarray, neighbours: int,
                     gen: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For each cluster, ``per_cluster[c]`` bags of ONE anchor each (rows, roles, source cluster; the
    anchor's source is -1): up to half the bag of the cluster's other rows, the rest in equal shares
    from its ``neighbours`` nearest clusters by centroid. One anchor, so a cluster that mixes two topics
    shows as rows of the cluster its anchor does not claim."""
    sims = (cent @ cent.T).cpu().numpy()
    out = []
    for c, g in enumerate(groups):
        near = [d for d in np.argsort(-sims[c], kind="stable") if d != c][:neighbours]
        for a in gen.choice(g, int(per_cluster[c]), replace=False):
            rest = g[g != a]
            own = gen.choice(rest, min(len(rest), (bag - 1) // 2), replace=False)
            share = (bag - 1 - len(own)) // max(1, len(near))
            rows, src = [own], [np.full(len(own), c)]
            for d in near:
                take = min(share, len(groups[d]))
                rows.append(gen.choice(groups[d], take, replace=False))
                src.append(np.full(take, d))
            r = np.concatenate(rows).astype(np.int64)
            out.append((np.concatenate([[a], r]), np.concatenate([[ANCHOR], np.full(len(r), UNKNOWN)]),
                        np.concatenate([[-1], np.concatenate(src)])))
    return out


def separation(model: AnchoredFilter, x, labels: np.ndarray, *, bag: int = 800, anchors: int = 64,
               neighbours: int = 5, batch: int = 16, seed: int = 0) -> dict:
    """How well the model tells a clustering's clusters apart, by its own memberships: for each cluster,
    bags of one anchor (:func:`_one_anchor_bags`; ``anchors`` bags in all, shared by size, at least 3 a
    cluster); ``own`` = the mean membership of the cluster's other rows, ``other`` = the highest mean
    membership of one neighbouring cluster's rows. A cluster that
    mixes topics has a low ``own``; one split off a topic has a high ``other``. ``score`` = the
    size-weighted mean of ``own - other`` (1 for clusters the model reproduces exactly), ``se`` its
    standard error over the bags."""
    x = as_tensor(x, model)
    gen = np.random.default_rng(seed)
    k = int(labels.max()) + 1
    groups = [np.flatnonzero(labels == c) for c in range(k)]
    groups = [g for g in groups if len(g) > 1]
    if len(groups) < 2:
        return {"score": 0.0, "own": 1.0, "other": 1.0, "se": 0.0, "clusters": len(groups)}
    cent = _centres(x, groups)
    per_cluster = anchors_per_cluster(np.array([len(g) for g in groups]), anchors)
    bags = _one_anchor_bags(groups, cent, bag, per_cluster, neighbours, gen)
    owner = np.repeat(np.arange(len(groups)), per_cluster)
    own_b = np.zeros(len(bags))
    other_b = np.zeros((len(bags), len(groups)))
    for s in range(0, len(bags), batch):
        chunk = bags[s:s + batch]
        probs = predict(model, x, [(r, ro) for r, ro, _ in chunk])
        for b, (_, _, src), p in zip(range(s, s + len(chunk)), chunk, probs):
            own = src == owner[b]
            own_b[b] = p[own].mean() if own.any() else 1.0
            other = (src >= 0) & ~own
            cnt = np.bincount(src[other], minlength=len(groups))
            other_b[b] = np.bincount(src[other], weights=p[other], minlength=len(groups)) / np.maximum(cnt, 1)
    w = np.array([len(g) for g in groups], np.float64) / sum(len(g) for g in groups)
    own_c, other_c, var_c = np.zeros(len(groups)), np.zeros(len(groups)), np.zeros(len(groups))
    for c in range(len(groups)):
        mine = owner == c
        worst = int(np.argmax(other_b[mine].mean(0)))  # the neighbour whose rows this cluster's anchors claim most
        v = own_b[mine] - other_b[mine, worst]
        own_c[c], other_c[c] = own_b[mine].mean(), other_b[mine, worst].mean()
        var_c[c] = v.var(ddof=1) / len(v) if len(v) > 1 else 0.0
    return {"score": float(w @ (own_c - other_c)), "own": float(w @ own_c), "other": float(w @ other_c),
            "se": float(np.sqrt(np.sum(w ** 2 * var_c))), "clusters": len(groups)}


def _kmeans(x: np.ndarray, k: int, seed: int, n_init: int, sample: int, device: str) -> np.ndarray:
    """The project's K-Means (core.cluster.kmeans, as the Topics page runs it): fitted on at most
    ``sample`` rows, every row assigned."""
    from core.cluster.base import ClusterContext
    from core.cluster.kmeans import METHOD as KMEANS

    return KMEANS.fit(ClusterContext(x), k, seed=seed, device=device, n_init=n_init, sample=sample).labels


# Long (~35 lines): candidates, their scores, the pick, the final fit, read in that order.
def chosen(model: AnchoredFilter, x, *, ks=K_GRID, bag: int = 800, threshold: float = 0.5, min_size: int = 5,
           anchors: int = 64, neighbours: int = 5, rule: str = "best", sample: int = 20_000, batch: int = 16,
           restarts: int = 1, seed: int = 0, progress: Progress | None = None) -> tuple[np.ndarray, dict]:
    """K-Means with the number of clusters the model chooses (issue 31: the competitors of a method
    that finds k are methods that find k): for each candidate k, a K-Means clustering (3 starts) is
    scored by :func:`separation`; ``rule`` ``best`` (default) takes the best score, ``1se`` the smallest
    k whose score is within one standard error of the best (the usual guard against a flat top; it chose
    too few clusters on StackOverflow and Biomedical subsets, bench/RESULTS.md). That k is fitted again
    with 10 starts. The clusters are K-Means's; what the model decides is how many. ``restarts`` > 1 scores
    that many K-Means clusterings (other seeds) at each k and averages (:func:`_averaged`): one K-Means
    run's local optimum and one draw of anchors are the noise in a k's score (measured on the four benchmarks:
    no gain on the whole, so 1 is the default; bench/RESULTS.md). ``threshold`` is not
    used (the score reads probabilities, not cuts); it is taken so every procedure has one signature."""
    if restarts < 1:
        raise ValueError(f"restarts must be at least 1, got {restarts}")
    _check_rule(rule)  # before any work
    t0 = time.perf_counter()
    x = as_tensor(x, model)
    n = len(x)
    xn = x.detach().cpu().numpy().astype(np.float32, copy=False)
    device = str(x.device)
    cands = sorted({int(k) for k in ks if 2 <= int(k) <= max(2, n // max(2, min_size))})
    if not cands or n < 4:
        return np.zeros(n, np.int32), {"chosen_k": 1, "scores": {}, "seconds": time.perf_counter() - t0}
    scores = {}
    for i, k in enumerate(cands):
        scores[k] = _averaged([separation(model, x, _kmeans(xn, k, seed + r, 3, sample, device), bag=bag,
                                          anchors=anchors, neighbours=neighbours, batch=batch, seed=seed + r)
                               for r in range(restarts)])
        if progress:
            progress(i + 1, len(cands) + 1, {"phase": "choose k", "k": k, "score": round(scores[k]["score"], 4)})
    best = pick_k(scores, rule)
    labels = kmeans_at(x, best, seed=seed, sample=sample, min_size=min_size)
    return labels, {"chosen_k": best, "best_scored_k": pick_k(scores, "best"), "rule": rule,
                    "scores": {str(k): {m: round(v, 4) for m, v in s.items()} for k, s in scores.items()},
                    "seconds": time.perf_counter() - t0}


def _averaged(runs: list[dict]) -> dict:
    """The mean of independent :func:`separation` results (score, own, other, clusters); the standard
    error of the mean score from theirs."""
    out = {m: float(np.mean([r[m] for r in runs])) for m in ("score", "own", "other")}
    out["clusters"] = int(round(np.mean([r["clusters"] for r in runs])))
    out["se"] = float(np.sqrt(sum(r["se"] ** 2 for r in runs)) / len(runs))
    return out


def _check_rule(rule: str) -> None:
    if rule not in ("best", "1se"):
        raise ValueError(f"rule must be 'best' or '1se', got {rule!r}")


def pick_k(scores: dict, rule: str = "best") -> int:
    """The k that ``rule`` takes from :func:`chosen`'s scores ({k: separation}; keys may be the strings of
    its info): ``best`` the best score, ``1se`` the smallest k within one standard error of it."""
    _check_rule(rule)
    scores = {int(k): v for k, v in scores.items()}
    top = max(sorted(scores), key=lambda k: scores[k]["score"])
    within = scores[top]["score"] - scores[top]["se"]
    return top if rule == "best" else min(k for k in scores if scores[k]["score"] >= within)


def kmeans_at(x: torch.Tensor, k: int, *, seed: int = 0, sample: int = 20_000, min_size: int = 5) -> np.ndarray:
    """:func:`chosen`'s final clustering at ``k``: K-Means with 10 starts, small clusters dissolved."""
    xn = x.detach().cpu().numpy().astype(np.float32, copy=False)
    return _dissolve_small(_kmeans(xn, k, seed, 10, sample, str(x.device)), x, min_size)
