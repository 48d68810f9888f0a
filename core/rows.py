"""Row numbers and sets of them, and a text column read by row (numpy only: imported by pages as well as
by the search methods)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_rows(x) -> np.ndarray:
    return np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=np.int64).reshape(-1)


# Sets of row numbers, by sorting. From numpy 2.3, np.unique (and union1d, and setdiff1d without
# assume_unique, which call it) finds distinct values with a hash table; on this machine that took
# 776 ms for 500,000 distinct rows where a sort and a neighbour comparison take 16 ms
# (bench/RESULTS.md, issue 29): at a million-row corpus a keyword hit list or a labelled set is that big.
def unique_rows(*parts) -> np.ndarray:
    """The distinct rows of all ``parts`` together, sorted (np.unique of their concatenation)."""
    rows = np.sort(np.concatenate([as_rows(p) for p in parts]) if parts else np.zeros(0, np.int64))
    if len(rows) < 2:
        return rows
    keep = np.empty(len(rows), bool)
    keep[0] = True
    np.not_equal(rows[1:], rows[:-1], out=keep[1:])
    return rows[keep]


def rows_without(rows, drop) -> np.ndarray:
    """The distinct rows of ``rows`` that are not in ``drop``, sorted (np.setdiff1d)."""
    rows = unique_rows(rows)
    return rows[~np.isin(rows, unique_rows(drop), assume_unique=True)]


def in_sorted(rows, sorted_rows) -> np.ndarray:
    """A mask over ``rows`` (any order, repeats allowed): which of them are in ``sorted_rows`` (sorted, as
    unique_rows returns). A binary search per row, without np.isin's hash table (see above)."""
    rows, sorted_rows = as_rows(rows), np.asarray(sorted_rows)
    if not len(sorted_rows):
        return np.zeros(len(rows), bool)
    return sorted_rows[np.searchsorted(sorted_rows, rows).clip(max=len(sorted_rows) - 1)] == rows


class TextColumn(Sequence):
    """A corpus's texts read by row from its frame's column (pandas' Arrow-backed strings) rather than
    held as one Python string per text: at 10M texts that list alone is ~1.5 GB of a server's memory.
    For the large corpora whose keyword index is on disk, where nothing needs every text at once;
    ``list(column)`` still gives them all, a block at a time."""

    _BLOCK = 65_536

    def __init__(self, column):
        self._col = column

    def __len__(self) -> int:
        return len(self._col)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._col.iloc[i].tolist()
        return self._col.iat[int(i)]

    def __iter__(self):
        for s in range(0, len(self._col), self._BLOCK):
            yield from self._col.iloc[s:s + self._BLOCK].tolist()

    def take(self, rows) -> list[str]:
        """The texts of ``rows``, in that order, in one call."""
        return self._col.take(np.asarray(rows, np.int64)).tolist()
