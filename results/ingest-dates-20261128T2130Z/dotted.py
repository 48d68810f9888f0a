"""The date check on 3M day-first dotted dates (the scale corpus's dates written as 26.7.2017 12:16, x10)."""
import sys, time, pandas as pd
sys.path.insert(0, "/work/main")
from core.ingest import _dates, Options, Report
raw = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", usecols=["date"], dtype=str, keep_default_na=False)["date"]
iso = pd.to_datetime(raw, format="mixed")
dotted = pd.Series(iso.dt.strftime("%-d.%-m.%Y %H:%M"), dtype=str)
col = pd.concat([dotted] * 10, ignore_index=True)
keep = pd.Series(True, index=col.index)
for _ in range(3):
    t = time.perf_counter(); d, _k = _dates(col, keep, "x", "date", Options(), Report())
    print("3M dotted", round(time.perf_counter() - t, 2), "s")
print("same instants as the ISO column:", bool((d.iloc[:len(iso)].values == iso.values).all()))
