"""Encoder-adapting methods (ClusterBERT, DEC-MLM, DEC-CRL, SCCL) on the labelled benchmarks, as one grid:
every method x base encoder x benchmark x seed, beside K-Means and DEC on the same encoder's own embeddings
(same run, same texts), with one table of mean ± sd.

    python -m bench.adapt --data ../shared/data/stackoverflow.csv [more.csv ...]
        [--method sccl dec_crl ...] [--model default multilingual-e5-small ...] [--seeds 0 1 2]
        [--param name=value | --param method:name=value ...] [--device auto] [--subset N]
        [--threads T] [--save-embeddings DIR] [--score-epochs]
    python -m bench.adapt table results/adapt-A results/adapt-B ...   (one table from several runs)

k = the number of classes. For each method: NMI / ACC of its own assignment and of K-Means on its
adapted embeddings, seconds and minutes per epoch per 10k texts; the run folder's ``table.md`` is
rewritten after every fit (mean ± sd over seeds, the published figures beside), so a long grid can be
read while it runs. ``--score-epochs``: K-Means on the adapted embeddings after every epoch too (lines
"K-Means on <method>'s embeddings after epoch E"; ClusterBERT's after each epoch that encodes the corpus), to
see where a run turns (the last epoch's repeats the usual K-Means line). ``--subset N`` draws N texts (the same N for
every method and seed: seed 0 of the draw). ``--save-embeddings`` writes the adapted embeddings (float16,
corpus order) as DIR/<name>-<method>-<model>-s<seed>.npy, to import as an embedding set for the simulated annotator
(``python -m bench.adapt import-set``); ``python -m bench.adapt join-sets --corpus NAME --sets import SET
--name NEW`` stores the sets side by side as one (each row unit, joined, scaled back to unit length: an
ensemble the simulated annotator can run on). Needs numpy, pandas, torch, scikit-learn and
sentence-transformers only (runs on a GPU box without the app's other packages).
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from testbed.common import emit, run_folder
from core.cluster.evaluate import label_scores

# Published NMI / ACC x 100 on the full benchmarks (bench/RESULTS.md, "Quality"); None where a paper does not
# report it. DEC-CRL's StackOverflow NMI is 76.7 in that table and 78.6 in the issue-12 text: the paper is not in
# this machine's library, so both are shown until someone checks it.
PUBLISHED = {
    "ClusterBERT": {"stackoverflow": (75.6, 79.9), "biomedical": (43.4, 38.2), "searchsnippets": (65.5, 57.6),
                    "agnews8000": (67.2, 87.1)},
    "DEC-CRL": {"stackoverflow": ("76.7 or 78.6", 82.3), "biomedical": (41.5, 47.0), "agnews8000": (69.2, 88.9)},
    "SCCL": {"stackoverflow": (None, 75.5), "biomedical": (None, 46.2), "searchsnippets": (None, 85.2),
             "agnews8000": (None, 88.2)},
    "Pugachev & Burtsev": {"stackoverflow": (None, 84.7), "biomedical": (None, 47.8), "searchsnippets": (None, 87.7),
                           "agnews8000": (None, 86.5)},
}


def kmeans_scores(x: np.ndarray, y: np.ndarray, k: int, seed: int) -> dict:
    from sklearn.cluster import KMeans

    return label_scores(y, KMeans(k, n_init=10, random_state=seed).fit(x).labels_)


def _scores(s: dict) -> dict:
    return {m: round(v, 4) for m, v in s.items()}


def method_params(pairs: list[tuple[str, object]], method: str) -> dict:
    """``name=value`` applies to every adapting method that takes it; ``method:name=value`` to one."""
    from core.cluster import REGISTRY

    out = {}
    for key, value in pairs:
        owner, _, name = key.rpartition(":")
        if owner and owner != method:
            continue
        if owner or name in REGISTRY[method].defaults:
            out[name] = value
    return out


def base_embeddings(texts: list[str], model: str, device: str) -> np.ndarray:
    from core.embed import load_model, resolve_model

    m = load_model(model if model == "multilingual-e5-small" else resolve_model(model), device)
    return np.asarray(m.encode(texts, batch_size=128, convert_to_numpy=True, show_progress_bar=False), np.float32)


def table(rows: list[dict]) -> str:
    """Mean ± sd over seeds, NMI / ACC x 100, one line per dataset x encoder x method, and the published
    figures per dataset."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["dataset"], r["model"], r["method"])].append(r)

    def devices(rs):  # seeds of one line may have run on several (the CPU here, a GPU box)
        return ", ".join(sorted({r["device"] for r in rs}))

    def ms(values):
        v = 100 * np.asarray(values, float)
        return f"{v.mean():.1f}" + (f"±{v.std(ddof=1):.1f}" if len(v) > 1 else "")

    out = ["| dataset | encoder | method | seeds | NMI | ACC | minutes / epoch / 10k texts | device |",
           "|---|---|---|---|---|---|---|---|"]
    for (data, model, method), rs in sorted(groups.items()):
        by_device = defaultdict(list)  # a CPU's minutes and a GPU's are not one median
        for r in rs:
            if r.get("minutes_per_epoch_per_10k") is not None:
                by_device[r["device"]].append(r["minutes_per_epoch_per_10k"])
        mins = ", ".join(f"{np.median(v):.2f}" + (f" ({d})" if len(by_device) > 1 else "")
                         for d, v in sorted(by_device.items())) or "-"
        out.append(f"| {data} | {model} | {method} | {len(rs)} | {ms([r['nmi'] for r in rs])} | "
                   f"{ms([r['acc'] for r in rs])} | {mins} | {devices(rs)} |")
    out += ["", "Published (full corpora, NMI / ACC):", ""]
    for paper, figs in PUBLISHED.items():
        out.append(f"- {paper}: " + "; ".join(f"{d} {n if n is not None else '-'} / {a}" for d, (n, a) in figs.items()))
    return "\n".join(out) + "\n"


