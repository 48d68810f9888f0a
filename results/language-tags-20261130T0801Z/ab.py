# Edition 3 (as of 1508958: function words, then simplemma among cs/en/de without links, mentions, hashtags; a tie
# went to the first candidate, Czech) against today's core.languages (edition 4: also the alphabet, Twitter's markup
# left out, a tie to the corpus's more common language), in the same process, on the same samples.
# Run from the repository root: PYTHONPATH=. .venv/bin/python RESULTS_FOLDER/ab.py
import statistics
from collections import Counter
from functools import partial
import pandas as pd
from simplemma import langdetect
from bench.languages import CORPORA, measure, tagged_sample
from testbed.common import SHARED as DATA
from core import languages
from core.languages import _NOT_WORDS, CANDIDATES, NAMES


def edition_3(text):  # its function-word step read the text without links, mentions and hashtags only
    other = languages._by_function_words(languages._WORD.findall(_NOT_WORDS.sub(" ", text).lower()), CANDIDATES,
                                         languages.OTHER)
    if other:
        return other
    found = langdetect(_NOT_WORDS.sub(" ", text), lang=CANDIDATES)
    best, score = found[0] if found else ("unk", 0)
    return best if best != "unk" and score > 0 else "unknown"


def shares(fn, texts):
    votes = Counter(fn(t) for t in texts)
    return {k: round(v / len(texts), 3) for k, v in votes.most_common(3)}


languages.language_of("warm up")
for name, (file, column) in CORPORA.items():
    rows = {"edition 3": [], "edition 4": []}
    for seed in (0, 1, 2):
        sample = tagged_sample(file, column, 4000, seed)
        prior = list(languages.shares_of(sample["text"].tolist()))
        for label, fn in (("edition 3", edition_3), ("edition 4", partial(languages.language_of, prior=prior))):
            m = measure(fn, sample, NAMES)
            rows[label].append(m)
            print(name, "seed", seed, label, m, flush=True)
    for label, ms in rows.items():
        recall = {t: statistics.median(m["recall per tag"].get(t, (float("nan"),))[0] for m in ms)
                  for t in ms[0]["recall per tag"]}
        print(f"SUMMARY {name} {label}: agreement median {statistics.median(m['agreement'] for m in ms):.3f} "
              f"(seeds {[m['agreement'] for m in ms]}), recall per tag (median) {recall}, "
              f"ms/1000 median {statistics.median(m['ms per 1,000 texts'] for m in ms)}")
cr = pd.read_csv(DATA / "crisislex_t26.csv", dtype=str, keep_default_na=False)
for event, group in cr.groupby("label"):
    texts = group["text"].sample(min(400, len(group)), random_state=0).tolist()
    print(f"CRISIS {event}: edition 3 {shares(edition_3, texts)}  edition 4 {languages.shares_of(texts)}")
