import sys, time, numpy as np, pandas as pd
sys.path.insert(0, "/work/main")
from bench.adapt import base_embeddings
for name in sys.argv[1:]:
    d = pd.read_csv(f"/work/shared/data/{name}.csv")
    t = time.time()
    x = base_embeddings(d["text"].astype(str).tolist(), "multilingual-e5-small", "cpu")
    np.save(f"/tmp/e5/{name}.npy", x); np.save(f"/tmp/e5/{name}.labels.npy", d["label"].to_numpy())
    print(name, x.shape, round(time.time() - t, 1), "s", flush=True)
