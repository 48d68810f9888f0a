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
    earlier = tmp_path / "threads-v1.npy"  # an earlier rule's codes: removed
    np.save(earlier, np.zeros(5, np.int32))
    first = threads.load_or_build(tmp_path, frame)
    assert (tmp_path / threads.FILE).exists() and first.mates(4).tolist() == [3, 4] and not earlier.exists()
    assert threads.load_or_build(tmp_path, frame).codes.tolist() == first.codes.tolist()
    other = threads.load_or_build(tmp_path, pd.DataFrame({"conversation_id": ["x", "y", "x"]}))  # not trusted
    assert other.mates(2).tolist() == [0, 2] and "computed again" in caplog.text
    assert threads.load_or_build(tmp_path, pd.DataFrame({"text": ["no column"]})) is None
    assert threads.load_or_build(tmp_path, pd.DataFrame({"conversation_id": ["1", "2"]})) is None, "none shared"


def test_conversation_ids_a_spreadsheet_rounded_name_no_conversation_and_the_import_says_so():
    """Excel shows an id of 19 digits as 1,3449E+18 and saves it so: thousands of tweets of a day would read as one
    thread (Show its conversation: 3,000 more; Suggest counting them). Those texts are in no conversation, and the
    import names the column, how many and where."""
    from core.ingest import validate

    frame = pd.DataFrame({"id": [str(i) for i in range(6)], "text": [f"tweet {i}" for i in range(6)],
                          "conversation_id": ["1,3449E+18", "1,3449E+18", " 1.34490224401417E+18",
                                              "1344902244014170115", "1344902244014170115", ""]})
    t = threads_of(frame)
    assert t.codes.tolist()[:3] == [-1, -1, -1] and t.mates(3).tolist() == [3, 4]
    _kept, report = validate(frame, "tweets.csv")
    note = next(n for n in report.notes if "conversation_id" in n)
    assert "3 long numbers a spreadsheet rounded" in note and "rows 1, 2, 3" in note and "1,3449E+18" in note
    assert not [n for n in validate(frame.iloc[3:], "tweets.csv")[1].notes if "conversation_id" in n]


def test_a_file_that_names_what_each_tweet_replies_to_gets_its_conversations_from_the_chains():
    """No conversation_id, but Twitter's in_reply_to_status_id_str (API v1.1 and its exports): each reply followed
    up its chain within the corpus to the text it starts with; a chain leaving the corpus named by the tweet it
    replies to; a spreadsheet's rounded id names nothing; a column of floating-point ids is refused by name. On
    real tweets: the politicians' replies pointed at their thread's first tweet give back the threads the file
    names."""
    from core.ingest import validate

    frame = pd.DataFrame({"id": ["1", "2", "3", "4", "5", "6", "7", "8"], "text": list("abcdefgh"),
                          "In_Reply_To_Status_Id_Str": ["", "1", "2", "3", "99", "99", "", "1,3449E+18"]})
    out, report = validate(frame, "replies.csv")
    t = threads_of(out)
    assert t.mates(3).tolist() == [0, 1, 2, 3], "a chain of three replies is the first text's conversation"
    assert t.mates(4).tolist() == [4, 5], "two replies to a tweet the corpus lacks are one conversation"
    assert [len(t.mates(r)) for r in (6, 7)] == [0, 0]
    assert report.notes[-1] == ("conversations made from column 'In_Reply_To_Status_Id_Str': 5 replies, "
                                "2 conversations of two or more texts")
    floats = pd.DataFrame({"id": ["1", "2"], "text": ["a", "b"], "in_reply_to_status_id": [None, 1.3e18]})
    out, report = validate(floats, "v1.jsonl")
    assert "conversation_id" not in out.columns and "floating-point" in report.notes[-1]

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    tweets = tweets.iloc[:3000]
    first = tweets["conversation_id"]
    replies = tweets.assign(in_reply_to_status_id_str=np.where(first != tweets["id"], first, ""))
    out, _ = validate(replies.drop(columns="conversation_id"), "politicians.csv")
    made, named = threads_of(out), threads_of(tweets)
    assert made.count == named.count > 50
    assert all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(len(tweets)))


def test_a_loop_of_replies_is_one_conversation_with_the_replies_to_it():
    """Ids a file mangled or reused can make replies that reply to one another in a loop, with no first text: each of
    its texts was named a conversation of its own (a loop of three, three conversations). A loop, of any length (two,
    a power of two, one text replying to itself), and the replies that lead into it are now one conversation, named
    by the loop's first row; chains with a first text are named as before. Random reply graphs agree with following
    each text's chain by hand."""
    import random

    from core.threads import from_replies

    def by_hand(ids, parents):
        row = {i: n for n, i in enumerate(ids)}
        out = []
        for n in range(len(ids)):
            seen, at = [], n
            while at not in seen and parents[at] in row:
                seen.append(at)
                at = row[parents[at]]
            if at in seen:  # a loop: the path's part from where it came back
                out.append(ids[min(seen[seen.index(at):])])
            else:
                out.append(parents[at] or ids[at])
        return out

    ids = np.array(list("abcdefgh"), dtype=object)
    parents = np.array(["c", "a", "b", "", "d", "a", "f", "h"], dtype=object)
    assert from_replies(ids, parents).tolist() == ["a", "a", "a", "d", "d", "a", "a", "h"]
    for seed in range(300):
        r = random.Random(seed)
        n = r.randint(1, 12)
        ids = np.array([f"t{i}" for i in range(n)], dtype=object)
        parents = np.array([r.choice(["", "x", *ids]) for _ in range(n)], dtype=object)
        assert from_replies(ids, parents).tolist() == by_hand(list(ids), list(parents)), (seed, parents)


