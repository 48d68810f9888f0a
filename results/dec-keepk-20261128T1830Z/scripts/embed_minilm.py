import sys, time, numpy as np, pandas as pd
sys.path.insert(0, "/work/main")
from bench.adapt import base_embeddings
for name in sys.argv[1:]:
    d = pd.read_csv(f"/work/shared/data/{name}.csv", dtype=str, keep_default_na=False)
    x = base_embeddings(d["text"].tolist(), "default", "cpu")
    np.save(f"/tmp/e5/{name}.minilm.npy", x); print(name, x.shape, flush=True)
