"""DEC (registry key ``dec``, shown as "DEC"): Deep Embedded Clustering, Xie, Girshick & Farhadi 2016.

On the corpus's frozen sentence embeddings: an autoencoder (MLP) is pretrained to reconstruct
them; K-Means in its latent space gives k centroids; then the encoder and the centroids are
trained together to sharpen the soft assignment

    q_ij = (1 + |z_i - mu_j|^2 / alpha)^-(alpha+1)/2, normalised over j   (Student's t, alpha = 1)

towards the target p_ij = (q_ij^2 / f_j) / sum_k (q_ik^2 / f_k), f_j = sum_i q_ij, refreshed from
the whole corpus every ``update_interval`` steps, by minimising KL(P || Q). Training stops when
fewer than ``tol`` of the labels change between two refreshes. IDEC (:mod:`core.cluster.idec`)
is the same loop with the decoder kept and its reconstruction loss added.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import torch
from torch import nn

from core.cluster.base import Checkpoint, ClusterContext, Clustering, Method, Progress, as_vectors, check_k


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


def soft_assign(z: torch.Tensor, mu: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """(B, latent), (k, latent) -> (B, k) Student's t similarities, rows summing to 1."""
    d2 = torch.cdist(z, mu).pow(2)
    q = (1.0 + d2 / alpha).pow(-(alpha + 1) / 2)
    return q / q.sum(1, keepdim=True)


def target_distribution(q: torch.Tensor) -> torch.Tensor:
    """DEC's auxiliary target: squares q (sharpening it) and divides by the cluster's soft size f_j,
    so that large clusters do not swallow the others; rows sum to 1."""
    w = q.pow(2) / q.sum(0)
    return w / w.sum(1, keepdim=True)


DEFAULTS = {"hidden": (256,), "latent": 32, "pretrain_epochs": 20, "batch_size": 256, "lr": 1e-3,
            "cluster_lr": 1e-4, "update_interval": 100, "max_steps": 3000, "tol": 1e-3, "alpha": 1.0}


