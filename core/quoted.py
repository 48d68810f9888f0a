"""A quote read with what it quotes, for the semantic searches: the embedding set ``quotes``.

A quote's own words often say nothing of its topic ("Přesně tak.", "This!"): its vector sits with other such
words, far from what it quotes, so COS, LDA, NN1, NN2 and Suggest do not find it, though the keyword search does
(*Quoted tweets too*, core.search.keyword.QuoteIndex). This set is the import's vectors with each quote's vector
moved towards what it quotes: ``normalise(own + weight * quoted)``, the quoted tweet (core.ingest.QUOTED, "@name:
text", the name left out) embedded by the corpus's own models, combined as the import combined them (by the PCA
kept with the corpus, for an ensemble). Every other row keeps its vector. The import's vectors are not touched: a
user picks the set in the sidebar (core.embedsets), and ``precompute.quotes`` makes it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from core.embed import l2_normalise, load_model
from core.ingest import QUOTED
from core.progress import Progress

SET = "quotes"
WEIGHT = 1.0  # what it quotes weighs as much as the quote's own words (bench/quote_vectors.py)
BLOCK = 1 << 18  # rows copied or blended at a time
IN_MEMORY = 1 << 30  # bytes of float32 vectors copied in memory; more go through a file
_NAME = re.compile(r"^@[^\s:]{1,64}:\s*")


class QuotesError(ValueError):
    """The corpus has no quotes to read so; the message names it."""


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


def _copy(x: np.ndarray, work: Path) -> np.ndarray:
    """``x`` as float32, in memory, or for a large corpus in a file under ``work`` (memory-mapped, as the import keeps
    them: 10M x 384 is 7.7 GB of fp16, 15 GB of float32), copied a block of rows at a time."""
    if x.nbytes * (2 if x.dtype == np.float16 else 1) <= IN_MEMORY:
        return np.array(x, dtype=np.float32)
    work.mkdir(parents=True, exist_ok=True)
    kept = np.float16 if x.dtype == np.float16 else np.float32
    out = np.lib.format.open_memmap(work / "vectors.npy", mode="w+", dtype=kept, shape=x.shape)
    for start in range(0, len(x), BLOCK):
        out[start:start + BLOCK] = x[start:start + BLOCK]
    return out


def build(corpus, *, weight: float = WEIGHT, batch_size: int = 64, progress: Progress | None = None,
          model_loader: Callable = load_model, work: Path | None = None):
    """Write the set ``quotes`` for ``corpus`` (replacing one made before) and return it (core.embedsets)."""
    from core import embedsets, paths
    from core.corpus import embed_as_corpus, import_vectors

    if not weight > 0:
        raise ValueError(f"weight must be above 0, got {weight}")
    column = corpus.frame.get(QUOTED)
    rows, bodies = quoted_bodies(column) if column is not None else (np.zeros(0, np.int64), [])
    if not len(rows):
        raise QuotesError(f"corpus {corpus.name!r} has no quotes (no text quotes a tweet in column {QUOTED!r})")
    work = work or paths.work_dir(corpus.name, corpus.folder.parent) / SET
    quoted = embed_as_corpus(corpus, bodies, work, batch_size=batch_size, progress=progress, model_loader=model_loader)
    # the import's own vectors, whatever set the corpus carries now (a page's has the one picked), copied
    vectors = _copy(import_vectors(corpus.data_folder, corpus.manifest), work)
    for start in range(0, len(rows), BLOCK):
        part = rows[start:start + BLOCK]
        vectors[part] = blend(vectors[part], quoted[start:start + BLOCK], weight)
    models = [x.get("name") for x in corpus.manifest.get("models", [])]
    out = embedsets.save(corpus, SET, vectors, {"method": "quotes", "base_model": " + ".join(models),
                                                "quotes": int(len(rows)), "weight": float(weight)})
    shutil.rmtree(work, ignore_errors=True)
    return out
