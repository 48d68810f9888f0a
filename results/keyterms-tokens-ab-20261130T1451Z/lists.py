"""Each cluster's c-TF-IDF key lemmas (top 5) of one stored clustering, as this tree computes them (run from the tree:
SEMANNO_DATA=ROOT python lists.py CORPUS CLUSTERING > FILE); diffed before/after by lists_diff."""
import json, sys
import numpy as np
from core.cluster import store
from core.cluster.keyterms import key_terms
from core.corpus import load_corpus
c = load_corpus(sys.argv[1])
labels = np.asarray(store.labels_for(c, sys.argv[2]))
t = key_terms(c.frame["text"].tolist(), labels).table
print(json.dumps({int(k): v[:5] for k, v in zip(t["cluster"], t["ctfidf_terms"].map(list))}, ensure_ascii=False))
