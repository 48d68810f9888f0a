"""The main languages of a corpus (offline: simplemma's word-list detector on a sample) and
whether the chosen embedding models cover them."""

from __future__ import annotations

import json
import logging
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import regex

from core.atomic import save_json

log = logging.getLogger(__name__)

# simplemma keeps only a few dictionaries cached: detecting among many languages reloads them
# endlessly; these are the languages of the corpora this tool was built for
CANDIDATES = ("cs", "en", "de")
NAMES = {"cs": "Czech", "en": "English", "de": "German", "unknown": "unknown"}
# Other languages a text may be written in, told by their function words (stopwords-iso's lists; simplemma
# lemmatises each): a Spanish or Italian corpus came out as English and German before, and got the English model
OTHER = ("es", "it", "pt", "fr", "nl", "pl", "sk", "ru", "uk", "sv", "da", "fi", "hu", "ro", "tr", "id", "tl", "el",
         "bg", "ca")
NAMES.update({"es": "Spanish", "it": "Italian", "pt": "Portuguese", "fr": "French", "nl": "Dutch", "pl": "Polish",
              "sk": "Slovak", "ru": "Russian", "uk": "Ukrainian", "sv": "Swedish", "da": "Danish", "fi": "Finnish",
              "hu": "Hungarian", "ro": "Romanian", "tr": "Turkish", "id": "Indonesian", "tl": "Tagalog",
              "el": "Greek", "bg": "Bulgarian", "ca": "Catalan"})
_NOT_WORDS = regex.compile(r"https?://\S+|www\.\S+|@\w+|#\w+")
_WORD = regex.compile(r"\p{L}+")
# Twitter's markup that is no language's word: a retweet's "RT name:", handles written without their @
# (realDonaldTrump, TheGreatFeather: camel case) and tokens with digits (2Chron169); simplemma read them as Czech
_MARKUP = regex.compile(r"\b(?:RT|RR|MT)\b(?:\s+\w+:)?|\b\w*\p{Ll}\p{Lu}\w*|\b\w*\d\w*")
_CYRILLIC, _GREEK, _LATIN = (regex.compile(rf"\p{{{script}}}") for script in ("Cyrillic", "Greek", "Latin"))
_UKRAINIAN_LETTERS = regex.compile(r"[іїєґІЇЄҐ]")
# Czech function words of 5+ letters, case and diacritics folded (no offline library has a Czech stop
# list: issue 16). Only for choosing example words, where one such word makes a poor example.
CS_FUNCTION_WORDS = frozenset("""
ackoli aspon byste bylo byla byly bysme chceme chtel jakmile jakou jakoz jeden jedna jedno jejich jeste
jestli jiste jsem jsme jsou jste kazdy kdyby kdyz ktera ktere kteri kterou ktery kterym kterych mezitim
misto mnohem muzeme muzete nebot nejen neco nekdo nemame nemuze neni nikdo nyni obcas opravdu pouze prave
proc pokud porad protoze proto prostrednictvim prece pres protoze sice stale takze taky takove takovy
tento tohle tomto tuto tyto vsech vsechno vsichni vzdyt zatim zcela proti podle kolem okolo behem diky vedle
""".split())


@lru_cache(maxsize=1)
def stop_lists() -> dict[str, frozenset[str]]:
    """stopwords-iso's function-word list of each of its languages, read once per process (0.3 s): the
    detection here, and key lemmas' function words (core.cluster.keyterms), use them."""
    import stopwordsiso

    return {lang: frozenset(stopwordsiso.stopwords(lang)) for lang in sorted(stopwordsiso.langs())}


def other_language(text: str, candidates: tuple[str, ...] = CANDIDATES, other: tuple[str, ...] = OTHER) -> str | None:
    """The language of ``other`` a text is written in, when its words (links, mentions and hashtags left out) are
    that language's function words at least twice and more often than any candidate's; else None. Measured on
    400 tweets of each of the crisis corpus's events: 83% of the Venezuelan refinery's found Spanish, 69%
    of Sardinia's floods Italian, 51% of the Brazilian fire Portuguese; 0-4% of the English events' and 1% of
    Czech politicians' tweets went to another language."""
    return _by_function_words(_WORD.findall(_NOT_WORDS.sub(" ", text).lower()), candidates, other)


def _by_function_words(words: list[str], candidates: tuple[str, ...], other: tuple[str, ...]) -> str | None:
    """:func:`other_language` of a text's lower-cased words."""
    lists = stop_lists()
    if len(words) < 2:
        return None
    hits = {lang: sum(w in lists[lang] for w in words) for lang in (*candidates, *other) if lang in lists}
    best = max((lang for lang in other if lang in hits), key=hits.get, default=None)
    if best is None or hits[best] < 2 or hits[best] <= max((hits.get(c, 0) for c in candidates), default=0):
        return None
    return best


