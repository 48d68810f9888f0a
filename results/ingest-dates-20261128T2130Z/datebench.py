"""Timing of the date check on the scale corpus's date column (300k) and a 3M repeat: new code vs HEAD's."""
import statistics, sys, time, importlib.util
import pandas as pd
sys.path.insert(0, "/work/main")
from core.ingest import Options, Report, _dates as new_dates
spec = importlib.util.spec_from_file_location("old_ingest", "/tmp/s25/ingest_old.py")
old = importlib.util.module_from_spec(spec); sys.modules["old_ingest"] = old; spec.loader.exec_module(old)
raw = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", usecols=["date"], dtype=str,
                  keep_default_na=False)["date"]
for n, col in (("300k", raw), ("3M", pd.concat([raw] * 10, ignore_index=True))):
    keep = pd.Series(True, index=col.index)
    for name, f in (("old", old._dates), ("new", new_dates), ("old", old._dates), ("new", new_dates)):
        ts = []
        for _ in range(3):
            t = time.perf_counter(); d, _k = f(col, keep, "x", "date", Options(), Report()); ts.append(time.perf_counter() - t)
        print(n, name, f"{statistics.median(ts):.3f} s", flush=True)
    a, _ = old._dates(col, keep, "x", "date", Options(), Report()); b, _ = new_dates(col, keep, "x", "date", Options(), Report())
    print(n, "same dates:", bool((a.fillna(pd.Timestamp(0)) == b.fillna(pd.Timestamp(0))).all()))
