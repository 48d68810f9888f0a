"""Every form of a word, for the keyword search: ``volby`` finds ``volbách``, ``voleb`` and ``volbám`` too.

A Czech annotator types a word's dictionary form; a substring search then finds only the forms that hold it.
On 12,275 Czech politicians' tweets ``volby`` (elections) is in 128 texts, while the word in any of its cases
is in 603; ``energie`` in 60 of 104 (bench/RESULTS.md, "Every form of a word"). The forms come from
simplemma's dictionary of the language (form -> lemma, built from Wiktionary), read backwards: the lemma of
what was typed, then every form with that lemma. Where the dictionary lists few forms of a lemma (Wiktionary's
Czech has two of *vakcína*), the lemmas that end as it does lend it theirs (:meth:`Dictionary.analog_forms`).

A form is taken only where it starts with the same three letters as the word typed (case and diacritics
aside): that keeps the regular forms (``volby`` -> ``voleb``, ``děti`` -> ``dětem``) and leaves out another
word's forms that share its lemma (``lidé`` is a form of ``člověk``, ``better`` of ``good``, ``je`` of
``být``). A word shorter than three letters, or holding anything but letters (a hashtag, a link), is
searched as typed, and so is a form holding anything but letters.

The dictionary is held as three strings of one entry a line (forms, their folded forms, lemmas; ~4 MB each
for Czech's 362,550 entries; 27.5 MB held in all) rather than as Python dicts of sets (196 MB), and looked up
with ``str.find`` of a whole line (about a millisecond)."""

from __future__ import annotations

import encodings.utf_32_le  # noqa: F401  (_Lines's codec: imported with this module, not by a thread reading)
import math
import re
import threading
from collections import Counter
from functools import lru_cache
from itertools import product
from typing import Callable

import numpy as np

from core import languages

PREFIX = 3  # letters a form shares with the typed word
MAX_FORMS = 40  # forms of one word at most (Czech nouns have up to 14, adjectives a few more)
ANALOGS = 10  # lemmas of the same ending whose paradigms lend a lemma the forms the dictionary lacks
SELDOM = 0.25  # a letter after which the dictionary makes fewer than this share of its changes of ending
CHANGE_SHARE = 0.01  # an ending change the dictionary makes in at least this share of its lemmas is a rule


def supported(lang: str) -> bool:
    """Whether simplemma has a dictionary of ``lang`` (an ISO 639-1 code such as "cs")."""
    if not lang:
        return False
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return lang in SUPPORTED_LANGUAGES


def language_of(corpus) -> str | None:
    """A corpus's main language where it has a dictionary (the keyword search's Every form, Suggest's words by
    lemma), else None."""
    return language_for(corpus.languages)


def language_for(shares: dict[str, float]) -> str | None:
    """The main language of these shares (``{"cs": 0.9, ...}``, an import's detection) where it has a dictionary."""
    lang = languages.main_language(shares) if shares else ""
    return lang if supported(lang) else None


def _fold(text: str) -> str:
    from core.search.keyword import fold

    return fold(text)


class _Lines:
    """One string of one entry a line (a line break before the first too), and where each line starts."""

    def __init__(self, lines: list[str]):
        self.text = "\n" + "\n".join(lines) + "\n"
        codes = np.frombuffer(self.text.encode("utf-32-le"), dtype=np.uint32)
        self.starts = (np.flatnonzero(codes == 10)[:-1] + 1).astype(np.int64)

    def find(self, entry: str) -> list[int]:
        """The lines that are exactly ``entry`` (str.find: about a millisecond through Czech's 4 MB)."""
        needle, at, found = "\n" + entry + "\n", 0, []
        while (at := self.text.find(needle, at)) >= 0:
            found.append(at + 1)
            at += 1
        return np.searchsorted(self.starts, np.asarray(found, np.int64)).tolist()

    def line(self, i: int) -> str:
        start = int(self.starts[i])
        return self.text[start:self.text.index("\n", start)]