# What detect() knows: 1, Czech, English and German only (imports before 2026-11-29: a Spanish corpus came out English
# and German); 2, also the languages of OTHER by their function words; 3, links, mentions and hashtags left out of
# simplemma's reading too ("https", "t.co" and Title Case headlines read as German: the scale corpus's English troll
# tweets came out 58% English, 38% German); 4, the alphabet too (Russian headlines without function words came out
# unknown or Czech), Twitter's markup left out ("RT name:", handles without @), and a text two candidates fit as well
# ("Wow.") given to the corpus's more common one, not to Czech: the scale corpus's texts agree with Twitter's own
# tags 96.1% -> 97.3%, Russian ones 71% -> 95% (python -m bench.languages). A corpus's manifest records its
# import's.
EDITION = 4


def sample_rows(n: int, sample: int = 400, seed: int = 0) -> np.ndarray:
    """The rows :func:`detect` reads of ``n`` texts: the same for the same seed, at import and after."""
    return np.random.default_rng(seed).choice(n, min(sample, n), replace=False)


FILE = "languages.json"  # an older import's languages by today's detection, in its data folder


def kept_or_detected(data: Path, texts, seed: int = 0) -> dict[str, float]:
    """An older import's languages by today's detection (an import before 2026-11-29 took a Spanish corpus for
    English and German: the wrong lemmas for its topics, and no warning that its English-only model fits it
    poorly): read from :data:`FILE` in its data folder, else detected on the import's own sample rows of ``texts``
    (its text column: only those rows are read) and saved there."""
    f = Path(data) / FILE
    if f.exists():
        try:
            kept = json.loads(f.read_text(encoding="utf-8"))
            if kept["edition"] == EDITION and all(isinstance(v, float) and 0 <= v <= 1
                                                  for v in kept["shares"].values()):
                return kept["shares"]
            log.info("%s holds an older detection's languages; detecting them again", f)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("%s is unreadable (%s); detecting the languages again", f, exc)
    shares = shares_of([str(t) for t in texts.take(sample_rows(len(texts), seed=seed)).tolist()])
    try:
        save_json(f, {"edition": EDITION, "shares": shares}, cache=True)
    except OSError as exc:  # a read-only data root: detected again in the next process
        log.warning("could not save the languages to %s (%s)", f, exc)
    return shares


def detect(texts: Sequence[str], sample: int = 400, seed: int = 0,
           candidates: tuple[str, ...] = CANDIDATES) -> dict[str, float]:
    """Share of sampled texts per language, largest first: one of :data:`OTHER` where its function words
    outnumber the candidates' (:func:`other_language`), else simplemma's choice among ``candidates`` from its words
    without links, mentions and hashtags (``unknown`` when none fits: a text of links only)."""
    if not len(texts):
        return {}
    return shares_of([str(texts[i]) for i in sample_rows(len(texts), sample, seed)], candidates)


def shares_of(texts: Sequence[str], candidates: tuple[str, ...] = CANDIDATES) -> dict[str, float]:
    """Share of these texts (a sample, :func:`sample_rows`) per language, largest first (:func:`detect`). A text
    that two candidates fit as well ("Wow.") counts for the one more of the other texts are in."""
    if not len(texts):
        return {}
    readings = [_reading(text, candidates) for text in texts]
    votes = Counter(r for r in readings if isinstance(r, str))
    prior = [lang for lang, _ in votes.most_common()]  # a tie goes to the language more of the corpus is in
    votes.update(_resolved(r, prior) for r in readings if not isinstance(r, str))
    total = sum(votes.values())
    return {lang: round(n / total, 3) for lang, n in votes.most_common()}


def language_of(text: str, candidates: tuple[str, ...] = CANDIDATES, prior: Sequence[str] = ()) -> str:
    """One text's language: one of :data:`OTHER` where its function words outnumber the candidates'
    (:func:`other_language`); else the one its alphabet tells (:func:`script_language`); else simplemma's choice
    among ``candidates`` from its words without links, mentions, hashtags and Twitter's markup (:data:`_MARKUP`).
    Where candidates fit as well as each other ("Wow.", "Amen"), the first of them in ``prior`` (the corpus's
    languages, most common first), else ``unknown``, as for a text no candidate fits (links only)."""
    return _resolved(_reading(text, candidates), prior)


def _resolved(reading: str | tuple[str, ...], prior: Sequence[str]) -> str:
    """A reading (:func:`_reading`) as one language: of tied candidates, the first in ``prior``, else unknown."""
    if isinstance(reading, str):
        return reading
    return next((lang for lang in prior if lang in reading), "unknown")


