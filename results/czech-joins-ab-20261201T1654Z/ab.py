import sys, time, random, subprocess, json
from collections import Counter
import pandas as pd
sys.path.insert(0, sys.argv[1])
from testbed.common import SHARED
from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens
texts = pd.read_csv(SHARED / "czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)["text"]
lem = Lemmatiser("cs")
counts = Counter(t for text in texts for t in tokens(text))
t0 = time.time(); m = merge_unknown(counts, lem); print("secs", time.time() - t0, file=sys.stderr)
json.dump({"merged": m, "counts": counts}, open(sys.argv[2], "w"))
