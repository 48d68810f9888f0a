"""One-off: core.copies.codes_of with one dictionary over every piece's words (as of commit e5ba662) against the
64-bit hashes (after it), at 3M texts (the scale corpus ten times over), in one process, alternating, 3 runs each.

    git show e5ba662:core/copies.py > /tmp/copies_old.py
    PYTHONPATH=. python results/copies-20261129T021200Z/compare_hash.py
"""
import sys, time, statistics, numpy as np, pandas as pd, pyarrow as pa
sys.path.insert(0, "/tmp"); import copies_old
from core.copies import codes_of
from testbed.common import SCALE
texts = pd.read_csv(SCALE, dtype=str, keep_default_na=False, usecols=["text"])["text"]
big = pa.array(pd.Series([f"{t} {i}" for i in range(10) for t in texts], dtype="str"), from_pandas=True)
res = {"old": [], "new": []}
for r in range(3):
    for name, f in (("old", copies_old.codes_of), ("new", codes_of)):
        t = time.perf_counter(); c = f(big); res[name].append(time.perf_counter() - t)
print({k: round(statistics.median(v), 2) for k, v in res.items()}, res)
print((copies_old.codes_of(big) == codes_of(big)).all())
