"""Conversations: the tweets of one thread (a post and the replies under it), from the corpus's ``conversation_id``
(made at import from the text each replies to where a file names that and no conversation: :func:`from_replies`).

A reply often says nothing of its topic in its own words ("Přesně tak.", "And who pays for it?"): on three Czech
topics judged by hand, Suggest at twice a topic's size missed 26% of the replies on topic against 3% of the other
tweets (bench/RESULTS.md, "Czech recall measured against topics judged by hand"). What a reply is about is in its
conversation. A corpus whose file has a ``conversation_id`` column (the name Twitter's API gives it: the id of the
thread's first tweet) keeps it at import as any other column; this reads it, once per import (its codes are kept
beside the corpus, ``threads-v2.npy``). The Annotate page shows a text's conversation, the Review page the text that
opens a reply's thread, and Suggest counts the texts you labelled in each text's conversation
(core/search/suggest.py).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from core.atomic import kept_codes

COLUMN = "conversation_id"
VERSION = 2  # of the rule above: a file of another version is not read (2: a rounded id names no conversation)
FILE = f"threads-v{VERSION}.npy"


class Threads:
    """The conversations of a corpus: ``codes[row]`` numbers the conversation of each row that shares one with
    another row, -1 for a row alone (no conversation, or the only one of it in the corpus)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = np.asarray(codes, dtype=np.int32)
        self.sizes = np.bincount(self.codes[self.codes >= 0], minlength=int(self.codes.max(initial=-1)) + 1)
        self._starts = np.r_[0, np.cumsum(self.sizes)].astype(np.int64)

    @functools.cached_property
    def _rows(self) -> np.ndarray:
        """The rows in a conversation, by conversation, then by row: sorted at the first look at a conversation
        (1.5 s at 10M rows), not when a page opens."""
        shared = np.flatnonzero(self.codes >= 0)
        return shared[np.argsort(self.codes[shared], kind="stable")].astype(np.int64)

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


def _oldest_first(mates: np.ndarray, dates: np.ndarray | None) -> np.ndarray:
    return mates[np.argsort(dates[mates], kind="stable")] if dates is not None and len(mates) else mates


def _dates(frame: pd.DataFrame) -> np.ndarray | None:
    return frame["date"].to_numpy() if "date" in frame.columns else None


def in_order(threads: Threads | None, frame: pd.DataFrame, row: int) -> np.ndarray:
    """Every row of ``row``'s conversation, itself included, oldest first where the corpus has dates (otherwise in
    corpus order); empty where it has none."""
    return _oldest_first(threads.mates(row) if threads is not None else np.zeros(0, np.int64), _dates(frame))


def openings(threads: Threads | None, frame: pd.DataFrame, rows) -> np.ndarray:
    """For each of ``rows``, the first text of its conversation (as :func:`in_order` orders it), or -1 where the row
    has no conversation or opens it itself."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full(len(rows), -1, np.int64)
    if threads is None or not len(rows):
        return out
    dates, firsts = _dates(frame), {}  # the dates read once, each conversation ordered once
    for i, (row, code) in enumerate(zip(rows.tolist(), threads.codes[rows].tolist())):
        if code >= 0:
            if code not in firsts:
                firsts[code] = int(_oldest_first(threads.mates(row), dates)[0])
            if firsts[code] != row:
                out[i] = firsts[code]
    return out


CHAIN_STEPS = 64  # pointer jumps in from_replies: a chain of 2**64 replies is followed to its first text


def from_replies(ids: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Each text's conversation, named as Twitter's API names it, from the text each replies to (``parents[i]``, the
    id of the text ``ids[i]`` replies to; '' for none): a reply is followed up its chain within the corpus to the
    text the chain starts with, whose id names the conversation; a chain that leaves the corpus is named by the text
    it replies to there, so the replies to one text the corpus lacks are one conversation. By pointer jumping: each
    row's ancestor doubles its reach each step."""
    up = pd.Index(ids).get_indexer(parents)  # the row replied to, -1 where it is not in the corpus
    up[parents == ""] = -1
    top = np.where(up >= 0, up, np.arange(len(ids)))
    for _ in range(CHAIN_STEPS):
        higher = top[top]
        if (higher == top).all():
            break
        top = higher
    outside = parents[top]  # what the chain's first text replies to, where the corpus lacks it
    names = np.where((up[top] < 0) & (outside != ""), outside, ids[top])
    looped = np.flatnonzero(up[top] >= 0)  # a chain with no first text: it runs into a loop of replies
    if len(looped):  # (ids a file mangled, or reused): the loop's texts, and the replies to them, are one
        names[looped] = ids[_loops_first(up, top[looped])]  # conversation, named by the loop's first row
    return names


def _loops_first(up: np.ndarray, members: np.ndarray) -> np.ndarray:
    """For rows of loops of replies (``up``: the row each replies to), the first row of each one's loop."""
    first: dict[int, int] = {}
    for row in map(int, members):
        if row not in first:
            loop, at = [row], int(up[row])
            while at != row:
                loop.append(at)
                at = int(up[at])
            first.update(dict.fromkeys(loop, min(loop)))
    return np.array([first[int(r)] for r in members], dtype=np.int64)


def codes_of(values) -> np.ndarray:
    """One code per row (int32): rows of one conversation share a code that no other row has; -1 for a row alone
    (its conversation holds no other row) or without one (empty, spaces, missing, or a number a spreadsheet rounded:
    core.ingest.spreadsheet_rounded). By pyarrow's dictionary encoding:
    4-6 s at 10M text ids where pandas took 8 (bench/RESULTS.md, "Replies come in through their conversation")."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from core.ingest import spreadsheet_rounded

    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, from_pandas=True)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):  # as read from a CSV: "" meaning none,
        # and so does an id a spreadsheet rounded (1,3449E+18 stands for thousands of conversations)
        arr = pc.utf8_trim_whitespace(arr)
        arr = pc.if_else(pc.or_(pc.equal(arr, ""), spreadsheet_rounded(arr)), pa.scalar(None, arr.type), arr)
    encoded = pc.dictionary_encode(arr)
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    codes = np.concatenate([c.indices.fill_null(-1).to_numpy(zero_copy_only=False) for c in chunks] or
                           [np.zeros(0, np.int64)]).astype(np.int64)
    inside = codes >= 0
    shared = inside.copy()
    if inside.any():
        shared[inside] = np.bincount(codes[inside])[codes[inside]] > 1
    out = np.full(len(codes), -1, np.int32)
    out[shared] = pd.factorize(codes[shared])[0]
    return out


def _of_codes(codes: np.ndarray) -> Threads | None:
    return Threads(codes) if (np.asarray(codes) >= 0).any() else None


def threads_of(frame: pd.DataFrame | None) -> Threads | None:
    """The corpus's conversations, or None where it has no ``conversation_id`` column or no conversation holds two
    of its texts. An empty value is no conversation."""
    if frame is None or COLUMN not in frame.columns:
        return None
    return _of_codes(codes_of(frame[COLUMN]))


def load_or_build(folder: Path, frame: pd.DataFrame) -> Threads | None:
    """:func:`threads_of`, its codes kept in ``folder`` beside the corpus (computed once per import: a few seconds at
    10M rows, read back in a blink)."""
    if COLUMN not in frame.columns:
        return None
    return _of_codes(kept_codes(Path(folder) / FILE, len(frame), lambda: codes_of(frame[COLUMN]), "conversations",
                                "threads-v*.npy"))
