"""Row numbers and sets of them (numpy only: imported by pages as well as by the search methods)."""

from __future__ import annotations

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
