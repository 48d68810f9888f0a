"""DEC (registry key ``dec``, shown as "DEC"): Deep Embedded Clustering, Xie, Girshick & Farhadi 2016.

On the corpus's frozen sentence embeddings: an autoencoder (MLP) is pretrained to reconstruct
them; K-Means in its latent space gives k centroids; then the encoder and the centroids are
trained together to sharpen the soft assignment

    q_ij = (1 + |z_i - mu_j|^2 / alpha)^-(alpha+1)/2, normalised over j   (Student's t, alpha = 1)

towards the target p_ij = (q_ij^2 / f_j) / sum_k (q_ik^2 / f_k), f_j = sum_i q_ij, refreshed from
the whole corpus every ``update_interval`` steps, by minimising KL(P || Q). Training stops when
fewer than ``tol`` of the labels change between two refreshes, or (``keep_k``, the default) at the
refresh that would leave one of the k clusters without a text: the sharpening moves texts out of
small clusters until they vanish (at the Topics page's first guess of k, 100 for 20,000 StackOverflow
titles, 20 to 33 of 100 clusters ended empty over six runs), and a user who asks for k topics should get k. The
clusters are then those of the refresh before. IDEC (:mod:`core.cluster.idec`) is the same loop with
the decoder kept and its reconstruction loss added.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import torch
from torch import nn

from core.cluster.base import Checkpoint, ClusterContext, Clustering, Method, Progress, as_vectors, check_k
from core.cluster.deep import Runner, adam, kl_to_target, seeded_fit, soft_assign, target_distribution


class AutoEncoder(nn.Module):
    """dim -> hidden... -> latent -> reversed(hidden)... -> dim, ReLU between layers."""

    def __init__(self, dim: int, hidden: Sequence[int], latent: int):
        super().__init__()
        sizes = [dim, *hidden, latent]
        self.encoder = self._mlp(sizes)
        self.decoder = self._mlp(sizes[::-1])

    @staticmethod
    def _mlp(sizes: Sequence[int]) -> nn.Sequential:
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # (B, dim) -> z (B, latent), x' (B, dim)
        z = self.encoder(x)
        return z, self.decoder(z)


DEFAULTS = {"hidden": (256,), "latent": 32, "pretrain_epochs": 20, "batch_size": 256, "lr": 1e-3,
            "cluster_lr": 1e-4, "update_interval": 100, "max_steps": 3000, "tol": 1e-3, "alpha": 1.0,
            "keep_k": True}


def _encode(model: AutoEncoder, x: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([model.encoder(x[s:s + chunk]) for s in range(0, len(x), chunk)])


class _Batches:
    """Shuffled mini-batches, epoch after epoch; its state (order, position) goes into checkpoints."""

    def __init__(self, n: int, size: int, gen: np.random.Generator, device: str,
                 order: torch.Tensor | None = None, pos: int = 0):
        self.n, self.size, self.gen, self.device = n, size, gen, device
        self.order = order.to(device) if order is not None else self._shuffle()
        self.pos = pos

    def _shuffle(self) -> torch.Tensor:
        return torch.from_numpy(self.gen.permutation(self.n)).to(self.device)

    def next(self) -> torch.Tensor:
        if self.pos >= self.n:
            self.order, self.pos = self._shuffle(), 0
        idx = self.order[self.pos:self.pos + self.size]
        self.pos += self.size
        return idx


def _pretrain(model: AutoEncoder, x: torch.Tensor, batches: _Batches, p: dict, report) -> None:
    """Train the autoencoder to reconstruct the embeddings (MSE), one report per epoch."""
    opt = adam(model.parameters(), lr=p["lr"])
    n = len(x)
    for epoch in range(p["pretrain_epochs"]):
        total_loss = 0.0
        for _ in range(0, n, batches.size):
            xb = x[batches.next()]
            loss = nn.functional.mse_loss(model(xb)[1], xb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item() * len(xb)
        report(epoch + 1, {"phase": "pretrain", "epoch": epoch + 1, "reconstruction": total_loss / n})


def _refresh(model: AutoEncoder, x: torch.Tensor, mu: torch.Tensor, alpha: float
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Soft assignment Q of every row and DEC's target P from it."""
    with torch.no_grad():
        q = soft_assign(_encode(model, x), mu, alpha)
        return q, target_distribution(q)


