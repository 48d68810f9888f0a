"""Key lemmas with and without a rule, on a stored clustering of an imported corpus, both computed in the same run:
the corpus language's function words (stopwords-iso; ``--against function_words``, the default) or the floor of
texts a c-TF-IDF key lemma must be written in (``--against min_texts``: 1, no floor, against ``MIN_TEXTS``) or the
corpus's most frequent lemmas kept where a few clusters hold them (``--against concentrated``: 0, every one of them
left out, against ``CONCENTRATED``) or English verbs' lemmas in today's spelling (``--against modern``: simplemma's
"playe" and "thinke" against "play" and "think").

    python -m precompute.embed ../shared/data/czech_politicians_tweets_2021.csv --name cz
    python -m precompute.cluster --corpus cz --method kmeans --k 78
    python -m bench.keyterms --corpus cz --clustering kmeans-k78 [--repeat 3] [--against min_texts]
    python -m bench.keyterms --corpus so --clustering kmeans-k100 --against concentrated --class-column label_name

Per ranking (the original rule, c-TF-IDF), over every cluster's top ``--top`` lemmas:
- ``specificity``: the share of the corpus's texts holding the lemma that lie in the cluster it names,
  averaged over lemmas and clusters (a lemma that names a topic is used mostly inside it; "tam" is not);
- ``spread``: the share of key lemmas that are key lemmas of 5 or more clusters;
- ``empty``: clusters the rule names with no lemma at all;
- ``lone``: the share of key lemmas written in fewer than ``MIN_TEXTS`` of their cluster's texts;
- ``coverage``: the share of a cluster's texts that hold at least one of its key lemmas, averaged over clusters;
- ``twins``: clusters whose key lemmas hold two words of one Czech stem ("babiš", "babiše");
- ``unaccented``: key lemmas written without the diacritics of another of the corpus's lemmas ("diky" beside
  "díky");
- ``fragments``: key lemmas that are a piece of a word: one written after a digit more often than alone ("th" of
  "4th", "nd" of "2nd"), one ending in a quote or hyphen ("knee’", "covid-"), or a possessive or contraction
  ("mueller’s", "you're") -- read off the raw texts, so the same for every version of the tokeniser;
- ``old_spellings``: English key lemmas that are an old spelling of a verb ("playe", "thinke":
  ``keyterms.old_spelling``) written less often than the verb's -ing and -ed forms (German "ende" and
  Portuguese "boate" are words of their own; a tweet cut at "playe…" is not);
- ``named`` (with ``--class-column``, a labelled corpus): the share of clusters whose key lemmas hold a word of their
  most common class's name (StackOverflow's tag "haskell", CrisisLex's "2012_Colorado_wildfires": colorado, wildfire);
- ``seconds``: the whole key-lemma computation, median of ``--repeat`` runs.
Also prints how many clusters' lemmas changed, and the largest of them side by side, for a reader to judge.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter

import numpy as np
import pandas as pd
import regex

from core import languages
from core.cluster import store
from core.cluster.keyterms import (CONCENTRATED, MENTION, MIN_TEXTS, URL, Lemmatiser, key_terms, lemmatised,
                                   old_spelling, tokens)
from core.corpus import load_corpus
from core.search.keyword import fold
from testbed.common import emit, run_folder


ENDING = regex.compile(r"(?:['’-]|['’](?:s|m|re|ll|ve|d))$")
# Czech case and number endings, longest first: the ``twins`` measure takes two key lemmas of a cluster that differ
# only in one of these as two forms of one word ("babiš", "babiše"). A measure only: key lemmas join such forms by
# the dictionary's own changes of ending (core.cluster.keyterms.merge_unknown).
CS_ENDINGS = sorted({"a", "e", "ě", "i", "o", "u", "y", "á", "é", "í", "ý", "ů", "ou", "em", "ům", "ech", "ách",
                     "ích", "ých", "ám", "ím", "ým", "ami", "ama", "emi", "ími", "ými", "ého", "ému", "ímu",
                     "ej", "ejch", "ejm", "ovi", "ové"}, key=len, reverse=True)


def _stem(word: str, endings=CS_ENDINGS, min_stem: int = 4) -> str:
    for e in endings:
        if word.endswith(e) and len(word) - len(e) >= min_stem:
            return word[: -len(e)]
    return word


def after_digits(texts: list[str]) -> set[str]:
    """Words written right after a digit more often than on their own ("th", "nd", "pm")."""
    glued, alone = Counter(), Counter()
    for t in texts:
        t = MENTION.sub(" ", URL.sub(" ", str(t))).lower()
        for m in regex.finditer(r"\p{L}[\p{L}\p{M}'’-]*", t):
            (glued if m.start() and t[m.start() - 1].isdigit() else alone)[m.group()] += 1
    return {w for w, n in glued.items() if n > alone[w]}


def class_words(names: np.ndarray, labels: np.ndarray, lem: Lemmatiser) -> dict[int, set[str]]:
    """Each cluster's most common class name as its words and their lemmas ("visual-studio": visual, studio)."""
    out = {}
    for c in np.unique(labels):
        name = pd.Series(names[labels == c]).value_counts().index[0]
        words = [w for w in regex.split(r"[^\p{L}]+", str(name).lower()) if len(w) > 2]
        out[int(c)] = {fold(f, case=False) for w in words for f in (w, lem(w))}
    return out


