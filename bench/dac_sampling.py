"""How long the pooled DAC stage takes to draw one training step's bags (issue 31: training at GPU size).

    python -m bench.dac_sampling [--batch 4 16] [--repeat 15] [--threads 1] [--device cpu|cuda]

The five labelled corpora of ../shared/data stacked as ``stages.pooled_sources`` stacks them (88,273 rows),
with their real class labels (the target's, StackOverflow's, left out as in leave-one-corpus-out) and
pseudo-classes from K-Means at two grains. The vectors are random, shaped by class (a class centre plus
noise, made unit): the sampler's cost depends on the rows' count and dimension, not on what they mean,
and no embedding of 88,273 texts is needed. Prints the median milliseconds a step for each batch size
(bags a step) and writes them to a run folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd
import torch

from testbed.common import SHARED, emit, run_folder
from core.cluster.dac import stages

CORPORA = ("stackoverflow", "agnews8000", "biomedical", "searchsnippets", "crisislex_t26")


def class_shaped(labels: np.ndarray, dim: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((labels.max() + 1, dim)).astype(np.float32)
    x = centres[labels] + 1.5 * rng.standard_normal((len(labels), dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, nargs="+", default=[4, 16])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--device", default="cpu")
    a = p.parse_args(argv)
    missing = [n for n in CORPORA if not (SHARED / f"{n}.csv").exists()]
    if missing:
        sys.exit(f"bench.dac_sampling needs {', '.join(missing)} in {SHARED}")
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    corpora = {}
    for n in CORPORA:
        labels = stages.labels_from_column(pd.read_csv(SHARED / f"{n}.csv", usecols=["label"], dtype=str)["label"])
        corpora[n] = (class_shaped(labels, a.dim, rng), None if n == CORPORA[0] else labels)
    run_folder("dac-sampling", sys.argv)
    t = time.perf_counter()
    x, sampler, _, _ = stages.pooled_sources(corpora, seed=0, bag=400, pseudo_k=(10, 40), device=a.device)
    emit(kind="sources", rows=len(x), samplers=len(sampler.samplers), seconds=round(time.perf_counter() - t, 1))
    gen = np.random.default_rng(0)
    for batch in a.batch:
        times = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            sampler.sample(batch, gen)
            if a.device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        ms = statistics.median(times) * 1000
        emit(kind="step", batch=batch, median_ms=round(ms, 1), steps=a.repeat, threads=a.threads, device=a.device)
        print(f"{batch} bags a step: median {ms:.1f} ms ({a.repeat} steps, {len(x):,} x {a.dim} rows, "
              f"{a.threads} thread(s), {a.device})")


if __name__ == "__main__":
    main()
