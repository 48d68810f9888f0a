"""Helpers for the benchmarks: medians of repeated timings, JSON lines, machine description."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SCALE = SHARED / "russian_troll_tweets_recent300k.csv"


def median_ms(fn: Callable[[], object], repeat: int = 7, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def emit(**fields) -> None:
    print(json.dumps(fields, ensure_ascii=False), flush=True)


def machine() -> str:
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {gpu}"


def clustered(n: int, dim: int, clusters: int = 200, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    labels = rng.integers(0, clusters, n)
    x = centres[labels]
    x += 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x, labels
