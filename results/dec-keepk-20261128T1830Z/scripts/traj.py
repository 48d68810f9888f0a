import sys, numpy as np, torch
sys.path.insert(0, "/work/main")
torch.set_num_threads(1)
from core.cluster import REGISTRY, ClusterContext
from core.cluster import deep
from core.cluster.evaluate import label_scores
enc, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
x = np.load(f"/tmp/e5/{name}{'' if enc == 'e5' else '.minilm'}.npy"); y = np.load(f"/tmp/e5/{name}.labels.npy"); k = len(set(y))
orig = deep.Runner.record
def rec(self, info, **extra):
    if "labels" in extra:
        l = extra["labels"].numpy(); b = np.bincount(l, minlength=k); s = label_scores(y, l)
        print(info.get("step"), "changed %.4f" % info.get("changed", 0), "NMI %.1f ACC %.1f" % (100*s["nmi"], 100*s["acc"]), "min", b.min(), "max", b.max(), "sorted3", sorted(b)[:3], flush=True)
    return orig(self, info, **extra)
deep.Runner.record = rec
REGISTRY["dec"].fit(ClusterContext(x), k, seed=seed, device="cpu", **{a.split("=")[0]: a.split("=")[1] for a in sys.argv[4:]})