class Dictionary:
    """A language's forms and lemmas, lower-cased, looked up both ways."""

    def __init__(self, lang: str):
        from simplemma.strategies.dictionaries import DefaultDictionaryFactory

        self.lang = lang
        pairs = DefaultDictionaryFactory().get_dictionary(lang).items()
        forms, lemmas = zip(*((f.lower(), l.lower()) for f, l in pairs)) if pairs else ((), ())
        self.forms, self.lemmas = _Lines(list(forms)), _Lines(list(lemmas))
        self.folded = _Lines(_fold(self.forms.text[1:-1]).split("\n"))
        self._by_ending: dict[str, list[str]] | None = None  # built on the first analogy (core.wordforms.ANALOGS)
        self._changes: dict[str, list[str]] | None = None  # built on the first unlisted_forms

    def lemmas_of(self, word: str, diacritics_insensitive: bool = True) -> set[str]:
        """The lemmas of ``word`` (lower-cased), of every form that reads as it without diacritics unless they
        must match (``ockovani`` and ``očkování``: očkování, očkovaný, očkovat); else simplemma's guess."""
        w = word.lower()
        found = {self.lemmas.line(i) for i in self.forms.find(w)}
        if self.lemmas.find(w):
            found.add(w)
        if diacritics_insensitive:
            found |= {self.lemmas.line(i) for i in self.folded.find(_fold(w))}
        if not found:
            from simplemma import lemmatize

            guess = lemmatize(w, lang=self.lang).lower()
            if guess != w:
                found = {guess}
        return found

    def lemma_map(self) -> dict[str, str]:
        """Each folded form the dictionary lists -> one folded lemma that begins with the same three letters (the
        shortest, then the first alphabetically): ``volbach`` -> ``volba``, ``notifications`` -> ``notification``.
        A form with no such lemma, or itself a lemma (``ockovani``, the noun, not ``ockovat``), is left out: it
        stands for itself. One pass over the dictionary (English 0.5 s, 97,679 forms mapped; Czech ~1.2 s)."""
        lemmas = _fold(self.lemmas.text[1:-1]).split("\n")
        headwords = set(lemmas)
        found: dict[str, set[str]] = {}
        for form, lemma in zip(self.folded.text[1:-1].split("\n"), lemmas):
            if lemma != form and form not in headwords and lemma[:PREFIX] == form[:PREFIX] and lemma.isalpha():
                found.setdefault(form, set()).add(lemma)
        return {w: min(ls, key=lambda l: (len(l), l)) for w, ls in found.items()}

    def ending_changes(self) -> dict[str, list[tuple[str, frozenset[str]]]]:
        """A form's ending -> (a lemma ending it takes the place of, the letters the lemma's stem ends in where the
        dictionary makes that change), folded, for each change of ending (up to two letters of the lemma for up to
        three of the form, after a stem of four or more) that the dictionary makes in at least ``CHANGE_SHARE`` of
        its lemmas: Czech 78 (``-`` -> ``-e``, ``-ovi``, ``-em``; ``-a`` -> ``-y``, ``-u``, ``-ou``; ``-ka`` ->
        ``-ek``; ``-`` -> ``-ma`` only after ``i``, ``y``, ``a``: *jarníma*, never *zdarma* of *zdar*; a form that is
        its lemma's stem alone, key ``""``: ``-a``, ``-e``, ``-t`` -> ``-``, as *vakcín* of *vakcína*), English 8
        (``-`` -> ``-s``, ``-ed``...). Read once (~1.5 s)."""
        if self._changes is None:
            from collections import defaultdict
            from os.path import commonprefix

            lemmas = _fold(self.lemmas.text[1:-1]).split("\n")
            made = set()  # (lemma, its ending, the form's ending, the stem's last letter): each lemma once a change
            for form, lemma in zip(self.folded.text[1:-1].split("\n"), lemmas):
                p = len(commonprefix((form, lemma)))
                # a form may end where its lemma's stem does (vakcín of vakcína, žen of žena), not be the lemma
                if p > PREFIX and len(lemma) - p <= 2 and len(form) - p <= 3 and form != lemma and (
                        form + lemma).isalpha():
                    made.add((lemma, lemma[p:], form[p:], lemma[p - 1]))
            after = defaultdict(set)
            for _l, was, becomes, letter in made:
                after[was, becomes].add(letter)
            floor, changes = CHANGE_SHARE * len(set(lemmas)), defaultdict(list)
            for (was, becomes), n in Counter((was, becomes) for _l, was, becomes, _c in made).most_common():
                if n >= floor:
                    changes[becomes].append((was, frozenset(after[was, becomes])))  # the most made first
            self._changes = dict(changes)
        return self._changes

    def forms_of(self, lemma: str) -> set[str]:
        return {self.forms.line(i) for i in self.lemmas.find(lemma)} | {lemma}

    def _analogs(self) -> dict[str, list[str]]:
        """Per last three letters, the lemmas with the most forms in the dictionary (fullest paradigms first)."""
        if self._by_ending is None:
            from collections import defaultdict

            by_ending = defaultdict(list)
            for lemma, n in Counter(self.lemmas.text[1:-1].split("\n")).items():
                if len(lemma) > PREFIX + 1 and lemma.isalpha():
                    by_ending[lemma[-PREFIX:]].append((n, lemma))
            self._by_ending = {end: [lemma for _n, lemma in sorted(v, reverse=True)[:ANALOGS]]
                               for end, v in by_ending.items()}
        return self._by_ending

    def analog_forms(self, lemma: str) -> set[str]:
        """The forms of ``lemma`` by analogy with the lemmas that end as it does and have the fullest paradigms: each
        analog's form is its lemma with the ending changed (*žena* -> *ženou*), and the same change made to ``lemma``
        is kept where at least half the analogs make it. Wiktionary lists two forms of *vakcína*; its analogs give
        the other eight (*vakcínu*, *vakcínou*, *vakcín*...)."""
        analogs = [a for a in self._analogs().get(lemma[-PREFIX:], []) if a != lemma]
        votes: dict[str, int] = {}
        for analog in analogs:
            for form in self.forms_of(analog):
                same = 0
                while same < min(len(analog), len(form)) and analog[same] == form[same]:
                    same += 1
                if lemma.endswith(analog[same:]) and len(lemma) - (len(analog) - same) >= PREFIX:
                    made = lemma[:len(lemma) - (len(analog) - same)] + form[same:]
                    votes[made] = votes.get(made, 0) + 1
        return {form for form, n in votes.items() if 2 * n >= len(analogs)}


