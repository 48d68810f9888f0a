"""The simulated annotator: recall bookkeeping by hand, and an end-to-end run on a tiny slice."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pandas as pd

from testbed.annotator import Run, simulate
from core.search import SearchContext
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from tests.conftest import clustered_unit_vectors, shared_file


def test_recall_counts_members_text_by_text_up_to_each_mark():
    r = Run("c", "cos", size=20, seed_query="q", budget=2.0)
    r.step([True] * 5 + [False] * 5)  # step 1: 5 members in 10
    r.step([True] * 7 + [False] * 3)  # step 2 ends at the 1x mark (20 texts)
    r.step([False, True, True, True, True, False, False, False, False, False])  # ends at the 1.5x mark
    r.step([True] * 4 + [False] * 6)  # ends at the 2x mark
    assert r.recall_at(1.0) == 12 / 20
    assert r.recall_at(1.5) == 16 / 20  # the first 30 texts hold 5 + 7 + 4 members
    assert r.recall_at(2.0) == 20 / 20
    assert r.recall_at(0.25) == 5 / 20  # the mark (5 texts) falls inside the first step: its first 5 count
    assert r.recall_at(2.5) is None  # beyond the budget: not measured, never 0


def test_a_step_that_crosses_the_mark_counts_up_to_the_mark():
    # issue 33: a class of 8 whose keyword has 9 hits, the 8 members first: 8 of 8 at 1x (per step: 0)
    r = Run("c", "cos", size=8, seed_query="q", budget=2.0)
    r.step([True] * 8 + [False])
    assert r.recall_at(1.0) == 1.0 and r.recall_at(1.5) == 1.0


def eight_member_case():
    """A class of 8 tight members whose keyword has 9 hits: the 8 members and one stray far away
    (so the page, most typical first, shows the members first), inside 300 other texts."""
    x, labels = clustered_unit_vectors(400, 16, clusters=4, seed=2, spread=0.05)
    members = np.flatnonzero(labels == 0)[:8]  # the rest of topic 0 is left out: a class of 8
    keep = np.sort(np.concatenate([members, np.flatnonzero(labels != 0)]))
    x, labels = x[keep], labels[keep]
    members = np.flatnonzero(np.isin(keep, members))
    stray = np.flatnonzero(labels == 3)[0]
    texts = [f"text {i}" for i in range(len(x))]
    for i in [*members, stray]:
        texts[i] = f"alpha {i}"
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    return ctx, members


def test_the_simulated_annotators_keyword_finds_every_form_as_the_page_does():
    """bench.annotator --word-forms: the annotator's keyword finds its word in every form, as the Annotate page's
    Every form does; without it, the word as typed (the figures before it)."""
    x, labels = clustered_unit_vectors(300, 16, clusters=3, seed=3, spread=0.05)
    members = np.flatnonzero(labels == 0)
    texts = [f"text {i}" for i in range(len(x))]
    for j, i in enumerate(members):
        texts[i] = f"{['volby', 've volbách', 'do voleb', 'k volbám'][j % 4]} {i}"
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    plain = simulate(ctx, members, "cos", ["volby"], budget=1.0, seed_hits=100, cls="0", keyword_policy="fixed")
    every = simulate(ctx, members, "cos", ["volby"], budget=1.0, seed_hits=100, cls="0", keyword_policy="fixed",
                     word_forms="cs")
    typed = sum(t.startswith("volby") for t in texts)
    assert plain.curve[0][0] == typed and plain.texts[:typed] == [True] * typed  # the keyword's hits: "volby" only
    assert every.curve[0][0] == len(members) > typed and all(every.texts[:len(members)])  # the keyword found them all


def test_the_eight_member_class_whose_keyword_has_nine_hits_scores_full_recall_at_1x():
    ctx, members = eight_member_case()
    assert len(members) == 8
    for policy in ("fixed", "alternate"):
        run = simulate(ctx, members, "cos", ["alpha"], budget=2.0, seed_hits=100, cls="0", keyword_policy=policy)
        assert run.texts[:9] == [True] * 8 + [False], (policy, run.texts[:12])  # one page of 9 hits
        assert run.curve[0] == (9, 8)
        assert run.recall_at(1.0) == 1.0, policy


@pytest.mark.parametrize("method", ["cos", "suggest"])
@pytest.mark.parametrize("policy", ["fixed", "alternate"])
def test_recall_at_a_mark_does_not_depend_on_the_budget(method, policy):
    ctx, members = loose_keyword_case()
    runs = {b: simulate(ctx, members, method, ["alpha"], budget=b, seed_hits=100, cls="0", keyword_policy=policy)
            for b in (1.0, 2.0, 3.0)}
    assert runs[1.0].recall_at(1.0) == runs[2.0].recall_at(1.0) == runs[3.0].recall_at(1.0)
    assert runs[2.0].recall_at(1.5) == runs[3.0].recall_at(1.5) and runs[2.0].recall_at(2.0) == runs[3.0].recall_at(2.0)
    assert runs[1.0].recall_at(1.5) is None
    # the texts reviewed up to each budget are the same texts, in the same order
    mark = len(runs[1.0].texts)
    assert runs[2.0].texts[:mark] == runs[3.0].texts[:mark] == runs[1.0].texts


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
    from bench.annotator import main  # the benchmark's own command line, end to end (it is a tool people run)

    main(["--data", str(data), "--methods", "cos,suggest", "--budget", "1.5", "--out", str(tmp_path / "out")])
    summary = json.loads((tmp_path / "out" / "annotator_so_tiny.json").read_text())
    assert set(summary["methods"]) == {"cos", "suggest"} and summary["classes"] == 3
    for m in summary["methods"].values():
        assert 0.3 <= m["recall@1.0x"] <= m["recall@1.5x"] <= 1.0
    assert (tmp_path / "out" / "annotator_so_tiny.png").stat().st_size > 1000
    assert loads == ["default"]


def test_ceiling_r_precision_by_hand_and_on_separable_versus_random_labels():
    from testbed.ceiling import out_of_fold_scores, recall_at

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


def test_band_table_leaves_a_mark_blank_when_no_run_reached_it(tmp_path):
    from testbed.plot_bands import table

    run = tmp_path / "annotator-x"
    run.mkdir()
    lines = [{"dataset": "d", "cls": "a", "method": "cos", "size": 40, "band": "<=50", "keyword_policy": "alternate",
              "recall@1.0x": 0.5, "recall@1.5x": 0.75, "recall_measured": "per_text"},
             {"dataset": "d", "cls": "b", "method": "cos", "size": 40, "band": "<=50", "keyword_policy": "alternate",
              "recall@1.0x": 0.25, "recall@1.5x": 0.5, "recall_measured": "per_text"}]
    (run / "lines.jsonl").write_text("\n".join(json.dumps(r) for r in lines))
    row = next(line for line in table([run]).splitlines() if "| <=50 |" in line)
    assert row.endswith("| 0.375 / 0.625 /  |"), row  # 2x: budget 1.5, not reached: blank, never 0.000
    assert "per text" in row


def test_read_only_corpus_rows_reach_torch_without_a_copy_or_a_warning(tmp_path):
    import warnings

    from core.cluster.base import torch_rows

    np.save(tmp_path / "x.npy", np.ones((5, 3), np.float32))
    x = np.load(tmp_path / "x.npy", mmap_mode="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = torch_rows(x, "cpu")
    assert t.shape == (5, 3) and float(t.sum()) == 15.0


def test_recent_yield_counts_what_the_searches_before_the_newest_brought_in_and_what_is_still_included():
    from core.annotate import recent_yield
    from core.session import EXCLUDED, INCLUDED, Session

    def y(s, window):
        r = recent_yield(s, window=window)
        return None if r is None else (r.kept, r.seen, r.searches)

    s = Session()
    s.add_search("keyword", {"query": "a"}, range(0, 10))
    s.add_search("cos", {}, range(10, 20))
    assert y(s, 10) == (10, 10, 1) and y(s, 11) is None, "the newest search (rows 10-19) may not be reviewed yet"
    s.set_labels(range(0, 8), EXCLUDED)
    assert y(s, 10) == (2, 10, 1)
    s.add_search("suggest", {}, [5, 6, 20, 21])  # 5 and 6 are labelled already: they do not count again
    s.set_labels([12, 13, 14], EXCLUDED)
    assert y(s, 10) == (7, 10, 1)  # the cos search: 7 of its 10 kept
    assert y(s, 12) == (9, 20, 2), "whole searches: the cos one and the keyword's"
    s.set_labels([3], INCLUDED)  # excluded, then included again: it counts as kept
    assert y(s, 20) == (10, 20, 2)
    s.undo()  # the re-include
    s.undo()  # the three exclusions
    s.undo()  # the newest search: the cos step is the newest again
    assert y(s, 10) == (2, 10, 1) and y(s, 11) is None
    s.switch_to([1, 2], [], "open")  # another group: what the searches brought into the old one is not its
    s.add_search("cos", {}, range(30, 40))
    s.add_search("cos", {}, range(40, 50))
    assert y(s, 10) == (10, 10, 1) and y(s, 11) is None


def test_a_long_search_is_read_whole_so_its_weak_tail_alone_does_not_say_stop():
    from core.annotate import recent_yield
    from core.session import EXCLUDED, Session

    s = Session()
    s.add_search("keyword", {"query": "a"}, range(100))  # all hits at once, best first
    s.set_labels(range(60, 100), EXCLUDED)  # the tail is off topic
    s.add_search("suggest", {}, range(100, 110))
    r = recent_yield(s)
    assert (r.kept, r.seen) == (60, 100) and not r.dried_up, "60 of 100 kept: the topic is still being found"
    s.set_labels(range(1, 60), EXCLUDED)
    s.add_search("suggest", {}, range(110, 120))  # the newest; the previous suggest is now counted
    s.set_labels(range(100, 110), EXCLUDED)
    r = recent_yield(s)
    assert (r.kept, r.seen, r.searches) == (1, 110, 2) and r.dried_up


def test_the_stop_advice_turns_when_the_searches_dry_up():
    from core.annotate import RecentYield, stop_advice

    assert stop_advice(None) is None
    going = stop_advice(RecentYield(6, 30, 3))
    dry = stop_advice(RecentYield(1, 30, 3))
    assert "You kept 6 of the 30 texts your last 3 searches brought in" in going and "stopped" not in going
    assert "You kept 1 of the 30" in dry and "stopped finding this topic" in dry and "save the group" in dry
    assert "Topics page" in dry  # where a clustering may hold texts of the topic the searches did not bring
    assert not RecentYield(2, 30, 3).dried_up and RecentYield(2, 60, 1).dried_up, "at most 1 in 30"


def test_stopping_rule_stops_after_the_step_shown_when_it_first_holds():
    from bench.stopping import score, stop_point

    # steps of 10: 9 on topic, 8, 2, 0, 1, 0 on topic; then the same with a first step of 30 (20 on topic, best first)
    texts = np.array([1] * 9 + [0] + [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8 + [0] * 10 + [1] + [0] * 9 + [0] * 10)
    steps = [10, 20, 30, 40, 50, 60]
    assert stop_point(texts, steps, window=20, kept=2) == 50, "holds after step 4 (2 of 20); step 5 is reviewed"
    assert stop_point(texts, steps, window=20, kept=0) is None, "never 0 of 20: the run goes to its budget"
    assert stop_point(texts, steps, window=10, kept=0) == 50
    r = score([{"texts": "".join(map(str, texts)), "steps": steps, "size": 20}], window=20, kept=2)
    assert r["fired"] == 1.0 and r["recall_median"] == 20 / 20 and r["reviewed_x_median"] == 2.5
    long = np.array([1] * 20 + [0] * 10 + [0] * 10 + [0] * 10)
    assert stop_point(long, [30, 40, 50], window=10, kept=0) == 50, "the long step read whole (20 of 30 kept)"


def test_the_simulated_annotator_stops_at_the_pages_signal_once_the_topic_is_found():
    x, labels = clustered_unit_vectors(600, 16, clusters=3, seed=4, spread=0.05)
    texts = [("alpha " if lab == 0 else "beta ") + str(i) for i, lab in enumerate(labels)]
    members = np.flatnonzero(labels == 0)
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}), word_index=WordIndex(texts))
    plain = simulate(ctx, members, "cos", ["alpha"], budget=2.0, seed_hits=10, cls="0", keyword_policy="alternate")
    run = simulate(ctx, members, "cos", ["alpha"], budget=2.0, seed_hits=10, cls="0", keyword_policy="alternate",
                   stop=0)
    assert plain.reviewed == 2 * len(members) and not plain.stops
    assert run.true_included == len(members), "the whole topic is found before the signal"
    # once every member is in, the next semantic steps of 10 bring nothing on topic: three of them (the window)
    # and the one the page shows the signal after, then the stop
    last_found = next(n for n, f in run.curve if f == len(members))
    assert run.stops == [(last_found + 40, len(members))] and run.reviewed == last_found + 40
    assert run.texts == plain.texts[:run.reviewed], "up to the stop, the same review as without it"


def test_the_simulated_annotator_brings_the_clusters_its_group_mostly_holds(capsys):
    """At the signal the simulated annotator may bring in the rest of the clusters its group holds at least a
    share of (bench.annotator --bring-clustering), the most held first, those it has labelled whole left out."""
    from core.session import EXCLUDED, Session
    from testbed.annotator import clusters_to_bring

    clusters = np.array([0] * 10 + [1] * 10 + [2] * 4 + [3] * 6)
    s = Session()
    s.set_labels(list(range(0, 6)) + list(range(10, 18)) + [20, 21], 1)  # 6/10, 8/10, 2/4 of clusters 0, 1, 2
    s.set_labels([22, 23], EXCLUDED)  # cluster 2 labelled whole: nothing left to bring from it
    assert clusters_to_bring(s, clusters, 0.5) == [1, 0]
    assert clusters_to_bring(s, clusters, 0.7) == [1]
    assert clusters_to_bring(s, clusters, 0.9) == []
    from bench import annotator as bench_annotator

    for wrong, said in ((["--bring-clustering", "kmeans-k20"], "needs --stop"),
                        (["--bring-clustering", "kmeans-k20", "--stop", "1", "--shrink", "30"], "--shrink")):
        with pytest.raises(SystemExit):
            bench_annotator.main(["--data", "x.csv", *wrong])
        assert said in capsys.readouterr().err


def test_a_filter_keeps_the_views_texts_that_hold_the_word_in_the_views_order_with_their_scores():
    from core import annotate
    from core.search.keyword import KeywordError

    texts = ["Očkování v pondělí", "jiný text", "OCKOVANI zítra", "nic", "očkovací centrum", "ockovani"]
    x, _ = clustered_unit_vectors(len(texts), 8)
    ctx = SearchContext(VectorIndex(x), KeywordIndex(texts), pd.DataFrame({"text": texts}))
    matches = annotate.text_matches(ctx, "ockovani")  # case and diacritics ignored, as the keyword search
    assert matches.tolist() == [0, 2, 5]
    view, scores = np.array([5, 1, 2, 4, 0]), np.array([0.9, 0.8, 0.7, 0.6, 0.5], np.float32)
    rows, kept = annotate.filter_view(view, scores, matches)
    assert rows.tolist() == [5, 2, 0] and kept.tolist() == pytest.approx([0.9, 0.7, 0.5])
    rows, kept = annotate.filter_view(view, None, annotate.text_matches(ctx, "ockovan[iy]|centrum", is_regex=True))
    assert rows.tolist() == [5, 2, 4, 0] and kept is None
    assert annotate.filter_view(view, scores, np.zeros(0, np.int64))[0].tolist() == []
    rng = np.random.default_rng(0)  # against numpy's own membership test, views in any order
    for _ in range(20):
        many = rng.permutation(1000)[:rng.integers(0, 300)]
        some = np.unique(rng.integers(0, 1000, rng.integers(0, 300)))
        assert annotate.filter_view(many, None, some)[0].tolist() == many[np.isin(many, some)].tolist()
    with pytest.raises(KeywordError, match="invalid regular expression"):
        annotate.text_matches(ctx, "(unclosed", is_regex=True)
    assert "2 of the 5 included texts hold it" in annotate.filter_caption("x", 2, 5, "included")
    assert annotate.filter_caption("x", 0, 1, "excluded").startswith("None of the 1 excluded texts holds ‘x’")
