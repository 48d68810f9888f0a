import sys, time, statistics
sys.path.insert(0, sys.argv[1])
import numpy as np, pandas as pd
from core.cluster.keyterms import key_terms
from core import wordforms
texts = pd.read_csv("/work/shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)["text"]
rng = np.random.default_rng(0)
some = np.sort(rng.choice(len(texts), 5000, replace=False))
labels = rng.integers(0, 12, 5000)
t = time.perf_counter(); wordforms.warm("cs"); warm = time.perf_counter() - t
runs = []
for _ in range(5):
    t = time.perf_counter(); key_terms([texts[i] for i in some], labels, lang="cs", min_count=3); runs.append(time.perf_counter() - t)
print(sys.argv[1], "warm", round(warm, 2), "median", round(statistics.median(runs), 2), [round(r, 2) for r in runs])
