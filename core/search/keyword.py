"""Keyword search: substring or regular expression, case- and diacritics-insensitive by default.

All texts are joined once into one string per variant (folded or not), one row per line, so a
query is a single regex scan (``ockovani`` finds ``očkování``). Regular expressions run under a
time limit (the ``regex`` package's ``timeout``), so a catastrophic pattern cannot hang the app.
Hits are ordered by cosine to the hits' own centre: on-topic hits first, stray ones last, where
they can be excluded in bulk.
"""

from __future__ import annotations

import time
import unicodedata
from typing import Sequence

import numpy as np
import regex

from core.search.base import Method, NotApplicable, Ranked, SearchContext, as_rows

DEFAULT_TIMEOUT_S = 2.0


class KeywordError(ValueError):
    """The query cannot run: invalid pattern, timeout, empty query. Message is user-facing."""


def fold(text: str, case: bool = True, diacritics: bool = True) -> str:
    """Fold case and/or strip diacritics (NFKD, combining marks removed)."""
    if diacritics:
        text = regex.sub(r"\p{Mn}+", "", unicodedata.normalize("NFKD", text))
    if case:
        text = text.lower()
    return text


class KeywordIndex:
    """The corpus texts joined per folding variant; built lazily, never mutated after."""

    def __init__(self, texts: Sequence[str]):
        self._texts = [t.replace("\n", " ").replace("\r", " ") for t in texts]
        self.n = len(self._texts)
        self._variants: dict[tuple[bool, bool], tuple[str, np.ndarray]] = {}
        # Suggest's word matrix (core/search/lexical.py): built on first use, and where it is kept on disk
        self.words_matrix = None
        self.words_file = None

    @property
    def texts(self) -> list[str]:
        return self._texts

    def variant(self, case: bool, diacritics: bool) -> tuple[str, np.ndarray]:
        key = (case, diacritics)
        if key not in self._variants:
            joined = "\n".join(self._texts) + "\n"
            joined = fold(joined, case=case, diacritics=diacritics)
            ends = np.fromiter((m.start() for m in regex.finditer("\n", joined)), dtype=np.int64,
                               count=self.n)
            self._variants[key] = (joined, ends)
        return self._variants[key]

    def text_of(self, row: int, case: bool, diacritics: bool) -> str:
        joined, ends = self.variant(case, diacritics)
        start = 0 if row == 0 else int(ends[row - 1]) + 1
        return joined[start:int(ends[row])]


_ESCAPE_WITH_BRACES = set("pPNxuUg")
_META = set("\\.^$*+?{}[]()|")


