"""Key lemmas per cluster of a stored clustering (original rule and c-TF-IDF), stored beside it.
``precompute.cluster`` already computes them; run this to recompute them with other options.

    python -m precompute.keyterms --corpus NAME (--clustering STEM | --method M --k K) [--lang cs|en|de|auto]

STEM is the stored file's name without .npz, e.g. kmeans-k1000 or dec-k20-trial.
"""

from __future__ import annotations

import argparse
import sys

from core.cluster import store
from core.corpus import load_corpus
from precompute._cli import run_main
from core.cluster.jobs import terms


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.keyterms", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--clustering", help="stored clustering, e.g. kmeans-k1000")
    p.add_argument("--method", default="kmeans")
    p.add_argument("--k", type=int)
    p.add_argument("--lang", default="auto", help="simplemma language code (cs, en, de, ...) or auto")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--min-count", type=int, default=10, help="the original rule's minimum count in a cluster")
    p.add_argument("--frequent", type=int, default=300, help="the original rule drops the corpus's N most frequent lemmas")
    a = p.parse_args(argv)
    if not a.clustering and a.k is None:
        p.error("name the clustering: --clustering STEM, or --method M --k K")
    stem = a.clustering or store.stem_of(a.method, a.k)
    terms(load_corpus(a.corpus), stem, a.lang, top=a.top, min_count=a.min_count, frequent=a.frequent)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
