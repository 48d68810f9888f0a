"""K-Means (registry key ``kmeans``, shown as "K-Means"): thousands of clusters on unit vectors,
in torch (CPU or CUDA).

Plain Lloyd compares every point with every centroid in every iteration (at 203k x 12,000 x 512,
about 17 s per iteration on two cores). After the first full assignment, points only move between
neighbouring centroids, so each later iteration compares a point only with the ``neighbours``
centroids nearest to its current one (a centroid k-NN graph rebuilt every iteration): the
candidate set of a cluster is shared by all its points, so the work is one small matrix product
per cluster. Full assignments run until fewer than ``full_until`` of the points change cluster in
an iteration; iterations stop when fewer than ``tol`` of them change.

Initialisation is greedy k-means++ (scikit-learn's: 2 + log k candidates per centre, the one that
lowers the potential most is kept) when k is small enough for its k sequential passes over the
data to be cheap, else k random rows; ``n_init`` restarts keep the lowest objective. The
``"auto"`` defaults were chosen by measurement (bench/cluster.py, bench/RESULTS.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from core.cluster.base import Checkpoint, ClusterContext, Clustering, Method, Progress, as_vectors, check_k
from core.safeload import tensor_to_numpy

# "auto" settings: k-means++, 10 restarts and up to 100 iterations while one pass (n x k x D
# multiply-adds) is below SMALL; above it one random start and 20 iterations (k = 12,000 at 203k
# rows must stay within 90 s on two cores).
SMALL = 2e9
PP_MAX_K = 512


@dataclass
class KMeansResult:
    labels: np.ndarray  # (N,) int32
    centroids: np.ndarray  # (k, D) float32
    objective: list[float] = field(default_factory=list)  # sum of squared distances, per iteration
    changed: list[int] = field(default_factory=list)
    seconds: float = 0.0
    iterations: int = 0


def _chunks(n: int, size: int):
    for s in range(0, n, size):
        yield s, min(s + size, n)


def full_assign(x: torch.Tensor, c: torch.Tensor, chunk: int = 4096, faiss_on_cpu: bool = True
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest centroid of every row and the squared distance (FAISS on CPU: its fused
    GEMM + argmin is about 4x faster than the torch equivalent; torch on CUDA)."""
    if x.device.type == "cpu" and faiss_on_cpu:
        import faiss

        d, i = faiss.knn(x.numpy(), c.numpy(), 1)
        return torch.from_numpy(i[:, 0].astype(np.int64)), torch.from_numpy(d[:, 0]).clamp_min(0)
    half = 0.5 * (c * c).sum(1)
    labels = torch.empty(len(x), dtype=torch.int64, device=x.device)
    dist = torch.empty(len(x), dtype=x.dtype, device=x.device)
    xn = (x * x).sum(1)
    for s, e in _chunks(len(x), chunk):
        score = x[s:e] @ c.T - half
        best, idx = score.max(1)
        labels[s:e] = idx
        dist[s:e] = xn[s:e] - 2 * best
    return labels, dist.clamp_min(0)


