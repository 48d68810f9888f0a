"""ClusterBERT (or ``--method dec_mlm`` or ``dec_crl``) on the labelled benchmarks: NMI / ACC of its clustering, and of K-Means on its adapted
embeddings, beside K-Means on the encoder's own embeddings (same run, same texts).

    python -m bench.adapt --data ../shared/data/stackoverflow.csv [--model default|PATH] [--seeds 0]
        [--param name=value ...] [--device auto] [--subset N] [--save-embeddings DIR]

k = the number of classes. ``--save-embeddings`` writes the adapted embeddings (float16, corpus
order) as DIR/<name>-clusterbert-s<seed>.npy, to import as an embedding set for the simulated
annotator (``python -m bench.adapt import-set``). Needs numpy, pandas, torch, scikit-learn and
sentence-transformers only (runs on a GPU box without the app's other packages).
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from testbed.common import emit, run_folder
from core.cluster.evaluate import label_scores


def kmeans_scores(x: np.ndarray, y: np.ndarray, k: int, seed: int) -> dict:
    from sklearn.cluster import KMeans

    return label_scores(y, KMeans(k, n_init=10, random_state=seed).fit(x).labels_)


def run(a: argparse.Namespace) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from core.cluster import REGISTRY, ClusterContext
    from core.embed import resolve_model

    frame = pd.read_csv(a.data, dtype=str, keep_default_na=False)
    if a.subset and a.subset < len(frame):
        frame = frame.sample(a.subset, random_state=0).reset_index(drop=True)
    texts, y = frame["text"].tolist(), pd.factorize(frame["label"])[0]
    k = int(y.max()) + 1
    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    name = Path(a.data).stem
    run_folder(f"adapt-{name}", sys.argv)
    params = dict(a.param)
    model_path = resolve_model(a.model)
    t0 = time.perf_counter()
    base = SentenceTransformer(model_path, device=device).encode(texts, batch_size=256, normalize_embeddings=True)
    emit(kind="config", dataset=name, rows=len(texts), k=k, device=device, model=a.model,
         gpu=torch.cuda.get_device_name(0) if device == "cuda" else None, params=params,
         embed_seconds=round(time.perf_counter() - t0, 1))
    for seed in a.seeds:
        emit(kind="score", dataset=name, seed=seed, method="kmeans-on-base",
             **{m: round(v, 4) for m, v in kmeans_scores(base, y, k, seed).items()})
        ctx = ClusterContext(base, texts)
        t0 = time.perf_counter()
        r = REGISTRY[a.method].fit(ctx, k, seed=seed, device=device, model=model_path, **params,
                                        progress=lambda s, t, info: emit(kind="epoch", dataset=name, seed=seed, **info))
        emit(kind="history", dataset=name, seed=seed, history=r.history[-1:])
        seconds = time.perf_counter() - t0
        emit(kind="score", dataset=name, seed=seed, method=a.method, seconds=round(seconds, 1),
             minutes_per_epoch_per_10k=round(seconds / 60 / len(r.history) / (len(texts) / 10_000), 3),
             **{m: round(v, 4) for m, v in label_scores(y, r.labels).items()})
        emit(kind="score", dataset=name, seed=seed, method="kmeans-on-adapted",
             **{m: round(v, 4) for m, v in kmeans_scores(r.embeddings, y, k, seed).items()})
        if a.save_embeddings:
            a.save_embeddings.mkdir(parents=True, exist_ok=True)
            np.save(a.save_embeddings / f"{name}-{a.method}-s{seed}.npy", r.embeddings.astype(np.float16))


def import_set(a: argparse.Namespace) -> None:
    """Store saved adapted embeddings as an embedding set of an imported corpus (same rows, same order)."""
    from core import embedsets
    from core.corpus import load_corpus

    corpus = load_corpus(a.corpus)
    x = np.load(a.npy).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    s = embedsets.save(corpus, a.name, x, {"method": "clusterbert", "source": str(a.npy), "note": a.note})
    print(s.path)


def parse_param(text: str):
    key, _, value = text.partition("=")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def main(argv=None) -> None:
    if (argv or sys.argv[1:])[:1] == ["import-set"]:
        p = argparse.ArgumentParser(prog="python -m bench.adapt import-set")
        p.add_argument("cmd")
        p.add_argument("--corpus", required=True)
        p.add_argument("--npy", type=Path, required=True)
        p.add_argument("--name", required=True)
        p.add_argument("--note", default="")
        import_set(p.parse_args(argv))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--method", default="clusterbert", choices=["clusterbert", "dec_mlm", "dec_crl"])
    p.add_argument("--model", default="default")
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--param", action="append", default=[], type=parse_param)
    p.add_argument("--device", default="auto")
    p.add_argument("--subset", type=int)
    p.add_argument("--save-embeddings", type=Path)
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
