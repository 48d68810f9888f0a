"""What the Annotate page's filter costs: the first use of a query (the keyword engine over the whole corpus)
and every rerun after it (the cached matches against the view's rows).

    SEMANNO_DATA=ROOT python -m bench.filter [--corpus scale] [--queries trump vote ...] [--views 1000 100000]

The corpus is read from the data root (``python -m bench.make_scale_corpus`` makes the 300k one); its search
context is built as the server builds it. A view is that many rows of the corpus drawn at random (an
"Included" view of a group that size). One JSON object per line; medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from core import annotate
from core.corpus import load_corpus
from testbed.common import emit, median_ms, run_folder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default="scale")
    p.add_argument("--queries", nargs="+", default=["trump", "hillary", "vote", "police", "#maga"])
    p.add_argument("--views", nargs="+", type=int, default=[1_000, 100_000])
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args(argv)
    run_folder("filter", sys.argv if argv is None else ["bench/filter.py", *argv])
    from ui.resources import search_context_of  # the server's own context (a large corpus's index on disk)

    corpus = load_corpus(a.corpus)
    ctx = search_context_of(corpus, "cpu")
    rng = np.random.default_rng(0)
    views = {n: np.sort(rng.choice(corpus.n, min(n, corpus.n), replace=False)) for n in a.views}
    for q in a.queries:
        matches = annotate.text_matches(ctx, q)
        first = median_ms(lambda: annotate.text_matches(ctx, q), a.repeat)
        emit(op="first use (keyword engine, whole corpus)", query=q, n=corpus.n, matches=int(len(matches)),
             median_ms=round(first, 2))
        for n, view in views.items():
            kept = len(annotate.filter_view(view, None, matches)[0])
            ms = median_ms(lambda: annotate.filter_view(view, None, matches), a.repeat)
            emit(op="rerun (cached matches x view)", query=q, view=int(n), kept=kept, median_ms=round(ms, 3))


if __name__ == "__main__":
    main()