def test_reddit_comments_are_the_conversation_of_their_post():
    """A Reddit export (Pushshift's comments and posts: body, author, created_utc, parent_id as a fullname, t1_ for
    a comment and t3_ for a post): a post and every comment under it, however deep, are one conversation; the
    comments of a post the file lacks are one conversation too, and two posts' comments never mix."""
    from core.ingest import validate

    rows = [("p1", "", "A flood in Brno"), ("c1", "t3_p1", "Stay safe"), ("c2", "t1_c1", "Thanks"),
            ("c3", "t1_c2", "The river is up again"), ("c4", "t3_gone", "What a post"), ("c5", "t1_c4", "Agreed"),
            ("c6", "t3_gone", "Deleted?"), ("p2", "", "The budget"), ("c7", "t3_p2", "Too high")]
    frame = pd.DataFrame({"id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "body": [r[2] for r in rows], "author": ["u"] * len(rows),
                          "created_utc": [str(1_600_000_000 + 60 * i) for i in range(len(rows))]})
    out, report = validate(frame, "reddit.jsonl")
    t = threads_of(out)
    assert t.mates(3).tolist() == [0, 1, 2, 3], "a post, a comment, a reply to it and one to that"
    assert t.mates(4).tolist() == [4, 5, 6], "the comments of a post the file lacks"
    assert t.mates(8).tolist() == [7, 8]
    assert out["conversation_id"].tolist()[:7] == ["p1"] * 4 + ["gone"] * 3
    assert report.notes[-1] == ("conversations made from column 'parent_id': 7 replies, 3 conversations of two or "
                                "more texts")


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
    shown, left_out = annotate.conversation(t, frame, s, 0)
    assert shown["text"].tolist() == ["post", "reply", "late reply"] and left_out == 0
    assert shown["label"].tolist() == ["included", "unlabelled", "unlabelled"]
    assert annotate.conversation(t, frame, s, 2)[0].empty and annotate.conversation(None, frame, s, 0)[0].empty
    assert openings(t, frame, [0, 1, 2, 3]).tolist() == [1, -1, -1, 1], "a reply's thread opens with the post"


def test_a_long_conversation_shows_its_first_text_and_those_around_the_text():
    """A thread of 1,000 replies is not drawn whole (a browser took 11 s for 2,000 texts with their buttons): its
    first text and the texts around the one asked about, that one included, and how many are left out."""
    n = 1000
    frame = pd.DataFrame({"id": [f"t{i}" for i in range(n)], "text": [f"text {i}" for i in range(n)],
                          "date": pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n)[::-1], unit="min"),
                          "conversation_id": "c"})  # the rows newest first: the thread's first text is the last row
    t, s = threads_of(frame), Session()
    shown, left_out = annotate.conversation(t, frame, s, 500, shown=40)
    assert len(shown) == 40 and left_out == n - 40
    assert shown["text"].iloc[0] == f"text {n - 1}", "the thread's first text first"
    assert "text 500" in shown["text"].tolist()
    assert shown["text"].iloc[1:].tolist() == [f"text {i}" for i in range(519, 480, -1)], "oldest first around it"
    near_end, _ = annotate.conversation(t, frame, s, 0, shown=40)  # the newest reply: the last 39 and the first
    assert near_end["text"].tolist() == [f"text {n - 1}"] + [f"text {i}" for i in range(38, -1, -1)]
    assert annotate.conversation(t, frame, s, n - 1, shown=40)[0]["text"].tolist() == [
        f"text {i}" for i in range(n - 1, n - 41, -1)], "the first text itself: the first 40"
    whole, left_out = annotate.conversation(t, frame, s, 500, shown=n)
    assert len(whole) == n and left_out == 0


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


def post_with_replies_found(corpus, ctx, replies: int = 2, reply: bool = False) -> tuple[AppTest, int]:
    """(the Annotate page, run, with a text of a conversation of ``replies`` or more replies found by a keyword only it
    holds (as the page's keyword search reads it: in every form), that text's row); ``reply``: a reply, not the text
    that opens the conversation."""
    from collections import Counter

    from core import wordforms

    words = [set(re.findall(r"\w{7,}", t.lower())) for t in corpus.frame["text"]]
    counts = Counter(w for ws in words for w in ws)
    firsts = openings(ctx.threads, corpus.frame, np.arange(corpus.n))
    row, word = next((r, w) for r in range(corpus.n) if len(ctx.threads.mates(r)) > replies
                     and (firsts[r] >= 0 or not reply)
                     for w in sorted(words[r]) if counts[w] == 1
                     and len(annotate.text_matches(ctx, w, word_forms=wordforms.language_of(corpus))) == 1)
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "pol"
    at.run()
    at.text_input(key="kw_query").set_value(word)
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert not at.exception, at.exception
    return at, row


def test_the_annotate_page_shows_a_texts_conversation_and_labels_its_texts(own_pol):
    from ui.resources import search_context_of

    corpus = own_pol
    ctx = search_context_of(corpus, "cpu")
    assert ctx.threads is not None and ctx.threads.count >= 20
    at, row = post_with_replies_found(corpus, ctx)
    mates = [int(m) for m in ctx.threads.mates(row) if m != row]
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


