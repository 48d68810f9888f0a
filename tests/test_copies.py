"""Copies (core/copies.py): the same words with other links are one text to review, labelled together."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import annotate, copies
from core.copies import Copies, codes_of
from core.session import EXCLUDED, INCLUDED, Session
from core.store import GroupStore
from tests.conftest import ROOT, shared_file


def test_copies_are_the_same_words_whatever_the_links_case_and_spaces():
    texts = ["Flood in Prague! http://t.co/AAA", "flood in  prague! https://t.co/BBB", "Flood in Prague!",
             "Flood in Brno! http://t.co/AAA",  # another text with the same link: not a copy
             "http://t.co/x", "https://t.co/y www.example.com",  # links only: nobody's copy
             "", "flood in prague", "Povodeň v Praze www.x.cz", "POVODEŇ V PRAZE",
             "RT @praha_1: Povodeň v Praze http://t.co/z",  # a retweet: the same words
             "RT @x:", "Art @x: flood in prague!"]  # a retweet of nothing, and words that only look like one
    c = Copies(codes_of(texts))
    assert c.count(range(len(texts))).tolist() == [2, 2, 2, 0, 0, 0, 0, 0, 2, 2, 2, 0, 0]
    assert c.expand([1]).tolist() == [1, 0, 2]  # the row given first, then its copies by row
    assert c.expand([3, 4]).tolist() == [3, 4]
    assert c.first_of_each([2, 3, 0, 1, 9, 8]).tolist() == [0, 1, 4]  # rows 2, 3 and 9: the first of each text
    assert c.rows_with_copies == 6


def test_a_quote_is_a_copy_only_of_a_text_that_quotes_the_same(tmp_path):
    """"Přesně tak." quoting a tweet on a flood and "Přesně tak." quoting one on taxes are two texts: labelling one
    labelled the other (the same words). Quotes of the same tweet (its link aside) stay copies, and so do texts
    that quote nothing; what a corpus keeps beside it is computed again by this rule."""
    texts = ["Přesně tak.", "Přesně tak.", "přesně  tak. http://t.co/1", "Přesně tak.", "PŘESNĚ TAK.", "http://t.co/2"]
    quoted = pd.Series(["@a: Povodeň na Moravě", "@b: Daně zase rostou", "@a: povodeň na Moravě http://t.co/9", "", None,
                        "@a: Povodeň na Moravě"], dtype="str")
    c = Copies(codes_of(texts, quoted))
    assert c.count(range(6)).tolist() == [1, 0, 1, 1, 1, 0]
    assert c.expand([0]).tolist() == [0, 2] and c.expand([1]).tolist() == [1] and c.expand([3]).tolist() == [3, 4]
    assert Copies(codes_of(texts)).count([0]).tolist() == [4], "read without what they quote: one text"
    (tmp_path / "copies-v3.npy").write_bytes(b"an older rule's")
    kept = copies.load_or_build(tmp_path, texts, quoted)
    assert kept.codes.tolist() == c.codes.tolist() and not (tmp_path / "copies-v3.npy").exists()
    with pytest.raises(ValueError, match="6 texts but 2 quoted texts"):
        codes_of(texts, ["", ""])


def test_codes_read_a_pandas_column_and_a_list_alike_and_a_piece_at_a_time(monkeypatch):
    texts = ["a http://x", "A", None, "b", "b "]
    from_list = codes_of(["a http://x", "A", "", "b", "b "])
    from_column = codes_of(pd.Series(texts, dtype="str"))
    assert Copies(from_list).count(range(5)).tolist() == Copies(from_column).count(range(5)).tolist() == [1, 1, 0, 1, 1]
    monkeypatch.setattr(copies, "PIECE", 2)  # copies in different pieces are still copies
    assert codes_of(pd.Series(texts, dtype="str")).tolist() == from_column.tolist()


def test_the_codes_are_kept_beside_the_corpus_and_computed_again_for_other_texts(tmp_path, caplog):
    first = copies.load_or_build(tmp_path, ["x", "x y", "x"])
    assert (tmp_path / copies.FILE).exists() and first.count([0]).tolist() == [1]
    again = copies.load_or_build(tmp_path, ["x", "x y", "x"])
    assert again.codes.tolist() == first.codes.tolist()
    other = copies.load_or_build(tmp_path, ["a", "a", "b", "b"])  # another corpus's file: not trusted
    assert other.count(range(4)).tolist() == [1, 1, 1, 1]
    assert "computed again" in caplog.text
    (tmp_path / copies.FILE).write_bytes(b"not a numpy file")
    assert copies.load_or_build(tmp_path, ["a", "a"]).count([0]).tolist() == [1]
    (tmp_path / "copies-v1.npy").write_bytes(b"an earlier rule's codes")
    (tmp_path / copies.FILE).unlink()
    copies.load_or_build(tmp_path, ["a", "a"])
    assert sorted(p.name for p in tmp_path.glob("copies-v*.npy")) == [copies.FILE]


# ---- on real tweets: the scale corpus shares many tweets with other links ----------------------------------


@pytest.fixture(scope="module")
def shared_tweets(tmp_path_factory, model):
    """480 tweets of the scale corpus: 240 with copies in it (in 60 texts of 4 rows each), 240 without, in the
    corpus's order; embedded with the packaged model."""
    from core.corpus import ImportSpec, import_corpus

    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), dtype=str, keep_default_na=False,
                        nrows=60_000, usecols=["id", "text", "date", "author"])
    codes = codes_of(frame["text"].tolist())
    sizes = np.bincount(codes)[codes]
    groups = pd.Series(np.flatnonzero(sizes >= 4)).groupby(codes[sizes >= 4]).head(4)
    keep_codes = pd.unique(codes[groups.to_numpy()])[:60]
    shared = np.flatnonzero(np.isin(codes, keep_codes))
    shared = pd.Series(shared).groupby(codes[shared]).head(4).to_numpy()
    alone = np.flatnonzero(sizes == 1)[:240]
    pick = np.sort(np.concatenate([shared, alone]))
    root = tmp_path_factory.mktemp("data_copies")
    src = root / "shared.csv"
    frame.iloc[pick].to_csv(src, index=False)
    corpus = import_corpus(ImportSpec(input=src, name="shared"), root=root, model_loader=lambda n, d: model)
    return root, corpus


