"""A quote read with what it quotes, for the semantic searches: the embedding set ``quotes``.

A quote's own words often say nothing of its topic ("Přesně tak.", "This!"): its vector sits with other such
words, far from what it quotes, so COS, LDA, NN1, NN2 and Suggest do not find it, though the keyword search does
(*Quoted tweets too*, core.search.keyword.QuoteIndex). This set is the import's vectors with each quote's vector
moved towards what it quotes: ``normalise(own + weight * quoted)``, the quoted tweet (core.ingest.QUOTED, "@name:
text", the name left out) embedded by the corpus's own models, combined as the import combined them (by the PCA
kept with the corpus, for an ensemble). Every other row keeps its vector. The import's vectors are not touched: a
user picks the set in the sidebar (core.embedsets), and ``precompute.quotes`` (or the import, ``--quotes-set``)
makes it. The set keeps each quoted tweet's vector (``quoted.npy``, by the key of its words), so a tweet quoted a
thousand times is embedded once, and the set made again after a new import embeds only the tweets quoted since.
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from core.embed import IN_MEMORY, NoRoom, l2_normalise, load_model, need_room, room_to_embed
from core.ingest import QUOTED
from core.progress import Progress
from core.safeload import load_npy

SET = "quotes"
WEIGHT = 1.0  # what it quotes weighs as much as the quote's own words (bench/quote_vectors.py)
BLOCK = 1 << 18  # rows copied or blended at a time
_NAME = re.compile(r"^@[^\s:]{1,64}:\s*")


class QuotesError(ValueError):
    """The set quotes cannot be made (the corpus has no quotes to read so, or the disk filled up); the message says
    why."""


def _body(quoted: str) -> str:
    """What a quote quotes, without the "@name: " the import writes before it."""
    return _NAME.sub("", quoted, count=1).strip()


def quoted_bodies(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(the rows that quote a tweet with words, what each quotes without the "@name: " the import writes before it;
    a quote of a post without words, a picture's, is left out)."""
    from core.search.keyword import quoting

    rows, quoted = quoting(column)
    bodies = [_body(t) for t in quoted.tolist()]
    keep = np.array([bool(b) for b in bodies], dtype=bool)
    return rows[keep], [b for b, k in zip(bodies, keep) if k]


class WithQuoted(Sequence):
    """A corpus's texts as Suggest's word matrix reads them (core.search.lexical.word_matrix): a quote's words
    followed by the words of what it quotes (the "@name: " left out), so a quote saying "This!" of a tweet on a
    topic has that tweet's words; a text quoting nothing as it is. Read row by row, what each quotes kept in the
    corpus's own column (no second copy of 2M quoted tweets at 10M rows)."""

    def __init__(self, texts: Sequence[str], rows: np.ndarray, quoted: pd.Series):
        self._texts = texts
        self.rows, self._quoted = rows, quoted  # the rows that quote, sorted; what each quotes, in their order

    def __len__(self) -> int:
        return len(self._texts)

    def _with(self, text: str, at: int) -> str:
        body = _body(str(self._quoted.iat[at]))
        return f"{text}\n{body}" if body else text

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i)
        at = int(np.searchsorted(self.rows, i))
        text = self._texts[i]
        return self._with(text, at) if at < len(self.rows) and self.rows[at] == i else text

    def __iter__(self):
        at, n = 0, len(self.rows)
        for i, text in enumerate(self._texts):
            if at < n and self.rows[at] == i:
                yield self._with(text, at)
                at += 1
            else:
                yield text


def words_read(texts: Sequence[str], column: pd.Series | None) -> Sequence[str]:
    """``texts`` as Suggest's words read them: with what each quotes (:class:`WithQuoted`) where the corpus has
    quotes (``column``, core.ingest.QUOTED), else as they are."""
    from core.search.keyword import quoting

    rows, quoted = quoting(column) if column is not None else ((), None)
    return WithQuoted(texts, rows, quoted) if len(rows) else texts


def blend(own: np.ndarray, quoted: np.ndarray, weight: float = WEIGHT) -> np.ndarray:
    """Each quote's vector moved towards what it quotes (both unit rows): ``normalise(own + weight * quoted)``."""
    if own.shape != quoted.shape:
        raise ValueError(f"{len(own)} quotes of {own.shape[1:]} but {len(quoted)} quoted vectors of {quoted.shape[1:]}")
    return l2_normalise(np.asarray(own, np.float32) + np.float32(weight) * np.asarray(quoted, np.float32))


def _copied_to_file(rows: int, dim: int) -> bool:
    """Whether :func:`_copy` copies vectors of this shape into a file (their float32 copy past IN_MEMORY bytes)."""
    return rows * dim * 4 > IN_MEMORY


