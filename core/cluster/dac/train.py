"""Train an anchored-filtering model on bags from a sampler: epochs of steps, a fixed validation set,
a checkpoint per epoch (a killed run resumes to the same model), the curves kept with the model.

A trained model is one file (``torch.save`` of its config, weights and card), written atomically;
:func:`save` / :func:`load`. Several stages (pretrain, then kmeans, then labels) continue one model:
pass the previous :class:`Trained` as ``start``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from core.cluster.dac.model import UNKNOWN, AnchoredFilter, Config
from core.cluster.dac.sampling import Bags
from core.cluster.base import Checkpoint, torch_rows
from core.progress import Progress


DEFAULTS = {"epochs": 10, "steps": 100, "batch": 8, "lr": 3e-4}


@dataclass
class Trained:
    model: AnchoredFilter
    config: Config
    history: list[dict] = field(default_factory=list)  # per epoch and stage: loss, val_* figures, seconds
    stages: list[dict] = field(default_factory=list)  # each stage: name, sampler, epochs, steps, seed, device, ...
    # the corpus it was trained on: {"name", "generation", "rows", "dim"} (empty for older files)
    corpus: dict = field(default_factory=dict)

    @property
    def card(self) -> dict:
        last = self.history[-1] if self.history else {}
        return {"config": self.config.as_dict(), "stages": self.stages, "history": self.history, "corpus": self.corpus,
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "val_accuracy": last.get("val_accuracy")}


def new_model(cfg: Config, seed: int, device: str) -> AnchoredFilter:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return AnchoredFilter(cfg).to(device)


def bag_loss(model: AnchoredFilter, x: torch.Tensor, bags: Bags) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean binary cross-entropy over the rows to classify (real rows of unknown role), with the
    logits and the mask of those rows."""
    logits = model(x[bags.rows], bags.mask, bags.role)
    judged = bags.mask & (bags.role == UNKNOWN)
    loss = nn.functional.binary_cross_entropy_with_logits(logits[judged], bags.target[judged])
    return loss, logits, judged


def scores(prob: np.ndarray, truth: np.ndarray, threshold: float = 0.5) -> dict:
    """Membership accuracy, precision, recall and F1 of ``prob > threshold`` against ``truth``
    (flat arrays over the judged rows), and average precision of the ranking."""
    from sklearn.metrics import average_precision_score

    pred, truth = prob > threshold, truth.astype(bool)
    tp = float((pred & truth).sum())
    precision = tp / max(1.0, float(pred.sum()))
    recall = tp / max(1.0, float(truth.sum()))
    return {"accuracy": float((pred == truth).mean()), "precision": precision, "recall": recall,
            "f1": 2 * precision * recall / max(1e-12, precision + recall),
            "average_precision": float(average_precision_score(truth, prob)) if truth.any() and not truth.all() else float("nan")}


def evaluate(model: AnchoredFilter, x: torch.Tensor, bags: list[Bags]) -> dict:
    model.eval()
    losses, probs, truths = [], [], []
    with torch.no_grad():
        for b in bags:
            b = b.to(x.device)
            loss, logits, judged = bag_loss(model, x, b)
            losses.append(float(loss))
            probs.append(torch.sigmoid(logits[judged]).cpu().numpy())
            truths.append(b.target[judged].cpu().numpy())
    model.train()
    out = scores(np.concatenate(probs), np.concatenate(truths))
    return {"val_loss": float(np.mean(losses)), **{f"val_{k}": v for k, v in out.items()}}


