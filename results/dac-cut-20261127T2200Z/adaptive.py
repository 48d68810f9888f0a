"""One-off: does a per-bag cut (from the bag's own scores) beat the global calibrated cut?"""
import sys, json
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root (results/NAME/this file)
from bench import dac as bd
from core.cluster.dac import infer, sampling

def otsu(s, bins=64):
    h, e = np.histogram(s, bins=bins)
    c = (e[:-1] + e[1:]) / 2
    w0 = np.cumsum(h); w1 = w0[-1] - w0
    cs = np.cumsum(h * c)
    m0 = cs / np.maximum(w0, 1); m1 = (cs[-1] - cs) / np.maximum(w1, 1)
    return c[int(np.argmax(w0 * w1 * (m0 - m1) ** 2))]

def gmm_cut(s):
    from sklearn.mixture import GaussianMixture
    g = GaussianMixture(2, random_state=0).fit(s[:, None])
    grid = np.linspace(s.min(), s.max(), 200)
    post = g.predict_proba(grid[:, None])[:, int(np.argmax(g.means_.ravel()))]
    above = np.flatnonzero(post > 0.5)
    return grid[above[0]] if len(above) else s.max()

def per_bag(model, x, labels, classes, n, bag, size, seed):
    out = []
    for first, anchors in bd.anchor_sets(labels, classes, n, size, seed):
        rows, p = infer.members(model, x, anchors, bag=bag)
        out.append((p, bd.prf_scores(x, anchors, rows), labels[rows] == labels[first]))
    return out

def acc(bags, key, cutf):
    right = tot = 0
    for b in bags:
        s, t = b[key], b[2]
        right += ((s > cutf(s)) == t).sum(); tot += len(t)
    return round(float(right / tot), 4)

def pseudo_cuts(m, x, x_np, un, seed, a, size):
    from sklearn.cluster import KMeans
    out = {}
    for k in (5, 10, 40):
        pl = KMeans(k, n_init=3, random_state=seed).fit(x_np).labels_
        bags = per_bag(m.model, x, pl, np.arange(k), a.anchors // 2, a.bag, size, seed + 5)
        c = bd.best_threshold(np.concatenate([b[0] for b in bags]), np.concatenate([b[2] for b in bags]))
        out[f"dac_pseudo{k}_cut"] = round(float(c), 4)
        out[f"dac_pseudo{k}"] = acc(un, 0, lambda s, c=c: c)
    return out

def one(data, target, seed, a, device):
    x_np, labels = data[target]
    x = bd.torch_rows(x_np, device)
    seen, unseen = sampling.split_classes(labels, 0.5, seed)
    m, _, secs = bd.pooled_model(data, target, seed, a, device)
    for size in (1, 5):
        un = per_bag(m.model, x, labels, unseen, a.anchors, a.bag, size, seed + 2)
        sn = per_bag(m.model, x, labels, seen, a.anchors // 2, a.bag, size, seed + 1)
        prf_cut = bd.best_threshold(np.concatenate([b[1] for b in sn]), np.concatenate([b[2] for b in sn]))
        r = {"target": target, "seed": seed, "anchors": size, "train_s": round(secs),
             "dac_global": acc(un, 0, lambda s: m.cut), "cut": m.cut,
             "dac_otsu": acc(un, 0, otsu), "dac_gmm": acc(un, 0, gmm_cut),
             "prf_global(seen cut)": acc(un, 1, lambda s: prf_cut),
             "prf_otsu": acc(un, 1, otsu), "prf_gmm": acc(un, 1, gmm_cut),
             **pseudo_cuts(m, x, x_np, un, seed, a, size),
             # oracle-ish: the best single cut on the unseen bags (upper bound for any global cut)
             "dac_best_global_on_unseen": acc(un, 0, lambda s, c=bd.best_threshold(np.concatenate([b[0] for b in un]), np.concatenate([b[2] for b in un])): c)}
        print(json.dumps(r), flush=True)

bd.pooled_one = one
bd.run_folder = lambda *a, **k: None
bd.emit = lambda **k: None
bd.main(sys.argv[1:])