def test_a_reply_in_the_annotate_list_names_the_text_its_thread_opens_with(own_pol):
    """A reply ("Přesně tak.") is judged by what it answers: under it, the text that opens its conversation, until
    the conversation itself is shown."""
    from ui.resources import search_context_of
    from ui.text import unescape
    from ui.text_list import OPENING_CHARS

    ctx = search_context_of(own_pol, "cpu")
    at, row = post_with_replies_found(own_pol, ctx, reply=True)
    first = own_pol.frame["text"].iloc[int(openings(ctx.threads, own_pol.frame, [row])[0])]
    said = [unescape(c.value) for c in at.caption if c.value.startswith("↳")]
    assert said == [f"↳ In the thread of: “{first[:OPENING_CHARS] + ('…' if len(first) > OPENING_CHARS else '')}”"
                    .replace("\n", " ")]
    at.button(key=f"conv_{row}").click().run()
    assert not [c for c in at.caption if c.value.startswith("↳")], "the thread itself shows it"


def test_a_quote_in_the_annotate_list_shows_the_tweet_it_quotes(tmp_path, model, monkeypatch):
    """A quote ("Přesně tak.") is judged by what it quotes: imported from API v1.1 JSON, the Annotate page shows the
    quoted tweet under the quote's own words, cut to QUOTED_CHARS, as plain text (a quoted <img onerror> stays
    text); a text that quotes nothing shows no such line. The Review page shows it beside a quote the annotators
    disagree on."""
    from ui.text import unescape
    from ui.text_list import QUOTED_CHARS

    first = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, nrows=1)["text"][0]
    quoted = "<img src=x onerror=alert(1)> " + first
    tweets = quote_corpus(tmp_path, model, {1: ("Přesně tak, zkušebníslovo.", quoted)})
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "q"
    at.run()
    at.text_input(key="kw_query").set_value("zkušebníslovo")
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert not at.exception, at.exception
    said = [unescape(c.value) for c in at.caption if c.value.startswith("❝")]
    whole = f"@evil: {quoted}"
    shown = whole[:QUOTED_CHARS] + ("…" if len(whole) > QUOTED_CHARS else "")
    assert said == [f"❝ Quoting {shown}".replace("\n", " ")]
    assert "Přesně tak, zkušebníslovo." in [t.value for t in at.text]
    at.text_input(key="kw_query").set_value(re.findall(r"\w{6,}", tweets["text"][5])[0])
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert [t.value for t in at.text] and not [c for c in at.caption if c.value.startswith("❝")]

    from core.teams import QUOTING, check_annotator

    ids = tweets["id"].tolist()[:3]  # where two annotators disagree, the Review page shows what the quote quotes
    table = disagreed_on(monkeypatch, tmp_path / "d", "q", ids)
    assert table[QUOTING].tolist() == ["", whole, ""]
    with pytest.raises(ValueError, match="a column of the Review page's table"):
        check_annotator("Quoting")


def quote_corpus(tmp_path, model, quotes: dict[int, tuple[str, str]], n: int = 200, progress=None, notify=None,
                 **spec):
    """A corpus "q" under ``tmp_path / "d"`` of ``n`` real Czech tweets imported from API v1.1 JSON, tweet i of
    ``quotes`` replaced by a quote (its own words, the words of the tweet it quotes by @evil); the tweets as read."""
    import json

    from core.corpus import ImportSpec, import_corpus

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                         nrows=n)
    lines = []
    for i, row in enumerate(tweets.itertuples()):
        tweet = {"id_str": row.id, "full_text": row.text, "created_at": f"2021-03-{1 + i % 20:02d}T10:15:00Z",
                 "user": {"screen_name": row.author}}
        if i in quotes:
            own, quoted = quotes[i]
            tweet.update(full_text=own, quoted_status={
                "full_text": quoted.replace("&", "&amp;").replace("<", "&lt;"), "user": {"screen_name": "evil"}})
        lines.append(json.dumps(tweet, ensure_ascii=False))
    src = tmp_path / "tweets.jsonl"
    src.write_text("\n".join(lines), encoding="utf-8")
    import_corpus(ImportSpec(input=src, name="q", **spec), root=tmp_path / "d", model_loader=lambda n, d: model,
                  progress=progress, notify=notify)
    return tweets