@pytest.fixture
def own_data(shared_tweets, monkeypatch, tmp_path):
    """A copy of the corpus in a data root of this test's own (the pages' store is written): (root, corpus, the
    search context)."""
    import shutil

    root, corpus = shared_tweets
    data = tmp_path / "d"
    shutil.copytree(root / "shared", data / "shared")
    monkeypatch.setenv("SEMANNO_DATA", str(data))
    return data, corpus, context(corpus)


def context(corpus):
    from ui.resources import search_context_of

    return search_context_of(corpus, "cpu")


def test_the_import_finds_the_copies_and_the_search_context_reads_them(shared_tweets):
    _root, corpus = shared_tweets
    assert corpus.manifest["copies"]["rows_with_copies"] == 240
    assert (corpus.data_folder / copies.FILE).exists()
    ctx = context(corpus)
    assert ctx.copies.count(range(corpus.n)).sum() == 60 * 4 * 3


def test_a_search_shows_distinct_texts_and_their_copies_come_in_with_them(shared_tweets):
    _root, corpus = shared_tweets
    ctx = context(corpus)
    s = Session()
    shared_row = int(np.flatnonzero(ctx.copies.count(range(corpus.n)) == 3)[0])
    s.add_search("keyword", {"query": "seed"}, [shared_row])
    annotate.label(ctx.copies, s, [shared_row], INCLUDED)  # as a person would, after the first hit
    assert len(s.included) == 4, "its three copies took its label"
    r = annotate.ask(ctx, s, "cos", 60)
    assert len(r) == 60
    shown = r.rows.tolist()
    assert len(set(ctx.copies.codes[shown])) == 60, "sixty texts, none a copy of another"
    assert not set(ctx.copies.codes[shown]) & set(ctx.copies.codes[[shared_row]]), "none a copy of one labelled"
    brought = ctx.copies.count(shown).sum()
    assert brought > 0 and len(s.included) == 4 + 60 + brought and r.info["copies"] == brought
    said = annotate.search_message("cos", r)
    assert f"60 new texts, added as included, with their {brought:,} copies (the same words with other links)" in said
    # a click on a text excludes its copies; undo brings them all back
    multi = next(row for row in shown if ctx.copies.count([row])[0])
    step = annotate.toggle(ctx.copies, s, multi)
    assert {s.label_of(row) for row in ctx.copies.expand([multi])} == {EXCLUDED}
    assert step.params["copies"] == 3
    s.undo()
    assert {s.label_of(row) for row in ctx.copies.expand([multi])} == {INCLUDED}
    # a page action counts the copies it labelled beside the texts shown
    step = annotate.label(ctx.copies, s, shown, EXCLUDED, keep_explicit=True)
    assert annotate.bulk_message(step, EXCLUDED).startswith(f"{60 + brought} texts excluded ({brought} of them copies")