def _copy(x: np.ndarray, work: Path) -> np.ndarray:
    """``x`` as float32, in memory, or for a large corpus in a file under ``work`` (memory-mapped, as the import keeps
    them: 10M x 384 is 7.7 GB of fp16, 15 GB of float32), copied a block of rows at a time."""
    if not _copied_to_file(*x.shape):
        return np.array(x, dtype=np.float32)
    work.mkdir(parents=True, exist_ok=True)
    kept = np.float16 if x.dtype == np.float16 else np.float32
    out = np.lib.format.open_memmap(work / "vectors.npy", mode="w+", dtype=kept, shape=x.shape)
    for start in range(0, len(x), BLOCK):
        out[start:start + BLOCK] = x[start:start + BLOCK]
    return out


KEYS, KEPT = "quoted.keys.npy", "quoted.npy"  # kept in the set: each quoted tweet's key and vector, sorted by key
CHECK = 16  # quoted tweets an earlier set kept, embedded again to check the model still gives their vectors
CHECK_COSINE = 0.999  # below it, what was kept is not what the corpus's models give now: every one embedded again


def body_keys(bodies: Sequence[str]) -> np.ndarray:
    """A 64-bit key of each quoted tweet's words (BLAKE2b): a tweet quoted a thousand times is one key."""
    return np.fromiter((int.from_bytes(hashlib.blake2b(b.encode("utf-8"), digest_size=8).digest(), "little")
                        for b in bodies), dtype=np.uint64, count=len(bodies))


def _models_of(corpus) -> dict:
    """What a quoted tweet's vector depends on besides its words: the corpus's models, dimension and PCA."""
    m = corpus.manifest
    return {"models": [x.get("name") for x in m.get("models", [])], "dim": int(m.get("dim") or corpus.dim),
            "pca": (m.get("pca") or {}).get("explained_variance")}


def _kept_before(corpus) -> tuple[np.ndarray, np.ndarray] | None:
    """(sorted keys, their vectors memory-mapped) of the quoted tweets the corpus's last set ``quotes`` embedded,
    whatever import of the corpus it was made for, where its models made them; None where there is none."""
    from core import embedsets

    d = embedsets.folder(corpus.name, corpus.folder.parent) / SET
    try:
        meta = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("quoted_by") != _models_of(corpus):
            return None
        keys, vectors = load_npy(d / KEYS, mmap_mode="r"), load_npy(d / KEPT, mmap_mode="r")
    except (OSError, ValueError, RecursionError):  # none, or damaged: every quoted tweet is embedded
        return None
    ok = keys.ndim == 1 and vectors.ndim == 2 and len(keys) == len(vectors) and vectors.shape[1] == corpus.dim
    return (keys, vectors) if ok else None


def made_before(corpus) -> bool:
    """Whether a set ``quotes`` made before (for an earlier import of the corpus too) kept its quoted tweets' vectors,
    so that making it again embeds only the tweets quoted since."""
    return _kept_before(corpus) is not None


def build(corpus, *, weight: float = WEIGHT, batch_size: int = 64, progress: Progress | None = None,
          model_loader: Callable = load_model, work: Path | None = None, engine: dict | None = None):
    """Write the set ``quotes`` for ``corpus`` (replacing one made before) and return it (core.embedsets). Each
    quoted tweet is embedded once however often it is quoted, and not again where the set made before (for this
    import of the corpus or an earlier one: a new week's tweets imported) kept its vector, checked on a few.
    ``engine``: where they are embedded (core.corpus.ENGINE_OPTIONS: e.g. a Ray cluster), default here. A disk that
    fills up is a QuotesError saying so; the corpus and the set made before are untouched, the quoted tweets
    embedded so far kept (not embedded again), the rest of the work folder removed to give the room back."""
    from core import paths

    work = work or paths.work_dir(corpus.name, corpus.folder.parent) / SET
    try:
        return _build(corpus, weight, batch_size, progress, model_loader, work, engine)
    except NoRoom as exc:  # the embedding's own check (core.embed.ChunkPlan.check_room), after this one's
        raise QuotesError(f"the embedding set {SET!r} of corpus {corpus.name!r} was not made: {exc}; then run python "
                          f"-m precompute.quotes --corpus {corpus.name}") from exc
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        (work / "vectors.npy").unlink(missing_ok=True)
        shutil.rmtree(work / "kept", ignore_errors=True)
        raise QuotesError(f"the disk of {corpus.folder.parent} filled up while making the embedding set {SET!r} of "
                          f"corpus {corpus.name!r}: the corpus and its vectors are as they were, and so is the set "
                          f"made before, if any; make room there, then run python -m precompute.quotes --corpus "
                          f"{corpus.name} (the quoted tweets embedded so far are kept, not embedded again)") from exc


