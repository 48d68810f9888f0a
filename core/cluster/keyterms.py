"""Key lemmas of clusters: tokenise, drop URLs/@mentions/numbers, lowercase, lemmatise with
simplemma, then rank per cluster by the original rule and by class-based TF-IDF."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import regex
import scipy.sparse as sp

from core.languages import CANDIDATES as LANGS

URL = regex.compile(r"https?://\S+|www\.\S+")
MENTION = regex.compile(r"@\w+")
TOKEN = regex.compile(r"[\p{L}][\p{L}\p{M}'’-]*")  # words start with a letter: numbers are dropped


def detect_language(texts: Sequence[str], candidates: tuple[str, ...] = LANGS, sample: int = 500,
                    seed: int = 0) -> str:
    """The most common language of a sample of texts (English when none is recognised)."""
    from core import languages

    return languages.main_language(languages.detect(texts, sample, seed, candidates))


class Lemmatiser:
    """Token -> lemma with a cache (a corpus repeats its words a lot)."""

    def __init__(self, lang: str):
        self.lang = lang
        self._cache: dict[str, str] = {}

    def __call__(self, token: str) -> str:
        lemma = self._cache.get(token)
        if lemma is None:
            from simplemma import lemmatize

            lemma = lemmatize(token, lang=self.lang).lower()
            self._cache[token] = lemma
        return lemma


def lemmas(text: str, lemmatise: Lemmatiser) -> list[str]:
    text = MENTION.sub(" ", URL.sub(" ", text)).lower()
    return [lemmatise(t) for t in TOKEN.findall(text) if len(t) > 1]


@dataclass
class KeyTerms:
    table: pd.DataFrame  # cluster, size, mean_len, rule_terms, ctfidf_terms, sample_text
    lang: str


def count_matrix(docs: list[list[str]], labels: np.ndarray, k: int) -> tuple[sp.csr_matrix, list[str]]:
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for doc, lab in zip(docs, labels):
        for lem in doc:
            j = vocab.setdefault(lem, len(vocab))
            rows.append(int(lab))
            cols.append(j)
    m = sp.csr_matrix((np.ones(len(rows), np.float64), (rows, cols)), shape=(k, len(vocab)))
    m.sum_duplicates()
    return m, list(vocab)


def key_terms(texts: Sequence[str], labels: np.ndarray, lang: str = "auto", top: int = 10,
              min_count: int = 10, frequent: int = 300, stop_top: int = 100, seed: int = 0) -> KeyTerms:
    """Per cluster: the original rule (lemmas used >= ``min_count`` times in the cluster that are
    not among the corpus's ``frequent`` most frequent lemmas) and c-TF-IDF (BERTopic's weighting:
    frequency in the cluster x log(1 + mean words per cluster / frequency in the corpus)). The
    corpus's ``stop_top`` most frequent lemmas (function words, in any language) are left out of
    the c-TF-IDF ranking too: with few or large clusters they would otherwise top it."""
    labels = np.asarray(labels)
    k = int(labels.max()) + 1 if len(labels) else 0
    lang = detect_language(texts, seed=seed) if lang == "auto" else lang
    lem = Lemmatiser(lang)
    docs = [lemmas(str(t), lem) for t in texts]
    counts, vocab = count_matrix(docs, labels, k)
    vocab_arr = np.array(vocab, dtype=object)
    total = np.asarray(counts.sum(0)).ravel()
    by_freq = np.argsort(-total, kind="stable")
    common = set(by_freq[:frequent].tolist())
    stop = by_freq[:stop_top]
    per_cluster_words = np.asarray(counts.sum(1)).ravel()
    tf = sp.diags(1 / np.maximum(per_cluster_words, 1)) @ counts
    idf = np.log(1 + per_cluster_words.mean() / np.maximum(total, 1))
    ctfidf = (tf @ sp.diags(idf)).tocsr()
    counts = counts.tocsr()
    sizes = np.bincount(labels, minlength=k)
    lengths = np.bincount(labels, weights=[len(str(t)) for t in texts], minlength=k)
    first = pd.Series(np.arange(len(labels))).groupby(labels).first()
    rule, best = [], []
    for c in range(k):
        row = counts.getrow(c)
        idx, val = row.indices, row.data
        keep = [(v, i) for i, v in zip(idx, val) if v >= min_count and i not in common]
        keep.sort(key=lambda t: (-t[0], vocab[t[1]]))
        rule.append([vocab[i] for _, i in keep[:top]])
        crow = ctfidf.getrow(c)
        ok = ~np.isin(crow.indices, stop)
        data, ind = crow.data[ok], crow.indices[ok]
        order = np.argsort(-data, kind="stable")[:top]
        best.append(vocab_arr[ind[order]].tolist())
    table = pd.DataFrame({
        "cluster": np.arange(k), "size": sizes, "mean_len": np.round(lengths / np.maximum(sizes, 1), 1),
        "rule_terms": rule, "ctfidf_terms": best,
        "sample_text": [str(texts[first[c]]) if c in first.index else "" for c in range(k)],
    })
    return KeyTerms(table, lang)
