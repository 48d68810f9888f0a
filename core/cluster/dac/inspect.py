"""What the DAC page shows: one anchor's (or a set's) bag with the predicted
membership, in 2-D, and how the predicted members agree with a reference (a K-Means cluster, a
saved group, a label)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.cluster.dac import infer


@dataclass
class BagView:
    anchors: np.ndarray  # corpus rows
    non_members: np.ndarray  # corpus rows given as known non-members
    rows: np.ndarray  # the rest of the bag, best first
    prob: np.ndarray  # membership probability of ``rows``
    xy: np.ndarray  # (len(anchors) + len(non_members) + len(rows), 2): anchors, then non-members, then rows
    threshold: float

    @property
    def members(self) -> np.ndarray:
        return self.rows[self.prob > self.threshold]

    def frame(self, texts: pd.Series) -> pd.DataFrame:
        """Every row of the bag: row, role, probability, x, y, text (anchors first)."""
        roles = (["anchor"] * len(self.anchors) + ["known non-member"] * len(self.non_members)
                 + ["member" if p > self.threshold else "not a member" for p in self.prob])
        all_rows = np.concatenate([self.anchors, self.non_members, self.rows])
        prob = np.concatenate([np.ones(len(self.anchors)), np.zeros(len(self.non_members)), self.prob])
        return pd.DataFrame({"row": all_rows, "role": roles, "probability": prob.astype(np.float32),
                             "x": self.xy[:, 0], "y": self.xy[:, 1], "text": texts.iloc[all_rows].to_numpy()})


def bag_view(model, vectors: np.ndarray, anchors, *, non_members=(), bag: int = 800, threshold: float = 0.5,
             seed: int = 0) -> BagView:
    """The anchors' bag, its predictions and a 2-D PCA of the whole bag."""
    anchors = np.unique(np.asarray(anchors, np.int64))
    non = np.setdiff1d(np.asarray(non_members, np.int64), anchors)
    rows, prob = infer.members(model, vectors, anchors, bag=bag, non_members=non, seed=seed)
    shown_non = non[:64]  # members() puts at most 64 known non-members into the bag
    every = np.concatenate([anchors, shown_non, rows])
    v = np.asarray(vectors[every], np.float32)
    v = v - v.mean(0)
    if len(v) >= 2:
        _, _, vt = np.linalg.svd(v, full_matrices=False)
        xy = v @ vt[:2].T
        if xy.shape[1] < 2:
            xy = np.pad(xy, ((0, 0), (0, 2 - xy.shape[1])))
    else:
        xy = np.zeros((len(v), 2), np.float32)
    return BagView(anchors, shown_non, rows, prob, xy.astype(np.float32), threshold)


def agreement_with(view: BagView, reference_rows: np.ndarray, name: str) -> dict:
    """Precision, recall and accuracy of the predicted members against a reference set of corpus rows,
    over the rows of the bag that were classified (anchors and known non-members left out)."""
    truth = np.isin(view.rows, reference_rows)
    pred = view.prob > view.threshold
    tp = int((pred & truth).sum())
    return {"reference": name, "reference size in bag": int(truth.sum()), "predicted members": int(pred.sum()),
            "precision": tp / max(1, int(pred.sum())), "recall": tp / max(1, int(truth.sum())),
            "accuracy": float((pred == truth).mean()) if len(truth) else float("nan")}


def references(view: BagView, anchor: int, *, clusters: np.ndarray | None = None, cluster_name: str | None = None,
               groups: dict[str, np.ndarray] | None = None, labels: pd.Series | None = None) -> list[dict]:
    """:func:`agreement_with` against what is known of ``anchor``: its cluster in a clustering, each
    saved group that holds it, and the rows sharing its label."""
    out = []
    if clusters is not None:
        out.append(agreement_with(view, np.flatnonzero(clusters == clusters[anchor]), f"{cluster_name}: the anchor's cluster"))
    for group, rows in (groups or {}).items():
        if np.isin(anchor, rows):
            out.append(agreement_with(view, rows, f"saved group {group}"))
    if labels is not None:
        lab = labels.astype("string")
        out.append(agreement_with(view, np.flatnonzero((lab == lab.iat[anchor]).fillna(False).to_numpy()),
                                  "the anchor's label"))
    return out


def curves(history: list[dict]) -> pd.DataFrame:
    """The model card's training curves: one row per epoch (all stages in order)."""
    rows = [{"step": i + 1, "stage": h.get("stage", ""), "epoch": h.get("epoch"), "loss": h.get("loss"),
             "validation loss": h.get("val_loss"), "validation accuracy": h.get("val_accuracy")}
            for i, h in enumerate(history)]
    return pd.DataFrame(rows)
