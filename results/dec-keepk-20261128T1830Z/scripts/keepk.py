import sys, json, time, os, numpy as np, torch
sys.path.insert(0, "/work/main")
torch.set_num_threads(1)
from core.cluster import REGISTRY, ClusterContext
from core.cluster.evaluate import label_scores
from bench.adapt import kmeans_scores
enc, name, kk, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
seeds = [int(s) for s in sys.argv[5].split(",")]
x = np.load(f"/tmp/e5/{name}{'' if enc == 'e5' else '.minilm'}.npy"); y = np.load(f"/tmp/e5/{name}.labels.npy")
k = len(set(y)) if kk == "true" else int(kk)
for s in seeds:
    t = time.time()
    r = REGISTRY["dec"].fit(ClusterContext(x), k, seed=s, device="cpu", keep_k=mode)
    d = label_scores(y, r.labels); b = np.bincount(r.labels, minlength=k)
    km = kmeans_scores(x, y, k, s) if os.environ.get("KM") else {"nmi": float("nan"), "acc": float("nan")}
    print(json.dumps(dict(enc=enc, name=name, k=k, mode=mode, seed=s, nmi=d["nmi"], acc=d["acc"], km_nmi=km["nmi"], km_acc=km["acc"],
          empty=int((b == 0).sum()), under5=int((b < 5).sum()), largest=int(b.max()), steps=r.history[-1].get("step"), s=round(time.time()-t, 1))), flush=True)
