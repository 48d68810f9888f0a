r"""The keyword index of a large corpus, built once at import in the corpus's generation folder: the folded
texts (case and diacritics folded, line breaks as spaces, exactly as the in-memory engine folds them) as
one memory-mapped Arrow column, and every word of them (a maximal run of ``\w``) with the rows holding it.

A query of word characters only occurs only inside words, so its rows are the union of the rows of
every word that contains it: exactly the substring answer (``vax`` finds ``vaxxed``) without reading a
text. Any other query (a phrase, ``#maga``, a URL) and a regular expression's literal runs (three
characters or more that every match contains) are narrowed by the postings of the word runs they hold,
and the candidates' folded texts are then tested in one pyarrow call (a phrase) or one scan of the
regex engine (a pattern). A query of fewer than three characters, or a pattern with no such run, is
refused with the reason: at this size a scan of every text would not answer within the deadline. The
deadline still guards everything.

Chosen by measurement (bench/RESULTS.md, issue 29). An earlier form also wrote a SQLite FTS5 trigram
index (``keywords.fts``) for phrases; it took most of a large import's time (272 s of 456 at 3M rows)
and is no longer built, but corpora imported with it are still read through it (``fts=True`` builds
one, for the comparison tests).
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from core.rows import in_sorted, unique_rows
from core.safeload import load_npy

log = logging.getLogger(__name__)

FILE = "keywords.fts"
# Beside it, the same folded texts as one Arrow column, memory-mapped: a regular expression is tried on
# the candidates the index gives, and reading them from SQLite cost ~2 us a text (0.4 s for 166,666
# candidates at 1M rows, most of a grammar regex's time) where an Arrow take is one call
FOLDED = "keywords.folded.arrow"
MIN_CHARS = 3  # a trigram index cannot look up less
MIN_WORD_CHARS = 2  # the word postings can: a query of two letters or digits (EU, ČT, 5G) is looked up there
_BATCH = 20_000


# And the words of the folded texts (maximal runs of \w) with the rows holding each: a query made only of
# word characters occurs only inside words, so its rows are the union of the rows of every word that
# contains it -- exactly the substring answer, without merging the position lists of common trigrams
# (FTS5 took 141-249 ms for `trump` at 3M rows and grows with them)
WORDS = ("keywords.words.vocab.txt", "keywords.words.ends.npy", "keywords.words.starts.npy",
         "keywords.words.rows.npy")
WORD = re.compile(r"\w+")  # a word: a maximal run of word characters (the in-memory index's too)
# How texts are folded into an index, as the in-memory engine folds them: 2 since 2026-12-06 (a CRLF as one space;
# the codes of shortened links left out since 2026-11-30). An index without its edition file is older (1): it finds
# otherwise than the in-memory engine, and is built again (Corpus.keyword_index_outdated, precompute.reindex).
EDITION = 2
EDITION_FILE = "keywords.edition.json"


def folded_file(path: Path) -> Path:
    return Path(path).with_name(FOLDED)


def one_line(text: str) -> str:
    """Line breaks as spaces (Windows' CRLF as one, as the other breaks are: a phrase typed across a break finds it):
    a query as both engines read it, and a text before ``without_link_codes``."""
    if "\r" in text:
        text = text.replace("\r\n", " ").replace("\r", " ")
    return text.replace("\n", " ")


# The code of a shortened link (t.co/eq1i4aknfl) is random letters: a short query found inside it (nfl, fbi, eu)
# made 1-5% of its hits on the scale and Czech corpora, texts with no other trace of it (bench/RESULTS.md, "Keyword
# hits inside a link's code"). Twitter writes every link as a t.co one, so the code says nothing a search could
# want; the link's scheme and host stay (``t.co`` or ``https`` still finds the texts with links).
SHORTENERS = ("t.co", "bit.ly", "ow.ly", "goo.gl", "ift.tt", "dlvr.it", "buff.ly", "fb.me", "tinyurl.com",
              "youtu.be", "trib.al", "j.mp", "is.gd", "wp.me", "amzn.to", "lnkd.in")
LINK_CODE = r"(?i)(https?://(?:www\.)?(?:" + "|".join(map(re.escape, SHORTENERS)) + r")/)[A-Za-z0-9_-]+"


def without_link_codes(texts: str | list[str]) -> str | list[str]:
    """A text (or a list of them) without the codes of its shortened links: one RE2 pass (pyarrow) over many texts,
    0.3 s for the scale corpus's 300,000 where Python's re took 0.6-0.9 s."""
    import pyarrow as pa
    import pyarrow.compute as pc

    one = isinstance(texts, str)
    out = pc.replace_substring_regex(pa.array([texts] if one else texts, pa.large_string()), LINK_CODE, r"\1")
    return out[0].as_py() if one else out.to_pylist()


def _folded_batches(texts: Iterable[str], fold: Callable[[str], str]) -> Iterable[list[str]]:
    batch = []
    for text in texts:
        batch.append(one_line(text))
        if len(batch) == _BATCH:
            yield [fold(t) for t in without_link_codes(batch)]
            batch = []
    if batch:
        yield [fold(t) for t in without_link_codes(batch)]


def edition(path: Path) -> int:
    """The folding's edition an index at ``path`` was built with (EDITION); 1 where it says none (older)."""
    import json

    try:
        return int(json.loads(Path(path).with_name(EDITION_FILE).read_text())["edition"])
    except (OSError, ValueError, KeyError, TypeError):
        return 1


def words_files(path: Path) -> list[Path]:
    return [Path(path).with_name(f) for f in WORDS]


class _Words:
    """Collects (word, row) while the texts are indexed; ``save`` writes the postings beside the index."""

    def __init__(self):
        from array import array

        self.vocab: dict[str, int] = {}
        self.ids, self.rows = array("i"), array("i")

    def add(self, first_row: int, folded: list[str]) -> None:
        vocab, ids, rows = self.vocab, self.ids, self.rows
        for r, text in enumerate(folded, first_row):
            for w in set(WORD.findall(text)):
                i = vocab.get(w)
                if i is None:
                    i = vocab[w] = len(vocab)
                ids.append(i)
                rows.append(r)

    def save(self, path: Path) -> None:
        from core.atomic import atomic_path, save_npy

        ids, rows = np.frombuffer(self.ids, np.int32), np.frombuffer(self.rows, np.int32)
        postings = rows[np.argsort(ids, kind="stable")]  # rows ascending within each word
        starts = np.zeros(len(self.vocab) + 1, np.int64)
        np.cumsum(np.bincount(ids, minlength=len(self.vocab)), out=starts[1:])
        ends = np.cumsum(np.fromiter((len(w) + 1 for w in self.vocab), np.int64, len(self.vocab))) - 1
        vocab_f, ends_f, starts_f, rows_f = words_files(path)
        save_npy(rows_f, postings)
        save_npy(starts_f, starts)
        save_npy(ends_f, ends)
        with atomic_path(vocab_f) as tmp:  # last: the postings are only read when the vocabulary is there
            tmp.write_text("\n".join(self.vocab) + "\n" if self.vocab else "", encoding="utf-8")


def build_words(path: Path) -> None:
    """The word postings of an index built before they existed, from its folded column."""
    import pyarrow as pa

    words, row = _Words(), 0
    reader = pa.ipc.open_file(pa.memory_map(str(folded_file(path))))
    for b in range(reader.num_record_batches):
        batch = reader.get_batch(b).column(0).to_pylist()
        words.add(row, batch)
        row += len(batch)
    words.save(path)


def build(path: Path, texts: Iterable[str], n: int, fold: Callable[[str], str],
          progress: Callable[[int, int], None] | None = None, fts: bool = False) -> None:
    """Index ``n`` texts (row i = rowid i), folded by ``fold``: their folded form into FOLDED and their
    words' postings into WORDS beside ``path`` (each written atomically); with ``fts``, also the SQLite
    FTS5 trigram index of earlier versions at ``path`` itself."""
    from contextlib import nullcontext

    from core.atomic import atomic_path

    with atomic_path(folded_file(path)) as column, (atomic_path(Path(path)) if fts else nullcontext()) as tmp:
        conn = None
        if fts:
            tmp.unlink()
            conn = sqlite3.connect(tmp)
        try:
            if conn is not None:
                conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;"
                                   "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='trigram case_sensitive 1', "
                                   "columnsize=0);")
            row, words = 0, _Words()
            with _ColumnWriter(column) as out:
                for batch in _folded_batches(texts, fold):
                    if conn is not None:
                        conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(batch, row))
                    out.write(batch)
                    words.add(row, batch)
                    row += len(batch)
                    if progress:
                        progress(row, n)
            if row != n:
                raise ValueError(f"{row:,} texts were indexed where {n:,} were announced")
            if conn is not None:
                conn.execute("INSERT INTO t(t) VALUES ('optimize')")  # one segment: fewer lookups per query
                conn.commit()
            words.save(path)
            if progress:
                progress(n, n)
        finally:
            if conn is not None:
                conn.close()
    from core.atomic import save_json

    save_json(Path(path).with_name(EDITION_FILE), {"edition": EDITION})  # once every file of it is in place


