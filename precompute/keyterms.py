"""Key lemmas per K-Means cluster (original rule and c-TF-IDF), stored as parquet.

    python -m precompute.keyterms --corpus NAME --k K [--lang cs|en|de|auto]
"""

from __future__ import annotations

import argparse
import logging
import sys


from core.atomic import save_parquet
from core.corpus import load_corpus
from core.clusterings import load_clustering, terms_file
from core.keyterms import key_terms
from precompute._cli import run_main

log = logging.getLogger(__name__)


output = terms_file  # where a k's key lemmas go


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.keyterms", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--lang", default="auto", help="simplemma language code (cs, en, de, ...) or auto")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--min-count", type=int, default=10, help="the original rule's minimum count in a cluster")
    p.add_argument("--frequent", type=int, default=300, help="the original rule drops the corpus's N most frequent lemmas")
    a = p.parse_args(argv)
    corpus = load_corpus(a.corpus)
    labels, _, _ = load_clustering(a.corpus, a.k)
    kt = key_terms(corpus.frame["text"].tolist(), labels, lang=a.lang, top=a.top, min_count=a.min_count,
                   frequent=a.frequent)
    save_parquet(output(a.corpus, a.k), kt.table)
    log.info("key lemmas of %d clusters (language %s) -> %s", len(kt.table), kt.lang, output(a.corpus, a.k))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
