"""Keyword search: substring or regular expression, case- and diacritics-insensitive by default.

All texts are joined once into one string per variant (folded or not), one row per line, so a
query is a scan of one string (``ockovani`` finds ``očkování``). Every search, plain, alternation
or regular expression, compilation included, runs under one overall deadline:

- the query is refused up front when it is longer than ``MAX_QUERY_CHARS``, nests groups deeper
  than ``MAX_NESTING`` or has more than ``MAX_BRANCHES`` alternatives (the message says which);
- the joined string is scanned in chunks of whole lines; each chunk runs with the time that is
  left (the ``regex`` package's ``timeout``) and with ``concurrent=True``, which releases the
  GIL, so other users' sessions (threads of the same server) keep answering during a long scan;
- a match that runs across a line break is never taken: the texts it spans are tested one by one.

Hits are ordered by cosine to the hits' own centre: on-topic hits first, stray ones last, where
they can be excluded in bulk.
"""

from __future__ import annotations

import os
import re
import threading
import time
import unicodedata
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import regex

from core import vectorstore
from core.rows import TextColumn, in_sorted
from core.search.base import Method, NotApplicable, Ranked, SearchContext, rows_without, unique_rows
from core.search.textindex import WORD, one_line, pattern_tokens, without_link_codes

DEFAULT_TIMEOUT_S = 2.0
MAX_QUERY_CHARS = 1000
MAX_NESTING = 20
MAX_BRANCHES = 100
CHUNK_CHARS = 1 << 20  # ~1M characters a chunk: the deadline is checked at least this often


_SCANNERS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="keyword-scan")


class KeywordError(ValueError):
    """The query cannot run: invalid pattern, timeout, empty query. Message is user-facing."""


def fold(text: str, case: bool = True, diacritics: bool = True) -> str:
    """Fold case and/or strip diacritics (NFKD, combining marks removed). Diacritics kept, a letter and its marks
    are composed (NFC), so ``é`` typed as one character or as ``e`` and a combining accent (text copied from a PDF or
    a Mac's file name) is the same letter."""
    if diacritics:
        text = regex.sub(r"\p{Mn}+", "", unicodedata.normalize("NFKD", text))
    else:
        text = unicodedata.normalize("NFC", text)
    if case:
        text = text.lower()
    return text


FOLD_CHUNK_TEXTS = 4096  # texts folded per piece: the GIL is free between pieces (a few ms each)
# a regex is tried only on the texts holding its plain parts (_candidates) while they are at most this share of all
PREFILTER_SHARE = 0.5
PREBUILD_MAX_CHARS = 200_000_000  # corpora up to this size get every variant built in the background
WORDS_PIECE = 1 << 18  # characters of the joined texts read for the corpus's words between two yields (~10 ms)


def _fold_joined(texts: Sequence[str], case: bool, diacritics: bool) -> tuple[str, np.ndarray]:
    """The texts folded and joined, one per line, with each text's closing line-break position. Built
    piece by piece (one C call over a whole corpus held the GIL for seconds and froze every other
    user's session), with the line ends found by numpy rather than a Python loop."""
    parts, ends, offset = [], [], 0
    for start in range(0, len(texts), FOLD_CHUNK_TEXTS):
        piece = without_link_codes("\n".join(texts[start:start + FOLD_CHUNK_TEXTS]) + "\n")
        piece = fold(piece, case=case, diacritics=diacritics)
        codes = np.frombuffer(piece.encode("utf-32-le"), dtype=np.uint32)
        ends.append(np.flatnonzero(codes == 10) + offset)
        parts.append(piece)
        offset += len(piece)
        time.sleep(0)  # let the other threads run between pieces
    joined = "".join(parts)
    return joined, (np.concatenate(ends).astype(np.int64) if ends else np.zeros(0, np.int64))


class KeywordIndex:
    """The corpus texts joined per folding variant.

    The default variant (case- and diacritics-folded) is built at construction; in a background thread right
    after, the set of its words (:attr:`words`, for Every form's look-up of the forms the corpus holds), then the
    three other variants (Match case, Match diacritics), piece by piece so that other users' requests keep
    answering; a variant is built on first use if that comes first. Each is built once, under its own lock.
    Nothing else changes after construction."""

    def __init__(self, texts: Sequence[str], prebuild: bool | None = None, text_index=None):
        self._variants: dict[tuple[bool, bool], tuple[str, np.ndarray]] = {}
        self.words: set[str] | None = None  # the folded texts' whole words, once built in the background
        self._locks = {key: threading.Lock() for key in ((True, True), (False, True), (True, False), (False, False))}
        # a large corpus's on-disk index (core/search/textindex.py): then nothing is joined in memory, and
        # the texts (a core.rows.TextColumn there) are read only for the candidates a search tests
        self.text_index = text_index
        self.n = len(texts)
        if text_index is not None:
            self._texts = texts if isinstance(texts, TextColumn) else TextColumn(pd.Series(list(texts), dtype="str"))
            return
        self._texts = [one_line(t) for t in texts]
        self.variant(True, True)
        if prebuild is None:
            prebuild = sum(len(t) for t in self._texts) <= PREBUILD_MAX_CHARS
        if prebuild:
            threading.Thread(target=self._prebuild, name="keyword-variants", daemon=True).start()

    def _prebuild(self) -> None:
        self.build_words()
        for key in ((False, True), (True, False), (False, False)):
            self.variant(*key)

    def build_words(self) -> None:
        """:attr:`words`, read from the folded texts a piece at a time, each a word as the on-disk index reads it
        (300,000 tweets: ~1.3 s, 148,000 words, ~20 MB); set once whole, never changed after."""
        joined, _ends = self.variant(True, True)
        words, start = set(), 0
        while start < len(joined):
            end = joined.find("\n", start + WORDS_PIECE)
            end = len(joined) if end < 0 else end
            words.update(WORD.findall(joined, start, end))  # the words as the on-disk index reads them
            start = end
            time.sleep(0)
        self.words = words

    @property
    def texts(self) -> list[str]:
        return self._texts

    def variant(self, case: bool, diacritics: bool) -> tuple[str, np.ndarray]:
        """(joined texts, position of each text's closing line break)."""
        key = (case, diacritics)
        found = self._variants.get(key)
        if found is None:
            with self._locks[key]:
                found = self._variants.get(key)
                if found is None:
                    found = self._variants[key] = _fold_joined(self._texts, case, diacritics)
        return found

    def text_of(self, row: int, case: bool, diacritics: bool) -> str:
        joined, ends = self.variant(case, diacritics)
        start = 0 if row == 0 else int(ends[row - 1]) + 1
        return joined[start:int(ends[row])]


