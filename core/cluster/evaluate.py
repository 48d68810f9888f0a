"""Compare clusterings with labels (NMI, ARI, ACC), with annotated groups (IOU) and with each other."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from core.rows import unique_rows


def _contingency(labels_true: Sequence, labels_pred: Sequence) -> np.ndarray:
    """(classes, clusters) counts of rows; a clear error when there is nothing to compare."""
    if len(labels_true) == 0:
        raise ValueError("no labels to compare")
    return contingency_matrix(np.asarray(labels_true), np.asarray(labels_pred))


def _matched(m: np.ndarray) -> float:
    rows, cols = linear_sum_assignment(-m)
    return float(m[rows, cols].sum() / m.sum())


def _pure(m: np.ndarray) -> float:
    return float(m.max(0).sum() / m.sum())


def accuracy(labels_true: Sequence, labels_pred: Sequence) -> float:
    """Clustering accuracy: the best one-to-one matching of clusters to classes (Hungarian)."""
    return _matched(_contingency(labels_true, labels_pred))


def purity(labels_true: Sequence, labels_pred: Sequence) -> float:
    """The share of rows whose cluster's most common class is their own. Unlike NMI it does not reward a
    clustering for merging clusters (fewer than asked for); it does reward splitting, so read it at equal k."""
    return _pure(_contingency(labels_true, labels_pred))


def label_scores(labels_true: Sequence, labels_pred: Sequence) -> dict[str, float]:
    """NMI, ARI, accuracy and purity. With more clusters than classes (K-Means at k = 141 against 38 languages)
    accuracy counts the texts of every unmatched cluster as wrong (5.5% there); purity says how far each cluster
    keeps to one class."""
    if len(labels_true) != len(labels_pred):
        raise ValueError(f"{len(labels_true)} labels but {len(labels_pred)} cluster assignments")
    m = _contingency(labels_true, labels_pred)  # once, for both
    return {"nmi": float(normalized_mutual_info_score(labels_true, labels_pred)),
            "ari": float(adjusted_rand_score(labels_true, labels_pred)), "acc": _matched(m), "purity": _pure(m)}


def categorical_columns(frame: pd.DataFrame, max_classes: int = 1000) -> list[str]:
    """Columns of the corpus that hold classes (an event, a label): text columns (not id, text, date, author)
    without a :func:`class_column_problem` (up to ``max_classes`` values; ``in_reply_to_user_id`` holds ids)."""
    out = []
    for col in frame.columns:
        if col in ("id", "text", "text_raw", "date", "author") or not (
                pd.api.types.is_string_dtype(frame[col]) or pd.api.types.is_object_dtype(frame[col])):
            continue
        if class_column_problem(frame[col], max_classes) is None:
            out.append(col)
    return out


def class_column_problem(column: pd.Series, max_classes: int | None = None) -> str | None:
    """Why a column holds no classes (to score a clustering against, or to train a DAC model on), or None where it
    does: two or more values on two or more rows each, holding most of its non-empty rows (not the texts, nor their
    ids: ``--labels-column text`` scored each text as a class, DAC's ``--label-column text`` trained on the few
    texts written twice), at most ``max_classes`` values, and not ids of other records (every value a number of six
    or more digits)."""
    values = column.astype("string").str.strip()
    values = values[values.notna() & (values != "")]
    sizes = values.value_counts().to_numpy()
    shared = sizes[sizes >= 2]
    if len(shared) < 2 or 2 * shared.sum() < sizes.sum():
        own = "; most rows a value of their own (the texts or their ids?)" if 2 * shared.sum() < sizes.sum() else ""
        return (f"{len(sizes):,} values on {int(sizes.sum()):,} rows, {len(shared):,} of them on two or more rows "
                f"({int(shared.sum()):,} rows){own}; a class column holds a few values, each on many rows (a topic, "
                "an event)")
    if max_classes is not None and len(sizes) > max_classes:
        return f"{len(sizes):,} values, more than {max_classes:,}"
    if values.str.fullmatch(r"\d{6,}").all():
        return "every value a number of six or more digits: ids of other records, not classes"
    return None


def column_scores(column: pd.Series, clusters: np.ndarray, at_most: int | None = None, seed: int = 0) -> dict:
    """:func:`label_scores` of a clustering against a column of classes, over the rows that have a class
    (an empty cell is no class), or a random ``at_most`` of them (on 2 cores 500,000 rows take 0.4 s, 10M
    rows 20 s: bench.class_scores); with the counts of classes and rows it was measured on."""
    clusters = np.asarray(clusters)
    sampled = at_most is not None and len(column) > at_most
    if sampled:
        rows = np.sort(np.random.default_rng(seed).choice(len(column), at_most, replace=False))
        column, clusters = column.iloc[rows], clusters[rows]
    values = column.astype("string").str.strip()
    has = (values.notna() & (values != "")).to_numpy()
    # classes as integer codes: scikit-learn sorts string labels as Python objects (500k rows: 12 s, 0.2 s coded)
    truth, classes = pd.factorize(values[has])
    return {**label_scores(truth, clusters[has]), "classes": len(classes), "rows": int(has.sum()), "sampled": sampled}


def group_iou(groups: Mapping[str, Sequence[int]], clusters: np.ndarray) -> dict:
    """The original study's IOU: for each group the best Jaccard index over clusters, averaged.

    ``groups`` maps a group name to its (included) corpus rows; ``clusters`` is a label per row.
    """
    clusters = np.asarray(clusters)
    sizes = np.bincount(clusters)
    per_group = {}
    for name, rows in groups.items():
        rows = unique_rows(rows)
        if not len(rows):
            continue
        inter = np.bincount(clusters[rows], minlength=len(sizes))
        union = sizes + len(rows) - inter
        j = inter / np.maximum(union, 1)
        best = int(np.argmax(j))
        per_group[name] = {"iou": float(j[best]), "cluster": best, "group_size": int(len(rows)),
                           "cluster_size": int(sizes[best])}
    mean = float(np.mean([g["iou"] for g in per_group.values()])) if per_group else float("nan")
    return {"iou": mean, "groups": per_group}


def group_in_clusters(rows: Sequence[int], clusters: np.ndarray, share: float = 0.8) -> dict:
    """Where a group's rows lie among the clusters: ``counts``, the group's rows in each cluster (an array over the
    clusters); ``clusters``, how many clusters hold any; ``cover``, the fewest clusters that together hold ``share``
    of the group's rows; ``rows``, how many rows the group has."""
    clusters = np.asarray(clusters)
    rows = unique_rows(rows)
    counts = np.bincount(clusters[rows], minlength=int(clusters.max()) + 1 if len(clusters) else 0)
    held = np.cumsum(np.sort(counts)[::-1])
    cover = int(np.searchsorted(held, share * len(rows) - 1e-9) + 1) if len(rows) else 0
    return {"counts": counts, "clusters": int((counts > 0).sum()), "cover": cover, "rows": int(len(rows))}


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """NMI and ARI between two clusterings of the same rows."""
    if len(a) != len(b):
        raise ValueError(f"the clusterings label {len(a)} and {len(b)} rows")
    return {"nmi": float(normalized_mutual_info_score(a, b)), "ari": float(adjusted_rand_score(a, b))}


def best_matches(a: np.ndarray, b: np.ndarray, cluster: int, top: int = 5) -> list[dict]:
    """For cluster ``cluster`` of ``a``: the clusters of ``b`` sharing the most of its rows, with
    the shared count, the share of the cluster they hold, their size and the Jaccard index."""
    a, b = np.asarray(a), np.asarray(b)
    rows = a == cluster
    size = int(rows.sum())
    if not size:
        return []
    shared = np.bincount(b[rows])
    sizes = np.bincount(b, minlength=len(shared))
    order = np.argsort(-shared, kind="stable")[:top]
    return [{"cluster": int(c), "shared": int(shared[c]), "share": round(float(shared[c] / size), 3),
             "size": int(sizes[c]), "jaccard": round(float(shared[c] / (size + sizes[c] - shared[c])), 3)}
            for c in order if shared[c] > 0]
