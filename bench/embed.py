"""Texts per second of the default embedding model on the scale corpus's tweets.

    python -m bench.embed [--n 5000] [--data PATH] [--batch-size 32 64 128] [--repeat 3]

CPU always; CUDA too when torch sees it. One JSON object per line.
"""

from __future__ import annotations

import sys
import argparse
import os
import statistics
import time

import pandas as pd

from bench.common import SCALE, emit, run_folder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--data", default=str(SCALE))
    p.add_argument("--batch-size", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("embed", sys.argv if argv is None else ["bench/embed.py", *argv])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from core.embed import load_model

    texts = pd.read_csv(a.data, usecols=["text"], dtype=str, keep_default_na=False, nrows=a.n)["text"].tolist()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        model = load_model("default", device)
        model.encode(texts[:64])
        for bs in a.batch_size:
            runs = []
            for _ in range(a.repeat):
                t = time.perf_counter()
                model.encode(texts, batch_size=bs, show_progress_bar=False)
                runs.append(len(texts) / (time.perf_counter() - t))
            emit(op="embed_default", texts_per_s=round(statistics.median(runs), 1), n=len(texts),
                 batch_size=bs, device=device, threads=torch.get_num_threads())


if __name__ == "__main__":
    main()
