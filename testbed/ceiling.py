"""The ceiling model: how findable each class is with Suggest's features when most labels are known
(``python -m bench.ceiling``)."""

from __future__ import annotations


import numpy as np

from core.search.lexical import fit_scores


def out_of_fold_scores(x, words, member: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    from sklearn.model_selection import StratifiedKFold

    scores = np.zeros(len(member), np.float32)
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(member)), member):
        pos, neg = train[member[train]], train[~member[train]]
        scores[test] = fit_scores(x, words, pos, neg)[test]
    return scores


def recall_at(scores: np.ndarray, member: np.ndarray, multiple: float) -> float:
    n = int(member.sum())
    top = np.argsort(-scores, kind="stable")[: int(multiple * n)]
    return float(member[top].sum() / n)
