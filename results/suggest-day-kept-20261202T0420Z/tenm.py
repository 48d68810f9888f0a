# one-off: Suggest's day feature (the share kept of a day's labels) at 10M rows (a year of dates), 1,000 included and 1,000 excluded: the days read
# once per context, then each step's features (the rows a fit reads, every row's score); medians of 5
import sys, time
import numpy as np, pandas as pd
sys.path.insert(0, ".")
from core.search.base import SearchContext
from core.search.index import VectorIndex
from core.search.suggest import day_features
n = 10_000_000
rng = np.random.default_rng(0)
frame = pd.DataFrame({"date": (np.datetime64("2021-01-01") + rng.integers(0, 365 * 86400, n).astype("timedelta64[s]"))
                      .astype("datetime64[us]")})
ctx = SearchContext(VectorIndex(np.zeros((4, 4), np.float32)), frame=frame, timezone=sys.argv[1] if len(sys.argv) > 1 else "UTC")
t = time.perf_counter(); days = ctx.days; first = time.perf_counter() - t
inc, exc = (np.sort(rng.choice(n, 1000, replace=False)) for _ in range(2))
train = np.r_[inc, exc, rng.choice(n, 5000)]
w = np.array([1.0], np.float32)
ts = []
for _ in range(5):
    t = time.perf_counter(); b = day_features(ctx.days, ctx.n_days, inc, exc, 0.25); b[train]; b @ w; ts.append(time.perf_counter() - t)
print(f"{n:,} rows, {len(np.unique(days))} days: the days read {first * 1000:.0f} ms once; a step's features "
      f"{np.median(ts) * 1000:.0f} ms (median of 5)")
