"""One-off: the Scatter page's two kinds of axes at 3M texts (the sketch, as the page draws), medians of 3 after a
warm-up, alternating: the group's discriminant (200 included, 100 excluded) and the corpus map (topic_directions),
each followed by the projection of every row."""
import statistics, sys, time
sys.path.insert(0, "/work/main")
import numpy as np
from core import sketch
from core.corpus import load_corpus
from core.projection import lda_directions, project, topic_directions

name = sys.argv[1] if len(sys.argv) > 1 else "scale-3000000"
c = load_corpus(name)
x = sketch.load(c.data_folder, c.n)[0]
rng = np.random.default_rng(0)
inc, exc = np.sort(rng.choice(c.n, 200, replace=False)), np.sort(rng.choice(c.n, 100, replace=False))
exc = np.setdiff1d(exc, inc)
runs = {"group": [], "topics": []}
for r in range(4):
    for view in runs:
        t0 = time.perf_counter()
        w = lda_directions(x, inc, exc) if view == "group" else topic_directions(x)
        t1 = time.perf_counter()
        xy = project(x, w)
        t2 = time.perf_counter()
        if r:
            runs[view].append((t1 - t0, t2 - t1))
for view, rs in runs.items():
    print(f"{name} ({c.n:,} texts, sketch {x.shape[1]}-d) {view}: axes {statistics.median(a for a, _ in rs):.2f} s, "
          f"projection {statistics.median(b for _, b in rs):.2f} s (runs {[round(a, 2) for a, _ in rs]})")
