"""Keyword search through the large-corpus index (word postings and folded texts, core/search/textindex.py) at
1M-10M texts, without importing a whole corpus: the texts of ``bench.make_scale_corpus`` (derived from
../shared/data with the same variation), folded and indexed as an import would index them.

    python -m bench.keyword_scale [--rows 1000000 3000000] [--repeat 7] [--fts]
    python -m bench.keyword_scale --in-memory     (the engine of corpora under 1M rows, 300k real tweets)

For each size: the index build time (once; the index is kept in data/.scale-input/keywords-N-words/ and reused;
with ``--fts`` the earlier form with a SQLite FTS5 trigram index beside it, in keywords-N/), then
``find_rows`` for bench.scale's queries (a word, a phrase, a prefix, two regexes), ``the`` (the
commonest trigrams), two letters (``eu``), a regex of two-letter words, a fuzzy one (``(?:hillary){e<=1}``) and two words in any order,
each the median of ``--repeat`` runs
with the hit count. Also runs as a file
(``python /path/to/bench/keyword_scale.py``) from another checkout's folder, to measure an earlier
tree's engine on the same index in the same sitting.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))  # the checkout measured is the current folder's

from bench.make_scale_corpus import _vary, source_pool  # noqa: E402
from core import paths  # noqa: E402
from core.search import textindex  # noqa: E402
from core.search.keyword import KeywordError, KeywordIndex, find_rows, fold  # noqa: E402
from testbed.common import emit, run_folder  # noqa: E402

QUERIES = {"word": ("trump", False), "phrase": ("fake news", False), "prefix": ("vacc", False),
           "regex_1": (r"trump\w*\s+(said|says|is)", True), "regex_2": (r"#\w*covid\w*", True),
           "commonest": ("the", False), "two_letters": ("eu", False), "regex_3": (r"\b(us|uk)\b", True),
           "fuzzy": (r"\b(?:hillary){e<=1}\b", True), "any_order": (r"(?=.*trump)(?=.*russia)", True)}


def texts(rows: int, seed: int = 0) -> list[str]:
    """``rows`` texts varied from the real corpora as make_scale_corpus varies them (authors aside)."""
    pool = source_pool()
    rng = np.random.default_rng(seed)
    src = rng.integers(0, len(pool), rows)
    return _vary(pool["text"].to_numpy(object)[src], np.full(rows, "user", object), rng.integers(0, 6, rows), rng)


def index_for(rows: int, fts: bool = True) -> tuple[Path, float | None]:
    """The index of ``rows`` texts (built now, with the seconds it took, or reused: None)."""
    # a folder each: the folded column and the postings sit beside
    path = paths.data_root() / ".scale-input" / (f"keywords-{rows}" if fts else f"keywords-{rows}-words") / textindex.FILE
    if not fts:
        if not textindex.exists(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            made = texts(rows)
            t0 = time.perf_counter()
            textindex.build(path, made, rows, fold)
            return path, time.perf_counter() - t0
        return path, None
    if path.exists():
        if hasattr(textindex, "build_folded") and not textindex.folded_file(path).exists():
            textindex.build_folded(path, texts(rows), fold)  # an index made before the folded column
            # (an earlier tree measured here has no build_folded: it reads SQLite as it always did)
        if hasattr(textindex, "build_words") and not textindex.words_files(path)[0].exists():
            t0 = time.perf_counter()
            textindex.build_words(path)  # likewise the word postings
            print(f"word postings built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return path, None
    path.parent.mkdir(parents=True, exist_ok=True)
    made = texts(rows)
    t0 = time.perf_counter()
    if "fts" in textindex.build.__code__.co_varnames:  # this tree builds no FTS5 file unless asked
        textindex.build(path, made, rows, fold, fts=True)
    else:
        textindex.build(path, made, rows, fold)
    return path, time.perf_counter() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--fts", action="store_true", help="the earlier index with SQLite FTS5 trigrams (as an earlier "
                    "tree, run from its folder, builds it)")
    ap.add_argument("--in-memory", action="store_true",
                    help="instead: the in-memory engine (corpora under 1M rows) over the 300k real tweets")
    args = ap.parse_args(argv)
    folder = run_folder("keyword-scale", sys.argv)
    if args.in_memory:
        import pandas as pd
        from testbed.common import SCALE

        real = pd.read_csv(SCALE, usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
        emit(kind="keyword_scale", folder=str(folder), rows=len(real), engine="in-memory", tree=str(Path.cwd()),
             **measure(KeywordIndex(real, prebuild=False), args.repeat))
        return
    for rows in args.rows:
        fts = args.fts or not hasattr(textindex, "exists")  # an earlier tree knows only the FTS5 form
        path, build_s = index_for(rows, fts)
        kindex = KeywordIndex([""] * rows, text_index=textindex.TextIndex(path, rows))
        folded = getattr(kindex.text_index, "folded", lambda: None)() is not None
        words = getattr(kindex.text_index, "_words", lambda: None)() is not None
        emit(kind="keyword_scale", folder=str(folder), rows=rows, engine="sqlite-fts5-trigram" if path.exists() else "word-postings",
             index_build_s=None if build_s is None else round(build_s, 1), tree=str(Path.cwd()),
             folded_column=folded, word_postings=words, **measure(kindex, args.repeat))


def measure(kindex: KeywordIndex, repeat: int) -> dict:
    out = {}
    for label, (query, is_regex) in QUERIES.items():
        times, hits = [], None
        for _ in range(repeat):
            t0 = time.perf_counter()
            try:
                hits = len(find_rows(kindex, query, is_regex=is_regex))
            except KeywordError as exc:
                hits = f"stopped: {exc}"[:60]
            times.append(time.perf_counter() - t0)
        out[f"{label}_ms"], out[f"{label}_hits"] = round(1000 * statistics.median(times), 1), hits
    return out


if __name__ == "__main__":
    main()