def test_the_stopping_signal_counts_the_texts_shown_not_their_copies(shared_tweets):
    _root, corpus = shared_tweets
    ctx = context(corpus)
    s = Session()
    s.add_search("keyword", {"query": "x"}, range(240, 250))
    for _ in range(4):
        annotate.ask(ctx, s, "cos", 10)
    y = annotate.recent_yield(s)
    assert y is not None and y.seen == 30 and y.searches == 3


def test_the_annotate_page_lists_each_text_once_and_a_click_labels_its_copies(shared_tweets, monkeypatch, tmp_path):
    import shutil

    root, _corpus = shared_tweets
    data = tmp_path / "d"
    shutil.copytree(root / "shared", data / "shared")
    monkeypatch.setenv("SEMANNO_DATA", str(data))
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "shared"
    at.run()
    at.number_input(key="kw_limit").set_value(0)  # every hit
    at.text_input(key="kw_query").set_value("trump")
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert not at.exception, at.exception
    included = int(at.metric[0].value)
    buttons = [b for b in at.button if b.key and b.key.startswith("tog_")]
    listed = [int(b.key[4:]) for b in buttons]
    ctx = context(_corpus)
    assert len(set(ctx.copies.codes[listed])) == len(listed), "each text listed once"
    with_copies = [row for row in listed if ctx.copies.count([row])[0]]
    assert with_copies, "the word is in some of the shared tweets"
    assert any("cop" in c.value and "labelled with it" in c.value for c in at.caption)
    at.button(key=f"tog_{with_copies[0]}").click().run()
    assert int(at.metric[0].value) == included - 4 and int(at.metric[1].value) == 4


def test_agreement_by_text_folds_copies_labelled_alike_and_keeps_apart_those_labelled_otherwise():
    from core.teams import agreement, by_text

    code_of = {"a1": 0, "a2": 0, "a3": 0, "b1": 1, "b2": 1, "c": 2}  # a1-a3 one text, b1-b2 another
    labels = {"ann": {"a1": 1, "a2": 1, "a3": 1, "b1": 1, "b2": -1, "c": 1, "gone": -1},
              "bob": {"a1": -1, "a2": -1, "b1": 1, "b2": -1, "c": 1, "gone": -1}}
    texts, members = by_text(labels, code_of)
    assert members == {"a1": ["a1", "a2", "a3"], "b1": ["b1"], "b2": ["b2"], "c": ["c"], "gone": ["gone"]}
    assert texts["ann"] == {"a1": 1, "b1": 1, "b2": -1, "c": 1, "gone": -1}  # ann split b: b stays as its ids
    ag = agreement(texts)
    assert ag.items == 5 and [d["item_id"] for d in ag.disagreements] == ["a1"]


