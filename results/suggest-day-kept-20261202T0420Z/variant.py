# one-off: Suggest's day features in a variant (DAY_VARIANT), then bench.annotator with the given arguments.
#   ship: as shipped; winK: a day's window of +-K days (counts and sizes summed over it);
#   ratio: of a day's labelled texts, the included share, smoothed toward the overall share (M prior texts), centred;
#   inc: only the included side.
import os, runpy, sys
import numpy as np
sys.path.insert(0, os.getcwd())
from core.search import suggest
V = os.environ.get("DAY_VARIANT", "ship")
M = float(os.environ.get("DAY_M", "5"))
ship = suggest.day_features

def windowed(days, size, inc, exc, weight, k):
    if days is None:
        return None
    kern = np.ones(2 * k + 1, np.float32)
    sizew = np.convolve(size.astype(np.float32), kern, mode="same")
    others = np.maximum(sizew - 1, 1)
    sides = tuple(side[days[side] >= 0] for side in (inc, exc))
    per = np.stack([np.convolve(np.bincount(days[s], minlength=len(size)).astype(np.float32), kern, mode="same")
                    for s in sides], axis=1)
    unit = np.zeros_like(per)
    for col in range(2):
        top = float((per[:, col] / others).max(initial=0))
        if top > 0:
            unit[:, col] = weight / (others * top)
    if not unit.any():
        return None
    return suggest.DayShares(days, unit, per, sides)

class Ratio:
    """one column: of a day's labelled texts, the included share smoothed toward the overall share p (M prior
    texts), less p, over its largest |value|, times weight; a labelled text's own label not counted."""
    def __init__(self, days, ci, ce, p, weight, inc, exc):
        self.days, self.ci, self.ce, self.p, self.inc, self.exc = days, ci, ce, p, inc, exc
        v = self.value(ci, ce)
        self.scale = weight / max(float(np.abs(v).max(initial=0)), 1e-9)
        self.table = np.append(v * self.scale, 0).astype(np.float32)
        self.shape = (len(days), 1)
    def value(self, ci, ce):
        return (ci + M * self.p) / (ci + ce + M) - self.p
    def __getitem__(self, rows):
        rows = np.asarray(rows, np.int64)
        d = self.days[rows]
        ci = self.ci[d] - np.isin(rows, self.inc)
        ce = self.ce[d] - np.isin(rows, self.exc)
        out = np.where(d >= 0, self.value(ci, ce) * self.scale, 0).astype(np.float32)
        return out[:, None]
    def __matmul__(self, w):
        return (self.table * np.float32(w[0]))[self.days]

def ratio(days, size, inc, exc, weight):
    if days is None:
        return None
    sides = tuple(side[days[side] >= 0] for side in (inc, exc))
    ci, ce = (np.bincount(days[s], minlength=len(size)).astype(np.float32) for s in sides)
    p = ci.sum() / max(ci.sum() + ce.sum(), 1)
    return Ratio(days, ci, ce, p, weight, sides[0], sides[1])

def smoothed(days, size, inc, exc, weight, m):
    """as shipped, a day's share over (its other texts + m): a day of a few texts cannot set the scale"""
    if days is None:
        return None
    others = np.maximum(size - 1, 1).astype(np.float32) + m
    sides = tuple(side[days[side] >= 0] for side in (inc, exc))
    per = np.stack([np.bincount(days[s], minlength=len(size)) for s in sides], axis=1).astype(np.float32)
    unit = np.zeros_like(per)
    for col in range(2):
        top = float((np.where(size > per[:, col], per[:, col], per[:, col] - 1) / others).max(initial=0))
        if top > 0:
            unit[:, col] = weight / (others * top)
    if not unit.any():
        return None
    return suggest.DayShares(days, unit, per, sides)

class Both:
    """the shipped block beside the ratio's column"""
    def __init__(self, a, b):
        self.parts = [p for p in (a, b) if p is not None]
        self.shape = (a.shape[0] if a is not None else b.shape[0], sum(p.shape[1] for p in self.parts))
    def __getitem__(self, rows):
        import scipy.sparse as sp
        return sp.hstack([sp.csr_matrix(p[rows]) for p in self.parts]).tocsr()
    def __matmul__(self, w):
        out, at = 0, 0
        for p in self.parts:
            out = out + np.asarray(p @ w[at:at + p.shape[1]], np.float32).ravel()
            at += p.shape[1]
        return out

def pick(days, size, inc, exc, weight):
    if V == "both":
        a, b = ship(days, size, inc, exc, weight), ratio(days, size, inc, exc, weight)
        return None if a is None and b is None else Both(a, b)
    if V.startswith("smooth"):
        return smoothed(days, size, inc, exc, weight, float(V[6:]))
    if V == "new":  # the shipped code as it stands in the checkout (core.search.suggest.day_features)
        return ship(days, size, inc, exc, weight)
    if V == "ship":
        return ship(days, size, inc, exc, weight)
    if V.startswith("win"):
        return windowed(days, size, inc, exc, weight, int(V[3:]))
    if V == "ratio":
        return ratio(days, size, inc, exc, weight)
    if V.startswith("ratioM"):
        global M
        M = float(V[6:])
        return ratio(days, size, inc, exc, weight)
    if V == "inc":
        return ship(days, size, inc, np.zeros(0, np.int64), weight)
    raise SystemExit(V)
suggest.day_features = pick
sys.argv = ["bench.annotator", *sys.argv[1:]]
runpy.run_module("bench.annotator", run_name="__main__")
