"""AUTO ("Suggest"): the method the simulated annotator found best, chosen from the labels so far.

COS while nothing is excluded. Once both sides exist: the closed-form LDA, fitted on the included
texts against the excluded ones *plus* a random sample of unlabelled texts taken as background
(a topic is usually a small part of a corpus, so a random text is almost always off-topic). The
background gives the discriminant a picture of the whole corpus early on, when only a few texts
have been excluded. Measured in bench/annotator.py (bench/RESULTS.md).
"""

from __future__ import annotations

import numpy as np

from core.search import cosine, lda
from core.search.base import Method, Ranked, SearchContext, as_rows
from core.search.linear import rank_by_direction, to_torch

BACKGROUND = 300


def background_sample(n: int, labelled: np.ndarray, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, min(n, size + len(labelled)), replace=False)
    return np.setdiff1d(pick, labelled)[:size]


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           *, background: int = BACKGROUND, **params: object) -> Ranked:
    inc, exc = as_rows(included), as_rows(excluded)
    METHOD.check(inc, exc)
    if len(exc) < lda.METHOD.min_excluded:
        r = cosine.search(ctx, inc, exc, k)
        return Ranked(r.rows, r.scores, "auto", {"chosen": "cos"})
    labelled = np.union1d(inc, exc)
    # seeded by the number of labels: the same state gives the same suggestion
    neg = np.union1d(exc, background_sample(ctx.index.n, labelled, background, ctx.seed + len(labelled)))
    x = ctx.vectors
    w = lda.fisher_direction(to_torch(np.asarray(x[inc]), ctx.device), to_torch(np.asarray(x[neg]), ctx.device))
    w = (w / w.norm()).cpu().numpy()
    r = rank_by_direction(ctx, w, inc, exc, k, "auto")
    return Ranked(r.rows, r.scores, "auto", {"chosen": "lda", "background": int(len(neg) - len(exc))})


METHOD = Method("auto", "Suggest", "COS until something is excluded, then LDA against the excluded "
                "texts plus a background sample of the corpus.", 1, 0, search)