def test_the_keyword_search_finds_a_quote_by_the_tweet_it_quotes(tmp_path, model, monkeypatch):
    """"Přesně tak." quoting a tweet about a flood is about the flood: with ``quotes`` the keyword search finds a quote
    where the tweet it quotes holds the query (plainly, as a pattern, in another form of the word), within the
    quote's own dates and authors, and says how many only that found; without it, only the texts' own words."""
    from core.corpus import ImportSpec, import_corpus, load_corpus
    from core.search import REGISTRY
    from ui.resources import search_context_of

    tweets = quote_corpus(tmp_path, model, {1: ("Přesně tak.", "Velká povodeň na Moravě, zkušebníslovo."),
                                            2: ("Zkušebníslovo i tady.", "Něco jiného."),
                                            120: ("Souhlas.", "Další zkušebníslovo a povodně všude.")})
    import_corpus(ImportSpec(input=tmp_path / "tweets.jsonl", name="qx", indexes="on"), root=tmp_path / "d",
                  model_loader=lambda n, d: model)  # a large corpus's engine: what they quote indexed at import
    none = np.zeros(0, np.int64)
    for name in ("q", "qx"):
        ctx = search_context_of(load_corpus(name, tmp_path / "d"), "cpu")
        assert (ctx.quotes.index.text_index is not None) == (name == "qx")

        def found(**params):
            r = REGISTRY["keyword"].search(ctx, none, none, None, **params)
            return sorted(r.rows.tolist()), r.info

        rows, info = found(query="zkušebníslovo")
        assert rows == [2] and "by_quote" not in info, "its own words only, by default"
        rows, info = found(query="zkušebníslovo", quotes=True)
        assert rows == [1, 2, 120] and info["by_quote"] == 2
        said = annotate.search_message("keyword", REGISTRY["keyword"].search(ctx, none, none, None,
                                                                             query="zkušebníslovo", quotes=True))
        assert said.endswith("(0 already labelled; 2 found only in the tweet they quote), added as included.")
        assert found(query=r"zkušební\w+|qqxq", is_regex=True, quotes=True)[0] == [1, 2, 120], "a pattern too"
        since = pd.Timestamp("2021-03-02").date()
        assert found(query="zkušebníslovo", quotes=True, date_from=since)[0] == [1, 2], "the quote's own date"
        assert found(query="zkušebníslovo", quotes=True, authors=[tweets["author"][120]])[0] == [120], "its author"
        by_form = found(query="povodeň", quotes=True, word_forms="cs")
        assert {1, 120} <= set(by_form[0]), "'povodně' in a quoted tweet found by Every form"
        own = set(found(query="povodeň", word_forms="cs")[0])
        assert not {1, 120} & own and by_form[1]["by_quote"] == 2
        labelled = REGISTRY["keyword"].search(ctx, np.array([1]), np.array([120]), None, query="zkušebníslovo",
                                              quotes=True)
        assert labelled.rows.tolist() == [2] and labelled.info["already_labelled"] == 2
    from core.corpus import reindex_keywords
    from core.search import textindex
    from core.search.keyword import QUOTES

    older = load_corpus("qx", tmp_path / "d")  # indexes as an older version built them: both built again
    for folder in (older.data_folder, older.data_folder / QUOTES):
        (folder / textindex.EDITION_FILE).unlink()
    assert older.keyword_index_outdated
    reindex_keywords(older)
    again = load_corpus("qx", tmp_path / "d")
    assert not again.keyword_index_outdated
    assert textindex.edition(again.data_folder / QUOTES / textindex.FILE) == textindex.EDITION
    ctx = search_context_of(again, "cpu")
    assert sorted(REGISTRY["keyword"].search(ctx, none, none, None, query="zkušebníslovo", quotes=True)
                  .rows.tolist()) == [1, 2, 120]
    from core.search.lexical import words_file

    # Suggest's word matrix made at import reads each quote with what it quotes (test_suggest_reads_a_quote_...)
    made = [f.name for f in load_corpus("qx", tmp_path / "d").data_folder.glob("words-v*.npz")]
    assert made == [words_file(tmp_path, "cs", quotes=True)[0].name]

    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))  # on the Annotate page: the box, ticked by default
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "q"
    at.run()
    at.checkbox(key="kw_quotes").uncheck()
    at.text_input(key="kw_query").set_value("zkušebníslovo")
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.text] == ["Zkušebníslovo i tady."]
    at.checkbox(key="kw_quotes").check()
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    said = " ".join(str(m.value) for m in [*at.success, *at.info, *at.warning])
    assert "2 new texts of 3 hits (1 already labelled; 2 found only in the tweet they quote)" in said, said
    assert {"Přesně tak.", "Souhlas."} <= {t.value for t in at.text}
    assert len([c for c in at.caption if c.value.startswith("❝ Quoting @evil")]) == 2, "each shown with what it quotes"
    at.radio(key="ann_view").set_value("Included")
    at.text_input(key="ann_filter").set_value("zkušebníslovo").run()  # the filter reads the quotes as the search did
    assert {t.value for t in at.text} == {"Přesně tak.", "Souhlas.", "Zkušebníslovo i tady."}, "the box ticked"
    at.checkbox(key="kw_quotes").uncheck()
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    at.radio(key="ann_view").set_value("Included").run()
    assert [t.value for t in at.text] == ["Zkušebníslovo i tady."], "unticked: a text's own words"

    at = AppTest.from_file(str(ROOT / "pages/2_Timeline.py"), default_timeout=120)  # its keyword timeline too
    at.query_params["corpus"] = "q"
    at.run()
    at.radio(key="tl_source").set_value("Keyword search").run()
    at.text_input(key="tl_query").set_value("zkušebníslovo").run()
    assert not at.exception and any(c.value.startswith("3 texts, one box each") for c in at.caption)
    at.checkbox(key="tl_quotes").uncheck().run()
    assert any(c.value.startswith("1 text, one box each") for c in at.caption), [c.value for c in at.caption]