def _encode(model: AutoEncoder, x: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([model.encoder(x[s:s + chunk]) for s in range(0, len(x), chunk)])


def train(ctx: ClusterContext, k: int | None, *, method: str, gamma: float | None, seed: int, device: str,
          progress: Progress | None, params: dict) -> Clustering:
    """DEC (``gamma`` None: clustering loss only) or IDEC (loss = gamma x KL + reconstruction)."""
    from core.cluster.kmeans import kmeans

    p = params
    k = check_k(k, ctx.n, method.upper())
    t0 = time.perf_counter()
    x_np = as_vectors(ctx.vectors)
    # standardise: unit vectors of dimension 384 have entries ~0.05, too small for MSE to train on
    x_np = (x_np - x_np.mean(0)) / (x_np.std() + 1e-12)
    x = torch.from_numpy(x_np).to(device)
    n = len(x)
    ck = Checkpoint(ctx.checkpoint, {"method": method, "k": k, "seed": seed, "gamma": gamma,
                                     "params": {key: list(v) if isinstance(v, tuple) else v for key, v in p.items()},
                                     "shape": x_np.shape})
    state = ck.load()
    gen = np.random.default_rng(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoEncoder(x.shape[1], p["hidden"], p["latent"]).to(device)
    bs = min(p["batch_size"], n)
    history: list[dict] = []
    total = p["pretrain_epochs"] + p["max_steps"] // p["update_interval"] + 1

    def report(step: int, info: dict) -> None:
        history.append({**info, "seconds": round(time.perf_counter() - t0, 3)})
        if progress:
            progress(step, total, info)

    if state is None:  # 1. pretrain the autoencoder
        opt = torch.optim.Adam(model.parameters(), lr=p["lr"])
        for epoch in range(p["pretrain_epochs"]):
            order = torch.from_numpy(gen.permutation(n)).to(device)
            total_loss = 0.0
            for s in range(0, n, bs):
                xb = x[order[s:s + bs]]
                loss = nn.functional.mse_loss(model(xb)[1], xb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total_loss += loss.item() * len(xb)
            report(epoch + 1, {"phase": "pretrain", "epoch": epoch + 1, "reconstruction": total_loss / n})
        # 2. K-Means in the latent space gives the first centroids
        z = _encode(model, x)
        km = kmeans(z.cpu().numpy(), k, seed=seed, device=device, init="auto", n_init="auto", niter="auto")
        mu = nn.Parameter(torch.from_numpy(km.centroids).to(device))
        labels = torch.from_numpy(km.labels.astype(np.int64)).to(device)
        step = 0
    else:
        model.load_state_dict(state["model"])
        mu = nn.Parameter(state["mu"].to(device))
        labels = state["labels"].to(device)
        step = state["step"]
        history = state["history"]
        gen.bit_generator.state = state["rng"]
    opt = torch.optim.Adam([*model.parameters(), mu], lr=p["cluster_lr"])
    if state is not None and state.get("opt") is not None:
        opt.load_state_dict(state["opt"])
    # 3. sharpen: KL(P || Q), P refreshed every update_interval steps
    if state is not None:  # go on through the epoch where the checkpoint left it
        order, pos = state["order"].to(device), state["pos"]
    else:
        order, pos = torch.from_numpy(gen.permutation(n)).to(device), 0
    target = None
    losses: list[float] = []  # the batch losses since the last refresh
    resuming = state is not None
    while True:
        if step % p["update_interval"] == 0:
            with torch.no_grad():
                q = soft_assign(_encode(model, x), mu, p["alpha"])
                target = target_distribution(q)
                new = q.argmax(1)
            if resuming:  # this refresh was reported and checkpointed before the run stopped
                resuming = False
            else:
                changed = float((new != labels).float().mean())
                labels = new
                sizes = torch.bincount(labels, minlength=k)
                kl = float((target * (target.clamp_min(1e-12).log() - q.clamp_min(1e-12).log())).sum(1).mean())
                info = {"phase": "cluster", "step": step, "kl_refreshed": kl, "changed": changed,
                        "empty_clusters": int((sizes == 0).sum())}
                if losses:  # the loss minimised since the previous refresh (against a fixed target):
                    quarter = max(1, len(losses) // 4)  # its mean, and over its first and last quarter
                    info.update(loss=float(np.mean(losses)), loss_start=float(np.mean(losses[:quarter])),
                                loss_end=float(np.mean(losses[-quarter:])))
                report(p["pretrain_epochs"] + step // p["update_interval"] + 1, info)
                losses = []
                ck.save({"model": model.state_dict(), "mu": mu.detach().cpu(), "labels": labels.cpu(),
                         "step": step, "history": history, "rng": gen.bit_generator.state,
                         "opt": opt.state_dict(), "order": order.cpu(), "pos": pos})
                if (step > 0 and changed < p["tol"]) or step >= p["max_steps"]:
                    break
        if pos >= n:
            order, pos = torch.from_numpy(gen.permutation(n)).to(device), 0
        idx = order[pos:pos + bs]
        pos += bs
        z, recon = model(x[idx])
        q = soft_assign(z, mu, p["alpha"])
        loss = nn.functional.kl_div(q.clamp_min(1e-12).log(), target[idx], reduction="batchmean")
        if gamma is not None:
            loss = gamma * loss + nn.functional.mse_loss(recon, x[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
    ck.clear()
    centroids = mu.detach().cpu().numpy().astype(np.float32)  # in the latent space
    params_out = {**p, "hidden": list(p["hidden"]), **({"gamma": gamma} if gamma is not None else {})}
    return Clustering(labels.cpu().numpy().astype(np.int32), centroids, method, k, params_out, history,
                      time.perf_counter() - t0, seed, device)


def fit(ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
        progress: Progress | None = None, **params) -> Clustering:
    return train(ctx, k, method="dec", gamma=None, seed=seed, device=device, progress=progress,
                 params=METHOD.params(params))


METHOD = Method("dec", "DEC", "Deep Embedded Clustering (Xie et al. 2016): an autoencoder's encoder and k "
                "centroids trained to sharpen Student's-t soft assignments; K-Means start.", fit, DEFAULTS)
