"""Suggest's query at 300,000 tweets of the scale corpus, every 5th a quote of another (bench.quotes.corpus), with the
word matrix of the texts' own words and of the quotes read with what they quote (core.quoted.words_read), the matrix
built first (by English lemma, as the app counts this corpus); 200 included, 100 excluded at random; random unit
vectors (384-d, in memory); alternating, medians of 9."""
import statistics, time
import numpy as np
from bench.quotes import corpus
from core.ingest import QUOTED
from core.quoted import words_read
from core.search import REGISTRY, SearchContext
from core.search.index import VectorIndex
from core.search.lexical import WordIndex

f = corpus(300_000, 5)
texts = f["text"].tolist()
rng = np.random.default_rng(0)
x = rng.standard_normal((len(f), 384), dtype=np.float32)
x /= np.linalg.norm(x, axis=1, keepdims=True)
index = VectorIndex(x)
ctxs = {}
for k, read in (("own", texts), ("with_quoted", words_read(texts, f[QUOTED]))):
    w = WordIndex(read, lang="en")
    w.matrix
    ctxs[k] = SearchContext(index, None, f[["id"]], word_index=w)
    print(k, w.matrix.shape, w.matrix.nnz)
rows = rng.choice(len(f), 300, replace=False)
inc, exc = rows[:200], rows[200:]
t = {k: [] for k in ctxs}
for _ in range(9):
    for k, ctx in ctxs.items():
        t0 = time.perf_counter()
        REGISTRY["suggest"].search(ctx, inc, exc, 10)
        t[k].append(time.perf_counter() - t0)
print({k: round(1000 * statistics.median(v), 1) for k, v in t.items()}, {k: [round(1000 * s) for s in v] for k, v in t.items()})