def update_centroids(x: torch.Tensor, labels: torch.Tensor, old: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    k = len(old)
    sums = torch.zeros_like(old).index_add_(0, labels, x)
    counts = torch.bincount(labels, minlength=k).to(x.dtype)
    new = sums / counts.clamp_min(1)[:, None]
    empty = counts == 0
    new[empty] = old[empty]  # an empty cluster keeps its centroid
    return new, counts


def centroid_neighbours(c: torch.Tensor, m: int, chunk: int = 2048) -> torch.Tensor:
    """(k, m) the m centroids nearest each centroid (itself first)."""
    m = min(m, len(c))
    half = 0.5 * (c * c).sum(1)
    out = torch.empty((len(c), m), dtype=torch.int64, device=c.device)
    for s, e in _chunks(len(c), chunk):
        score = c[s:e] @ c.T - half
        score[torch.arange(e - s, device=c.device), torch.arange(s, e, device=c.device)] = float("inf")
        out[s:e] = score.topk(m, dim=1).indices
    return out


def restricted_assign(x: torch.Tensor, c: torch.Tensor, labels: torch.Tensor, nbr: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """Reassign each point among the neighbours of its current centroid."""
    half = 0.5 * (c * c).sum(1)
    order = torch.argsort(labels)
    counts = torch.bincount(labels, minlength=len(c)).tolist()
    xs = x[order]
    new = torch.empty_like(labels)
    best_all = torch.empty(len(x), dtype=x.dtype, device=x.device)
    start = 0
    for cl, cnt in enumerate(counts):
        if cnt == 0:
            continue
        cand = nbr[cl]
        score = xs[start:start + cnt] @ c[cand].T - half[cand]
        best, idx = score.max(1)
        new[start:start + cnt] = cand[idx]
        best_all[start:start + cnt] = best
        start += cnt
    labels_out = torch.empty_like(labels)
    labels_out[order] = new
    dist = torch.empty_like(best_all)
    dist[order] = (xs * xs).sum(1) - 2 * best_all
    return labels_out, dist.clamp_min(0)


def kmeans_pp(x: torch.Tensor, k: int, gen: np.random.Generator, trials: int | None = None) -> torch.Tensor:
    """Indices of k rows chosen by greedy k-means++; duplicates of a chosen row are never chosen
    while distinct rows remain (when fewer than k distinct rows exist, the rest are random)."""
    n = len(x)
    trials = trials or 2 + int(np.log(k))
    xn = (x * x).sum(1)

    eps = 1e-6 * float(xn.mean()) + 1e-12  # below this a distance is rounding: the rows coincide

    def dist_to(rows: torch.Tensor) -> torch.Tensor:  # (n, len(rows)) squared distances
        d = xn[:, None] - 2 * x @ x[rows].T + xn[rows][None]
        return torch.where(d < eps, torch.zeros_like(d), d)

    chosen = [int(gen.integers(n))]
    d2 = dist_to(torch.tensor(chosen, device=x.device))[:, 0]
    for _ in range(1, k):
        pot = float(d2.sum())
        if pot <= 0:  # every row coincides with a centre: no distinct row is left
            rest = np.setdiff1d(np.arange(n), chosen)
            chosen += gen.choice(rest, k - len(chosen), replace=False).tolist()
            break
        cum = torch.cumsum(d2.double(), 0)
        r = torch.from_numpy(gen.random(trials) * float(cum[-1])).to(x.device)
        cand = torch.searchsorted(cum, r).clamp_max(n - 1)
        new = torch.minimum(d2[:, None], dist_to(cand))
        best = int(new.sum(0).argmin())
        chosen.append(int(cand[best]))
        d2 = new[:, best]
    return torch.tensor(chosen, device=x.device)


@dataclass
class _Run:
    """One start in progress: what a checkpoint holds to resume it."""

    centroids: torch.Tensor
    labels: torch.Tensor | None = None
    iteration: int = 0
    full: bool = True  # still comparing every point with every centroid
    objective: list[float] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)


def _lloyd(xt: torch.Tensor, run: _Run, niter: int, neighbours: int, tol: float, full_until: float,
           after: Callable[[_Run], None]) -> _Run:
    """Lloyd iterations from ``run`` (a fresh start, or a resumed one) until ``niter`` iterations
    or fewer than ``tol`` of the points change; ``after(run)`` follows each assignment."""
    n = len(xt)
    if run.labels is None:
        run.labels, dist = full_assign(xt, run.centroids)
        run.objective, run.changed = [float(dist.sum())], [n]
        after(run)
    while run.iteration < niter and run.changed[-1] > tol * n:
        c, _ = update_centroids(xt, run.labels, run.centroids)
        if run.full or len(c) <= 2 * neighbours:  # early on centroids move far: compare with all of them
            new, dist = full_assign(xt, c)
        else:
            new, dist = restricted_assign(xt, c, run.labels, centroid_neighbours(c, neighbours))
        changed = int((new != run.labels).sum())
        run.centroids, run.labels, run.iteration = c, new, run.iteration + 1
        run.objective.append(float(dist.sum()))
        run.changed.append(changed)
        run.full = run.full and changed > full_until * n
        after(run)
    run.centroids, _ = update_centroids(xt, run.labels, run.centroids)
    return run


def resolve(n: int, k: int, dim: int, init: str, n_init: int | str, niter: int | str) -> tuple[str, int, int]:
    small = n * k * dim <= SMALL
    if init == "auto":
        init = "k-means++" if small and k <= PP_MAX_K else "random"
    if init not in ("k-means++", "random"):
        raise ValueError(f"init must be 'k-means++', 'random' or 'auto', got {init!r}")
    n_init = (10 if small else 1) if n_init == "auto" else int(n_init)
    niter = (100 if small else 20) if niter == "auto" else int(niter)
    if n_init < 1 or niter < 0:
        raise ValueError(f"n_init must be >= 1 and niter >= 0, got {n_init} and {niter}")
    return init, n_init, niter


def kmeans(x: np.ndarray, k: int, niter: int | str = "auto", seed: int = 0, device: str = "cpu",
           neighbours: int = 64, tol: float = 1e-3, full_until: float = 0.05, init: str = "auto",
           n_init: int | str = "auto", progress: Progress | None = None, checkpoint: Checkpoint | None = None
           ) -> KMeansResult:
    """Cluster the rows of ``x`` into ``k`` clusters, keeping the best of ``n_init`` starts;
    ``progress(step, total, {"restart", "iteration", "objective", "changed"})``."""
    x_np = as_vectors(x)
    n = len(x_np)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of rows ({n}), got {k}")
    init, n_init, niter = resolve(n, k, x_np.shape[1], init, n_init, niter)
    t0 = time.perf_counter()
    xt = torch.from_numpy(x_np).to(device)
    gen = np.random.default_rng(seed)
    state = checkpoint.load() if checkpoint else None
    best: KMeansResult | None = None
    if state and state["best"] is not None:  # stored as plain data (tensors, lists): see core.safeload
        best = KMeansResult(**{key: tensor_to_numpy(v) for key, v in state["best"].items()})
    for r in range(n_init):
        # every start is drawn from the generator in turn, so a resumed run draws the same ones
        rows = kmeans_pp(xt, k, gen) if init == "k-means++" else \
            torch.from_numpy(np.sort(gen.choice(n, k, replace=False))).to(device)
        if state and r < state["restart"]:
            continue
        if state and r == state["restart"] and state["run"] is not None:
            run = _Run(**{key: v.to(device) if isinstance(v, torch.Tensor) else v for key, v in state["run"].items()})
        else:
            run = _Run(xt[rows].clone())

        def after(run: _Run, r: int = r) -> None:
            if progress:
                progress(r * niter + run.iteration, n_init * niter, {
                    "restart": r, "iteration": run.iteration, "objective": run.objective[-1],
                    "changed": run.changed[-1]})
            if checkpoint:
                checkpoint.save({"restart": r, "best": best, "run": {
                    **vars(run), "centroids": run.centroids.cpu(), "labels": run.labels.cpu()}})

        run = _lloyd(xt, run, niter, neighbours, tol, full_until, after)
        res = KMeansResult(run.labels.cpu().numpy().astype(np.int32), run.centroids.cpu().numpy().astype(np.float32),
                           run.objective, run.changed, iterations=run.iteration)
        if best is None or res.objective[-1] < best.objective[-1]:
            best = res
        state = None
        if checkpoint and r + 1 < n_init:
            checkpoint.save({"restart": r + 1, "best": best, "run": None})
    assert best is not None
    best.seconds = time.perf_counter() - t0
    return best


def objective(x: np.ndarray, labels: np.ndarray, centroids: np.ndarray) -> float:
    """Sum of squared distances of rows to their centroids."""
    d = np.asarray(x, np.float64) - np.asarray(centroids, np.float64)[labels]
    return float((d * d).sum())


DEFAULTS = {"niter": "auto", "init": "auto", "n_init": "auto", "neighbours": 64, "tol": 1e-3, "full_until": 0.05,
            "sample": "auto"}
SAMPLE = 1_000_000  # "auto": larger corpora are fitted on this many rows, then every row is assigned


def assign_all(x, centroids: np.ndarray, block: int = 262_144, device: str = "cpu", faiss_on_cpu: bool = True
               ) -> tuple[np.ndarray, float]:
    """Nearest centroid of every row of ``x`` (an array or a memory-mapped fp16 store), in blocks:
    (labels, sum of squared distances). Never holds more than one block in float32. Each block goes
    through :func:`full_assign` on ``device``: FAISS on the CPU, torch on CUDA with the centroids kept
    there (so a GPU box needs no faiss for the last pass of a sampled fit)."""
    ct = torch.from_numpy(np.ascontiguousarray(centroids, np.float32)).to(device)
    labels, total = np.empty(len(x), np.int32), 0.0
    for s in range(0, len(x), block):
        xt = torch.from_numpy(np.ascontiguousarray(x[s:s + block], np.float32)).to(device)
        i, d = full_assign(xt, ct, faiss_on_cpu=faiss_on_cpu)
        labels[s:s + block] = i.cpu().numpy()
        total += float(d.double().sum())
    return labels, total


def fit(ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
        progress: Progress | None = None, **params) -> Clustering:
    p = METHOD.params(params)
    k = check_k(k, ctx.n, "K-Means")
    size = SAMPLE if p["sample"] == "auto" else int(p["sample"])
    rows = None
    if 0 < size < ctx.n and size >= k:  # fit on a sample (seeded), assign every row after
        rows = np.sort(np.random.default_rng(seed).choice(ctx.n, size, replace=False))
        x = as_vectors(np.concatenate([np.asarray(ctx.vectors[rows[s:s + 262_144]], np.float32)
                                       for s in range(0, size, 262_144)]))
    else:
        x = as_vectors(ctx.vectors)
    p["init"], p["n_init"], p["niter"] = resolve(len(x), k, x.shape[1], p["init"], p["n_init"], p["niter"])
    ck = Checkpoint(ctx.checkpoint, {"method": "kmeans", "k": k, "seed": seed, "params": p, "shape": x.shape})
    settings = {key: v for key, v in p.items() if key != "sample"}
    r = kmeans(x, k, seed=seed, device=device, progress=progress, checkpoint=ck, **settings)
    ck.clear()
    history = [{"iteration": i, "objective": o, "changed": c} for i, (o, c) in enumerate(zip(r.objective, r.changed))]
    labels = r.labels
    if rows is not None:
        t0 = time.perf_counter()
        labels, total = assign_all(ctx.vectors, r.centroids, device=device)
        r.seconds += time.perf_counter() - t0
        history.append({"assigned_rows": ctx.n, "fitted_on": len(rows), "objective": total})
    p["sample"] = len(rows) if rows is not None else 0
    return Clustering(labels, r.centroids, "kmeans", k, p, history, r.seconds, seed, device)


LIMITS = {"niter": (0, 100_000), "n_init": (1, 1000), "neighbours": (1, 100_000), "tol": (0.0, 1.0),
          "full_until": (0.0, 1.0), "sample": (0, 1_000_000_000), "init": frozenset({"auto", "k-means++", "random"})}

METHOD = Method("kmeans", "K-Means", "Lloyd's K-Means on the embeddings (k-means++ starts and restarts for "
                "small k; neighbour-restricted assignment for thousands of clusters); above a million rows fitted "
                "on a sample of `sample` rows, then every row assigned.", fit, DEFAULTS, limits=LIMITS)
