# Language shares of samples of the scale corpus (800), Czech politicians (800) and nine crisis events (400 each):
# simplemma reading each text as is (before) or without links, mentions and hashtags (after), other_language first.
# Run from the repository root: PYTHONPATH=. .venv/bin/python RESULTS_FOLDER/ld.py
import sys, time
import pandas as pd
from collections import Counter
from simplemma import langdetect
from core import languages
from core.languages import _NOT_WORDS, CANDIDATES, other_language
def shares(texts, prep):
    votes = Counter()
    for t in texts:
        o = other_language(t)
        if o: votes[o] += 1; continue
        f = langdetect(prep(t), lang=CANDIDATES)
        best, score = f[0] if f else ("unk", 0)
        votes[best if best != "unk" and score > 0 else "unknown"] += 1
    tot = sum(votes.values())
    return {k: round(v / tot, 3) for k, v in votes.most_common(4)}
preps = {"as is": lambda t: t, "no links": lambda t: _NOT_WORDS.sub(" ", t),
         "lower": lambda t: t.lower(), "no links, lower": lambda t: _NOT_WORDS.sub(" ", t).lower()}
import numpy as np
sets = {}
tr = pd.read_csv("../shared/data/russian_troll_tweets_recent300k.csv", dtype=str, keep_default_na=False, nrows=300000)
sets["troll 300k"] = tr["text"].sample(800, random_state=0).tolist()
cz = pd.read_csv("../shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False)
sets["czech politicians"] = cz["text"].sample(800, random_state=0).tolist()
cr = pd.read_csv("../shared/data/crisislex_t26.csv", dtype=str, keep_default_na=False)
EVENTS = ["2013_Boston_bombings", "2012_Colorado_wildfires", "2013_Alberta_floods", "2013_Queensland_floods",
          "2012_Venezuela_refinery", "2013_Russia_meteor", "2012_Italy_earthquakes", "2013_Lac_Megantic_train_crash"]
for ev in EVENTS:
    s = cr[cr.label == ev]["text"]
    if len(s): sets[ev] = s.sample(min(400, len(s)), random_state=0).tolist()
for name, texts in sets.items():
    print(name)
    for p, f in preps.items():
        print("   ", p, shares(texts, f))
