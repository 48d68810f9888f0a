"""Ten million texts on one machine (issue 29): every figure at 300k, 1M, 3M and 10M rows, with the
growth exponent of each (time ~ rows^e).

    python -m bench.scale [--sizes 300000,1000000,3000000,10000000] [--repeat 5] [--k 1000] [--load 3]

For each size: the input is made by ``bench.make_scale_corpus --rows N`` (derived texts, synthetic
fp16 vectors; skipped when present), imported as ``scale-N`` with the vectors brought
(``precompute.embed --vectors``: wall time and peak memory of the import), then a fresh process
opens it as the server does (memory-mapped fp16 store from 1M rows, the keyword index built at
import) and measures: its private memory (USS) and RSS apart from the mapped vectors; each search
(COS, LDA, NN1, NN2, Suggest, and the masked top-k alone) beside one numpy scan of the same stored
matrix in the same process (``x @ w`` block by block: fp16 blocks made float32); keyword search for a
word, a phrase, a prefix and two regexes; the scatter ready (LDA directions, projection, figure and
its JSON; the median of --repeat, the first apart: it reads the store cold); the corpus timeline;
K-Means fit + assignment of every row. Then the searches again with
a heavy job beside them (``--load`` processes of torch matrix products, each with torch's default
threads: the two cores oversubscribed about three times), with the numpy scan measured under the
same load.

    python -m bench.scale --sizes N --compare-with CHECKOUT [--rounds 2]

measures one code against another on the same imported ``scale-N``: the probe above (in a fresh process
each time) run alternately with CHECKOUT's code (a git worktree of an earlier commit, say) and this
checkout's, ``--rounds`` times each, in one run ("nothing got slower", measured side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from core import paths
from testbed.common import emit, run_folder

SEARCHES = ["cos", "lda", "nn1", "nn2", "suggest"]
KEYWORDS = {"word": ("trump", False), "phrase": ("fake news", False), "prefix": ("vacc", False),
            "regex_1": (r"trump\w*\s+(said|says|is)", True), "regex_2": (r"#\w*covid\w*", True)}


def memory(vector_file: str | None) -> dict:
    """USS (private) and RSS of this process in MB, with the mapped vector store's pages apart; ``anon``
    is the private memory that is not a file's pages (the heap: frames, matrices), ``mapped_files``
    the private pages of other memory-mapped files (the keyword index's column and postings), which the
    kernel can drop and re-read."""
    total = {"uss": 0, "rss": 0, "vectors_rss": 0, "anon": 0, "mapped_files": 0}
    current = None
    with open("/proc/self/smaps") as fh:
        for line in fh:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):  # a mapping's header line
                current = line.split()[-1] if len(line.split()) >= 6 else ""
                continue
            key = first.rstrip(":")
            if key not in ("Rss", "Private_Clean", "Private_Dirty", "Anonymous"):
                continue
            kb = int(line.split()[1])
            if vector_file and current == vector_file:
                total["vectors_rss"] += kb if key == "Rss" else 0
                continue
            if key == "Anonymous":
                total["anon"] += kb
                continue
            total["rss" if key == "Rss" else "uss"] += kb
            if key == "Private_Clean" and current.startswith("/") and not current.endswith(".so") \
                    and ".so." not in current:
                total["mapped_files"] += kb
    return {k: round(v / 1024, 1) for k, v in total.items()}


_SESSION = None  # a worker thread, as Streamlit runs each session's script in a thread of its own


def _median_s(fn, repeat: int) -> float:
    global _SESSION
    if _SESSION is None:
        from concurrent.futures import ThreadPoolExecutor

        _SESSION = ThreadPoolExecutor(1, thread_name_prefix="session")

    def timed() -> float:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    _SESSION.submit(timed).result()  # warm
    return statistics.median(_SESSION.submit(timed).result() for _ in range(repeat))


def numpy_scan(x, w: np.ndarray, block: int = 262_144) -> np.ndarray:
    """One numpy matrix-vector scan of the stored matrix (fp16 blocks made float32 first)."""
    out = np.empty(len(x), np.float32)
    for s in range(0, len(x), block):
        out[s:s + block] = np.asarray(x[s:s + block], np.float32) @ w
    return out


def probe(name: str, repeat: int, k: int, searches_only: bool) -> dict:
    """Open the corpus as the server does and time everything (run in a fresh process)."""
    from core.cluster import REGISTRY as CLUSTERINGS
    from core.cluster.base import ClusterContext
    from core.corpus import load_corpus
    from core.search import REGISTRY
    from core.search.keyword import find_rows
    from ui.resources import search_context_of

    t0 = time.perf_counter()
    c = load_corpus(name)
    ctx = search_context_of(c, "cpu")
    ctx.word_index.matrix  # noqa: B018 -- loaded (or built, below 1M rows) as the first Suggest would
    out: dict = {"rows": c.n, "open_s": round(time.perf_counter() - t0, 2), "index": ctx.index.precision,
                 "keyword_engine": _engine(ctx.keyword_index.text_index)}
    x = ctx.index.vectors
    rng = np.random.default_rng(0)
    anchor = int(rng.integers(c.n))
    near, _ = ctx.index.topk(np.asarray(x[anchor], np.float32), 200)
    inc = np.sort(near[:: 10][:20])
    exc = np.sort(rng.choice(c.n, 20, replace=False))
    w = np.asarray(x[anchor], np.float32)
    out["numpy_scan_s"] = _median_s(lambda: numpy_scan(x, w), repeat)
    out["topk_s"] = _median_s(lambda: ctx.index.topk(w, 100, np.r_[inc, exc]), repeat)
    for m in SEARCHES:
        out[f"{m}_s"] = _median_s(lambda m=m: REGISTRY[m].search(ctx, inc, exc, 100), repeat)
    if searches_only:
        return out
    out["memory_mb"] = memory(str(c.vector_file) if c.vector_file else None)
    for label, (query, is_regex) in KEYWORDS.items():
        try:
            hits = find_rows(ctx.keyword_index, query, is_regex=is_regex)
            out[f"kw_{label}_s"] = _median_s(lambda q=query, r=is_regex: find_rows(ctx.keyword_index, q, is_regex=r),
                                             repeat)
            out[f"kw_{label}_hits"] = int(len(hits))
            out[f"kw_{label}_ordered_s"] = _median_s(lambda q=query, r=is_regex: REGISTRY["keyword"].search(
                ctx, inc, exc, None, query=q, is_regex=r), max(1, repeat // 2))
        except Exception as exc_:  # a refused or timed-out query is a figure too
            out[f"kw_{label}_error"] = str(exc_)[:200]
    runs = [scatter(c, ctx, inc, exc) for _ in range(max(1, repeat))]  # the first reads the store cold
    out.update({k: (float(np.median([r[k] for r in runs])) if k.endswith("_s") and v is not None else v)
                for k, v in runs[0].items()})  # (no lasso figure below the density image's size)
    out["scatter_first_ready_s"] = runs[0]["scatter_ready_s"]
    from core import plots

    out["timeline_s"] = _median_s(lambda: plots.timeline(c.frame), max(1, repeat // 2))
    t = time.perf_counter()
    fitted = CLUSTERINGS["kmeans"].fit(ClusterContext(c.embeddings), k, seed=0)
    out["kmeans_s"] = round(time.perf_counter() - t, 1)
    out["kmeans_k"], out["kmeans_fitted_on"] = k, int(fitted.params.get("sample") or c.n)
    out["memory_after_mb"] = memory(str(c.vector_file) if c.vector_file else None)
    return out


def _engine(tix) -> str:
    if tix is None:
        return "in-memory scan"
    return "sqlite-fts5-trigram" if tix.path.exists() else "word postings + folded column"


def scatter_space(c, ctx, space: str = "auto"):
    """(the rows the Scatter page projects, "sketch" or "full"): the corpus's sketch where it has one (as the
    page), unless ``space`` is "full"."""
    from core import sketch

    if space != "full":
        try:
            got = sketch.load(c.data_folder, c.n)
        except sketch.SketchError:
            got = None
        if got is not None:
            return got[0], "sketch"
    return ctx.index.vectors, "full"


def scatter(c, ctx, inc, exc, space: str = "auto") -> dict:
    from core import plots
    from core.projection import lda_directions, project

    x, used = scatter_space(c, ctx, space)
    t = time.perf_counter()
    w = lda_directions(x, inc, exc)
    xy = project(x, w)
    projected = time.perf_counter() - t
    labels = np.zeros(c.n, np.int8)
    labels[inc], labels[exc] = 1, -1
    from core import hover

    sc = plots.scatter(xy, labels, c.frame["text"], hover_sample=5000,  # as the page does
                       hover=hover.sample(c.data_folder, c.frame["text"], 5000))
    payload = sc.figure.to_json()
    ready = time.perf_counter() - t
    t = time.perf_counter()
    picked = plots.selected_rows(sc, [], {"lasso": [{"x": [-1e9, 1e9, 0], "y": [-1e9, -1e9, 1e9]}]}) \
        if sc.raster is not None else np.zeros(0)
    return {"scatter_space": used, "scatter_ready_s": round(ready, 2), "scatter_projection_s": round(projected, 2),
            "scatter_json_mb": round(len(payload) / 1e6, 2), "scatter_raster": sc.raster is not None,
            "lasso_all_s": round(time.perf_counter() - t, 2) if sc.raster is not None else None,
            "lasso_all_rows": int(len(picked))}


def heavy_job(seconds: float) -> None:
    """A training's worth of CPU: torch matrix products with torch's default threads."""
    import torch

    a = torch.randn(1024, 1024)
    end = time.time() + seconds
    while time.time() < end:
        a = torch.tanh(a @ a.T / 32)


def run_child(args: list[str], cwd: Path | None = None) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS in MB, output tail) of ``python -m ...`` (in ``cwd``: another
    checkout's code, with this one's data)."""
    import tempfile

    env = None
    if cwd is not None:
        env = {**os.environ, "PYTHONPATH": str(cwd), "SEMANNO_DATA": str(paths.data_root())}
    t = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen([sys.executable, "-m", *args], stdout=log, stderr=subprocess.STDOUT, text=True,
                                cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak memory, not the largest so far
        proc.returncode = os.waitstatus_to_exitcode(status)
        secs = time.perf_counter() - t
        log.seek(0)
        output = log.read()
    return proc.returncode, secs, usage.ru_maxrss / 1024, output[-3000:]


def probe_args(name: str, repeat: int, k: int) -> list[str]:
    """The command (after ``python -m``) of one probe of ``name`` in a fresh process."""
    return ["bench.scale", "--probe", name, "--repeat", str(repeat), "--k", str(k)]


def compare(name: str, other: Path, rounds: int, repeat: int, k: int) -> None:
    """The probe of ``name`` with ``other``'s code and with this checkout's, alternately, ``rounds`` each."""
    rev = subprocess.run(["git", "-C", str(other), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    for r in range(rounds):
        for code, cwd in (("other", other), ("this", None)):
            rc, secs, peak, tail = run_child(probe_args(name, repeat, k), cwd)
            if rc:
                raise SystemExit(f"probing {name} with {code} code failed:\n{tail}")
            emit(corpus=name, round=r + 1, code=code, checkout=str(cwd or paths.PROJECT_ROOT),
                 commit=rev.stdout.strip() if cwd else None, probe_s=round(secs, 1), probe_peak_rss_mb=round(peak, 1),
                 quiet=json.loads(tail.split("PROBE ", 1)[1].splitlines()[0]))


def exponent(sizes: list[int], values: list[float]) -> float | None:
    ok = [(n, v) for n, v in zip(sizes, values) if v and v > 0]
    if len(ok) < 2:
        return None
    n, v = np.log([o[0] for o in ok]), np.log([o[1] for o in ok])
    return round(float(np.polyfit(n, v, 1)[0]), 2)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="300000,1000000,3000000,10000000")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--k", type=int, default=1000, help="K-Means clusters")
    p.add_argument("--load", type=int, default=3, help="heavy processes beside the searches (0: skip)")
    p.add_argument("--reimport", action="store_true", help="import again even when scale-N exists")
    p.add_argument("--with", dest="earlier", nargs="*", default=[], type=Path,
                   help="run folders of earlier sizes to include in the growth exponents")
    p.add_argument("--compare-with", type=Path, help="another checkout whose probe alternates with this one's")
    p.add_argument("--rounds", type=int, default=2, help="with --compare-with: probes of each code")
    p.add_argument("--probe", help=argparse.SUPPRESS)
    p.add_argument("--searches-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--heavy", type=float, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.heavy:
        heavy_job(a.heavy)
        return
    if a.probe:
        print("PROBE " + json.dumps(probe(a.probe, a.repeat, a.k, a.searches_only)))
        return
    run_folder("scale", sys.argv)
    sizes = [int(s) for s in a.sizes.split(",")]
    rows = []
    for n in sizes:
        folder = paths.data_root() / ".scale-input" / f"rows-{n}"
        rc, made_s, _, tail = run_child(["bench.make_scale_corpus", "--rows", str(n)])
        if rc:
            raise SystemExit(f"making {n:,} rows failed:\n{tail}")
        made = json.loads((folder / "made.json").read_text())
        name = f"scale-{n}"
        line = {"rows": n, "input": made}
        if a.reimport or not (paths.corpus_dir(name) / "manifest.json").exists():
            rc, secs, peak, tail = run_child(["precompute.embed", str(folder / "texts.parquet"), "--name", name,
                                              "--vectors", str(folder / "vectors.npy"), "--vectors-model",
                                              "synthetic clustered unit vectors (bench.make_scale_corpus)",
                                              "--overwrite"])
            if rc:
                raise SystemExit(f"importing {n:,} rows failed:\n{tail}")
            line.update({"import_s": round(secs, 1), "import_peak_rss_mb": round(peak, 1)})
        manifest = json.loads(paths.manifest_file(name).read_text())
        line["indexes"] = manifest.get("indexes")
        if a.compare_with:  # the corpus as imported (above, where it was not yet) by this checkout's code
            emit(**line)
            compare(name, a.compare_with.resolve(), a.rounds, a.repeat, a.k)
            continue
        rc, _, peak, tail = run_child(probe_args(name, a.repeat, a.k))
        if rc:
            raise SystemExit(f"probing {n:,} rows failed:\n{tail}")
        line["quiet"] = json.loads(tail.split("PROBE ", 1)[1].splitlines()[0])
        line["probe_peak_rss_mb"] = round(peak, 1)
        if a.load:
            heavy = [subprocess.Popen([sys.executable, "-m", "bench.scale", "--heavy", "3600"]) for _ in range(a.load)]
            try:
                time.sleep(3)
                rc, _, _, tail = run_child(["bench.scale", "--probe", name, "--repeat", str(a.repeat),
                                            "--searches-only"])
                line["loaded"] = json.loads(tail.split("PROBE ", 1)[1].splitlines()[0]) if not rc else {"error": tail}
            finally:
                for h in heavy:
                    h.kill()
        emit(**line)
        rows.append(line)
    if a.compare_with:
        return
    for folder in a.earlier:  # sizes measured in an earlier run (one size per run is a long job at 10M)
        rows += [json.loads(line) for line in (folder / "lines.jsonl").read_text().splitlines()
                 if '"quiet"' in line]
    rows.sort(key=lambda r: r["rows"])
    sizes = [r["rows"] for r in rows]
    figures = sorted({key for r in rows for key, v in r["quiet"].items() if key.endswith("_s") and
                      isinstance(v, (int, float))} | {"import_s"})
    growth = {}
    for key in figures:
        values = [r.get(key, r["quiet"].get(key)) for r in rows]
        growth[key] = exponent([r["rows"] for r in rows], values)
    emit(growth_exponents=growth, sizes=sizes)


if __name__ == "__main__":
    main()
