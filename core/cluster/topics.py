"""The topic browser's table: one row per cluster, and its filters."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.search.keyword import fold


def cluster_table(labels: np.ndarray, texts, terms: pd.DataFrame | None) -> pd.DataFrame:
    """cluster, size, mean_len, key lemmas (both rankings when computed), a sample text."""
    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    if terms is not None and len(terms) == k:
        t = terms.copy()
        t["rule_terms"] = t["rule_terms"].map(lambda v: ", ".join(v))
        t["ctfidf_terms"] = t["ctfidf_terms"].map(lambda v: ", ".join(v))
        if "frequent_words" in t.columns:  # older files lack it
            t["frequent_words"] = t["frequent_words"].map(lambda v: ", ".join(v))
        if "languages" in t.columns:  # another language the cluster is written in (older files lack it)
            t["languages"] = t["languages"].map(lambda v: ", ".join(v))
        if "forms" in t.columns:  # the word forms counted under each c-TF-IDF lemma (older files lack it)
            t["forms"] = t["forms"].map(lambda v: "; ".join(v))
        return t
    sizes = np.bincount(labels, minlength=k)
    # a column's own string lengths and only the sample rows read (10M texts as Python strings: seconds)
    texts = texts if isinstance(texts, pd.Series) else pd.Series(np.asarray(texts, dtype=object))
    lengths = np.bincount(labels, weights=texts.str.len().fillna(0).to_numpy(np.float64), minlength=k)
    first = pd.Series(np.arange(len(labels))).groupby(labels).first()
    sample = dict(zip(first.index, texts.take(first.to_numpy(np.int64)).tolist()))
    return pd.DataFrame({"cluster": np.arange(k), "size": sizes,
                         "mean_len": np.round(lengths / np.maximum(sizes, 1), 1),
                         "rule_terms": "", "ctfidf_terms": "",
                         "sample_text": [str(sample[c]) if c in sample else "" for c in range(k)]})


def filter_clusters(table: pd.DataFrame, size_range: tuple[int, int] | None = None, min_mean_len: float = 0,
                    lemma: str = "") -> pd.DataFrame:
    m = pd.Series(True, index=table.index)
    if size_range:
        m &= table["size"].between(*size_range)
    if min_mean_len:
        m &= table["mean_len"] > min_mean_len
    if lemma.strip():  # like keyword search: case- and diacritics-insensitive, a prefix of a lemma
        needle = fold(lemma.strip())
        # key lemmas, and the cluster's frequent words: a word common to the whole corpus (the demo's
        # "flood") is no key lemma anywhere but still names the clusters that use it most
        columns = [c for c in ("rule_terms", "ctfidf_terms", "frequent_words") if c in table.columns]
        terms = table[columns].astype(str).agg(", ".join, axis=1)
        m &= terms.map(lambda s: any(fold(w.strip()).startswith(needle) for w in s.split(",")))
    return table[m]


def with_group(table: pd.DataFrame, counts: np.ndarray) -> pd.DataFrame:
    """The cluster table with a group's texts in each cluster (``in_group``: counts per cluster, from
    ``core.cluster.evaluate.group_in_clusters``) and their share of the cluster's texts (``group_share``)."""
    out = table.copy()
    held = np.asarray(counts)[out["cluster"].to_numpy()]
    out["in_group"] = held
    out["group_share"] = held / out["size"].clip(lower=1).to_numpy()
    return out


def suggested_k(n: int) -> int:
    """A first number of clusters to try for ``n`` texts: about sqrt(n / 2), between 2 and 1,000
    (2,400 texts: 35; 20,000: 100; 300,000: 387)."""
    return int(max(2, min(1000, round((n / 2) ** 0.5))))


def run_summary(meta: dict) -> str:
    """How long a stored clustering trained, in its own units (from its history): K-Means's
    iterations, DEC's pretraining epochs and sharpening rounds (with its steps), an adapting method's
    epochs per stage; "" when nothing was recorded."""
    counts: dict[str, int] = {}
    steps = 0
    for h in meta.get("history") or []:
        phase = h.get("phase")
        if phase == "final" or "assigned_rows" in h or (phase == "cluster" and h.get("step") == 0):
            continue  # a summary row, K-Means's assignment of every row, DEC's start
        if phase == "cluster" and "step" in h:
            unit, steps = "sharpening round", max(steps, int(h["step"]))
        elif phase == "pretrain":
            unit = "pretraining epoch"
        elif phase:
            unit = f"{phase} epoch"
        else:
            unit = "epoch" if "epoch" in h else "iteration"
        counts[unit] = counts.get(unit, 0) + 1
    parts = [f"{n:,} {unit}{'' if n == 1 else 's'}" for unit, n in counts.items()]
    return ", ".join(parts) + (f" ({steps:,} steps)" if steps else "")


def outcome_note(meta: dict) -> str:
    """What an analyst should know of a finished clustering besides its k (from its stored metadata):
    clusters left without texts, and a DEC that stopped sharpening so as to keep every cluster."""
    notes = []
    empty = int(meta.get("sizes", {}).get("empty", 0))
    if empty:
        notes.append(f"{empty:,} of its {int(meta.get('k', 0)):,} clusters hold no text")
    stopped = next((h for h in reversed(meta.get("history", [])) if h.get("stopped")), None)
    if stopped is not None:
        notes.append(f"it stopped sharpening after {int(stopped.get('step', 0)):,} steps, since the next round "
                     "would have emptied a cluster")
    return "; ".join(notes)


# The method to suggest for sharper topics than K-Means. SCCL was suggested from 1,000-text CPU subsets; on the
# whole benchmarks, three seeds on an H200 (bench/RESULTS.md, "On a GPU at last"), it beat K-Means on one of four
# and fell far behind on Biomedical, while DEC on the same frozen embeddings was ahead in NMI and ACC on three
# and level on the fourth, in seconds rather than GPU-minutes. Of the adapting methods ClusterBERT did best on
# the GPU, and best of all on multilingual-e5-small ("A fourth lease": ahead of K-Means on the same encoder on
# StackOverflow 80.3 / 84.1, Biomedical 46.7 / 54.1 and AgNews 67.9 / 88.3, the best figures of any method and
# encoder there; behind on SearchSnippets, where e5 itself is weak), so it is the one named for a GPU, with e5.
SUGGESTED = "dec"
ADAPTING = "clusterbert"
ADAPTING_MODEL = "multilingual-e5-small"
STEADY = "dec_crl"  # the adapting method ahead of K-Means on all four benchmarks (the import's MiniLM, three seeds)


def sharper_hint(corpus: str, n: int) -> str:
    """The suggested method for sharper topics, where to run it, what it costs, and what was measured."""
    return (f"DEC (under *Cluster here*, or `python -m precompute.cluster --corpus {corpus} --method {SUGGESTED} "
            f"--k {suggested_k(n)}`): on the four labelled benchmarks it was ahead of K-Means in NMI and accuracy "
            "on three and level on the fourth, in seconds to a minute on two cores. On a GPU, adapting the encoder "
            f"(`--method {ADAPTING} --param model={ADAPTING_MODEL}`, minutes there, hours on two cores) gave the best "
            "clusterings of any method on three of the four, ahead of K-Means on the same encoder by 1 to 8 NMI points, "
            "and gives an embedding set that Suggest can search; on the packaged encoder, "
            f"`--method {STEADY}` was the one adapting method ahead of K-Means in both figures on all four "
            "(three seeds; one epoch, about half a minute per 10k texts on a GPU, a quarter of an hour on two cores)")
