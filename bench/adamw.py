"""The encoder-adapting methods' and DEC's optimiser: torch's fused AdamW and Adam (core.cluster.deep) against the
for-loop kernel torch picks by default on the CPU, in the same run, fit by fit.

    python -m bench.adamw [--data ../shared/data/stackoverflow.csv] [--texts 120] [--repeats 3]
        [--method sccl dec_crl dec_mlm clusterbert] [--model default multilingual-e5-small] [--epochs 1]
        [--threads 2] [--dec-rows 20000] [--dac-steps 30]

After one warm-up fit per encoder (counted for neither kernel), each method x encoder is fit ``--repeats`` times
with each kernel, in turns (for-loop then fused, fused then for-loop, ...), on the first ``--texts`` titles of the
file (k = its classes among them), one epoch each by default (ClusterBERT: one round of each stage; on e5 without
TSDAE, which needs a decoder e5 lacks), no checkpoint. Before an encoder's fits, one AdamW step over all its
parameters (random gradients) is timed with each kernel: the first and later ones.
One JSON line per fit (seconds, the kernel) and one per method x encoder: the median seconds of each kernel, the
ratio, and how far the two kernels' embeddings end apart (the largest difference of a coordinate: float rounding,
not a different method). ``--dec-rows N`` (0: none): DEC into 20 clusters on N unit vectors of 384 dimensions
drawn around 20 random centres (its Adam, fused or not; its defaults), the same turns, before the encoders; its
median line gives the NMI between the two kernels' last partitions (1: the same clusters). ``--dac-steps N`` (0:
none): a DAC model (the default Set Transformer) trained N steps of the pretraining stage's bags on 20,000 such
vectors, the same turns; its median line gives the largest difference between the two kernels' weights.
"""

from __future__ import annotations

import argparse
import shutil
import time
from contextlib import contextmanager

import numpy as np
import pandas as pd
from sklearn.metrics import normalized_mutual_info_score

from testbed.common import emit, run_folder

ONE_EPOCH = {"clusterbert": dict(tsdae_epochs=1, cluster_rounds=1, cluster_epochs=1, harden_epochs=1)}


def fit_params(method: str, model: str, epochs: int) -> dict:
    params = dict(ONE_EPOCH.get(method, {"epochs": epochs}), batch_size=16, max_length=32)
    if method == "clusterbert" and model != "default":
        params["tsdae_epochs"] = 0  # e5 comes without the decoder TSDAE needs (ClusterBERT says so)
    return params


@contextmanager
def kernel(fused: bool):
    """The methods' optimisers (core.cluster.deep.adamw / adam) built with the fused kernel or torch's default."""
    from core.cluster import deep

    deep.FUSED = fused
    try:
        yield
    finally:
        deep.FUSED = True


def optimiser_steps(model: str, steps: int) -> dict:
    """Seconds of one AdamW step over the whole encoder's parameters (random gradients), each kernel: the first
    step (it makes the moments' tensors) and the median of ``steps`` later ones."""
    import torch

    from core.cluster.deep import Encoder, adamw

    params = list(Encoder(["a title"], {"model": model, "max_length": 8}, 0, "cpu", mlm=False).encoder.parameters())
    out = {"model": model, "parameters": sum(p.numel() for p in params)}
    for name, fused in (("for_loop", False), ("fused", True)):
        for p in params:
            p.grad = torch.randn_like(p) * 1e-3
        with kernel(fused):
            opt = adamw(params, lr=1e-5)
        times = []
        for _ in range(steps + 1):
            t0 = time.perf_counter()
            opt.step()
            times.append(time.perf_counter() - t0)
        out[f"{name}_first_s"], out[f"{name}_later_s"] = round(times[0], 3), round(float(np.median(times[1:])), 3)
        del opt
    return out


def in_turns(fit, repeats: int, **tags) -> tuple[dict, dict]:
    """``fit()`` ``repeats`` times with each kernel, in turns (for-loop then fused, fused then for-loop, ...); a
    line per fit. Returns the median seconds and the two kernels' last outputs, by kernel (False: for-loop)."""
    times: dict[bool, list[float]] = {False: [], True: []}
    last: dict[bool, np.ndarray] = {}
    for r in range(repeats):
        for fused in ((False, True) if r % 2 == 0 else (True, False)):
            with kernel(fused):
                t0 = time.perf_counter()
                last[fused] = fit()
                seconds = time.perf_counter() - t0
            times[fused].append(seconds)
            emit(event="fit", **tags, fused=fused, seconds=round(seconds, 2))
    medians = {f: float(np.median(v)) for f, v in times.items()}
    return {"repeats": repeats, "for_loop_s": round(medians[False], 2), "fused_s": round(medians[True], 2),
            "ratio": round(medians[False] / medians[True], 2)}, last


