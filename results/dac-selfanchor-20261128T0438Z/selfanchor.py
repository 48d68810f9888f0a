"""One-off: the model's own best rows as more anchors. A bag scored from one anchor (or five), its top M rows taken
as anchors too, the rest of the same bag scored again from the larger set; the final order is the first pass's
top M, then the rest by the second pass. Same pooled model, same bags, same rows as the PRF rule's figure.
Run as: python selfanchor.py pooled --targets T --extra (the others) --npz-dir data/npz_dac --seeds 0 --threads 1
--own --procedures"""
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root (results/NAME/this file)
from bench import dac as bd  # noqa: E402
from core.cluster.dac import infer, sampling, train as tr  # noqa: E402

MS = (2, 4, 10, 25)


def one(data, target, seed, a, device):
    m, _, secs = bd.pooled_model(data, target, seed, a, device)
    print(json.dumps({"target": target, "seed": seed, "trained_s": round(secs), "cut": m.cut}), flush=True)
    x_np, labels = data[target]
    x = bd.torch_rows(x_np, device)
    _, unseen = sampling.split_classes(labels, 0.5, seed)
    for size in (1, 5):
        out = {k: [] for k in ["dac", "prf", "truth"] + [f"self{M}" for M in MS]}
        hits = {M: [] for M in MS}
        for first, anchors in bd.anchor_sets(labels, unseen, a.anchors, size, seed + 2):
            rows, p = infer.members(m.model, x, anchors, bag=a.bag)
            truth = labels[rows] == labels[first]
            out["dac"].append(p)
            out["prf"].append(bd.prf_scores(x, anchors, rows))
            out["truth"].append(truth)
            for M in MS:
                rest, p2 = infer.members(m.model, x, np.concatenate([anchors, rows[:M]]), candidates=rows[M:])
                score = np.empty(len(rows))
                score[:M] = 2.0 + p[:M]  # the new anchors keep their first-pass order, above the rest
                where = {r: i for i, r in enumerate(rows)}
                score[[where[r] for r in rest]] = p2
                out[f"self{M}"].append(score)
                hits[M].append(truth[:M].mean())
        got = {k: np.concatenate(v) for k, v in out.items()}
        line = {"target": target, "seed": seed, "anchors": size, "rows": int(len(got["truth"])),
                "ap_dac": round(tr.scores(got["dac"], got["truth"])["average_precision"], 4),
                "ap_prf": round(tr.scores(got["prf"], got["truth"])["average_precision"], 4)}
        for M in MS:
            line[f"ap_self{M}"] = round(tr.scores(got[f"self{M}"], got["truth"])["average_precision"], 4)
            line[f"precision_top{M}"] = round(float(np.mean(hits[M])), 4)
        print(json.dumps(line), flush=True)


bd.pooled_one = one
bd.run_folder = lambda *a, **k: None
bd.emit = lambda **k: None
bd.main(sys.argv[1:])
