# python ab.py TREE OUT.json: key lemmas' joins (merge_unknown) and Suggest's (unlisted_forms) on the Czech tweets,
# and unlisted_forms on the English troll tweets, with the code of TREE; times the joins (median of 5)
import json, re, statistics, sys, time
from collections import Counter
sys.path.insert(0, sys.argv[1])
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from pathlib import Path
SHARED = Path("/work/shared/data")
from core import wordforms as wf
from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens
from core.search.keyword import fold
assert wf.__file__.startswith(sys.argv[1])
out = {}
cs = pd.read_csv(SHARED / "czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)["text"]
counts = Counter(t for text in cs for t in tokens(text))
out["key_lemmas_cs"] = merge_unknown(counts, Lemmatiser("cs"))
words = re.compile(TfidfVectorizer().token_pattern).findall
for name, file, lang in (("suggest_cs", "czech_politicians_tweets_2021.csv", "cs"),
                         ("suggest_en", "russian_troll_tweets_recent300k.csv", "en")):
    texts = cs if lang == "cs" else pd.read_csv(SHARED / file, dtype=str, keep_default_na=False)["text"]
    lemma = wf.dictionary(lang).lemma_map().get
    c = Counter(w for t in texts for w in set(lemma(w, w) for w in words(fold(t))))
    names = sorted(c)
    wf.dictionary(lang).ending_changes()
    times = []
    for _ in range(5):
        t = time.perf_counter(); joined = wf.unlisted_forms(names, [c[w] for w in names], lang)
        times.append(time.perf_counter() - t)
    out[name] = joined
    out[name + "_counts"] = c
    print(name, len(names), "words", len(joined), "joined", f"{statistics.median(times):.3f} s", file=sys.stderr)
json.dump(out, open(sys.argv[2], "w"), ensure_ascii=False)