def exists(path: Path) -> bool:
    """Whether an index was built at ``path``: the word postings and the folded column, or an FTS5 file."""
    return Path(path).exists() or (folded_file(path).exists() and words_files(path)[0].exists())


class _ColumnWriter:
    """Folded texts appended to an Arrow IPC file, one record batch per call."""

    def __init__(self, path: Path):
        import pyarrow as pa

        self._pa, self._path = pa, path
        self._schema = pa.schema([("folded", pa.string())])

    def __enter__(self):
        self._sink = self._pa.OSFile(str(self._path), "wb")
        self._writer = self._pa.ipc.new_file(self._sink, self._schema)
        return self

    def write(self, folded: list[str]) -> None:
        self._writer.write_batch(self._pa.record_batch([self._pa.array(folded, self._pa.string())], schema=self._schema))

    def __exit__(self, *exc) -> None:
        self._writer.close()
        self._sink.close()


def build_folded(path: Path, texts: Iterable[str], fold: Callable[[str], str]) -> None:
    """Only the folded column beside an index built before it existed (``path`` is the index)."""
    from core.atomic import atomic_path

    with atomic_path(folded_file(path)) as column, _ColumnWriter(column) as out:
        for batch in _folded_batches(texts, fold):
            out.write(batch)


_ESCAPE_WITH_BRACES = set("pPNxuUg")  # \p{L}, \N{...}, \x{263a}: the escape runs to its }
_POSIX_CLASS = re.compile(r"\[:\^?\w+:\]")


