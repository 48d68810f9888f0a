"""Deep Amortized Clustering on the labelled corpora: does anchored filtering find clusters it never
saw, and can its clustering match K-Means?

    python -m bench.dac export --corpus NAME [--label-column label] --out DIR   # embeddings + labels -> DIR/NAME.npz
    python -m bench.dac embed --csv A.csv B.csv --model M --out DIR            # the same from labelled CSVs (a GPU box)
    python -m bench.dac run --npz DIR/NAME.npz [...] [--device auto] [--save-models DIR]
    python -m bench.dac run --corpus NAME [...]                                 # straight from the data root
    python -m bench.dac speed --corpus NAME --model MODEL                       # one DAC search, ms
    python -m bench.dac baselines --corpus NAME [--seeds 0 1 2]                 # issue 31's baselines (CPU)
    python -m bench.dac pooled --targets A B ... [--extra C ...] [--seeds 0 1 2]  # many tasks, leave one corpus out
                                   [--npz-dir DIR]   # the corpora as DIR/NAME.npz (export or embed) instead of the store
    python -m bench.dac table RUN_FOLDER ...                                     # pooled runs' means, as markdown
    python -m bench.dac choosek --corpora A B [--seeds 0 1 2]                   # k chosen without labels (CPU)

Protocol (per corpus, per seed): the classes are split in two halves; a model is trained on the
first half only (stage pretrain, then stage labels), so every figure below is on classes the model
never saw:
- anchored filtering: an anchor from an unseen class, its bag = its ``bag`` nearest rows of the whole
  corpus; membership accuracy, precision, recall, F1 and average precision of the model's
  probabilities against "same class", beside cosine to the anchor (its AP; its accuracy with the
  threshold that is best on the training classes). With one anchor and nothing excluded, Suggest is
  COS, i.e. cosine to the anchor; the ``set`` rows use five anchors (cosine to their mean = Suggest
  with five included).
- clustering of the unseen classes' rows: the iterative and the consensus procedures (their own
  number of clusters) beside K-Means given the true number, NMI / ARI / ACC and the error in the
  number of clusters.
Also trains (``--save-models``) an unsupervised model (stages pretrain + kmeans, no labels) per corpus
for the simulated annotator's ``dac`` runs. Needs only numpy, torch, scipy and scikit-learn (runs on a
GPU box without the app's other packages).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from testbed.common import emit, run_folder
from core.cluster.dac import infer, sampling, stages
from core.cluster.dac import train as tr
from core.cluster.dac.method import PROCEDURES
from core.cluster.dac.model import Config
from core.cluster.base import torch_rows
from core.cluster.evaluate import label_scores

# Variants of a procedure the pooled command can run beside it: name -> (procedure, its extra arguments).
# choose-k-1se reads choose-k's own scores when both run (``one_se``); -r3 scores three K-Means runs per
# k, -a192 three times the anchors (the two sources of noise in a k's score).
VARIANTS = {"merge-strict": ("merge", {}), "choose-k-1se": ("choose-k", {"rule": "1se"}),
            "choose-k-r3": ("choose-k", {"restarts": 3}), "choose-k-a192": ("choose-k", {"anchors": 192})}


def export(a: argparse.Namespace) -> None:
    from core.corpus import load_corpus

    c = load_corpus(a.corpus)
    labels = stages.labels_from_column(c.frame[a.label_column])
    a.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(a.out / f"{a.corpus}.npz", x=np.asarray(c.embeddings, np.float16), labels=labels)
    print(a.out / f"{a.corpus}.npz")


def embed_csvs(a: argparse.Namespace) -> None:
    """Labelled CSVs (``text`` and ``--label-column``) embedded as the import embeds one model (the model's
    encode, rows made unit), written as DIR/NAME.npz for ``--npz`` / ``--npz-dir``: on a GPU box that has the
    model but not the imported corpora."""
    import pandas as pd

    from core.embed import l2_normalise, load_model

    model = load_model(str(a.model), a.device)
    a.out.mkdir(parents=True, exist_ok=True)
    for path in a.csv:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        if a.rows and a.rows < len(frame):  # a dry run: a seeded sample (files sorted by class have them all)
            frame = frame.sample(a.rows, random_state=0).sort_index()
        t = time.perf_counter()
        x = l2_normalise(np.asarray(model.encode(frame["text"].tolist(), batch_size=a.batch_size,
                                                 convert_to_numpy=True, show_progress_bar=False), np.float32))
        labels = stages.labels_from_column(frame[a.label_column])
        np.savez(a.out / f"{Path(path).stem}.npz", x=x, labels=labels)
        emit(kind="embedded", corpus=Path(path).stem, rows=len(x), dim=int(x.shape[1]),
             seconds=round(time.perf_counter() - t, 1))


def load_data(a: argparse.Namespace) -> tuple[str, np.ndarray, np.ndarray]:
    if a.npz:
        d = np.load(a.npz)
        return Path(a.npz).stem, d["x"].astype(np.float32), d["labels"].astype(np.int64)
    from core import embedsets
    from core.corpus import load_corpus

    c = load_corpus(a.corpus)
    x = embedsets.load_vectors(c, getattr(a, "embedding_set", None) or embedsets.IMPORT)  # the import's or adapted
    return a.corpus, np.asarray(x, np.float32), stages.labels_from_column(c.frame[a.label_column])


def blend_weight(prob: np.ndarray, prf: np.ndarray, truth: np.ndarray) -> float:
    """The weight w of a model's probability in ``w * prob + (1 - w) * prf`` with the best average
    precision on these (seen-class) bags, on a grid of tenths (0: the PRF rule alone, 1: the model alone)."""
    from sklearn.metrics import average_precision_score

    grid = np.round(np.linspace(0, 1, 11), 1)
    return float(grid[int(np.argmax([average_precision_score(truth, w * prob + (1 - w) * prf) for w in grid]))])


def best_threshold(scores: np.ndarray, truth: np.ndarray) -> float:
    """The cut with the best accuracy on these (training-class) scores (core.cluster.dac.train.best_cut)."""
    return tr.best_cut(scores, truth, "accuracy")


def anchor_sets(labels: np.ndarray, classes: np.ndarray, n_anchors: int, set_size: int, seed: int):
    """``n_anchors`` times: a random row of ``classes`` and ``set_size - 1`` more of its class (seeded)."""
    gen = np.random.default_rng(seed)
    pool = np.flatnonzero(np.isin(labels, classes))
    for _ in range(n_anchors):
        first = int(gen.choice(pool))
        same = np.flatnonzero(labels == labels[first])
        extra = gen.choice(same, set_size - 1, replace=False) if set_size > 1 else np.array([], dtype=np.int64)
        yield first, np.unique(np.concatenate([[first], extra])).astype(np.int64)


def anchored(model, x: torch.Tensor, labels: np.ndarray, classes: np.ndarray, n_anchors: int, bag: int, set_size: int,
             seed: int) -> dict[str, np.ndarray]:
    """Anchors from ``classes``; over their bags (the model's bag rows, anchors left out): the model's
    probabilities, cosine to the anchors' centre, the PRF score and the truth."""
    out: dict[str, list] = {"dac": [], "cosine": [], "prf": [], "truth": []}
    for first, anchors in anchor_sets(labels, classes, n_anchors, set_size, seed):
        rows, p = infer.members(model, x, anchors, bag=bag)
        centre = x[torch.as_tensor(anchors, device=x.device)].mean(0)
        out["dac"].append(p)
        out["cosine"].append((x[torch.as_tensor(rows, device=x.device)] @ centre).cpu().numpy() / float(centre.norm()))
        out["prf"].append(prf_scores(x, anchors, rows))
        out["truth"].append(labels[rows] == labels[first])
    return {k: np.concatenate(v) for k, v in out.items()}


def calibration_classes(seen: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The seen classes the model trains on and those its cut is chosen on: a quarter of the seen
    classes held out when there are at least four; with fewer (AgNews and SearchSnippets have 2 seen)
    the cut is chosen on the training classes' own bags (and the run says so)."""
    if len(seen) >= 4:
        gen = np.random.default_rng(seed + 7)
        perm = gen.permutation(seen)
        n = max(1, len(seen) // 4)
        return np.sort(perm[n:]), np.sort(perm[:n]), "held-out seen classes"
    return seen, seen, "the training classes (fewer than 4 seen classes)"


# Long (~70 lines): one seed's whole protocol (train, calibrate, membership, clustering) in the order
# the figures are read; the pieces (anchored, calibrate, the procedures) are functions of their own.
def one_run(name: str, x_np: np.ndarray, labels: np.ndarray, seed: int, a: argparse.Namespace, device: str) -> None:
    from sklearn.cluster import KMeans

    x = torch_rows(x_np, device)  # read-only (memory-mapped) rows shared, not copied, without torch's warning
    seen, unseen = sampling.split_classes(labels, 0.5, seed)
    fit, calib, calib_on = calibration_classes(seen, seed)
    cfg = Config(dim=x.shape[1], hidden=a.hidden, inducing=a.inducing, n1=a.n1, n2=a.n2)
    t0 = time.perf_counter()
    pre = stages.fit_stage(x_np, "pretrain", config=cfg, bag=a.bag, seed=seed, device=device,
                           epochs=a.pretrain_epochs, steps=a.steps, batch=a.batch, lr=a.lr)
    # stage labels on the seen half: the unseen classes' rows never appear in a training bag
    model = tr.train(x, sampling.Labelled(x, labels, fit, bag=a.bag, episode_share=0.5),
                     stage="labels", start=pre, seed=seed, device=device, epochs=a.epochs, steps=a.steps,
                     batch=a.batch, lr=a.lr)
    train_s = time.perf_counter() - t0
    # bags around the held-out seen classes' anchors, drawn from every seen row (never an unseen one)
    model.calibration = tr.calibrate(model.model, x, sampling.Labelled(x, labels, seen, bag=a.bag, anchor_classes=calib),
                                     seed=seed)
    steps = (a.pretrain_epochs + a.epochs) * a.steps
    emit(kind="train", corpus=name, seed=seed, seen=seen.tolist(), unseen=unseen.tolist(), trained_on=fit.tolist(),
         seconds=round(train_s, 1), steps=steps, ms_per_step=round(1000 * train_s / steps, 1), device=device,
         final_loss=round(model.history[-1]["loss"], 4), calibration={**model.calibration, "on": calib_on})
    for set_size in (1, 5):
        on_seen = anchored(model.model, x, labels, seen, a.anchors // 2, a.bag, set_size, seed + 1)
        cuts = {"dac": model.cut, "dac_0.5": 0.5, "cosine": best_threshold(on_seen["cosine"], on_seen["truth"]),
                "prf": best_threshold(on_seen["prf"], on_seen["truth"])}
        t1 = time.perf_counter()
        got = anchored(model.model, x, labels, unseen, a.anchors, a.bag, set_size, seed + 2)
        per_bag_ms = 1000 * (time.perf_counter() - t1) / a.anchors
        figures = {}
        for rule, cut in cuts.items():
            score = got[rule.split("_")[0]]  # "dac_0.5" reads the model's scores at another cut
            f = tr.scores(score, got["truth"], threshold=cut)
            f["best_f1"] = tr.scores(score, got["truth"], threshold=tr.best_cut(score, got["truth"], "f1"))["f1"]
            figures[rule] = {k: round(v, 4) for k, v in f.items()}
        emit(kind="anchored", corpus=name, seed=seed, anchors_per_bag=set_size, bag=a.bag, **figures,
             cuts={k: round(v, 4) for k, v in cuts.items()}, ms_per_bag=round(per_bag_ms, 1))
    rows = np.flatnonzero(np.isin(labels, unseen))
    y = labels[rows]
    k_true = len(unseen)
    km = KMeans(k_true, n_init=10, random_state=seed).fit(x_np[rows]).labels_
    emit(kind="cluster", corpus=name, seed=seed, method="kmeans", k_true=k_true, k_found=k_true,
         **{m: round(v, 4) for m, v in label_scores(y, km).items()})
    xs = x[torch.as_tensor(rows, device=x.device)]
    for proc in a.procedures:
        t1 = time.perf_counter()
        run = getattr(infer, PROCEDURES[proc])
        extra = {"anchors": min(a.consensus_anchors, len(rows))} if proc == "consensus" else {}
        if proc == "grow":
            extra = {"grow_cut": model.grow_cut}
        lab, info = run(model.model, xs, bag=a.bag, min_size=a.min_size, seed=seed, threshold=model.cut, **extra)
        emit(kind="cluster", corpus=name, seed=seed, method=f"dac-{proc}", k_true=k_true, k_found=int(lab.max()) + 1,
             seconds=round(time.perf_counter() - t1, 1), threshold=round(model.cut, 4), info=info,
             grow_cut=round(extra["grow_cut"], 4) if proc == "grow" else None,
             **{m: round(v, 4) for m, v in label_scores(y, lab).items()})
    if a.save_models and seed == a.seeds[0]:
        a.save_models.mkdir(parents=True, exist_ok=True)
        tr.save(model, a.save_models / f"{name}-labels-half.pt")
        # unsupervised model for the simulated annotator: pretrain + kmeans stage (k = true number of classes x 5)
        k = int(len(np.unique(labels[labels >= 0])) * 5)
        km_all = KMeans(k, n_init=1, random_state=seed).fit(x_np).labels_
        unsup = stages.fit_stage(x_np, "kmeans", km_all, start=pre, held_out=0.2, bag=a.bag, seed=seed, device=device,
                                 epochs=a.epochs, steps=a.steps, batch=a.batch, lr=a.lr)
        tr.save(unsup, a.save_models / f"{name}-kmeans.pt")
        emit(kind="saved", corpus=name, kmeans_k=k, val=unsup.history[-1])


def prf_scores(x: torch.Tensor, anchors: np.ndarray, rows: np.ndarray, feedback: int = 100) -> np.ndarray:
    """Pseudo-relevance feedback: the centre of the anchors and their ``feedback`` nearest rows of the
    whole corpus; the rows' cosine to it."""
    a = torch.as_tensor(anchors, device=x.device)
    centre = x[a].mean(0)
    near = (x @ centre).topk(min(len(x), feedback + len(anchors))).indices
    centre = x[torch.unique(torch.cat([a, near]))].mean(0)
    return ((x[torch.as_tensor(rows, device=x.device)] @ centre) / centre.norm()).cpu().numpy()


def bag_judgements(x: torch.Tensor, labels: np.ndarray, classes: np.ndarray, n_anchors: int, bag: int, set_size: int,
                   seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same anchors and bags as ``anchored`` (same seeds): cosine to the anchors' centre, the PRF
    score, and the truth, over every bag row."""
    coss, prfs, truths = [], [], []
    for first, anchors in anchor_sets(labels, classes, n_anchors, set_size, seed):
        rows = np.concatenate([anchors, infer.neighbourhood(x, anchors, bag - len(anchors))])
        centre = x[torch.as_tensor(anchors, device=x.device)].mean(0)
        coss.append((x[torch.as_tensor(rows, device=x.device)] @ centre).cpu().numpy() / float(centre.norm()))
        prfs.append(prf_scores(x, anchors, rows))
        truths.append(labels[rows] == labels[first])
    return np.concatenate(coss), np.concatenate(prfs), np.concatenate(truths)


def chosen_k(x: np.ndarray, ks: list[int], seed: int, sample: int = 4000) -> tuple[int, dict]:
    """K-Means with the k of the best silhouette (cosine, on a sample): no labels used."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    gen = np.random.default_rng(seed)
    pick = gen.choice(len(x), min(sample, len(x)), replace=False)
    sil = {}
    for k in ks:
        lab = KMeans(k, n_init=3, random_state=seed).fit(x).labels_
        sil[k] = float(silhouette_score(x[pick], lab[pick], metric="cosine")) if len(np.unique(lab[pick])) > 1 else -1.0
    return max(sil, key=sil.get), sil


def baselines(a: argparse.Namespace) -> None:
    """The baselines every DAC figure must be read beside (issue 31), on the same unseen halves: the
    PRF rule against plain cosine (1 and 5 anchors, same bags), and clustering where k is unknown
    (K-Means with k chosen by silhouette; HDBSCAN) beside K-Means given the true k."""
    from sklearn.cluster import HDBSCAN, KMeans

    name, x_np, labels = load_data(a)
    if a.subset and a.subset < len(x_np):
        pick = np.sort(np.random.default_rng(0).choice(len(x_np), a.subset, replace=False))
        x_np, labels = x_np[pick], labels[pick]
    run_folder(f"dac-baselines-{name}", sys.argv)
    x = torch_rows(x_np, "cpu")
    for seed in a.seeds:
        seen, unseen = sampling.split_classes(labels, 0.5, seed)
        for set_size in (1, 5):
            cs, ps, ts = bag_judgements(x, labels, seen, a.anchors // 2, a.bag, set_size, seed + 1)
            cut_cos, cut_prf = best_threshold(cs, ts), best_threshold(ps, ts)
            cu, pu, tu = bag_judgements(x, labels, unseen, a.anchors, a.bag, set_size, seed + 2)
            emit(kind="anchored-baselines", corpus=name, seed=seed, anchors_per_bag=set_size, bag=a.bag,
                 cosine={k: round(v, 4) for k, v in tr.scores(cu, tu, threshold=cut_cos).items()},
                 prf={k: round(v, 4) for k, v in tr.scores(pu, tu, threshold=cut_prf).items()},
                 cuts={"cosine": round(cut_cos, 4), "prf": round(cut_prf, 4)})
        rows = np.flatnonzero(np.isin(labels, unseen))
        xs, y, k_true = x_np[rows], labels[rows], len(unseen)
        t = time.perf_counter()
        km = KMeans(k_true, n_init=10, random_state=seed).fit(xs).labels_
        emit(kind="cluster", corpus=name, seed=seed, method="kmeans-true-k", k_true=k_true, k_found=k_true,
             seconds=round(time.perf_counter() - t, 1), **{m: round(v, 4) for m, v in label_scores(y, km).items()})
        t = time.perf_counter()
        ks = sorted({k for k in infer.K_GRID if k < len(rows)})
        k, sil = chosen_k(xs, ks, seed)
        lab = KMeans(k, n_init=10, random_state=seed).fit(xs).labels_
        emit(kind="cluster", corpus=name, seed=seed, method="kmeans-silhouette-k", k_true=k_true, k_found=k,
             silhouettes={str(kk): round(v, 4) for kk, v in sil.items()}, seconds=round(time.perf_counter() - t, 1),
             **{m: round(v, 4) for m, v in label_scores(y, lab).items()})
        for size in a.hdbscan_min_size:
            t = time.perf_counter()
            hd = HDBSCAN(min_cluster_size=size, copy=True).fit(xs).labels_  # euclidean on unit rows: cosine's order
            noise = float((hd < 0).mean())
            emit(kind="cluster", corpus=name, seed=seed, method=f"hdbscan-{size}", k_true=k_true,
                 k_found=int(hd.max()) + 1, noise_share=round(noise, 4), seconds=round(time.perf_counter() - t, 1),
                 **{m: round(v, 4) for m, v in label_scores(y, hd).items()})


def epoch_line(what: str):
    """A training progress hook that prints one line per finished epoch to stderr (steps, loss, seconds):
    a run stopped by a lease's clock still tells how fast it went."""
    t0 = time.perf_counter()

    def hook(done: int, total: int, info: dict) -> None:
        if info.get("epoch_done"):
            print(f"{what}: epoch {info['epoch']}/{info['epochs']}, step {done}/{total}, loss {info['loss']:.4f}, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return hook


def pooled_model(data: dict, target: str, seed: int, a: argparse.Namespace, device: str):
    """A model trained on many tasks without one label of ``target`` (core.cluster.dac.stages.fit_pooled):
    the classes of every other labelled corpus and K-Means pseudo-classes of every corpus, the target's
    too. Returns (trained, sources, seconds)."""
    corpora = {n: (x, None if n == target else y) for n, (x, y) in data.items()}
    cfg = Config(dim=data[target][0].shape[1], hidden=a.hidden, inducing=a.inducing, n1=a.n1, n2=a.n2, prf=a.prf)
    model = stages.fit_pooled(corpora, config=cfg, seed=seed, bag=a.bag, pseudo_k=a.pseudo_k,
                              label_weight=a.label_weight, concentration=a.concentration,
                              mixup=a.mixup, device=device, progress=epoch_line(f"pooled {target} seed {seed}"),
                              epochs=a.pooled_epochs, steps=a.pooled_steps, batch=a.batch, lr=a.lr)
    return model, model.stages[-1]["sources"], model.stages[-1]["seconds"]  # the training alone


def own_model(x_np: np.ndarray, labels: np.ndarray, seed: int, a: argparse.Namespace, device: str, prf: int):
    """The per-corpus recipe of ``run``: pretrain on the corpus, then its seen classes (a quarter held out
    for the cut where there are four or more)."""
    x = torch_rows(x_np, device)
    seen, _ = sampling.split_classes(labels, 0.5, seed)
    fit, calib, _ = calibration_classes(seen, seed)
    cfg = Config(dim=x.shape[1], hidden=a.hidden, inducing=a.inducing, n1=a.n1, n2=a.n2, prf=prf)
    t0 = time.perf_counter()
    pre = stages.fit_stage(x_np, "pretrain", config=cfg, bag=a.bag, seed=seed, device=device,
                           epochs=a.pretrain_epochs, steps=a.steps, batch=a.batch, lr=a.lr)
    model = tr.train(x, sampling.Labelled(x, labels, fit, bag=a.bag, episode_share=0.5), stage="labels", start=pre,
                     seed=seed, device=device, epochs=a.epochs, steps=a.steps, batch=a.batch, lr=a.lr)
    seconds = time.perf_counter() - t0
    model.calibration = tr.calibrate(model.model, x, sampling.Labelled(x, labels, seen, bag=a.bag, anchor_classes=calib),
                                     seed=seed)
    return model, seconds


# Long (~60 lines): one target and seed, the whole comparison in the order it is read (models, then
# membership, then clustering); the pieces are the functions above.
def pooled_one(data: dict, target: str, seed: int, a: argparse.Namespace, device: str) -> None:
    from sklearn.cluster import KMeans

    x_np, labels = data[target]
    x = torch_rows(x_np, device)
    seen, unseen = sampling.split_classes(labels, 0.5, seed)
    models = {}
    for variant in a.own:
        m, secs = own_model(x_np, labels, seed, a, device, a.prf if variant == "own-prf" else 0)
        models[variant] = m
        emit(kind="train", target=target, seed=seed, model=variant, seconds=round(secs, 1), calibration=m.calibration)
    if not a.skip_pooled:
        m, sources, secs = pooled_model(data, target, seed, a, device)
        models["pooled"] = m
        emit(kind="train", target=target, seed=seed, model="pooled", seconds=round(secs, 1), sources=sources,
             calibration=m.calibration, final_loss=round(m.history[-1]["loss"], 4))
    if not models:
        raise SystemExit("bench.dac pooled: no model to measure (--skip-pooled with --own empty)")
    for set_size in (1, 5):
        figures, cuts, gots = {}, {}, {}
        for name, m in models.items():
            got = anchored(m.model, x, labels, unseen, a.anchors, a.bag, set_size, seed + 2)
            f = tr.scores(got["dac"], got["truth"], threshold=m.cut)
            f["best_f1"] = tr.scores(got["dac"], got["truth"], threshold=tr.best_cut(got["dac"], got["truth"], "f1"))["f1"]
            figures[name], cuts[name] = {k: round(v, 4) for k, v in f.items()}, round(m.cut, 4)
            gots[name] = got
        first = next(iter(models.values())).model  # the rules' cuts: judged on the seen classes' bags
        on_seen = anchored(first, x, labels, seen, a.anchors // 2, a.bag, set_size, seed + 1)
        for rule in ("cosine", "prf"):  # the rules' cuts chosen on the seen classes, as in ``run``
            cut = best_threshold(on_seen[rule], on_seen["truth"])
            figures[rule] = {k: round(v, 4) for k, v in tr.scores(got[rule], got["truth"], threshold=cut).items()}
            cuts[rule] = round(cut, 4)
        if a.blend:  # the first model's probability and the PRF score, weighed (and cut) on bags of the seen
            # classes its training held out (all seen classes where fewer than four: see calibration_classes)
            held = anchored(first, x, labels, calibration_classes(seen, seed)[1], a.anchors // 2, a.bag, set_size,
                            seed + 3)
            w = blend_weight(held["dac"], held["prf"], held["truth"])
            cut = best_threshold(w * held["dac"] + (1 - w) * held["prf"], held["truth"])
            mine = gots[next(iter(models))]  # the first model's bags on the unseen classes
            blended = w * mine["dac"] + (1 - w) * mine["prf"]
            figures["blend"] = {**{k: round(v, 4) for k, v in tr.scores(blended, mine["truth"], threshold=cut).items()},
                                "weight": w}
            cuts["blend"] = round(cut, 4)
        emit(kind="anchored", target=target, seed=seed, anchors_per_bag=set_size, bag=a.bag, cuts=cuts, **figures)
    if not a.procedures:  # membership only
        return
    rows = np.flatnonzero(np.isin(labels, unseen))
    xs, y, k_true = x_np[rows], labels[rows], len(unseen)
    km = KMeans(k_true, n_init=10, random_state=seed).fit(xs).labels_
    emit(kind="cluster", target=target, seed=seed, method="kmeans-true-k", k_true=k_true, k_found=k_true,
         **{m: round(v, 4) for m, v in label_scores(y, km).items()})
    ks = sorted({k for k in infer.K_GRID if k < len(rows)})
    k, sil = chosen_k(xs, ks, seed)
    lab = KMeans(k, n_init=10, random_state=seed).fit(xs).labels_
    emit(kind="cluster", target=target, seed=seed, method="kmeans-silhouette-k", k_true=k_true, k_found=k,
         silhouettes={str(kk): round(v, 4) for kk, v in sil.items()},
         **{m: round(v, 4) for m, v in label_scores(y, lab).items()})
    xr = x[torch.as_tensor(rows, device=x.device)]
    for name, m in models.items():
        picked = None  # a choose-k run's (labels, info): the 1-SE rule reads the same scores
        for proc in a.procedures:
            t1 = time.perf_counter()
            # merge-strict: merging at the card's growth cut (precision 0.9 on the held-out classes)
            cut = m.grow_cut if proc == "merge-strict" else m.cut
            if proc == "choose-k-1se" and picked is not None:
                lab = one_se(picked[1], picked[0], m.model, xr, seed, a.min_size)
                info = {**picked[1], "chosen_k": infer.pick_k(picked[1]["scores"], "1se"), "rule": "1se"}
            else:
                base, extra = VARIANTS.get(proc, (proc, {}))
                lab, info = getattr(infer, PROCEDURES[base])(
                    m.model, xr, bag=a.bag, min_size=a.min_size, seed=seed, threshold=cut, **extra)
            if proc == "choose-k":
                picked = (lab, info)
            emit(kind="cluster", target=target, seed=seed, method=f"{name}-{proc}", k_true=k_true,
                 k_found=int(lab.max()) + 1, threshold=round(cut, 4), seconds=round(time.perf_counter() - t1, 1),
                 info={k: v for k, v in info.items() if k != "seconds"},
                 **{mm: round(v, 4) for mm, v in label_scores(y, lab).items()})


def pooled(a: argparse.Namespace) -> None:
    """Issue 31, items 2 and 4: for each target corpus, a model pooled over many tasks that never saw
    a label of it, beside models trained on its own seen classes (with and without the PRF feature),
    the PRF rule and cosine; clustering by merging K-Means micro-clusters, beside K-Means."""
    from argparse import Namespace

    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.npz_dir and a.embedding_set != "import":
        raise SystemExit("bench.dac pooled: --npz-dir holds one set of vectors a corpus; leave out --embedding-set")
    data = {}
    for n in list(dict.fromkeys(a.targets + a.extra)):
        npz = a.npz_dir / f"{n}.npz" if a.npz_dir else None
        name, x, y = load_data(Namespace(npz=npz, corpus=n, label_column=a.label_column,
                                         embedding_set=a.embedding_set if n in a.targets else None))
        if a.subset and a.subset < len(x):
            pick = np.sort(np.random.default_rng(0).choice(len(x), a.subset, replace=False))
            x, y = x[pick], y[pick]
        data[name] = (x, y)
    run_folder("dac-pooled", sys.argv)
    emit(kind="config", device_used=device, rows={n: len(v[0]) for n, v in data.items()},
         **{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()})
    for seed in a.seeds:
        for target in a.targets:
            pooled_one(data, target, seed, a, device)


def one_se(info: dict, labels: np.ndarray, model, x, seed: int, min_size: int) -> np.ndarray:
    """The clustering the one-standard-error rule takes from a ``choose-k`` run's scores (the best score's
    ``labels`` where both rules pick the same k): no second scoring of the candidates."""
    k = infer.pick_k(info["scores"], "1se")
    return labels if k == info["chosen_k"] else infer.kmeans_at(infer.as_tensor(x, model), k, seed=seed,
                                                                   min_size=min_size)


def choosek(a: argparse.Namespace) -> None:
    """How many topics, without a label (issue 31, k unknown, the user's own path): on a whole corpus
    (every class), a model trained on the corpus's own neighbourhoods only (stage pretrain, no labels,
    minutes on a CPU), then K-Means with the k it chooses (procedure ``choose-k``), beside K-Means with
    the silhouette's k on the same candidates and with the true k; labels only score the results."""
    from sklearn.cluster import KMeans

    if a.threads:
        torch.set_num_threads(a.threads)
    run_folder("dac-choosek", sys.argv)
    emit(kind="config", **{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()})
    for corpus in a.corpora:
        name, x_np, labels = load_data(argparse.Namespace(npz=None, corpus=corpus, label_column=a.label_column))
        k_true = len(np.unique(labels))
        ks = sorted({k for k in infer.K_GRID if k < len(x_np)})
        for seed in a.seeds:
            t0 = time.perf_counter()
            model = stages.fit_stage(x_np, "pretrain", config=Config(dim=x_np.shape[1], hidden=a.hidden, prf=a.prf),
                                     bag=a.bag, seed=seed, epochs=a.epochs, steps=a.steps, batch=a.batch, lr=a.lr)
            trained_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            lab, info = infer.chosen(model.model, x_np, ks=ks, bag=a.bag, seed=seed, min_size=a.min_size)
            runs = {"dac-choose-k-best": (lab, int(lab.max()) + 1, time.perf_counter() - t1, info)}
            lab = one_se(info, lab, model.model, x_np, seed, a.min_size)  # the same scores, the other rule
            runs["dac-choose-k-1se"] = (lab, int(lab.max()) + 1, 0.0,
                                        {**info, "chosen_k": infer.pick_k(info["scores"], "1se"), "rule": "1se"})
            t1 = time.perf_counter()
            k_sil, _ = chosen_k(x_np, ks, seed)
            runs["kmeans-silhouette-k"] = (KMeans(k_sil, n_init=10, random_state=seed).fit(x_np).labels_, k_sil,
                                           time.perf_counter() - t1, {})
            runs["kmeans-true-k"] = (KMeans(k_true, n_init=10, random_state=seed).fit(x_np).labels_, k_true, 0.0, {})
            for method, (lab, k, secs, info) in runs.items():
                emit(kind="cluster", target=name, seed=seed, method=method, k_true=k_true, k_found=k,
                     seconds=round(secs, 1), train_seconds=round(trained_s, 1),
                     info={kk: v for kk, v in info.items() if kk != "seconds"},
                     **{m: round(v, 4) for m, v in label_scores(labels, lab).items()})


def pooled_table(folders: list[Path]) -> str:
    """Markdown tables of ``pooled`` runs: means over the seeds found, per target (membership: AP and
    accuracy at each model's cut and the rules' seen-class cuts; clustering: NMI / ACC and k found)."""
    import json
    from collections import defaultdict

    lines = [json.loads(line) for f in folders for line in (Path(f) / "lines.jsonl").read_text().splitlines()]
    rules = ("own", "own-prf", "pooled", "cosine", "prf")
    anch, clus = defaultdict(list), defaultdict(list)
    for r in lines:
        if r.get("kind") == "anchored":
            anch[(r["target"], r["anchors_per_bag"])].append(r)
        elif r.get("kind") == "cluster":
            clus[(r["target"], r["method"])].append(r)

    def mean(rs, *keys):
        vals = [r for r in rs]
        for k in keys:
            vals = [v.get(k) if isinstance(v, dict) else None for v in vals]
        vals = [v for v in vals if v is not None]
        return float(np.mean(vals)) if vals else float("nan")

    def cell(value: float) -> str:  # a model the run did not train (``--own`` left out) shows "-"
        return "-" if np.isnan(value) else f"{value:.3f}"

    out = ["| corpus | anchors | seeds | AP " + " / ".join(rules) + " | accuracy at cut " + " / ".join(rules) + " |",
           "|---|---|---|---|---|"]
    for (t, k), rs in sorted(anch.items()):
        ap = " / ".join(cell(mean(rs, r, "average_precision")) for r in rules)
        acc = " / ".join(cell(mean(rs, r, "accuracy")) for r in rules)
        out.append(f"| {t} | {k} | {len(rs)} | {ap} | {acc} |")
    out += ["", "| corpus | method | seeds | NMI | ACC | k found (true) |", "|---|---|---|---|---|---|"]
    for (t, m), rs in sorted(clus.items()):
        ks = "/".join(str(r["k_found"]) for r in rs)
        out.append(f"| {t} | {m} | {len(rs)} | {100 * mean(rs, 'nmi'):.1f} | {100 * mean(rs, 'acc'):.1f} | "
                   f"{ks} ({rs[0]['k_true']}) |")
    return "\n".join(out)


def run(a: argparse.Namespace) -> None:
    name, x, labels = load_data(a)
    if a.subset and a.subset < len(x):
        pick = np.sort(np.random.default_rng(0).choice(len(x), a.subset, replace=False))
        x, labels = x[pick], labels[pick]
    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    run_folder(f"dac-{name}", sys.argv)
    emit(kind="config", name=name, rows=len(x), device_used=device,
         gpu=torch.cuda.get_device_name(0) if device == "cuda" else None,
         **{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()})
    for seed in a.seeds:
        one_run(name, x, labels, seed, a, device)


def speed(a: argparse.Namespace) -> None:
    """Median ms of one DAC search (the Annotate button: 20 included, 5 excluded, k 10) on a corpus
    with a trained model, sharing the search index's read-only matrix (now) against copying it into
    a writable float32 matrix first (what every search did before), in the same run; Suggest beside."""
    from testbed.common import median_ms
    from core.cluster.dac import store as models
    from core.corpus import load_corpus
    from core.search import REGISTRY, SearchContext
    from core.search.index import VectorIndex

    c = load_corpus(a.corpus)
    run_folder(f"dac-speed-{a.corpus}", sys.argv)
    trained = models.load(a.corpus, a.model)
    ctx = SearchContext(VectorIndex(c.embeddings), dac=trained)
    gen = np.random.default_rng(0)
    inc, exc = gen.choice(c.n, 20, replace=False), gen.choice(c.n, 5, replace=False)
    exc = np.setdiff1d(exc, inc)
    shared = median_ms(lambda: REGISTRY["dac"].search(ctx, inc, exc, 10), repeat=a.repeat)
    copied = median_ms(lambda: infer.members(trained.model, np.array(ctx.vectors), inc, non_members=exc),
                       repeat=a.repeat)
    suggest = median_ms(lambda: REGISTRY["suggest"].search(ctx, inc, exc, 10), repeat=a.repeat)
    emit(kind="speed", corpus=a.corpus, rows=c.n, model=a.model, dac_ms=round(shared, 1),
         dac_copying_the_matrix_ms=round(copied, 1), suggest_without_words_ms=round(suggest, 1), repeat=a.repeat)


def model_args(p: argparse.ArgumentParser, *, bag: int, epochs: int, steps: int, batch: int) -> None:
    """The options every command that trains a model takes (labels, seeds, the model's size and training),
    with the command's own defaults for bag, epochs, steps and batch."""
    p.add_argument("--label-column", default="label")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--bag", type=int, default=bag)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--batch", type=int, default=batch)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--min-size", type=int, default=10)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("--corpus", required=True)
    e.add_argument("--label-column", default="label")
    e.add_argument("--out", type=Path, required=True)
    em = sub.add_parser("embed", help="labelled CSVs embedded into DIR/NAME.npz (a GPU box without the corpora)")
    em.add_argument("--csv", nargs="+", type=Path, required=True)
    em.add_argument("--model", required=True, help="a sentence-transformers name or local path (the import's model)")
    em.add_argument("--out", type=Path, required=True)
    em.add_argument("--label-column", default="label")
    em.add_argument("--device", default="auto")
    em.add_argument("--batch-size", type=int, default=256)
    em.add_argument("--rows", type=int, help="a seeded sample of this many rows of each file (a dry run)")
    r = sub.add_parser("run")
    model_args(r, bag=800, epochs=20, steps=100, batch=8)
    r.add_argument("--npz", type=Path)
    r.add_argument("--corpus")
    r.add_argument("--subset", type=int, help="a random sample of this many rows (CPU runs)")
    r.add_argument("--device", default="auto")
    r.add_argument("--inducing", type=int, default=32)
    r.add_argument("--n1", type=int, default=2)
    r.add_argument("--n2", type=int, default=2)
    r.add_argument("--pretrain-epochs", type=int, default=5)
    r.add_argument("--anchors", type=int, default=200, help="anchors drawn from the unseen classes")
    r.add_argument("--consensus-anchors", type=int, default=2000)
    r.add_argument("--procedures", nargs="+", default=list(PROCEDURES), choices=list(PROCEDURES))
    r.add_argument("--save-models", type=Path)
    ck = sub.add_parser("choosek", help="k chosen by a label-free model on whole corpora, beside the silhouette's")
    model_args(ck, bag=400, epochs=2, steps=30, batch=4)
    ck.add_argument("--corpora", nargs="+", required=True)
    ck.add_argument("--threads", type=int)
    ck.add_argument("--prf", type=int, default=100)
    b = sub.add_parser("baselines", help="PRF, K-Means with a chosen k and HDBSCAN on the unseen halves (CPU)")
    b.add_argument("--npz", type=Path)
    b.add_argument("--corpus")
    b.add_argument("--label-column", default="label")
    b.add_argument("--subset", type=int, help="a random sample of this many rows")
    b.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    b.add_argument("--bag", type=int, default=800)
    b.add_argument("--anchors", type=int, default=200)
    b.add_argument("--hdbscan-min-size", type=int, nargs="+", default=[10, 50])
    po = sub.add_parser("pooled", help="many-task training, leave one corpus out, micro-cluster merging (issue 31)")
    model_args(po, bag=400, epochs=10, steps=50, batch=4)
    po.add_argument("--targets", nargs="+", required=True, help="imported corpora with labels, evaluated in turn")
    po.add_argument("--extra", nargs="*", default=[], help="more labelled corpora, only trained on")
    po.add_argument("--npz-dir", type=Path, help="read every corpus from DIR/NAME.npz (bench.dac export or embed)")
    po.add_argument("--subset", type=int, help="a random sample of this many rows of each corpus")
    po.add_argument("--device", default="auto")
    po.add_argument("--threads", type=int, help="torch threads (two runs side by side: 1 each)")
    po.add_argument("--inducing", type=int, default=32)
    po.add_argument("--n1", type=int, default=2)
    po.add_argument("--n2", type=int, default=2)
    po.add_argument("--prf", type=int, default=100, help="the PRF feature's feedback rows (0: off)")
    po.add_argument("--own", nargs="*", default=["own-prf", "own"], choices=["own-prf", "own"])
    po.add_argument("--skip-pooled", action="store_true", help="own-corpus models only (no leave-one-corpus-out model)")
    po.add_argument("--embedding-set", default="import", help="the targets' vectors: the import's or an adapted "
                    "set (python -m bench.adapt import-set); the --extra corpora keep the import's")
    po.add_argument("--pretrain-epochs", type=int, default=2)
    po.add_argument("--pooled-epochs", type=int, default=10)
    po.add_argument("--pooled-steps", type=int, default=100)
    po.add_argument("--concentration", type=float, default=5.0, help="Dirichlet concentration of episodes")
    po.add_argument("--label-weight", type=float, default=2.0, help="a labelled corpus's weight (pseudo: 1 a corpus)")
    po.add_argument("--pseudo-k", type=int, nargs="+", default=[10, 40, 150])
    po.add_argument("--mixup", type=int, default=0, help="synthetic classes mixed from pairs of each labelled "
                    "corpus's training classes (0: none)")
    po.add_argument("--anchors", type=int, default=200)
    po.add_argument("--procedures", nargs="*", default=["merge", "merge-strict"],
                    choices=list(PROCEDURES) + list(VARIANTS), help="none: membership figures only")
    po.add_argument("--blend", action="store_true", help="also the first model's probability blended with the "
                    "PRF score (weight and cut chosen on the seen classes its training held out)")
    tb = sub.add_parser("table", help="markdown means of pooled runs' folders")
    tb.add_argument("folders", nargs="+", type=Path)
    sp = sub.add_parser("speed")
    sp.add_argument("--corpus", required=True)
    sp.add_argument("--model", default="dac")
    sp.add_argument("--repeat", type=int, default=7)
    a = p.parse_args(argv)
    if a.command == "export":
        export(a)
    elif a.command == "embed":
        embed_csvs(a)
    elif a.command == "speed":
        speed(a)
    elif a.command == "table":
        print(pooled_table(a.folders))
    elif a.command == "choosek":
        choosek(a)
    elif a.command == "pooled":
        pooled(a)
    elif a.command == "baselines":
        if not (a.npz or a.corpus):
            p.error("baselines needs --npz or --corpus")
        baselines(a)
    else:
        if not (a.npz or a.corpus):
            p.error("run needs --npz or --corpus")
        run(a)


if __name__ == "__main__":
    main()
