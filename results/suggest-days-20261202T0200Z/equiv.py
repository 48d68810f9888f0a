# the day table against the matrix it stands for (the first implementation's values), on the Czech gold corpus
import sys, os
import numpy as np, pandas as pd, scipy.sparse as sp
sys.path.insert(0, ".")
from core.search.base import SearchContext
from core.search.suggest import day_features
from core.search.index import VectorIndex
f = pd.read_csv("/tmp/s51/czech_gold.csv", dtype=str, keep_default_na=False)
frame = pd.DataFrame({"date": pd.to_datetime(f["date"]).dt.tz_localize(None).astype("datetime64[us]")})
n = len(frame); rng = np.random.default_rng(0)
ctx = SearchContext(VectorIndex(np.zeros((n, 4), np.float32)), frame=frame)
inc, exc = np.sort(rng.choice(n, 60, replace=False)), np.sort(rng.choice(n, 40, replace=False))
exc = np.setdiff1d(exc, inc)
b = day_features(ctx.days, ctx.day_sizes, inc, exc, 0.25)
# reference: the first implementation (explicit matrix)
days = ctx.days; size = np.bincount(days)
ref = np.zeros((n, 2), np.float32)
for col, side in enumerate((inc, exc)):
    per = np.bincount(days[side], minlength=len(size))
    on = np.flatnonzero(per[days] > 0)
    count = per[days[on]] - np.isin(on, side)
    share = count / np.maximum(size[days[on]] - 1, 1)
    ref[on, col] = 0.25 * share / share.max()
rows = np.r_[inc, exc, rng.choice(n, 500)]
print("rows equal:", np.allclose(b[rows].toarray(), ref[rows], atol=1e-6))
w = np.array([1.5, -2.0], np.float32)
un = np.setdiff1d(np.arange(n), np.r_[inc, exc])
print("scores equal on unlabelled rows:", np.allclose((b @ w)[un], (ref @ w)[un], atol=1e-5))
