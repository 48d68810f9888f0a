"""DEC with a masked-LM regulariser (registry key ``dec_mlm``; the issue's "dec-mlm"), after the
"BERT-Clustering" README (COLING 2020 "BERT clustering"): DEC's loss on the transformer's own
mean-pooled sentence embeddings, so the encoder itself moves, plus ``mlm_weight`` x a masked-language-
model loss over the same texts (15% of tokens masked), which that README reports keeps the clusters
from degenerating within one epoch. ``mlm_weight=0`` is the ablation without it.

DEC's target P is recomputed from the whole corpus at each epoch's start (``target="epoch"``: Student's
t soft assignment to the centroids, sharpened; :func:`core.cluster.deep.target_distribution`) or from
each batch's own assignments (``target="batch"``, the reference code's way); the encoder and the
centroids are trained on KL(P || Q) (+ the MLM loss), the encoder's learning rate warming up over
``warmup`` of the steps and decaying linearly to zero (0: constant), gradients clipped to ``clip``
(0: not clipped; the reference code clips at 0.1). Centroids start from K-Means on the base
embeddings. History records each epoch's loss, the largest cluster's share and the number of
non-empty clusters (degeneration shows there). Like ClusterBERT, the adapted encoder and its
embeddings come back for an embedding set; a checkpoint after every epoch makes a killed run resume
to the same result. Neither packaged encoder ships its masked-LM head: the head's transform is new (the
decoder is the encoder's own word embeddings, tied) and trains at ``head_lr`` (1e-3, as SCCL's and DEC-CRL's
new heads) while the encoder trains at ``lr``; at ``lr`` the untrained head's gradient wrecked
multilingual-e5-small's clusters (bench/RESULTS.md, "DEC-MLM on multilingual-e5-small"). ``head_epochs``
passes over the corpus first train that new head alone (the encoder frozen, its word embeddings too), so the
masked-LM term's first gradients into the encoder come from a head that already predicts words.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from core.cluster.base import Checkpoint, ClusterContext, Clustering, Method, Progress
from core.cluster.deep import (Encoder, Runner, adamw, batch_or_epoch_target, batches, held, kl_to_target,
                               own_params, seeded_fit, soft_assign, step, steps_per_epoch, target_distribution,
                               texts_and_k, warmup_decay)

DEFAULTS = {"model": "default", "epochs": 3, "batch_size": 32, "lr": 2e-5, "cluster_lr": 1e-3, "mlm_weight": 1.0,
            "mask_ratio": 0.15, "target": "epoch", "warmup": 0.0, "clip": 0.0, "max_length": 64, "alpha": 1.0,
            "scale": 10.0, "head_lr": 1e-3, "head_epochs": 0, "freeze_words": False}


def _fit(ctx: ClusterContext, k: int | None, *, seed: int, device: str, progress: Progress | None,
         **params) -> Clustering:
    from core.cluster.kmeans import kmeans

    p = METHOD.params(params)
    texts, k = texts_and_k(ctx, k, "DEC-MLM")
    t0 = time.perf_counter()
    run = Encoder(texts, p, seed, device)
    gen = np.random.default_rng(seed)
    mu = nn.Parameter(torch.zeros(k, run.encoder.config.hidden_size, device=device))
    head = head_params(run)  # new weights: they train at head_lr (0: at lr; on e5 that collapsed the clusters)
    opt = adamw([{"params": run.encoder.parameters(), "lr": p["lr"]},
                 {"params": head, "lr": p["head_lr"] or p["lr"]},
                 {"params": [mu], "lr": p["cluster_lr"]}])
    n, bs = len(texts), min(p["batch_size"], len(texts))
    sched = warmup_decay(opt, steps_per_epoch(n, bs) * p["epochs"], p["warmup"]) if p["warmup"] > 0 else None
    warm = int(p["head_epochs"]) if p["mlm_weight"] > 0 else 0  # the head's passes, before the runner's epochs
    runner = Runner(Checkpoint(ctx.checkpoint, {"method": "dec_mlm", "k": k, "seed": seed, "params": p,
                                                "rows": len(texts)}),
                    {"mlm": run.model, "opt": opt, **({"sched": sched} if sched else {})}, gen, device,
                    total=p["epochs"], progress=progress, offset=warm, watch=ctx.watch)
    state = runner.resume()
    start = state["mu"] if state is not None else kmeans(run.encode().cpu().numpy(), k, seed=seed, device=device).centroids
    with torch.no_grad():
        mu.copy_(torch.as_tensor(start).to(device))
    run.model.train()
    if state is None and warm:
        _warm_head(run, head, texts, bs, p, seed, runner.before)
    params_all = [*run.model.parameters(), mu]
    for _ in runner.units():
        with torch.no_grad():
            q_all = soft_assign(runner.seen(run.encode()), mu, p["alpha"])
        target = target_distribution(q_all) if p["target"] == "epoch" else None  # from the whole corpus
        sizes = torch.bincount(q_all.argmax(1), minlength=k)
        dec_losses, mlm_losses = [], []
        for idx in batches(gen.permutation(n), bs):
            b = run.batch([texts[j] for j in idx])
            q = soft_assign(run.embed(b), mu, p["alpha"])
            dec = kl_to_target(q, batch_or_epoch_target(q, idx, target))
            loss = dec
            if p["mlm_weight"] > 0:
                m = run.mlm_loss(b)
                loss = loss + p["mlm_weight"] * m
                mlm_losses.append(m.item())
            step(loss, opt, params_all, p["clip"], sched)
            dec_losses.append(dec.item())
        runner.record({"epoch": runner.done + 1, "loss": float(np.mean(dec_losses)),
                       **({"mlm": float(np.mean(mlm_losses))} if mlm_losses else {}),
                       "largest_share_before": round(float(sizes.max()) / n, 4),
                       "clusters_before": int((sizes > 0).sum())}, mu=mu.detach().cpu())
    z = runner.seen(run.encode())
    with torch.no_grad():
        labels = soft_assign(z, mu, p["alpha"]).argmax(1).cpu().numpy().astype(np.int32)
    emb, model_dir = run.finish(ctx, z, labels, k, runner.history, "dec_mlm-")
    runner.finish()
    return Clustering(labels, (mu.detach() / p["scale"]).cpu().numpy().astype(np.float32), "dec_mlm", k, dict(p),
                      runner.history, time.perf_counter() - t0, seed, device, embeddings=emb, model_dir=model_dir)


def head_params(run: Encoder) -> list:
    """The MLM head's own weights (its transform and bias), new in both packaged encoders; not its decoder,
    which is the encoder's word embeddings."""
    return own_params(run.model.cls, run.encoder)


