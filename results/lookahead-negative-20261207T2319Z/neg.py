import sys, time, statistics
import os; sys.path.insert(0, os.environ.get("TREE", "/work/main"))
import pandas as pd
from core.search.keyword import KeywordIndex, find_rows, KeywordError
texts = pd.read_csv("/work/shared/data/russian_troll_tweets_recent300k.csv", usecols=["text"])["text"].fillna("").astype(str).tolist()
k = KeywordIndex(texts)
time.sleep(40)
for q in sys.argv[1:]:
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        try:
            r = find_rows(k, q, is_regex=True, timeout_s=float(60)); n = len(r)
        except KeywordError as e:
            n = str(e)[:80]
        ts.append((time.perf_counter() - t) * 1e3)
    print(q, n, [round(x) for x in ts], flush=True)