def test_the_team_and_review_pages_count_a_text_and_its_copies_once_and_the_gold_decides_them_all(own_data,
                                                                                                    monkeypatch):
    from tests.test_team import as_user, submitted

    data, corpus, ctx = own_data
    shared_row = int(np.flatnonzero(ctx.copies.count(range(corpus.n)) == 3)[0])
    copies_ids = corpus.ids_of(ctx.copies.expand([shared_row]))  # a text and its three copies
    plain = corpus.ids_of(np.flatnonzero(ctx.copies.count(range(corpus.n)) == 0)[:6])
    store = GroupStore(data / "shared" / "groups.sqlite")
    submitted(store, "ads", "alice", (("alice", copies_ids + plain[:3], plain[3:]),
                                      ("bob", plain[:4], copies_ids + plain[4:])))
    as_user(monkeypatch, "alice")
    team = AppTest.from_file(str(ROOT / "pages/7_Team.py"), default_timeout=120)
    team.query_params["corpus"] = "shared"
    team.run()
    assert not team.exception, team.exception
    progress = team.dataframe[0].value.set_index("annotator")  # the shared text once: 1 + 6 texts, from 10 rows
    assert progress.loc["alice", ["texts reviewed", "included", "rows labelled (copies too)"]].tolist() == [7, 4, 10]
    assert progress.loc["bob", ["texts reviewed", "included", "rows labelled (copies too)"]].tolist() == [7, 4, 10]
    review = AppTest.from_file(str(ROOT / "pages/8_Review.py"), default_timeout=120)
    review.query_params["corpus"] = "shared"
    review.run()
    assert not review.exception, review.exception
    # agreement counts texts: the shared text once, not four times (1 + 6 texts, 2 disagreements)
    assert next(m for m in review.metric if m.label == "Texts two or more reviewed").value == "7"
    assert next(m for m in review.metric if m.label == "Percent agreement").value == f"{5 / 7:.1%}"
    assert any(h.value == "Disagreements (2)" for h in review.subheader)
    table = review.get("data_editor")[0].value
    assert dict(zip(table["id"], table["copies"])) == {copies_ids[0]: 3, plain[3]: 0}
    edits = {i: {"gold": "excluded" if table["id"].iloc[i] == copies_ids[0] else "included"} for i in range(2)}
    review.session_state[review.session_state["rv_editor"]] = {"edited_rows": edits, "added_rows": [],
                                                                "deleted_rows": []}
    review.run()
    assert not review.button(key="rv_save").disabled
    review.button(key="rv_save").click().run()
    gold = store.load("ads · gold")
    assert set(copies_ids) <= set(gold.excluded) and plain[3] in gold.included
    assert "7 texts reviewed by two or more" in gold.notes


def test_a_text_shared_many_times_takes_one_place_and_the_next_search_finds_other_texts():
    from core.search import SearchContext
    from core.search.index import VectorIndex

    rng = np.random.default_rng(0)
    base = rng.normal(size=16)
    texts = ["seed text"] + [f"shared words http://t.co/{i}" for i in range(30)] + [f"other {i}" for i in range(20)]
    vectors = np.vstack([base + 0.3 * rng.normal(size=16), np.tile(base + 0.05 * rng.normal(size=16), (30, 1)),
                         base + 1.5 * rng.normal(size=(20, 16))]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ctx = SearchContext(VectorIndex(vectors), copies=Copies(codes_of(texts)))
    s = Session()
    s.add_search("keyword", {"query": "seed"}, [0])
    r = annotate.ask(ctx, s, "cos", 3)  # the 30 copies rank first: asked again up to 4 x 3 hits, then one place
    assert len(r) == 1 and r.rows[0] in range(1, 31) and r.info["copies"] == 29
    assert len(s.included) == 31
    r = annotate.ask(ctx, s, "cos", 3)
    assert len(r) == 3 and set(r.rows) <= set(range(31, 51))


def test_a_group_saved_before_copies_were_known_opens_with_its_copies_labelled_in_one_undoable_step(own_data):
    data, corpus, ctx = own_data
    shared = np.flatnonzero(ctx.copies.count(range(corpus.n)) == 3)
    texts = shared[ctx.copies.first_of_each(shared)]  # the first row of each shared text (4 rows each)
    first, second, other = (corpus.ids_of(ctx.copies.expand([int(r)])) for r in texts[:3])
    plain = corpus.ids_of(np.flatnonzero(ctx.copies.count(range(corpus.n)) == 0)[:2])
    # saved before copies were known: one row of the first text in, one of the second out, the third text both ways
    store = GroupStore(data / "shared" / "groups.sqlite")
    store.save("old", [first[0], other[0], plain[0]], [second[0], other[1], plain[1]])
    page = AppTest.from_file(str(ROOT / "pages/5_Groups.py"), default_timeout=120)
    page.query_params["corpus"] = "shared"
    page.run()
    page.button(key="gr_open").click().run()
    assert not page.exception, page.exception
    said = page.session_state["ann_msg"][1]
    assert "6 copies of its texts" in said and "Undo" in said, said
    s = page.session_state["session"]
    assert set(corpus.ids_of(s.included)) == {*first, other[0], plain[0]}
    assert set(corpus.ids_of(s.excluded)) == {*second, other[1], plain[1]}  # the text labelled both ways: as saved
    s.undo()  # the copies' step alone: the group as saved
    assert sorted(corpus.ids_of(s.included)) == sorted([first[0], other[0], plain[0]])
    assert sorted(corpus.ids_of(s.excluded)) == sorted([second[0], other[1], plain[1]])
