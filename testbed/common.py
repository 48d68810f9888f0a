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


_RUN_LOG: list[Path] = []  # the raw lines of the current run, when run_folder() started one


def emit(**fields) -> None:
    line = json.dumps(fields, ensure_ascii=False, default=str)
    print(line, flush=True)
    if _RUN_LOG:
        with open(_RUN_LOG[0], "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def run_folder(name: str, argv: list[str]) -> Path:
    """results/<name>-<UTC time>/ ($SEMANNO_BENCH_RESULTS instead of results when set,
    as the tests do) with run.json (what ran, where, when); emit() also writes
    every line to its lines.jsonl. Figures in RESULTS.md cite these folders."""
    import subprocess
    from datetime import datetime, timezone
    from importlib import metadata

    now = datetime.now(timezone.utc)
    base = Path(os.environ.get("SEMANNO_BENCH_RESULTS") or Path(__file__).resolve().parents[1] / "results")
    folder = base / f"{name}-{now:%Y%m%dT%H%M%SZ}"
    for n in range(2, 1000):  # two runs started in the same second get folders of their own
        try:
            folder.mkdir(parents=True)
            break
        except FileExistsError:
            folder = base / f"{name}-{now:%Y%m%dT%H%M%SZ}-{n}"
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout.strip())
    except OSError:
        commit, dirty = "", False
    versions = {}
    for pkg in ("numpy", "pandas", "torch", "faiss-cpu", "faiss-gpu", "streamlit", "scikit-learn",
                "sentence-transformers", "regex"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    args = list(argv)
    if args and args[0].endswith(".py"):  # sys.argv of `python -m bench.x`: the module's file path
        args[0] = Path(args[0]).resolve().relative_to(root).with_suffix("").as_posix().replace("/", ".")
    info = {"name": name, "command": " ".join(["python -m", *args]),
            "commit": commit, "uncommitted_changes": dirty, "date": now.isoformat(timespec="seconds"),
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "gpu": _gpu()}, "python": platform.python_version(),
            "versions": versions}
    (folder / "run.json").write_text(json.dumps(info, indent=2))
    _RUN_LOG[:] = [folder / "lines.jsonl"]
    return folder


def _gpu() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except ImportError:
        return "unknown"


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


class FakeModel:
    """Deterministic vectors for texts whose vectors do not matter (reliability trials, browser tests of
    pages): no model is loaded."""

    def __init__(self, dim: int = 8):
        self.dim = dim

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts, **kw):
        import numpy as np

        return np.random.default_rng(len(texts)).normal(size=(len(texts), self.dim)).astype(np.float32)