def _warm_head(run: Encoder, head: list, texts: list[str], bs: int, p: dict, seed: int, report) -> None:
    """``head_epochs`` passes of the masked-LM loss that train the head's own weights only (the encoder's
    pass keeps no graph; the tied decoder, i.e. the word embeddings, stays as it is); its own batch order,
    so the main loop's draws are those of a run without it. ``report(pass, info)`` after each pass (history
    and progress, as DEC's pretraining)."""
    opt = adamw(head, lr=p["head_lr"] or p["lr"])
    order = np.random.default_rng([seed, 7])
    with held([run.encoder.get_input_embeddings().weight]):  # as freeze_words left them after
        for done in range(1, int(p["head_epochs"]) + 1):
            losses = []
            for idx in batches(order.permutation(len(texts)), bs):
                loss = run.mlm_loss(run.batch([texts[j] for j in idx]), encoder_grad=False)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            report(done, {"phase": "head", "epoch": done, "mlm": float(np.mean(losses)), "mlm_first": losses[0]})


fit = seeded_fit(_fit)

LIMITS = {"target": frozenset({"epoch", "batch"}),
          "epochs": (0, 1000), "batch_size": (1, 100_000), "lr": (1e-12, 10.0), "cluster_lr": (1e-12, 10.0),
          "mlm_weight": (0.0, 1e6), "mask_ratio": (0.0, 1.0), "warmup": (0.0, 1.0), "clip": (0.0, 1e6),
          "max_length": (4, 8192), "alpha": (1e-6, 1e6), "scale": (1e-6, 1e6), "head_lr": (0.0, 10.0),
          "head_epochs": (0, 100)}

METHOD = Method("dec_mlm", "DEC-MLM", "DEC's loss on the transformer's own embeddings plus a masked-language-model "
                "loss (mlm_weight=0: without it); adapts the encoder and gives an embedding set.", fit, DEFAULTS,
                needs_texts=True, limits=LIMITS)
