import sys, time, statistics
from pathlib import Path
sys.path.insert(0, str(Path.cwd()))
from core.search import textindex
from core.search.keyword import KeywordIndex, find_rows
from core.rows import TextColumn
import pandas as pd, numpy as np
root = Path(sys.argv[1]) / ".scale-input" / "keywords-1000000-words" / textindex.FILE
n = 1_000_000
tix = textindex.TextIndex(root, n)
k = KeywordIndex(TextColumn(pd.Series([""] * n)), text_index=tix)
from core.search.keyword import _Deadline
q = r"trump\w*\s+(said|says|is)"
for _ in range(2): find_rows(k, q, is_regex=True, timeout_s=10)
ts = []
for _ in range(15):
    t = time.perf_counter(); r = find_rows(k, q, is_regex=True, timeout_s=10); ts.append(time.perf_counter() - t)
plan = [["trump"]]
print(sys.argv[1], len(r), round(statistics.median(ts) * 1000, 1), "candidates", len(tix.candidates(plan, _Deadline(10))),
      "folded chars", sum(len(x) for x in tix.folded().column(0).to_pylist()[:200000]) if hasattr(tix.folded(), "column") else "")
