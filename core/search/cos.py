"""COS: rank unlabelled rows by inner product with the mean of the included embeddings.

For unit rows, ``x @ mean(included)`` is the mean cosine to the included set, the original
tool's score.
"""

from __future__ import annotations

import numpy as np

from core.search.base import Method, Ranked, SearchContext, as_rows
from core.search.linear import rank_by_direction


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10
           ) -> Ranked:
    METHOD.check(as_rows(included), as_rows(excluded))
    centre = np.asarray(ctx.vectors[as_rows(included)], np.float32).mean(axis=0)
    return rank_by_direction(ctx, centre, included, excluded, k, "cos")


METHOD = Method("cos", "COS", "Most similar to the mean of the included texts.", 1, 0, search)
