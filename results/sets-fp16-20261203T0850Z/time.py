"""The embedding set `quotes` of a corpus kept as fp16 (from 1M rows): made (core.quoted.build, the quoted tweets'
embedding replaced by random unit vectors: the part measured is the copy, blend and write of the corpus's vectors),
then picked and searched as the server does (ui.resources.vector_index's rule): a scan of every row (scores) and COS's
top 100 (topk). One phase per process, for its memory: peak resident (ru_maxrss, with mapped files' pages) and
private (RssAnon) after the searches.

    PYTHONPATH=. python time.py make N ROOT      # the import's fp16 store of N random unit rows, every 5th a quote
    PYTHONPATH=. python time.py set N ROOT       # the set made, then opened and searched (COS's scan)
"""
import json
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core import embedsets, quoted, vectorstore
from core.corpus import Corpus
from core.ingest import QUOTED
from core.search.index import VectorIndex

phase, n, root = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
dim, block = 384, 1 << 18
data = root / "c" / "gen-1"
manifest = {"store": {"precision": "fp16"}, "dim": dim, "models": [{"name": "stand-in"}]}


def unit(rng, k):
    x = rng.standard_normal((k, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def anon_mb():
    """The process's private memory (RssAnon): what issue 29's budget counts, without the mapped files' pages."""
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return round(int(line.split()[1]) / 1024)


if phase == "make":
    shutil.rmtree(root / "c", ignore_errors=True)
    data.mkdir(parents=True)
    rng = np.random.default_rng(0)
    vectorstore.write(data / vectorstore.FILE, (unit(rng, min(block, n - s)) for s in range(0, n, block)), n, dim)
    q = np.full(n, "", dtype=object)
    q[::5] = "@someone: what it quotes"
    pd.DataFrame({"id": np.arange(n).astype(str), QUOTED: q}).to_parquet(root / "frame.parquet")
    print(json.dumps({"phase": "make", "rows": n, "store_gb": round((data / vectorstore.FILE).stat().st_size / 1e9, 2)}))
    sys.exit(0)

frame = pd.read_parquet(root / "frame.parquet")
c = Corpus("c", frame, vectorstore.codes(data / vectorstore.FILE), manifest, root / "c", data)
import core.corpus as corpus_mod

corpus_mod.embed_as_corpus = lambda c, texts, work, **kw: unit(np.random.default_rng(1), len(texts))
shutil.rmtree(root / "c" / "embeddings", ignore_errors=True)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
made = quoted.build(c, work=root / "work")
made_s = time.perf_counter() - t0
rss_made = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
files = {f.name: round(f.stat().st_size / 1e9, 2) for f in made.path.iterdir() if f.name != "manifest.json"}
t0 = time.perf_counter()
picked = embedsets.with_set(c, "quotes")
vf = getattr(picked, "vector_file", None)
index = VectorIndex.mapped(vf, "cpu") if vf else VectorIndex(picked.embeddings, device="cpu")
open_s = time.perf_counter() - t0
w = unit(np.random.default_rng(2), 1)[0]
times, tops = [], []
for _ in range(9):
    t0 = time.perf_counter()
    s = index.scores(w)
    np.argpartition(-s, 100)[:100]
    times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    index.topk(w[None, :], 100)
    tops.append(time.perf_counter() - t0)
print(json.dumps({"phase": "set", "rows": n, "made_s": round(made_s, 1), "files_gb": files,
                  "picked_as": getattr(index, "precision", "?"), "open_s": round(open_s, 2),
                  "scan_ms_median_of_9": round(1000 * statistics.median(times), 1),
                  "topk100_ms_median_of_9": round(1000 * statistics.median(tops), 1),
                  "private_mb_after_searches": anon_mb(),
                  "peak_rss_mb": {"before": round(rss0), "after_made": round(rss_made),
                                  "after_searches": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}}))
