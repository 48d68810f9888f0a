"""Sets of row numbers by sorting (core/rows.py): the same sets numpy's own functions give."""

import numpy as np
import pytest

from core.rows import rows_without, unique_rows


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000, 50_000])
def test_unique_rows_and_rows_without_are_numpys_sets(n):
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, max(1, n), n), rng.integers(0, max(1, n), n // 3 + 1)
    assert np.array_equal(unique_rows(a, b), np.union1d(a, b))
    assert np.array_equal(unique_rows(a), np.unique(a))
    assert np.array_equal(rows_without(a, b), np.setdiff1d(a, b))
    assert unique_rows(a, b).dtype == np.int64 and unique_rows().shape == (0,)


def test_lists_and_empty_parts_are_rows():
    assert unique_rows([3, 1, 3], [], np.array([2])).tolist() == [1, 2, 3]
    assert rows_without([5, 4, 4, 1], [4, 9]).tolist() == [1, 5]
