# one-off: Suggest with a day prior from the model's own scores (a "burst" of the topic on a day), then bench.annotator.
#   BURST_W: weight of log lift (0: off); BURST_T: top-T = T x |included| rows counted; BURST_MODE: all|unl
#   (all: every top-T row, labelled included too; unl: unlabelled rows only); BURST_M: prior texts per day.
import os, runpy, sys
import numpy as np
sys.path.insert(0, os.getcwd())
from core.search import suggest
W = float(os.environ.get("BURST_W", "0"))
T = float(os.environ.get("BURST_T", "2"))
MODE = os.environ.get("BURST_MODE", "all")
M = float(os.environ.get("BURST_M", "20"))
state = {}
orig_day, orig_fit = suggest.day_features, suggest.fit_scores

def day_features(days, n_days, inc, exc, weight):
    state.update(days=days, n_days=n_days, inc=inc, exc=exc)
    return orig_day(days, n_days, inc, exc, weight) if weight > 1e-6 else None

def fit_scores(x, words, pos, neg, **kw):
    s = orig_fit(x, words, pos, neg, **kw)
    days = state.get("days")
    if W <= 0 or days is None:
        return s
    n = len(s)
    inc, exc = state["inc"], state["exc"]
    t = int(min(n // 2, max(10, T * len(inc))))
    cand = s.copy()
    cand[exc] = -np.inf
    if MODE == "unl":
        cand[inc] = -np.inf
    top = np.argpartition(-cand, t)[:t]
    dated = days >= 0
    nd = state["n_days"]
    size = np.bincount(days[dated], minlength=nd).astype(np.float64)
    hit = np.bincount(days[top][days[top] >= 0], minlength=nd).astype(np.float64)
    base = hit.sum() / max(size.sum(), 1)
    p = (hit + M * base) / (size + M)
    lift = np.log(p / base).astype(np.float32)
    adj = np.append(lift, np.float32(0))[np.where(dated, days, nd)]
    return s + np.float32(W) * adj

suggest.day_features, suggest.fit_scores = day_features, fit_scores
sys.argv = ["bench.annotator", *sys.argv[1:]]
runpy.run_module("bench.annotator", run_name="__main__")
