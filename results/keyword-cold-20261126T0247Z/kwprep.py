import os, time, sys, glob
from core.corpus import load_corpus
from core import paths
import core.search.textindex as ti
name = "scale-10000000"
mode, wait = sys.argv[1], float(sys.argv[2])
for f in glob.glob(str(paths.corpus_dir(name) / "gen-*" / "*")):
    fd = os.open(f, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
c = load_corpus(name, check=False)
if mode == "off":
    ti.TextIndex.prepare = lambda self: None
from ui.resources import keyword_index
from core.search.keyword import find_rows
ki = keyword_index(c, c.frame["text"])
time.sleep(wait)
t = time.perf_counter(); r = find_rows(ki, "fake news", timeout_s=60); print(mode, wait, len(r), round(time.perf_counter() - t, 2), flush=True)