def pattern_tokens(pattern: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, inside a character class) of each piece of a regular expression as the ``regex`` package
    reads it: an escape with what it takes (``\\p{L}``, ``\\pL``, ``\\N{...}``, ``\\g<name>``), a POSIX class
    (``[:alpha:]``) inside a class, or one character. A class's opening ``[`` is outside it, its closing ``]``
    inside; a ``]`` right after the ``[`` (or ``[^``) is a member, not the end."""
    i, n, inside, members = 0, len(pattern), False, 0
    while i < n:
        ch, j = pattern[i], i + 1
        if ch == "\\" and i + 1 < n:
            e, j = pattern[i + 1], i + 2
            if e in _ESCAPE_WITH_BRACES and j < n and pattern[j] == "{":
                j = pattern.find("}", j) + 1 or n
            elif e == "g" and j < n and pattern[j] == "<":
                j = pattern.find(">", j) + 1 or n
            elif e in "pP" and j < n and pattern[j].isalpha():  # \pL: a one-letter property
                j += 1
        elif inside and (posix := _POSIX_CLASS.match(pattern, i)):
            j = posix.end()
        yield i, j, inside
        if inside:
            if ch == "]" and j == i + 1 and members:
                inside = False
            elif not (ch == "^" and members == 0 and pattern[i - 1] == "["):
                members += 1
        elif ch == "[":
            inside, members = True, 0
        i = j


_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_FUZZY = re.compile(r"\{[\d\s<=+,eisd]*[eisd][\d\s<=+,eisd]*(?::[^}]*)?\}")  # {e<=1}, {i<=1,d<=1}, {2i+1s<=3}
# group heads Python's parser knows otherwise or not at all: a name as (?<Name>; calls of a group (?&Name),
# (?P>Name), (?R), (?1), (?+1) (what they match is not plain text); a branch reset (?|
_NAMED = re.compile(r"\(\?<(?![=!])(\w+)>")
_BRANCH_RESET = re.compile(r"\(\?\|")
_CALL = re.compile(r"\(\?(?:&\w+|P>\w+|R|[+-]?\d+)\)")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:V[01])?[a-zA-Z]*)(?:-([a-zA-Z]+))?([:)])")
_PYTHON_FLAGS = set("aiLmsux")


_ERROR_KINDS = "ids"  # insertions, deletions, substitutions
_KIND_LIMIT = re.compile(r"(?:\d+\s*<=?\s*)?([eids])(?:\s*(<=?)\s*(\d+))?")  # e<=1, 1<=e<3, i, s<=2
_COST = re.compile(r"((?:\s*\d*\s*[ids]\s*\+?)+)\s*(<=?)\s*(\d+)")  # 2i+2d+1s<=4
_INF = float("inf")


def fuzzy_errors(constraint: str) -> int | None:
    """The most errors a match may make under a fuzzy constraint of the regex package (``{e<=1}``, ``{i<=1,d<=1}``,
    ``{2i+2d+1s<=4}``, ``{e<=1:[a-z]}``: 1, 2, 4, 1); None where it sets no limit (``{e}``, ``{i}``) or cannot be
    read. Kinds not named are not allowed, unless ``e`` is named."""
    body = constraint.strip()[1:-1].split(":", 1)[0]
    limits: dict[str, float] = {}
    costs: list[tuple[dict[str, int], float]] = []
    for part in body.split(","):
        part = part.strip()
        if m := _KIND_LIMIT.fullmatch(part):
            most = _INF if m.group(2) is None else int(m.group(3)) - (m.group(2) == "<")
            limits[m.group(1)] = min(limits.get(m.group(1), _INF), most)
        elif m := _COST.fullmatch(part):
            weights = {k: int(w or 1) for w, k in re.findall(r"(\d*)\s*([ids])", m.group(1))}
            costs.append((weights, int(m.group(3)) - (m.group(2) == "<")))
        else:
            return None
    allowed = set(_ERROR_KINDS) if "e" in limits else {k for k in limits if k != "e"}
    allowed |= {k for weights, _ in costs for k in weights}
    most = min(limits.get("e", _INF), sum(limits.get(k, _INF) for k in allowed))
    for weights, cost in costs:
        if allowed <= set(weights) and min(weights[k] for k in allowed) > 0:
            most = min(most, cost // min(weights[k] for k in allowed))
    return None if most == _INF else max(0, int(most))


def fuzzy_pieces(text: str, errors: int, later: bool = False) -> list[str]:
    """``errors`` + 1 pieces of ``text``, end to end, as even as can be: a match of ``text`` with at most ``errors``
    insertions, deletions or substitutions leaves one of them whole (each error falls in one piece at most);
    [] where ``text`` is shorter than that (every character may go). ``later``: each inner cut a character later
    (clinton: cli nton, then clin ton), a second split every match also keeps a piece of: both together narrow
    more (a text holding "ton" holds "cli" or "nton" too, or no clinton)."""
    n = errors + 1
    if len(text) < n:
        return []
    cuts = [i * len(text) // n for i in range(n + 1)]
    if later:
        cuts = [c + 1 if 0 < i < n else c for i, c in enumerate(cuts)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


_PLAIN_GROUP = re.compile(r"\((?:\?(?::|P?<\w+>))?((?:[^\\()\[\]{}.^$*+?|]|\\\W|\|)*)\)")


def _constraint_at(pattern: str, i: int):
    """The fuzzy constraint of the regex package (``{e<=1}``) that starts at ``i`` (outside a class), or None: a
    repeat count (``{2,3}``) is none."""
    return None if _QUANTIFIER.match(pattern, i) else _FUZZY.match(pattern, i)


def has_fuzzy(pattern: str) -> bool:
    """Whether ``pattern`` holds a fuzzy constraint of the regex package (``{e<=1}``)."""
    return any(pattern[i] == "{" and not inside and _constraint_at(pattern, i)
               for i, _, inside in pattern_tokens(pattern))


def _fuzzy_plan(atom: str, errors: int) -> str:
    """What a fuzzy ``atom`` (a group of plain words or a choice of them, or one item) with at most ``errors``
    errors requires, written for literal_plan: for each word, a choice of the pieces one of which every match keeps
    whole, for each of two splits (fuzzy_pieces), fenced by empty look-aheads so no text beside it joins them;
    ``(?=)`` (nothing) where a piece may go or the atom is not plain words: what cannot be read requires nothing."""
    m = _PLAIN_GROUP.fullmatch(atom)
    if m is None:
        return "(?=)"
    words = [re.sub(r"\\(\W)", r"\1", branch) for branch in m.group(1).split("|")]
    both = len(words) * (errors + 1) ** 2 <= MAX_ALTERNATIVES  # past it one split: a choice of more is not read
    branches = []
    for word in words:
        splits = [fuzzy_pieces(word, errors)] + ([fuzzy_pieces(word, errors, later=True)] if both else [])
        if not splits[0]:
            return "(?=)"
        # every match keeps a piece of each split: both required (literal_plan makes it alternatives of both)
        branches.append("".join("(?=)(?:" + "|".join(map(re.escape, pieces)) + ")(?=)" for pieces in splits))
    return "(?:" + "|".join(branches) + ")"


def as_python(pattern: str) -> str | None:
    """``pattern`` as the ``regex`` package reads it (version 0), written for Python's own parser with every plain
    run of text a match must contain kept and none added, for literal_plan; None where that cannot be said:
    fuzzy matching with no limit on its errors (``(?:covid){e}``) and full case-folding (``(?f)``). A fuzzy group
    of plain words with a limit (``(?:hillary){e<=1}`` matches ``hilary``) becomes the pieces each match keeps one
    of whole, of two splits (hil or lary, and hill or ary: _fuzzy_plan). The regex package's extras become what Python reads
    as no plain text: ``\\p{L}``, ``\\P{..}`` and POSIX classes ``[[:alpha:]]`` a word character, ``\\m``/``\\M`` a
    word boundary, ``\\X``, ``\\K``, ``\\G``, ``\\g<name>`` and calls of a group an empty group. Python's parser
    read a fuzzy constraint and a POSIX class as plain text (a search through the index then found nothing), and
    refused the others."""
    out: list[str] = []
    skip = 0  # the end of a group's head (or a constraint, a repeat count) already written
    opened: list[tuple[int, int]] = []  # (place in out, in pattern) of each group still open
    atom: tuple[int, int] | None = None  # where the last whole item starts: what a fuzzy constraint applies to
    klass = (0, 0)  # where the character class being read starts
    was_inside = False
    for i, j, inside in pattern_tokens(pattern):
        if i < skip:
            continue
        piece, here = pattern[i:j], (len(out), i)
        if was_inside and not inside:  # the class just closed
            atom = klass
        was_inside = inside
        if piece[0] == "\\" and len(piece) > 1:
            e = piece[1]
            if e in "pP":
                out.append(r"\w")
            elif inside:
                out.append(piece)
            elif e == "g" and piece[2:3] == "<" or e in "XKG":
                out.append("(?:)")
            else:
                out.append(r"\b" if e in "mM" else piece)
            if not inside:
                atom = here
            continue
        if inside:
            out.append(r"\w" if len(piece) > 1 else piece)  # a POSIX class
            continue
        if piece == "{" and (m := _QUANTIFIER.match(pattern, i)):
            out.append(m.group())
            skip, atom = m.end(), None
            continue
        if piece == "{" and (m := _constraint_at(pattern, i)):
            errors = fuzzy_errors(m.group())
            if errors is None or atom is None:
                return None
            del out[atom[0]:]
            out.append(_fuzzy_plan(pattern[atom[1]:i], errors))
            skip, atom = m.end(), None
            continue
        if piece == "(":
            opened.append(here)
        if piece == ")" and opened:
            out.append(piece)
            atom = opened.pop()
            continue
        if piece == "[":
            klass = here
        atom = None if piece in "*+?|" else here
        if piece == "(" and pattern.startswith("(?", i):
            head = None
            if m := _NAMED.match(pattern, i):
                head = f"(?P<{m.group(1)}>"
            elif m := _CALL.match(pattern, i):
                head = "(?:)"
                opened.pop()  # a call is whole: (?&name)
            elif m := _BRANCH_RESET.match(pattern, i):
                head = "(?:"
            elif m := _FLAGS.match(pattern, i):
                on, off, end = m.group(1), m.group(2) or "", m.group(3)
                if "f" in on:
                    return None
                on = "".join(f for f in on.replace("V0", "").replace("V1", "") if f in _PYTHON_FLAGS)
                off = "".join(f for f in off if f in _PYTHON_FLAGS)
                head = f"(?{on}{'-' + off if off else ''}{end}" if on or off else ("(?:" if end == ":" else "(?:)")
                if end == ")":
                    opened.pop()  # (?i): a flag, no group
            if head is not None:
                out.append(head)
                skip = m.end()
                continue
        out.append(piece)
    return "".join(out)


def _parsed(pattern: str):
    """Python's parse of ``pattern`` as the regex package reads it (as_python), or None."""
    readable = as_python(pattern)
    if readable is None:
        return None
    try:
        import warnings
        from re import _parser as parser  # the standard library's parser (3.11+)

        with warnings.catch_warnings():  # "possible nested set": a [ in a class, which both read as a [
            warnings.simplefilter("ignore", FutureWarning)
            return list(parser.parse(readable))
    except Exception:
        return None


def starts_plain(pattern: str) -> bool:
    """Whether every match of ``pattern`` starts with plain text (``fake\\s+news``, ``\\b(obama)care``): the regex
    engine then finds where to try it by that text as quickly as a search for the text alone would."""
    from re import _constants as c

    tree = _parsed(pattern)
    while tree:
        op, av = tree[0]
        if op is c.LITERAL:
            return True
        if op is c.AT:  # ^, \b: what follows starts the match
            tree = tree[1:]
        elif op is c.SUBPATTERN:
            tree = list(av[-1]) + tree[1:]
        else:
            return False
    return False


def can_look_up(key: str, short_words: bool = False) -> bool:
    """Whether the index can look ``key`` up: MIN_CHARS characters, or with ``short_words`` (looks_up_short_words)
    MIN_WORD_CHARS letters or digits."""
    return len(key) >= MIN_CHARS or short_words and len(key) >= MIN_WORD_CHARS and bool(WORD.fullmatch(key))


MAX_ALTERNATIVES = 16  # a plan's alternatives at most (each is looked up): past it a choice is left unnarrowed
PLAN_STEPS = 2_000  # reads of a pattern's parts for its plan, at most, before choices are read once each


def literal_plan(pattern: str, short_words: bool = False) -> list[list[str]]:
    """What the index can look up for ``pattern`` (as the ``regex`` package reads it): alternatives, each the
    literal runs of at least MIN_CHARS that one kind of match contains, every match holding all the runs of some
    alternative (``\\b(babiš|fiala)\\b``: babiš, or fiala; ``(pan|paní) (babiš|fiala)``: babiš or fiala, the
    titles being short); [] when some kind of match holds no such run (then the index cannot narrow the texts)
    or the pattern cannot be read (as_python). A choice that would make more than MAX_ALTERNATIVES alternatives
    is left out (what remains still holds for every match). ``short_words``: a run of MIN_WORD_CHARS letters or
    digits counts too (``\\bEU\\b``), for an index whose word postings can look it up."""
    from re import _constants as c

    tree = _parsed(pattern)
    if tree is None:
        return []
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    atomic = getattr(c, "ATOMIC_GROUP", None)
    nothing = [()]  # one alternative requiring nothing

    def times(alts: list[tuple], other: list[tuple]) -> list[tuple]:
        """Both required: each alternative with each of the other's; past MAX_ALTERNATIVES the side with fewer."""
        if other == nothing or alts == nothing:
            return alts if other == nothing else other
        if len(alts) * len(other) > MAX_ALTERNATIVES:
            return alts if len(alts) <= len(other) else other
        return [a + o for a in alts for o in other]

    def run(text: str) -> list[tuple]:
        return [(text,)] if can_look_up(text, short_words) else nothing

    budget = [PLAN_STEPS]

    class Spent(Exception):
        pass

    def plan_of(items, head: str = "", rest_too: bool = True) -> list[tuple]:
        """``head``: plain text just before ``items``, joined to their first run. At a choice (branches, or a class
        of a few letters: the parser makes us|uk u then [sk]) each branch is read with the plain text before it and
        (``rest_too``) what follows it, so runs cross the choice (us, uk); past PLAN_STEPS reads, Spent."""
        budget[0] -= 1
        if budget[0] < 0:
            raise Spent
        items = list(items)
        alts, cur = nothing, list(head)
        for at, (op, av) in enumerate(items):
            if op is c.LITERAL:
                cur.append(chr(av))
                continue
            choices = None
            if op is c.BRANCH:
                choices = [list(b) for b in av[1]]
            elif op is c.IN and rest_too and 1 < len(av) <= MAX_ALTERNATIVES and all(o is c.LITERAL for o, _ in av):
                choices = [[member] for member in av]
            if choices is not None:
                lead, after = "".join(cur), items[at + 1:] if rest_too else []
                union = [a for choice in choices for a in plan_of(choice + after, lead, rest_too)]
                if () in union or len(union) > MAX_ALTERNATIVES:  # as good as it gets: the common start alone
                    union = run(lead) if lead else nothing
                    if rest_too:
                        union = times(union, plan_of(after, "", rest_too))
                if rest_too:
                    return times(alts, union)
                alts, cur = times(alts, union), []
                continue
            if cur:  # anything else ends a run; what it holds is required only where it must match
                alts, cur = times(alts, run("".join(cur))), []
            if op is c.SUBPATTERN:
                alts = times(alts, plan_of(av[-1], "", rest_too))
            elif op is atomic:
                alts = times(alts, plan_of(av, "", rest_too))
            elif op in repeats and av[0] >= 1:
                alts = times(alts, plan_of(av[2], "", rest_too))
            elif op is c.ASSERT:  # (?=.*babiš), (?<=#): what a look-ahead or -behind sees is in the text too
                alts = times(alts, plan_of(av[1], "", rest_too))
        return times(alts, run("".join(cur))) if cur else alts

    try:
        plan = plan_of(tree)
    except Spent:  # choice after choice: each branch read once, without what follows it
        budget[0] = PLAN_STEPS * 100
        plan = plan_of(tree, rest_too=False)
    if () in plan:
        return []
    # a two-letter run only where its alternative has no longer one (is, in, the: postings of many words)
    # and a run inside another of its alternative's only once (hil with hill: hill)
    kept = list(dict.fromkeys(tuple(r for r in dict.fromkeys([r for r in a if len(r) >= MIN_CHARS] or a)
                                    if not any(r != o and r in o for o in a)) for a in plan))
    # an alternative holding all of another's runs and more finds nothing that one does not: left out
    return [list(a) for a in kept if not any(b != a and set(b) <= set(a) for b in kept)]


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class TextIndex:
    """Read-only lookups in a built index; one SQLite connection per thread (server sessions are threads)."""

    def __init__(self, path: Path, n: int):
        self.path, self.n = Path(path), n
        self._local = threading.local()
        self._loaded: dict[str, object] = {}  # the folded column and the word postings, read on first use
        self._load_lock = threading.Lock()

    def prepare(self) -> None:
        """Read now what the first search would (the word postings' vocabulary and offsets, the folded
        column's batches): ~1.3 s from a cold disk at 10M rows, which put the first search of a freshly
        opened corpus at its 2 s deadline. Meant for a background thread; a search meanwhile waits for
        the part it needs rather than reading it twice. Failures are the first search's to report."""
        try:
            self._words()
            if self.folded() is not None:
                self._bounds()
        except Exception:  # noqa: BLE001 - a hint, never an error of its own
            log.debug("preparing %s failed", self.path, exc_info=True)

    def _once(self, name: str, load):
        if name not in self._loaded:
            with self._load_lock:
                if name not in self._loaded:
                    self._loaded[name] = load()
        return self._loaded[name]

    def folded(self):
        """The folded texts as a memory-mapped Arrow column, or None where the index has none (built by
        an earlier version) or it does not hold one text a row."""
        def load():
            f = folded_file(self.path)
            if not f.exists():
                return None
            import pyarrow as pa

            try:
                col = pa.ipc.open_file(pa.memory_map(str(f))).read_all().column(0)
            except (OSError, pa.ArrowInvalid):
                return None
            return col if len(col) == self.n else None

        return self._once("folded", load)

    def _words(self):
        """(vocabulary, its words' ends, each word's first posting, the postings) or None (none readable)."""
        def load():
            vocab_f, ends_f, starts_f, rows_f = words_files(self.path)
            if not vocab_f.exists():
                return None
            try:
                vocab = vocab_f.read_text(encoding="utf-8")
                ends, starts = load_npy(ends_f), load_npy(starts_f)
                rows = load_npy(rows_f, mmap_mode="r")
            except (OSError, ValueError):
                return None
            whole = len(starts) == len(ends) + 1 and int(starts[-1]) == len(rows) \
                and (not len(ends) or int(ends[-1]) == len(vocab) - 1)
            return (vocab, ends, starts, rows) if whole else None

        return self._once("words", load)

    def _spans(self, key: str, deadline) -> tuple[np.ndarray, np.ndarray]:
        """(first posting, number of postings) of every word that contains ``key``; postings present."""
        vocab, ends, starts, _ = self._words()
        at = []
        for i, m in enumerate(re.finditer(re.escape(key) + "[^\n]*", vocab)):  # every word holding the key
            at.append(m.start())
            if i % 4096 == 4095:
                deadline.left()
        ids = np.searchsorted(ends, np.asarray(at, np.int64))
        return starts[ids], starts[ids + 1] - starts[ids]

    def _gather(self, lo: np.ndarray, sizes: np.ndarray, deadline) -> np.ndarray:
        """The sorted, distinct rows of the postings spans ``lo`` .. ``lo + sizes``."""
        rows = self._words()[3]
        if not len(lo):
            return np.zeros(0, np.int64)
        offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes)
        hit = np.asarray(rows[offsets + np.arange(int(sizes.sum()))], np.int64)
        deadline.left()
        return hit if len(lo) == 1 else unique_rows(hit)

    def looks_up_short_words(self) -> bool:
        """Whether a needle of MIN_WORD_CHARS letters or digits can be looked up: the word postings and the folded
        column are there (an index of earlier imports reads its candidates' texts through its trigrams)."""
        return self._words() is not None and self.folded() is not None

    def word_rows(self, key: str, deadline) -> np.ndarray | None:
        """Sorted rows whose folded text contains ``key`` (folded), from the word postings; None where
        ``key`` is not made of word characters only, or the index has no postings (then ``containing``)."""
        if self._words() is None or not WORD.fullmatch(key):
            return None
        return self._gather(*self._spans(key, deadline), deadline)

    def candidates(self, plan: Sequence[Sequence[str]], deadline) -> np.ndarray:
        """``containing``'s rows, from the word postings where every needle is made of word characters."""
        found = []
        for needles in plan:
            sets = [self.word_rows(k, deadline) for k in needles]
            if any(s is None for s in sets):
                return self.containing(plan, deadline)
            rows = sets[0]
            for more in sets[1:]:
                rows = np.intersect1d(rows, more, assume_unique=True)
            found.append(rows)
        return unique_rows(*found)

    def _narrowed(self, needles: Sequence[str], deadline) -> np.ndarray | None:
        """Sorted rows that may hold every needle: those holding its rarest two word runs of MIN_CHARS or
        more (each run lies inside some word of a text that holds the needle); None where no needle has
        such a run (every row may)."""
        runs = {r for k in needles for r in WORD.findall(k) if len(r) >= MIN_CHARS}
        spans = sorted((self._spans(r, deadline) for r in runs), key=lambda sp: int(sp[1].sum()))
        if not spans:
            return None
        rows = self._gather(*spans[0], deadline)
        if len(spans) > 1 and len(rows):
            rows = rows[in_sorted(rows, self._gather(*spans[1], deadline))]
        return rows

    def _bounds(self) -> np.ndarray:
        """The folded column's first row of each chunk, and its length last."""
        return self._once("bounds", lambda: np.cumsum([0] + [len(c) for c in self.folded().chunks]))

    def take(self, rows: np.ndarray):
        """The folded texts of ``rows`` (sorted) as one Arrow array, taken chunk by chunk: the column is one
        chunk per written batch, and pyarrow's take over a chunked array joins every chunk first (2 s for
        70,000 rows of a 10M-row column; this: milliseconds)."""
        import pyarrow as pa

        col = self.folded()
        bounds = self._bounds()
        which = np.searchsorted(bounds, rows, side="right") - 1
        cut = np.flatnonzero(np.diff(which)) + 1
        parts = [col.chunk(int(which[s])).take(pa.array(rows[s:e] - bounds[which[s]]))
                 for s, e in zip(np.r_[0, cut], np.r_[cut, len(rows)]) if e > s]
        return pa.concat_arrays(parts) if parts else pa.array([], pa.string())

    def _having(self, rows: np.ndarray | None, needles: Sequence[str], deadline) -> np.ndarray:
        """Those of ``rows`` (None: every row) whose folded text contains every needle, tested on the folded
        column in blocks (pyarrow's substring search, in C)."""
        import pyarrow.compute as pc

        def mask(texts) -> np.ndarray:
            m = None
            for k in needles:
                hit = pc.match_substring(texts, k)
                m = hit if m is None else pc.and_(m, hit)
            return m.to_numpy(zero_copy_only=False)

        col, keep = self.folded(), []
        if rows is None:  # every text: the chunks shared among the cores (pyarrow lets go of the GIL)
            import os
            from concurrent.futures import ThreadPoolExecutor

            bounds = self._bounds()
            with ThreadPoolExecutor(max(1, min(8, os.cpu_count() or 1))) as pool:
                for i, m in enumerate(pool.map(mask, col.chunks)):
                    keep.append(np.flatnonzero(m) + bounds[i])
                    deadline.left()
        else:
            for s in range(0, len(rows), 262_144):
                part = rows[s:s + 262_144]
                keep.append(part[mask(self.take(part))])
                deadline.left()
        return np.concatenate(keep).astype(np.int64) if keep else np.zeros(0, np.int64)

    def joined(self, plan: Sequence[Sequence[str]], deadline, block: int = 32_768
               ) -> Iterator[tuple[np.ndarray, str, np.ndarray]]:
        """(rows, their folded texts joined one per line, each line's end) for the texts ``containing``
        finds, a block of rows at a time: from the folded column where there is one, else from SQLite.
        In blocks because one string of every candidate is slow to make: decoding 210 MB of UTF-8 at once
        (1.7M candidates at 10M rows) took 0.6-2 s, in blocks of 32k texts 0.1 s."""
        col = self.folded()
        if col is None:
            found = self.bodies(plan, deadline)
            rows = np.fromiter((r for r, _ in found), np.int64, len(found))
            bodies = [b for _, b in found]
            lengths = np.fromiter((len(b) for b in bodies), np.int64, len(bodies))
            yield rows, ("\n".join(bodies) + "\n" if bodies else ""), np.cumsum(lengths + 1) - 1
            return
        import pyarrow.compute as pc

        rows = self.candidates(plan, deadline)
        for s in range(0, len(rows), block):
            part = rows[s:s + block]
            taken = self.take(part)
            lines = pc.binary_join_element_wise(taken, "", "\n")  # text + "\n"
            offsets = np.frombuffer(lines.buffers()[1], np.int32)[lines.offset:lines.offset + len(lines) + 1]
            joined = lines.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes().decode("utf-8")
            lengths = pc.utf8_length(taken).to_numpy(zero_copy_only=False).astype(np.int64)
            deadline.left()
            yield part, joined, np.cumsum(lengths + 1) - 1

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True,
                                                      check_same_thread=False)
        return conn

    def _query(self, sql: str, args: tuple, deadline) -> list[tuple]:
        conn = self._conn()
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline.at else 0, 20_000)
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise deadline.expired() from None
            raise
        finally:
            conn.set_progress_handler(None, 0)

    @staticmethod
    def _match(plan: Sequence[Sequence[str]]) -> str:
        return " OR ".join("(" + " AND ".join(_phrase(s) for s in needles) + ")" for needles in plan)

    def containing(self, plan: Sequence[Sequence[str]], deadline) -> np.ndarray:
        """Sorted rows whose folded text contains every needle of some alternative of ``plan``."""
        # no FTS5 file, or a needle of two letters its trigrams cannot match: the word postings narrow, the folded
        # column decides (short needles come only where both are there: looks_up_short_words)
        if not self.path.exists() or any(len(k) < MIN_CHARS for needles in plan for k in needles):
            return unique_rows(*(self._having(self._narrowed(needles, deadline), needles, deadline)
                                 for needles in plan))
        # one string of row numbers rather than a Python tuple per row: at 300,000 hits 129 ms against 436 ms
        joined = self._query("SELECT group_concat(rowid) FROM t WHERE t MATCH ?", (self._match(plan),), deadline)[0][0]
        return np.sort(np.fromstring(joined, np.int64, sep=",")) if joined else np.zeros(0, np.int64)

    def bodies(self, plan: Sequence[Sequence[str]], deadline) -> list[tuple[int, str]]:
        """(row, folded text) of the texts ``containing`` finds."""
        return self._query("SELECT rowid, body FROM t WHERE t MATCH ?", (self._match(plan),), deadline)


