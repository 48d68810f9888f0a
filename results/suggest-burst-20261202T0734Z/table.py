import json, glob, collections, sys
rows = collections.defaultdict(list)
for f in sorted(glob.glob("out/*.jsonl")):
    name = f.split("/")[-1].rsplit("-s", 1)[0]
    for line in open(f):
        d = json.loads(line)
        if "summary" in d:
            m = d["summary"]["methods"]["suggest"]
            rows[name].append((m["recall@1.0x"], m["recall@1.5x"], m["recall@2.0x"]))
for k, v in rows.items():
    mean = [sum(x[i] for x in v) / len(v) for i in range(3)]
    print(f"{k:32s} n={len(v)} " + " / ".join(f"{m:.3f}" for m in mean), "   per seed 1x:", " ".join(f"{x[0]:.3f}" for x in v))