_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _dictionary(lang: str) -> Dictionary:
    return Dictionary(lang)


def dictionary(lang: str) -> Dictionary:
    """The language's dictionary, read once per process (about a second for Czech), one reader at a time."""
    with _LOCK:
        return _dictionary(lang)


def warm(lang: str) -> None:
    """Read the language's dictionary, its table of analogs and its changes of ending now (a server's thread, while
    the user types)."""
    book = dictionary(lang)
    book._analogs()
    book.ending_changes()


def paradigm(word: str, lang: str, diacritics_insensitive: bool = True) -> tuple[set[str], set[str]]:
    """(the dictionary's forms of ``word``'s lemmas, those their analogs lend: :meth:`Dictionary.analog_forms`),
    lower-cased, letters only, each beginning with the word's first three letters (case and diacritics aside).
    A word the dictionary does not know is taken as its own lemma."""
    typed, listed, made = _fold(word), set(), set()
    book = dictionary(lang)
    for lemma in book.lemmas_of(word, diacritics_insensitive) or {word.lower()}:
        listed |= book.forms_of(lemma)
        made |= book.analog_forms(lemma)
    kept = lambda forms: {f for f in forms if f.isalpha() and _fold(f)[:PREFIX] == typed[:PREFIX]}  # noqa: E731
    return kept(listed), kept(made)


