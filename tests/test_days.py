"""Suggest's day features (core.search.suggest.day_features): an event's texts fill its days."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.search import SearchContext, suggest
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex


def dated(days: list[str | None]) -> SearchContext:
    frame = pd.DataFrame({"date": pd.to_datetime(pd.Series(days)).astype("datetime64[us]")})
    return SearchContext(VectorIndex(np.zeros((len(days), 4), np.float32)), frame=frame)


def test_a_text_has_the_share_its_day_kept_of_what_was_labelled_there_beside_the_share_kept_overall():
    ctx = dated(["2021-04-17 08:00", "2021-04-17 09:30", "2021-04-17 23:59", "2021-04-17 12:00",
                 "2021-04-18 01:00", "2021-04-18 02:00", None, "2021-04-20 10:00"])
    assert ctx.days.tolist() == [0, 0, 0, 0, 1, 1, -1, 3] and ctx.n_days == 4
    inc, exc = np.array([0, 1, 6]), np.array([2, 4])
    block = suggest.day_features(ctx.days, ctx.n_days, inc, exc, 0.5)
    values = block[np.arange(8)].toarray()[:, 0]
    # of the 4 dated labels, 2 kept: 0.5 overall. 17 April: 2 kept of 3, (2 + 5 * 0.5) / (3 + 5) - 0.5 = 0.0625;
    # 18 April: 0 of 1, -0.0833 (the largest: 0.5 at the weight 0.5); the 20th: nothing labelled, 0
    unit = 0.5 / (0.5 - 2.5 / 6)
    day = {17: (2 + 2.5) / 8 - 0.5, 18: 2.5 / 6 - 0.5}
    own = {0: (1 + 2.5) / 7 - 0.5, 2: (2 + 2.5) / 7 - 0.5, 4: 0.0}  # a labelled text's own label not counted
    expected = [own[0], own[0], own[2], day[17], own[4], day[18], 0, 0]
    assert np.allclose(values, np.array(expected) * unit, atol=1e-6)
    assert abs(values[[3, 5]]).max() == np.float32(0.5), "the largest day's value is the weight"
    assert values[5] < 0 < values[3], "a day kept less than overall is below 0, one kept more above"
    w = np.array([2.0], np.float32)
    assert np.allclose((block @ w)[[3, 5, 6, 7]], values[[3, 5, 6, 7]] * 2), "an unlabelled text's score"
    assert suggest.day_features(None, 0, inc, exc, 0.5) is None, "no dates"
    assert suggest.day_features(ctx.days, ctx.n_days, inc[:2], np.array([], int), 0.5) is None, "every day kept as all are"
    assert dated([None, None]).days is None and SearchContext(VectorIndex(np.zeros((2, 4)))).days is None


def test_a_days_texts_are_those_of_the_corpus_zones_day():
    """Dates are stored in UTC; a corpus imported with a zone counts a text on the day of that zone, as its Timeline
    does: a tweet of 00:30 in Prague (22:30 UTC in summer, 23:30 in winter) is on its own day, not the day before."""
    utc = ["2021-04-16 22:30", "2021-04-17 08:00", "2021-04-17 21:59", "2021-04-17 22:01", "2021-12-31 23:30", None]
    frame = pd.DataFrame({"date": pd.to_datetime(pd.Series(utc)).astype("datetime64[us]")})
    index = VectorIndex(np.zeros((len(utc), 4), np.float32))
    prague = SearchContext(index, frame=frame, timezone="Europe/Prague")
    # UTC: from 16 April, the last 259 days on (31 December); Prague: from 17 April, the last 1 January 2022
    assert SearchContext(index, frame=frame).days.tolist() == [0, 1, 1, 1, 259, -1], "UTC where none is given"
    assert prague.days.tolist() == [0, 0, 0, 1, 259, -1], "00:30 and 23:59 of 17 April in Prague, then the 18th"
    assert prague.n_days == 260 and SearchContext(index).n_days == 0


def event_corpus(seed: int = 0):
    """An event of three days: 45 texts on it whose words and meaning say little (everyday words, random directions)
    beside 15 that name it; 600 texts on nothing in particular spread over 60 days. The 15 and 10 of the others
    included, 60 background texts excluded."""
    rng = np.random.default_rng(seed)
    dim, chat = 24, ["yes exactly", "who pays for it", "well said", "and then what", "agreed here", "not so sure"]
    texts, vectors, dates = [], [], []
    for i in range(60):
        named = i < 15
        texts.append(f"explosion depot vrbetice {i}" if named else
                     f"{chat[rng.integers(len(chat))]} {rng.integers(999)}")
        vectors.append(np.eye(dim)[0] + 0.6 * rng.normal(size=dim) / np.sqrt(dim) if named else rng.normal(size=dim))
        dates.append(np.datetime64("2021-04-17") + np.timedelta64(int(rng.integers(3 * 86400)), "s"))
    for _ in range(600):
        texts.append(f"{chat[rng.integers(len(chat))]} {rng.integers(999)}")
        vectors.append(rng.normal(size=dim))
        dates.append(np.datetime64("2021-03-01") + np.timedelta64(int(rng.integers(60 * 86400)), "s"))
    x = np.asarray(vectors, np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    frame = pd.DataFrame({"text": texts, "date": np.array(dates, dtype="datetime64[us]")})
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), frame, word_index=WordIndex(texts))
    included = np.r_[np.arange(15), np.arange(15, 25)]
    background = np.arange(60, 660)
    excluded = background[:60]
    return ctx, included, excluded, np.arange(25, 60)


def test_suggest_brings_the_texts_of_an_events_days_that_their_words_do_not_find():
    ctx, inc, exc, event_left = event_corpus()
    found = {}
    for weight in (0.0, suggest.METHOD.defaults["day"]):
        r = suggest.search(ctx, inc, exc, len(event_left), day=weight)
        found[weight] = len(np.intersect1d(r.rows, event_left))
        assert ("day" in r.info) == (weight > 0)
    assert found[0.0] <= 2, found  # as many as chance gives (35 of the 635 texts left)
    assert found[suggest.METHOD.defaults["day"]] >= 5, found  # seeds 0-2 gave 7, 6, 7
    # a corpus without dates: the same answer as with the weight off
    plain = SearchContext(ctx.index, ctx.keyword_index, ctx.frame[["text"]], word_index=ctx.word_index)
    assert plain.days is None
    assert suggest.search(plain, inc, exc, 20, day=1.0).rows.tolist() == \
        suggest.search(ctx, inc, exc, 20, day=0.0).rows.tolist()


def test_the_default_suggest_reads_the_days():
    assert suggest.METHOD.defaults["day"] > 0
