"""key_terms before (12009db) and after (this session) on the whole crisis corpus, clustered by event (26) and by a
random labelling (118 clusters); a fresh process per tree and round, alternating; lists and lemmatiser warmed first."""
import sys
import time

import numpy as np
import pandas as pd

from core.cluster.keyterms import Lemmatiser, key_terms

f = pd.read_csv("/work/shared/data/crisislex_t26.csv", dtype=str, keep_default_na=False)
codes, _ = pd.factorize(f["label"])
rand = np.random.default_rng(0).integers(0, 118, len(f))
texts = f["text"].tolist()
key_terms(texts[:2000], codes[:2000], lang="en")  # warm: imports, lists, the lemma dictionary
for name, labels in (("events26", codes), ("random118", rand)):
    t = time.perf_counter()
    key_terms(texts, labels, lang="en")
    print(sys.argv[1], name, round(time.perf_counter() - t, 2), flush=True)
