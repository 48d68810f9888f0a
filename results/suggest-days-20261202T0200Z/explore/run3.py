# one-off: Suggest with day features as enrichment: log(1 + the share of a text's day's texts included (excluded)
# over the corpus's share), times DAY_W, beside the conversation features. Runs bench.annotator with the arguments.
import os, runpy, sys
import numpy as np, pandas as pd, scipy.sparse as sp
sys.path.insert(0, os.getcwd())
from core.search import suggest
from core.threads import Threads, codes_of
w = float(os.environ.get("DAY_W", "0"))
frame = pd.read_csv(os.environ.get("DAY_FILE", "/tmp/s51/czech_gold.csv"), dtype=str, keep_default_na=False)
days = Threads(codes_of(frame["date"].str[:10]))
orig = suggest.thread_features
def both(threads, n, inc, exc, weight):
    t = orig(threads, n, inc, exc, weight)
    if w <= 0:
        return t
    parts = [days.around(side) for side in (inc, exc)]
    rows = np.concatenate([p[0] for p in parts])
    cols = np.repeat([0, 1], [len(p[0]) for p in parts])
    size = days.sizes[days.codes[rows]].astype(np.float32)
    totals = np.repeat([max(len(inc), 1), max(len(exc), 1)], [len(p[0]) for p in parts]).astype(np.float32)
    rate = np.concatenate([p[1] for p in parts]).astype(np.float32) / np.maximum(size - 1, 1)
    values = w * np.log1p(rate * n / totals)
    a = sp.csr_matrix((values, (rows, cols)), shape=(n, 2), dtype=np.float32)
    return a if t is None else sp.hstack([t, a]).tocsr()
suggest.thread_features = both
sys.argv = ["bench.annotator", *sys.argv[1:]]
runpy.run_module("bench.annotator", run_name="__main__")