def test_the_quotes_set_lets_cos_find_a_quote_whose_own_words_say_nothing(tmp_path, model, monkeypatch, capsys,
                                                                         caplog):
    """"Přesně tak." quoting a tweet: COS from that tweet does not find the quote by the import's vectors; with the
    embedding set ``quotes`` (precompute.quotes) it does, and every other text keeps its vector. A corpus without
    quotes, and a weight of 0, are refused by name."""
    from core import embedsets
    from core.corpus import load_corpus
    from core.search import REGISTRY
    from precompute import quotes as job

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150]), 2: ("Souhlas!", texts[160]),
                                   3: ("Ano.", "")})  # 3 quotes nothing (a status withheld): its own words only
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    assert job.main(["--corpus", "q"]) == 0
    c = load_corpus("q", tmp_path / "d")
    assert [s.name for s in embedsets.listing(c)] == ["import", "quotes"]
    own, read = np.asarray(c.embeddings, np.float32), embedsets.load_vectors(c, "quotes")
    np.testing.assert_array_equal(np.delete(read, [1, 2], 0), np.delete(own, [1, 2], 0))
    np.testing.assert_allclose(np.linalg.norm(read, axis=1), 1, atol=1e-5)
    none = np.zeros(0, np.int64)

    def cos_finds(x, seed: int) -> list[int]:
        ctx = SearchContext(VectorIndex(x), KeywordIndex(c.frame["text"].tolist()), c.frame)
        return REGISTRY["cos"].search(ctx, np.array([seed]), none, 10).rows.tolist()

    for quote, seed in ((1, 150), (2, 160)):
        assert quote not in cos_finds(own, seed), "by its own words the quote is far from what it quotes"
        assert quote in cos_finds(read, seed)[:3]
    assert not (tmp_path / "d" / ".work" / "q" / "quotes").exists(), "its chunks removed once the set is written"
    from core import quoted

    monkeypatch.setattr(quoted, "IN_MEMORY", 0)  # as for a large corpus: copied through a file, a block at a time
    monkeypatch.setattr(quoted, "BLOCK", 7)
    again = quoted.build(embedsets.with_set(c, "quotes"), model_loader=lambda n, d: model)  # as a page holds it
    np.testing.assert_allclose(np.load(again.path / "vectors.npy"), read, atol=1e-6), "from the import's, not twice"

    (tmp_path / "plain").mkdir()
    quote_corpus(tmp_path / "plain", model, {})
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "plain" / "d"))
    from precompute._cli import run_main

    assert run_main(job.main, ["--corpus", "q"]) == 2
    assert "corpus 'q' has no quotes" in caplog.text
    with pytest.raises(SystemExit):
        job.main(["--corpus", "q", "--weight", "0"])
    assert "must be in (0, 100], got 0" in capsys.readouterr().err


def test_the_import_makes_the_quotes_set_when_asked(tmp_path, model):
    """An import told to (``--quotes-set``, *Read quotes with what they quote* on the home page) ends with the set
    ``quotes`` made, as precompute.quotes makes it later, its embedding a step of its own with a bar; a corpus
    without quotes is imported and told there is no set to make."""
    from core import embedsets, quoted
    from core.corpus import load_corpus

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    steps = []
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150]), 2: ("Souhlas!", texts[160])}, quotes_set=True,
                 progress=lambda done, total, info: steps.append((info.get("stage"), done, total)))
    c = load_corpus("q", tmp_path / "d")
    assert [s.name for s in embedsets.listing(c)] == ["import", "quotes"]
    assert embedsets.listing(c)[1].manifest["quotes"] == 2
    assert ("embedding what the quotes quote", 2, 2) in steps
    made = embedsets.load_vectors(c, "quotes")
    again = embedsets.load_vectors(c, quoted.build(c, model_loader=lambda n, d: model).name)  # the command's own
    np.testing.assert_allclose(made, again, atol=1e-6)
    assert not np.allclose(made[1], np.asarray(c.embeddings[1], np.float32))

    told = []
    (tmp_path / "plain").mkdir()
    quote_corpus(tmp_path / "plain", model, {}, quotes_set=True, notify=told.append)
    plain = load_corpus("q", tmp_path / "plain" / "d")
    assert [s.name for s in embedsets.listing(plain)] == ["import"]
    assert told[-1] == ("No embedding set quotes made: corpus 'q' has no quotes (no text quotes a tweet in column "
                        "'quoted_text').")  # after the model's warning (an English model for Czech tweets)


class Spy:
    """The packaged model, with every text it is asked to embed counted (and its vectors reversed, if ``other``: a
    model that is not the one the corpus was made with, under its name)."""

    def __init__(self, model, other: bool = False):
        self.model, self.other, self.seen = model, other, []

    def encode(self, texts, **kw):
        self.seen.extend(texts)
        x = self.model.encode(texts, **kw)
        return x[:, ::-1].copy() if self.other else x

    def __getattr__(self, name):
        return getattr(self.model, name)


def test_a_quoted_tweet_is_embedded_once_and_not_again_for_a_new_import(tmp_path, model, monkeypatch):
    """A tweet quoted twice is embedded once; the set made again after a new import of the corpus (a week's tweets
    added) embeds only the tweets quoted since, and is what a set made from nothing is. Where the model no longer
    gives the vectors the set kept, every quoted tweet is embedded again."""
    from core import embedsets, quoted
    from core.corpus import load_corpus

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    quotes = {1: ("Přesně tak.", texts[150]), 2: ("Souhlas!", texts[150]), 3: ("Ano.", texts[160])}
    quote_corpus(tmp_path, model, quotes)
    first = Spy(model)
    made = quoted.build(load_corpus("q", tmp_path / "d"), model_loader=lambda n, d: first)
    assert len(first.seen) == 2 and made.manifest["quoted_tweets"] == 2 and made.manifest["quotes"] == 3
    monkeypatch.setattr(quoted, "CHECK", 1)  # one kept quoted tweet embedded again to check the model
    monkeypatch.setattr(quoted, "BLOCK", 1)  # and everything written a row at a time, as 10M rows are in blocks
    quote_corpus(tmp_path, model, {**quotes, 205: ("Jo.", texts[170])}, n=210, overwrite=True)
    c = load_corpus("q", tmp_path / "d")
    assert [s.name for s in embedsets.listing(c)] == ["import"], "the set of the earlier import is not listed"
    second = Spy(model)
    again = quoted.build(c, model_loader=lambda n, d: second)
    assert len(second.seen) == 2 and again.manifest["embedded"] == 1, "the new quoted tweet, and one to check"
    read = embedsets.load_vectors(c, "quotes")
    embedsets.delete(c, "quotes")
    fresh = embedsets.load_vectors(c, quoted.build(c, model_loader=lambda n, d: model).name)
    np.testing.assert_allclose(read, fresh, atol=1e-5)
    other = Spy(model, other=True)
    third = quoted.build(c, model_loader=lambda n, d: other)
    assert third.manifest["embedded"] == 3 and len(other.seen) == 1 + 3, "checked, then every one embedded again"


