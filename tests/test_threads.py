"""Conversations (core.threads): read from a corpus's conversation_id, counted by Suggest, shown on Annotate."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import annotate
from core.search import SearchContext, suggest
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from core.session import Session
from core.threads import openings, threads_of
from tests.conftest import ROOT, shared_file


def test_conversations_come_from_the_conversation_id_column_and_a_lone_text_has_none():
    frame = pd.DataFrame({"conversation_id": ["a", "a", "b", "", None, "c", " c", "c"]})
    t = threads_of(frame)
    assert t.count == 2, "a and c: b is alone, an empty value is no conversation"
    assert t.mates(0).tolist() == [0, 1] and t.mates(6).tolist() == [5, 6, 7]
    assert [len(t.mates(r)) for r in (2, 3, 4)] == [0, 0, 0]
    assert threads_of(pd.DataFrame({"text": ["x", "y"]})) is None, "no column"
    assert threads_of(pd.DataFrame({"conversation_id": ["1", "2", ""]})) is None, "no conversation of two"
    assert threads_of(pd.DataFrame({"conversation_id": [7, 7, 8]})).mates(1).tolist() == [0, 1], "numbers too"
    assert threads_of(pd.DataFrame({"conversation_id": [7.0, None, 7.0, float("nan")]})).mates(0).tolist() == [0, 2]


def test_the_conversations_are_kept_beside_the_corpus_and_computed_again_for_another(tmp_path, caplog):
    from core import threads

    frame = pd.DataFrame({"conversation_id": ["a", "a", "b", "c", "c"]})
    first = threads.load_or_build(tmp_path, frame)
    assert (tmp_path / threads.FILE).exists() and first.mates(4).tolist() == [3, 4]
    assert threads.load_or_build(tmp_path, frame).codes.tolist() == first.codes.tolist()
    other = threads.load_or_build(tmp_path, pd.DataFrame({"conversation_id": ["x", "y", "x"]}))  # not trusted
    assert other.mates(2).tolist() == [0, 2] and "computed again" in caplog.text
    assert threads.load_or_build(tmp_path, pd.DataFrame({"text": ["no column"]})) is None
    assert threads.load_or_build(tmp_path, pd.DataFrame({"conversation_id": ["1", "2"]})) is None, "none shared"


def test_a_text_counts_the_labelled_texts_of_its_conversation_but_not_itself():
    t = threads_of(pd.DataFrame({"conversation_id": ["a", "b", "a", "b", "a", "z", "c", "c"]}))
    rows, counts = t.around(np.array([0, 2, 3, 3]))
    assert dict(zip(rows.tolist(), counts.tolist())) == {0: 1, 2: 1, 4: 2, 1: 1, 3: 0}, "c's texts are not read"
    assert [len(part) for part in t.around(np.array([5]))] == [0, 0], "z is alone"


def replies_corpus(seed: int = 0):
    """40 posts on a topic (near one direction, their own words) with two replies each that say nothing of it
    (random directions, everyday words), and 500 texts on nothing in particular; each post and its replies one
    conversation. The posts and 10 replies included, 60 background texts excluded."""
    rng = np.random.default_rng(seed)
    dim, posts, background = 24, 40, 500
    topic = np.eye(dim)[0]
    chat = ["yes exactly", "who pays for it", "well said", "and then what", "agreed here", "not so sure"]
    vectors, texts, conv = [], [], []
    for p in range(posts):
        vectors.append(topic + 0.6 * rng.normal(size=dim) / np.sqrt(dim))
        texts.append(f"flood water rising river {p}")
        conv.append(f"t{p}")
        for _ in range(2):
            vectors.append(rng.normal(size=dim))
            texts.append(f"{chat[rng.integers(len(chat))]} {rng.integers(1000)}")
            conv.append(f"t{p}")
    for b in range(background):
        vectors.append(rng.normal(size=dim))
        texts.append(f"{chat[rng.integers(len(chat))]} {rng.integers(1000)}")
        conv.append(f"b{b}")
    x = np.asarray(vectors, np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    frame = pd.DataFrame({"text": texts, "conversation_id": conv})
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), frame, word_index=WordIndex(texts),
                        threads=threads_of(frame))
    post_rows = np.arange(posts) * 3
    included = np.r_[post_rows, post_rows[:10] + 1]
    replies_left = np.setdiff1d(np.r_[post_rows + 1, post_rows + 2], included)
    excluded = np.arange(posts * 3, posts * 3 + 60)
    return ctx, included, excluded, replies_left


def test_suggest_brings_the_replies_of_included_texts_that_their_words_do_not_find():
    ctx, inc, exc, replies = replies_corpus()
    found = {}
    for weight in (0.0, suggest.METHOD.defaults["thread"]):
        r = suggest.search(ctx, inc, exc, 20, thread=weight)
        found[weight] = len(np.intersect1d(r.rows, replies))
        assert ("thread" in r.info) == (weight > 0)
    assert found[0.0] <= 5, found  # as many as chance gives (70 of the 530 texts left)
    assert found[suggest.METHOD.defaults["thread"]] >= 12, found
    # a corpus without conversations: the same answer as with the weight off
    plain = SearchContext(ctx.index, ctx.keyword_index, ctx.frame[["text"]], word_index=ctx.word_index)
    assert plain.threads is None
    assert suggest.search(plain, inc, exc, 20, thread=2.0).rows.tolist() == \
        suggest.search(ctx, inc, exc, 20, thread=0.0).rows.tolist()


def test_the_default_suggest_counts_conversations():
    assert suggest.METHOD.defaults["thread"] > 0


def test_a_conversation_is_shown_oldest_first_with_each_texts_label():
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "text": ["reply", "post", "other", "late reply"],
                          "date": pd.to_datetime(["2021-01-02", "2021-01-01", "2021-01-01", "2021-01-03"]),
                          "conversation_id": ["b", "b", "c", "b"]})
    t = threads_of(frame)
    s = Session()
    s.add_search("keyword", {"query": "post"}, [1])
    shown = annotate.conversation(t, frame, s, 0)
    assert shown["text"].tolist() == ["post", "reply", "late reply"]
    assert shown["label"].tolist() == ["included", "unlabelled", "unlabelled"]
    assert annotate.conversation(t, frame, s, 2).empty and annotate.conversation(None, frame, s, 0).empty
    assert openings(t, frame, [0, 1, 2, 3]).tolist() == [1, -1, -1, 1], "a reply's thread opens with the post"


@pytest.fixture(scope="module")
def politicians(tmp_path_factory, model):
    """300 tweets of Czech politicians, 100 of them in conversations of three or more, imported with the packaged
    model (the file's conversation_id kept as a column)."""
    from core.corpus import ImportSpec, import_corpus

    frame = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=4000)
    sizes = frame.groupby("conversation_id")["id"].transform("size")
    threads = frame[sizes >= 3]
    threads = threads[threads["conversation_id"].isin(threads["conversation_id"].unique()[:25])].head(100)
    alone = frame[sizes == 1].head(200)
    pick = pd.concat([threads, alone]).sort_index()
    root = tmp_path_factory.mktemp("data_threads")
    src = root / "politicians.csv"
    pick.to_csv(src, index=False)
    corpus = import_corpus(ImportSpec(input=src, name="pol"), root=root, model_loader=lambda n, d: model)
    return root, corpus


