"""Corpora on disk: import (the one code path for CLI and page), list, load, check.

Layout under the data root: ``<name>/corpus.parquet``, ``<name>/embeddings.npy`` (float32,
N x D, unit rows, same order), ``<name>/manifest.json``. The manifest is written last, and a
folder without one is not a corpus, so an interrupted import never leaves something that loads.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import secrets
import shutil
import time
import zipfile
from dataclasses import dataclass, field, replace
from functools import cached_property
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from core import __version__, brought, languages, paths, textcolumn, timezones, vectorstore, wordforms
from core.atomic import Busy, atomic_path, exclusive, save_json, save_npy, save_parquet
from core.idindex import IdIndex
from core.embed import (DEFAULT_MODEL, Reduction, combine, embed_model_chunked, load_model, model_dim, open_matrix,
                        put_rows)
from core.ingest import Columns, InputError, Options, read_table, sha256_file, validate
from core.progress import Progress

log = logging.getLogger(__name__)


class CorpusError(ValueError):
    """A corpus on disk is missing, corrupt or inconsistent; the message says what and where."""


@dataclass
class Corpus:
    name: str
    frame: pd.DataFrame  # id, text, [date], [author], extra columns; row i <-> embeddings[i]
    embeddings: np.ndarray  # (N, D) float32 (embeddings.npy) or float16 (the fp16 store), memory-mapped, read-only
    manifest: dict
    folder: Path  # the corpus's folder: manifest.json, groups.sqlite
    data_folder: Path  # this import's generation: corpus.parquet, embeddings.npy, derived caches
    id_index: IdIndex | None = field(default=None, repr=False)  # id -> row (sorted 64-bit hashes, not 10M strings)

    def __post_init__(self) -> None:
        if self.id_index is None:
            self.id_index = IdIndex(self.frame["id"])

    @property
    def vector_file(self) -> Path | None:
        """The fp16 store (core/vectorstore.py) when the corpus keeps its vectors that way, else None: the import's,
        or that of the embedding set the corpus carries (core.embedsets.with_set)."""
        if self.embeddings.dtype != np.float16:
            return None
        mapped = getattr(self.embeddings, "filename", None)  # the memory map of a store
        return Path(mapped) if mapped else self.data_folder / vectorstore.FILE

    @property
    def keyword_index_file(self) -> Path | None:
        """The keyword index built at import (core/search/textindex.py), or None (searched in memory)."""
        from core.search import textindex

        f = self.data_folder / textindex.FILE
        return f if "keyword" in self.manifest.get("indexes", {}) and textindex.exists(f) else None

    @property
    def keyword_index_outdated(self) -> bool:
        """Whether the keyword index built at import folds its texts as an older version did (textindex.EDITION):
        a phrase typed across a Windows line break is missed there, and a short word inside a shortened link's
        code found. :func:`reindex_keywords` builds it again."""
        from core.search import textindex

        f = self.keyword_index_file
        return f is not None and textindex.edition(f) < textindex.EDITION

    @property
    def quotes_folder(self) -> Path | None:
        """The folder of the index of what the corpus's quotes quote, built at import with its keyword index
        (core.search.keyword.QuoteIndex), or None (joined in memory at the first search that asks)."""
        from core.search import textindex
        from core.search.keyword import QUOTES, QUOTES_ROWS

        d = self.data_folder / QUOTES
        found = "quotes" in self.manifest.get("indexes", {}) and textindex.exists(d / textindex.FILE)
        return d if found and (d / QUOTES_ROWS).exists() else None

    def row_of(self, corpus_id: str) -> int | None:
        rows = self.id_index.get_indexer([str(corpus_id)])
        return int(rows[0]) if rows[0] >= 0 else None

    @property
    def n(self) -> int:
        return len(self.frame)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def timezone(self) -> str:
        """The zone its pages show dates in (core.timezones; UTC for a corpus imported without one)."""
        return self.manifest.get("options", {}).get("timezone") or "UTC"

    # cached: a loaded corpus's frame is never changed, and each is a scan of every row (10-30 ms at 10M,
    # asked on every page run)
    @cached_property
    def has_dates(self) -> bool:
        return bool("date" in self.frame.columns and self.frame["date"].notna().any())

    @cached_property
    def has_authors(self) -> bool:
        return bool("author" in self.frame.columns and (self.frame["author"] != "").any())

    @property
    def languages_detected_again(self) -> bool:
        """Whether :attr:`languages` are not the import's own: its detection was older (``languages.EDITION``)."""
        return self.manifest.get("languages_edition") != languages.EDITION

    @cached_property
    def languages(self) -> dict[str, float]:
        """Share of a sample of its texts per language, by today's detection: the manifest's, or for an older
        import detected again once and kept beside its data (:func:`languages.kept_or_detected`)."""
        if not self.languages_detected_again:
            return dict(self.manifest.get("languages") or {})
        seed = self.manifest.get("options", {}).get("seed", 0)
        return languages.kept_or_detected(self.data_folder, self.frame["text"],
                                          seed if isinstance(seed, int) and seed >= 0 else 0)

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        """Row positions of corpus ids; ids not in the corpus are dropped."""
        rows = self.id_index.get_indexer([str(i) for i in ids])
        return rows[rows >= 0].astype(np.int64)

    def texts_by_id(self, ids: Sequence[str], column: str = "text") -> dict[str, str]:
        """id -> text (or the value of another ``column``, '' where a row has none) for these ids, only their rows
        read (a dict of every id and text took seconds and gigabytes at 10M rows); ids not in the corpus are left
        out."""
        ids = [str(i) for i in ids]
        rows = self.id_index.get_indexer(ids)
        found = [(i, int(r)) for i, r in zip(ids, rows) if r >= 0]
        texts = self.frame[column].take(np.array([r for _, r in found], np.int64)).tolist() if found else []
        return {i: "" if pd.isna(t) else str(t) for (i, _), t in zip(found, texts)}

    def ids_of(self, rows) -> list[str]:
        """The ids of the given rows, in order (only those rows read: the whole id column as Python strings
        took 108 ms at 1M rows)."""
        rows = np.asarray(rows, np.int64).reshape(-1)
        return [str(i) for i in self.frame["id"].take(rows).tolist()] if len(rows) else []


