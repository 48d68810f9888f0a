"""How merge_unknown now reads the Czech politicians' tweets' word forms, against an older commit's.

Run from the repository root: PYTHONPATH=. .venv/bin/python results/keyterms-accents-ab-20261130T1223Z/forms_against.py COMMIT
(b5db0c3: before the stem rule for unknown forms; 1542118: before the diacritics rule)."""
import importlib.util
import random
import subprocess
import sys
import tempfile
from collections import Counter

import pandas as pd

from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens

commit = sys.argv[1]
source = subprocess.run(["git", "show", f"{commit}:core/cluster/keyterms.py"], capture_output=True, text=True,
                        check=True).stdout
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
    fh.write(source)
spec = importlib.util.spec_from_file_location("old_keyterms", fh.name)
old = importlib.util.module_from_spec(spec)
sys.modules["old_keyterms"] = old  # its dataclasses look their module up
spec.loader.exec_module(old)

f = pd.read_csv("../shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)
lem = Lemmatiser("cs")
c = Counter(t for x in f.text for t in tokens(x))
new, was = merge_unknown(c, lem), old.merge_unknown(c, lem)
added = {k: v for k, v in new.items() if k not in was}
print("forms newly joined:", len(added), "into", len(set(added.values())), "lemmas; words written:",
      sum(c[k] for k in added))
changed = {k: (was.get(k), v) for k, v in new.items() if was.get(k) != v}
print(len(changed), "forms counted under another lemma than before; words written:", sum(c[k] for k in changed))
print("most written:", [(k, a, b, c[k]) for k, (a, b) in sorted(changed.items(), key=lambda kv: -c[kv[0]])[:90]])
random.seed(3)
print("at random:", [(k, a, b, c[k]) for k, (a, b) in random.sample(sorted(changed.items()), 50)])
