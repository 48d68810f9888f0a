"""Czech recall against topics judged by hand: ``bench/data/czech_topics_gold.tsv`` (its header says how they were
judged) joined to czech_politicians_tweets_2021.csv as the labelled file bench/annotator.py reads
(``python -m bench.czech_gold`` explains and writes it)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

GOLD = Path(__file__).resolve().parents[1] / "bench" / "data" / "czech_topics_gold.tsv"
COLUMNS = ("id", "topic", "label_name", "on_topic")


def read_gold(path: Path = GOLD) -> pd.DataFrame:
    """The judgments, checked: the four columns, one judgment per (id, topic), 0 or 1, one first keyword a topic.
    A wrong row is named by its line in the file (the header's comment lines and the column names counted)."""
    text = Path(path).read_text(encoding="utf-8")
    gold = pd.read_csv(io.StringIO(text), sep="\t", comment="#", dtype=str, keep_default_na=False)
    first = 2 + sum(1 for line in text.splitlines() if line.startswith("#"))  # the line of the table's first row
    if missing := [c for c in COLUMNS if c not in gold.columns]:
        raise ValueError(f"{path}: no column {missing[0]!r} (it has {', '.join(gold.columns)})")
    if bad := gold.index[~gold["on_topic"].isin(["0", "1"])].tolist():
        raise ValueError(f"{path}, line {first + bad[0]}: on_topic must be 0 or 1, not "
                         f"{gold['on_topic'].iloc[bad[0]]!r}")
    if (twice := gold.duplicated(["id", "topic"])).any():
        at = int(np.flatnonzero(twice.to_numpy())[0])
        raise ValueError(f"{path}, line {first + at}: id {gold['id'].iloc[at]} is judged a second time for topic "
                         f"{gold['topic'].iloc[at]!r}")
    if (names := gold.groupby("topic")["label_name"].nunique()).gt(1).any():
        raise ValueError(f"{path}: topic {names[names.gt(1)].index[0]!r} has more than one label_name")
    gold["on_topic"] = gold["on_topic"].astype(int)
    return gold


def build(source: Path, gold: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The corpus with ``label`` (the topic a tweet was judged on, "" for every other) and ``label_name``; per topic
    its size and how many tweets were judged. A tweet on two topics, or a judged id the corpus lacks, is refused."""
    corpus = pd.read_csv(source, dtype=str, keep_default_na=False)
    if missing := sorted(set(gold["id"]) - set(corpus["id"])):
        raise ValueError(f"{source}: {len(missing)} judged id(s) are not in the corpus, first {missing[0]}")
    on = gold[gold["on_topic"] == 1]
    if (twice := on.duplicated("id")).any():
        raise ValueError(f"id {on[twice]['id'].iloc[0]} is judged on two topics; the annotator's file has one label")
    topic_of = dict(zip(on["id"], on["topic"]))
    name_of = gold.groupby("topic")["label_name"].first().to_dict()
    label = corpus["id"].map(topic_of).fillna("")
    # the conversation a reply belongs to goes with it (core.threads: Suggest and the Annotate page read it)
    keep = ["id", "text", "date", "author"] + [c for c in ("conversation_id",) if c in corpus.columns]
    out = corpus[keep].assign(label=label, label_name=label.map(name_of).fillna(""))
    info = {"rows": len(out), "topics": {t: {"on_topic": int((on["topic"] == t).sum()),
                                             "judged": int((gold["topic"] == t).sum()), "first_keyword": name_of[t]}
                                         for t in sorted(name_of)}}
    return out, info


def keyword_alone(frame: pd.DataFrame, lang: str = "cs") -> dict:
    """Per topic, what its first keyword finds on its own, every hit reviewed: as typed and in every form, as the
    app's keyword search finds them (core.annotate.text_matches): hits, those on topic, recall."""
    from core.annotate import text_matches
    from core.search import SearchContext
    from core.search.keyword import KeywordIndex

    ctx = SearchContext(index=None, keyword_index=KeywordIndex(frame["text"].tolist()))  # no vectors: words only
    labels = frame["label"].to_numpy()
    out = {}
    for topic, name in frame[labels != ""].groupby("label")["label_name"].first().items():
        members = labels == topic
        out[topic] = {way: {"hits": int(len(rows)), "on_topic": int(members[rows].sum()),
                            "recall": round(float(members[rows].sum() / members.sum()), 4)}
                      for way, rows in (("as_typed", text_matches(ctx, name)),
                                        ("every_form", text_matches(ctx, name, word_forms=lang)))}
    return out
