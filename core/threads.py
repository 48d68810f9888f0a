"""Conversations: the tweets of one thread (a post and the replies under it), from the corpus's ``conversation_id``.

A reply often says nothing of its topic in its own words ("Přesně tak.", "And who pays for it?"): on three Czech
topics judged by hand, Suggest at twice a topic's size missed 26% of the replies on topic against 3% of the other
tweets (bench/RESULTS.md, "Czech recall measured against topics judged by hand"). What a reply is about is in its
conversation. A corpus whose file has a ``conversation_id`` column (the name Twitter's API gives it: the id of the
thread's first tweet) keeps it at import as any other column; this reads it. The Annotate page shows a text's
conversation, and Suggest counts the texts you labelled in each text's conversation (core/search/suggest.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMN = "conversation_id"


class Threads:
    """The conversations of a corpus: ``codes[row]`` numbers the conversation of each row that shares one with
    another row, -1 for a row alone (no conversation, or the only one of it in the corpus)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = np.asarray(codes, dtype=np.int32)
        shared = np.flatnonzero(self.codes >= 0)
        order = np.argsort(self.codes[shared], kind="stable")
        self._rows = shared[order].astype(np.int64)  # rows in a conversation, by conversation, then by row
        self.sizes = np.bincount(self.codes[shared], minlength=int(self.codes.max(initial=-1)) + 1)
        self._starts = np.r_[0, np.cumsum(self.sizes)].astype(np.int64)

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def count(self) -> int:
        """Conversations of two or more rows."""
        return int(len(self.sizes))

    def mates(self, row: int) -> np.ndarray:
        """Every row of ``row``'s conversation, itself included, in corpus order (empty for a row alone)."""
        code = int(self.codes[int(row)])
        if code < 0:
            return np.zeros(0, np.int64)
        return self._rows[self._starts[code]:self._starts[code + 1]]

    def around(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row of the conversations that hold any of ``rows`` (sorted), and for each how many of ``rows``
        share its conversation, itself not counted. Only those conversations are read: a few labelled texts of a
        10M-row corpus cost as little as of a small one."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        codes = self.codes[rows]
        rows, codes = rows[codes >= 0], codes[codes >= 0]
        if not len(rows):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        held, per = np.unique(codes, return_counts=True)
        lengths = self.sizes[held]
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        members = self._rows[np.repeat(self._starts[held], lengths) + offsets]
        counts = np.repeat(per, lengths) - np.isin(members, rows)
        order = np.argsort(members, kind="stable")
        return members[order], counts[order].astype(np.int64)


def in_order(threads: Threads | None, frame: pd.DataFrame, row: int) -> np.ndarray:
    """Every row of ``row``'s conversation, itself included, oldest first where the corpus has dates (otherwise in
    corpus order); empty where it has none."""
    mates = threads.mates(row) if threads is not None else np.zeros(0, np.int64)
    if len(mates) and "date" in frame.columns:
        mates = mates[np.argsort(frame["date"].to_numpy()[mates], kind="stable")]
    return mates


def openings(threads: Threads | None, frame: pd.DataFrame, rows) -> np.ndarray:
    """For each of ``rows``, the first text of its conversation (:func:`in_order`), or -1 where the row has no
    conversation or opens it itself."""
    out = []
    for row in np.asarray(rows, dtype=np.int64).tolist():
        first = in_order(threads, frame, row)[:1]
        out.append(int(first[0]) if len(first) and first[0] != row else -1)
    return np.array(out, dtype=np.int64)


def threads_of(frame: pd.DataFrame | None) -> Threads | None:
    """The corpus's conversations, or None where it has no ``conversation_id`` column or no conversation holds two
    of its texts. An empty value is no conversation."""
    if frame is None or COLUMN not in frame.columns:
        return None
    values = frame[COLUMN]
    if not pd.api.types.is_numeric_dtype(values):  # as read from a CSV: text, spaces and "" meaning none
        values = values.astype("string").str.strip().replace("", pd.NA)
    codes, _ = pd.factorize(values, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    inside = codes >= 0
    sizes = np.bincount(codes[inside]) if inside.any() else np.zeros(0, np.int64)
    shared = inside.copy()
    shared[inside] = sizes[codes[inside]] > 1
    if not shared.any():
        return None
    out = np.full(len(codes), -1, np.int32)
    out[shared] = pd.factorize(codes[shared])[0]
    return Threads(out)
