"""The date check with a corpus time zone (Europe/Prague) against UTC on the scale corpus's dates (no offset
written), 300k and 3M (x10), medians of 3, alternated."""
import statistics, sys, time, pandas as pd
sys.path.insert(0, "/work/main")
from core.ingest import _dates, Options, Report
raw = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", usecols=["date"], dtype=str, keep_default_na=False)["date"]
for n, col in (("300k", raw), ("3M", pd.concat([raw] * 10, ignore_index=True))):
    keep = pd.Series(True, index=col.index)
    for zone in ("UTC", "Europe/Prague", "UTC", "Europe/Prague"):
        ts = []
        for _ in range(3):
            t = time.perf_counter(); d, _k = _dates(col, keep, "x", "date", Options(timezone=zone), Report()); ts.append(time.perf_counter() - t)
        print(n, zone, f"{statistics.median(ts):.3f} s", flush=True)
