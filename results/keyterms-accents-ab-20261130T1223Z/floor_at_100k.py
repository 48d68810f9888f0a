"""key_terms on the scale corpus's texts (K-Means-free labels: 500 random clusters), with and without the floor."""
import time, sys, statistics
import numpy as np, pandas as pd
from core.cluster.keyterms import key_terms
n = int(sys.argv[1])
f = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", usecols=["text"], dtype=str, keep_default_na=False, nrows=n)
texts = f["text"].tolist()
labels = np.random.default_rng(0).integers(0, 500, len(texts))
runs = {1: [], 3: []}
for i in range(2):
    for m in ((1, 3) if i % 2 == 0 else (3, 1)):
        t = time.perf_counter(); key_terms(texts, labels, lang="en", min_texts=m); runs[m].append(time.perf_counter() - t)
print(n, {m: [round(x, 1) for x in r] for m, r in runs.items()})