LEGACY_DATA = ("corpus.parquet", "embeddings.npy")  # imports before generations kept these flat


def remove_stale_generations(folder: Path, current: str) -> None:
    """Delete data the manifest no longer names: older generations, an unfinished one left by a
    killed import, and the flat files of imports made before generations (with the languages detected again
    for such an import, Corpus.languages). Never groups.sqlite."""
    for p in folder.iterdir():
        if p.is_dir() and p.name.startswith("gen-") and p.name != current:
            shutil.rmtree(p, ignore_errors=True)
        elif p.name in (*LEGACY_DATA, languages.FILE) or (p.name.startswith("words-v") and p.suffix == ".npz"):
            p.unlink(missing_ok=True)


def list_corpora(root: Path | None = None) -> list[str]:
    root = root or paths.data_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").exists())


def load_manifest(name: str, root: Path | None = None) -> dict:
    mf = paths.manifest_file(name, root)
    if not mf.exists():
        raise CorpusError(f"corpus {name!r}: no manifest.json (not imported, or the import did not finish)")
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"corpus {name!r}: manifest.json is corrupt: {exc}") from None
    except RecursionError:
        raise CorpusError(f"corpus {name!r}: manifest.json is corrupt: nested too deeply") from None
    check_manifest(manifest, f"corpus {name!r}: manifest.json")
    return manifest


_GENERATION_RE = re.compile(r"^gen-[0-9A-Za-z_-]{1,64}$")
# field -> (type(s), required); the manifest is data: a wrong shape is an error naming the field
_MANIFEST_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "name": ((str,), False), "models": ((list,), True), "dim": ((int,), False), "rows": ((int,), False),
    "created_at": ((str,), False), "data_dir": ((str,), False), "source": ((dict,), False),
    "validation": ((dict,), False), "options": ((dict,), False), "pca": ((dict,), False),
    "languages": ((dict,), False), "warnings": ((list,), False), "store": ((dict,), False),
    "vectors": ((dict,), False), "indexes": ((dict,), False), "languages_edition": ((int,), False),
}


def check_manifest(m: object, where: str) -> None:
    """Raise CorpusError naming the field when the manifest is not of the expected shape."""
    if not isinstance(m, dict):
        raise CorpusError(f"{where}: expected a JSON object, got {type(m).__name__}")
    for key, (types, required) in _MANIFEST_FIELDS.items():
        if key not in m:
            if required:
                raise CorpusError(f"{where}: field {key!r} is missing")
            continue
        value = m[key]
        if not isinstance(value, types) or isinstance(value, bool):
            raise CorpusError(f"{where}: field {key!r} should be {' or '.join(t.__name__ for t in types)}, "
                              f"got {type(value).__name__} {str(value)[:40]!r}")
    for i, model in enumerate(m["models"]):
        if not isinstance(model, dict) or not isinstance(model.get("name"), str) \
                or not isinstance(model.get("dim", 0), int):
            raise CorpusError(f"{where}: field 'models' item {i} should be {{'name': str, 'dim': int}}, "
                              f"got {str(model)[:40]!r}")
    for lang, share in m.get("languages", {}).items():
        if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 <= share <= 1:
            raise CorpusError(f"{where}: field 'languages' should map languages to shares between 0 and 1, got "
                              f"{str(lang)[:20]!r}: {str(share)[:20]!r}")
    for w in m.get("warnings", []):
        if not isinstance(w, str):
            raise CorpusError(f"{where}: field 'warnings' should be a list of texts, got an item {str(w)[:40]!r}")
    if m.get("store", {}).get("precision", "fp32") not in ("fp32", "fp16"):
        raise CorpusError(f"{where}: field 'store' names precision {str(m['store'].get('precision'))[:20]!r}; "
                          "expected fp32 or fp16")
    if "data_dir" in m and not _GENERATION_RE.match(m["data_dir"]):
        raise CorpusError(f"{where}: field 'data_dir' must be a folder name like 'gen-...', got {m['data_dir'][:40]!r}")


def store_precision(manifest: dict) -> str:
    """How the corpus keeps its vectors: "fp32" (embeddings.npy) or "fp16" (the memory-mapped store)."""
    return manifest.get("store", {}).get("precision", "fp32") if isinstance(manifest.get("store"), dict) else "fp32"


def import_vector_file(data: Path, manifest: dict) -> Path:
    """The file of the import's vectors in its generation folder ``data``: embeddings.npy, or the fp16 store."""
    return data / (vectorstore.FILE if store_precision(manifest) == "fp16" else "embeddings.npy")


def import_vectors(data: Path, manifest: dict) -> np.ndarray:
    """The import's vectors (:func:`import_vector_file`), memory-mapped."""
    from core.safeload import load_npy

    ef = import_vector_file(data, manifest)
    return vectorstore.codes(ef) if ef.name == vectorstore.FILE else load_npy(ef, mmap_mode="r")


def _import_again(manifest: dict) -> str:
    """What to do about a corpus file that cannot be read: the import again, from the file it came from."""
    source = (manifest.get("source") or {}).get("path") if isinstance(manifest.get("source"), dict) else None
    return (f"Import it again{f' from {source}' if source else ''} (on the home page, tick 'Replace an existing "
            "corpus'; or --overwrite): its saved groups are kept")


SERVER_SKIPS = ("text_raw",)  # columns of corpus.parquet that a loaded corpus does not hold


