"""SCCL (registry key ``sccl``), after "Supporting Clustering with Contrastive Learning" (Zhang et al.,
NAACL 2021): the sentence encoder is fine-tuned on the corpus with

    L = L_instance + eta * L_cluster

- **L_instance**: NT-Xent (temperature ``temperature``) between two views of each text, through a
  projection head (hidden -> hidden -> ``proj_dim``). The paper's views come from contextual
  substitution models that are not available offline; here one view is the text itself and the other
  the text with words deleted (``delete_ratio``) and neighbours swapped (``swap_ratio``); both pass the
  encoder in training mode, so dropout adds SimCSE's noise to each (two passes of the same text are
  already a SimCSE pair: ``delete_ratio=0, swap_ratio=0`` is pure SimCSE views).
- **L_cluster**: DEC's KL(P || Q) in the encoder's own embedding space (no projection): Student's t
  to ``k`` centroids that start from K-Means on the base embeddings and are trained with the encoder;
  the target P is the batch's own (``target="batch"``, SCCL's way) or the whole corpus's computed at
  each epoch's start (``target="epoch"``, DEC's way), computed on the first view. ``eta`` is 1 by default,
  not the paper's 10: on e5 at weight 10 the clustering term pulled Biomedical's titles apart from their
  topics (K-Means on the set 35.3 NMI after one epoch, 43.4 without the term, 45.4 before), and weight 1
  lifted StackOverflow, SearchSnippets and AgNews by 0.2-8.0 NMI and 0.4-6.6 ACC (seed 0; Biomedical at
  weight 1 not measured: bench/RESULTS.md, "An eleventh lease").

- **L_anchor** (weight ``anchor``, 0 by default): the mean squared distance between a text's unit embedding now
  and the base encoder's (before any training), ``2 (1 - cos)``: a leash that keeps the adapted space near the
  one K-Means already clusters well, for corpora where the contrastive loss alone moves titles off their
  topics (Biomedical: bench/RESULTS.md).

The encoder's learning rate warms up over ``warmup`` of the steps and decays linearly to zero,
gradients are clipped to ``clip``; the heads learn at ``head_lr`` (SCCL: 100x the encoder's). The
labels are the soft assignment's arg-max on clean (eval-mode) embeddings. Checkpoint after every epoch
(a killed run resumes to the same result for a fixed seed), CUDA when asked; the adapted encoder and
its embeddings come back as an embedding set. Takes the packaged MiniLM, multilingual-e5-small or any
sentence-transformers model.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from core.cluster.base import Checkpoint, ClusterContext, Clustering, Method, Progress
from core.cluster.deep import (Encoder, Runner, adamw, batch_or_epoch_target, batches, delete_words, kl_to_target,
                               nt_xent, seeded_fit, soft_assign, step, steps_per_epoch, swap_words, target_distribution,
                               texts_and_k, warmup_decay)

DEFAULTS = {"model": "default", "epochs": 5, "batch_size": 128, "lr": 1e-5, "head_lr": 1e-3, "temperature": 0.5,
            "eta": 1.0, "target": "batch", "delete_ratio": 0.2, "swap_ratio": 0.1, "proj_dim": 128, "warmup": 0.1,
            "clip": 1.0, "max_length": 64, "alpha": 1.0, "scale": 10.0, "anchor": 0.0, "freeze_words": False}


class Heads(nn.Module):
    """The contrastive projection head and the centroids (in the embedding space, scaled)."""

    def __init__(self, dim: int, k: int, proj_dim: int):
        super().__init__()
        self.instance = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, proj_dim))
        self.mu = nn.Parameter(torch.zeros(k, dim))


def _fit(ctx: ClusterContext, k: int | None, *, seed: int, device: str, progress: Progress | None,
         **params) -> Clustering:
    from core.cluster.kmeans import kmeans

    p = METHOD.params(params)
    texts, k = texts_and_k(ctx, k, "SCCL")
    t0 = time.perf_counter()
    run = Encoder(texts, p, seed, device, mlm=False)
    gen = np.random.default_rng(seed)
    heads = Heads(run.encoder.config.hidden_size, k, int(p["proj_dim"])).to(device)
    n, bs = len(texts), max(2, min(int(p["batch_size"]), len(texts)))
    opt = adamw([{"params": run.model.parameters(), "lr": p["lr"]},
                 {"params": heads.parameters(), "lr": p["head_lr"]}])
    sched = warmup_decay(opt, steps_per_epoch(n, bs, smallest=2) * int(p["epochs"]), p["warmup"])
    runner = Runner(Checkpoint(ctx.checkpoint, {"method": "sccl", "k": k, "seed": seed, "params": p, "rows": n}),
                    {"encoder": run.model, "heads": heads, "opt": opt, "sched": sched}, gen, device,
                    total=int(p["epochs"]), progress=progress, watch=ctx.watch)
    base = run.encode() if p["anchor"] > 0 else None  # the base encoder's, scaled (a resumed run's leash too)
    if runner.resume() is None:
        with torch.no_grad():
            start = base if base is not None else run.encode()
            heads.mu.copy_(torch.as_tensor(kmeans(start.cpu().numpy(), k, seed=seed, device=device).centroids))
    run.model.train()
    params_all = [*run.model.parameters(), *heads.parameters()]
    for _ in runner.units():
        with torch.no_grad():
            q_all = soft_assign(runner.seen(run.encode()), heads.mu, p["alpha"])
        epoch_target = target_distribution(q_all) if p["target"] == "epoch" else None
        sizes = torch.bincount(q_all.argmax(1), minlength=k)
        parts: dict[str, list] = {"instance": [], "cluster": [], "anchor": []}
        for idx in batches(gen.permutation(n), bs, smallest=2):  # a contrastive batch needs two texts
            batch = [texts[j] for j in idx]
            augmented = [swap_words(delete_words(t, p["delete_ratio"], gen), p["swap_ratio"], gen) for t in batch]
            z1, z2 = run.embed(run.batch(batch)), run.embed(run.batch(augmented))
            inst = nt_xent(heads.instance(z1), heads.instance(z2), p["temperature"])
            q = soft_assign(z1, heads.mu, p["alpha"])
            clu = kl_to_target(q, batch_or_epoch_target(q, idx, epoch_target))
            loss = inst + p["eta"] * clu
            if base is not None:
                anc = ((z1 - base[torch.from_numpy(idx).to(device)]) / p["scale"]).pow(2).sum(1).mean()
                loss = loss + p["anchor"] * anc
                parts["anchor"].append(anc.item())
            step(loss, opt, params_all, p["clip"], sched)
            parts["instance"].append(inst.item())
            parts["cluster"].append(clu.item())
        runner.record({"epoch": runner.done + 1, **{name: float(np.mean(v)) for name, v in parts.items() if v},
                       "largest_share_before": round(float(sizes.max()) / n, 4),
                       "clusters_before": int((sizes > 0).sum())})
    z = runner.seen(run.encode())
    with torch.no_grad():
        labels = soft_assign(z, heads.mu, p["alpha"]).argmax(1).cpu().numpy().astype(np.int32)
    emb, model_dir = run.finish(ctx, z, labels, k, runner.history, "sccl-")
    runner.finish()
    centroids = nn.functional.normalize(heads.mu.detach(), dim=1).cpu().numpy().astype(np.float32)
    return Clustering(labels, centroids, "sccl", k, dict(p), runner.history, time.perf_counter() - t0, seed, device,
                      embeddings=emb, model_dir=model_dir)


fit = seeded_fit(_fit)

LIMITS = {"target": frozenset({"epoch", "batch"}),
          "epochs": (0, 1000), "batch_size": (2, 100_000), "lr": (1e-12, 10.0), "head_lr": (1e-12, 10.0),
          "temperature": (1e-6, 1e6), "eta": (0.0, 1e6), "delete_ratio": (0.0, 1.0), "swap_ratio": (0.0, 1.0),
          "proj_dim": (1, 4096), "warmup": (0.0, 1.0), "clip": (0.0, 1e6), "max_length": (4, 8192),
          "alpha": (1e-6, 1e6), "scale": (1e-6, 1e6), "anchor": (0.0, 1e6)}

METHOD = Method("sccl", "SCCL", "Fine-tunes the encoder with a contrastive loss between a text and its augmented "
                "copy (word deletion and swaps, dropout) plus DEC's clustering loss on the encoder's own "
                "embeddings (weight eta), optionally held near the base encoder's embeddings (weight anchor); gives an "
                "embedding set.", fit, DEFAULTS, needs_texts=True, limits=LIMITS)
