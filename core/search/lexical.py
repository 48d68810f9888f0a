"""Word features for the rankers: a tf-idf matrix of the corpus texts, and a logistic model over
embedding and words together.

Sentence embeddings blur the exact words that often define a topic (a library's name, a
disease, a place); tf-idf keeps them. A logistic regression over both ``[alpha * embedding,
tf-idf]`` found more of each topic per text reviewed than either alone in the simulated
annotator (bench/annotator.py, bench/RESULTS.md). The matrix is built once per corpus, lazily,
on the first search that needs it, and kept on disk beside the corpus when the index names a file
for it (``KeywordIndex.words_file``), so a restarted app loads it instead of re-reading every text.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from core.search.keyword import fold

_LOCK = threading.Lock()
log = logging.getLogger(__name__)
# bump when word_matrix changes how it reads texts: a saved matrix of another version is not used
WORDS_VERSION = 1


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
    return kindex.words_matrix is not None


def words_of(kindex) -> sp.csr_matrix:
    """The word matrix of a KeywordIndex's texts: from the index, else from its ``words_file``,
    else built (and saved there)."""
    with _LOCK:
        if kindex.words_matrix is None:
            path = Path(kindex.words_file) if kindex.words_file else None
            m = _load(path, kindex.n) if path else None
            if m is None:
                m = word_matrix(kindex.texts)
                if path:
                    _save(path, m)
            kindex.words_matrix = m
    return kindex.words_matrix


def _load(path: Path, rows: int) -> sp.csr_matrix | None:
    """The saved matrix, or None (absent, unreadable, or not of this corpus): then it is rebuilt."""
    if not path.exists():
        return None
    try:
        m = sp.load_npz(path).tocsr()
    except Exception as exc:  # a corrupt cache is rebuilt, never fatal
        log.warning("%s is unreadable (%s); rebuilding the word matrix", path, exc)
        return None
    if m.shape[0] != rows:
        log.warning("%s has %d rows, the corpus %d; rebuilding the word matrix", path, m.shape[0], rows)
        return None
    return m


def _save(path: Path, m: sp.csr_matrix) -> None:
    from core.atomic import atomic_path

    try:
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                sp.save_npz(fh, m, compressed=False)
    except OSError as exc:  # a read-only data root: keep it in memory only
        log.warning("could not save the word matrix to %s (%s)", path, exc)


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