def _one_chunk(frame: pd.DataFrame) -> None:
    """Each Arrow-backed text column as one contiguous array. Parquet gives one piece per row group, and
    pyarrow's take over a column of many pieces joins them first: the ten rows of a label toggle took
    0.24 s (2 s cold) from the 77 pieces of a 10M corpus, against 0.03 s from one. Joined once here
    (0.25 s at 10M; the pieces' memory is handed back, so the peak is brief)."""
    import pyarrow as pa

    joined = False
    for col in frame.columns:
        values = frame[col].array
        if isinstance(frame[col].dtype, pd.CategoricalDtype) or not hasattr(values, "__arrow_array__") \
                or not pd.api.types.is_string_dtype(frame[col].dtype):
            continue
        pieces = values.__arrow_array__()
        if isinstance(pieces, pa.ChunkedArray) and pieces.num_chunks > 1:
            if pieces.type == pa.string():  # offsets past 2 GB of text need 64 bits
                pieces = pieces.cast(pa.large_string())
            frame[col] = pd.array(pa.chunked_array([pieces.combine_chunks()]), dtype=frame[col].dtype)
            joined = True
    if joined:
        pa.default_memory_pool().release_unused()


def load_corpus(name: str, root: Path | None = None, check: bool = True) -> Corpus:
    """Load a corpus with its embeddings memory-mapped; raise CorpusError on any mismatch."""
    manifest = load_manifest(name, root)
    folder = paths.corpus_dir(name, root)
    data = folder / manifest["data_dir"] if "data_dir" in manifest else folder  # older imports: flat
    cf = data / "corpus.parquet"
    try:
        # text_raw (the texts as the file had them, before HTML entities were unescaped) stays on disk: no
        # page shows it, and held in memory it was a second copy of every text (1.3 GB at 10M rows)
        parquet = pq.ParquetFile(cf)  # its footer read once: the columns and the number of rows
        columns = [c for c in parquet.schema_arrow.names if c not in SERVER_SKIPS]
        rows = parquet.metadata.num_rows
        mapped = textcolumn.read(data, cf, rows) if "text" in columns else None
        frame = pd.read_parquet(cf, columns=[c for c in columns if c != "text" or mapped is None])
    except Exception as exc:
        raise CorpusError(f"corpus {name!r}: corpus.parquet cannot be read: {exc}. "
                          f"{_import_again(manifest)}") from None
    if mapped is not None:  # the texts memory-mapped (core/textcolumn.py), in the column's place
        if not len(frame.columns):
            frame = pd.DataFrame(index=pd.RangeIndex(rows))
        frame.insert(columns.index("text"), "text", pd.array(mapped, dtype="str"))
    try:
        emb = import_vectors(data, manifest)
    except Exception as exc:
        raise CorpusError(f"corpus {name!r}: {import_vector_file(data, manifest).name} cannot be read: {exc}. "
                          f"{_import_again(manifest)}") from None
    if "id" not in frame.columns:
        raise CorpusError(f"corpus {name!r}: corpus.parquet has no 'id' column")
    frame["id"] = frame["id"].astype(str)
    _one_chunk(frame)
    if mapped is None and "text" in frame.columns and len(frame) >= INDEXES_FROM_ROWS:
        _map_texts(frame, data, cf)
    if "author" in frame.columns:
        # dictionary-encoded: each row an integer code into the (sorted) authors. Counting authors then
        # needs no hashing of strings (10M rows: the timeline spent 2.8 s factorizing them per draw); the
        # encoding is paid once here (about 2 s at 10M) and the column takes codes, not 10M strings.
        frame["author"] = frame["author"].astype("category")
    corpus = Corpus(name, frame, emb, manifest, folder, data)
    if check:
        check_corpus(corpus)
    return corpus


def _map_texts(frame: pd.DataFrame, data: Path, cf: Path) -> None:
    """A large corpus imported before the texts had their own file: write it now (once, seconds) and
    take the column from it, so its texts leave the heap (core/textcolumn.py)."""
    if textcolumn.write(data, frame["text"], cf) is None:
        return
    mapped = textcolumn.read(data, cf, len(frame))
    if mapped is not None:
        import pyarrow as pa

        frame["text"] = pd.array(mapped, dtype=frame["text"].dtype)
        pa.default_memory_pool().release_unused()


MAPPED_SAMPLE = 256  # rows of an fp16 store read at open: each is a random read of a cold file


def check_corpus(c: Corpus, norm_sample: int = 2000) -> None:
    """Refuse a corpus whose parts disagree. Every row of embeddings.npy is checked for NaN (one NaN
    row would poison every search); the fp16 store of a large corpus was checked row by row when it was
    written, so only a sample of ``MAPPED_SAMPLE`` rows is read here (opening 10 million rows must not
    read 7 GB; 2,000 scattered rows were 3.1 s of a cold open at 10M)."""
    where = f"corpus {c.name!r}"
    for col in ("id", "text"):
        if col not in c.frame.columns:
            raise CorpusError(f"{where}: corpus.parquet has no {col!r} column")
    mapped = c.vector_file is not None
    file = vectorstore.FILE if mapped else "embeddings.npy"
    if c.embeddings.ndim != 2 or c.embeddings.dtype not in (np.float32, np.float16) \
            or (c.embeddings.dtype == np.float16) != mapped:
        raise CorpusError(f"{where}: {file} must be a 2-D float32 array, "
                          f"got {c.embeddings.dtype} with shape {c.embeddings.shape}")
    n_rows, n_emb = len(c.frame), c.embeddings.shape[0]
    if n_rows != n_emb:
        raise CorpusError(f"{where}: corpus.parquet has {n_rows} rows but {file} has {n_emb}")
    if c.manifest.get("rows") not in (None, n_rows):
        raise CorpusError(f"{where}: manifest says {c.manifest['rows']} rows, corpus.parquet has {n_rows}")
    if c.manifest.get("dim") not in (None, c.dim):
        raise CorpusError(f"{where}: manifest says dimension {c.manifest['dim']}, embeddings have {c.dim}")
    if not c.id_index.is_unique:
        dup = c.id_index.duplicated(3)
        raise CorpusError(f"{where}: duplicate ids in corpus.parquet, e.g. {dup}")
    if mapped:
        norm_sample = min(norm_sample, MAPPED_SAMPLE)
    sample = np.linspace(0, n_emb - 1, min(norm_sample, n_emb)).astype(np.int64) if n_emb else np.zeros(0, np.int64)
    blocks = [sample] if mapped else [np.arange(s, min(n_emb, s + paths.ROWS_PER_BLOCK))
                                      for s in range(0, n_emb, paths.ROWS_PER_BLOCK)]
    for rows in blocks:
        block = vectorstore.take(c.embeddings, rows)
        finite = np.isfinite(block).all(axis=1)
        if not finite.all():
            row = int(rows[np.flatnonzero(~finite)[0]])
            raise CorpusError(f"{where}: {file} has non-finite values (NaN or infinity) in row {row} "
                              f"(id {c.frame['id'].iat[row]!r}); re-run the import")
    if n_emb:
        norms = np.linalg.norm(block if mapped else np.asarray(c.embeddings[sample], dtype=np.float32), axis=1)
        bad = np.flatnonzero(np.abs(norms - 1) > (3e-3 if mapped else 1e-3))
        if bad.size:
            raise CorpusError(f"{where}: embeddings are not unit length (row {int(sample[bad[0]])} "
                              f"has norm {norms[bad[0]]:.4f}); re-run the import")


