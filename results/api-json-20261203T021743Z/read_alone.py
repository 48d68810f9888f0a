import sys, re, time, tracemalloc
from pathlib import Path
from core import ingest
f = Path(sys.argv[1]); how = sys.argv[2]
trace = len(sys.argv) > 3
if trace: tracemalloc.start()
t = time.perf_counter()
fr = ingest.read_table(f) if how == "stream" else ingest._parse_text(ingest._read_utf8(f, "t"), "jsonl")
dt = time.perf_counter() - t
peak = int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))
print(how, round(dt, 2), "s", peak // 1000, "MB", fr.shape, (tracemalloc.get_traced_memory()[1] >> 20) if trace else "")
