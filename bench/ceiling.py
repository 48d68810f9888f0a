"""How findable is each class at all with the features Suggest ranks by?

    python -m bench.ceiling --data ../shared/data/stackoverflow.csv [--label-column label] [--folds 5]

For each class: the words+embedding logistic model that Suggest fits (core.search.lexical), but
trained on the true labels of every other fold of the corpus (5-fold, stratified), scores the
held-out fold. R-precision = the share of members among the class-size top-scored texts: the
recall an annotator would reach after reviewing 1x the class size if the ranker already knew the
labels of 80% of the corpus. A simulated annotator (bench/annotator.py) that starts from one
keyword cannot be expected to beat it by much; where it is below the issue's target, the target
is out of reach for these features (embedding model + tf-idf), whatever the ranking policy.

Prints one JSON line per class and a summary line (macro R-precision; recall at 1.5x the class size).

The logic lives in testbed/ceiling.py (shared with the tests); this is the command line."""

from __future__ import annotations
import sys
import argparse
import os
from pathlib import Path
import numpy as np
from bench.annotator import corpus_for
from testbed.common import emit, run_folder
from core.search.lexical import word_matrix
from precompute._cli import quiet_logging

from testbed.ceiling import out_of_fold_scores, recall_at


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--label-column", default="label")
    p.add_argument("--folds", type=int, default=5)
    a = p.parse_args(argv)
    run_folder("ceiling", sys.argv if argv is None else ["bench/ceiling.py", *argv])
    quiet_logging()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    corpus = corpus_for(a.data, a.label_column)
    x = np.asarray(corpus.embeddings, dtype=np.float32)
    words = word_matrix(corpus.frame["text"].tolist())
    labels = corpus.frame[a.label_column].astype(str).to_numpy()
    r1, r15 = [], []
    for cls in sorted(set(labels)):
        member = labels == cls
        s = out_of_fold_scores(x, words, member, a.folds)
        r1.append(recall_at(s, member, 1.0))
        r15.append(recall_at(s, member, 1.5))
        emit(dataset=a.data.stem, cls=cls, size=int(member.sum()), r_precision=round(r1[-1], 4),
             recall_at_1_5x=round(r15[-1], 4))
    emit(summary={"dataset": a.data.stem, "classes": len(r1), "folds": a.folds,
                  "macro_r_precision": round(float(np.mean(r1)), 4),
                  "macro_recall_at_1_5x": round(float(np.mean(r15)), 4)})


if __name__ == "__main__":
    main()