# Long (~60 lines) on purpose: start-or-resume, the step loop and the per-epoch record read best in one place;
# the pieces it calls (bag_loss, evaluate, Checkpoint) are separate and tested on their own.
def train(x: np.ndarray | torch.Tensor, sampler, *, stage: str, config: Config | None = None,
          start: Trained | None = None, val_sampler=None, val_bags: int = 32, seed: int = 0, device: str = "cpu",
          checkpoint: Path | None = None, progress: Progress | None = None, **params) -> Trained:
    """Train (or go on training ``start``) on ``sampler``'s bags. ``params``: epochs, steps per epoch,
    batch (bags per step), lr; see DEFAULTS. ``x`` must be the matrix the sampler draws rows from.
    ``progress(step, epochs x steps, info)`` after every step (info: stage, epoch, epochs, running
    loss), and at each epoch's end with the epoch's figures and ``epoch_done``."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"training has no parameter {', '.join(map(repr, unknown))}; it takes {', '.join(DEFAULTS)}")
    p = {**DEFAULTS, **params}
    t0 = time.perf_counter()
    xt = torch_rows(x, device)
    if start is not None:
        cfg = start.config
        model = AnchoredFilter(cfg).to(device)
        model.load_state_dict(start.model.state_dict())
        history, stages = list(start.history), list(start.stages)
    else:
        cfg = config or Config(dim=xt.shape[1])
        model, history, stages = new_model(cfg, seed, device), [], []
    if cfg.dim != xt.shape[1]:
        raise ValueError(f"the model takes {cfg.dim}-d vectors, the corpus has {xt.shape[1]}-d embeddings")
    stage_info = {"stage": stage, "sampler": type(sampler).__name__, "seed": seed, "device": device, **p}
    gen = np.random.default_rng(seed)
    val = [val_sampler.sample(p["batch"], np.random.default_rng(seed + 10_000 + i))
           for i in range(max(1, val_bags // p["batch"]))] if val_sampler is not None else []
    opt = torch.optim.Adam(model.parameters(), lr=p["lr"])
    ck = Checkpoint(checkpoint, {"stage": stage, "seed": seed, "params": p, "config": cfg.as_dict(),
                                 "shape": tuple(xt.shape), "start": len(history)})
    state = ck.load()
    first = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        gen.bit_generator.state = state["rng"]
        history, first = state["history"], state["epoch"]
    model.train()
    total = p["epochs"] * p["steps"]
    for epoch in range(first, p["epochs"]):
        losses = []
        for s in range(p["steps"]):
            loss = bag_loss(model, xt, sampler.sample(p["batch"], gen).to(device))[0]
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            losses.append(loss.item())
            if progress:  # every step: a long epoch never sits at 0%
                progress(epoch * p["steps"] + s + 1, total, {"stage": stage, "epoch": epoch + 1, "epochs": p["epochs"],
                                                             "loss": float(np.mean(losses))})
        info = {"stage": stage, "epoch": epoch + 1, "loss": float(np.mean(losses)),
                **(evaluate(model, xt, val) if val else {}), "seconds": round(time.perf_counter() - t0, 2)}
        history.append(info)
        ck.save({"model": model.state_dict(), "opt": opt.state_dict(), "rng": gen.bit_generator.state,
                 "history": history, "epoch": epoch + 1})
        if progress:  # the epoch's figures (validation included), once it is checkpointed
            progress((epoch + 1) * p["steps"], total, {**info, "epochs": p["epochs"], "epoch_done": True})
    ck.clear()
    stages.append({**stage_info, "seconds": round(time.perf_counter() - t0, 2)})
    model.eval()
    return Trained(model, cfg, history, stages, dict(start.corpus) if start is not None else {})


def save(trained: Trained, path: Path, corpus: dict | None = None) -> Path:
    """One file: the config, the weights and the card (history, stages, and ``corpus``: which corpus
    and import it was trained on), as tensors and plain data only (core.safeload)."""
    from core import safeload
    from core.atomic import atomic_path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    corpus = corpus if corpus is not None else trained.corpus
    with atomic_path(path) as tmp:
        safeload.save({"format": 2, "config": trained.config.as_dict(), "state": trained.model.state_dict(),
                       "history": trained.history, "stages": trained.stages, "corpus": corpus or {}}, tmp)
    trained.corpus = corpus or {}
    return path


class ModelError(ValueError):
    """A stored model is missing, unreadable or refused (it holds more than weights); the message names
    the file."""


def load(path: Path, device: str = "cpu") -> Trained:
    from core import safeload

    path = Path(path)
    if not path.exists():
        raise ModelError(f"no DAC model {path.name}")
    try:
        blob = safeload.load(path, "DAC model", map_location=device)
    except safeload.UnsafeFileError as exc:
        raise ModelError(str(exc)) from None
    except safeload.DamagedFileError as exc:
        raise ModelError(f"{exc}; train it again") from None
    try:
        cfg = Config(**blob["config"])
        model = AnchoredFilter(cfg).to(device)
        model.load_state_dict(blob["state"])
    except (RuntimeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path.name} is not a readable DAC model ({exc.__class__.__name__}: "
                         f"{str(exc)[:200]}); train it again") from exc
    model.eval()
    corpus = blob.get("corpus") if isinstance(blob.get("corpus"), dict) else {}
    return Trained(model, cfg, blob.get("history", []), blob.get("stages", []), corpus)
