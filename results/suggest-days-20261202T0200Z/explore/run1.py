# one-off: Suggest with author features (how many included / excluded texts share a text's author) beside the
# conversation features; DAY_W env var weighs them (0: off). Runs bench.annotator with the given arguments.
import os, runpy, sys
import numpy as np, pandas as pd, scipy.sparse as sp
sys.path.insert(0, os.getcwd())
from core.search import suggest
from core.threads import Threads, codes_of
w = float(os.environ.get("DAY_W", "0"))
frame = pd.read_csv("/tmp/s51/czech_gold.csv", dtype=str, keep_default_na=False)
authors = Threads(codes_of(frame["date"].str[:10]))
orig = suggest.thread_features
def both(threads, n, inc, exc, weight):
    t = orig(threads, n, inc, exc, weight)
    if w <= 0:
        return t
    a = orig(authors, n, inc, exc, w)
    return a if t is None else sp.hstack([t, a]).tocsr()
suggest.thread_features = both
sys.argv = ["bench.annotator", *sys.argv[1:]]
runpy.run_module("bench.annotator", run_name="__main__")