def encoder_fit(method: str, model: str, texts: list[str], k: int, params: dict) -> np.ndarray:
    from core.cluster import REGISTRY, ClusterContext

    out = REGISTRY[method].fit(ClusterContext(np.zeros((len(texts), 1), np.float32), texts), k, seed=0,
                               model=model, **params)
    if out.model_dir is not None:
        shutil.rmtree(out.model_dir, ignore_errors=True)  # 90-450 MB a fit that no figure reads
    return out.embeddings


def blobs(rows: int) -> np.ndarray:
    """``rows`` unit vectors of 384 dimensions around 20 random centres (DEC on structureless noise would take any
    partition)."""
    gen = np.random.default_rng(0)
    x = gen.standard_normal((20, 384))[gen.integers(0, 20, rows)]
    x = (x + 0.6 * gen.standard_normal(x.shape)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def dac_fit(x, steps: int) -> np.ndarray:
    """The DAC model's weights, flat, after ``steps`` steps of pretraining bags (seed 0, the defaults otherwise)."""
    import torch

    from core.cluster.dac import sampling
    from core.cluster.dac import train as dac_train

    out = dac_train.train(x, sampling.Neighbourhoods(x), stage="pretrain", seed=0, epochs=1, steps=steps)
    return torch.cat([p.detach().flatten() for p in out.model.parameters()]).numpy()


def dec_fit(x: np.ndarray) -> np.ndarray:
    from core.cluster import REGISTRY, ClusterContext

    return REGISTRY["dec"].fit(ClusterContext(x, None), 20, seed=0).labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/stackoverflow.csv")
    ap.add_argument("--texts", type=int, default=120)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--method", nargs="+", default=["sccl", "dec_crl", "dec_mlm", "clusterbert"])
    ap.add_argument("--model", nargs="*", default=["default", "multilingual-e5-small"])  # none: DEC only
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dec-rows", type=int, default=20000)
    ap.add_argument("--dac-steps", type=int, default=30)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    run_folder("adamw", argv if argv is not None else [])
    frame = pd.read_csv(args.data, dtype=str, keep_default_na=False).head(args.texts)
    texts, k = frame["text"].tolist(), max(2, frame["label"].nunique())
    emit(event="setup", data=args.data, texts=len(texts), k=k, threads=args.threads,
         device="cpu", cpu=torch.backends.cpu.get_cpu_capability())
    if args.dec_rows:
        x = blobs(args.dec_rows)
        figures, last = in_turns(lambda: dec_fit(x), args.repeats, method="dec", rows=args.dec_rows)
        emit(event="median", method="dec", rows=args.dec_rows, **figures,
             nmi_between=round(float(normalized_mutual_info_score(last[False], last[True])), 4))
    if args.dac_steps:
        xt = torch.from_numpy(blobs(20000))
        dac_fit(xt, 2)  # torch's first passes, counted for neither kernel
        figures, last = in_turns(lambda: dac_fit(xt, args.dac_steps), args.repeats, method="dac",
                                 steps=args.dac_steps)
        emit(event="median", method="dac", steps=args.dac_steps, **figures,
             largest_difference=float(np.abs(last[False] - last[True]).max()))
    for model in args.model:
        emit(event="optimiser step", **optimiser_steps(model, 5))
        # the model's first load and torch's first passes, counted for neither kernel
        t0 = time.perf_counter()
        encoder_fit(args.method[0], model, texts, k, fit_params(args.method[0], model, args.epochs))
        emit(event="warm-up", method=args.method[0], model=model, seconds=round(time.perf_counter() - t0, 2))
        for method in args.method:
            params = fit_params(method, model, args.epochs)
            figures, last = in_turns(lambda: encoder_fit(method, model, texts, k, params), args.repeats,
                                     method=method, model=model)
            emit(event="median", method=method, model=model, params=params, **figures,
                 largest_difference=float(np.abs(last[False] - last[True]).max()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
