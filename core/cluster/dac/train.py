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
from core.cluster.deep import adam
from core.progress import Progress


DEFAULTS = {"epochs": 10, "steps": 100, "batch": 8, "lr": 3e-4, "schedule": "constant"}
SCHEDULES = ("constant", "cosine")  # cosine: lr * (1 + cos(pi t / T)) / 2 over the stage's T steps (the authors')


def step_lr(lr: float, schedule: str, step: int, total: int) -> float:
    """The learning rate of step ``step`` (0-based) of ``total``."""
    if schedule == "cosine":
        return lr * 0.5 * (1.0 + float(np.cos(np.pi * step / max(1, total))))
    return lr


@dataclass
class Trained:
    model: AnchoredFilter
    config: Config
    history: list[dict] = field(default_factory=list)  # per epoch and stage: loss, val_* figures, seconds
    stages: list[dict] = field(default_factory=list)  # each stage: name, sampler, epochs, steps, seed, device, ...
    # the corpus it was trained on: {"name", "generation", "rows", "dim"} (empty for older files)
    corpus: dict = field(default_factory=dict)
    # the membership cut chosen on held-out classes and what it gave there (:func:`calibrate`); empty
    # for a model trained without held-out classes (stage pretrain) or saved before calibration existed
    calibration: dict = field(default_factory=dict)

    @property
    def card(self) -> dict:
        last = self.history[-1] if self.history else {}
        return {"config": self.config.as_dict(), "stages": self.stages, "history": self.history, "corpus": self.corpus,
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "val_accuracy": last.get("val_accuracy"), "calibration": self.calibration}

    @property
    def cut(self) -> float:
        """The membership cut to use: the calibrated one, else 0.5."""
        return float(self.calibration.get("cut", 0.5))

    @property
    def grow_cut(self) -> float:
        """The stricter cut of a cluster's growth steps: half-way from the cut to 1, or the calibrated one
        (precision 0.9 on the held-out classes) where that is stricter. Held-out seen classes flatter
        the model (StackOverflow: accuracy 0.98 there, 0.74 on unseen classes), so their precision cut
        alone let clusters chain (NMI 0.31 where 0.6 gave 0.61; bench/RESULTS.md)."""
        return float(max(self.calibration.get("grow_cut", 0.0), (1.0 + self.cut) / 2))


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


def best_cut(prob: np.ndarray, truth: np.ndarray, criterion: str = "accuracy", precision: float = 0.9) -> float:
    """The cut on ``prob`` with the best accuracy (or F1) against ``truth``: members are ``prob > cut``;
    criterion ``precision``: the lowest cut whose members are still right ``precision`` of the time (the
    highest probability's when none is). Half-way between the last member's and the next row's
    probability, so it transfers to new rows."""
    order = np.argsort(-prob, kind="stable")
    p, t = prob[order], truth[order].astype(bool)
    tp, fp = np.cumsum(t), np.cumsum(~t)
    called = np.arange(1, len(t) + 1)  # the top i+1 called members
    if criterion == "accuracy":
        gain = (tp + (len(t) - t.sum() - fp)) / len(t)
    elif criterion == "f1":
        gain = 2 * tp / (called + t.sum())  # F1 = 2 TP / (called + true)
    else:
        ok = np.flatnonzero(tp / called >= precision)
        gain = np.zeros(len(t))
        gain[ok[-1] if len(ok) else 0] = 1.0
    i = int(np.argmax(gain))
    if i + 1 < len(p):
        return float((p[i] + p[i + 1]) / 2)
    return float(p[i] - 1e-6)


def calibrate(model: AnchoredFilter, x, sampler, *, bags: int = 64, batch: int = 8, seed: int = 0) -> dict:
    """Choose the membership cut on bags of ``sampler`` (held-out classes: never the training ones,
    never the classes a user will meet): the cut of best accuracy, and what it gives there beside
    0.5's, the best-F1 cut and the average precision. Stored in the model's card."""
    xt = torch_rows(x, str(next(model.parameters()).device))
    drawn = [sampler.sample(batch, np.random.default_rng(seed + 20_000 + i)) for i in range(max(1, bags // batch))]
    model.eval()
    probs, truths = [], []
    with torch.no_grad():
        for b in drawn:
            b = b.to(xt.device)
            _, logits, judged = bag_loss(model, xt, b)
            probs.append(torch.sigmoid(logits[judged]).cpu().numpy())
            truths.append(b.target[judged].cpu().numpy().astype(bool))
    p, t = np.concatenate(probs), np.concatenate(truths)
    classes = int(len(getattr(sampler, "anchor_classes", getattr(sampler, "classes", []))))
    if t.all() or not t.any():  # nothing to separate: any cut looks perfect, none is learnt from it
        return {"note": f"not calibrated: the held-out classes' bags held only {'members' if t.any() else 'non-members'} "
                        "(bags smaller than their classes?)", "classes": classes, "rows": int(len(t))}
    cut, f1_cut = best_cut(p, t, "accuracy"), best_cut(p, t, "f1")
    grow_cut = max(cut, best_cut(p, t, "precision", 0.9))
    at, at_half, at_f1 = scores(p, t, cut), scores(p, t, 0.5), scores(p, t, f1_cut)
    return {"cut": round(cut, 4), "criterion": "accuracy", "f1_cut": round(f1_cut, 4),
            "grow_cut": round(grow_cut, 4), "grow_precision": round(scores(p, t, grow_cut)["precision"], 4),
            "classes": classes, "bags": len(drawn) * batch, "rows": int(len(t)),
            "average_precision": round(at["average_precision"], 4), "accuracy": round(at["accuracy"], 4),
            "precision": round(at["precision"], 4), "recall": round(at["recall"], 4),
            "accuracy_at_0.5": round(at_half["accuracy"], 4), "best_f1": round(at_f1["f1"], 4)}


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
    if p["schedule"] not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {p['schedule']!r}")
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
    opt = adam(model.parameters(), lr=p["lr"])  # fused, as every training's (a step 6.0 -> 1.5 ms on two cores)
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
            for group in opt.param_groups:
                group["lr"] = step_lr(p["lr"], p["schedule"], epoch * p["steps"] + s, total)
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
    # a further stage changes the model: an earlier stage's calibration no longer holds
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
                       "history": trained.history, "stages": trained.stages, "corpus": corpus or {},
                       "calibration": trained.calibration}, tmp)
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
    calibration = blob.get("calibration") if isinstance(blob.get("calibration"), dict) else {}
    for key in ("cut", "grow_cut"):
        value = calibration.get(key, 0.5)
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0):
            raise ModelError(f"{path.name} has a calibration whose {key} is not a number in [0, 1] ({value!r}); "
                             "train it again")
    return Trained(model, cfg, blob.get("history", []), blob.get("stages", []), corpus, calibration)
