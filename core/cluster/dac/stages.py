"""The training stages, as the CLI and the page run them: where each stage's classes come from and
which sampler it uses; one function trains a stage on a corpus.

- ``pretrain``: no labels; neighbourhoods of random centres (:class:`~.sampling.Neighbourhoods`).
- ``kmeans``: a stored clustering's clusters are the classes (kNN bags around a random row).
- ``labels``: a label column of the corpus (kNN bags and DAC's episodes, half each).
- ``groups``: the saved annotated groups (their included texts; texts in no group are background).

Stages with classes hold some classes out (``held_out``) and validate on those alone, so the
validation figures are for clusters the model never saw.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.cluster.dac import sampling
from core.cluster.dac import train as tr
from core.cluster.dac.model import Config
from core.cluster.base import torch_rows

STAGES = ("pretrain", "kmeans", "labels", "groups")
MIN_ROWS = 20  # fewer texts than this make no bags to learn from


def check_rows(n: int) -> None:
    """ValueError when a corpus of ``n`` texts is too small to train a model on."""
    if n < MIN_ROWS:
        raise ValueError(f"training a DAC model needs at least {MIN_ROWS} texts; this corpus has {n}")


def labels_from_column(values: pd.Series) -> np.ndarray:
    """A label column as class numbers; empty cells are -1 (no class)."""
    s = values.astype("string").str.strip()
    codes, _ = pd.factorize(s.where(s != "", pd.NA), use_na_sentinel=True)
    return codes.astype(np.int64)


def labels_from_groups(n: int, groups: dict[str, np.ndarray]) -> np.ndarray:
    """Group g's included rows get class g (in name order; a row in several groups keeps the first)."""
    out = np.full(n, -1, np.int64)
    for g, name in enumerate(sorted(groups)):
        rows = np.asarray(groups[name], np.int64)
        free = rows[out[rows] < 0]
        out[free] = g
    return out


def corpus_labels(corpus, stage: str, *, clustering: str | None = None, label_column: str = "label") -> np.ndarray | None:
    """The classes a stage trains on, from the corpus (None for ``pretrain``); ValueError naming
    what is missing."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if stage == "pretrain":
        return None
    if stage == "kmeans":
        from core.cluster import store

        stems = [s.stem for s in store.listing(corpus.name)]
        stem = clustering or next((s for s in stems if s.startswith("kmeans-")), None)
        if stem is None:
            raise ValueError(f"stage kmeans needs a stored clustering of {corpus.name!r}: run python -m "
                             "precompute.cluster --corpus NAME --k K first, or name one with --clustering")
        return store.labels_for(corpus, stem)
    if stage == "labels":
        if label_column not in corpus.frame.columns:
            cols = ", ".join(c for c in corpus.frame.columns if c not in ("id", "text"))
            raise ValueError(f"corpus {corpus.name!r} has no column {label_column!r} (it has: {cols or 'none'})")
        return labels_from_column(corpus.frame[label_column])
    from core import paths
    from core.store import GroupStore

    db = GroupStore(paths.groups_db(corpus.name, corpus.folder.parent))
    groups = {g: corpus.rows_of(db.load(g).included) for g in db.names()}
    if sum(len(r) >= 2 for r in groups.values()) < 2:
        raise ValueError(f"stage groups needs at least two saved groups with two or more texts each in {corpus.name!r}")
    return labels_from_groups(corpus.n, groups)


def fit_stage(vectors, stage: str, labels: np.ndarray | None = None, *, start: tr.Trained | None = None,
              config: Config | None = None, held_out: float = 0.25, bag: int = 800, episode_share: float | None = None,
              seed: int = 0, device: str = "cpu", checkpoint: Path | None = None, progress=None,
              **train_params) -> tr.Trained:
    """Train one stage on ``vectors`` (N, D) (continuing ``start`` when given)."""
    x = torch_rows(vectors, device)
    check_rows(len(x))
    bag = min(bag, len(x))
    if stage == "pretrain":
        kw = dict(bag=bag, per_centre=max(2, min(100, bag // 8)))
        sampler = sampling.Neighbourhoods(x, **kw)
        val = sampling.Neighbourhoods(x, **kw)  # other draws of the same kind (see train's validation seeds)
    else:
        if labels is None:
            raise ValueError(f"stage {stage} needs labels")
        share = (0.5 if stage == "labels" else 0.0) if episode_share is None else episode_share
        if held_out > 0:
            fit_classes, val_classes = sampling.split_classes(labels, held_out, seed)
        else:
            fit_classes, val_classes = None, None
        sampler = sampling.Labelled(x, labels, fit_classes, bag=bag, episode_share=share)
        val = sampling.Labelled(x, labels, val_classes, bag=bag) if val_classes is not None else None
    trained = tr.train(x, sampler, stage=stage, config=config, start=start, val_sampler=val, seed=seed,
                       device=device, checkpoint=checkpoint, progress=progress, **train_params)
    if stage != "pretrain" and held_out > 0:
        trained.stages[-1]["validation_classes"] = [int(c) for c in val_classes]
        # the membership cut, chosen on the held-out classes' bags (as the search and the clusterings
        # will meet them: an anchor's nearest rows), goes into the model's card
        around_held_out = sampling.Labelled(x, labels, bag=bag, anchor_classes=val_classes)
        trained.calibration = {**tr.calibrate(trained.model, x, around_held_out, seed=seed), "stage": stage}
    return trained


def categorical_columns(frame: pd.DataFrame, max_classes: int = 1000) -> list[str]:
    """Columns of the corpus that can be a stage's classes: text columns (not id, text, date, author)
    with 2 to ``max_classes`` distinct non-empty values, each class used at least twice on average."""
    out = []
    for col in frame.columns:
        if col in ("id", "text", "text_raw", "date", "author") or not (
                pd.api.types.is_string_dtype(frame[col]) or pd.api.types.is_object_dtype(frame[col])):
            continue
        values = frame[col].astype("string").str.strip()
        n = values[values.notna() & (values != "")].nunique()
        if 2 <= n <= max_classes and n * 2 <= len(frame):
            out.append(col)
    return out


def train_for_corpus(corpus, stage: str, *, label_column: str = "label", clustering: str | None = None,
                     start: tr.Trained | None = None, config: Config | None = None, bag: int = 400, batch: int = 4,
                     epochs: int = 3, steps: int = 30, seed: int = 0, device: str = "cpu", progress=None,
                     checkpoint: Path | None = None, held_out: float = 0.25, episode_share: float | None = None,
                     lr: float = tr.DEFAULTS["lr"]) -> tr.Trained:
    """A stage trained on a loaded corpus (the page's Train button; the CLI passes its own options):
    its classes (:func:`corpus_labels`), then :func:`fit_stage`, the stage recording what it learnt
    from. ``progress`` as :func:`core.cluster.dac.train.train`'s."""
    labels = corpus_labels(corpus, stage, clustering=clustering, label_column=label_column)
    trained = fit_stage(corpus.embeddings, stage, labels, start=start,
                        config=None if start is not None else (config or Config(dim=corpus.dim)), held_out=held_out,
                        bag=bag, episode_share=episode_share, seed=seed, device=device, checkpoint=checkpoint,
                        progress=progress, epochs=epochs, steps=steps, batch=batch, lr=lr)
    trained.stages[-1].update({"corpus": corpus.name, "embedding_model": corpus.manifest.get("models"),
                               "clustering": clustering, "label_column": label_column if stage == "labels" else None})
    return trained
