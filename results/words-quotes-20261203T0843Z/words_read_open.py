import time, numpy as np, pandas as pd, sys
from core.quoted import words_read
from core.rows import TextColumn
from core.ingest import QUOTED
n = int(sys.argv[1])
q = np.full(n, "", dtype=object); q[::5] = "@someone: what it quotes, a tweet of some length here"
t = np.full(n, "a text of a tweet", dtype=object)
f = pd.DataFrame({"text": pd.array(t, dtype="str"), QUOTED: pd.array(q, dtype="str")})
print(f.dtypes.to_dict())
for _ in range(3):
    t0 = time.perf_counter(); r = words_read(TextColumn(f["text"]), f.get(QUOTED)); print(type(r).__name__, round(time.perf_counter() - t0, 3))
