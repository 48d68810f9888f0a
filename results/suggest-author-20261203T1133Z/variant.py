# one-off: Suggest's author feature in a variant (AUTHOR_VARIANT), then bench.annotator with the given arguments.
#   kept: as in the code (share kept of an author's labelled texts, prior AUTHOR_PRIOR);
#   rate: the share of an author's texts you included, included(a) / (texts(a) + M), over its largest;
#   rate2: rate beside the share of its texts excluded (two columns).
import os, runpy, sys
import numpy as np
import scipy.sparse as sp
sys.path.insert(0, os.getcwd())
from core.search import suggest
V = os.environ.get("AUTHOR_VARIANT", "kept")
M = float(os.environ.get("AUTHOR_M", "5"))

class Rate:
    def __init__(self, groups, sizes, counts, weight, sides, cols):
        self.groups, self.sizes, self.counts, self.sides, self.cols = groups, sizes, counts, sides, cols
        v = self.value(counts)
        top = np.abs(v).max(axis=0)
        self.scale = np.where(top > 0, weight / np.maximum(top, 1e-12), 0).astype(np.float32)
        self.table = np.vstack([v * self.scale, np.zeros((1, cols))]).astype(np.float32)
        self.shape = (len(groups), cols)
    def value(self, counts, sizes=None):
        sizes = self.sizes if sizes is None else sizes
        others = np.maximum(sizes - 1, 0)[:, None] if counts.ndim == 2 else np.maximum(sizes - 1, 0)
        return (counts / (others + M))[..., :self.cols] if counts.ndim == 2 else counts / (others + M)
    def __getitem__(self, rows):
        rows = np.asarray(rows, np.int64)
        g = self.groups[rows]
        counts = self.counts[g] - np.stack([np.isin(rows, s) for s in self.sides], axis=1)
        others = np.maximum(self.sizes[g] - 1, 0)[:, None]
        vals = (counts / (others + M))[:, :self.cols] * self.scale
        vals = np.where((g >= 0)[:, None], vals, 0)
        return sp.csr_matrix(vals.astype(np.float32))
    def __matmul__(self, w):
        w = np.asarray(w, np.float32).ravel()[:self.cols]
        return (self.table @ w)[self.groups]

def rate(authors, n, inc, exc, weight, cols):
    if authors is None:
        return None
    sides = tuple(s[authors[s] >= 0] for s in (inc, exc))
    counts = np.stack([np.bincount(authors[s], minlength=n) for s in sides], 1).astype(np.float32)
    sizes = np.bincount(authors[authors >= 0], minlength=n).astype(np.float32)
    if counts.sum() == 0:
        return None
    return Rate(authors, sizes, counts, weight, sides, cols)

if V == "rate":
    suggest.author_features = lambda a, n, inc, exc, w: rate(a, n, inc, exc, w, 1)
elif V == "rate2":
    suggest.author_features = lambda a, n, inc, exc, w: rate(a, n, inc, exc, w, 2)
sys.argv = ["bench.annotator", *sys.argv[1:]]
runpy.run_module("bench.annotator", run_name="__main__")
