"""Czech lemma accuracy on a hand-checked sample (bench/data/czech_lemmas_gold.tsv), before and
after the second pass that maps unknown word forms to a known lemma of the corpus with the same stem.

    python -m bench.lemmas [--corpus ../shared/data/czech_politicians_tweets_2021.csv]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from testbed.common import SHARED, emit, run_folder
from core.cluster.keyterms import Lemmatiser, merge_unknown, tokens

GOLD = Path(__file__).resolve().parent / "data" / "czech_lemmas_gold.tsv"


def gold() -> list[tuple[str, set[str]]]:
    lines = [l.rstrip("\n").split("\t") for l in GOLD.read_text(encoding="utf-8").splitlines()
             if l and not l.startswith("#")][1:]
    return [(tok, set(lemma.split("|"))) for tok, lemma in lines]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.lemmas", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=SHARED / "czech_politicians_tweets_2021.csv")
    a = p.parse_args(argv)
    run_folder("lemmas", sys.argv if argv is None else ["bench/lemmas.py", *argv])
    texts = pd.read_csv(a.corpus, dtype=str, keep_default_na=False)["text"]
    lem = Lemmatiser("cs")
    counts = Counter(t for text in texts for t in tokens(text))
    merged = merge_unknown(counts, lem)
    rows = gold()
    for name, fn in (("simplemma", lem), ("simplemma + same-stem merge", lambda t: merged.get(t) or lem(t))):
        wrong = [(t, fn(t), "|".join(sorted(g))) for t, g in rows if fn(t) not in g]
        emit(op="czech_lemmas", method=name, tokens=len(rows), correct=len(rows) - len(wrong),
             accuracy=round(1 - len(wrong) / len(rows), 3), wrong=wrong)
    emit(op="czech_merge_examples", merged_forms=len(merged),
         sample=sorted(merged.items(), key=lambda kv: -counts[kv[0]])[:40])


if __name__ == "__main__":
    main()