def quality(table, docs: list[list[str]], labels: np.ndarray, column: str, top: int, pieces: set[str],
            classes: dict[int, set[str]] | None = None, written: Counter | None = None) -> dict:
    holding: dict[str, np.ndarray] = {}
    per_doc = [set(d) for d in docs]
    wanted = {w for terms in table[column] for w in terms[:top]}
    for w in wanted:
        holding[w] = np.fromiter((w in d for d in per_doc), bool, len(per_doc))
    spec, cover, n, lone = [], [], 0, 0
    used = Counter(w for terms in table[column] for w in terms[:top])
    for c, terms in zip(table["cluster"], table[column]):
        terms = terms[:top]
        if not terms:
            continue
        inside = labels == c
        spec.append(np.mean([(holding[w] & inside).sum() / max(holding[w].sum(), 1) for w in terms]))
        cover.append(float(np.logical_or.reduce([holding[w] & inside for w in terms]).sum() / max(inside.sum(), 1)))
        lone += sum(int((holding[w] & inside).sum() < min(MIN_TEXTS, inside.sum())) for w in terms)
        n += len(terms)
    accented = {f for d in per_doc for w in d if (f := fold(w, case=False)) != w}
    shared = sum(1 for terms in table[column] for w in terms[:top] if used[w] >= 5)
    return {"specificity": round(float(np.mean(spec)), 4) if spec else None,
            "spread": round(shared / max(n, 1), 4), "lemmas": n, "lone": round(lone / max(n, 1), 4),
            "coverage": round(float(np.mean(cover)), 4) if cover else None,
            "unaccented": int(sum(w in accented for t in table[column] for w in t[:top])),
            "twins": int(sum(len({_stem(w) for w in t[:top]}) < len(t[:top]) for t in table[column])),
            "old_spellings": int(sum(old_spelling(w) and (written or {}).get(w, 0) < sum(
                (written or {}).get(w[:-1] + e, 0) for e in ("ing", "ed")) for t in table[column] for w in t[:top])),
            "fragments": int(sum(w in pieces or bool(ENDING.search(w)) for t in table[column] for w in t[:top])),
            "empty": int(sum(1 for terms in table[column] if not terms)),
            **({"named": round(float(np.mean([bool(classes[int(c)] & {fold(w, case=False) for w in t[:top]})
                                                for c, t in zip(table["cluster"], table[column])])), 4)}
               if classes else {})}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.keyterms", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, help="an imported corpus's name")
    p.add_argument("--clustering", required=True, help="a stored clustering's name, e.g. kmeans-k78")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--show", type=int, default=12, help="the largest changed clusters' lemmas printed side by side")
    p.add_argument("--class-column", help="a column of class names, for the `named` measure")
    p.add_argument("--against", choices=("function_words", "min_texts", "concentrated", "modern"),
                   default="function_words",
                   help="the rule measured: with it (on) against without it (off)")
    a = p.parse_args(argv)
    run_folder("keyterms", sys.argv if argv is None else ["bench/keyterms.py", *argv])
    corpus = load_corpus(a.corpus)
    labels = np.asarray(store.labels_for(corpus, a.clustering))
    texts = corpus.frame["text"].tolist()
    lang = languages.main_language(languages.detect(texts, sample=500, seed=0))  # as key_terms's "auto"
    runs: dict[bool, list[float]] = {False: [], True: []}
    tables = {}
    for i in range(a.repeat):
        for on in (False, True) if i % 2 == 0 else (True, False):
            t = time.perf_counter()
            rule = {"function_words": {"stop_words": on}, "min_texts": {"min_texts": MIN_TEXTS if on else 1},
                    "concentrated": {"concentrated": CONCENTRATED if on else 0}, "modern": {"modern": on}}[a.against]
            tables[on] = key_terms(texts, labels, lang=lang, **rule)
            runs[on].append(time.perf_counter() - t)
    # each table's lemmas as its texts were lemmatised ("playe" is held by no text lemmatised today's way)
    docs = {on: lemmatised(texts, Lemmatiser(lang, modern=on or a.against != "modern"))[0] for on in (False, True)}
    pieces = after_digits(texts)
    written = Counter(w for t in texts for w in tokens(str(t)))
    classes = (class_words(corpus.frame[a.class_column].astype(str).to_numpy(), labels, Lemmatiser(lang))
               if a.class_column else None)
    for on in (False, True):
        table = tables[on].table
        for column in ("rule_terms", "ctfidf_terms"):
            emit(op="keyterms", corpus=a.corpus, clustering=a.clustering, lang=lang, **{a.against: on},
                 ranking=column, top=a.top, **quality(table, docs[on], labels, column, a.top, pieces, classes, written))
        emit(op="keyterms_time", **{a.against: on}, seconds=round(statistics.median(runs[on]), 2),
             runs=[round(x, 2) for x in runs[on]])
    before, after = tables[False].table, tables[True].table
    changed = [c for c in before["cluster"] if before.loc[c, "ctfidf_terms"][:8] != after.loc[c, "ctfidf_terms"][:8]]
    emit(op="changed", clusters=len(changed), of=len(before))
    for c in before.loc[changed].sort_values("size", ascending=False)["cluster"].head(a.show):  # the largest changed
        emit(op="cluster", cluster=int(c), size=int(before.loc[c, "size"]),
             before=", ".join(before.loc[c, "ctfidf_terms"][:8]), after=", ".join(after.loc[c, "ctfidf_terms"][:8]))


if __name__ == "__main__":
    main()
