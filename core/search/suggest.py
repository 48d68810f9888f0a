"""Suggest (button "Suggest", key "suggest"): the ranker the simulated annotator found best, chosen from the labels so far.

COS while nothing is excluded. Once both sides exist: a class-balanced logistic regression over
the text's embedding *and* its words (tf-idf; see core/search/lexical.py), fitted on the included
texts against the excluded ones plus a random sample of unlabelled texts taken as background (a
topic is usually a small part of a corpus, so a random text is almost always off-topic; the
background shows the model the whole corpus early on, when few texts are excluded). Without the
corpus's words (a context with no word index) the words are left out and it is LDA against the
same negatives. Measured in bench/annotator.py (bench/RESULTS.md).
"""

from __future__ import annotations

import numpy as np

from core.search import cos, lda
from core.search.base import Method, Ranked, SearchContext, as_rows, one_thread, rows_without, unique_rows
from core.search.lexical import fit_scores
from core.search.linear import rank_by_direction, to_torch

BACKGROUND = 300


def background_sample(n: int, labelled: np.ndarray, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, min(n, size + len(labelled)), replace=False)
    return rows_without(pick, labelled)[:size]


def top_unlabelled(scores: np.ndarray, labelled: np.ndarray, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    s = np.array(scores, dtype=np.float32)
    s[labelled] = -np.inf
    k = len(s) - len(labelled) if k is None else min(k, len(s) - len(labelled))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    top = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
    top = top[np.argsort(-s[top], kind="stable")]
    return top.astype(np.int64), s[top]


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           *, background: int = BACKGROUND, words: bool = True, alpha: float = 0.5, c: float = 1.0) -> Ranked:
    """``alpha`` weighs the embedding against the words, ``c`` is the inverse regularisation of the
    logistic model, ``background`` the number of sampled unlabelled texts taken as negatives."""
    inc, exc = as_rows(included), as_rows(excluded)
    METHOD.check(inc, exc)
    if len(exc) < lda.METHOD.min_excluded:
        r = cos.search(ctx, inc, exc, k)
        return Ranked(r.rows, r.scores, "suggest", {"chosen": "cos"})
    labelled = unique_rows(inc, exc)
    # seeded by the number of labels: the same state gives the same suggestion
    neg = unique_rows(exc, background_sample(ctx.index.n, labelled, int(background), ctx.seed + len(labelled)))
    info = {"background": int(len(neg) - len(exc))}
    x = ctx.vectors
    if words and ctx.word_index is not None:
        scores = fit_scores(x, ctx.word_index.matrix, inc, neg, alpha=float(alpha), c=float(c), scan=ctx.index.scores)
        rows, top = top_unlabelled(scores, labelled, k)
        return Ranked(rows, top, "suggest", {"chosen": "words+embedding", **info})
    with one_thread():
        w = lda.fisher_direction(to_torch(np.asarray(x[inc]), ctx.device), to_torch(np.asarray(x[neg]), ctx.device))
        w = (w / w.norm()).cpu().numpy()
    r = rank_by_direction(ctx, w, inc, exc, k, "suggest")
    return Ranked(r.rows, r.scores, "suggest", {"chosen": "lda", **info})


METHOD = Method("suggest", "Suggest", "COS until something is excluded; then a logistic model over the "
                "texts' embeddings and words, against the excluded texts plus a background sample.",
                1, 0, search, limits={"background": (0, 1_000_000), "alpha": (0.0, 1e6), "c": (1e-9, 1e9)})