def unlisted_forms(words, texts_with, lang: str) -> dict[str, str]:
    """Words the dictionary does not list (names, new words, English in Czech texts), each -> the word of the same
    corpus it is a form of by one of the dictionary's changes of ending (:meth:`Dictionary.ending_changes`):
    ``babise``, ``babisovi``, ``babisem`` -> ``babis``; ``okamury`` -> ``okamura``; ``plugins`` -> ``plugin``;
    ``vakcin`` (the dictionary lists two forms of *vakcína*) -> ``vakcina``.

    ``words``: a corpus's words, folded (each as its lemma where the dictionary lists it:
    :meth:`Dictionary.lemma_map`); ``texts_with``: how many texts hold each. A word of four letters or more joins one
    word it can be a form of: a lemma of the dictionary where there is one (the changes are a lemma's; ``dale``,
    *further*, is not made a form of ``dala``, *she gave*, a form of *dát*), else the word in most texts; two words
    the dictionary lists are never made one (``stani`` may be a form of ``stat`` or of ``stan``; they stay apart). A
    group of words the dictionary does not list is named by the one most of its words can be a form of (a name's
    first case: ``twitter``, though ``twitteru`` is in more texts), then the one in most texts. Two words the dictionary
    does not list are joined by a change it makes after the same letter, by any change after a letter it seldom
    changes after (``enyaqa`` of ``enyaq``), or as two forms of a third (``globalistu``, ``globalistum``); ``welt`` is
    no form of ``well``. A function word is a form only of another."""
    if not supported(lang):
        return {}
    book = dictionary(lang)
    changes = book.ending_changes()
    headwords = set(_fold(book.lemmas.text[1:-1]).split("\n"))
    listed = headwords | set(book.folded.text[1:-1].split("\n"))
    n = dict(zip(words, (int(k) for k in texts_with)))
    after = Counter(c for ends in changes.values() for _was, letters in ends for c in letters)
    seldom = SELDOM * sum(map(len, changes.values()))  # fewer changes made after a letter than this: seldom
    # a function word is a form only of another (thats of that): dále (further) is none of daly (they gave)
    function_words = {_fold(w) for w in languages.stop_lists().get(lang, ())}
    parent: dict[str, str] = {}
    has_listed: dict[str, bool] = {}

    def root(w: str) -> str:
        while w in parent:
            w = parent[w]
        return w

    def bases_of(w: str) -> dict[str, bool]:  # the corpus's words that w can be a form of -> by a change the
        # dictionary makes after the same letter (a lemma's form: babiš -> babiše) or not.
        # A lemma of the dictionary takes a form only by a change it makes after the same letter (zdar takes no
        # zdarma, krýt no krym); a word it does not list takes one by such a change too, or by any change after a
        # letter it seldom changes after (enyaqa of enyaq, szijjartoem of szijjarto), or where both are forms of a
        # third word by such changes (globalistů, globalistům of *globalista*); not well and welt, loss and lost
        made = made_from(w)
        own = lemmas_in(made)
        return {b: seen for b, (seen, rare) in made.items() if b != w and len(b) > PREFIX and b in n and (
            seen if b in headwords else b not in listed and (seen or rare or own & lemmas_in(made_from(b)))) and (
            w not in function_words or b in function_words)}

    def made_from(w: str) -> dict[str, tuple[bool, bool]]:  # what w can be a form of -> (by a change made after
        # the same letter, after a letter the dictionary seldom changes after)
        made: dict[str, tuple[bool, bool]] = {}
        for k in (0, 1, 2, 3):  # k = 0: vakcin -> vakcina
            if len(w) - k >= PREFIX:
                for was, letters in changes.get(w[len(w) - k:], ()):
                    base, letter = w[:len(w) - k] + was, w[len(w) - k - 1]
                    seen, rare = made.get(base, (False, False))
                    made[base] = seen or letter in letters, rare or after[letter] < seldom
        return made

    def lemmas_in(made: dict[str, tuple[bool, bool]]) -> set[str]:  # of a word's made_from: the words, in the
        # corpus or not, it is a form of by a change made after the same letter
        return {b for b, (seen, _rare) in made.items() if seen and len(b) > PREFIX}

    unlisted = sorted((w for w in n if w not in listed and len(w) > PREFIX and w.isalpha()), key=lambda w: (-n[w], w))
    for w in unlisted:
        for base in sorted(bases_of(w), key=lambda b: (b not in listed, -n[b], b)):
            a, b = root(w), root(base)
            if a == b:
                break
            listed_a, listed_b = has_listed.get(a, a in listed), has_listed.get(b, b in listed)
            if listed_a and listed_b:
                continue
            keep, join = (a, b) if listed_a or (not listed_b and (-n[a], a) < (-n[b], b)) else (b, a)
            parent[join], has_listed[keep] = keep, listed_a or listed_b
            break
    groups: dict[str, list[str]] = {}
    for w in parent:
        groups.setdefault(root(w), []).append(w)
    out = {}
    for head, words in groups.items():
        if head not in listed:  # named by the word the others are forms of as a lemma's: "twitter", not "twitteru"
            # in more texts; "universum", not "universu" (no lemma ends in -u and takes -m)
            words = [head, *words]
            named = Counter(b for w in words for b, seen in bases_of(w).items() if seen and b in words)
            head = max(words, key=lambda w: (named[w], n[w], w == head, w))
        out.update({w: head for w in words if w != head})
    return out


@lru_cache(maxsize=4096)
def other_forms(word: str, lang: str, diacritics_insensitive: bool = True) -> list[str]:
    """The forms of ``word`` (:func:`phrase_forms`) other than those a substring search for it finds anyway, in the
    same order: ``volby`` (cs) -> ``volba``, ``volbo``, ``volbu``, ... ``volbách``. [] where the language has no
    dictionary or the word is short, not a word, or has no other form."""
    same = _fold if diacritics_insensitive else str.lower
    return [f for f in phrase_forms(word, lang, diacritics_insensitive) if same(word) not in same(f)][:MAX_FORMS]


