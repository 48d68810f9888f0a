import sys, time, json
import numpy as np
from testbed.common import clustered
from core.search import REGISTRY
from core.search import SearchContext
from core.search.index import VectorIndex
x, labels = clustered(203057, 512)
rng = np.random.default_rng(1)
target = np.flatnonzero(labels == labels[0])
inc = rng.choice(target, 200, replace=False); exc = rng.choice(np.flatnonzero(labels != labels[0]), 100, replace=False)
ctx = SearchContext(VectorIndex(x, device="cpu"), device="cpu")
out = {}
for name in ("lda", "suggest", "lda", "suggest"):
    m = REGISTRY[name]; m.search(ctx, inc, exc, 10)
    ts = []
    for _ in range(15):
        t = time.perf_counter(); m.search(ctx, inc, exc, 10); ts.append(1000 * (time.perf_counter() - t))
    out.setdefault(name, []).append(round(float(np.median(ts)), 1))
print(sys.argv[1], json.dumps(out))
