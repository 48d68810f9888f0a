"""Copies: texts of a corpus that say the same words, such as a tweet shared again with another link.

Two texts are copies when they are equal once their links and a retweet's leading ``RT @name:`` (a Mastodon boost's
``RT @user@server:``, a Bluesky repost's ``RT @name.bsky.social:``) are taken out, their letters lower-cased and
every run of white space made one space, and, for a quote, when what they quote is equal so read too
(core.ingest.QUOTED: "Přesně tak." quoting a tweet on a flood is no copy of "Přesně tak." quoting one on taxes,
and labelling one no longer labels the other). A text that is nothing but links (or nothing at all) is nobody's
copy. On the scale corpus 30.7% of the 300,000 tweets are a copy of an earlier one (bench/RESULTS.md, "Copies"):
without this, an annotator reviewed each of them again, and a search for more of a topic spent its places on copies
of texts already labelled.

The Annotate page labels a text and its copies together (core.annotate) and shows each text once, with the number
of its copies. The codes are computed once per corpus (about 1 s per 300,000 texts) and kept beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from core.atomic import kept_codes
from core.rows import as_rows, in_sorted, unique_rows

VERSION = 4  # of the rule above (1: without the retweet's prefix; 2: a boost's "RT @user@server:" and a repost's
# "RT @name.bsky.social:" not yet one; 3: quotes of different tweets one): a file of another version is computed again
FILE = f"copies-v{VERSION}.npy"
LINK = r"(?:https?://|www\.)\S*"
RETWEET = r"^\s*rt @\w[\w.-]*(?:@[\w.-]+)?:?\s*"  # lower-cased by then; user@server (Mastodon), a.bsky.social
PIECE = 1 << 20  # texts normalised at a time: the lower-cased and stripped texts of one piece are held at once


def _words(texts):
    """Each text's words as the rule reads them, a piece at a time: (64-bit hashes, whether each is empty)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        arr = texts
    elif hasattr(texts, "array") and hasattr(texts, "dtype"):  # a pandas column: its arrow buffers where it has them
        arr = pa.array(texts, from_pandas=True)
    else:
        arr = pa.array(list(texts), pa.large_string())
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    hashes, empty = [], []
    for chunk in chunks:
        for start in range(0, len(chunk), PIECE):
            piece = pc.utf8_lower(pc.fill_null(chunk.slice(start, PIECE), ""))
            piece = pc.replace_substring_regex(pc.replace_substring_regex(piece, LINK, ""), RETWEET, "")
            piece = pc.utf8_trim_whitespace(pc.replace_substring_regex(piece, r"\s+", " "))
            hashes.append(pd.util.hash_array(piece.to_numpy(zero_copy_only=False), categorize=False))
            empty.append(pc.equal(piece, "").to_numpy(zero_copy_only=False))
    if not hashes:
        return np.zeros(0, np.uint64), np.zeros(0, bool)
    return np.concatenate(hashes), np.concatenate(empty)


def codes_of(texts: Sequence[str], quoted: Sequence[str] | None = None) -> np.ndarray:
    """One code per text (int32), numbered by first appearance: copies share a code, every other text has a code of
    its own. ``quoted``: what each text quotes (core.ingest.QUOTED, '' for none), read by the same rule and joined to
    the text's words. Read a piece at a time, and each piece's words (without links) kept only as a 64-bit hash: at
    10M tweets the words themselves took 3.6 GB at once (bench/copies.py). Two different texts share a hash with a
    chance of about n^2 / 2^65 (3e-6 at 10M texts)."""
    hashes, empty = _words(texts)
    if not len(hashes):
        return np.zeros(0, np.int32)
    if quoted is not None:
        q, none = _words(quoted)
        if len(q) != len(hashes):
            raise ValueError(f"{len(hashes)} texts but {len(q)} quoted texts")
        with np.errstate(over="ignore"):  # a 64-bit mix of the two hashes, where a text quotes one
            hashes = np.where(none, hashes, hashes * np.uint64(0x9E3779B97F4A7C15) ^ q)
    out = pd.factorize(hashes)[0].astype(np.int32)
    empty = np.flatnonzero(empty)
    if len(empty):  # texts of links only: each its own
        out[empty] = np.arange(len(empty), dtype=np.int32) + int(out.max()) + 1
    return out


class Copies:
    """The copies of a corpus's texts, from their codes (``codes_of``)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = np.asarray(codes, dtype=np.int32)
        self.sizes = np.bincount(self.codes) if len(self.codes) else np.zeros(0, np.int64)
        shared = np.flatnonzero(self.sizes[self.codes] > 1)  # rows that have a copy
        order = np.argsort(self.codes[shared], kind="stable")
        self._rows = shared[order].astype(np.int64)  # rows with a copy, by code, then by row
        self._codes = self.codes[self._rows]

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def rows_with_copies(self) -> int:
        return len(self._rows)

    def count(self, rows) -> np.ndarray:
        """How many copies each row has besides itself."""
        rows = as_rows(rows)
        return (self.sizes[self.codes[rows]] - 1).astype(np.int64) if len(rows) else np.zeros(0, np.int64)

    def expand(self, rows) -> np.ndarray:
        """``rows`` (in their order) followed by every copy of them not among them (by row)."""
        rows = as_rows(rows)
        if not len(rows):
            return rows
        codes = self.codes[rows]
        codes = unique_rows(codes[self.sizes[codes] > 1]).astype(self._codes.dtype)  # same dtype: no cast of _codes
        if not len(codes):
            return rows
        lo, hi = np.searchsorted(self._codes, codes), np.searchsorted(self._codes, codes, side="right")
        lengths = hi - lo  # each text's rows, one slice of _rows each, gathered without a loop in Python
        starts = np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
        more = self._rows[starts + np.arange(int(lengths.sum()))]
        more = np.sort(more[~in_sorted(more, unique_rows(rows))])
        return np.concatenate([rows, more])

    def first_of_each(self, rows) -> np.ndarray:
        """Positions in ``rows`` of the first row of each text (copies after the first left out), in order."""
        codes = self.codes[as_rows(rows)]
        if len(codes) < 2:
            return np.arange(len(codes), dtype=np.int64)
        # pandas' hash table: 28 ms for 1.67M rows of a 10M corpus, where a stable sort took 200 ms (bench/copies.py)
        return np.flatnonzero(~pd.Series(codes).duplicated().to_numpy()).astype(np.int64)


def load_or_build(folder: Path, texts: Sequence[str], quoted: Sequence[str] | None = None) -> Copies:
    """The corpus's copies: read from ``folder`` when computed for these texts, computed (and kept there,
    where the folder can be written) otherwise. ``quoted``: what each quotes (the corpus's core.ingest.QUOTED)."""
    return Copies(kept_codes(Path(folder) / FILE, len(texts), lambda: codes_of(texts, quoted), "copies",
                             "copies-v*.npy"))