@lru_cache(maxsize=4096)
def phrase_forms(word: str, lang: str, diacritics_insensitive: bool = True) -> tuple[str, ...]:
    """The other forms of a word of a phrase. A phrase's forms are searched as whole words, so unlike
    :func:`other_forms` these keep the forms that hold the word (``soudu`` of ``soud``, ``státního`` of
    ``státní``). The forms of the lemmas of the word as typed come first (``státní``'s before those of ``statný``,
    which reads the same without diacritics), then by length. A word the dictionary does not know, a name
    (``Andrej``, ``Babiš``), takes the forms the dictionary's changes of ending make of it
    (:meth:`Dictionary.ending_changes`: ``Andreje``, ``Andrejem``, ``Andrejovi``...), for the keyword search to keep
    those the corpus holds. () where the language has no dictionary or the word is short or not a word."""
    if len(word) < PREFIX or not word.isalpha() or not supported(lang):
        return ()
    book, w = dictionary(lang), word.lower()
    listed, made = paradigm(word, lang, diacritics_insensitive)
    exact = {f for lemma in book.lemmas_of(word, False) for f in book.forms_of(lemma)}
    if not book.lemmas_of(word, diacritics_insensitive):  # unknown to the dictionary: its endings' forms
        made |= {w[:len(w) - len(was)] + becomes for becomes, wases in book.ending_changes().items()
                 if becomes for was, _after in wases if w.endswith(was) and len(w) - len(was) >= PREFIX}  # a stem
        # alone: none; after any letter (wider than unlisted_forms joins two words for Suggest: a keyword's forms
        # are offered, and the message names those that found texts)
    kept = (listed | made) - {w}
    return tuple(sorted(kept, key=lambda f: (f not in exact, f not in listed, len(f), f))[:3 * MAX_FORMS])


def expand(query: str, lang: str, diacritics_insensitive: bool = True,
           present: Callable[[set[str]], set[str]] | None = None) -> tuple[list[str], list[str]]:
    """(the phrases to search as whole words besides ``query`` itself, the forms added), for a plain
    (not regular-expression) query of one or more words: each word in any of its forms, the phrase's
    words in the order typed. ([], []) where no word has another form. A phrase's words take their
    :func:`phrase_forms`, and its combinations are capped at the keyword search's limits (alternatives and
    characters), taking fewer forms of each word. Where the cap would leave forms out, ``present`` (given the forms,
    folded, it returns those the corpus holds: the keyword search looks them up) keeps the forms the corpus holds
    first."""
    from core.search.keyword import MAX_BRANCHES, MAX_QUERY_CHARS, fold  # the keyword search's own limits

    words = query.split()
    if not words:
        return [], []
    if len(words) == 1:
        options = [[words[0]] + other_forms(words[0], lang, diacritics_insensitive)]
    else:
        options = [[w, *phrase_forms(w, lang, diacritics_insensitive)] for w in words]
    # a phrase keeps the first forms of each word: per_word ** len(words) <= the limit, the query as typed included
    per_word = max(1, int((MAX_BRANCHES - 1) ** (1 / len(words))))
    if present is not None and len(words) > 1 and (  # the whole product only where it is small
            math.prod(map(len, options)) > MAX_BRANCHES or len(_alternatives(_phrases(options))) > MAX_QUERY_CHARS):
        held = present({fold(f) for o in options for f in o[1:]})
        options = [o[:1] + [f for f in o[1:] if fold(f) in held] for o in options]
    while True:
        cut = [o[:per_word] for o in options]
        phrases = [p for p in _phrases(cut) if p != " ".join(words)]
        if per_word == 1 or len(_alternatives(phrases)) <= MAX_QUERY_CHARS:
            break
        per_word -= 1
    added = sorted({f for opts in cut for f in opts[1:]})
    if not added:
        return [], []
    return phrases, added


def _phrases(options: list[list[str]]) -> list[str]:
    return [" ".join(p) for p in product(*options)]


def _alternatives(phrases: list[str]) -> str:
    return "|".join(r"\b" + re.escape(p) + r"\b" for p in phrases)


def pattern(query: str, lang: str, case_insensitive: bool = True, diacritics_insensitive: bool = True,
            present: Callable[[set[str]], set[str]] | None = None) -> tuple[str | None, list[str]]:
    """(a regular expression that matches the other forms as whole words, the forms added), for the keyword
    search to run beside the query as typed; (None, []) where there are none. Under Match case each form
    takes the typed word's case (all capitals, or a capital first letter). ``present``: as :func:`expand`."""
    phrases, added = expand(query, lang, diacritics_insensitive, present)
    if not phrases:
        return None, []
    if not case_insensitive:
        phrases = [_cased(p, query) for p in phrases]
    return _alternatives(phrases), added


def _cased(phrase: str, typed: str) -> str:
    out = []
    for form, word in zip(phrase.split(" "), typed.split()):
        out.append(form.upper() if word.isupper() and len(word) > 1 else
                   form[:1].upper() + form[1:] if word[:1].isupper() else form)
    return " ".join(out)