def summary(c: Corpus, top_authors: int = 10) -> dict:
    out = {"rows": c.n, "dim": c.dim, "models": [m["name"] for m in c.manifest.get("models", [])],
           "created_at": c.manifest.get("created_at"), "source": c.manifest.get("source", {}).get("path")}
    if c.has_dates:  # as wall times of the corpus's zone
        out["date_min"], out["date_max"] = (timezones.local(d, c.timezone) for d in (c.frame["date"].min(),
                                                                                     c.frame["date"].max()))
    if c.has_authors:
        out["top_authors"] = c.frame["author"].value_counts().head(top_authors)
        out["authors"] = int(c.frame["author"].nunique())
    return out


@dataclass
class ImportSpec:
    input: Path
    name: str
    models: list[str] = field(default_factory=lambda: [DEFAULT_MODEL])
    dim: int = 512
    batch_size: int = 32
    device: str = "auto"
    columns: Columns = field(default_factory=Columns)
    options: Options = field(default_factory=Options)
    chunk_size: int = 2048
    overwrite: bool = False
    seed: int = 0
    label: str | None = None  # how messages name the input (an upload's name); default its path
    sheet: str | None = None  # a workbook's sheet; default the first holding the texts' column (core.ingest)
    vectors: Path | None = None  # vectors computed elsewhere (core/brought.py), instead of embedding here
    vectors_model: str | None = None  # the model that computed them, for the manifest
    vectors_column: str = brought.VECTOR_COLUMN  # their column in a Parquet file
    precision: str = "auto"  # how the vectors are kept: fp32 (embeddings.npy), fp16 (memory-mapped store), auto
    indexes: str = "auto"  # keyword and word indexes built at import: on, off, auto (from INDEXES_FROM_ROWS)
    engine: str = "process"  # embedding: "process" (here) or "ray" (a Ray Data job, core/embed_ray.py)
    ray_address: str | None = None  # a Ray cluster; None starts Ray locally
    ray_actors: int | None = None  # embedding actors (default: one per GPU, else one per two CPUs)
    quotes_set: bool = False  # also make the embedding set ``quotes`` (core/quoted.py) where the corpus has quotes


INDEXES_FROM_ROWS = 1_000_000  # "auto" builds the keyword index (word postings) and Suggest's word matrix at import
FP16_FROM_ROWS = 1_000_000  # "auto" keeps larger corpora as fp16 (half the disk and page cache; cosines within ~1e-3)


def storage_precision(precision: str, rows: int) -> str:
    if precision not in ("auto", "fp16", "fp32"):
        raise ValueError(f"precision must be auto, fp16 or fp32, got {precision!r}")
    return ("fp16" if rows >= FP16_FROM_ROWS else "fp32") if precision == "auto" else precision


def import_corpus(spec: ImportSpec, root: Path | None = None, progress: Progress | None = None,
                  model_loader: Callable | None = None, notify: Callable[[str], None] | None = None) -> Corpus:
    """Validate, detect the languages, embed (checkpointed), reduce, and write a corpus
    atomically. Resumable.

    A model named ``auto`` becomes the packaged English model for an English corpus and the
    packaged multilingual one otherwise. ``notify(message)`` hears warnings before embedding
    starts (e.g. an English-only model for a Czech corpus); they are kept in the manifest too.
    ``model_loader(name, device)`` defaults to :func:`core.embed.load_model`, looked up at call
    time (so a test's patch of ``core.corpus.load_model`` takes effect)."""
    root = root or paths.data_root()
    name = paths.check_name(spec.name)
    if spec.dim < 2:
        raise ValueError(f"--dim must be at least 2, got {spec.dim}")
    try:
        with exclusive(_import_lock(name, root)):
            return _import_locked(spec, name, root, progress, model_loader, notify)
    except Busy:
        raise InputError(f"corpus {name!r} is being imported by another process right now; wait until it "
                         "finishes, then try again") from None
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        where = f" (writing {exc.filename})" if exc.filename else ""
        raise CorpusError(f"the disk of {root} filled up while importing corpus {name!r}{where}: "
                          "the corpus was not changed; make room there, or set SEMANNO_DATA to a folder on a larger "
                          "disk, and import again (the texts embedded so far are kept, not embedded again)") from exc


def _import_lock(name: str, root: Path) -> Path:
    """The lock a corpus's import holds (so does building its keyword index again): one at a time."""
    return paths.work_dir(name, root).parent / f"{name}.import.lock"


