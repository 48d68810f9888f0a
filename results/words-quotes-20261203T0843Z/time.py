"""Suggest's word matrix (core.search.lexical.word_matrix, by English lemma as the app counts this corpus) at 300,000
tweets of the scale corpus, every 5th a quote of another (bench.quotes.corpus): the texts' own words and the quotes
read with what they quote (core.quoted.words_read), alternating, medians of 3; and words_read's own cost."""
import statistics, time
import sys
from bench.quotes import corpus
from core.ingest import QUOTED
from core.quoted import words_read
from core.search.lexical import word_matrix

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
f = corpus(n, 5)
texts = f["text"].tolist()
t = {"own": [], "with_quoted": [], "words_read": []}
shapes = {}
for _ in range(3):
    for k in ("own", "with_quoted"):
        t0 = time.perf_counter()
        read = words_read(texts, f[QUOTED]) if k == "with_quoted" else texts
        if k == "with_quoted":
            t["words_read"].append(time.perf_counter() - t0)
        m = word_matrix(read, "en")
        t[k].append(time.perf_counter() - t0)
        shapes[k] = (m.shape, m.nnz)
print({"rows": n, "quotes": int((f[QUOTED] != "").sum())})
print({k: round(statistics.median(v), 2) for k, v in t.items()}, {k: [round(x, 2) for x in v] for k, v in t.items()})
print(shapes)
