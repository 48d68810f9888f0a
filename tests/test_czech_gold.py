"""The hand-judged Czech topics (bench/data/czech_topics_gold.tsv) and the labelled file bench/czech_gold.py writes
from them for the simulated annotator."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.conftest import shared_file
from testbed.czech_gold import GOLD, build, keyword_alone, read_gold


def test_the_judged_topics_label_exactly_the_tweets_judged_on_topic_and_each_has_its_first_keyword():
    gold = read_gold()
    frame, info = build(shared_file("czech_politicians_tweets_2021.csv"), gold)
    on = gold[gold["on_topic"] == 1]
    assert set(info["topics"]) == set(gold["topic"]) and len(info["topics"]) == 3
    for topic, row in info["topics"].items():
        assert 0 < row["on_topic"] < row["judged"], topic  # judged tweets both ways, not only the hits
    labelled = frame[frame["label"] != ""]
    assert dict(zip(labelled["id"], labelled["label"])) == dict(zip(on["id"], on["topic"]))
    # the first keyword is a word of the corpus that finds some of its topic, not all of it
    for topic, name in gold.groupby("topic")["label_name"].first().items():
        said = frame["text"].str.contains(name, case=False, regex=False)
        assert 0 < (said & (frame["label"] == topic)).sum() < (frame["label"] == topic).sum(), topic
    assert len(frame) == len(pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), usecols=["id"]))
    # a Czech keyword in every form finds more of a real topic than as typed: "Vrbětice" misses "ve Vrběticích"
    alone = keyword_alone(frame)
    assert all(t["every_form"]["on_topic"] >= t["as_typed"]["on_topic"] for t in alone.values())
    assert alone["vrbetice"]["every_form"]["on_topic"] > alone["vrbetice"]["as_typed"]["on_topic"]


@pytest.mark.parametrize("change, message", [
    (lambda g: pd.concat([g, g.iloc[[3]]]), r"line \d+: id \d+ is judged a second time for topic"),
    (lambda g: g.assign(on_topic=g["on_topic"].where(g.index != 5, "yes")),
     "line 7: on_topic must be 0 or 1, not 'yes'"),  # no comment lines here: the column names are line 1
    (lambda g: g.drop(columns="label_name"), "no column 'label_name'"),
])
def test_a_damaged_gold_file_is_refused_by_what_is_wrong(tmp_path, change, message):
    gold = pd.read_csv(GOLD, sep="\t", comment="#", dtype=str, keep_default_na=False)
    bad = tmp_path / "gold.tsv"
    change(gold).to_csv(bad, sep="\t", index=False)
    with pytest.raises(ValueError, match=message):
        read_gold(bad)


def test_a_judged_id_the_corpus_lacks_is_named(tmp_path):
    gold = read_gold()
    gold.loc[0, "id"] = "123"
    with pytest.raises(ValueError, match="1 judged id.* not in the corpus, first 123"):
        build(shared_file("czech_politicians_tweets_2021.csv"), gold)