# Long (~65 lines): the import's steps in order (read, check, languages, embed or bring, manifest, write);
# each is a function of its own, this is their sequence and the manifest they fill.
def _import_locked(spec: ImportSpec, name: str, root: Path, progress: Progress | None, model_loader: Callable | None,
                   notify: Callable[[str], None] | None) -> Corpus:
    """import_corpus's work, with the corpus's import lock held."""
    final = paths.corpus_dir(name, root)
    if (final / "manifest.json").exists() and not spec.overwrite:
        raise InputError(f"a corpus named {name!r} already exists; choose another name or pass --overwrite "
                         "(on the home page: tick 'Replace an existing corpus')")
    label = spec.label or str(spec.input)
    storage_precision(spec.precision, 0)  # a wrong name fails before any work

    def stage(what: str) -> None:  # a step whose length cannot be counted: its name only (total 0)
        if progress:
            progress(0, 0, {"stage": what})

    src = brought.probe(spec.vectors, column=spec.vectors_column) if spec.vectors else None
    stage("reading the file")
    table = read_table(spec.input, label, spec.sheet, spec.columns.text,
                       [c for c in (spec.columns.id, spec.columns.date, spec.columns.author) if c])
    stage(f"checking {len(table):,} rows")
    frame, report = validate(table, label, spec.columns, spec.options)
    del table
    precision = storage_precision(spec.precision, len(frame))
    if src is not None:
        _check_room_brought(root, name, frame, src, precision)
    stage("detecting the languages")
    shares = languages.detect(frame["text"].tolist(), seed=spec.seed)
    warnings: list[str] = []
    if src is None:
        models = languages.choose_models(list(spec.models), shares)
        if models != list(spec.models):
            log.info("main language %s: embedding with %s", languages.main_language(shares), ", ".join(models))
        spec = replace(spec, models=models)
        warning = languages.coverage_warning(shares, models)
        warnings = [warning] if warning else []
    for w in warnings:
        log.warning("%s", w)
        if notify:
            notify(w)
    work = paths.work_dir(name, root)
    t0 = time.time()
    manifest = {"name": name,
                "source": {"path": spec.label or str(Path(spec.input).resolve()), "sha256": sha256_file(Path(spec.input))}}
    if src is None:
        emb, red, models_meta = _embed_or_keep(spec, name, root, frame["text"], work, progress,
                                               model_loader or load_model, report.notes)
        applied = red.explained_variance is not None
        pca = {"target_dim": spec.dim, "applied": applied, "explained_variance": red.explained_variance}
        manifest.update({"models": models_meta, "concat_dim": red.input_dim, "dim": int(emb.shape[1]),
                         "pca": {**pca, "file": PCA_FILE} if applied else pca})

        def write_vectors(data: Path) -> dict:
            if applied:  # kept, so that a new import of the corpus projects only its new texts' vectors
                red.save(data / PCA_FILE)
            return _store_matrix(emb, data, precision)
    else:
        manifest.update({"models": [{"name": spec.vectors_model or "not named (brought with the corpus)",
                                     "dim": src.dim}], "dim": src.dim})
        write_vectors = lambda data: {"vectors": _store_brought(src, frame, report, data, precision,  # noqa: E731
                                                                progress)}
    manifest.update({
        "rows": len(frame),
        "store": {"precision": precision},
        "languages": shares,
        "languages_edition": languages.EDITION,
        "warnings": warnings,
        "validation": report.record(),
        "options": {"columns": spec.columns.__dict__, **spec.options.__dict__,
                    "batch_size": spec.batch_size, "chunk_size": spec.chunk_size, "seed": spec.seed},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool_version": __version__,
    })
    if src is None:
        manifest["embed_seconds"] = round(time.time() - t0, 2)
    if spec.indexes not in ("auto", "on", "off"):
        raise ValueError(f"indexes must be auto, on or off, got {spec.indexes!r}")
    if spec.indexes == "on" or (spec.indexes == "auto" and len(frame) >= INDEXES_FROM_ROWS):
        lang = wordforms.language_for(shares)  # Suggest's words by lemma in it
        write_data = lambda data: {**write_vectors(data), **_build_indexes(frame, data, progress, lang)}  # noqa: E731
    else:
        write_data = write_vectors
    stage("writing the corpus")
    _write_generation(final, frame, manifest,
                      lambda data: {**write_data(data), "sketch": _build_sketch(data, progress),
                                    "hover": _draw_hover(frame, data), "copies": _find_copies(frame, data, progress)})
    shutil.rmtree(work, ignore_errors=True)
    log.info("corpus %s: %d rows, dim %d, written to %s", name, len(frame), manifest["dim"], final)
    corpus = load_corpus(name, root)
    if spec.quotes_set:
        _make_quotes_set(corpus, spec, progress, model_loader or load_model, notify)
    return corpus


def _make_quotes_set(corpus: Corpus, spec: ImportSpec, progress: Progress | None, model_loader: Callable,
                     notify: Callable[[str], None] | None) -> None:
    """The embedding set ``quotes`` of a corpus just imported (:func:`core.quoted.build`), its embedding shown as a
    step of its own; where the corpus has no quotes, said (to ``notify`` and the log) and nothing made."""
    from core import quoted

    def each(done: int, total: int, info: dict) -> None:
        progress(done, total, {**info, "stage": "embedding what the quotes quote", "unit": "texts"}
                 if total else info)

    try:
        made = quoted.build(corpus, batch_size=spec.batch_size, progress=each if progress else None,
                            model_loader=model_loader, engine=engine_of(spec))  # a Ray import's quotes on Ray too
    except quoted.QuotesError as exc:
        log.warning("no embedding set quotes made: %s", exc)
        if notify:
            notify(f"No embedding set quotes made: {exc}.")
        return
    log.info("corpus %s: embedding set %r made (%d quotes read with what they quote)", corpus.name, made.name,
             made.manifest["quotes"])


def _build_indexes(frame: pd.DataFrame, data: Path, progress: Progress | None, lang: str | None = None) -> dict:
    """The keyword index and Suggest's word matrix (its words counted by lemma in ``lang``, the corpus's main
    language where it has a dictionary), built now rather than on a user's first search (minutes at ten million
    texts)."""
    from core import quoted
    from core.ingest import QUOTED
    from core.search import textindex
    from core.search.keyword import fold
    from core.search.lexical import WordIndex, words_file

    texts = frame["text"].tolist()
    t0 = time.time()
    each = (lambda done, total: progress(done, total, {"stage": "indexing the words for keyword search",
                                                       "unit": "texts"})) if progress else None
    textindex.build(data / textindex.FILE, texts, len(texts), fold, each)
    t1 = time.time()
    if progress:
        progress(0, 0, {"stage": "building Suggest's word matrix"})
    read = quoted.words_read(texts, frame.get(QUOTED))  # a quote's words with what it quotes
    file, lang = words_file(data, lang, quotes=read is not texts)
    WordIndex(read, file, lang=lang).matrix  # built and saved beside the corpus
    out = {"keyword": {"engine": "word-postings", "file": textindex.FILE, "folded": textindex.FOLDED,
                       "words": list(textindex.WORDS), "seconds": round(t1 - t0, 1)},
           "words": {"seconds": round(time.time() - t1, 1)}}
    del texts
    quotes = _index_quotes(frame, data, progress)
    return {"indexes": {**out, **({"quotes": quotes} if quotes else {})}}


