"""AUTO: pick the method to ask next from the labels so far.

COS while nothing is excluded (the contrast methods need both sides); once both sides exist,
the closed-form LDA, which was the best single method in the simulated annotator
(bench/annotator.py, bench/RESULTS.md).
"""

from __future__ import annotations

import numpy as np

from core.search import cosine, lda
from core.search.base import Method, Ranked, SearchContext, as_rows


def choose(n_included: int, n_excluded: int) -> Method:
    if n_excluded < lda.METHOD.min_excluded:
        return cosine.METHOD
    return lda.METHOD


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           **params: object) -> Ranked:
    inc, exc = as_rows(included), as_rows(excluded)
    METHOD.check(inc, exc)
    chosen = choose(len(inc), len(exc))
    r = chosen.search(ctx, inc, exc, k, **params)
    return Ranked(r.rows, r.scores, "auto", {**r.info, "chosen": chosen.name})


METHOD = Method("auto", "Suggest", "Picks COS or LDA from the labels so far.", 1, 0, search)
