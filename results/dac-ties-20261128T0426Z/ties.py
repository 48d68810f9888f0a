"""One-off: does DAC's average precision lose to ties? The model's sigmoid, in float32, is exactly 1.0 for every
logit above ~17, so many rows of a bag can share the top score; average precision then scores that block as one
threshold. Same pooled model, same bags: AP of the probabilities (as bench.dac reports) against AP of the logits
(the same order wherever the probabilities differ), beside the PRF rule; and how many rows sit at 1.0.
Run as: python ties.py pooled --targets T --extra (the others) --npz-dir data/npz_dac --seeds 0 --threads 1 --own
--procedures"""
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root (results/NAME/this file)
from bench import dac as bd  # noqa: E402
from core.cluster.dac import infer, sampling, train as tr  # noqa: E402

SIGMOID = infer.predict


@torch.no_grad()
def logits(model, x, bags):  # infer.predict without the sigmoid
    size = max(len(r) for r, _ in bags)
    rows = torch.zeros(len(bags), size, dtype=torch.long)
    role = torch.zeros(len(bags), size, dtype=torch.long)
    mask = torch.zeros(len(bags), size, dtype=torch.bool)
    for i, (r, ro) in enumerate(bags):
        rows[i, :len(r)], role[i, :len(r)], mask[i, :len(r)] = torch.as_tensor(r), torch.as_tensor(ro), True
    z = model(x[rows], mask, role).double().numpy()
    return [z[i, :len(r)] for i, (r, _) in enumerate(bags)]


def one(data, target, seed, a, device):
    m, _, secs = bd.pooled_model(data, target, seed, a, device)
    print(json.dumps({"target": target, "seed": seed, "trained_s": round(secs), "cut": m.cut}), flush=True)
    x_np, labels = data[target]
    x = bd.torch_rows(x_np, device)
    _, unseen = sampling.split_classes(labels, 0.5, seed)
    for size in (1, 5):
        infer.predict = SIGMOID
        got = bd.anchored(m.model, x, labels, unseen, a.anchors, a.bag, size, seed + 2)
        infer.predict = logits
        raw = bd.anchored(m.model, x, labels, unseen, a.anchors, a.bag, size, seed + 2)
        infer.predict = SIGMOID
        assert (raw["truth"].shape == got["truth"].shape)
        # members() sorts each bag by score: the same rows, maybe in another order within ties
        top = got["dac"] == 1.0
        print(json.dumps({
            "target": target, "seed": seed, "anchors": size, "rows": int(len(got["dac"])),
            "ap_prob": round(tr.scores(got["dac"], got["truth"])["average_precision"], 4),
            "ap_logit": round(tr.scores(raw["dac"], raw["truth"])["average_precision"], 4),
            "ap_prf": round(tr.scores(got["prf"], got["truth"])["average_precision"], 4),
            "at_1.0": int(top.sum()), "members_at_1.0": round(float(got["truth"][top].mean()), 4) if top.any() else None,
            "members_all": round(float(got["truth"].mean()), 4)}), flush=True)


bd.pooled_one = one
bd.run_folder = lambda *a, **k: None
bd.emit = lambda **k: None
bd.main(sys.argv[1:])