def reindex_keywords(c: Corpus, progress: Progress | None = None, force: bool = False) -> float | None:
    """The corpus's keyword index (and its quotes', where it has one) built again with today's folding, in its data
    folder, each file replaced atomically (searches meanwhile read the old ones); then the manifest touched, so
    that every server holding the corpus loads it again (ui.resources.stamp). Returns the seconds it took, or
    None where there was nothing to do: the index is today's (built meanwhile by someone else; ``force`` builds
    it anyway) or the corpus was imported again meanwhile. Holds the corpus's import lock: CorpusError while the
    corpus is being imported, or its index built, by another process or user."""
    from core.search import textindex
    from core.search.keyword import fold

    root = c.folder.parent
    try:
        with exclusive(_import_lock(c.name, root)):
            if load_manifest(c.name, root).get("data_dir") != c.manifest.get("data_dir"):
                return None  # imported again meanwhile: the new import's index is today's
            if c.keyword_index_file is None or not (force or c.keyword_index_outdated):
                return None
            t0 = time.time()
            each = (lambda done, total: progress(done, total, {"stage": "indexing the words for keyword search",
                                                               "unit": "texts"})) if progress else None
            # the texts read as they are indexed, not held in a list beside the server's (1.5 GB at ten million)
            textindex.build(c.data_folder / textindex.FILE, iter(c.frame["text"]), c.n, fold, each)
            if "quotes" in c.manifest.get("indexes", {}):
                _index_quotes(c.frame, c.data_folder, progress)
            os.utime(paths.manifest_file(c.name, root))
            return time.time() - t0
    except Busy:
        raise CorpusError(f"corpus {c.name!r} is being imported, or its keyword index built, by another process or "
                          "user right now; try again when that finishes") from None


def _index_quotes(frame: pd.DataFrame, data: Path, progress: Progress | None) -> dict | None:
    """What the corpus's quotes quote (core.ingest.QUOTED), indexed as its texts are (the keyword search's *Quoted
    tweets too*, without holding them in a server's memory); None where no text quotes one."""
    from core.atomic import save_npy
    from core.ingest import QUOTED
    from core.search import textindex
    from core.search.keyword import QUOTES, QUOTES_ROWS, fold, quoting

    if QUOTED not in frame.columns:
        return None
    rows, quoted = quoting(frame[QUOTED])
    if not len(rows):
        return None
    t0 = time.time()
    each = (lambda done, total: progress(done, total, {"stage": "indexing the tweets the quotes quote",
                                                       "unit": "texts"})) if progress else None
    (data / QUOTES).mkdir(exist_ok=True)
    textindex.build(data / QUOTES / textindex.FILE, quoted.tolist(), len(rows), fold, each)
    save_npy(data / QUOTES / QUOTES_ROWS, rows)
    return {"folder": QUOTES, "quotes": int(len(rows)), "seconds": round(time.time() - t0, 1)}


def _find_copies(frame: pd.DataFrame, data: Path, progress: Progress | None = None) -> dict:
    """Which texts are copies of one another (core/copies.py), found while the texts are in memory (35-45 s at 10M)."""
    from core import copies
    from core.ingest import QUOTED

    if progress:
        progress(0, 0, {"stage": "finding the texts that are copies of one another"})
    t0 = time.time()
    found = copies.load_or_build(data, frame["text"], frame.get(QUOTED))
    return {"file": copies.FILE, "rows_with_copies": found.rows_with_copies, "seconds": round(time.time() - t0, 2)}


def _draw_hover(frame: pd.DataFrame, data: Path) -> dict:
    """The scatter's hover sample (core/hover.py), drawn while the texts are in memory."""
    from core import hover

    rows, _ = hover.sample(data, frame["text"])
    return {"file": hover.FILE, "rows": int(len(rows))}


def _build_sketch(data: Path, progress: Progress | None) -> dict:
    """The scatter's low-dimensional sketch of the vectors just written (core/sketch.py)."""
    from core import sketch

    store = data / vectorstore.FILE
    x = vectorstore.codes(store) if store.exists() else np.load(data / "embeddings.npy", mmap_mode="r")
    if len(x) < 2 * sketch.DIM:  # a toy corpus: the scatter projects its vectors
        return {"skipped": f"{len(x)} texts, fewer than {2 * sketch.DIM}"}
    if x.shape[1] <= sketch.DIM:  # nothing to reduce
        return {"skipped": f"vectors of {x.shape[1]} dimensions, not more than the sketch's {sketch.DIM}"}
    each = (lambda done, total: progress(done, total, {"stage": "sketching the vectors for the scatter",
                                                       "unit": "texts"})) if progress else None
    return {"file": sketch.FILE, **sketch.build(x, data, progress=each)}


def _store_matrix(emb: np.ndarray, data: Path, precision: str) -> dict:
    if precision == "fp16":
        blocks = (emb[s:s + paths.ROWS_PER_BLOCK] for s in range(0, len(emb), paths.ROWS_PER_BLOCK))
        vectorstore.write(data / vectorstore.FILE, blocks, len(emb), emb.shape[1])
    else:
        save_npy(data / "embeddings.npy", emb)
    return {}