# a large corpus's index of what its quotes quote, built at import: a folder beside the corpus holding an index as
# core.search.textindex writes one (its files have fixed names) and the corpus row of each text it indexes
QUOTES = "quotes"
QUOTES_ROWS = "rows.npy"


def quoting(quoted: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """(the rows of ``quoted``, a corpus's column core.ingest.QUOTED, that quote a tweet; what each quotes)."""
    quoted = quoted.astype("string")
    there = (quoted.str.len().fillna(0) > 0).to_numpy(dtype=bool)  # no Python string for a text quoting none
    return np.flatnonzero(there).astype(np.int64), quoted[there].reset_index(drop=True)


class QuoteIndex:
    """What a corpus's quotes quote (the column core.ingest.QUOTED, "@name: text"), for the keyword search's *quoted
    tweets too*: ``rows``, the corpus rows that quote, and ``index``, a :class:`KeywordIndex` of what each quotes: in
    memory, or for a large corpus through the index built at import (``folder``, the corpus's :data:`QUOTES`; 60,000
    quotes took 45 MB in memory, 2M would take ~1.5 GB)."""

    def __init__(self, quoted: pd.Series, folder: Path | None = None) -> None:
        from core.search import textindex
        from core.search.textindex import TextIndex

        if folder is None:
            self.rows, texts = quoting(quoted)
            self.index = KeywordIndex(texts.tolist())
            return
        self.rows = np.load(Path(folder) / QUOTES_ROWS)
        texts = TextColumn(quoted.astype("string").take(self.rows).reset_index(drop=True))
        self.index = KeywordIndex(texts, text_index=TextIndex(Path(folder) / textindex.FILE, len(self.rows)))

    def find(self, query: str, is_regex: bool = False, case_insensitive: bool = True,
             diacritics_insensitive: bool = True, word_forms: str | None = None,
             timeout_s: float = DEFAULT_TIMEOUT_S) -> np.ndarray:
        """Sorted corpus rows of the quotes whose quoted tweet matches, as :func:`find_rows` and (with
        ``word_forms``, a plain query) :func:`forms_rows` match a text."""
        return self.rows[matches(self.index, query, is_regex, case_insensitive, diacritics_insensitive, word_forms,
                                 timeout_s)]


def matches(kindex: KeywordIndex, query: str, is_regex: bool = False, case_insensitive: bool = True,
            diacritics_insensitive: bool = True, word_forms: str | None = None,
            timeout_s: float = DEFAULT_TIMEOUT_S) -> np.ndarray:
    """Sorted rows of ``kindex`` that match ``query`` as :func:`find_rows` finds them, and with ``word_forms`` (a
    language; a plain query) those holding another form of its words too (:func:`forms_rows`)."""
    found = find_rows(kindex, query, is_regex=is_regex, case_insensitive=case_insensitive,
                      diacritics_insensitive=diacritics_insensitive, timeout_s=timeout_s)
    if word_forms and not is_regex:
        found = unique_rows(found, forms_rows(kindex, query, word_forms, case_insensitive, diacritics_insensitive,
                                              timeout_s)[0])
    return found


_META = set("\\.^$*+?{}[]()|")
# The syntax at the start of a group that names or sets something, not text to match: a named group (?P<Name>,
# (?<Name>, a back-reference or call to one (?P=Name), (?P>Name), (?&Name), a condition on one (?(Name),
# a comment (?#...) and inline flags (?i), (?V1), (?s-i:. Look-arounds (?<= (?<! (?= (?! are not here: what
# follows them is text.
_GROUP_SYNTAX = re.compile(r"\(\?(?:P?<(?![=!])\w+>|P[=>]\w+\)|&\w+\)|\(\w+\)|#[^)]*\)|"
                           r"[a-zA-Z]*(?:V[01])?[a-zA-Z]*(?:-[a-zA-Z]+)?[:)])")
# Unicode properties that test letter case: under case folding they would silently match nothing
_CASE_PROPERTIES = regex.compile(r"\\[pP]\{\s*\^?\s*(?:lu|ll|lt|upper|lower|title|uppercase|lowercase|"
                                 r"uppercase_?letter|lowercase_?letter|titlecase_?letter|"
                                 r"(?:gc|general_?category)\s*[=:]\s*(?:lu|ll|lt))\s*\}", regex.IGNORECASE)


def lower_pattern(pattern: str) -> str:
    """Lower-case the literal parts of a regular expression, leaving escapes (\\D, \\S, \\p{L}...) and the
    syntax of groups (names, flags) alone, so that it can run without IGNORECASE over lower-cased text
    (twice as fast).

    Classes that test letter case (``\\p{Lu}``, ``\\p{Ll}``...) cannot work on folded text: such a
    pattern is refused with a message rather than silently matching nothing."""
    if _CASE_PROPERTIES.search(pattern):
        raise KeywordError("this pattern tests letter case (\\p{Lu}, \\p{Ll}, ...), which a case-insensitive "
                           "search cannot see: tick 'Match case' to use it")
    out, skip = [], 0  # skip: the end of a group's head already written
    for i, j, _inside in pattern_tokens(pattern):
        if i < skip:
            continue
        piece = pattern[i:j]
        if piece[0] == "\\" and len(piece) > 1:  # an escape: \D is not \d, \g<Name> is as the group is named
            out.append(piece)
        elif piece == "(" and (head := _GROUP_SYNTAX.match(pattern, i)):  # names and flags as written
            out.append(head.group(0))
            skip = head.end()
        else:
            out.append(piece.lower())
    return "".join(out)


def per_text_anchors(pattern: str) -> str:
    """``\\A`` and ``\\Z`` as ``^`` and ``$``: each text is one line of what a pattern is run over (the corpus's texts
    joined), so a text's start and end are a line's, where the string's would be only the first and the last
    text's. Escaped backslashes and character classes are left as they are."""
    return "".join({"\\A": "^", "\\Z": "$"}.get(pattern[i:j], pattern[i:j]) if not inside else pattern[i:j]
                   for i, j, inside in pattern_tokens(pattern))


def _only_lookaheads(pattern: str) -> int | None:
    """How many positive look-aheads ``pattern`` has where it is look-aheads only, each led by ``.*`` (None where it is
    not): words in any order, ``(?=.*babiš)(?=.*vlád)``, and words left out, ``(?=.*babiš)(?!.*vlád)``, or only left
    out, ``(?!.*covid)`` (0: it finds nearly every text). Such a pattern is anchored at the text's start. A positive one
    matches a text (one line) where it matches anywhere; tried at every character, each look-ahead read the rest of the
    text again, and ``(?=.*\\bthe\\b)(?=.*\\bof\\b)`` took 27-38 s over 300,000 tweets, under 1 s anchored. A negative
    one, tried at every character, also matched after the last word it leaves out: "vláda a Babiš" for Babiš without
    vlád (and ``(?=.*\\bthe\\b)(?!.*\\bof\\b)`` took over 60 s, 1.5-1.9 s anchored)."""
    depth = groups = positive = 0
    for i, j, inside in pattern_tokens(pattern):
        piece = pattern[i:j]
        if inside:  # a member of a character class: [(] opens no group
            continue
        if depth == 0:
            if piece != "(" or not pattern.startswith(("(?=.*", "(?!.*"), i):
                return None
            groups += 1
            positive += pattern.startswith("(?=", i)
        depth += (piece == "(") - (piece == ")")
    return positive if groups > 0 and depth == 0 else None


def literal_branches(pattern: str) -> list[str] | None:
    """``a|b|c`` made of plain words only: the branches, searched one by one (much faster)."""
    branches = pattern.split("|")
    if len(branches) < 2 or any(not b or set(b) & _META for b in branches):
        return None
    return branches


def check_limits(query: str, is_regex: bool) -> None:
    """Refuse, with the limit named, a query too long, too deeply nested or with too many branches."""
    if not query or not query.strip():
        raise KeywordError("type a word or a pattern to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise KeywordError(f"the query has {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if not is_regex:
        return
    _, deepest = _groups(query)
    if deepest > MAX_NESTING:
        raise KeywordError(f"the pattern nests groups {deepest} deep; the limit is {MAX_NESTING}")
    branches = query.count("|") + 1
    if branches > MAX_BRANCHES:
        raise KeywordError(f"the pattern has {branches} alternatives; the limit is {MAX_BRANCHES} "
                           "(split the search, or use a shorter list)")


def _groups(q: str) -> tuple[list[tuple[int, int]], int]:
    """The groups of pattern ``q`` as (where it opens, where it closes), in the order they close, and how deep they
    nest; escaped and bracketed parentheses are no group."""
    groups, opened, deepest = [], [], 0
    escaped = in_class = False
    for at, ch in enumerate(q):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            opened.append(at)
            deepest = max(deepest, len(opened))
        elif ch == ")" and opened:
            groups.append((opened.pop(), at))
    return groups, deepest


def fold_literal(text: str, case_insensitive: bool, diacritics_insensitive: bool) -> str:
    """A plain query folded like the index it is looked up in (its line breaks are spaces there)."""
    return fold(one_line(text), case=case_insensitive, diacritics=diacritics_insensitive)


def compile_query(query: str, is_regex: bool, case_insensitive: bool, diacritics_insensitive: bool):
    check_limits(query, is_regex)
    lookaheads = None
    if not is_regex:
        q = regex.escape(fold_literal(query, case_insensitive, diacritics_insensitive))
    else:  # the index text is lower-cased: lower the pattern's literals to match
        q = fold(query, case=False, diacritics=diacritics_insensitive)
        q = per_text_anchors(lower_pattern(q) if case_insensitive else q)
        if (lookaheads := _only_lookaheads(q)) is not None:  # words in any order, or left out: at each text's start
            q = "^" + q
    try:
        pattern = regex.compile(q, regex.MULTILINE | regex.V0)
    except (regex.error, ValueError) as exc:  # ValueError: flags that contradict ours, such as (?V1)
        raise KeywordError(f"invalid regular expression: {exc}") from None
    except (RecursionError, OverflowError, MemoryError):
        raise KeywordError("the pattern is too complex to compile; simplify it") from None
    if is_regex and (group := repeated_empty_fuzzy_group(q)):
        raise KeywordError(f"the group {group} repeats without end and may also match nothing, with a fuzzy limit "
                           "in it or around it: the engine would try it over and over, taking hundreds of MB before "
                           "it gives up. Take out the empty branch or the repeat, or give the group a part that must "
                           "match")
    if is_regex and _matches_nothing_at_all(pattern):
        if lookaheads == 0:  # (?!.*covid): every text without the word, nearly the whole corpus
            raise KeywordError("look-aheads that only leave words out ((?!.*covid)) find nearly every text, each "
                               "one without those words; name a word the texts must hold too: "
                               "(?=.*vlád)(?!.*covid)")
        raise KeywordError("the pattern also matches nothing at all, so it finds every text: an empty branch "
                           "(covid| or a||b), a pattern whose every part is optional (x*), or a fuzzy part with no "
                           "limit or one as long as the word ((?:covid){e}, (?:ne){e<=2}) does that; take it out")
    return pattern


_REPEAT = regex.compile(r"[*+]|\{\d*,\}")  # a repeat without end: +, *, {2,} ({0,50} was measured harmless)
# {e<=1}, {e}, {i<=1,d<=1}, {1<=e<=2}, {e<=1:[a-z]}; not \p{Latin}, \N{LATIN SMALL LETTER E}
_FUZZY = regex.compile(r"(?<!\\[pPN])\{[^{}]*[eisd][^{}]*\}")


def repeated_empty_fuzzy_group(q: str) -> str | None:
    """The first group of pattern ``q`` that repeats without end (``+``, ``*``, ``{2,}``), can also match the empty
    text, and holds a fuzzy limit or lies within a group that has one, such as ``(?:(?:ne){s<=1}|)+`` or
    ``(?:x(?:ab|)*){e<=1}``; or None. Each repeat of such a group may match nothing at another cost of errors: the
    regex engine's backtracking stack then grows to 600-800 MB on one tweet within a second or two before it raises
    MemoryError (bench/RESULTS.md). Such a group is refused before it runs; a fuzzy group that must match something
    (``(?:(?:ne){s<=1}x)+``) or repeats a bounded number of times runs."""
    groups, _ = _groups(q)
    fuzzy = [(start, end) for start, end in groups if _FUZZY.match(q, end + 1)]  # a limit on a whole group
    for start, end in groups:
        group = q[start:end + 1]
        if group.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?#")) or not _REPEAT.match(q, end + 1) or not (
                _FUZZY.search(group) or any(s < start and end < e for s, e in fuzzy)):
            continue
        try:
            if regex.compile(group, regex.V0).fullmatch("", timeout=0.2) is not None:
                return group
        except (regex.error, ValueError, TimeoutError, MemoryError, RecursionError, OverflowError):
            continue  # a group that cannot stand alone (a reference to another): left to the search's limits
    return None


def _matches_nothing_at_all(pattern) -> bool:
    """Whether ``pattern`` matches the empty text: then it matches every text (texts are never empty), which a
    typed ``covid|`` did, with every text of the corpus brought in as a hit."""
    try:
        return pattern.search("", timeout=0.2) is not None
    except (TimeoutError, MemoryError, RecursionError):
        return False


class _Deadline:
    def __init__(self, seconds: float, is_regex: bool = True):
        self.seconds, self.is_regex = seconds, is_regex
        self.at = time.monotonic() + seconds

    def expired(self) -> KeywordError:
        if self.is_regex:
            return KeywordError(f"the search took longer than {self.seconds:g} s and was stopped; simplify "
                                "the pattern (nested repeats such as (a+)+ are the usual cause) or narrow it")
        # a word or phrase has no pattern to blame: on a large corpus the first searches after the server
        # starts read its keyword index from disk (a 10M corpus's first "fake news" in the browser)
        return KeywordError(f"the search took longer than {self.seconds:g} s and was stopped: the first searches "
                            "after the server opens a large corpus read its index from disk, so try again in a "
                            "moment; a longer or rarer word also answers sooner")

    @staticmethod
    def too_big() -> KeywordError:
        """The regex engine's MemoryError: its backtracking stack outgrew what it may take (hundreds of MB), which
        a fuzzy limit on a repeated group reaches within a second on 3,000 tweets."""
        return KeywordError("the pattern needed more memory than a search may take and was stopped; simplify it (a "
                            "fuzzy limit such as {e<=1} on a group that repeats is the usual cause) or narrow it")

    def left(self) -> float:
        """Seconds left; the deadline's KeywordError once there are none."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left


def _chunks(ends: np.ndarray, size: int = CHUNK_CHARS):
    """(start, end) character ranges of whole lines, about ``size`` characters each."""
    if not len(ends):
        return
    cuts = np.unique(np.searchsorted(ends, np.arange(size, int(ends[-1]) + size, size)))
    start = 0
    for c in cuts:
        stop = int(ends[min(int(c), len(ends) - 1)]) + 1
        if stop > start:
            yield start, stop
            start = stop


# A look-around, (?<=, (?<!, (?= or (?!, looks outside its match: in the joined texts it may see the line break
# between two texts, where a text on its own ends. a(?=\s) took "ma" followed by the next text for "ma ", (?<=a\s)x
# took "pa" and "xa" for "pa xa", and a(?!\s) missed "ma". A look-around with something that can match a line
# break tries each text on its own: \s, \W, \D, a property (\p{Cc}), a negated class ([^a-z]), an escape that
# writes one (\n, \x0a, \012, \v, \R, \X, \N{...}, a range from \t to \r), a POSIX class, or a flag (?s) that
# lets . match it. Where nothing can (trump(?!\w), (?=.*babiš), \bobama(?!care)), the joined texts answer as each
# text would, and three times as fast (a look-around cannot see past a line break it cannot match).
_LOOKAROUND = re.compile(r"\(\?<?[=!]")
_SEES_A_BREAK = re.compile(r"\\[sWDpPnxvRXNuUcrtfae0-9]|\[\^|\[\[:|\(\?[a-zA-Z]*s|\n")


def _each_text(pattern: str) -> bool:
    """Whether ``pattern`` has a look-around that may see the line break between two joined texts."""
    return bool(_LOOKAROUND.search(pattern) and _SEES_A_BREAK.search(pattern))


def _scan(pattern, joined: str, ends: np.ndarray, deadline: _Deadline, text_of) -> np.ndarray:
    """Lines of ``joined`` (line i ends at ``ends[i]``) that ``pattern`` matches, sorted; ``text_of(i)``
    gives line i on its own, to test a line that a match running across a line break touched."""
    if _each_text(pattern.pattern):
        return _scan_each(pattern, range(len(ends)), deadline, text_of)
    starts: list[int] = []
    recheck: set[int] = set()
    try:
        for lo, hi in _chunks(ends):
            for m in pattern.finditer(joined, lo, hi, timeout=deadline.left(), concurrent=True):
                if "\n" in m.group(0):  # ran across texts: test the texts it spans on their own
                    first, last = np.searchsorted(ends, [m.start(), max(m.start(), m.end() - 1)])
                    recheck.update(range(int(first), int(min(last, len(ends) - 1)) + 1))
                else:
                    starts.append(m.start())
    except TimeoutError:
        raise deadline.expired() from None
    except MemoryError:
        raise deadline.too_big() from None
    found = np.searchsorted(ends, np.asarray(starts, np.int64))
    rows = set(found[found < len(ends)].tolist())  # an empty match after the last line break is no text's
    rows.update(_scan_each(pattern, sorted(recheck - rows), deadline, text_of).tolist())
    return np.array(sorted(rows), dtype=np.int64)


def _scan_each(pattern, rows, deadline: _Deadline, text_of) -> np.ndarray:
    """The lines ``text_of(r)`` of ``rows`` that ``pattern`` matches, each tried on its own (a pattern with a
    look-around that may see a line break, _each_text; the texts a match ran across)."""
    rows, found = list(rows), []
    try:
        for lo in range(0, len(rows), 2048):
            left = deadline.left()
            found.extend(r for r in rows[lo:lo + 2048] if pattern.search(text_of(r), timeout=left, concurrent=True))
    except TimeoutError:
        raise deadline.expired() from None
    except MemoryError:
        raise deadline.too_big() from None
    return np.asarray(found, dtype=np.int64)


def _find_literal(needle: str, joined: str, ends: np.ndarray, deadline: _Deadline,
                  most: int | None = None) -> np.ndarray | None:
    """Every text holding ``needle``, sorted (None once more than ``most`` do). Each match also takes the rest of
    its line (``[^\\n]*``), so a frequent literal (``e``) costs one match per text that holds it, not one per
    occurrence, and the scan runs in the C engine (a literal prefix, no backtracking); the deadline is checked as
    it goes and once more at the end."""
    starts = []
    for i, m in enumerate(re.finditer(re.escape(needle) + "[^\n]*", joined)):
        starts.append(m.start())
        if i % 4096 == 4095:
            deadline.left()
            if most is not None and i >= most:
                return None
    deadline.left()
    return np.searchsorted(ends, np.asarray(starts, np.int64)).astype(np.int64)


def find_rows(kindex: KeywordIndex, query: str, *, is_regex: bool = False,
              case_insensitive: bool = True, diacritics_insensitive: bool = True,
              timeout_s: float = DEFAULT_TIMEOUT_S) -> np.ndarray:
    """Sorted rows whose text matches; KeywordError on a bad or oversized pattern, or when the
    deadline (``timeout_s`` for the whole search) passes."""
    deadline = _Deadline(timeout_s, is_regex)
    if kindex.text_index is not None:
        return _find_indexed(kindex, query, is_regex, case_insensitive, diacritics_insensitive, deadline)
    joined, ends = kindex.variant(case_insensitive, diacritics_insensitive)
    branches = literal_branches(query) if is_regex else [query]
    if branches is not None:
        check_limits(query, is_regex)
        found = [_find_literal(fold_literal(b, case_insensitive, diacritics_insensitive), joined, ends, deadline)
                 for b in branches if deadline.left()]
        rows = unique_rows(*found)
        deadline.left()
        return rows
    pattern = compile_query(query, True, case_insensitive, diacritics_insensitive)  # checks the limits
    rows = _candidates(kindex, pattern, deadline)
    if rows is None:
        text_of = lambda r: kindex.text_of(r, case_insensitive, diacritics_insensitive)  # noqa: E731
    else:  # only the texts holding the pattern's plain parts are scanned, joined as the whole corpus is
        starts = np.r_[0, ends[:-1] + 1]
        parts = [joined[starts[r]:ends[r]] for r in rows.tolist()]
        joined, ends = "\n".join(parts), np.cumsum([len(t) + 1 for t in parts], dtype=np.int64) - 1
        text_of = parts.__getitem__
    # The scan runs in a worker thread and the caller waits at most until the deadline: the regex
    # engine checks its own timeout only every so many steps (late by up to a second on a busy
    # machine), so the answer comes on time and the worker stops shortly after by itself.
    job = _SCANNERS.submit(_scan, pattern, joined, ends, deadline, text_of)
    try:
        found = job.result(timeout=max(0.0, deadline.at - time.monotonic()))
    except FutureTimeout:
        job.cancel()
        raise deadline.expired() from None
    return found if rows is None else rows[found]


def _candidates(kindex: KeywordIndex, pattern, deadline: _Deadline) -> np.ndarray | None:
    """For a pattern that does not start with plain text, the rows whose folded texts hold, for some kind of match,
    every plain part that kind of match contains (the keyword index's plan, textindex.literal_plan, two letters
    too), sorted; None where it starts with plain text (the regex engine finds it as fast), has no such part, or the
    parts are in more than PREFILTER_SHARE of the texts (scanning every text is then as quick). ``\\w+gate`` scans the
    ~1,000 of 300,000 tweets that hold ``gate``, not all of them, where each letter of each word starts a try;
    ``(?:putin){e<=1}`` the 11% holding put, tin, or pu and in (a fuzzy match keeps one of each split whole)."""
    from core.search import textindex

    if textindex.starts_plain(pattern.pattern) and not _each_text(pattern.pattern):  # each text: _scan_each
        return None
    plan = textindex.literal_plan(pattern.pattern, short_words=True)
    if not plan or not all(plan):
        return None
    joined, ends = kindex.variant(True, True)  # every variant's text, folded, is this one's
    most = int(PREFILTER_SHARE * kindex.n)
    rows = np.zeros(0, np.int64)
    for runs in plan:
        # the longest part found in a pass over every text (an alternation of the needles in one pass took 1.2-2x
        # as long: no literal prefix to look for); the others tested on the texts holding it
        longest, *rest = sorted(dict.fromkeys(fold(r) for r in runs), key=len, reverse=True)
        held = _find_literal(longest, joined, ends, deadline, most)
        if held is None:
            return None
        if rest and len(held):
            held = held[np.fromiter((all(n in kindex.text_of(r, True, True) for n in rest) for r in held.tolist()),
                                    bool, len(held))]
            deadline.left()
        rows = unique_rows(rows, held)
        if len(rows) > most:
            return None
    return rows


def _find_indexed(kindex: KeywordIndex, query: str, is_regex: bool, case: bool, diacritics: bool,
                  deadline: _Deadline) -> np.ndarray:
    """find_rows through the corpus's trigram index: candidates from the index (folded texts), each
    tested with the query as the in-memory engine would test it; the same rows."""
    from core.search import textindex

    tix = kindex.text_index
    default = case and diacritics  # the index holds exactly this variant: its texts need no folding here

    def test(rows: np.ndarray, hit) -> np.ndarray:
        keep = []
        for s in range(0, len(rows), 2048):
            part = rows[s:s + 2048]
            for r, text in zip(part, without_link_codes([one_line(t) for t in kindex.texts.take(part)])):
                if hit(fold(text, case=case, diacritics=diacritics)):
                    keep.append(int(r))
            deadline.left()
        return np.asarray(keep, np.int64)

    branches = literal_branches(query) if is_regex else [query]
    if branches is not None:
        check_limits(query, is_regex)
        found = []
        for b in branches:
            needle = fold_literal(b, case, diacritics)
            key = fold(needle)
            if len(key) < textindex.MIN_WORD_CHARS:
                raise KeywordError(textindex.too_short(b))
            rows = tix.word_rows(key, deadline)
            if rows is None and len(key) < textindex.MIN_CHARS:  # the trigrams cannot look it up
                raise KeywordError(textindex.too_short(b))
            if rows is None:  # not a word-characters-only key, or an index without word postings
                rows = tix.containing([[key]], deadline)
            found.append(rows if default else test(rows, lambda text, n=needle: n in text))
        deadline.left()
        return unique_rows(*found)
    pattern = compile_query(query, True, case, diacritics)  # checks the limits
    short = tix.looks_up_short_words()  # \bEU\b: two letters looked up in the word postings
    plan = [[k for k in (fold(r) for r in needles) if textindex.can_look_up(k, short)]
            for needles in textindex.literal_plan(pattern.pattern, short)]
    if not plan or not all(plan):
        raise KeywordError(textindex.not_narrowed(pattern.pattern))
    try:
        if default:  # the candidates' folded texts joined, one per line, and scanned a block at a time (C, not a call a text)
            found = []
            for rows, joined, ends in tix.joined(plan, deadline):
                if len(rows):
                    starts = np.r_[0, ends[:-1] + 1]
                    found.append(rows[_scan(pattern, joined, ends, deadline,
                                            lambda i, j=joined, a=starts, b=ends: j[a[i]:b[i]])])
            return np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)
        return test(tix.candidates(plan, deadline),
                    lambda text: pattern.search(text, timeout=deadline.left(), concurrent=True))
    except TimeoutError:
        raise deadline.expired() from None
    except MemoryError:
        raise deadline.too_big() from None


def first_hits(kindex: KeywordIndex, query: str, limit: int = 20) -> list[int]:
    """The first ``limit`` rows whose text holds ``query`` (case and diacritics ignored); [] on a query
    the keyword search refuses (an anchor picker's list, not an error)."""
    try:
        return [int(r) for r in find_rows(kindex, query)[:limit]]
    except KeywordError:
        return []


def _filter(rows: np.ndarray, frame, date_from=None, date_to=None, authors=None, zone: str = "UTC") -> np.ndarray:
    """The rows dated from the day ``date_from`` to the day ``date_to`` (both whole, days of ``zone``)
    and by one of ``authors``."""
    if frame is None or len(rows) == 0:
        return rows
    keep = np.ones(len(rows), dtype=bool)
    if (date_from is not None or date_to is not None) and "date" in frame.columns:
        import pandas as pd

        from core.timezones import day_start_utc

        d = frame["date"].to_numpy()[rows]
        d = pd.to_datetime(d)
        if date_from is not None:
            keep &= np.asarray(d >= day_start_utc(date_from, zone))
        if date_to is not None:  # inclusive of the whole end day
            keep &= np.asarray(d < day_start_utc(pd.Timestamp(date_to) + pd.Timedelta(days=1), zone))
    if authors and "author" in frame.columns:
        keep &= frame["author"].take(rows).isin(list(authors)).to_numpy()  # the hits' authors, not all rows
    return rows[keep]


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = None,
           *, query: str = "", is_regex: bool = False, case_insensitive: bool = True,
           diacritics_insensitive: bool = True, date_from=None, date_to=None,
           authors: Sequence[str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
           word_forms: str | None = None, quotes: bool = False) -> Ranked:
    """All unlabelled hits (or the first k), ordered by cosine to the hits' centre; ``date_from`` and
    ``date_to`` are days of the corpus's time zone (``ctx.timezone``). ``word_forms``, a language code: a
    plain query's words are also found in their other forms, as whole words (core.wordforms: ``volby``
    finds ``voleb``); ``info`` then names the forms added and how many hits only they found. ``quotes``: a quote
    is also a hit where the tweet it quotes matches (its own words are often only "Přesně tak."; dates and authors
    are the quote's own); ``info["by_quote"]`` counts the hits only that found. ``info["unlabelled_hits"]``: every
    unlabelled hit's row, also past k (what a page of hits leaves for More hits: core.annotate.ask)."""
    if ctx.keyword_index is None:
        raise NotApplicable("keyword search needs the corpus texts")
    quoted = ctx.quotes if quotes else None  # read once per corpus, before the search's deadline starts
    started = time.monotonic()
    # the server's background read of a large store waits meanwhile: the index's first reads after the
    # corpus opens come from the same disk, and the search has a deadline (a 10M corpus's first phrase
    # searches in the browser ran past it three times in a row while the store was being read)
    with vectorstore.foreground(ctx.vectors):
        hits = find_rows(ctx.keyword_index, query, is_regex=is_regex, case_insensitive=case_insensitive,
                         diacritics_insensitive=diacritics_insensitive, timeout_s=timeout_s)
        more, extra, added = (forms_rows(ctx.keyword_index, query, word_forms, case_insensitive,
                                         diacritics_insensitive, timeout_s)
                              if word_forms and not is_regex else (None, None, []))
    hits = _filter(hits, ctx.frame, date_from, date_to, authors, ctx.timezone)
    info: dict = {}
    if extra:
        more = rows_without(_filter(more, ctx.frame, date_from, date_to, authors, ctx.timezone), hits)
        info.update(forms=_forms_found(ctx.keyword_index, more, extra, added + query.split(), case_insensitive,
                                       diacritics_insensitive), by_forms=int(len(more)))
        hits = unique_rows(hits, more)
    if is_regex and len(hits):
        from core.search import textindex

        if textindex.has_fuzzy(query):  # the spellings fuzzy matching found, for the message
            info["spellings"] = _spellings_found(ctx.keyword_index, hits, query, case_insensitive,
                                                 diacritics_insensitive)
    by_quote = np.zeros(0, np.int64)  # the hits only what they quote found
    if quoted is not None:  # the same query over what the quotes quote, in the time the search has left
        by_quote = quoted.find(query, is_regex, case_insensitive, diacritics_insensitive, word_forms,
                               max(0.05, timeout_s - (time.monotonic() - started)))
        by_quote = rows_without(_filter(by_quote, ctx.frame, date_from, date_to, authors, ctx.timezone), hits)
        info["by_quote"] = int(len(by_quote))
        hits = unique_rows(hits, by_quote)
    fresh = rows_without(hits, unique_rows(included, excluded))
    info.update(hits=int(len(hits)), already_labelled=int(len(hits) - len(fresh)), unlabelled_hits=fresh)
    if not len(hits) and not is_regex and looks_like_pattern(query):
        info["as_pattern"] = _hits_as_pattern(ctx, query, case_insensitive, diacritics_insensitive, date_from,
                                              date_to, authors, timeout_s)
    if len(fresh) == 0:
        return Ranked(fresh, np.zeros(0, np.float32), "keyword", info)
    # the centre of the hits' own words: a quote found only by what it quotes would pull it towards "Přesně tak."
    centre = ctx.index.mean_of(rows_without(hits, by_quote) if 0 < len(by_quote) < len(hits) else hits)
    scores = ctx.index.scores_of(fresh, centre)
    order = np.argsort(-scores, kind="stable")
    if len(by_quote):  # a quote's own words ("Přesně tak.") say nothing of its place among the hits
        order = spread(order, in_sorted(fresh[order], by_quote))
    if k is not None:
        order = order[:k]
    return Ranked(fresh[order], scores[order], "keyword", info)


def spread(order: np.ndarray, some: np.ndarray) -> np.ndarray:
    """``order`` with its entries where ``some`` (a mask over ``order``) spread evenly through it, each part in its own
    order: the quotes a keyword found only by the tweet they quote, ranked by their own words' vectors, would all
    come last, after every page the annotator reviews, so each page of hits takes its share of them instead."""
    placed, rest = order[some], order[~some]
    if not len(placed) or not len(rest):
        return order
    at = ((np.arange(len(placed)) + 0.5) * len(order) / len(placed)).astype(np.int64)
    out = np.empty_like(order)
    where = np.zeros(len(order), bool)
    where[at] = True
    out[where], out[~where] = placed, rest
    return out


def forms_rows(kindex: KeywordIndex, query: str, lang: str, case_insensitive: bool = True,
               diacritics_insensitive: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S):
    """(sorted rows holding another form of the plain query's words as whole words, the pattern that found them,
    the forms searched: core.wordforms); (empty, None, []) where the words have no other form. The first call for
    a language reads its dictionary (~1-2 s), before the search's own deadline starts."""
    from core import wordforms

    # a phrase whose forms are too many for one pattern keeps those the corpus holds
    extra, added = wordforms.pattern(query, lang, case_insensitive, diacritics_insensitive,
                                     lambda forms: corpus_words(kindex, forms, _Deadline(timeout_s, False)))
    if not extra:
        return np.zeros(0, np.int64), None, []
    return find_rows(kindex, extra, is_regex=True, case_insensitive=case_insensitive,
                     diacritics_insensitive=diacritics_insensitive, timeout_s=timeout_s), extra, added


def corpus_words(kindex: KeywordIndex, words, deadline: _Deadline) -> set[str]:
    """Those of ``words`` (any number) that some text holds as a whole word, folded (case and diacritics): a look-up
    in the corpus's words where they are built (:attr:`KeywordIndex.words`), else one scan of its folded texts per
    leading three letters, or a large corpus's word postings (a text holding the word within another word counts
    there)."""
    from core.search import textindex

    keys = sorted({fold(w) for w in words if w}, key=len, reverse=True)
    if not keys:
        return set()
    if kindex.text_index is not None:
        found = set()
        for key in keys:
            rows = kindex.text_index.word_rows(key, deadline) if len(key) >= textindex.MIN_CHARS else None
            if rows is not None and len(rows):
                found.add(key)
        return found
    if kindex.words is not None and all(WORD.fullmatch(k) for k in keys):  # built: a look-up, not a scan
        return {k for k in keys if k in kindex.words}
    joined, _ends = kindex.variant(True, True)
    # one scan per leading three letters (a phrase's word and its forms share them), each pattern led by the
    # letters its words share, so the engine skips to where they are (a scan of 300,000 tweets for the forms of
    # two words together took 230-360 ms, these 20-70 ms); the words are letters only, so no limit of a typed
    # pattern applies to their alternation
    by_start: dict[str, list[str]] = {}
    for key in keys:
        by_start.setdefault(key[:3], []).append(key)
    patterns = []
    for group in by_start.values():
        lead = os.path.commonprefix(group)
        rest = "|".join(regex.escape(k[len(lead):]) for k in sorted(group, key=len, reverse=True))
        patterns.append(regex.compile(r"\b" + regex.escape(lead) + r"(?:" + rest + r")\b", regex.V0))

    def scan() -> set[str]:
        try:
            return {w for p in patterns for w in p.findall(joined, timeout=deadline.left(), concurrent=True)}
        except TimeoutError:
            raise deadline.expired() from None

    job = _SCANNERS.submit(scan)
    try:
        return job.result(timeout=max(0.0, deadline.at - time.monotonic()))
    except FutureTimeout:
        job.cancel()
        raise deadline.expired() from None


FORMS_SAMPLE = 2000  # texts found only by a keyword's other forms that are read to tell which forms they hold


def _sampled_texts(kindex: KeywordIndex, rows: np.ndarray) -> list[str]:
    """The texts of the first ``FORMS_SAMPLE`` of ``rows`` as a search reads them (one line, links' codes out), for
    naming what a search found in them."""
    part = rows[:FORMS_SAMPLE]
    texts = kindex.texts.take(part) if kindex.text_index is not None else [kindex.texts[int(r)] for r in part]
    return without_link_codes([one_line(t) for t in texts])


def _forms_found(kindex: KeywordIndex, rows: np.ndarray, extra: str, added: list[str], case: bool,
                 diacritics: bool) -> list[str]:
    """The forms (of ``added``, a phrase's words as written) that the texts ``rows`` hold, the most frequent
    first: the first ``FORMS_SAMPLE`` texts are read. Letters only: a phrase that holds anything else (typed, and
    so matched in a text) is not named, since the page writes these names into a message."""
    pattern = compile_query(extra, True, case, diacritics)
    # first the forms with their diacritics as the text writes them: "rozpočtu" and "rozpočtů" read the same folded
    exact = compile_query(extra, True, case, False) if diacritics else None
    written = {fold_literal(f, case, diacritics): f for f in added}
    seen = Counter()
    for text in _sampled_texts(kindex, rows):
        found = {m.group(0) for m in exact.finditer(fold(text, case=case, diacritics=False))} if exact else set()
        if found:
            seen.update(found)
            continue
        for found in {m.group(0) for m in pattern.finditer(fold(text, case=case, diacritics=diacritics))}:
            seen[" ".join(written.get(w, w) for w in found.split(" "))] += 1  # a phrase: its words as written
    return [form for form, _n in seen.most_common() if all(w.isalpha() for w in form.split(" "))]


SPELLINGS_S = 0.3  # at most this long spent naming the spellings a fuzzy search found (a few ms for 2,000 texts)


def _spellings_found(kindex: KeywordIndex, rows: np.ndarray, query: str, case: bool, diacritics: bool
                     ) -> list[str]:
    """The spellings other than the one typed that a fuzzy pattern (``(?:hillary){e<=1}``) matched in the texts
    ``rows`` (the first ``FORMS_SAMPLE`` read; hilary, hillery), the most frequent first: each match with errors,
    found as the regex package's ENHANCEMATCH finds it (without it a match may take a space before the word as
    one of its errors). Letters and spaces only, since the page writes them into a message."""
    plain = compile_query(query, True, case, diacritics)
    pattern = regex.compile(plain.pattern, plain.flags | regex.ENHANCEMATCH)
    seen, until = Counter(), time.monotonic() + SPELLINGS_S
    for text in _sampled_texts(kindex, rows):
        try:
            for m in pattern.finditer(fold(text, case=case, diacritics=diacritics), timeout=SPELLINGS_S):
                if any(m.fuzzy_counts) and 0 < len(m.group(0).strip()) <= 40:
                    seen[m.group(0).strip()] += 1
        except (TimeoutError, MemoryError):  # the names are a courtesy: the search itself has answered
            break
        if time.monotonic() > until:
            break
    return [s for s, _n in seen.most_common() if all(w.isalpha() for w in s.split(" "))]


# Signs of a pattern typed without ticking *Regular expression*: an alternation, a repeat, an escape, a class, a
# group's flag or look-around (``(?:``, ``(?=``, ``(?i)``), a count or fuzzy limit in braces (``{2}``, ``{e<=1}``,
# as the box's help shows), a start or end anchor, ``.+``. A full stop or a question mark alone is not one
# ("why? U.S.").
_PATTERN_SIGNS = re.compile(r"[|*\\\[]|\(\?|\{[^{}]*\}|^\^|\$$|\.\+")


def looks_like_pattern(query: str) -> bool:
    """Whether a plain query (the box unticked) reads like a regular expression."""
    return _PATTERN_SIGNS.search(query.strip()) is not None


def _hits_as_pattern(ctx: SearchContext, query: str, case: bool, diacritics: bool, date_from, date_to, authors,
                     timeout_s: float) -> int | None:
    """A plain query without hits that looks like a pattern (``flood|storm``, as the box's example shows): how
    many hits it has as a regular expression, so that the message can say to tick the box. Counted only for
    words joined by ``|`` (literal scans, as fast as the search itself: a pattern typed unticked is never run);
    None otherwise, or where it fails (the message then only says it looks like one)."""
    if literal_branches(query) is None:
        return None
    try:
        with vectorstore.foreground(ctx.vectors):
            rows = find_rows(ctx.keyword_index, query, is_regex=True, case_insensitive=case,
                             diacritics_insensitive=diacritics, timeout_s=timeout_s)
    except KeywordError:
        return None
    return int(len(_filter(rows, ctx.frame, date_from, date_to, authors, ctx.timezone)))


METHOD = Method("keyword", "KW", "Substring or regular expression; hits come in as included.",
                0, 0, search)
