"""DEC with a masked-LM regulariser (registry key ``dec_mlm``; the issue's "dec-mlm"), after the
"BERT-Clustering" README (COLING 2020 "BERT clustering"): DEC's loss on the transformer's own
mean-pooled sentence embeddings, so the encoder itself moves, plus ``mlm_weight`` x a masked-language-
model loss over the same texts (15% of tokens masked), which that README reports keeps the clusters
from degenerating within one epoch. ``mlm_weight=0`` is the ablation without it.

Per epoch: DEC's target P is recomputed from the whole corpus (Student's t soft assignment to the
centroids, sharpened; :func:`core.cluster.dec.target_distribution`), then the encoder and the
centroids are trained on KL(P || Q) (+ the MLM loss). Centroids start from K-Means on the base
embeddings. History records each epoch's loss, the largest cluster's share and the number of
non-empty clusters (degeneration shows there). Like ClusterBERT, the adapted encoder and its
embeddings come back for an embedding set; a checkpoint after every epoch makes a killed run resume
to the same result.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from core.cluster.base import (Checkpoint, ClusterContext, Clustering, Method, Progress, model_folder,
                               seeded_fit, texts_and_k)
from core.cluster.dec import soft_assign, target_distribution

DEFAULTS = {"model": "default", "epochs": 3, "batch_size": 32, "lr": 2e-5, "cluster_lr": 1e-3, "mlm_weight": 1.0,
            "mask_ratio": 0.15, "max_length": 64, "alpha": 1.0, "scale": 10.0}


class Encoder:
    """The sentence-transformer's transformer, trainable, with its tokenizer: mean-pooled, scaled
    embeddings of batches and of the whole corpus, and saving as a sentence-transformers folder.
    ``mlm``: with a masked-LM head (``model``); otherwise ``model`` is the bare encoder. Shared by
    the encoder-adapting DEC variants (DEC-MLM here, DEC-CRL)."""

    def __init__(self, texts: list[str], p: dict, seed: int, device: str, mlm: bool = True):
        from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

        from core.embed import resolve_model

        self.path = resolve_model(p["model"])
        self.texts, self.p, self.device = texts, p, device
        self.tok = AutoTokenizer.from_pretrained(self.path)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            # the MLM head: tied decoder, new transform
            self.model = (AutoModelForMaskedLM if mlm else AutoModel).from_pretrained(self.path).to(device)
        self.encoder = self.model.base_model if mlm else self.model

    def batch(self, texts: list[str]) -> dict:
        b = self.tok(texts, padding=True, truncation=True, max_length=self.p["max_length"], return_tensors="pt")
        return {k: v.to(self.device) for k, v in b.items()}

    def embed(self, b: dict) -> torch.Tensor:
        """Mean-pooled, L2-normalised, times ``scale`` (Student's t needs distances of order 1)."""
        h = self.encoder(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).to(h.dtype)
        return nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp_min(1), dim=-1) * self.p["scale"]

    @torch.no_grad()
    def encode(self) -> torch.Tensor:
        self.model.eval()
        out = torch.cat([self.embed(self.batch(self.texts[s:s + 256])) for s in range(0, len(self.texts), 256)])
        self.model.train()
        return out

    def mlm_loss(self, b: dict) -> torch.Tensor:
        ids = b["input_ids"].clone()
        labels = ids.clone()
        special = torch.zeros_like(ids, dtype=torch.bool)
        for t in (self.tok.cls_token_id, self.tok.sep_token_id, self.tok.pad_token_id):
            special |= ids == t
        pick = (torch.rand(ids.shape, device=ids.device) < self.p["mask_ratio"]) & ~special
        if not pick.any():
            pick[0, 1] = not special[0, 1]
        labels[~pick] = -100
        ids[pick] = self.tok.mask_token_id
        return self.model(input_ids=ids, attention_mask=b["attention_mask"], labels=labels).loss

    def finish(self, ctx: ClusterContext, z: torch.Tensor, labels: np.ndarray, k: int, history: list,
               ck: Checkpoint, prefix: str) -> tuple[np.ndarray, Path]:
        """The end of a run: the final cluster sizes into ``history``, the adapted encoder saved
        under the corpus, the checkpoint cleared; returns the unit embeddings and the model folder."""
        sizes = np.bincount(labels, minlength=k)
        history.append({"phase": "final", "largest_share": round(float(sizes.max()) / len(labels), 4),
                        "clusters": int((sizes > 0).sum())})
        model_dir = model_folder(ctx, prefix)
        self.save_model(model_dir)
        ck.clear()
        return (z / self.p["scale"]).cpu().numpy().astype(np.float32), model_dir

    def save_model(self, folder: Path) -> None:
        """The adapted encoder as a sentence-transformers folder (same pooling as the base model)."""
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(self.path, device="cpu")
        st[0].auto_model.load_state_dict({k: v.cpu() for k, v in self.encoder.state_dict().items()}, strict=False)
        st.save(str(folder))


