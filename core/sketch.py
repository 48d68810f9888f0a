"""A low-dimensional sketch of a corpus's vectors, for the scatter of every text.

The scatter of a ten-million-text corpus projects every row; from a cold disk that meant reading the whole
7.7 GB fp16 store (12-22 s, bench/RESULTS.md, issue 29). The sketch is each row's coordinates on the
vectors' top principal directions (PCA fitted on a sample of rows), ``DIM`` columns in float16 - 610 MiB
at 10M rows - made at import for every corpus of 64 texts or more (``python -m precompute.sketch --corpus
NAME`` makes it for a corpus imported before). The scatter fits its discriminant on the labelled rows'
sketch coordinates and projects the sketch: the LDA of a PCA, the classic two-step form. With the few
dozen labels of an annotator's first minutes it sets a topic apart *better* than the discriminant of the
full 384 dimensions, which overfits them (``python -m bench.sketch quality``: four benchmarks, bench/RESULTS.md).

Two files in the corpus's generation folder, each written atomically: ``sketch.npy`` (N x DIM float16)
and ``sketch.json`` (rows, dimensions, the variance the directions explain). A sketch that does not match
its corpus (rows, shape, an unreadable file) is not used: :func:`load` says why, and the scatter projects
the full vectors as before.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from core import vectorstore
from core.atomic import atomic_path, save_json
from core.projection import project
from core.safeload import load_npy

FILE, META = "sketch.npy", "sketch.json"
DIM = 32  # columns: the quality bench's choice (bench/RESULTS.md)
SAMPLE = 200_000  # rows the principal directions are fitted on
BLOCK = 1_000_000  # rows projected (and reported) at a time


class SketchError(ValueError):
    """A sketch on disk that cannot be used; the message names the file and the reason."""


def directions(x: np.ndarray, dim: int = DIM, sample: int = SAMPLE, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray, float]:
    """(mean (D,), basis (D, dim), explained variance share) of a PCA of ``sample`` rows of ``x``."""
    n, d = x.shape
    if not 1 <= dim < d:
        raise ValueError(f"a sketch has between 1 and {d - 1} columns (the vectors have {d}), got {dim}")
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, min(n, sample), replace=False))
    s = vectorstore.take(x, rows).astype(np.float64)
    mean = s.mean(0)
    centred = s - mean
    evals, evecs = np.linalg.eigh(centred.T @ centred / max(1, len(s) - 1))
    order = np.argsort(evals)[::-1]
    evals, evecs = np.clip(evals[order], 0, None), evecs[:, order]
    share = float(evals[:dim].sum() / evals.sum()) if evals.sum() > 0 else 0.0
    return mean.astype(np.float32), np.ascontiguousarray(evecs[:, :dim], dtype=np.float32), share


def build(x: np.ndarray, folder: Path, dim: int = DIM, sample: int = SAMPLE, seed: int = 0,
          progress: Callable[[int, int], None] | None = None) -> dict:
    """Write ``folder/sketch.npy`` and ``folder/sketch.json`` for the vectors ``x`` (the fp16 store or
    an fp32 matrix, possibly memory-mapped); returns what sketch.json holds. ``progress(done, total)``
    hears every block of rows."""
    t0 = time.time()
    folder = Path(folder)
    n = len(x)
    if n < 2:
        raise ValueError(f"a sketch needs at least 2 rows, got {n}")
    mean, basis, share = directions(x, dim, sample, seed)
    shift = mean @ basis
    with atomic_path(folder / FILE) as tmp:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float16, shape=(n, dim))
        for s in range(0, n, BLOCK):
            e = min(n, s + BLOCK)
            out[s:e] = (project(x[s:e], basis) - shift).astype(np.float16)
            if progress:
                progress(e, n)
        out.flush()
        del out
    meta = {"rows": n, "dim": dim, "source_dim": int(x.shape[1]), "explained_variance": round(share, 4),
            "sample": int(min(n, sample)), "seed": seed, "seconds": round(time.time() - t0, 1),
            "made_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    save_json(folder / META, meta)
    return meta


def load(folder: Path, rows: int) -> tuple[np.ndarray, dict] | None:
    """(the sketch, memory-mapped read-only; its sketch.json) of a corpus of ``rows`` rows; None when it
    has none; SketchError when the files are there but do not fit the corpus or cannot be read."""
    folder = Path(folder)
    f, m = folder / FILE, folder / META
    if not f.exists() and not m.exists():
        return None
    try:
        meta = json.loads(m.read_text(encoding="utf-8"))
        x = load_npy(f, mmap_mode="r")
    except FileNotFoundError as exc:
        raise SketchError(f"{exc.filename}: missing (the sketch's other file is there)") from None
    except (OSError, ValueError) as exc:
        raise SketchError(f"{f} or {m}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or x.ndim != 2 or x.dtype != np.float16:
        raise SketchError(f"{f}: not a float16 matrix with its sketch.json")
    if x.shape[0] != rows or meta.get("rows") != rows or meta.get("dim") != x.shape[1]:
        raise SketchError(f"{f}: {x.shape[0]:,} rows x {x.shape[1]} for a corpus of {rows:,} texts "
                          f"(sketch.json says {meta.get('rows')} x {meta.get('dim')})")
    return x, meta
