"""Fingerprint every registered clustering method on a fixed small input (300 StackOverflow titles, the
import's vectors), to show that a refactor changed no result: labels, the per-step history and an
adapted encoder's embeddings, hashed.

    python -m bench.fingerprint OUT.json [METHOD ...]          # this tree
    cd /tmp/before && SEMANNO_DATA=$PWD/../main/data PYTHONPATH=. python -m bench.fingerprint before.json

Needs the corpus ``stackoverflow`` (python -m precompute.embed ../shared/data/stackoverflow.csv --name
stackoverflow --model default). Compare two outputs with ``--compare A B``.
"""
import hashlib
import json
import sys
import time

import numpy as np
import torch

from core.cluster import REGISTRY, ClusterContext
from core.corpus import load_corpus

if sys.argv[1] == "--compare":
    a, b = (json.load(open(f)) for f in sys.argv[2:4])
    for m in a:
        same = {part: a[m][part] == b.get(m, {}).get(part) for part in ("labels_sha", "history", "emb_sha")}
        print(m, "identical" if all(same.values()) else f"DIFFERENT {same}")
    sys.exit(0)
torch.set_num_threads(1)
c = load_corpus("stackoverflow")
f = c.frame.assign(row=np.arange(c.n)).groupby("label").head(15)
rows = f["row"].to_numpy()
x = np.asarray(c.embeddings[rows]); texts = f["text"].tolist()
small = {"kmeans": {}, "dec": {"pretrain_epochs": 3, "max_steps": 300}, "idec": {"pretrain_epochs": 3, "max_steps": 300},
         "dac": {"train_epochs": 1, "train_steps": 5, "anchors": 100, "bag": 100, "hidden": 32},
         "clusterbert": {"tsdae_epochs": 1, "cluster_rounds": 1, "cluster_epochs": 1, "harden_epochs": 1, "batch_size": 32},
         "dec_mlm": {"epochs": 1, "batch_size": 32}, "dec_crl": {"epochs": 1, "batch_size": 32}}
out = {}
for name in sys.argv[2:] or REGISTRY:
    m = REGISTRY[name]
    t = time.perf_counter()
    r = m.fit(ClusterContext(x, texts if m.needs_texts else None), 20 if m.needs_k else None, seed=0, device="cpu", **small[name])
    hist = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in h.items() if k != "seconds"} for h in r.history]
    out[name] = {"labels_sha": hashlib.sha256(np.asarray(r.labels, np.int32).tobytes()).hexdigest()[:16],
                 "k": int(r.k), "history": hist,
                 "emb_sha": hashlib.sha256(np.round(r.embeddings, 5).tobytes()).hexdigest()[:16] if r.embeddings is not None else None,
                 "seconds": round(time.perf_counter() - t, 1)}
    print(name, out[name]["labels_sha"], out[name]["emb_sha"], out[name]["seconds"], flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
