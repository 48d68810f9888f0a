"""plots.scatter() on the 300k scale corpus (data/scale), as the Scatter page calls it: the fixed hover sample
(core/hover.py, 5,000 texts) and 1,854 included texts, random coordinates. Each round: one figure with the hover
labels' cache emptied first (every text wrapped again, as before the cache) and one with it kept from the round
before (as at the next step of a group). Median of 7 rounds."""
import statistics, time
import numpy as np
from core.corpus import load_corpus
from core import hover as hv, plots
c = load_corpus("scale")
rows = hv.draw(c.n, 5000)
hover = (rows, [str(t) for t in c.frame["text"].take(rows).tolist()])
xy = np.random.default_rng(0).normal(size=(c.n, 2)).astype(np.float32)
labels = np.zeros(c.n, np.int8)
labels[np.setdiff1d(np.arange(c.n), rows)[:1854]] = 1
cold, warm = [], []
for r in range(7):
    plots._wrapped.cache_clear()
    for times in (cold, warm):
        t = time.perf_counter()
        plots.scatter(xy, labels, c.frame["text"], hover=hover)
        times.append(time.perf_counter() - t)
print("cache emptied: median %.3f s %s" % (statistics.median(cold), [round(x, 3) for x in cold]))
print("cache kept:    median %.3f s %s" % (statistics.median(warm), [round(x, 3) for x in warm]))
