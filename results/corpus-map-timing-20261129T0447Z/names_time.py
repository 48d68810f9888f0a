"""One-off: naming the map's topics (key lemmas of 5,000 texts of the sample), medians of 3 after a warm-up."""
import statistics, sys, time
from pathlib import Path
sys.path.insert(0, "/work/main")
from core import sketch
from core.corpus import load_corpus
from core.projection import topic_map, topic_names

for root, name in ([("/work/main/data", a) for a in sys.argv[1:]] or [("/work/main/data", "scale-3000000"), ("/work/main/data", "crisislex_t26"), ("/tmp/s28/walk", "cz3000")]):
    c = load_corpus(name, Path(root))
    found = topic_map(sketch.load(c.data_folder, c.n)[0])
    runs = []
    for r in range(4):
        t0 = time.perf_counter(); names = topic_names(found, c.frame["text"]); dt = time.perf_counter() - t0
        if r:
            runs.append(dt)
    print(f"{name} ({c.n:,} texts): naming {statistics.median(runs):.2f} s (runs {[round(v, 2) for v in runs]}); "
          f"names: {names[:4]}")
