import sys, json
import numpy as np
import stopwordsiso as s
from simplemma import is_known
from core.cluster import keyterms, store
from core.corpus import load_corpus
from bench.keyterms import quality
from core.cluster.keyterms import Lemmatiser, key_terms, lemmatised
langs = sys.argv[1].split(",")
u = set()
for l in (s.langs() if langs == ["all"] else langs):
    if s.has_lang(l) and l != "en":
        u |= set(s.stopwords(l))
foreign = frozenset(w for w in u if not is_known(w, lang="en"))
print(len(foreign))
orig = keyterms.function_words
c = load_corpus("crisisall"); labels = store.labels_for(c, "kmeans-k118"); texts = c.frame["text"].tolist()
lem = Lemmatiser("en"); docs, _ = lemmatised(texts, lem)
for name, extra in (("en list", frozenset()), ("+foreign", foreign)):
    keyterms.function_words = lambda lang, l, extra=extra: orig(lang, l) | extra
    kt = key_terms(texts, labels, lang="en")
    for col in ("rule_terms", "ctfidf_terms"):
        print(name, col, json.dumps(quality(kt.table, docs, labels, col, 5)))
    t = kt.table.sort_values("size", ascending=False)
    for _, r in t.head(8).iterrows():
        print("   ", r["cluster"], ", ".join(r["ctfidf_terms"][:8]))
