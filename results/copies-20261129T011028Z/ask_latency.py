import copy, time, statistics, sys, os
sys.path.insert(0, "/work/main")
os.environ["HF_HUB_OFFLINE"] = "1"
import numpy as np
from core.corpus import load_corpus
from core.copies import Copies, codes_of
from core.search import SearchContext
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from core import annotate
from core.session import Session, EXCLUDED
c = load_corpus("crisislex_t26")
texts = c.frame["text"].tolist()
base = SearchContext(VectorIndex(c.embeddings), KeywordIndex(texts), c.frame, word_index=WordIndex(texts))
import dataclasses
withc = dataclasses.replace(base, copies=Copies(codes_of(texts)))
labels = c.frame["label"].to_numpy()
s = Session()
annotate.ask(base, s, "keyword", 30, query="earthquake")
wrong = [r for r in s.included if labels[r] != "2012_Guatemala_earthquake"]
s.set_labels(wrong, EXCLUDED)
annotate.ask(base, s, "suggest", 10)  # words built
for name, ctx in (("off", base), ("on", withc)) * 2:
    for m in ("suggest", "cos"):
        ts = []
        for _ in range(7):
            s2 = copy.deepcopy(s)
            t = time.perf_counter(); annotate.ask(ctx, s2, m, 10); ts.append(time.perf_counter() - t)
        print(name, m, "%.1f ms" % (1000 * statistics.median(ts)))
