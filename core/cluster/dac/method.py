"""DAC (registry key ``dac``, shown as "DAC"): Deep Amortized Clustering with a Set Transformer.

Finds its own number of clusters (k = None). ``model``: a model trained for the corpus (its name under
data/NAME/dac/; ``python -m precompute.dac train``); without one,
a small model is first trained on the corpus's own neighbourhoods (stage ``pretrain``, no labels:
a row's ``train_cluster_size`` nearest rows are its cluster, the next ones not), which sets the scale
of the clusters it finds.
``procedure``: ``consensus`` (default; many anchors, mutual memberships), ``iterative`` (the study's
anchor-remove-repeat) or ``grow`` (iterative, each cluster grown past its bag: its members anchor the
next bag) or ``merge`` (K-Means micro-clusters, merged where the model says they claim each other) or
``choose-k`` (K-Means, with the number of clusters the model judges best separated, 2 to 40).
``threshold``: the membership cut; by default the model's calibrated cut (chosen on held-out
classes, on its card), else 0.5. ``grow_cut``: the stricter cut of growth steps (default the card's
cut of precision 0.9 on those classes, else half-way from the cut to 1). See :mod:`core.cluster.dac`.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from core.cluster.base import ClusterContext, Clustering, Method, Progress, as_vectors

DEFAULTS = {"model": None, "procedure": "consensus", "bag": 800, "anchors": 2000, "threshold": None, "grow_cut": None,
            "min_size": 5, "train_epochs": 5, "train_steps": 60, "train_batch": 8, "train_lr": 1e-3, "train_cluster_size": 100,
            "hidden": 128}


def resolve_model(ctx: ClusterContext, model: str, device: str):
    """A model trained for the corpus, by its name under the corpus's dac/ folder. A name is
    checked like every other name (letters, digits, '_', '.', '-'): never a path, so a parameter
    cannot lead outside the corpus."""
    from core.cluster.dac import train as tr
    from core.cluster.dac.store import check_model_name, other_vectors

    if ctx.folder is None:
        raise ValueError("DAC with a stored model needs the corpus's folder")
    from core.cluster.dac.store import existing_file

    check_model_name(model)
    folder = Path(ctx.folder)
    trained = tr.load(existing_file(folder.name, model, folder.parent), device)
    trained_on = trained.corpus.get("name")
    if trained_on not in (None, Path(ctx.folder).name):
        raise ValueError(f"model {model!r} was trained on corpus {trained_on!r}, not {Path(ctx.folder).name!r}")
    other = other_vectors(trained, ctx.embedding_set)
    if other:
        raise ValueError(f"model {model!r}: {other}")
    return trained


# Long (~55 lines): the registry's fit for DAC: check, get or train a model, de-duplicate rows, run the
# procedure, map back. Each step is a call into core.cluster.dac; what stays here is their order.
def fit(ctx: ClusterContext, k: int | None = None, *, seed: int = 0, device: str = "cpu",
        progress: Progress | None = None, **params) -> Clustering:
    import torch

    from core.cluster.dac import infer, sampling
    from core.cluster.dac import train as tr
    from core.cluster.dac.model import Config

    p = METHOD.params(params)
    if k is not None:
        raise ValueError("DAC finds the number of clusters itself: give no k")
    if p["procedure"] not in PROCEDURES:
        raise ValueError(f"procedure must be one of {', '.join(map(repr, PROCEDURES))}, got {p['procedure']!r}")
    for cut in ("threshold", "grow_cut"):
        if p[cut] is not None and not (isinstance(p[cut], (int, float)) and not isinstance(p[cut], bool)
                                       and 0.0 <= float(p[cut]) <= 1.0):
            raise ValueError(f"DAC: parameter {cut!r} must be a number between 0 and 1, got {str(p[cut])[:40]!r}")
    t0 = time.perf_counter()
    x = as_vectors(ctx.vectors)
    xt = torch.from_numpy(x).to(device)
    history: list[dict] = []
    steps = 0
    if p["model"]:
        trained = resolve_model(ctx, str(p["model"]), device)
    else:
        from core.cluster.dac.stages import check_rows

        check_rows(len(x))
        bag = min(p["bag"], len(x))
        size = max(2, min(int(p["train_cluster_size"]), bag // 2))
        sampler = sampling.Neighbourhoods(xt, bag=bag, mode="fringe", reach=4 * size, inner=size, fringe=bag - size)
        trained = tr.train(xt, sampler, stage="pretrain", seed=seed, device=device,
                           config=Config(dim=x.shape[1], hidden=p["hidden"]), epochs=p["train_epochs"],
                           steps=p["train_steps"], batch=p["train_batch"], lr=p["train_lr"],
                           progress=(lambda e, n, info: progress(e, n + 1, {"phase": "train", **info}))
                           if progress else None)
        steps = p["train_epochs"] * p["train_steps"]  # the clustering is the last of steps + 1
        history += trained.history
    if trained.config.dim != x.shape[1]:
        raise ValueError(f"the model takes {trained.config.dim}-d vectors, the corpus has {x.shape[1]}-d embeddings")
    run = getattr(infer, PROCEDURES[p["procedure"]])
    cut = trained.cut if p["threshold"] is None else float(p["threshold"])
    extra = {"anchors": p["anchors"]} if p["procedure"] == "consensus" else {}
    if p["procedure"] == "grow":
        extra = {"grow_cut": trained.grow_cut if p["grow_cut"] is None else float(p["grow_cut"])}
    # identical texts (retweets, copies) have identical vectors: cluster each distinct vector once,
    # so copies always share a cluster
    distinct, first, inverse = np.unique(x, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)  # keep corpus order among the distinct rows
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    xd = xt[torch.from_numpy(np.sort(first)).to(device)]
    end = steps + 1  # the bar's end: the procedure's own steps follow the training's

    def procedure_progress(i: int, n: int, info: dict) -> None:
        nonlocal end
        end = steps + n
        progress(steps + i, end, {"phase": p["procedure"], **info})

    labels, info = run(trained.model, xd, bag=min(p["bag"], len(xd)), threshold=cut, min_size=p["min_size"],
                       seed=seed, progress=procedure_progress if progress else None, **extra)
    labels = labels[rank[inverse.ravel()]]
    info.update(distinct_rows=int(len(distinct)), threshold=cut, calibrated=p["threshold"] is None and bool(trained.calibration))
    history.append({"phase": p["procedure"], **info})
    found = int(labels.max()) + 1
    if progress:
        progress(end, end, {"phase": p["procedure"], "clusters": found})
    cent = np.stack([x[labels == c].mean(0) for c in range(found)]).astype(np.float32)
    return Clustering(labels.astype(np.int32), cent, "dac", found, {**p, "model": p["model"]}, history,
                      time.perf_counter() - t0, seed, device)


PROCEDURES = {"consensus": "consensus", "iterative": "iterative", "grow": "grown", "merge": "merged",
              "choose-k": "chosen"}  # name -> core.cluster.dac.infer's
LIMITS = {"bag": (2, 100_000), "anchors": (1, 10_000_000), "min_size": (1, 10_000_000),
          "train_epochs": (1, 10_000), "train_steps": (1, 1_000_000), "train_batch": (1, 10_000),
          "train_lr": (1e-12, 10.0), "train_cluster_size": (2, 100_000), "hidden": (1, 4096)}

METHOD = Method("dac", "DAC", "Deep Amortized Clustering (Lee et al. 2019): a Set Transformer predicts each "
                "anchor's cluster within its 800 nearest texts; the clusters come from a consensus of many "
                "anchors. Finds the number of clusters itself.", fit, DEFAULTS, needs_k=False, limits=LIMITS)
