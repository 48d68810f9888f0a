"""One-off: an ensemble of pooled (leave-one-corpus-out) models, each trained with another seed and never on a
label of the target, against each single model and the PRF rule, on each seed's unseen classes (same bags)."""
import sys, json
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root (results/NAME/this file)
from bench import dac as bd
from core.cluster.dac import infer, sampling, train as tr
from sklearn.metrics import average_precision_score as aps

def one(data, target, seed, a, device):  # called once per seed by bench.dac pooled: train and keep
    m, _, secs = bd.pooled_model(data, target, seed, a, device)
    MODELS[seed] = m
    print(json.dumps({"trained": seed, "seconds": round(secs), "cut": m.cut}), flush=True)
    # the single model at once on its own seed's unseen classes (a run stopped early keeps these):
    # bench.dac's own anchored bags and scores, as `bench.dac pooled` measures them
    _, unseen = sampling.split_classes(data[target][1], 0.5, seed)
    for size in (1, 5):
        got = bd.anchored(m.model, bd.torch_rows(data[target][0], device), data[target][1], unseen, a.anchors, a.bag,
                          size, seed + 2)
        f, q = tr.scores(got["dac"], got["truth"], m.cut), tr.scores(got["prf"], got["truth"])
        print(json.dumps({"single": seed, "anchors": size, "ap_single": round(f["average_precision"], 4),
                          "ap_prf": round(q["average_precision"], 4), "acc_single": round(f["accuracy"], 4)}), flush=True)


MODELS = {}
bd.pooled_one = one
bd.run_folder = lambda *a, **k: None
bd.emit = lambda **k: None
DATA = {}
orig = bd.pooled
def grab(a):
    import argparse
    orig(a)
    DATA["a"] = a
bd.pooled = grab
bd.main(sys.argv[1:])
a = DATA["a"]
from argparse import Namespace
target = a.targets[0]
_, x_np, labels = bd.load_data(Namespace(npz=None, corpus=target, label_column="label", embedding_set=None))
x = bd.torch_rows(np.asarray(x_np, np.float32), "cpu")
for s in sorted(MODELS):
    _, unseen = sampling.split_classes(labels, 0.5, s)
    for size in (1, 5):
        per = {k: [] for k in ["single", "ens", "prf", "truth", "ens_rank"]}
        for first, anchors in bd.anchor_sets(labels, unseen, a.anchors, size, s + 2):
            probs = {}
            for k, m in MODELS.items():
                rows, p = infer.members(m.model, x, anchors, bag=a.bag)
                order = np.argsort(rows); probs[k] = (rows[order], p[order])
            rows = probs[s][0]
            assert all((probs[k][0] == rows).all() for k in probs)
            stack = np.stack([probs[k][1] for k in sorted(probs)])
            per["single"].append(probs[s][1]); per["ens"].append(stack.mean(0))
            per["ens_rank"].append(np.mean([np.argsort(np.argsort(q)) / len(q) for q in stack], 0))
            per["prf"].append(bd.prf_scores(x, anchors, rows)); per["truth"].append(labels[rows] == labels[first])
        c = {k: np.concatenate(v) for k, v in per.items()}
        cut = float(np.mean([MODELS[k].cut for k in MODELS]))
        out = {"target": target, "seed": s, "anchors": size,
               **{f"ap_{k}": round(float(aps(c["truth"], c[k])), 4) for k in ["single", "ens", "ens_rank", "prf"]},
               "acc_single": round(float(((c["single"] > MODELS[s].cut) == c["truth"]).mean()), 4),
               "acc_ens_meancut": round(float(((c["ens"] > cut) == c["truth"]).mean()), 4)}
        print(json.dumps(out), flush=True)
