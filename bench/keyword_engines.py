"""The keyword index chosen by measurement (issue 29, item 4): the project's word postings with the folded
column (core/search/textindex.py) beside tantivy (a Rust search library, through its Python binding), on
the same folded texts, same run, for the queries the keyword search must answer with *every* hit (the
annotator brings all of them in as included): a word as a substring (``trump`` finds ``trumpcare``), a
phrase, a prefix (``vacc``) and the commonest word.

    pip install tantivy   # only for this comparison; the product does not use it
    python -m bench.keyword_engines [--rows 300000] [--repeat 5]

tantivy's substring query is a regular expression over its term dictionary (``.*trump.*``); its phrase
is a phrase query on its default tokenizer (whole words, so ``fake news`` does not find ``fake
newsletter``: hit counts differ slightly there). Every hit is collected (``limit`` = all rows) and turned
into row numbers (one segment, documents in row order), as the app needs them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core.search import textindex
from core.search.keyword import KeywordIndex, find_rows, fold
from testbed.common import SCALE, emit, run_folder

QUERIES = {"word": ("trump", ".*trump.*"), "phrase": ("fake news", '"fake news"'), "prefix": ("vacc", ".*vacc.*"),
           "commonest": ("the", ".*the.*")}


def _median_ms(fn, repeat: int) -> tuple[float, int]:
    hits, times = 0, []
    for _ in range(repeat):
        t = time.perf_counter()
        hits = fn()
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 1), int(hits)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    try:
        import tantivy
    except ImportError:
        raise SystemExit("this comparison needs tantivy: pip install tantivy") from None
    run_folder("keyword-engines", sys.argv if argv is None else ["bench/keyword_engines.py", *argv])
    texts = pd.read_csv(SCALE, usecols=["text"], dtype=str, keep_default_na=False, nrows=a.rows)["text"].tolist()
    n = len(texts)
    tmp = Path(tempfile.mkdtemp(prefix="keyword-engines-"))

    t = time.perf_counter()
    textindex.build(tmp / textindex.FILE, texts, n, fold)
    ours_build = time.perf_counter() - t
    ours = KeywordIndex([""] * n, text_index=textindex.TextIndex(tmp / textindex.FILE, n))

    t = time.perf_counter()
    folded = [fold(textindex.one_line(x)) for x in texts]  # the same folding, counted in its build time too
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, index_option="position")
    schema = sb.build()
    (tmp / "tantivy").mkdir()
    index = tantivy.Index(schema, path=str(tmp / "tantivy"))
    writer = index.writer(heap_size=1_000_000_000, num_threads=1)  # one segment: doc id = row
    for body in folded:
        writer.add_document(tantivy.Document(body=body))
    writer.commit()
    writer.wait_merging_threads()
    tantivy_build = time.perf_counter() - t
    index.reload()
    searcher = index.searcher()
    if searcher.num_segments != 1:
        raise SystemExit(f"tantivy wrote {searcher.num_segments} segments: doc ids are not rows")

    def tantivy_rows(query) -> int:
        hits = searcher.search(query, limit=n).hits
        return len(np.fromiter((addr.doc for _, addr in hits), np.int64, len(hits)))

    emit(engine="word postings + folded column", rows=n, build_s=round(ours_build, 1), folder=str(tmp))
    emit(engine="tantivy " + getattr(tantivy, "__version__", "?"), rows=n, build_s=round(tantivy_build, 1))
    for label, (ours_q, tv_q) in QUERIES.items():
        query = index.parse_query(tv_q, ["body"]) if tv_q.startswith('"') else \
            tantivy.Query.regex_query(schema, "body", tv_q)
        ms, hits = _median_ms(lambda: len(find_rows(ours, ours_q)), a.repeat)
        tms, thits = _median_ms(lambda: tantivy_rows(query), a.repeat)
        emit(query=label, text=ours_q, postings_ms=ms, postings_hits=hits, tantivy_ms=tms, tantivy_hits=thits)


if __name__ == "__main__":
    main()