def too_short(needle: str) -> str:
    return (f"at this corpus size a search needs at least {MIN_CHARS} characters, or {MIN_WORD_CHARS} letters or "
            f"digits (EU, 5G), for the keyword index to look it up; {needle!r} has {len(needle)}")


NOT_NARROWED = ("at this corpus size a regular expression is tried only on the texts that hold its plain parts, "
                "which fuzzy matching without a limit ({e}, {i}) and full case-folding ((?f)) do not keep: give the "
                "errors a limit ((?:covid){e<=1}) or search without them (a class such as vac[ck]ína, or a|b, "
                "finds the variants)")
FUZZY_SHORT = ("at this corpus size fuzzy matching is tried only on the texts that hold a piece every match keeps "
               "whole ((?:hillary){e<=1}: hil or lary), so each word it applies to needs 3 characters for each error "
               "allowed and 3 more (2 more for letters and digits only, where the index has word postings): allow "
               "fewer errors, or make the fuzzy part a longer word")
NO_LITERAL = ("at this corpus size a regular expression needs a plain part of at least 3 characters that every "
              "match contains (for example vacc\\w+ rather than \\w+ine), so that the keyword index can narrow "
              "the texts it is tried on")


def not_narrowed(pattern: str) -> str:
    """Why the index cannot narrow the texts ``pattern`` is tried on (its plan has no part to look up)."""
    return NOT_NARROWED if as_python(pattern) is None else FUZZY_SHORT if has_fuzzy(pattern) else NO_LITERAL
