import sys, json, time, numpy as np, torch
sys.path.insert(0, "/work/main")
torch.set_num_threads(1)
from bench.adapt import kmeans_scores
from core.cluster import REGISTRY, ClusterContext
from core.cluster.evaluate import label_scores
enc, names, seeds = sys.argv[1], sys.argv[2].split(","), [int(s) for s in sys.argv[3].split(",")]
params = {k: eval(v) for k, v in (p.split("=") for p in sys.argv[4:])}
suffix = "" if enc == "e5" else ".minilm"
for name in names:
    x = np.load(f"/tmp/e5/{name}{suffix}.npy"); y = np.load(f"/tmp/e5/{name}.labels.npy"); k = len(set(y))
    for s in seeds:
        km = kmeans_scores(x, y, k, s)
        t = time.time()
        import os; r = REGISTRY[os.environ.get("METHOD", "dec")].fit(ClusterContext(x), k, seed=s, device="cpu", **params)
        d = label_scores(y, r.labels)
        sizes = np.bincount(r.labels, minlength=k)
        print(json.dumps(dict(method=os.environ.get("METHOD", "dec"), enc=enc, name=name, seed=s, params=params, km_nmi=km["nmi"], km_acc=km["acc"],
              nmi=d["nmi"], acc=d["acc"], empty=int((sizes == 0).sum()), smallest=int(sizes.min()), largest=int(sizes.max()),
              steps=r.history[-1].get("step"), s=round(time.time() - t, 1))), flush=True)
