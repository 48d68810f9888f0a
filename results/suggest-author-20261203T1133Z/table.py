import json, glob, collections, sys, re
rows = collections.defaultdict(list)
per = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob('/tmp/s61/out/*.jsonl')):
    tag, seed = re.match(r'.*/(.+)-s(\d+)\.jsonl', f).groups()
    lines = [json.loads(l) for l in open(f)]
    for l in lines:
        if 'summary' in l:
            m = l['summary']['methods']['suggest']
            rows[tag].append((m['recall@1.0x'], m['recall@1.5x'], m['recall@2.0x']))
        elif l.get('method') == 'suggest':
            per[tag][l['cls']].append(l['recall@1.0x'])
for tag, v in sorted(rows.items()):
    n = len(v); mean = [sum(x[i] for x in v) / n for i in range(3)]
    cls = ' '.join(f"{c} {sum(x)/len(x):.3f}" for c, x in sorted(per[tag].items()))
    print(f"{tag:14s} n={n}  {mean[0]:.3f} / {mean[1]:.3f} / {mean[2]:.3f}   1x by topic: {cls}")
