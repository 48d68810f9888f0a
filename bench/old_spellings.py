"""English word forms whose lemma changes with :func:`core.cluster.keyterms.modern_english` (simplemma's old
spellings "playe", "thinke" -> "play", "think"), counted over the English corpora of ``../shared/data``: how many
tokens change, and which words, for a reader to judge each change.

    python -m bench.old_spellings [--top 25]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

import pandas as pd

from core.cluster.keyterms import Lemmatiser, tokens
from testbed.common import SHARED, emit, run_folder

CORPORA = ("russian_troll_tweets_recent300k.csv", "crisislex_t26.csv", "stackoverflow.csv", "agnews8000.csv",
           "searchsnippets.csv", "biomedical.csv")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.old_spellings", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--top", type=int, default=25, help="the most frequent changed words printed per corpus")
    a = p.parse_args(argv)
    run_folder("old_spellings", sys.argv if argv is None else ["bench/old_spellings.py", *argv])
    before, after = Lemmatiser("en", modern=False), Lemmatiser("en")
    for name in CORPORA:
        texts = pd.read_csv(SHARED / name, usecols=["text"], dtype=str, keep_default_na=False)["text"]
        counts = Counter(w for t in texts for w in tokens(t))
        changed = Counter({(w, before(w), after(w)): n for w, n in counts.items() if before(w) != after(w)})
        emit(op="old_spellings", corpus=name, texts=len(texts), tokens=sum(counts.values()),
             changed_tokens=sum(changed.values()), changed_words=len(changed),
             words=[f"{w}: {b} -> {c} ({n})" for (w, b, c), n in changed.most_common(a.top)])


if __name__ == "__main__":
    main()