def run(a: argparse.Namespace) -> None:
    import torch

    from core.cluster import REGISTRY, ClusterContext

    if a.threads:
        torch.set_num_threads(a.threads)
    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    folder = run_folder("adapt-" + "-".join(Path(d).stem for d in a.data)[:60], sys.argv)
    rows: list[dict] = []

    def score(**fields) -> None:
        emit(kind="score", **fields)
        rows.append(fields)
        (folder / "table.md").write_text(table(rows), encoding="utf-8")

    for data in a.data:
        frame = pd.read_csv(data, dtype=str, keep_default_na=False)
        if a.subset and a.subset < len(frame):
            frame = frame.sample(a.subset, random_state=0).reset_index(drop=True)
        texts, y = frame["text"].tolist(), pd.factorize(frame["label"])[0]
        k, name = int(y.max()) + 1, Path(data).stem
        for model in a.model:
            t0 = time.perf_counter()
            base = base_embeddings(texts, model, device)
            emit(kind="config", dataset=name, rows=len(texts), k=k, device=device, model=model,
                 gpu=torch.cuda.get_device_name(0) if device == "cuda" else None, params=dict(a.param),
                 embed_seconds=round(time.perf_counter() - t0, 1))
            common = dict(dataset=name, model=model, device=device)
            for seed in a.seeds:
                score(**common, seed=seed, method="K-Means", **_scores(kmeans_scores(base, y, k, seed)))
                t0 = time.perf_counter()
                dec = REGISTRY["dec"].fit(ClusterContext(base), k, seed=seed, device=device)
                score(**common, seed=seed, method="DEC", seconds=round(time.perf_counter() - t0, 1),
                      **_scores(label_scores(y, dec.labels)))
                for method in a.method:
                    _adapt(a, method, model, texts, y, k, seed, device, base, score, common)