def _check_room_brought(root: Path, name: str, frame: pd.DataFrame, src: "brought.Source", precision: str) -> None:
    """CorpusError, before the vectors are read, where the disk of the data root lacks the room the corpus takes: its
    vectors as stored and its other files (core.embed.room_of_texts)."""
    from core.embed import need_room, room_of_texts

    need_room(root, len(frame) * src.dim * (2 if precision == "fp16" else 4) + room_of_texts(frame["text"]),
              f"importing corpus {name!r} ({len(frame):,} texts with vectors of {src.dim} dimensions: the vectors, "
              "texts and indexes)", "make room there, or set SEMANNO_DATA to a folder on a larger disk; nothing was "
              "changed", CorpusError)


def _store_brought(src: "brought.Source", frame: pd.DataFrame, report, data: Path, precision: str,
                   progress: Progress | None) -> dict:
    """The brought vectors, checked and aligned, written straight into the corpus's vector file."""
    n = len(frame)
    target = data / (vectorstore.FILE if precision == "fp16" else "embeddings.npy")
    each = (lambda done, total: progress(done, total, {"stage": f"reading the vectors of {src.label}",
                                                       "unit": "vectors"})) if progress else None
    with atomic_path(target) as tmp:
        out = vectorstore.create(tmp, n, src.dim) if precision == "fp16" else \
            np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, src.dim))
        meta = brought.fill(src, out, frame["id"].to_numpy(), report.source_rows, report.rows_read, each)
        out.flush()
        del out
    return meta


PCA_FILE = "pca.npz"  # the PCA that combined an ensemble's vectors, kept in the generation
KEEP_CHECK = 16  # texts a corpus imported again already had, embedded again beside the new ones to check the model
KEEP_COSINE = 0.999  # below it, the model's vectors are not the corpus's (another model under the same name)


def _embed_or_keep(spec: ImportSpec, name: str, root: Path, texts: pd.Series, work: Path,
                   progress: Progress | None, model_loader: Callable, notes: list[str]):
    """:func:`_embed` for a new corpus. For a corpus imported again (a file with this week's texts added) by the same
    models, the texts it already had keep their vectors and only the others are embedded (an ensemble's combined by
    the PCA kept with the corpus): a few of the kept ones are embedded beside them, and where any comes out other than
    the corpus has it (a model changed under its name), every text is embedded. What was kept is said in ``notes``."""
    old, rows, kept_pca = _rows_already_embedded(spec, name, root, texts)
    if old is None or not (rows >= 0).any():
        return _embed(spec, texts.tolist(), work, progress, model_loader)
    have, missing = np.flatnonzero(rows >= 0), np.flatnonzero(rows < 0)
    check = np.sort(np.random.default_rng(spec.seed).choice(have, min(KEEP_CHECK, len(have)), replace=False))
    if progress:
        progress(0, 0, {"stage": f"embedding the {len(missing):,} texts the corpus did not have"})
    order = np.concatenate([missing, check])
    part, red, models_meta = _embed(spec, texts.iloc[order].tolist(), work, progress, model_loader, kept_pca)
    kept = vectorstore.take(old.embeddings, rows[check])
    agree = float((kept * part[len(missing):]).sum(axis=1).min())
    emb = open_matrix(work, len(texts), part.shape[1])  # 15 GB at 10M x 384: a file then
    put_rows(emb, order, part)
    rest = np.setdiff1d(have, check)
    if agree < KEEP_COSINE:  # not the vectors the model gives now: all of them again
        if kept_pca is not None:  # nor the PCA fitted to them: fitted again, to every text's
            emb, red, models_meta = _embed(spec, texts.tolist(), work, progress, model_loader)
        elif len(rest):
            put_rows(emb, rest, _embed(spec, texts.iloc[rest].tolist(), work, progress, model_loader)[0])
        notes.append(f"embedded every text again: the model's vectors of texts the corpus had differ from those it "
                     f"kept (cosine {agree:.4f})")
        return emb, red, models_meta
    for start in range(0, len(rest), paths.ROWS_PER_BLOCK):
        block = rest[start:start + paths.ROWS_PER_BLOCK]
        emb[block] = vectorstore.take(old.embeddings, rows[block])
    notes.append(f"kept the vectors of {len(have):,} texts the corpus had (the same models; {len(check)} of them "
                 f"embedded again agree to cosine {agree:.4f}) and embedded {len(missing):,}"
                 + (" (combined by the PCA kept with the corpus)" if kept_pca is not None else ""))
    return emb, red, models_meta


def _rows_already_embedded(spec: ImportSpec, name: str, root: Path, texts: pd.Series):
    """(the corpus ``name`` as it is, each text's row there or -1, the PCA kept with it or None) where it was embedded
    by ``spec``'s models and combined as this import combines them: by no PCA, neither then nor now (a text's vector
    is then each model's own, normalised, whatever the other texts), or by a PCA to this import's dimension that was
    kept with it (:data:`PCA_FILE`: new texts are projected by it); (None, None, None) otherwise (imported before the
    PCA was kept: every text is embedded again)."""
    if not (paths.corpus_dir(name, root) / "manifest.json").exists():
        return None, None, None
    try:
        old = load_corpus(name, root, check=False)
    except CorpusError:
        return None, None, None  # a damaged corpus: embed everything
    m = old.manifest
    models = [x.get("name") for x in m.get("models", [])]
    pca, kept = m.get("pca") or {}, None
    if models != list(spec.models):
        return None, None, None
    if pca.get("applied", True):
        file = old.data_folder / str(pca.get("file", ""))
        if not pca.get("file") or pca.get("target_dim") != spec.dim or not file.is_file():
            return None, None, None
        try:
            kept = Reduction.load(file)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None, None, None  # a damaged file: embed everything
    elif m.get("concat_dim", 0) > spec.dim:
        return None, None, None
    old_texts = old.frame["text"]
    first = ~old_texts.duplicated().to_numpy()
    where = pd.Index(old_texts.to_numpy()[first]).get_indexer(texts.to_numpy())
    rows = np.where(where >= 0, np.flatnonzero(first)[np.maximum(where, 0)], -1)
    return old, rows, kept


#: The import's options that say where and how its texts are embedded (not what the vectors are): an embedding of
#: more texts as a corpus's own (:func:`embed_as_corpus`) takes them too, a Ray import's quotes set on the same Ray.
ENGINE_OPTIONS = ("engine", "ray_address", "ray_actors", "device", "chunk_size")