def _fit(ctx: ClusterContext, k: int | None, *, seed: int, device: str, progress: Progress | None,
         **params) -> Clustering:
    from core.cluster.kmeans import kmeans

    p = METHOD.params(params)
    texts, k = texts_and_k(ctx, k, "DEC-MLM")
    t0 = time.perf_counter()
    run = Encoder(texts, p, seed, device)
    ck = Checkpoint(ctx.checkpoint, {"method": "dec_mlm", "k": k, "seed": seed, "params": p, "rows": len(texts)})
    state = ck.load()
    gen = np.random.default_rng(seed)
    if state is None:
        z = run.encode()
        km = kmeans(z.cpu().numpy(), k, seed=seed, device=device, init="auto", n_init="auto", niter="auto")
        mu = nn.Parameter(torch.from_numpy(km.centroids).to(device))
        history, start = [], 0
    else:
        run.model.load_state_dict(state["mlm"])
        mu = nn.Parameter(state["mu"].to(device))
        history, start = state["history"], state["done"]
        ck.restore_random_state(state, gen, device)
    opt = torch.optim.AdamW([{"params": run.model.parameters(), "lr": p["lr"]}, {"params": [mu], "lr": p["cluster_lr"]}])
    if state is not None:
        opt.load_state_dict(state["opt"])
    run.model.train()
    n, bs = len(texts), min(p["batch_size"], len(texts))
    for epoch in range(start, p["epochs"]):
        with torch.no_grad():
            q_all = soft_assign(run.encode(), mu, p["alpha"])
            target = target_distribution(q_all)
        sizes = torch.bincount(q_all.argmax(1), minlength=k)
        order = gen.permutation(n)
        dec_losses, mlm_losses = [], []
        for s in range(0, n, bs):
            idx = order[s:s + bs]
            b = run.batch([texts[j] for j in idx])
            q = soft_assign(run.embed(b), mu, p["alpha"])
            dec = nn.functional.kl_div(q.clamp_min(1e-12).log(), target[torch.from_numpy(idx).to(device)],
                                       reduction="batchmean")
            loss = dec
            if p["mlm_weight"] > 0:
                m = run.mlm_loss(b)
                loss = loss + p["mlm_weight"] * m
                mlm_losses.append(m.item())
            opt.zero_grad()
            loss.backward()
            opt.step()
            dec_losses.append(dec.item())
        info = {"epoch": epoch + 1, "loss": float(np.mean(dec_losses)),
                **({"mlm": float(np.mean(mlm_losses))} if mlm_losses else {}),
                "largest_share_before": round(float(sizes.max()) / n, 4),
                "clusters_before": int((sizes > 0).sum()), "seconds": round(time.perf_counter() - t0, 2)}
        history.append(info)
        ck.save({"mlm": run.model.state_dict(), "mu": mu.detach().cpu(), "opt": opt.state_dict(), "history": history,
                 "done": epoch + 1, **ck.random_state(gen, device)})
        if progress:
            progress(epoch + 1, p["epochs"], info)
    z = run.encode()
    with torch.no_grad():
        labels = soft_assign(z, mu, p["alpha"]).argmax(1).cpu().numpy().astype(np.int32)
    emb, model_dir = run.finish(ctx, z, labels, k, history, ck, "dec_mlm-")
    return Clustering(labels, (mu.detach() / p["scale"]).cpu().numpy().astype(np.float32), "dec_mlm", k, dict(p),
                      history, time.perf_counter() - t0, seed, device, embeddings=emb, model_dir=model_dir)


fit = seeded_fit(_fit)

LIMITS = {"epochs": (0, 1000), "batch_size": (1, 100_000), "lr": (1e-12, 10.0), "cluster_lr": (1e-12, 10.0),
          "mlm_weight": (0.0, 1e6), "mask_ratio": (0.0, 1.0), "max_length": (4, 8192), "alpha": (1e-6, 1e6),
          "scale": (1e-6, 1e6)}

METHOD = Method("dec_mlm", "DEC-MLM", "DEC's loss on the transformer's own embeddings plus a masked-language-model "
                "loss (mlm_weight=0: without it); adapts the encoder and gives an embedding set.", fit, DEFAULTS,
                needs_texts=True, limits=LIMITS)