def test_a_disk_that_fills_up_while_the_quotes_set_is_made_is_said_and_the_import_kept(tmp_path, model, monkeypatch):
    """An import with --quotes-set whose disk fills up while the set is written: the corpus is imported (its
    vectors as they were), the import says the set was not made, why and what to run; the copy of the vectors is
    removed from the work folder (the room given back) and the quoted tweets embedded so far are kept, so the
    command made again embeds none of them. A disk without the room the set takes is said before anything is
    embedded, the set made before kept."""
    import errno

    from core import embedsets, quoted
    from core.corpus import load_corpus

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    real = embedsets.save

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(embedsets, "save", full)
    monkeypatch.setattr(quoted, "IN_MEMORY", 0)  # the vectors copied into the work folder, as at 10M rows
    told = []
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150]), 2: ("Ano.", texts[160])}, quotes_set=True,
                 notify=told.append)
    c = load_corpus("q", tmp_path / "d")
    assert c.n == 200 and [s.name for s in embedsets.listing(c)] == ["import"]
    assert re.search(r"No embedding set quotes made: the disk of .* filled up .* the corpus and its vectors are as "
                     r"they were.* run python -m precompute\.quotes --corpus q", told[-1]), told
    work = tmp_path / "d" / ".work" / "q" / quoted.SET
    assert not (work / "vectors.npy").exists() and not (work / "kept").exists()
    monkeypatch.setattr(embedsets, "save", real)
    spy = Spy(model)
    made = quoted.build(c, model_loader=lambda n, d: spy)
    assert spy.seen == [] and made.manifest["quoted_tweets"] == 2, "the quoted tweets embedded before were kept"
    kept = embedsets.load_vectors(c, quoted.SET)
    disk = quoted.shutil.disk_usage
    monkeypatch.setattr(quoted.shutil, "disk_usage", lambda p: disk(p)._replace(free=1000))
    with pytest.raises(quoted.QuotesError, match=r"needs about 0\.0 GB free on the disk of .*0\.0 GB are free: make "
                                                 r"room there.*nothing was embedded"):
        quoted.build(c, model_loader=lambda n, d: spy)  # said before anything is embedded, the set kept
    assert spy.seen == []
    np.testing.assert_array_equal(embedsets.load_vectors(c, quoted.SET), kept)
    monkeypatch.setattr(quoted, "_check_room", lambda *a, **k: None)  # the embedding's own check, after its 1st chunk
    with pytest.raises(quoted.QuotesError, match=r"set 'quotes' of corpus 'q' was not made: embedding .* needs about "
                                                 r".* run python -m precompute\.quotes --corpus q"):
        quoted.build(c, model_loader=lambda n, d: spy)
    np.testing.assert_array_equal(embedsets.load_vectors(c, quoted.SET), kept)


def test_the_quotes_set_of_a_corpus_kept_as_fp16_is_an_fp16_store_searched_in_place(tmp_path, model, monkeypatch):
    """A corpus of a million rows keeps its vectors as an fp16 store, memory-mapped; its set ``quotes`` is one too
    (7.7 GB at 10M rows, not 15 GB of float32 in a server's memory), and picked, the searches read the set's store,
    not the import's. A damaged store is named."""
    from core import embedsets, quoted, vectorstore
    from core.corpus import load_corpus
    from core.search import REGISTRY
    from ui.resources import search_context_of

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150]), 2: ("Souhlas!", texts[160])}, precision="fp16")
    c = load_corpus("q", tmp_path / "d")
    assert c.vector_file == c.data_folder / vectorstore.FILE
    monkeypatch.setattr(quoted, "IN_MEMORY", 0)  # as at 10M rows: copied and blended through a file
    monkeypatch.setattr(quoted, "BLOCK", 7)
    monkeypatch.setattr(embedsets, "BLOCK", 50)  # and the store written a block of rows at a time
    made = quoted.build(c, model_loader=lambda n, d: model)
    assert sorted(f.name for f in made.path.iterdir()) == ["manifest.json", quoted.KEYS, quoted.KEPT, vectorstore.FILE]
    assert np.load(made.path / quoted.KEPT).dtype == np.float16  # the quoted tweets' vectors kept as the corpus's
    picked = embedsets.with_set(c, "quotes")
    assert picked.vector_file == made.path / vectorstore.FILE and picked.embeddings.dtype == np.float16
    np.testing.assert_array_equal(np.delete(picked.embeddings, [1, 2], 0), np.delete(c.embeddings, [1, 2], 0))
    none = np.zeros(0, np.int64)
    for x, found in ((c, False), (picked, True)):
        ctx = search_context_of(x, "cpu")
        assert ctx.index.precision == "fp16-mapped"
        for quote, seed in ((1, 150), (2, 160)):
            assert (quote in REGISTRY["cos"].search(ctx, np.array([seed]), none, 3).rows.tolist()) == found
    store = made.path / vectorstore.FILE
    store.write_bytes(store.read_bytes()[:-10])
    with pytest.raises(embedsets.EmbeddingSetError, match=r"quotes.*vectors\.f16\.faiss is not a readable"):
        embedsets.load_vectors(c, "quotes")


