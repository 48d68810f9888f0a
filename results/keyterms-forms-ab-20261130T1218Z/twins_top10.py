import sys, numpy as np
from core import languages
from core.cluster import store
from core.cluster.keyterms import Lemmatiser, key_terms, lemmatised, _stem
from core.corpus import load_corpus
corpus = load_corpus(sys.argv[1]); labels = np.asarray(store.labels_for(corpus, sys.argv[2]))
texts = corpus.frame["text"].tolist()
t = key_terms(texts, labels, lang="cs").table
n = 0
for terms in t.ctfidf_terms:
    st = [_stem(w) for w in terms[:10]]
    d = [w for w, s in zip(terms[:10], st) if st.count(s) > 1]
    if d: n += 1; print(d)
print("clusters whose top 10 hold two forms of one stem:", n, "of", len(t))
