import os, sys, time, tempfile
sys.path.insert(0, os.environ.get("TREE", "/work/main"))
from pathlib import Path
import pandas as pd
from core.search import textindex
from core.search.keyword import KeywordIndex, find_rows, fold, KeywordError
texts = pd.read_csv("/work/shared/data/russian_troll_tweets_recent300k.csv", usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
n = len(texts)
tmp = Path(os.environ.get("IDX") or tempfile.mkdtemp(prefix="negidx-"))
if not (tmp / textindex.FILE).exists():
    t = time.perf_counter(); textindex.build(tmp / textindex.FILE, texts, n, fold); print("build s", round(time.perf_counter() - t, 1), tmp, flush=True)
k = KeywordIndex([""] * n, text_index=textindex.TextIndex(tmp / textindex.FILE, n))
for q in sys.argv[1:]:
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        try:
            n_ = len(find_rows(k, q, is_regex=True, timeout_s=60.0))
        except KeywordError as e:
            n_ = str(e)[:70]
        ts.append(round((time.perf_counter() - t) * 1e3))
    print(q, n_, ts, flush=True)