def engine_of(spec: ImportSpec) -> dict:
    """``spec``'s :data:`ENGINE_OPTIONS`."""
    return {k: getattr(spec, k) for k in ENGINE_OPTIONS}


def embed_as_corpus(c: Corpus, texts: list[str], work: Path, *, batch_size: int = 32,
                    progress: Progress | None = None, model_loader: Callable = load_model,
                    engine: dict | None = None) -> np.ndarray:
    """``texts`` embedded as the import embedded ``c``'s own (:func:`_embed`: each of its models, chunks checkpointed
    under ``work`` so a killed run resumes, combined by the PCA kept with it where one was applied), here or where
    ``engine`` (:data:`ENGINE_OPTIONS`, e.g. ``{"engine": "ray", "ray_address": ...}``) says; ValueError naming the
    corpus where that cannot be done (vectors brought without a model, a PCA not kept)."""
    unknown = sorted(set(engine or {}) - set(ENGINE_OPTIONS))
    if unknown:
        raise ValueError(f"not an option of where texts are embedded: {', '.join(unknown)} (one of "
                         f"{', '.join(ENGINE_OPTIONS)})")
    m = c.manifest
    models = [x.get("name") for x in m.get("models", [])]
    pca = m.get("pca") or {}
    if not models or any(not isinstance(n, str) or n.startswith("not named") for n in models):
        raise CorpusError(f"corpus {c.name!r}: its vectors came with the file (no model named), so there is no model "
                          "to embed new texts as its own; import it with a model")
    reduction = None
    if pca.get("applied"):
        file = c.data_folder / str(pca.get("file", PCA_FILE))
        if not file.is_file():
            raise CorpusError(f"corpus {c.name!r}: its models were combined by a PCA that was not kept (imported "
                              "before it was); import it again")
        reduction = Reduction.load(file)
    spec = ImportSpec(input=Path(str(m.get("source", {}).get("path", ""))), name=c.name, models=models,
                      dim=int(m.get("dim") or c.dim), batch_size=batch_size, **(engine or {}))
    x, _, _ = _embed(spec, texts, work, progress, model_loader, reduction)
    if x.shape[1] != c.dim:
        raise CorpusError(f"corpus {c.name!r}: its models now give {x.shape[1]} dimensions where its vectors have "
                          f"{c.dim}; import it again")
    return x


def _embed(spec: ImportSpec, texts: list[str], work: Path, progress: Progress | None, model_loader: Callable,
           reduction: Reduction | None = None):
    """Every model's embeddings (chunks checkpointed under ``work``), combined (by ``reduction``, a PCA kept with the
    corpus, where given): (matrix, reduction, the models' names and dimensions)."""
    work.mkdir(parents=True, exist_ok=True)
    if spec.engine not in ("process", "ray"):
        raise ValueError(f"engine must be process or ray, got {spec.engine!r}")
    try:
        parts, models_meta = _embed_models(spec, texts, work, progress, model_loader)
    finally:
        if spec.engine == "ray":
            from core.embed_ray import release

            release()  # a local Ray this import started stops before the corpus is written
    if progress and len(parts) > 1:
        progress(0, 0, {"stage": "combining the models (PCA)"})
    emb, red = combine(parts, spec.dim, seed=spec.seed, reduction=reduction, work=work)
    return emb, red, models_meta


def _embed_models(spec: ImportSpec, texts: list[str], work: Path, progress: Progress | None, model_loader: Callable):
    """Each model's (N, D) float32 embeddings, in the order of ``spec.models``, and their manifest entries."""
    parts, models_meta = [], []
    for i, model_name in enumerate(spec.models):
        each = (lambda done, total, info, n=len(spec.models): progress(done, total, {**info, "models": n})) if progress else None
        if spec.engine == "ray":  # the actors load the model; nothing is loaded here
            from core.embed_ray import embed_model_ray

            if progress:
                progress(0, 0, {"stage": f"starting Ray and its actors ({model_name})"})
            arr = embed_model_ray(texts, model_name, work, address=spec.ray_address, chunk_size=spec.chunk_size,
                                  batch_size=spec.batch_size, device=spec.device, progress=each, model_index=i,
                                  actors=spec.ray_actors, models_after=len(spec.models) - 1 - i)
            parts.append(arr)
            models_meta.append({"name": model_name, "dim": int(arr.shape[1]), "engine": "ray"})
            continue
        if progress:
            progress(0, 0, {"stage": f"loading the model {model_name}"})
        model = model_loader(model_name, spec.device)
        arr = embed_model_chunked(texts, model, model_name, work, chunk_size=spec.chunk_size,
                                  batch_size=spec.batch_size, progress=each, model_index=i,
                                  models_after=len(spec.models) - 1 - i)
        parts.append(arr)
        models_meta.append({"name": model_name, "dim": int(arr.shape[1]) if arr.size else model_dim(model)})
    return parts, models_meta


def _write_generation(final: Path, frame: pd.DataFrame, manifest: dict,
                      write_vectors: Callable[[Path], dict]) -> None:
    """The new data goes into a new generation folder beside the old one; replacing manifest.json
    (atomic) switches to it. groups.sqlite stays where it is and is never moved or copied: a kill
    (or a full disk) at any point leaves either the old corpus or the new one listed, with its saved
    groups. ``write_vectors(folder)`` writes the vectors there and returns what the manifest adds."""
    final.mkdir(parents=True, exist_ok=True)
    generation = f"gen-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    data = final / generation
    data.mkdir()
    try:
        save_parquet(data / "corpus.parquet", frame)
        if "text" in frame.columns:
            textcolumn.write(data, frame["text"], data / "corpus.parquet")
        manifest.update(write_vectors(data))
    except BaseException:
        shutil.rmtree(data, ignore_errors=True)  # the previous generation and manifest are untouched
        raise
    manifest["data_dir"] = generation
    save_json(final / "manifest.json", manifest)
    remove_stale_generations(final, generation)