def _adapt(a, method, model, texts, y, k, seed, device, base, score, common) -> None:
    from core.cluster import REGISTRY, ClusterContext
    from core.embed import resolve_model

    label = REGISTRY[method].label
    params = method_params(a.param, method)
    t0 = time.perf_counter()

    def watch(done: int, x: np.ndarray) -> None:  # the last epoch's too: the whole path in one run of lines
        score(**common, seed=seed, method=f"K-Means on {label}'s embeddings after epoch {done}", params=params,
              **_scores(kmeans_scores(x, y, k, seed)))

    try:
        r = REGISTRY[method].fit(ClusterContext(base, texts, watch=watch if a.score_epochs else None), k, seed=seed,
                                 device=device,
                                 model=model if model == "multilingual-e5-small" else resolve_model(model), **params,
                                 progress=lambda s, t, info: emit(kind="epoch", **common, method=method, seed=seed,
                                                                  **info))
    except ValueError as exc:  # e.g. a method that this encoder cannot run (a model without a <mask> token for DEC-MLM)
        emit(kind="skipped", **common, method=method, seed=seed, reason=str(exc))
        return
    seconds = time.perf_counter() - t0
    epochs = sum(1 for h in r.history if h.get("phase") not in ("final", "head"))  # head: a warm-up
    per = dict(seconds=round(seconds, 1),
               minutes_per_epoch_per_10k=round(seconds / 60 / max(1, epochs) / (len(texts) / 10_000), 3))
    if r.model_dir is not None:  # the adapted encoder (90-450 MB), which no figure reads: a whole grid's 96 fits
        shutil.rmtree(r.model_dir, ignore_errors=True)  # would leave tens of GB in the system's temporary folder
    emit(kind="history", **common, method=method, seed=seed, history=r.history)
    score(**common, seed=seed, method=label, params=params, **per, **_scores(label_scores(y, r.labels)))
    score(**common, seed=seed, method=f"K-Means on {label}'s embeddings", params=params,
          **_scores(kmeans_scores(r.embeddings, y, k, seed)))
    if a.save_embeddings:
        a.save_embeddings.mkdir(parents=True, exist_ok=True)
        tag = Path(model).name if model != "default" else "minilm"
        np.save(a.save_embeddings / f"{common['dataset']}-{method}-{tag}-s{seed}.npy", r.embeddings.astype(np.float16))


def import_set(a: argparse.Namespace) -> None:
    """Store saved adapted embeddings as an embedding set of an imported corpus (same rows, same order)."""
    from core import embedsets
    from core.corpus import load_corpus
    from core.embed import l2_normalise

    corpus = load_corpus(a.corpus)
    x = l2_normalise(np.load(a.npy).astype(np.float32))
    s = embedsets.save(corpus, a.name, x, {"method": a.method, "source": str(a.npy), "note": a.note})
    print(s.path)


def join_sets(corpus_name: str, sets: list[str], name: str, root: Path | None = None):
    """Store the named embedding sets of a corpus side by side as one set: each set's rows made unit, joined
    and divided by sqrt(number of sets), so a row stays unit and each set weighs the same in a cosine."""
    from core import embedsets
    from core.corpus import load_corpus

    from core.embed import combine

    if len(sets) < 2:
        raise ValueError("join-sets needs at least two sets (the import's is 'import')")
    corpus = load_corpus(corpus_name, root)
    parts = [np.asarray(embedsets.load_vectors(corpus, s), dtype=np.float32) for s in sets]
    # the import's own ensemble of models, kept at its full width (no PCA)
    joined, _ = combine(parts, dim=sum(p.shape[1] for p in parts))
    return embedsets.save(corpus, name, joined, {"method": "joined", "source": " + ".join(sets),
                                                 "note": "each set's rows unit, joined, / sqrt(number of sets)"})


