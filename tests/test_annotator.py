"""The simulated annotator: recall bookkeeping by hand, and an end-to-end run on a tiny slice."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pandas as pd

from bench.annotator import Run, main, simulate
from core.search import SearchContext
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from tests.conftest import clustered_unit_vectors, shared_file


def test_recall_is_found_over_class_size_at_each_budget():
    r = Run("c", "cos", size=20, seed_query="q", curve=[(10, 5), (20, 12), (30, 15), (40, 19)])
    assert r.recall_at(1.0) == 12 / 20
    assert r.recall_at(1.5) == 15 / 20
    assert r.recall_at(2.0) == 19 / 20
    assert r.recall_at(0.25) == 0.0


def test_simulation_on_a_constructed_case():
    # 3 well-separated topics; topic 0's texts all contain "alpha", 2 others contain it too
    x, labels = clustered_unit_vectors(300, 16, clusters=3, seed=4, spread=0.05)
    texts = [("alpha " if lab == 0 else "beta ") + str(i) for i, lab in enumerate(labels)]
    strays = np.flatnonzero(labels != 0)[:2]
    for i in strays:
        texts[i] = "alpha stray " + str(i)
    members = np.flatnonzero(labels == 0)
    for i in members[5:]:
        texts[i] = "gamma " + str(i)  # only 5 members are found by the keyword
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    run = simulate(ctx, members, "lda", ["alpha"], budget=1.5, seed_hits=100, cls="0")
    # the keyword step reviews 7 hits and finds 5 members
    assert run.curve[0] == (7, 5)
    # every later step reviews 10 texts (the last one what is left of the budget)
    steps = np.diff([c[0] for c in run.curve])
    assert (steps[:-1] == 10).all() and run.curve[-1][0] == int(1.5 * len(members))
    # on separated clusters every text the semantic steps show is a member, until all are found:
    # only the 2 stray keyword hits are ever wasted
    for reviewed, found in run.curve:
        assert found == min(reviewed - 2, len(members))
    assert run.true_included == run.included == len(members)


def test_end_to_end_on_a_tiny_slice(tmp_path, monkeypatch, model):
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    loads = []  # the patch must take effect: the session's model, never a second load
    monkeypatch.setattr("core.corpus.load_model", lambda name, device="auto": loads.append(name) or model)
    f = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)
    f = f[f["label"].isin(["1", "2", "3"])].groupby("label").head(40)
    data = tmp_path / "so_tiny.csv"
    f.to_csv(data, index=False)
    main(["--data", str(data), "--methods", "cos,suggest", "--budget", "1.5", "--out", str(tmp_path / "out")])
    summary = json.loads((tmp_path / "out" / "annotator_so_tiny.json").read_text())
    assert set(summary["methods"]) == {"cos", "suggest"} and summary["classes"] == 3
    for m in summary["methods"].values():
        assert 0.3 <= m["recall@1.0x"] <= m["recall@1.5x"] <= 1.0
    assert (tmp_path / "out" / "annotator_so_tiny.png").stat().st_size > 1000
    assert loads == ["default"]


def test_ceiling_r_precision_by_hand_and_on_separable_versus_random_labels():
    from bench.ceiling import out_of_fold_scores, recall_at

    member = np.array([1, 0, 1, 0, 0, 1], bool)  # 3 members
    scores = np.array([.9, .8, .7, .6, .5, .4], np.float32)
    assert recall_at(scores, member, 1.0) == 2 / 3  # top 3 = rows 0, 1, 2
    assert recall_at(scores, member, 2.0) == 1.0
    x, labels = clustered_unit_vectors(400, 16, clusters=4, seed=1, spread=0.05)
    separable = out_of_fold_scores(x, None, labels == 0, folds=5)
    assert recall_at(separable, labels == 0, 1.0) == 1.0
    noise = np.random.default_rng(0).random(400) < 0.25  # labels unrelated to the vectors
    assert recall_at(out_of_fold_scores(x, None, noise, folds=5), noise, 1.0) < 0.5


def loose_keyword_case():
    """Topic 0 of 10 separated topics; "alpha" is in its 10 most typical members and in 5 texts of
    each other topic (a loose keyword: 55 hits, 10 on topic, ranked first by the hits' centre)."""
    x, labels = clustered_unit_vectors(1000, 16, clusters=10, seed=4, spread=0.05)
    members = np.flatnonzero(labels == 0)
    centre = x[members].mean(0)
    typical = members[np.argsort(-(x[members] @ centre))[:10]]
    strays = np.concatenate([np.flatnonzero(labels == c)[:5] for c in range(1, 10)])
    texts = [f"text {i}" for i in range(len(x))]
    for i in np.concatenate([typical, strays]):
        texts[i] = f"alpha {i}"
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    return ctx, members


def test_adaptive_keyword_step_stops_at_the_first_mostly_excluded_page():
    from core.annotate import KeywordReview

    kr = KeywordReview(page=10, max_hits=100)
    assert kr.next_k() == 10
    kr.record(10, 2)
    assert kr.next_k(budget_left=4) == 4 and not kr.stopped
    kr.record(10, 6)  # 6 of 10 off topic: mostly excluded
    assert kr.stopped == "mostly excluded" and kr.next_k() == 0

    ctx, members = loose_keyword_case()
    fixed = simulate(ctx, members, "cos", ["alpha"], budget=1.5, seed_hits=100, cls="0")
    adaptive = simulate(ctx, members, "cos", ["alpha"], budget=1.5, seed_hits=100, cls="0", keyword_policy="adaptive")
    # the fixed step reviews all 55 hits (10 members, 45 strays) before any semantic step
    assert fixed.curve[0] == (55, 10)
    # the adaptive one reviews the 10 members, then a page of strays, and stops there
    assert adaptive.curve[:2] == [(10, 10), (20, 10)]
    assert adaptive.curve[2][0] == 30  # the next 10 come from the semantic step
    assert adaptive.recall_at(1.0) > fixed.recall_at(1.0)


def test_budget_counts_every_text_shown_keyword_hits_included():
    ctx, members = loose_keyword_case()
    for policy in ("fixed", "adaptive"):
        run = simulate(ctx, members, "cos", ["alpha"], budget=0.5, seed_hits=100, cls="0", keyword_policy=policy)
        shown = run.curve[-1][0]
        # by hand: the budget is half the class size in texts shown, keyword hits included; never more
        assert shown == int(0.5 * len(members)), (policy, len(members), run.curve)
        assert [c[0] for c in run.curve] == sorted(c[0] for c in run.curve)


def test_alternate_goes_back_to_the_keyword_when_semantic_steps_find_less():
    from core.annotate import KeywordReview

    kr = KeywordReview(page=10, max_hits=100)
    kr.record(10, 6)  # a loose keyword: 4 of 10 on topic, reviewing stops
    assert kr.stopped == "mostly excluded" and kr.last_share == 0.4
    assert not kr.resume(0.5)  # the semantic page found more: stay with it
    assert kr.resume(0.1) and kr.next_k() == 10  # it found less: the keyword's next page
    kr.record(10, 9)
    assert kr.stopped == "mostly excluded" and kr.last_share == pytest.approx(0.1)
    kr.shown = 100
    assert not kr.resume(0.0), "never past max_hits"

    # a topic the vectors do not separate (random directions) but its keyword partly marks:
    # after the first poor keyword page, semantic pages find little, so the keyword's pages win
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1000, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    members = np.sort(rng.choice(1000, 60, replace=False))
    others = np.setdiff1d(np.arange(1000), members)
    texts = [f"text {i}" for i in range(1000)]
    for i in np.concatenate([members[:40], rng.choice(others, 50, replace=False)]):
        texts[i] = f"alpha {i}"
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    runs = {policy: simulate(ctx, members, "cos", ["alpha"], budget=2.0, seed_hits=100, cls="0", keyword_policy=policy)
            for policy in ("adaptive", "alternate")}
    assert runs["alternate"].recall_at(2.0) > runs["adaptive"].recall_at(2.0) + 0.1, \
        {p: r.curve for p, r in runs.items()}
