"""How often the language detection (core.languages.language_of) names a text's language as Twitter tagged it.

Two corpora in ../shared/data carry Twitter's own language tag per tweet: the scale corpus (`language`: English 87%,
German 7%, Russian 4%, ...) and Czech politicians' tweets (`lang`: cs 93%, und 5%, en 1%, ...). Twitter's tags are
not perfect ("Guten Morgen! #Berlin" is tagged Norwegian), so agreement is a floor for accuracy, not accuracy.
Untagged rows ("und") and tags the detection cannot name (see core.languages.NAMES) are left out of the rate and
counted apart. A text two languages fit as well ("Wow.") goes to the one more of the sample is in, as on the Home
page. Prints, per corpus: agreement over sampled tagged rows, recall per common tag, the shares the Home page would
show beside the tags' own shares, and milliseconds per 1,000 texts.

    python -m bench.languages [--rows 4000] [--seed 0]     (-> results/languages-<UTC>/)
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from functools import partial

import pandas as pd

from testbed.common import SHARED, emit, run_folder

# the scale corpus names its languages in English; Czech politicians' tags are Twitter's codes ("in": Indonesian)
TAG_CODES = {"English": "en", "German": "de", "Russian": "ru", "Italian": "it", "Ukrainian": "uk", "Spanish": "es",
             "Bulgarian": "bg", "Portuguese": "pt", "Dutch": "nl", "French": "fr", "Finnish": "fi", "Romanian": "ro",
             "Catalan": "ca", "Turkish": "tr", "Swedish": "sv", "Greek": "el", "Polish": "pl", "Hungarian": "hu",
             "Danish": "da", "Indonesian": "id", "Tagalog": "tl", "Czech": "cs", "Slovak": "sk", "in": "id"}
CORPORA = {"scale corpus (troll tweets)": ("russian_troll_tweets_recent300k.csv", "language"),
           "Czech politicians": ("czech_politicians_tweets_2021.csv", "lang")}


def tagged_sample(file: str, column: str, rows: int, seed: int) -> pd.DataFrame:
    """``rows`` rows at random with Twitter's tag as a code in ``tag`` (None where untagged)."""
    frame = pd.read_csv(SHARED / file, usecols=["text", column], dtype=str, keep_default_na=False)
    frame = frame.sample(min(rows, len(frame)), random_state=seed)
    tags = frame[column].map(lambda t: TAG_CODES.get(t, t if len(t) == 2 else None))  # "und", untagged: None
    return pd.DataFrame({"text": frame["text"].tolist(), "tag": tags.tolist()})


def measure(language_of, sample: pd.DataFrame, names: dict[str, str]) -> dict:
    """Agreement of ``language_of`` with the sample's tags; the tags it cannot name are counted apart."""
    started = time.perf_counter()
    found = [language_of(t) for t in sample["text"]]
    ms_per_1000 = (time.perf_counter() - started) * 1000 / len(found) * 1000
    rows = [(tag, got) for tag, got in zip(sample["tag"], found) if tag in names]
    recall = {}
    for tag, n in Counter(tag for tag, _ in rows).most_common(5):
        recall[tag] = (round(sum(got == tag for t, got in rows if t == tag) / n, 3), n)
    wrong = Counter((tag, got) for tag, got in rows if tag != got).most_common(6)
    total = len(found)
    return {"agreement": round(sum(tag == got for tag, got in rows) / len(rows), 3), "scored": len(rows),
            "left out (untagged or unnamed)": total - len(rows), "recall per tag": recall,
            "most common disagreements (tag, detected)": wrong,
            "detected shares": {k: round(v / total, 3) for k, v in Counter(found).most_common(5)},
            "tags' shares": {k: round(v / total, 3)  # untagged, or a tag without a code here: "none"
                              for k, v in Counter(sample["tag"].fillna("none")).most_common(5)},
            "ms per 1,000 texts": round(ms_per_1000)}


def main(argv=None) -> None:
    from core import languages

    parser = argparse.ArgumentParser(prog="python -m bench.languages", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4000, help="sampled rows per corpus")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    missing = [file for file, _ in CORPORA.values() if not (SHARED / file).is_file()]
    if missing:
        sys.exit(f"bench.languages needs {', '.join(missing)} in {SHARED}")
    run_folder("languages", sys.argv if argv is None else ["bench/languages.py", *argv])
    languages.language_of("warm up the dictionaries")
    for name, (file, column) in CORPORA.items():
        sample = tagged_sample(file, column, args.rows, args.seed)
        prior = list(languages.shares_of(sample["text"].tolist()))  # ties go to the corpus's more common language
        emit(op="language_agreement", corpus=name, rows=args.rows, seed=args.seed,
             **measure(partial(languages.language_of, prior=prior), sample, languages.NAMES))


if __name__ == "__main__":
    main()