def _check_room(corpus, quoted_tweets: int, texts: list[str], fp16: bool) -> None:
    """QuotesError, before anything is embedded, where the disk of the data root lacks the room the set takes: what
    the embedding of ``texts`` asks for (core.embed.ChunkPlan.check_room: their float32 chunks, their vectors and
    texts as a corpus's), each quoted tweet's vector, the set's vectors and, for a corpus past IN_MEMORY, the copy of
    the import's they are blended in (10M x 384 fp16: 7.7 GB each)."""
    size = 2 if fp16 else 4
    need = (room_to_embed(texts, corpus.dim) + quoted_tweets * corpus.dim * size
            + corpus.n * corpus.dim * size * (2 if _copied_to_file(corpus.n, corpus.dim) else 1))
    need_room(corpus.folder.parent, need, f"the embedding set {SET!r} of corpus {corpus.name!r} (what the quotes "
              "quote, embedded, and the set's own vectors)", "make room there; nothing was embedded", QuotesError)


def _build(corpus, weight: float, batch_size: int, progress: Progress | None, model_loader: Callable, work: Path,
           engine: dict | None):
    from core import embedsets
    from core.corpus import embed_as_corpus, import_vectors, store_precision

    if not weight > 0:
        raise ValueError(f"weight must be above 0, got {weight}")
    column = corpus.frame.get(QUOTED)
    rows, bodies = quoted_bodies(column) if column is not None else (np.zeros(0, np.int64), [])
    if not len(rows):
        raise QuotesError(f"corpus {corpus.name!r} has no quotes (no text quotes a tweet in column {QUOTED!r})")
    keys, first, each = np.unique(body_keys(bodies), return_index=True, return_inverse=True)
    found = np.zeros(len(keys), bool)
    before = _kept_before(corpus)
    if before is not None:
        at = np.minimum(np.searchsorted(before[0], keys), len(before[0]) - 1)
        found = before[0][at] == keys
    check = np.flatnonzero(found)[:: max(1, int(found.sum()) // CHECK)][:CHECK]
    new = np.flatnonzero(~found)
    texts = [bodies[i] for i in first[np.concatenate([new, check])]]
    _check_room(corpus, len(keys), texts, fp16=store_precision(corpus.manifest) == "fp16")
    made = (embed_as_corpus(corpus, texts, work, batch_size=batch_size, progress=progress, model_loader=model_loader,
                           engine=engine) if texts else np.zeros((0, corpus.dim), np.float32))
    agree = np.sum(made[len(new):] * np.asarray(before[1][at[check]], np.float32), 1) if len(check) else None
    if agree is not None and float(agree.min()) < CHECK_COSINE:  # not what the models give now: all embedded
        found[:] = False
        new = np.arange(len(keys))
        made = embed_as_corpus(corpus, [bodies[i] for i in first], work, batch_size=batch_size, progress=progress,
                               model_loader=model_loader, engine=engine)
    # written where the set will keep it (a file, not the server's memory: 2M quoted tweets at 10M rows are 1.5 GB),
    # as the corpus keeps its vectors: fp16 from a million rows, else float32
    (work / "kept").mkdir(parents=True, exist_ok=True)
    quoted = np.lib.format.open_memmap(work / "kept" / KEPT, mode="w+", shape=(len(keys), corpus.dim),
                                       dtype=np.float16 if store_precision(corpus.manifest) == "fp16" else np.float32)
    for start in range(0, len(new), BLOCK):
        quoted[new[start:start + BLOCK]] = made[start:min(start + BLOCK, len(new))]  # the checked ones after them
    kept = np.flatnonzero(found)
    for start in range(0, len(kept), BLOCK):
        part = kept[start:start + BLOCK]
        quoted[part] = before[1][at[part]]
    del made
    # the import's own vectors, whatever set the corpus carries now (a page's has the one picked), copied
    vectors = _copy(import_vectors(corpus.data_folder, corpus.manifest), work)
    for start in range(0, len(rows), BLOCK):
        part = rows[start:start + BLOCK]
        vectors[part] = blend(vectors[part], quoted[each[start:start + BLOCK]], weight)
    quoted.flush()
    del quoted
    np.save(work / "kept" / KEYS, keys)
    models = [x.get("name") for x in corpus.manifest.get("models", [])]
    out = embedsets.save(corpus, SET, vectors, {"method": "quotes", "base_model": " + ".join(models),
                                                "quotes": int(len(rows)), "weight": float(weight),
                                                "quoted_tweets": int(len(keys)), "embedded": int(len(new)),
                                                "quoted_by": _models_of(corpus)},
                         files=sorted((work / "kept").iterdir()))
    shutil.rmtree(work, ignore_errors=True)
    return out