@pytest.fixture
def own_pol(politicians, monkeypatch, tmp_path):
    """The politicians' corpus copied into a data root of this test's own (the page writes its store there)."""
    import shutil

    root, corpus = politicians
    shutil.copytree(root / "pol", tmp_path / "d" / "pol")
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    return corpus


def test_the_annotate_page_shows_a_texts_conversation_and_labels_its_texts(own_pol):
    from collections import Counter

    from core import wordforms
    from ui.resources import search_context_of

    corpus = own_pol
    ctx = search_context_of(corpus, "cpu")
    assert ctx.threads is not None and ctx.threads.count >= 20
    # a post with replies, found by a word only it has (as the page's keyword search reads it: in every form)
    words = [set(re.findall(r"\w{7,}", t.lower())) for t in corpus.frame["text"]]
    counts = Counter(w for ws in words for w in ws)
    row, word = next((r, w) for r in range(corpus.n) if len(ctx.threads.mates(r)) >= 3
                     for w in sorted(words[r]) if counts[w] == 1
                     and len(annotate.text_matches(ctx, w, word_forms=wordforms.language_of(corpus))) == 1)
    mates = [int(m) for m in ctx.threads.mates(row) if m != row]
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "pol"
    at.run()
    at.text_input(key="kw_query").set_value(word)
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert not at.exception, at.exception
    included = int(at.metric[0].value)
    assert included == len(ctx.copies.expand([row])), "the post (and its copies, if any)"
    assert at.button(key=f"conv_{row}").label == f"Show its conversation ({len(mates)} more)"
    at.button(key=f"conv_{row}").click().run()
    shown = [b for b in at.button if b.key and b.key.startswith(f"conv_tog_{row}_")]
    assert sorted(int(b.key.rsplit("_", 1)[1]) for b in shown) == sorted(mates + [row])
    assert {b.label for b in shown if not b.key.endswith(f"_{row}")} == {":material/radio_button_unchecked: Unlabelled"}
    texts = [t.value for t in at.text]
    assert all(corpus.frame["text"][m] in texts for m in mates), "each reply shown as written"
    at.button(key=f"conv_tog_{row}_{mates[0]}").click().run()  # a reply on topic: included from the conversation
    assert int(at.metric[0].value) == included + len(ctx.copies.expand([mates[0]]))
    assert at.button(key=f"conv_tog_{row}_{mates[0]}").label.endswith("Included]")
    at.button(key=f"conv_{row}").click().run()
    assert not [b for b in at.button if b.key and b.key.startswith("conv_tog_")], "closed again"


