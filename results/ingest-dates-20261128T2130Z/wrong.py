"""How many of the scale corpus's 300k dates, written day first with dots, the old check read wrongly."""
import sys, importlib.util, pandas as pd
sys.path.insert(0, "/work/main")
spec = importlib.util.spec_from_file_location("old_ingest", "/tmp/s25/ingest_old.py")
old = importlib.util.module_from_spec(spec); sys.modules["old_ingest"] = old; spec.loader.exec_module(old)
from core.ingest import _dates, Options, Report
raw = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", usecols=["date"], dtype=str, keep_default_na=False)["date"]
iso = pd.to_datetime(raw, format="mixed")
dotted = pd.Series(iso.dt.strftime("%-d.%-m.%Y %H:%M"), dtype=str)
keep = pd.Series(True, index=dotted.index)
o, _ = old._dates(dotted, keep, "x", "date", Options(), Report())
n, _ = _dates(dotted, keep, "x", "date", Options(), Report())
print(f"old: {int((o.values != iso.values).sum()):,} of {len(iso):,} dates wrong; new: {int((n.values != iso.values).sum()):,}")
