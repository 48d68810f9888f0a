"""Medians per arm and tree of lines.jsonl (seconds; runs in brackets)."""
import json, statistics, sys
from collections import defaultdict
from pathlib import Path
runs = defaultdict(list)
for line in (Path(__file__).parent / "lines.jsonl").read_text().splitlines():
    if line.startswith("{"):
        r = json.loads(line)
        runs[(r["arm"], "before" if "before" in r["tree"] else "now")].append(r["seconds"])
for (arm, tree), v in sorted(runs.items()):
    print(f"{arm:48s} {tree:6s} median {statistics.median(v):6.1f} s  ({' / '.join(map(str, v))})")
