"""The training stages, as the CLI and the page run them: where each stage's classes come from and
which sampler it uses; one function trains a stage on a corpus.

- ``pretrain``: no labels; neighbourhoods of random centres (:class:`~.sampling.Neighbourhoods`).
- ``kmeans``: a stored clustering's clusters are the classes (kNN bags around a random row).
- ``labels``: a label column of the corpus (kNN bags and DAC's episodes, half each).
- ``groups``: the saved annotated groups (their included texts; texts in no group are background).

Stages with classes hold some classes out (``held_out``) and validate on those alone, so the
validation figures are for clusters the model never saw.

- ``pooled`` (issue 31, item 4; :func:`fit_pooled`): many tasks at once, from several corpora embedded
  by the same model: the label classes of every labelled corpus given (a quarter of each held out to
  choose the cut on) and K-Means pseudo-classes at several k of every corpus, the target's included
  (no labels of it are needed). Trained from scratch with DAC's episode recipe (Dirichlet(5)
  proportions) and a cosine schedule.
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


def classes_of_column(values: pd.Series, corpus: str) -> np.ndarray:
    """:func:`labels_from_column`, with a ValueError naming the column where it holds no classes to learn from
    (:func:`core.cluster.evaluate.class_column_problem`: ``--label-column text`` or ``id`` trained a model on the few
    texts written twice)."""
    from core.cluster.evaluate import class_column_problem

    problem = class_column_problem(values)
    if problem:
        raise ValueError(f"column {values.name!r} of corpus {corpus!r} holds no classes to learn from: {problem}")
    return labels_from_column(values)


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
        return classes_of_column(corpus.frame[label_column], corpus.name)
    from core.store import open_store

    db = open_store(corpus.name, corpus.folder.parent)  # PostgreSQL where SEMANNO_DB names it
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


def pseudo_labels(x: np.ndarray, ks, seed: int) -> list[tuple[int, np.ndarray]]:
    """K-Means pseudo-classes of one corpus at several k (no labels used): clusters of many sizes."""
    from sklearn.cluster import KMeans

    return [(int(k), KMeans(int(k), n_init=1, random_state=seed).fit(x).labels_.astype(np.int64))
            for k in ks if k < len(x)]


def mixed_classes(x: np.ndarray, labels: np.ndarray, classes: np.ndarray, n_new: int, rows: int,
                  gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Mixup of classes: ``n_new`` synthetic classes of ``rows`` unit vectors each, class j from a pair
    (a, b) of ``classes``: row i = normalise(lam_i x_a + (1 - lam_i) x_b) for random members of a and b,
    lam_i around a per-class mixing weight drawn from U(0.3, 0.7). The new clusters lie between real ones
    with sizes and spreads the corpus does not show, more tasks for a model trained on few classes.
    Returns (vectors (n_new * rows, D) float32, their class 0..n_new-1, the parent pairs)."""
    classes = np.asarray(classes)
    if len(classes) < 2 or n_new < 1 or rows < 1:
        return np.zeros((0, x.shape[1]), np.float32), np.zeros(0, np.int64), []
    members = {int(c): np.flatnonzero(labels == c) for c in classes}
    out, lab, pairs = [], [], []
    for j in range(n_new):
        a, b = (int(c) for c in gen.choice(classes, 2, replace=False))
        lam = np.clip(gen.uniform(0.3, 0.7) + gen.normal(0, 0.05, rows), 0.05, 0.95)[:, None]
        v = lam * x[gen.choice(members[a], rows)] + (1 - lam) * x[gen.choice(members[b], rows)]
        out.append(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12))
        lab.append(np.full(rows, j, np.int64))
        pairs.append((a, b))
    return np.concatenate(out).astype(np.float32), np.concatenate(lab), pairs


