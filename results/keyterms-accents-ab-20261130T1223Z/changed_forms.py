"""Forms counted under another lemma than at 1542118 (the accent rule), on all Czech politicians' tweets.
Run from the repository root: PYTHONPATH=. .venv/bin/python results/keyterms-accents-ab-20261130T1223Z/changed_forms.py"""
import sys, importlib.util, subprocess, tempfile
from collections import Counter
import pandas as pd
from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens
OLD = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
OLD.write(subprocess.run(["git", "show", "1542118:core/cluster/keyterms.py"], capture_output=True, text=True, check=True).stdout); OLD.close()
spec = importlib.util.spec_from_file_location("old_kt", OLD.name); old = importlib.util.module_from_spec(spec); sys.modules["old_kt"] = old; spec.loader.exec_module(old)
f = pd.read_csv("../shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)
lem = Lemmatiser("cs")
c = Counter(t for x in f.text for t in tokens(x))
new, was = merge_unknown(c, lem), old.merge_unknown(c, lem)
added = {k: v for k, v in new.items() if k not in was}

ch = {k: (was.get(k), v) for k, v in new.items() if was.get(k) != v}
print(len(ch), "forms counted under another lemma than before; words written:", sum(c[k] for k in ch))
print([(k, a, b, c[k]) for k, (a, b) in sorted(ch.items(), key=lambda kv: -c[kv[0]])[:90]])
import random; random.seed(3)
print([(k, a, b, c[k]) for k, (a, b) in random.sample(sorted(ch.items()), 50)])
