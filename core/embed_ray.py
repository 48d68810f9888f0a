"""The import's embedding step as a Ray Data job (``precompute.embed --engine ray``): the same chunks,
the same checkpoint files and the same vectors as the in-process path, computed by Ray actors that
load the model once each (one per GPU where the cluster has GPUs, else CPU actors), on this machine
(Ray started locally) or on a cluster (``--ray-address``).

The work is the list of chunks (``chunk_size`` texts each) not yet on disk: a killed job, or a killed
worker, resumes from the chunks already written, by either engine. The driver writes each chunk as
its vectors arrive (atomically, in the import's work folder), so a cluster needs no shared disk.
Ray is optional (``pip install -r requirements-ray.txt``); without it the import says so.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from core.embed import ChunkPlan
from core.ingest import InputError
from core.progress import Progress

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
_started_here = False  # connect() started a local Ray (release() stops it); a cluster, or a Ray the caller started, stays


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("--engine ray needs Ray, which is not installed: pip install -r requirements-ray.txt "
                         "(or use the default engine, in process)") from None
    return ray


def connect(address: str | None, num_cpus: int | None = None):
    """Start Ray locally (no address) or join the cluster at ``address``; a clear error when neither works."""
    global _started_here
    ray = _ray()
    if ray.is_initialized():
        return ray
    if address:
        reachable(address)
    # A local Ray's workers inherit this process's environment. A job-wide runtime_env would make every
    # worker "special": Ray could not hand the actor one of the workers it prestarted, and spawns a new
    # one (~2 s on 2 cores). A cluster's workers run elsewhere and get the variables as a runtime_env.
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    try:
        if address:
            ray.init(address=address, runtime_env={"env_vars": env}, log_to_driver=False,
                     logging_level=logging.WARNING)
        else:
            os.environ.update(env)
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            _started_here = True
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise InputError(f"could not start or reach {where}: {str(exc).splitlines()[0][:300]}") from None
    import ray.data  # noqa: F401

    ray.data.DataContext.get_current().enable_progress_bars = False  # the import shows its own progress
    return ray


def release() -> None:
    """Stop the local Ray that :func:`connect` started, once the import has its vectors. Left running, its
    processes and the Ray Data job's teardown share the two cores with the writing of the corpus (1.8 s
    for 2,000 texts against 0.06 s in process), and Ray's own exit hook then waits half a second before
    it stops them. A cluster (``--ray-address``) and a Ray the caller had started are left as they are."""
    global _started_here
    if _started_here:
        _started_here = False
        _ray().shutdown()


def reachable(address: str, timeout: float = 10.0) -> None:
    """Fail fast when nothing listens at a cluster's address: Ray itself retries for many minutes."""
    import socket

    if address == "auto":
        return  # Ray finds the local cluster itself
    where = address.split("://", 1)[-1]
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        host, port = where, "6379" if "://" not in address else "10001"  # Ray's default ports
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"could not reach the Ray cluster at {address!r}: nothing answers at {host}:{port} "
                         f"({exc.strerror or exc}); start it with 'ray start --head' there, or leave out "
                         "--ray-address to run Ray on this machine") from None


class Embedder:
    """A Ray actor: loads the model once, then embeds one chunk per call."""

    def __init__(self, model_name: str, device: str, batch_size: int):
        from core.embed import load_model

        self.model = load_model(model_name, device)
        self.batch_size = batch_size

    def __call__(self, batch: dict) -> dict:
        out = {"chunk": [], "rows": [], "data": []}
        for chunk, texts in zip(batch["chunk"], batch["texts"]):
            texts = list(texts)
            x = np.ascontiguousarray(self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                                       show_progress_bar=False), dtype=np.float32)
            out["chunk"].append(int(chunk))
            out["rows"].append(x.shape[0])
            out["data"].append(x.tobytes())
        return {"chunk": np.array(out["chunk"], np.int64), "rows": np.array(out["rows"], np.int64),
                "data": np.array(out["data"], dtype=object)}


def cluster_resources(ray) -> tuple[int, int]:
    res = ray.cluster_resources()
    return int(res.get("CPU", 1)), int(res.get("GPU", 0))


# Long (~45 lines): the job (what is left, the actors, the stream of chunks written as they come,
# progress) is one sequence around one Ray Data pipeline.
def embed_model_ray(texts: Sequence[str], model_name: str, work: Path, *, address: str | None = None,
                    chunk_size: int = 2048, batch_size: int = 32, device: str = "auto",
                    progress: Progress | None = None, model_index: int = 0, actors: int | None = None,
                    num_cpus: int | None = None, models_after: int = 0) -> np.ndarray:
    """Embed ``texts`` with one model as a Ray Data job; returns (N, D) float32 in the order of ``texts``,
    the same array ``core.embed.embed_model_chunked`` returns (same chunk files)."""
    plan = ChunkPlan(texts, model_name, work, chunk_size, models_after)
    n = plan.n
    todo = [(i, s, e) for i, s, e in plan.spans if plan.saved(i, e - s) is None]
    already = n - sum(e - s for _, s, e in todo)
    report = plan.reporter(progress, already, model_name, model_index, engine="ray")

    report(already)
    if todo:
        if already:
            log.info("resuming %s: %d of %d rows already embedded", model_name, already, n)
        ray = connect(address, num_cpus)
        cpus, gpus = cluster_resources(ray)
        use_gpu = gpus > 0 and device in ("auto", "cuda")
        count = actors or (gpus if use_gpu else max(1, cpus // 2))
        count = max(1, min(count, len(todo)))
        log.info("Ray: %d %s actor(s) for %d chunks of %s", count, "GPU" if use_gpu else "CPU", len(todo), model_name)
        items = [{"chunk": i, "texts": list(texts[s:e])} for i, s, e in todo]
        ds = ray.data.from_items(items, override_num_blocks=len(items))
        ds = ds.map_batches(Embedder, fn_constructor_kwargs={"model_name": model_name, "device": "cuda" if use_gpu else "cpu",
                                                              "batch_size": batch_size},
                            batch_size=1, compute=ray.data.ActorPoolStrategy(size=count), num_gpus=1 if use_gpu else 0,
                            num_cpus=0 if use_gpu else max(1, cpus // count))
        done = already
        for row in ds.iter_rows():
            i, rows = int(row["chunk"]), int(row["rows"])
            x = np.frombuffer(row["data"], dtype=np.float32).reshape(rows, -1)
            plan.put(i, x)
            if done == already:  # the first chunk: room for them all? (core.embed.ChunkPlan.check_room)
                plan.check_room(x.shape[1], done + rows)
            done += rows
            report(done)
    return plan.gather()