def lower_pattern(pattern: str) -> str:
    """Lower-case the literal parts of a regular expression, leaving escapes (\\D, \\S, \\p{Lu}...)
    alone, so that it can run without IGNORECASE over lower-cased text (twice as fast)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            j = i + 2
            if pattern[i + 1] in _ESCAPE_WITH_BRACES and j < len(pattern) and pattern[j] == "{":
                j = pattern.find("}", j) + 1 or len(pattern)
            out.append(pattern[i:j])
            i = j
        else:
            out.append(ch.lower())
            i += 1
    return "".join(out)


def literal_branches(pattern: str) -> list[str] | None:
    """``a|b|c`` made of plain words only: the branches, searched one by one (much faster)."""
    branches = pattern.split("|")
    if len(branches) < 2 or any(not b or set(b) & _META for b in branches):
        return None
    return branches


def compile_query(query: str, is_regex: bool, case_insensitive: bool, diacritics_insensitive: bool):
    if not query or not query.strip():
        raise KeywordError("type a word or a pattern to search for")
    q = fold(query, case=False, diacritics=diacritics_insensitive)
    if case_insensitive:  # the index text is lower-cased: lower the pattern's literals to match
        q = lower_pattern(q) if is_regex else q.lower()
    try:
        return regex.compile(q if is_regex else regex.escape(q), regex.MULTILINE | regex.V0)
    except regex.error as exc:
        raise KeywordError(f"invalid regular expression: {exc}") from None


def find_rows(kindex: KeywordIndex, query: str, *, is_regex: bool = False,
              case_insensitive: bool = True, diacritics_insensitive: bool = True,
              timeout_s: float = DEFAULT_TIMEOUT_S) -> np.ndarray:
    """Sorted rows whose text matches; KeywordError on a bad pattern or when time runs out."""
    if is_regex and (branches := literal_branches(query)):
        found = [find_rows(kindex, b, is_regex=False, case_insensitive=case_insensitive,
                           diacritics_insensitive=diacritics_insensitive, timeout_s=timeout_s)
                 for b in branches]
        return np.unique(np.concatenate(found))
    pattern = compile_query(query, is_regex, case_insensitive, diacritics_insensitive)
    joined, ends = kindex.variant(case_insensitive, diacritics_insensitive)
    deadline = time.monotonic() + timeout_s
    starts, crossed = [], False
    try:
        for m in pattern.finditer(joined, timeout=timeout_s):
            if "\n" in m.group(0):
                crossed = True
                break
            starts.append(m.start())
    except TimeoutError:
        raise KeywordError(f"the pattern took longer than {timeout_s:g} s and was stopped; "
                           "simplify it (nested repeats such as (a+)+ are the usual cause)") from None
    if crossed:  # the pattern can match a line break: test each text on its own
        rows = []
        for r in range(kindex.n):
            left = deadline - time.monotonic()
            try:
                if left <= 0 or pattern.search(kindex.text_of(r, case_insensitive, diacritics_insensitive),
                                               timeout=left):
                    if left <= 0:
                        raise TimeoutError
                    rows.append(r)
            except TimeoutError:
                raise KeywordError(f"the pattern took longer than {timeout_s:g} s and was stopped; "
                                   "simplify it") from None
        return np.array(rows, dtype=np.int64)
    if not starts:
        return np.zeros(0, np.int64)
    return np.unique(np.searchsorted(ends, np.asarray(starts, np.int64)))


def _filter(rows: np.ndarray, frame, date_from=None, date_to=None, authors=None) -> np.ndarray:
    if frame is None or len(rows) == 0:
        return rows
    keep = np.ones(len(rows), dtype=bool)
    if (date_from is not None or date_to is not None) and "date" in frame.columns:
        import pandas as pd

        d = frame["date"].to_numpy()[rows]
        d = pd.to_datetime(d)
        if date_from is not None:
            keep &= np.asarray(d >= pd.Timestamp(date_from))
        if date_to is not None:  # inclusive of the whole end day
            keep &= np.asarray(d < pd.Timestamp(date_to) + pd.Timedelta(days=1))
    if authors and "author" in frame.columns:
        keep &= np.isin(frame["author"].to_numpy()[rows], list(authors))
    return rows[keep]


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = None,
           *, query: str = "", is_regex: bool = False, case_insensitive: bool = True,
           diacritics_insensitive: bool = True, date_from=None, date_to=None,
           authors: Sequence[str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Ranked:
    """All unlabelled hits (or the first k), ordered by cosine to the hits' centre."""
    if ctx.keyword_index is None:
        raise NotApplicable("keyword search needs the corpus texts")
    hits = find_rows(ctx.keyword_index, query, is_regex=is_regex, case_insensitive=case_insensitive,
                     diacritics_insensitive=diacritics_insensitive, timeout_s=timeout_s)
    hits = _filter(hits, ctx.frame, date_from, date_to, authors)
    labelled = np.union1d(as_rows(included), as_rows(excluded))
    fresh = np.setdiff1d(hits, labelled, assume_unique=True)
    info = {"hits": int(len(hits)), "already_labelled": int(len(hits) - len(fresh))}
    if len(fresh) == 0:
        return Ranked(fresh, np.zeros(0, np.float32), "keyword", info)
    x = ctx.vectors
    centre = x[hits].mean(axis=0)
    scores = (x[fresh] @ centre).astype(np.float32)
    order = np.argsort(-scores, kind="stable")
    if k is not None:
        order = order[:k]
    return Ranked(fresh[order], scores[order], "keyword", info)


METHOD = Method("keyword", "KW", "Substring or regular expression; hits come in as included.",
                0, 0, search)
