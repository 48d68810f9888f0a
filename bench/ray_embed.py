"""The Ray path's overhead against the in-process import (issue 30's target: <= 20% on 2 cores for
2,000 texts), both measured in the same run, alternating, medians of ``--repeat`` runs.

    python -m bench.ray_embed [--n 2000] [--data PATH] [--repeat 3] [--actors 1]

Two figures per engine, one JSON object per line:
- ``cli``: the whole command a user runs (``python -m precompute.embed FILE --name X --engine E``),
  from start to the corpus on disk; for Ray this includes starting a local Ray and its actors.
- ``warm``: ``import_corpus`` in this process with Ray already started (as on a running cluster),
  so the figure is Ray Data's own cost per import, without the start-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from testbed.common import SCALE, emit, run_folder

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--data", default=str(SCALE))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--actors", type=int, default=1, help="Ray actors (one uses both cores, like the in-process path)")
    p.add_argument("--skip-warm", action="store_true")
    a = p.parse_args(argv)
    run_folder("ray-embed", sys.argv if argv is None else ["bench/ray_embed.py", *argv])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="ray-embed-"))
    src = tmp / "texts.csv"
    frame = pd.read_csv(a.data, usecols=["id", "text"], dtype=str, keep_default_na=False, nrows=a.n)
    frame.to_csv(src, index=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}

    def cli(engine: str, i: int) -> float:
        root = tmp / f"cli-{engine}-{i}"
        cmd = [sys.executable, "-m", "precompute.embed", str(src), "--name", "b", "--engine", engine]
        if engine == "ray":
            cmd += ["--ray-actors", str(a.actors)]
        t = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env={**env, "SEMANNO_DATA": str(root)}, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t

    times: dict[str, list[float]] = {"process": [], "ray": []}
    for i in range(a.repeat):
        for engine in ("process", "ray") if i % 2 == 0 else ("ray", "process"):
            times[engine].append(cli(engine, i))
    base = statistics.median(times["process"])
    for engine, runs in times.items():
        s = statistics.median(runs)
        emit(op="import_cli", engine=engine, n=a.n, seconds=round(s, 2), runs=[round(r, 2) for r in runs],
             texts_per_s=round(a.n / s, 1), overhead_pct=round(100 * (s / base - 1), 1))
    if a.skip_warm:
        return
    import ray

    from core.corpus import ImportSpec, import_corpus

    ray.init(include_dashboard=False, log_to_driver=False)
    warm: dict[str, list[float]] = {"process": [], "ray": []}
    try:
        for i in range(a.repeat + 1):  # the first round loads the models: not counted
            for engine in ("process", "ray"):
                t = time.perf_counter()
                import_corpus(ImportSpec(input=src, name="b", engine=engine, ray_actors=a.actors),
                              root=tmp / f"warm-{engine}-{i}")
                if i:
                    warm[engine].append(time.perf_counter() - t)
    finally:
        ray.shutdown()
    base = statistics.median(warm["process"])
    for engine, runs in warm.items():
        s = statistics.median(runs)
        emit(op="import_warm", engine=engine, n=a.n, seconds=round(s, 2), runs=[round(r, 2) for r in runs],
             texts_per_s=round(a.n / s, 1), overhead_pct=round(100 * (s / base - 1), 1))


if __name__ == "__main__":
    main()