# Long (~60 lines): the pooled stage's sources in one place, as its description reads: every labelled
# corpus's classes (a quarter held out for the cut), every corpus's K-Means pseudo-classes, mixed classes.
def pooled_sources(corpora: dict, *, seed: int = 0, bag: int = 400, pseudo_k=(10, 40, 150), label_weight: float = 2.0,
                   concentration: float = 5.0, mixup: int = 0, mixup_rows: int = 100, device: str = "cpu"):
    """``corpora``: name -> (vectors (N, D), labels (N,) with -1 for no class, or None for a corpus whose
    labels are not to be used). ``mixup``: synthetic classes mixed from pairs of each labelled corpus's
    training classes (:func:`mixed_classes`; never from its held-out ones), as one more source per corpus.
    Returns (the stacked matrix, the training sampler, the calibration sampler or None, a list describing
    each source)."""
    names = list(corpora)
    if not names:
        raise ValueError("the pooled stage needs at least one corpus")
    dims = {np.asarray(corpora[n][0]).shape[1] for n in names}
    if len(dims) > 1:
        raise ValueError(f"the corpora have vectors of different sizes ({sorted(dims)}): pool corpora embedded by one model")
    # each labelled corpus's split first: the mixed classes come from its training classes only
    splits = {n: sampling.split_classes(np.asarray(y)[np.asarray(y) >= 0], 0.25, seed)
              for n, (_, y) in corpora.items() if y is not None and (np.asarray(y) >= 0).any()}
    gen = np.random.default_rng([seed, 31])
    mixed = {n: mixed_classes(np.asarray(corpora[n][0], np.float32), np.asarray(corpora[n][1]), fit, mixup,
                              mixup_rows, gen) for n, (fit, _) in splits.items()} if mixup > 0 else {}
    blocks = [np.asarray(corpora[n][0], np.float32) for n in names] + [m[0] for m in mixed.values()]
    offsets = np.cumsum([0] + [len(b) for b in blocks])
    X = torch_rows(np.concatenate(blocks), device)
    samplers, weights, calib, sources = [], [], [], []
    next_class = 0

    def classes_within(within: np.ndarray, lab: np.ndarray) -> np.ndarray:
        nonlocal next_class
        y = np.full(len(X), -2, np.int64)
        y[within] = np.where(lab >= 0, lab + next_class, -1)
        next_class += int(np.max(lab)) + 1
        return y

    for i, n in enumerate(names):
        x_n, y_n = corpora[n]
        within = np.arange(offsets[i], offsets[i + 1])
        if n in splits:
            first = next_class  # the corpus's class c is first + c in the stacked numbering
            y = classes_within(within, np.asarray(y_n))
            fit, held = (first + c for c in splits[n])
            samplers.append(sampling.Labelled(X, y, fit, bag=bag, episode_share=0.5, within=within,
                                              concentration=concentration))
            weights.append(label_weight)
            calib.append(sampling.Labelled(X, y, bag=bag, anchor_classes=held, within=within))
            sources.append({"corpus": n, "kind": "labels", "classes": int(len(fit)), "held_out": int(len(held))})
        for k, lab in pseudo_labels(np.asarray(x_n, np.float32), pseudo_k, seed):
            samplers.append(sampling.Labelled(X, classes_within(within, lab), bag=bag, episode_share=0.5,
                                              within=within, concentration=concentration))
            weights.append(1.0 / len(pseudo_k))
            sources.append({"corpus": n, "kind": f"kmeans-{k}"})
    for j, (n, (_, lab, pairs)) in enumerate(mixed.items()):
        if not len(lab):
            continue
        within = np.arange(offsets[len(names) + j], offsets[len(names) + j + 1])
        samplers.append(sampling.Labelled(X, classes_within(within, lab), bag=bag, episode_share=1.0,
                                          within=within, concentration=concentration))
        weights.append(label_weight / 2)
        sources.append({"corpus": n, "kind": "mixup", "classes": len(pairs), "rows": int(len(lab)),
                        "parents": [list(p) for p in pairs]})
    if not samplers:
        raise ValueError("no source to train on: every corpus is smaller than the smallest pseudo-class k")
    return X, sampling.Pooled(samplers, weights), (sampling.Pooled(calib) if calib else None), sources


def fit_pooled(corpora: dict, *, config: Config | None = None, seed: int = 0, bag: int = 400, pseudo_k=(10, 40, 150),
               label_weight: float = 2.0, concentration: float = 5.0, mixup: int = 0, device: str = "cpu",
               progress=None, checkpoint: Path | None = None, **train_params) -> tr.Trained:
    """The pooled stage (see the module's description): a new model trained on ``corpora``'s tasks
    (:func:`pooled_sources`), its cut chosen on the labelled corpora's held-out classes (none given: 0.5)."""
    X, sampler, calib, sources = pooled_sources(corpora, seed=seed, bag=bag, pseudo_k=pseudo_k,
                                                label_weight=label_weight, concentration=concentration, mixup=mixup,
                                                device=device)
    check_rows(len(X))
    cfg = config or Config(dim=X.shape[1], prf=100)
    params = {"schedule": "cosine", **train_params}
    trained = tr.train(X, sampler, stage="pooled", config=cfg, seed=seed, device=device, checkpoint=checkpoint,
                       progress=progress, **params)
    trained.stages[-1]["sources"] = sources
    if calib is not None:
        n_cal = len(calib.samplers)
        trained.calibration = {**tr.calibrate(trained.model, X, calib, bags=max(64, 16 * n_cal), seed=seed),
                               "stage": "pooled"}
    return trained


def pooled_corpora(target, pool: list[str], label_column: str = "label") -> dict:
    """The pooled stage's corpora for ``target`` (a loaded corpus; its labels are not used): ``pool``'s
    corpora by name with their ``label_column``; ValueError naming a corpus that lacks the column or
    was embedded by another model (its vectors would not be comparable)."""
    from core.corpus import load_corpus

    out = {target.name: (np.asarray(target.embeddings, np.float32), None)}
    for name in pool:
        if name == target.name:
            continue
        c = load_corpus(name, target.folder.parent)
        if label_column not in c.frame.columns:
            raise ValueError(f"corpus {name!r} has no column {label_column!r} to learn classes from")
        if c.manifest.get("models") != target.manifest.get("models") or c.dim != target.dim:
            raise ValueError(f"corpus {name!r} was embedded by {c.manifest.get('models')} ({c.dim}-d), "
                             f"{target.name!r} by {target.manifest.get('models')} ({target.dim}-d): pool corpora "
                             "embedded by the same model")
        out[name] = (np.asarray(c.embeddings, np.float32), classes_of_column(c.frame[label_column], name))
    return out