def parse_param(text: str):
    key, _, value = text.partition("=")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def merge(folders: list[Path], same: dict[str, str] | None = None) -> str:
    """One table from several runs' ``lines.jsonl`` (grids split over processes or sessions). Runs with
    other parameters for a method are kept apart by labelling the method with its parameters. ``same`` reads
    an encoder's name as another's (the packaged MiniLM carried to a GPU box as ``/tmp/minilm`` is ``default``),
    so seeds run on the CPU and on a GPU make one line."""
    import json

    same = same or {}

    rows, seen = [], set()
    for folder in folders:
        last_params: dict = {}
        rows_of: dict[str, int] = {}
        for line in (folder / "lines.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r.get("kind") == "config":  # a subset and the full corpus are different tables
                rows_of[r["dataset"]] = r["rows"]
            if r.get("kind") != "score":
                continue
            r["dataset"] = f"{r['dataset']} ({rows_of.get(r['dataset'], '?')} texts)"
            r["model"] = same.get(r["model"], r["model"])
            if r["method"].startswith("K-Means on "):  # the K-Means of the fit just before (older lines lack params)
                r.setdefault("params", last_params)
            elif "params" in r:
                last_params = r["params"]
            if r.get("params"):
                r["method"] += " (" + ", ".join(f"{k}={v}" for k, v in sorted(r["params"].items())) + ")"
            key = (r["dataset"], r["model"], r["method"], r["seed"])
            if key not in seen:  # the same baseline (same texts, seed) run again by another process: once
                seen.add(key)
                rows.append(r)
    return table(rows)


def _subcommands() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    p = argparse.ArgumentParser(prog="python -m bench.adapt")
    sub = p.add_subparsers(dest="cmd", required=True)
    table_p = sub.add_parser("table", description="one table (mean ± sd over seeds) from several runs' folders")
    table_p.add_argument("runs", type=Path, nargs="+", help="run folders (results/adapt-*), each with a lines.jsonl")
    table_p.add_argument("--same", action="append", default=[], metavar="ENCODER=AS",
                         help="read one encoder's runs as another's, e.g. /tmp/minilm=default (a carried copy)")
    imp = sub.add_parser("import-set", description="store adapted vectors (.npy) as an embedding set of a corpus")
    imp.add_argument("--corpus", required=True)
    imp.add_argument("--npy", type=Path, required=True)
    imp.add_argument("--name", required=True)
    imp.add_argument("--note", default="")
    imp.add_argument("--method", default="clusterbert", help="the method that adapted the embeddings")
    join = sub.add_parser("join-sets", description="one embedding set of several, each weighing alike")
    join.add_argument("--corpus", required=True)
    join.add_argument("--sets", nargs="+", required=True, help="embedding sets of the corpus ('import': its own)")
    join.add_argument("--name", required=True)
    return p, sub.choices


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    p, subs = _subcommands()
    if argv[:1] and argv[0] in subs:  # a subcommand; anything else is the grid's options
        a = p.parse_args(argv)
        if a.cmd == "table":
            missing = [str(f) for f in a.runs if not (f / "lines.jsonl").is_file()]
            if missing:
                subs["table"].error("no lines.jsonl in " + ", ".join(missing))
            bad = [s for s in a.same if "=" not in s]
            if bad:
                subs["table"].error(f"--same takes ENCODER=AS, not {bad[0]!r}")
            print(merge(a.runs, dict(s.split("=", 1) for s in a.same)), end="")
        elif a.cmd == "import-set":
            import_set(a)
        else:
            print(join_sets(a.corpus, a.sets, a.name).path)
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, nargs="+", required=True)
    p.add_argument("--method", "--methods", nargs="+", default=["sccl"],
                   choices=["clusterbert", "dec_mlm", "dec_crl", "sccl"])
    p.add_argument("--model", "--models", nargs="+", default=["default"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--param", action="append", default=[], type=parse_param)
    p.add_argument("--device", default="auto")
    p.add_argument("--subset", type=int)
    p.add_argument("--threads", type=int, help="torch threads (two grids side by side: 1 each)")
    p.add_argument("--save-embeddings", type=Path)
    p.add_argument("--score-epochs", action="store_true",
                   help="K-Means on the adapted embeddings after every epoch as well as after the last")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
