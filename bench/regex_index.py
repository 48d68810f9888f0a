"""Regular expressions through the large-corpus keyword index (core/search/textindex.py) against the in-memory
engine on the same texts: does the index find every text the engine finds, or say why it cannot?

    python -m bench.regex_index [--rows 300000] [--repeat 5] [--pattern REGEX ...]

The index tries a regex only on the texts that hold its plain parts, which it reads with Python's own parser; the
search runs the ``regex`` package. For each pattern of the regex package's own syntax (``\\p{L}``, POSIX classes,
``\\m``, named groups, flags, fuzzy matching) and of anchors: the engine's hit count, the index's (or its
refusal), and whether the index missed texts without saying so; the in-memory engine's time (corpora under 1M
rows) trying the pattern on every text (the reference, without the search's 2 s deadline) and as the search runs
it (a pattern that starts without plain text tried only on the texts holding its longest plain part); each a
median of ``--repeat``.
The texts are the scale corpus's (../shared/data, English), indexed as an import of 1M rows or more indexes them.
Also runs as a file (``python /path/to/bench/regex_index.py``) from another checkout's folder, to measure an
earlier tree on the same texts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the checkout measured is the current folder's

import pandas as pd  # noqa: E402

from core.search import keyword, textindex  # noqa: E402
from core.search.keyword import KeywordError, KeywordIndex, find_rows, fold  # noqa: E402
from testbed.common import SCALE, emit, run_folder  # noqa: E402

PATTERNS = [r"\p{L}+gate\b", r"[[:alpha:]]+gate\b", r"\mtrump", r"hillary\M", r"(?<who>obama)\W+care",
            r"(?P<Who>Obama)\W+(?P=Who)", r"(?r)clinton", r"(?V0)clinton", r"\Abreaking", r"news\Z",
            r"^breaking|^watch", r"(?:hillary){e<=1}", r"(?:clinton){s<=1}", r"trump\w*\s+(said|says|is)",
            r"\w+gate\b", r"\d+\s+people", r"#\w*news\w*", r"\b(hillary|clinton)\b", r"(\w+)gate|(\w+)care",
            r"\b(?:hillary){e<=1}\b", r"(?:clinton|sanders){e<=1}", r"(?:obama){e<=2}",
            r"(?=.*trump)(?=.*russia)", r"^(?=.*\bhillary\b)(?=.*\bemails?\b)", r"(?:trump){e<=1}"]


def _every_text(memory: KeywordIndex, pattern: str):
    """The in-memory engine trying ``pattern`` on every text (no narrowing by its plain parts, where the tree has
    it), without the search's 2 s deadline: the reference."""
    narrow = getattr(keyword, "_candidates", None)
    if narrow is not None:
        keyword._candidates = lambda *a: None
    try:
        return find_rows(memory, pattern, is_regex=True, timeout_s=120)
    finally:
        if narrow is not None:
            keyword._candidates = narrow


def _timed(fn, repeat: int):
    """(median ms, the last answer or the KeywordError's message)."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        try:
            out = fn()
        except KeywordError as exc:
            out = f"refused: {exc}"
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 1), out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--pattern", action="append", help="only this pattern (repeatable; default: the list above)")
    a = p.parse_args(argv)
    folder = run_folder("regex-index", sys.argv if argv is None else ["bench/regex_index.py", *argv])
    texts = pd.read_csv(SCALE, usecols=["text"], dtype=str, keep_default_na=False, nrows=a.rows)["text"].tolist()
    with tempfile.TemporaryDirectory(prefix="regex-index-") as tmp:
        path = Path(tmp) / textindex.FILE
        t0 = time.perf_counter()
        textindex.build(path, texts, len(texts), fold)
        build_s = time.perf_counter() - t0
        memory = KeywordIndex(texts)
        indexed = KeywordIndex(texts, text_index=textindex.TextIndex(path, len(texts)))
        emit(kind="regex_index_setup", folder=str(folder), rows=len(texts), index_build_s=round(build_s, 1),
             tree=str(Path.cwd()))
        missed = refused = agreed = 0
        for pattern in a.pattern or PATTERNS:
            scan_ms, every = _timed(lambda: _every_text(memory, pattern), a.repeat)
            if isinstance(every, str):
                emit(kind="regex_index", pattern=pattern, engine=every[:80])
                continue
            memory_ms, narrowed = _timed(lambda: find_rows(memory, pattern, is_regex=True), a.repeat)
            index_ms, found = _timed(lambda: find_rows(indexed, pattern, is_regex=True), a.repeat)
            if isinstance(found, str):
                verdict, refused = "refused", refused + 1
            elif set(found.tolist()) == set(every.tolist()):
                verdict, agreed = "same rows", agreed + 1
            else:
                verdict, missed = f"MISSED {len(set(every.tolist()) - set(found.tolist()))} silently", missed + 1
            emit(kind="regex_index", pattern=pattern, engine_hits=len(every), every_text_ms=scan_ms,
                 memory_ms=memory_ms, memory_same=None if isinstance(narrowed, str) else
                 narrowed.tolist() == every.tolist(), index_hits=None if isinstance(found, str) else len(found),
                 verdict=verdict, reason=found[:90] if isinstance(found, str) else "", index_ms=index_ms)
        emit(kind="regex_index_summary", rows=len(texts), patterns=len(a.pattern or PATTERNS), same_rows=agreed,
             refused_with_a_reason=refused, missed_silently=missed)


if __name__ == "__main__":
    main()
