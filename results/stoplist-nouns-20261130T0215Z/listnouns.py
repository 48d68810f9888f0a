"""Which words of stopwords-iso's list for LANG are frequent in an event's tweets (candidates for NOT_FUNCTION)."""
import sys, collections, regex
import pandas as pd, stopwordsiso
sys.path.insert(0, ".")
f = pd.read_csv("../shared/data/crisislex_t26.csv", dtype=str, keep_default_na=False)
for label, lang in [("2013_Brazil_nightclub_fire", "pt"), ("2013_Lac_Megantic_train_crash", "fr"),
                    ("2012_Typhoon_Pablo", "tl"), ("2013_Typhoon_Yolanda", "tl"), ("2013_Manila_floods", "tl"),
                    ("2012_Philipinnes_floods", "tl"), ("2012_Costa_Rica_earthquake", "es"), ("2013_Spain_train_crash", "es")]:
    texts = f[f["label"] == label]["text"]
    stop = stopwordsiso.stopwords(lang)
    c = collections.Counter(w for t in texts for w in set(regex.findall(r"\p{L}+", t.lower())) if w in stop)
    print(label, lang, c.most_common(60))
