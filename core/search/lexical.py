"""Word features for the rankers: a tf-idf matrix of the corpus texts, and a logistic model over
embedding and words together.

Sentence embeddings blur the exact words that often define a topic (a library's name, a
disease, a place); tf-idf keeps them. A logistic regression over both ``[alpha * embedding,
tf-idf]`` found more of each topic per text reviewed than either alone in the simulated
annotator (bench/annotator.py, bench/RESULTS.md). The matrix is built once per corpus, lazily,
on the first search that needs it.
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

from core.search.keyword import fold

_LOCK = threading.Lock()


def word_matrix(texts) -> sp.csr_matrix:
    """Rows = texts, columns = words seen in at least two texts; sublinear tf-idf, L2 rows.

    Case and diacritics are folded (``Očkování`` and ``ockovani`` are one word)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(preprocessor=fold, min_df=2, sublinear_tf=True, dtype=np.float32)
    try:
        return vec.fit_transform(texts).tocsr()
    except ValueError:  # no word occurs twice (a tiny corpus): no word features
        return sp.csr_matrix((len(texts), 0), dtype=np.float32)


def words_built(kindex) -> bool:
    return getattr(kindex, "_words", None) is not None


def words_of(kindex) -> sp.csr_matrix:
    """The word matrix of a KeywordIndex's texts, built on first use and kept on the index."""
    m = getattr(kindex, "_words", None)
    if m is None:
        with _LOCK:
            m = getattr(kindex, "_words", None)
            if m is None:
                m = kindex._words = word_matrix(kindex.texts)
    return m


def fit_scores(x: np.ndarray, words: sp.csr_matrix | None, pos: np.ndarray, neg: np.ndarray,
               alpha: float = 0.5, c: float = 1.0) -> np.ndarray:
    """Class-balanced, L2-regularised logistic regression of pos vs neg rows over
    ``[alpha * x, words]``; returns the decision score of every row."""
    from sklearn.linear_model import LogisticRegression

    rows = np.concatenate([pos, neg])
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    dense = alpha * np.asarray(x[rows], dtype=np.float32)
    feats = sp.hstack([sp.csr_matrix(dense), words[rows]]).tocsr() if words is not None else dense
    model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=300).fit(feats, y)
    w = model.coef_[0].astype(np.float32)
    d = x.shape[1]
    scores = np.asarray(x @ (alpha * w[:d]), dtype=np.float32)
    if words is not None and words.shape[1]:
        scores += words @ w[d:]
    return scores + np.float32(model.intercept_[0])