def test_suggest_reads_a_quote_with_the_words_of_what_it_quotes(tmp_path, model):
    """"Přesně tak." quoting a tweet on vaccination: the server's Suggest, taught vaccination tweets, brings the quote
    by the words of the tweet it quotes (a word matrix of its own beside the corpus, counted by lemma); by the
    quote's own words it does not."""
    import dataclasses
    from pathlib import Path

    from core.corpus import load_corpus
    from core.search import REGISTRY
    from core.search.lexical import words_file
    from ui.resources import search_context_of

    later = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=400)["text"]
    quotes = {2: ("Přesně tak.", later[325]), 3: ("Souhlas!", later[317]), 4: ("Ano.", later[270])}
    assert all("očkov" in quoted.lower() for _own, quoted in quotes.values())
    quote_corpus(tmp_path, model, quotes, n=240)
    c = load_corpus("q", tmp_path / "d")
    own = c.frame["text"].tolist()
    topic = np.array([i for i, t in enumerate(own) if "očkov" in t.lower()])
    other = np.array([i for i, t in enumerate(own) if "očkov" not in t.lower() and i not in quotes][:12])
    ctx = search_context_of(c, "cpu")
    found = REGISTRY["suggest"].search(ctx, topic, other, 30).rows.tolist()
    assert set(quotes) <= set(found), found
    assert [f.name for f in c.data_folder.glob("words-v*.npz")] == [words_file(Path(), "cs", quotes=True)[0].name]
    by_own_words = dataclasses.replace(ctx, word_index=WordIndex(own, lang="cs"))
    assert not set(quotes) & set(REGISTRY["suggest"].search(by_own_words, topic, other, 30).rows.tolist())


def test_the_annotate_page_makes_the_quotes_set_and_picks_it(tmp_path, model, monkeypatch):
    """In a corpus with quotes the Annotate page offers to read them with what they quote; a click makes the set
    (a progress bar), picks it in the sidebar, and COS then brings the quote with the tweet it quotes."""
    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=200)["text"]
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150])})
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "q"
    at.run()
    assert any("read each with what it quotes, once for this corpus" in c.value for c in at.caption)
    at.button(key="btn_quotes_set").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="embedding_set").value == "quotes"
    assert any(m.value.startswith("1 quote is now read with what it quotes") for m in at.success)
    assert not any(b.key == "btn_quotes_set" for b in at.button), "made and picked: no longer offered"
    at.checkbox(key="kw_quotes").uncheck()  # the keyword by the texts' own words: only the tweet quoted
    at.text_input(key="kw_query").set_value("kohezní politiky")
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    assert 150 in group_rows(at, "included") and 1 not in group_rows(at, "included"), "the keyword: its own words"
    at.button(key="btn_cos").click().run()
    assert 1 in group_rows(at, "included"), "COS brings the quote of what was included"
    # the corpus imported again with a quote more: the set made for the earlier import is offered again, and made
    # again it embeds only the tweet quoted since
    quote_corpus(tmp_path, model, {1: ("Přesně tak.", texts[150]), 205: ("Jo.", texts[170])}, n=210, overwrite=True)
    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120)
    at.query_params["corpus"] = "q"
    at.run()
    assert any("was made for an earlier import of this corpus" in c.value for c in at.caption)
    at.button(key="btn_quotes_set").click().run()
    assert any(m.value.startswith("2 quotes are now read with what they quote (1 quoted tweet embedded now, 1 kept "
                                  "from the set made before)") for m in at.success), [m.value for m in at.success]


def group_rows(at: AppTest, which: str) -> set[int]:
    return set(getattr(at.session_state["session"], which).tolist())


def test_quotes_found_by_what_they_quote_come_in_every_page_of_hits_not_last():
    """40 texts that say 'povodeň' close to the hits' centre and 10 quotes of such texts whose own words are far from
    it ("Přesně tak."): by their own vectors the quotes would rank last, after the pages an annotator reviews; each
    page of 10 hits takes its share (2) of them instead, each part in its own order."""
    from core.ingest import QUOTED
    from core.search import REGISTRY
    from core.search.keyword import spread

    rng = np.random.default_rng(0)
    topic = rng.standard_normal(16)
    near = topic + 0.3 * rng.standard_normal((40, 16))
    far = rng.standard_normal((10, 16))
    x = np.vstack([near, far]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    texts = [f"povodeň na řece {i}" for i in range(40)] + ["Přesně tak."] * 10
    frame = pd.DataFrame({"id": [str(i) for i in range(50)], "text": texts,
                          QUOTED: [""] * 40 + [f"@hlas: povodeň v obci {i}" for i in range(10)]})
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), frame)
    none = np.zeros(0, np.int64)
    by_own = REGISTRY["keyword"].search(ctx, none, none, None, query="povodeň").rows
    assert len(by_own) == 40
    found = REGISTRY["keyword"].search(ctx, none, none, None, query="povodeň", quotes=True)
    assert len(found) == 50 and found.info["by_quote"] == 10
    pages = found.rows.reshape(5, 10)
    assert [int((page >= 40).sum()) for page in pages] == [2] * 5
    assert found.rows[found.rows < 40].tolist() == by_own.tolist(), "the texts' own order kept"
    quotes = found.rows[found.rows >= 40]
    assert np.all(np.diff(ctx.index.scores_of(quotes, ctx.index.mean_of(by_own))) <= 1e-6), "theirs too, by the "\
        "centre of the hits' own words"
    assert REGISTRY["keyword"].search(ctx, none, none, 10, query="povodeň", quotes=True).rows.tolist() == \
        found.rows[:10].tolist()
    assert spread(np.arange(5), np.zeros(5, bool)).tolist() == [0, 1, 2, 3, 4]
    assert spread(np.arange(3), np.ones(3, bool)).tolist() == [0, 1, 2]