def test_a_reply_on_the_review_page_shows_the_post_it_answers(own_pol, monkeypatch, tmp_path):
    from core.store import GroupStore
    from tests.test_team import as_user, submitted
    from ui.resources import search_context_of
    from core.teams import THREAD, check_annotator

    corpus = own_pol
    ctx = search_context_of(corpus, "cpu")
    frame = corpus.frame
    post = next(r for r in range(corpus.n) if len(ctx.threads.mates(r)) >= 3
                and frame["date"][r] == frame["date"][ctx.threads.mates(r)].min())
    reply = int(next(m for m in ctx.threads.mates(post) if m != post))
    alone = int(next(r for r in range(corpus.n) if not len(ctx.threads.mates(r))))
    ids = corpus.ids_of([post, reply, alone])
    store = GroupStore(tmp_path / "d" / "pol" / "groups.sqlite")  # own_pol's data root
    submitted(store, "afghanistan", "alice", (("alice", ids, []), ("bob", [], ids)))
    as_user(monkeypatch, "alice")
    review = AppTest.from_file(str(ROOT / "pages/8_Review.py"), default_timeout=120)
    review.query_params["corpus"] = "pol"
    review.run()
    assert not review.exception, review.exception
    table = review.get("data_editor")[0].value.set_index("id")
    assert table.loc[ids[1], THREAD] == frame["text"][post], "the reply: the post that opens its thread"
    assert table.loc[ids[0], THREAD] == "" and table.loc[ids[2], THREAD] == "", "the post itself, a text alone"
    with pytest.raises(ValueError, match="a column of the Review page's table"):
        check_annotator(THREAD)


def test_the_scale_bench_of_conversations_runs_and_prints_its_figures(capsys):
    import json

    from bench import threads as bench_threads

    assert bench_threads.main(["--rows", "3000", "--repeat", "1"]) == 0
    lines = {d["op"]: d for d in map(json.loads, capsys.readouterr().out.splitlines())}
    assert 0 < lines["codes_of"]["conversations"] <= 1000
    assert lines["open_kept_codes"]["median_s"] >= 0 and lines["around_1000_labelled"]["median_ms"] > 0
