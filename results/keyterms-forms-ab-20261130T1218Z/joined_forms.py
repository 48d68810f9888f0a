"""Forms newly joined by the stem rule: merge_unknown now against b5db0c3's.
Run from the repository root: PYTHONPATH=. .venv/bin/python results/keyterms-forms-ab-20261130T1218Z/joined_forms.py"""
import sys, importlib.util, subprocess, tempfile
from collections import Counter
import pandas as pd
from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens
OLD = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
OLD.write(subprocess.run(["git", "show", "b5db0c3:core/cluster/keyterms.py"], capture_output=True, text=True, check=True).stdout); OLD.close()
spec = importlib.util.spec_from_file_location("old_kt", OLD.name); old = importlib.util.module_from_spec(spec); sys.modules["old_kt"] = old; spec.loader.exec_module(old)
f = pd.read_csv("../shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)
lem = Lemmatiser("cs")
c = Counter(t for x in f.text for t in tokens(x))
new, was = merge_unknown(c, lem), old.merge_unknown(c, lem)
added = {k: v for k, v in new.items() if k not in was}
print("forms newly joined:", len(added), "into", len(set(added.values())), "lemmas; tokens:", sum(c[k] for k in added))