def _reading(text: str, candidates: tuple[str, ...]) -> str | tuple[str, ...]:
    """A text's language, or the candidates that fit it equally well (:func:`language_of`)."""
    from simplemma import langdetect

    stripped = _NOT_WORDS.sub(" ", text)
    other = _by_function_words(_WORD.findall(stripped.lower()), candidates, OTHER)
    if other:
        return other
    # markup left out after the function-word step, not before: English's list holds "rt" (tried before it: 3.7%
    # of the Italian earthquakes' tweets went Polish)
    words = _MARKUP.sub(" ", stripped)
    script = script_language(words)
    if script:
        return script
    found = [(lang, score) for lang, score in langdetect(words, lang=candidates) if lang != "unk"]
    if not found or found[0][1] <= 0:
        return "unknown"
    tied = tuple(lang for lang, score in found if score == found[0][1])
    return tied[0] if len(tied) == 1 else tied


def script_language(words: str) -> str | None:
    """The language told by a text's alphabet where most of its letters are Cyrillic (Ukrainian where it has
    Ukrainian-only letters, else Russian) or Greek, for texts without function words to tell (headlines); else
    None. simplemma among Czech, English and German read Cyrillic as none of them or as Czech."""
    cyrillic, greek, latin = (len(pattern.findall(words)) for pattern in (_CYRILLIC, _GREEK, _LATIN))
    if cyrillic > latin + greek:
        return "uk" if _UKRAINIAN_LETTERS.search(words) else "ru"
    if greek > latin + cyrillic:
        return "el"
    return None


def main_language(shares: dict[str, float]) -> str:
    """The most common detected language; English when nothing was recognised."""
    known = [lang for lang in shares if lang != "unknown"]
    return known[0] if known else "en"


def describe(shares: dict[str, float]) -> str:
    """The shares as a reader takes them: "Spanish 83%, English 13%; 2 more under 0.5%" (none reads "0%")."""
    shown = {lang: share for lang, share in shares.items() if share >= 0.005}
    rest = len(shares) - len(shown)
    return (", ".join(f"{NAMES.get(lang, lang)} {share:.0%}" for lang, share in shown.items())
            + (f"; {rest} more under 0.5%" if rest else ""))


HOW = ("Detected on 400 texts sampled at import, each by its words without links, mentions, hashtags and retweet "
       "markup (core/languages.py). 'unknown': a text with no word to tell its language by (links and hashtags "
       "only, an emoji) or written in an alphabet other than Latin, Cyrillic and Greek.")  # the Home page's help


def of_corpus(corpus, fallback: str = "auto") -> str:
    """A corpus's main language (``corpus.languages``: its import's detection, or today's where that was older),
    so that key lemmas need not detect it again (loading three languages' dictionaries: ~2.5 s the first time in
    a process); ``fallback`` for a corpus without texts."""
    shares = corpus.languages
    return main_language(shares) if shares else fallback


def warnings_of(corpus) -> list[str]:
    """A corpus's warnings as its Home page shows them: its import's; where its languages were detected again
    (``corpus.languages``: an older import), the import's language warning made again from them. A Spanish corpus
    that an import knowing only Czech, English and German took for English is warned of, and an import that read
    links as German no longer warns of German texts."""
    m = corpus.manifest
    said = list(m.get("warnings", []))
    if not corpus.languages_detected_again or "vectors" in m:  # brought vectors: the import chose no model
        return said
    warning = coverage_warning(corpus.languages, [model["name"] for model in m["models"]])
    return [w for w in said if ENGLISH_ONLY not in w] + (
        [warning + " (Detected again: this corpus's import used an older detection.)"] if warning else [])


def choose_models(requested: list[str], shares: dict[str, float]) -> list[str]:
    """Resolve ``auto``: the packaged English model for English corpora, the packaged
    multilingual one otherwise."""
    from core.embed import DEFAULT_MODEL, MULTILINGUAL_MODEL

    auto = DEFAULT_MODEL if main_language(shares) == "en" else MULTILINGUAL_MODEL
    return [auto if m == "auto" else m for m in requested]


ENGLISH_ONLY = "the embedding model is English-only"  # how a language warning is told from any other


def coverage_warning(shares: dict[str, float], models: list[str], threshold: float = 0.3) -> str | None:
    """A warning when every model is English-only and at least ``threshold`` of the texts look
    like another language; None otherwise (models we do not know are assumed to cover it)."""
    from core.embed import MODEL_LANGUAGES, MULTILINGUAL_MODEL

    if not models or any(MODEL_LANGUAGES.get(m, None) is None for m in models):
        return None
    other = {lang: s for lang, s in shares.items() if lang not in ("en", "unknown")}
    if sum(other.values()) < threshold:
        return None
    lang, share = max(other.items(), key=lambda t: t[1])
    return (f"{round(100 * share)}% of texts look {NAMES.get(lang, lang)}, but {ENGLISH_ONLY}: "
            f"semantic search will work poorly. Use the model {MULTILINGUAL_MODEL!r} (or 'auto').")
