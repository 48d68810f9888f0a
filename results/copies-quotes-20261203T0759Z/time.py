"""codes_of (core/copies.py) at 300,000 tweets of the scale corpus, every 5th a quote of another (bench.quotes.corpus):
without what they quote (rule 3's reading) and with it (rule 4), alternating, medians of 5."""
import statistics, time
from bench.quotes import corpus
from core.copies import codes_of
from core.ingest import QUOTED

f = corpus(300_000, 5)
t = {"without": [], "with": []}
for _ in range(5):
    for k in t:
        t0 = time.perf_counter(); codes_of(f["text"], f[QUOTED] if k == "with" else None); t[k].append(time.perf_counter() - t0)
print({k: round(statistics.median(v), 3) for k, v in t.items()}, {k: [round(x, 3) for x in v] for k, v in t.items()})
a, b = codes_of(f["text"]), codes_of(f["text"], f[QUOTED])
print("texts with a copy: without", int((__import__('numpy').bincount(a)[a] > 1).sum()), "with", int((__import__('numpy').bincount(b)[b] > 1).sum()))