def _loss_summary(losses: list[float]) -> dict:
    """The loss minimised since the previous refresh (against a fixed target): its mean, and over
    its first and last quarter."""
    if not losses:
        return {}
    quarter = max(1, len(losses) // 4)
    return {"loss": float(np.mean(losses)), "loss_start": float(np.mean(losses[:quarter])),
            "loss_end": float(np.mean(losses[-quarter:]))}


def _standardised(vectors, device: str) -> torch.Tensor:
    """The rows standardised: unit vectors of dimension 384 have entries ~0.05, too small for MSE to
    train on."""
    x = as_vectors(vectors)
    return torch.from_numpy((x - x.mean(0)) / (x.std() + 1e-12)).to(device)


def _start(model: AutoEncoder, x: torch.Tensor, mu: nn.Parameter, k: int, p: dict, runner: Runner,
           seed: int) -> torch.Tensor:
    """A fresh fit's start: 1. pretrain the autoencoder (its epochs go into the runner's history and
    progress), 2. K-Means in its latent space gives the first centroids (into ``mu``); returns the
    K-Means labels."""
    from core.cluster.kmeans import kmeans

    _pretrain(model, x, _Batches(len(x), min(p["batch_size"], len(x)), runner.gen, runner.device), p, runner.before)
    km = kmeans(_encode(model, x).cpu().numpy(), k, seed=seed, device=runner.device)
    with torch.no_grad():
        mu.copy_(torch.from_numpy(km.centroids).to(runner.device))
    return torch.from_numpy(km.labels.astype(np.int64)).to(runner.device)


# Long (~65 lines with its nested record): the DEC loop (resume, the rounds of steps, the refresh record that
# decides when to stop) shares its state (labels, step, batches) between the loop and the record.
def train(ctx: ClusterContext, k: int | None, *, method: str, gamma: float | None, seed: int, device: str,
          progress: Progress | None, params: dict) -> Clustering:
    """DEC (``gamma`` None: clustering loss only) or IDEC (loss = gamma x KL + reconstruction):
    pretrain the autoencoder, K-Means in its latent space, then rounds of ``update_interval`` steps
    against a target refreshed between rounds, until fewer than ``tol`` of the labels change. One
    :class:`~core.cluster.deep.Runner` unit is one refresh (checkpointed, resumable)."""
    p = params
    k = check_k(k, ctx.n, method.upper())
    t0 = time.perf_counter()
    x = _standardised(ctx.vectors, device)
    n, bs = len(x), min(p["batch_size"], len(x))
    gen = np.random.default_rng(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoEncoder(x.shape[1], p["hidden"], p["latent"]).to(device)
    mu = nn.Parameter(torch.zeros(k, p["latent"], device=device))
    opt = adam([*model.parameters(), mu], lr=p["cluster_lr"])
    key = {"method": method, "k": k, "seed": seed, "gamma": gamma, "shape": tuple(x.shape),
           "params": {name: list(v) if isinstance(v, tuple) else v for name, v in p.items()}}
    runner = Runner(Checkpoint(ctx.checkpoint, key), {"model": model, "opt": opt}, gen, device,
                    total=p["max_steps"] // p["update_interval"] + 1, progress=progress, offset=p["pretrain_epochs"])
    state = runner.resume()
    if state is None:
        labels = _start(model, x, mu, k, p, runner, seed)
        step, batches = 0, _Batches(n, bs, gen, device)
    else:
        with torch.no_grad():
            mu.copy_(state["mu"].to(device))
        labels, step = state["labels"].to(device), state["step"]
        batches = _Batches(n, bs, gen, device, state["order"], state["pos"])

    kept_mu = mu.detach().clone()  # the centroids of the last refresh recorded (its clusters are ``labels``)

    def record(q: torch.Tensor, target: torch.Tensor, losses: list[float]) -> bool:
        """Report and checkpoint a refresh; True when training should stop."""
        nonlocal labels
        new = q.argmax(1)
        changed = float((new != labels).float().mean())
        emptied = p["keep_k"] and step > 0 and _filled(new, k) < _filled(labels, k)
        if emptied:  # this refresh would leave a cluster without texts: keep the last one's clusters
            with torch.no_grad():
                mu.copy_(kept_mu)
        else:
            labels = new
            kept_mu.copy_(mu.detach())
        kl = float((target * (target.clamp_min(1e-12).log() - q.clamp_min(1e-12).log())).sum(1).mean())
        runner.record({"phase": "cluster", "step": step, "kl_refreshed": kl, "changed": changed,
                       "empty_clusters": k - _filled(labels, k), **_loss_summary(losses),
                       **({"stopped": "a cluster would have been emptied"} if emptied else {})},
                      mu=mu.detach().cpu(), labels=labels.cpu(), step=step, order=batches.order.cpu(), pos=batches.pos)
        return emptied or (step > 0 and changed < p["tol"]) or step >= p["max_steps"]

    # 3. sharpen: KL(P || Q), P refreshed every update_interval steps. A resumed run's refresh at
    # its checkpoint was already recorded: only its target is needed again.
    q, target = _refresh(model, x, mu, p["alpha"])
    stop = state is None and record(q, target, [])
    while not stop:
        losses = []
        for _ in range(p["update_interval"]):
            idx = batches.next()
            z, recon = model(x[idx])
            loss = kl_to_target(soft_assign(z, mu, p["alpha"]), target[idx])
            if gamma is not None:
                loss = gamma * loss + nn.functional.mse_loss(recon, x[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
        q, target = _refresh(model, x, mu, p["alpha"])
        stop = record(q, target, losses)
    runner.finish()
    centroids = mu.detach().cpu().numpy().astype(np.float32)  # in the latent space
    params_out = {**p, "hidden": list(p["hidden"]), **({"gamma": gamma} if gamma is not None else {})}
    return Clustering(labels.cpu().numpy().astype(np.int32), centroids, method, k, params_out, runner.history,
                      time.perf_counter() - t0, seed, device)


def _filled(labels: torch.Tensor, k: int) -> int:
    """How many of the k clusters hold at least one row."""
    return int((torch.bincount(labels, minlength=k) > 0).sum())


def _fit(ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
         progress: Progress | None = None, **params) -> Clustering:
    return train(ctx, k, method="dec", gamma=None, seed=seed, device=device, progress=progress,
                 params=METHOD.params(params))


fit = seeded_fit(_fit)


LIMITS = {"latent": (1, 4096), "pretrain_epochs": (0, 10_000), "batch_size": (1, 1_000_000), "lr": (1e-12, 10.0),
          "cluster_lr": (1e-12, 10.0), "update_interval": (1, 1_000_000), "max_steps": (0, 10_000_000),
          "tol": (0.0, 1.0), "alpha": (1e-6, 1e6)}  # keep_k: True or False

METHOD = Method("dec", "DEC", "Deep Embedded Clustering (Xie et al. 2016): an autoencoder's encoder and k "
                "centroids trained to sharpen Student's-t soft assignments; K-Means start.", fit, DEFAULTS, limits=LIMITS)