def test_the_annotate_page_shows_a_long_conversation_in_parts(own_pol, monkeypatch):
    """Past annotate.CONVERSATION_SHOWN texts, the page shows the conversation's first text and those around the
    text, says how many of how many, and shows more at a click until all are shown."""
    from ui.resources import search_context_of

    monkeypatch.setattr(annotate, "CONVERSATION_SHOWN", 2)
    ctx = search_context_of(own_pol, "cpu")
    at, row = post_with_replies_found(own_pol, ctx, replies=4)
    whole = len(ctx.threads.mates(row))

    def shown() -> list[int]:
        return [int(b.key.rsplit("_", 1)[1]) for b in at.button if b.key and b.key.startswith(f"conv_tog_{row}_")]

    at.button(key=f"conv_{row}").click().run()
    assert len(shown()) == 2 and row in shown()
    assert f"2 of its {whole} texts: its first and those around this text." in [c.value for c in at.caption]
    while (more := next((b for b in at.button if b.key == f"conv_more_{row}"), None)) is not None:
        before = len(shown())
        assert more.label == f"Show {min(2, whole - before)} more"
        more.click().run()
        assert not at.exception, at.exception
        assert len(shown()) == min(before + 2, whole)
    assert sorted(shown()) == sorted(int(m) for m in ctx.threads.mates(row)), "at last every text of it"
    at.button(key=f"conv_{row}").click().run()
    at.button(key=f"conv_{row}").click().run()
    assert len(shown()) == 2, "opened again: the first part again"


def disagreed_on(monkeypatch, root, corpus: str, ids: list[str]) -> pd.DataFrame:
    """The Review page's table (by id) where alice included ``ids`` of ``corpus`` (under data root ``root``) and bob
    excluded them, both submitted."""
    from core.store import GroupStore
    from tests.test_team import as_user, submitted

    submitted(GroupStore(root / corpus / "groups.sqlite"), "afghanistan", "alice",
              (("alice", ids, []), ("bob", [], ids)))
    as_user(monkeypatch, "alice")
    review = AppTest.from_file(str(ROOT / "pages/8_Review.py"), default_timeout=120)
    review.query_params["corpus"] = corpus
    review.run()
    assert not review.exception, review.exception
    return review.get("data_editor")[0].value.set_index("id")


def test_a_reply_on_the_review_page_shows_the_post_it_answers(own_pol, monkeypatch, tmp_path):
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
    table = disagreed_on(monkeypatch, tmp_path / "d", "pol", ids)  # own_pol's data root
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


def test_the_quote_vectors_bench_runs_both_sets_and_prints_their_recall(capsys):
    """bench.quote_vectors on a slice: the benchmark's quotes made, the set made, the annotator run on both."""
    import json

    from bench import quote_vectors

    assert quote_vectors.main(["--rows", "1500", "--classes", "1", "--methods", "cos"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert lines[0]["rows"] == 1500 and lines[0]["quotes"] == 300
    arms = {ln["set"]: ln for ln in lines[1:]}
    assert set(arms) == {"import", "quotes"} and arms["quotes"]["set_s"] > 0
    assert all(ln["quoted_words"] == "on" for ln in arms.values())  # Suggest's words of a quote: as the app reads them
    assert all(0 < arms[s]["methods"]["cos"]["recall@1.0x"] <= 1 for s in arms)


def test_a_groups_export_carries_the_files_own_columns_its_conversation_ids_as_text(politicians):
    """An analyst takes a group to a spreadsheet with what the file told of each tweet: its conversation (an id of 19
    digits, as text, never a rounded number), its language, whom it replies to."""
    from core.export import group_frame, to_bytes
    from tests.conftest import xlsx_cells

    _root, corpus = politicians
    ids = corpus.frame["id"].tolist()
    frame = group_frame(corpus, ids[:3], ids[3:5])
    assert frame.columns.tolist() == ["id", "text", "label", "date", "author", "author_name", "lang",
                                      "in_reply_to_user_id", "conversation_id"]
    want = corpus.frame.set_index("id").loc[ids[:5], "conversation_id"].tolist()
    assert frame["conversation_id"].tolist() == want and all(len(v) == 19 for v in want)
    cells = xlsx_cells(to_bytes(frame, "xlsx"))
    assert cells["I1"] == ("text", "conversation_id") and cells["I2"] == ("text", want[0])
    csv = pd.read_csv(__import__("io").BytesIO(to_bytes(frame, "csv")), dtype=str)
    assert csv["conversation_id"].tolist() == want and csv["author"].tolist() == frame["author"].tolist()
