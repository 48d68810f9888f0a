"""Deep Amortized Clustering: the Set Transformer's laws, learning, checkpoints, inference, the CLI and
the DAC search method's contract."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from core.cluster.dac import infer, sampling, stages
from core.cluster.dac import train as tr
from core.cluster.dac.model import ANCHOR, NON_MEMBER, AnchoredFilter, Config
from core.cluster.dac.modules import ISAB, PMA, SAB, Stack
from tests.conftest import clustered_unit_vectors

TINY = dict(hidden=32, heads=4, inducing=8, n1=1, n2=1)


def _x(seed: int, b: int, n: int, h: int = 16) -> torch.Tensor:
    return torch.randn(b, n, h, generator=torch.Generator().manual_seed(seed))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40))
def test_sab_and_isab_are_permutation_equivariant_and_pma_invariant(seed, n):
    torch.manual_seed(seed)
    sab, isab, pma = SAB(16, 4).eval(), ISAB(16, 4, inducing=5).eval(), PMA(16, 4, seeds=2).eval()
    x = _x(seed, 2, n)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        torch.testing.assert_close(sab(x)[:, perm], sab(x[:, perm]), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(isab(x)[:, perm], isab(x[:, perm]), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(pma(x), pma(x[:, perm]), atol=1e-5, rtol=1e-4)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 30), pad=st.integers(1, 20), prf=st.sampled_from([0, 4]))
def test_padded_rows_never_change_the_real_rows_outputs(seed, n, pad, prf):
    torch.manual_seed(seed)
    model = AnchoredFilter(Config(dim=16, prf=prf, **TINY)).eval()
    x = _x(seed, 1, n)
    role = torch.zeros(1, n, dtype=torch.long)
    role[0, 0] = ANCHOR
    role[0, n - 1] = NON_MEMBER
    junk = 100 * _x(seed + 7, 1, pad)  # large values in the padding
    xp = torch.cat([x, junk], 1)
    rp = torch.cat([role, torch.full((1, pad), ANCHOR)], 1)  # even padded "anchors" must not count
    mp = torch.cat([torch.ones(1, n, dtype=torch.bool), torch.zeros(1, pad, dtype=torch.bool)], 1)
    with torch.no_grad():
        a = model(x, torch.ones(1, n, dtype=torch.bool), role)
        b = model(xp, mp, rp)[:, :n]
        stack = Stack(2, 16, 4, 5).eval()
        torch.testing.assert_close(stack(xp, mp)[:, :n], stack(x), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("prf", [0, 5])
def test_the_model_is_equivariant_over_the_rows_of_a_bag(prf):
    torch.manual_seed(0)
    model = AnchoredFilter(Config(dim=16, prf=prf, **TINY)).eval()
    x = _x(1, 1, 25)
    role = torch.zeros(1, 25, dtype=torch.long)
    role[0, 3] = ANCHOR
    perm = torch.randperm(25)
    mask = torch.ones(1, 25, dtype=torch.bool)
    with torch.no_grad():
        torch.testing.assert_close(model(x, mask, role)[:, perm], model(x[:, perm], mask, role[:, perm]),
                                   atol=1e-5, rtol=1e-4)


def test_tied_blocks_share_their_weights():
    tied, untied = Stack(3, 16, 4, 5, tied=True), Stack(3, 16, 4, 5)
    assert len(tied.blocks) == 1 and len(untied.blocks) == 3
    assert sum(p.numel() for p in untied.parameters()) == 3 * sum(p.numel() for p in tied.parameters())


def test_a_bag_without_an_anchor_is_refused():
    model = AnchoredFilter(Config(dim=16, **TINY))
    with pytest.raises(ValueError, match="at least one anchor"):
        model(_x(0, 1, 5), torch.ones(1, 5, dtype=torch.bool), torch.zeros(1, 5, dtype=torch.long))


def two_blobs(n=400, seed=0):
    x, y = clustered_unit_vectors(n, 16, clusters=2, seed=seed, spread=0.4)
    return x, y


def test_a_tiny_model_learns_a_two_cluster_bag_in_seconds():
    x, y = two_blobs()
    xt = torch.from_numpy(x)
    s = sampling.Labelled(xt, y, bag=120, episode_share=0.5)
    t = tr.train(xt, s, stage="labels", config=Config(dim=16, **TINY), seed=0, epochs=3, steps=25, batch=4, lr=3e-3)
    rows, p = infer.members(t.model, x, [int(np.flatnonzero(y == 0)[0])], bag=120)
    acc = ((p > 0.5) == (y[rows] == 0)).mean()
    assert acc >= 0.97
    assert t.history[-1]["loss"] < t.history[0]["loss"]


def test_scores_are_right_on_a_known_case():
    s = tr.scores(np.array([0.9, 0.8, 0.2, 0.6]), np.array([1, 0, 0, 1]))
    assert s["accuracy"] == 0.75 and s["precision"] == pytest.approx(2 / 3) and s["recall"] == 1.0


def test_held_out_classes_never_appear_in_training_bags():
    x, y = clustered_unit_vectors(500, 16, clusters=6, seed=2)
    fit, val = sampling.split_classes(y, 0.34, seed=0)
    assert not set(fit) & set(val) and len(val) == 2
    s = sampling.Labelled(torch.from_numpy(x), y, fit, bag=60, episode_share=0.5)
    b = s.sample(20, np.random.default_rng(0))
    seen = y[b.rows[b.mask].numpy()]
    assert not set(seen) & set(val)
    assert (b.role == ANCHOR).any(1).all()
    # every anchor is a member; a known non-member never is
    assert (b.target[b.role == ANCHOR] == 1).all() and (b.target[b.role == NON_MEMBER] == 0).all()


def test_calibration_bags_are_drawn_around_held_out_anchors_from_every_row():
    """As the search meets them: an anchor of a held-out class among its nearest rows of any class
    (bags of the held-out classes alone held mostly members and set the cut far too low)."""
    x, y = clustered_unit_vectors(600, 16, clusters=6, seed=2, spread=0.9)
    s = sampling.Labelled(torch.from_numpy(x), y, bag=150, anchor_classes=[4, 5])
    b = s.sample(16, np.random.default_rng(0))
    for i in range(16):
        rows, role, target = b.rows[i][b.mask[i]].numpy(), b.role[i][b.mask[i]].numpy(), b.target[i][b.mask[i]].numpy()
        anchor_class = y[rows[role == ANCHOR]][0]
        assert anchor_class in (4, 5) and np.array_equal(target == 1, y[rows] == anchor_class)
        assert set(y[rows]) - {4, 5}  # other classes' rows are in the bag too
    with pytest.raises(ValueError, match="anchor classes"):
        sampling.Labelled(torch.from_numpy(x), y, [0, 1], bag=50, anchor_classes=[4])


def test_pretrain_bags_hold_the_first_centres_neighbours_as_members():
    x, _ = clustered_unit_vectors(300, 16, clusters=5, seed=1)
    xt = torch.from_numpy(x)
    b = sampling.Neighbourhoods(xt, bag=100, per_centre=20).sample(4, np.random.default_rng(0))
    assert b.rows.shape == (4, 100) and (b.target.sum(1) == 20).all()
    f = sampling.Neighbourhoods(xt, bag=100, mode="fringe", reach=200, inner=30, fringe=70).sample(2, np.random.default_rng(0))
    assert (f.target.sum(1) == 30).all() and (f.mask.sum(1) == 100).all()


class Killed(Exception):
    pass


def test_training_resumes_after_a_kill_to_the_same_model(tmp_path):
    x, y = clustered_unit_vectors(300, 16, clusters=4, seed=5)
    xt = torch.from_numpy(x)
    kw = dict(stage="kmeans", config=Config(dim=16, **TINY), seed=3, epochs=4, steps=5, batch=3)
    sampler = lambda: sampling.Labelled(xt, y, bag=64)  # noqa: E731
    whole = tr.train(xt, sampler(), **kw)

    def kill_after_epoch_2(step, total, info):
        if info.get("epoch_done") and info["epoch"] == 2:
            raise Killed

    with pytest.raises(Killed):
        tr.train(xt, sampler(), checkpoint=tmp_path / "ck", progress=kill_after_epoch_2, **kw)
    assert (tmp_path / "ck" / "state.pt").exists()
    epochs = []
    steps = []
    resumed = tr.train(xt, sampler(), checkpoint=tmp_path / "ck",
                       progress=lambda s, n, i: (steps.append((s, n)), i.get("epoch_done") and epochs.append(i["epoch"])),
                       **kw)
    assert epochs == [3, 4]  # went on from the checkpoint
    assert steps[0] == (11, 20) and steps[-1] == (20, 20)  # step by step, from the checkpoint, ending at 100%
    for a, b in zip(whole.model.state_dict().values(), resumed.model.state_dict().values()):
        torch.testing.assert_close(a, b)
    assert [h["loss"] for h in resumed.history] == pytest.approx([h["loss"] for h in whole.history])
    assert not (tmp_path / "ck" / "state.pt").exists()


def test_save_and_load_round_trip_and_a_corrupt_file_names_itself(tmp_path):
    x, y = clustered_unit_vectors(200, 16, clusters=3, seed=0)
    xt = torch.from_numpy(x)
    t = tr.train(xt, sampling.Labelled(xt, y, bag=50), stage="kmeans", config=Config(dim=16, **TINY), epochs=1,
                 steps=2, batch=2)
    path = tr.save(t, tmp_path / "m.pt")
    back = tr.load(path)
    assert back.config == t.config and back.stages == t.stages and back.history == t.history
    probe = infer.members(t.model, x, [0], bag=50)
    again = infer.members(back.model, x, [0], bag=50)
    np.testing.assert_array_equal(probe[0], again[0])
    np.testing.assert_allclose(probe[1], again[1], rtol=1e-5)
    path.write_bytes(b"not a model")
    with pytest.raises(tr.ModelError, match="m.pt"):
        tr.load(path)


@pytest.fixture(scope="module")
def topics():
    """Twelve topics; a model trained on nine of them (labels stage), never on topics 9, 10 and 11."""
    x, y = clustered_unit_vectors(1500, 16, clusters=12, seed=11, spread=0.45)
    xt = torch.from_numpy(x)
    s = sampling.Labelled(xt, y, np.arange(9), bag=150, episode_share=0.5)
    t = tr.train(xt, s, stage="labels", config=Config(dim=16, **TINY), seed=0, epochs=4, steps=30, batch=4, lr=3e-3)
    return x, y, t


def test_anchored_filtering_finds_unseen_topics(topics):
    x, y, t = topics
    accuracy = []
    for c in (9, 10, 11):
        anchor = int(np.flatnonzero(y == c)[0])
        rows, p = infer.members(t.model, x, [anchor], bag=300)
        assert anchor not in rows
        accuracy.append(((p > 0.5) == (y[rows] == c)).mean())
    assert np.mean(accuracy) > 0.85


def test_set_anchors_and_known_non_members(topics):
    x, y, t = topics
    inc = np.flatnonzero(y == 10)[:6]
    exc = np.flatnonzero(y != 10)[:5]
    rows, p = infer.members(t.model, x, inc, non_members=exc, bag=200)
    assert not set(rows) & (set(inc) | set(exc))
    assert np.all(np.diff(p) <= 1e-6)
    one = infer.members(t.model, x, inc[:1], bag=200)
    # six anchors know the topic better than one
    assert ((p > 0.5) == (y[rows] == 10)).mean() >= ((one[1] > 0.5) == (y[one[0]] == 10)).mean() - 0.02
    assert ((p > 0.5) == (y[rows] == 10)).mean() > 0.85


def test_members_of_given_candidates_ranks_those_rows_and_no_labelled_one(topics):
    x, y, t = topics
    inc, exc = np.flatnonzero(y == 10)[:6], np.flatnonzero(y != 10)[:5]
    cand = np.concatenate([np.flatnonzero(y == 10)[6:40], np.flatnonzero(y == 3)[:40], inc[:2], exc[:2]])
    rows, p = infer.members(t.model, x, inc, non_members=exc, candidates=cand, bag=20)  # bag does not cap them
    assert sorted(rows.tolist()) == sorted(set(cand.tolist()) - set(inc.tolist()) - set(exc.tolist()))
    assert np.all(np.diff(p) <= 1e-6)
    assert ((p > 0.5) == (y[rows] == 10)).mean() > 0.85


def test_suggest_re_ranked_by_dac_orders_suggests_best_by_the_models_membership(topics):
    from core.search import suggest
    from core.search.base import SearchContext
    from core.search.index import VectorIndex

    x, y, t = topics
    ctx, bare = SearchContext(VectorIndex(x), dac=t), SearchContext(VectorIndex(x))
    inc, exc = np.flatnonzero(y == 10)[:6], np.flatnonzero(y != 10)[:20]
    plain = suggest.search(ctx, inc, exc, 10)
    assert plain.info["chosen"] == "lda"
    head = suggest.search(ctx, inc, exc, 100)
    # off by default, and without a model the weight changes nothing
    np.testing.assert_array_equal(suggest.search(bare, inc, exc, 10, dac=1.0).rows, plain.rows)
    re = suggest.search(ctx, inc, exc, 10, dac=1000.0, rerank=100)
    assert "DAC re-rank" in re.info["chosen"] and len(re) == 10
    assert set(re.rows) <= set(head.rows) and not set(re.rows) & (set(inc) | set(exc))
    assert np.all(np.diff(re.scores) <= 1e-6)
    # a weight that swamps Suggest's own score: the order is the model's over Suggest's best 100
    rows, p = infer.members(t.model, x, inc, non_members=exc, candidates=head.rows,
                            seed=ctx.seed + len(inc) + len(exc))
    prob = dict(zip(rows.tolist(), p.tolist()))
    np.testing.assert_allclose([prob[r] for r in re.rows.tolist()], np.sort(p)[::-1][:10], atol=1e-6)


@pytest.mark.parametrize("procedure", ["iterative", "consensus"])
def test_whole_corpus_clustering_finds_the_topics(topics, procedure):
    from sklearn.metrics import normalized_mutual_info_score

    x, y, t = topics
    run = infer.iterative if procedure == "iterative" else infer.consensus
    labels, info = run(t.model, x, bag=300, min_size=10, seed=0)
    assert labels.shape == (1500,) and labels.min() == 0
    assert np.all(np.diff(np.bincount(labels)) <= 0)  # numbered by size
    assert normalized_mutual_info_score(y, labels) > 0.8
    assert 9 <= labels.max() + 1 <= 24  # the iterative procedure splits some topics (the study saw it too)


@pytest.mark.parametrize("bag", [40, 60])
def test_grown_clusters_outgrow_the_bag_where_the_studys_procedure_splits_them(topics, bag):
    """Topics of ~125 texts, bags of 40 or 60: the study's procedure can never make a cluster larger
    than its bag and splits every topic; growing (members anchor the next bag) finds the twelve."""
    from sklearn.metrics import normalized_mutual_info_score

    x, y, t = topics
    split, _ = infer.iterative(t.model, x, bag=bag, min_size=10, seed=0)
    grown, info = infer.grown(t.model, x, bag=bag, min_size=10, seed=0)
    assert np.bincount(grown).max() > 2 * bag  # clusters larger than any bag
    assert normalized_mutual_info_score(y, grown) > 0.9
    assert normalized_mutual_info_score(y, grown) > normalized_mutual_info_score(y, split) + 0.1
    assert 10 <= grown.max() + 1 <= 16 and info["rounds"] > info["anchors"]


def test_growth_stops_at_the_topic_and_knows_its_rejected_rows(topics):
    x, y, t = topics
    anchor = int(np.flatnonzero(y == 10)[0])
    group, info = infer.grow(t.model, x, [anchor], bag=50)
    assert anchor in group and info["added"][-1] == 0  # stopped because nothing more joined
    truth = y[group] == 10
    assert truth.mean() > 0.9 and len(group) > 0.8 * (y == 10).sum() and len(group) > 50


def test_best_cut_on_a_known_case():
    p, t = np.array([0.9, 0.8, 0.6, 0.3, 0.2]), np.array([1, 1, 0, 1, 0], bool)
    assert tr.best_cut(p, t, "accuracy") == pytest.approx(0.7)  # top 2: 4 of 5 right (top 4 too: the first is kept)
    assert tr.best_cut(p, t, "f1") == pytest.approx(0.25)  # top 4: F1 6/7
    assert tr.best_cut(p, t, "precision", 0.9) == pytest.approx(0.7)
    assert tr.best_cut(p, t, "precision", 0.75) == pytest.approx(0.25)  # top 4: 3 of 4 right


def test_the_cut_is_calibrated_on_held_out_classes_and_travels_on_the_models_card(tmp_path):
    """Stage labels holds classes out; the cut chosen on their bags is in the card, saved and loaded with
    the model, used by the clusterings and the search; a card with a cut outside [0, 1] is refused."""
    from core import safeload

    x, y = clustered_unit_vectors(900, 16, clusters=9, seed=3, spread=0.45)
    t = stages.fit_stage(x, "labels", y, config=Config(dim=16, **TINY), held_out=0.34, bag=250, seed=0,
                         epochs=2, steps=15, batch=4, lr=3e-3)
    cal = t.calibration
    held = t.stages[-1]["validation_classes"]
    assert cal["classes"] == len(held) == 3 and cal["stage"] == "labels"
    assert 0.0 < cal["cut"] < 1.0 and t.cut == cal["cut"] and cal["cut"] <= cal["grow_cut"] < 1.0
    assert cal["accuracy"] >= cal["accuracy_at_0.5"] and cal["average_precision"] > 0.5
    back = tr.load(tr.save(t, tmp_path / "m.pt"))
    assert back.calibration == cal and back.card["calibration"] == cal and back.cut == t.cut
    blob = safeload.load(tmp_path / "m.pt", "DAC model")
    blob["calibration"]["cut"] = 2.0
    safeload.save(blob, tmp_path / "bad.pt")
    with pytest.raises(tr.ModelError, match="bad.pt.*cut"):
        tr.load(tmp_path / "bad.pt")
    pre = stages.fit_stage(x, "pretrain", config=Config(dim=16, **TINY), bag=100, epochs=1, steps=2, batch=2)
    assert pre.calibration == {} and pre.cut == 0.5  # nothing held out: no calibration claimed


def test_labels_from_a_column_and_from_groups():
    import pandas as pd

    codes = stages.labels_from_column(pd.Series(["a", "b", "", None, "a"]))
    assert codes[0] == codes[4] != codes[1] and codes[2] == codes[3] == -1
    out = stages.labels_from_groups(6, {"b": np.array([1, 2]), "a": np.array([2, 3])})
    assert out.tolist() == [-1, 1, 0, 0, -1, -1]
    # a column of texts or ids is no classes (a model was trained on the few texts written twice)
    texts = pd.Series([f"text {i}" for i in range(98)] + ["text 0", "text 1"], name="text")
    with pytest.raises(ValueError, match=r"column 'text' of corpus 'c' holds no classes to learn from: 98 values on "
                                         r"100 rows, 2 of them on two or more rows \(4 rows\)"):
        stages.classes_of_column(texts, "c")
    with pytest.raises(ValueError, match="no classes to learn from"):
        stages.classes_of_column(pd.Series(["a", "a", "b", ""], name="one"), "c")  # one class of two or more rows
    events = pd.Series(["flood"] * 40 + ["fire"] * 30 + [f"once {i}" for i in range(20)] + [""] * 10, name="event")
    assert (stages.classes_of_column(events, "c") == stages.labels_from_column(events)).all()


def test_cli_trains_stages_then_clusters_and_searches_with_the_model(so_copy):
    """On 300 real StackOverflow titles: pretrain, then labels (held-out classes), then the cluster CLI
    and the Annotate search method use the model."""
    from core.cluster import store
    from core.cluster.dac import store as models
    from core.corpus import load_corpus
    from core.search import REGISTRY
    from core.search.base import SearchContext
    from core.search.index import VectorIndex
    from precompute import cluster
    from precompute import dac as dac_job

    small = ["--epochs", "2", "--steps", "4", "--batch", "2", "--bag", "120", "--hidden", "32", "--inducing", "8"]
    assert dac_job.main(["train", "--corpus", "so", "--stage", "pretrain", "--model", "m1", *small]) == 0
    assert dac_job.main(["train", "--corpus", "so", "--stage", "labels", "--model", "m2", "--from", "m1",
                           *small]) == 0
    t = models.load("so", "m2")
    assert [s["stage"] for s in t.stages] == ["pretrain", "labels"]
    assert len(t.history) == 4 and "val_accuracy" in t.history[-1]
    assert t.stages[-1]["validation_classes"]  # classes held out of training
    assert [m.name for m in models.listing("so")] == ["m2", "m1"]
    with pytest.raises(ValueError, match="has no column 'nope'"):
        dac_job.main(["train", "--corpus", "so", "--stage", "labels", "--label-column", "nope"])
    assert cluster.main(["--corpus", "so", "--method", "dac", "--param", "model='m2'", "--param", "anchors=60",
                         "--param", "bag=120", "--no-terms"]) == 0
    stored = [s for s in store.listing("so") if s.method == "dac"]
    assert stored and stored[0].meta["rows"] == 300
    corpus = load_corpus("so")
    ctx = SearchContext(VectorIndex(corpus.embeddings), dac=t)
    r = REGISTRY["dac"].search(ctx, np.array([0, 1]), np.array([5]), 10)
    assert len(r) == 10 and not set(r.rows) & {0, 1, 5}
    assert r.info["cut"] == t.cut  # the members it reports are counted at the model's calibrated cut
    assert cluster.main(["--corpus", "so", "--method", "dac", "--param", "model='m2'", "--param", "procedure='grow'",
                         "--param", "bag=60", "--no-terms"]) == 0
    grown = [s for s in store.listing("so") if s.method == "dac" and s.meta["params"]["procedure"] == "grow"]
    assert grown and grown[0].meta["rows"] == 300
    with pytest.raises(ValueError, match="'threshold' must be a number between 0 and 1"):
        cluster.main(["--corpus", "so", "--method", "dac", "--param", "model='m2'", "--param", "threshold=1.5",
                      "--no-terms"])


def test_dac_search_without_a_model_says_how_to_get_one():
    from core.search import REGISTRY, NotApplicable
    from core.search.base import SearchContext
    from core.search.index import VectorIndex

    x, _ = clustered_unit_vectors(50, 16)
    ctx = SearchContext(VectorIndex(x))
    with pytest.raises(NotApplicable, match="precompute.dac train"):
        REGISTRY["dac"].search(ctx, np.array([1]), np.zeros(0, np.int64), 5)
    assert "trained" in REGISTRY["dac"].reason_not_applicable(1, 0, ctx)


def test_the_pages_references_score_the_predicted_members_against_cluster_group_and_label():
    import pandas as pd

    from core.cluster.dac.inspect import BagView, references

    # bag rows 2..7 (anchor 0); predicted members: rows 2, 3, 4
    view = BagView(np.array([0]), np.zeros(0, np.int64), np.arange(2, 8), np.array([.9, .8, .7, .2, .1, .1]),
                   np.zeros((7, 2), np.float32), 0.5)
    clusters = np.array([1, 0, 1, 1, 0, 0, 0, 1])  # the anchor's cluster: rows 0, 2, 3, 7
    out = references(view, 0, clusters=clusters, cluster_name="kmeans-k2", groups={"g": np.array([0, 2]), "h": [5]},
                     labels=pd.Series(["a", "b", "a", "a", "a", "b", "b", "b"]))
    assert [r["reference"] for r in out] == ["kmeans-k2: the anchor's cluster", "saved group g", "the anchor's label"]
    cluster, group, label = out
    assert (cluster["precision"], cluster["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert (group["precision"], group["recall"]) == (pytest.approx(1 / 3), 1.0)
    assert label["accuracy"] == 1.0 and label["reference size in bag"] == 3


def test_the_baselines_every_dac_figure_stands_beside(tmp_path, monkeypatch, capsys):
    """bench.dac baselines (issue 31) on 8 well-separated classes: the unseen half's k is found
    without labels by the silhouette, K-Means and HDBSCAN recover the classes, and the PRF rule and
    cosine rank the bag's members first."""
    import json

    from bench import dac as bench_dac

    x, labels = clustered_unit_vectors(800, 32, clusters=8, seed=3, spread=0.15)
    np.savez(tmp_path / "toy.npz", x=x, labels=labels)
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    bench_dac.main(["baselines", "--npz", str(tmp_path / "toy.npz"), "--seeds", "0", "--bag", "150",
                    "--anchors", "20", "--hdbscan-min-size", "10"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    anchored = [r for r in lines if r.get("kind") == "anchored-baselines"]
    assert [r["anchors_per_bag"] for r in anchored] == [1, 5]
    for r in anchored:
        assert r["prf"]["average_precision"] > 0.95 and r["cosine"]["average_precision"] > 0.95
    clusters = {r["method"]: r for r in lines if r.get("kind") == "cluster"}
    assert clusters["kmeans-true-k"]["k_true"] == 4
    assert clusters["kmeans-silhouette-k"]["k_found"] == 4  # chosen without the labels
    assert clusters["kmeans-silhouette-k"]["nmi"] > 0.95 and clusters["hdbscan-10"]["nmi"] > 0.9


def test_the_dac_run_calibrates_without_the_unseen_classes_and_reports_every_rule(tmp_path, monkeypatch, capsys):
    """bench.dac run (issue 31) on 12 toy classes: the model trains on three quarters of the seen half,
    its cut is chosen on the other quarter (never an unseen class), and each anchored row reports DAC at
    that cut and at 0.5 beside cosine and PRF; the three procedures cluster the unseen half."""
    import json

    from bench import dac as bench_dac

    x, labels = clustered_unit_vectors(1200, 16, clusters=12, seed=5, spread=0.3)
    np.savez(tmp_path / "toy.npz", x=x, labels=labels)
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    bench_dac.main(["run", "--npz", str(tmp_path / "toy.npz"), "--seeds", "0", "--device", "cpu", "--bag", "120",
                    "--hidden", "32", "--inducing", "8", "--n1", "1", "--n2", "1", "--pretrain-epochs", "1",
                    "--epochs", "2", "--steps", "10", "--batch", "4", "--lr", "3e-3", "--anchors", "10",
                    "--consensus-anchors", "100"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    (train,) = [r for r in lines if r.get("kind") == "train"]
    seen, unseen, fit = set(train["seen"]), set(train["unseen"]), set(train["trained_on"])
    assert not seen & unseen and fit < seen and len(seen - fit) == 1  # a quarter of 6 seen classes held out
    cal = train["calibration"]
    assert cal["on"] == "held-out seen classes" and cal["classes"] == 1 and 0 < cal["cut"] < 1
    anchored = [r for r in lines if r.get("kind") == "anchored"]
    assert [r["anchors_per_bag"] for r in anchored] == [1, 5]
    for r in anchored:
        assert r["cuts"]["dac"] == pytest.approx(cal["cut"], abs=1e-4) and r["cuts"]["dac_0.5"] == 0.5
        for rule in ("dac", "dac_0.5", "cosine", "prf"):
            assert 0 <= r[rule]["accuracy"] <= 1 and r[rule]["best_f1"] >= r[rule]["f1"] - 1e-9
    methods = {r["method"]: r for r in lines if r.get("kind") == "cluster"}
    assert set(methods) == {"kmeans", "dac-iterative", "dac-consensus", "dac-grow", "dac-merge", "dac-choose-k"}
    assert methods["dac-grow"]["grow_cut"] >= methods["dac-grow"]["threshold"]


def test_the_prf_feature_is_the_cosine_to_the_feedback_centre_and_starts_the_model_at_the_prf_rule():
    """Issue 31: the fourth feature is each row's cosine to the mean of the anchor and its nearest rows
    of the bag (padding never among them); the untrained model ranks a bag as the PRF rule does."""
    from core.cluster.dac.model import similarities

    gen = torch.Generator().manual_seed(0)
    x = torch.nn.functional.normalize(torch.randn(1, 12, 16, generator=gen), dim=-1)
    pad = torch.cat([x, 50 * torch.ones(1, 4, 16)], 1)  # padding close to nothing, far from everything
    mask = torch.cat([torch.ones(1, 12, dtype=torch.bool), torch.zeros(1, 4, dtype=torch.bool)], 1)
    anchor = torch.zeros(1, 16, dtype=torch.bool)
    anchor[0, 2] = True
    f = similarities(pad, anchor, torch.zeros_like(anchor), mask, prf=3)
    assert f.shape == (1, 16, 8)
    near = (x[0] @ x[0, 2]).clone()
    near[2] = -9
    feedback = near.topk(3).indices
    centre = torch.nn.functional.normalize(x[0, torch.cat([torch.tensor([2]), feedback])].mean(0), dim=0)
    torch.testing.assert_close(f[0, :12, 3], x[0] @ centre, atol=1e-5, rtol=1e-5)
    z = f[0, :12, 7]
    assert abs(float(z.mean())) < 1e-5 and float(f[0, 12:, 4:].abs().max()) == 0.0  # z over real rows only
    model = AnchoredFilter(Config(dim=16, prf=3, **TINY)).eval()
    with torch.no_grad():
        logits = model(pad, mask, anchor.long())[0, :12]
    assert torch.corrcoef(torch.stack([logits, x[0] @ centre]))[0, 1] > 0.5  # begins near the rule


def test_old_models_without_the_prf_feature_load_and_answer_as_before(tmp_path):
    x, y = two_blobs()
    t = tr.train(torch.from_numpy(x), sampling.Labelled(torch.from_numpy(x), y, bag=60), stage="labels",
                 config=Config(dim=16, **TINY), seed=0, epochs=1, steps=2, batch=2)
    path = tr.save(t, tmp_path / "old.pt")
    from core import safeload

    blob = safeload.load(path, "DAC model")
    del blob["config"]["prf"]  # as a file written before the field existed
    safeload.save(blob, path)
    back = tr.load(path)
    assert back.config.prf == 0 and back.model.direct is None
    np.testing.assert_allclose(infer.members(back.model, x, [0], bag=60)[1], infer.members(t.model, x, [0], bag=60)[1],
                               rtol=1e-5)


def test_pooled_bags_never_mix_corpora_and_follow_their_weights():
    """Issue 31, item 4: corpora stacked in one matrix; each bag is drawn within one corpus's rows
    (classes and background of that corpus only), the corpus chosen by weight."""
    xa, ya = clustered_unit_vectors(300, 16, clusters=4, seed=1)
    xb, yb = clustered_unit_vectors(200, 16, clusters=3, seed=2)
    x = torch.from_numpy(np.concatenate([xa, xb]))
    a_rows, b_rows = np.arange(300), np.arange(300, 500)
    la = np.full(500, -2)
    la[a_rows] = ya
    la[a_rows[:30]] = -1  # background of corpus A
    lb = np.full(500, -2)
    lb[b_rows] = yb + 10
    s = sampling.Pooled([sampling.Labelled(x, la, bag=60, episode_share=0.5, within=a_rows, concentration=5.0),
                         sampling.Labelled(x, lb, bag=60, episode_share=0.5, within=b_rows)], weights=[3, 1])
    bags = s.sample(200, np.random.default_rng(0))
    from_a = 0
    for rows, mask in zip(bags.rows.numpy(), bags.mask.numpy()):
        r = rows[mask]
        in_a = r < 300
        assert in_a.all() or not in_a.any()
        from_a += bool(in_a.all())
    assert 0.65 < from_a / 200 < 0.85
    assert bags.target.sum(1).min() >= 1  # every bag has members of the anchors' class
    with pytest.raises(ValueError, match="weight"):
        sampling.Pooled([s.samplers[0]], weights=[0])


def test_a_pooled_step_searches_once_and_gives_each_bag_its_own_nearest_rows():
    """The pooled stage draws a step's nearest-row bags with one search (each query kept to its own
    corpus's rows): every bag is still the 60 nearest rows of its corpus around one of its members, as a
    search of its own would give."""
    xa, ya = clustered_unit_vectors(300, 16, clusters=4, seed=1)
    xb, yb = clustered_unit_vectors(200, 16, clusters=3, seed=2)
    x = torch.from_numpy(np.concatenate([xa, xb]))
    la, lb = np.full(500, -2), np.full(500, -2)
    la[:300], lb[300:] = ya, yb + 10
    la[100:130] = 5  # a class of corpus A left out of its sampler (amid its rows): never in a bag
    own = [sampling.Labelled(x, la, np.arange(4), bag=60, within=np.arange(300)),
           sampling.Labelled(x, lb, bag=60, within=np.arange(300, 500))]
    bags = sampling.Pooled(own).draw(24, np.random.default_rng(0))
    assert len(bags) == 24
    for rows, role, member in bags:
        s = own[0] if rows[0] < 300 else own[1]
        assert len(rows) == 60 and member.any() and not np.isin(rows, np.arange(100, 130)).any()
        scores = x[rows[member]].numpy() @ x[s.pool].numpy().T  # each member's own search among its corpus's rows
        alone = [set(s.pool[np.argsort(-row)[:60]].tolist()) for row in scores]
        assert set(rows.tolist()) in alone


def test_mixed_classes_lie_between_two_training_classes_never_a_held_out_one():
    """Issue 31, item 4 (mixup of classes): the pooled stage's synthetic classes are unit vectors between
    their two parents, drawn only from a corpus's training classes (its held-out ones choose the cut),
    and bags of them come from their own rows only; mixup=0 leaves the sources as they were."""
    xa, ya = clustered_unit_vectors(400, 16, clusters=8, seed=1)
    xb, _ = clustered_unit_vectors(200, 16, clusters=3, seed=2)
    corpora = {"a": (xa, ya), "b": (xb, None)}
    X, sampler, _, sources = stages.pooled_sources(corpora, seed=3, bag=60, pseudo_k=(3,), mixup=5, mixup_rows=40)
    (mix,) = [s for s in sources if s["kind"] == "mixup"]
    fit, held = sampling.split_classes(ya, 0.25, 3)
    parents = np.array(mix["parents"])
    assert mix["classes"] == 5 and mix["rows"] == 200 and len(X) == 600 + 200
    assert np.isin(parents, fit).all() and not np.isin(parents, held).any()
    synth = X[600:].numpy()
    np.testing.assert_allclose(np.linalg.norm(synth, axis=1), 1, atol=1e-5)
    centre = np.stack([xa[ya == c].mean(0) for c in range(8)])
    centre /= np.linalg.norm(centre, axis=1, keepdims=True)
    for j, (a, b) in enumerate(parents):
        cos = synth[40 * j:40 * (j + 1)].mean(0) @ centre.T
        assert set(np.argsort(cos)[-2:]) == {a, b}  # nearest to its two parents, of all eight classes
    mixed_sampler = sampler.samplers[[s["kind"] for s in sources].index("mixup")]
    bags = mixed_sampler.sample(20, np.random.default_rng(0))
    assert (bags.rows[bags.mask] >= 600).all() and bags.target.sum(1).min() >= 1
    _, _, _, plain = stages.pooled_sources(corpora, seed=3, bag=60, pseudo_k=(3,))
    assert [s for s in sources if s["kind"] != "mixup"] == plain


def test_the_cosine_schedule_ends_near_zero_and_training_takes_it():
    assert tr.step_lr(1e-3, "cosine", 0, 100) == pytest.approx(1e-3)
    assert tr.step_lr(1e-3, "cosine", 50, 100) == pytest.approx(5e-4)
    assert tr.step_lr(1e-3, "cosine", 99, 100) < 1e-5 and tr.step_lr(1e-3, "constant", 99, 100) == 1e-3
    x, y = two_blobs()
    xt = torch.from_numpy(x)
    with pytest.raises(ValueError, match="schedule"):
        tr.train(xt, sampling.Labelled(xt, y, bag=60), stage="labels", config=Config(dim=16, **TINY), schedule="step")


def test_merged_micro_clusters_find_topics_larger_than_any_bag(topics):
    """Issue 31, item 2: K-Means micro-clusters merged where the model says they claim each other:
    topics of ~125 texts found whole with bags of 40, where the study's procedure splits them."""
    from sklearn.metrics import normalized_mutual_info_score

    x, y, t = topics
    split, _ = infer.iterative(t.model, x, bag=40, min_size=10, seed=0)
    merged, info = infer.merged(t.model, x, bag=40, micro=60, per=4, min_size=10, seed=0)
    assert info["micro_clusters"] == 60 and info["merges"][-1] == 0  # stopped: no pair claimed each other
    assert np.bincount(merged).max() > 2 * 40
    assert normalized_mutual_info_score(y, merged) > 0.9
    assert normalized_mutual_info_score(y, merged) > normalized_mutual_info_score(y, split) + 0.1
    assert 9 <= merged.max() + 1 <= 16


def test_the_model_chooses_k_where_its_clusters_neither_mix_nor_split_topics(topics):
    """Issue 31 (k unknown): K-Means at each candidate k, scored by the model's one-anchor memberships.
    Merging two topics lowers ``own``, splitting one raises ``other``; the true partition scores best,
    and the chosen k on twelve topics (three never trained on) is twelve."""
    from sklearn.metrics import normalized_mutual_info_score

    x, y, t = topics
    true = infer.separation(t.model, x, y, bag=150, seed=0)
    merged = infer.separation(t.model, x, np.where(y == 1, 0, y), bag=150, seed=0)  # topics 0 and 1 as one
    split = y.copy()
    split[np.flatnonzero(y == 10)[::2]] = 12  # the unseen topic 10 in two halves
    halves = infer.separation(t.model, x, split, bag=150, seed=0)
    assert merged["own"] < true["own"] - 0.02 and halves["other"] > true["other"] + 0.02
    assert true["score"] > max(merged["score"], halves["score"])
    labels, info = infer.chosen(t.model, x, bag=150, min_size=10, seed=0)
    assert info["chosen_k"] == 12 and set(info["scores"]) == {str(k) for k in infer.K_GRID}
    assert labels.max() + 1 == 12 and normalized_mutual_info_score(y, labels) > 0.95
    _, one_se = infer.chosen(t.model, x, bag=150, min_size=10, seed=0, rule="1se")  # the smallest k within 1 SE
    s, top = one_se["scores"], one_se["scores"][str(one_se["best_scored_k"])]
    assert one_se["chosen_k"] <= one_se["best_scored_k"]
    assert s[str(one_se["chosen_k"])]["score"] >= top["score"] - top["se"]
    assert all(s[str(k)]["score"] < top["score"] - top["se"] for k in infer.K_GRID if k < one_se["chosen_k"])
    with pytest.raises(ValueError, match="rule"):
        infer.chosen(t.model, x, ks=(2, 3), rule="elbow")


def test_choosing_k_over_several_k_means_runs_averages_their_scores(topics):
    """``restarts``: each candidate k judged on that many K-Means clusterings (other seeds); the mean
    score's standard error falls, the choice on the twelve topics stays twelve."""
    x, y, t = topics
    ks = (8, 12, 15)
    _, one = infer.chosen(t.model, x, ks=ks, bag=150, min_size=10, seed=0)
    _, three = infer.chosen(t.model, x, ks=ks, bag=150, min_size=10, seed=0, restarts=3)
    assert one["chosen_k"] == three["chosen_k"] == 12
    assert all(three["scores"][str(k)]["se"] < one["scores"][str(k)]["se"] for k in ks)
    with pytest.raises(ValueError, match="restarts"):
        infer.chosen(t.model, x, ks=ks, restarts=0)


def test_every_k_is_judged_on_about_as_many_anchors():
    assert infer.anchors_per_cluster(np.array([600, 400]), 64).tolist() == [39, 26]
    assert infer.anchors_per_cluster(np.full(40, 25), 64).tolist() == [3] * 40  # at least three a cluster
    assert infer.anchors_per_cluster(np.array([2, 998]), 64).tolist() == [2, 64]  # never more than its rows


def test_the_registry_runs_the_choose_k_procedure_and_refuses_an_unknown_one(topics):
    from core.cluster.base import ClusterContext
    from core.cluster.dac.method import METHOD

    x, y, t = topics
    calls = []
    got = METHOD.fit(ClusterContext(x), procedure="choose-k", bag=150, train_epochs=2, train_steps=20,
                     train_cluster_size=60, progress=lambda s, n, info: calls.append((s, n, dict(info))))
    assert got.k in infer.K_GRID and got.labels.shape == (1500,) and got.history[-1]["chosen_k"] == got.k
    # the bar moves while the candidates are judged (one step each) and ends full
    judged = [c for c in calls if c[2].get("phase") == "choose k"]
    assert [c[2]["k"] for c in judged] == list(infer.K_GRID)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert calls[-1][0] == calls[-1][1] == 40 + len(infer.K_GRID) + 1  # 2 x 20 training steps, then the candidates
    with pytest.raises(ValueError, match="choose-k"):
        METHOD.fit(ClusterContext(x), procedure="nonsense", train_epochs=1, train_steps=1)


def test_the_pooled_bench_never_trains_on_the_target_corpus_labels(tmp_path, monkeypatch, capsys):
    """bench.dac pooled: the pooled model's labelled sources are the other corpora; the target gives
    only K-Means pseudo-classes; every model and rule is reported on the target's unseen classes."""
    import json

    from bench import dac as bench_dac

    data = {}
    for i, name in enumerate(("toya", "toyb")):
        x, y = clustered_unit_vectors(600, 16, clusters=8, seed=20 + i, spread=0.3)
        data[name] = (x, y)
    monkeypatch.setattr(bench_dac, "load_data", lambda a: (a.corpus, *data[a.corpus]))
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    bench_dac.main(["pooled", "--targets", "toya", "--extra", "toyb", "--seeds", "0", "--device", "cpu",
                    "--bag", "200", "--hidden", "32", "--inducing", "8", "--n1", "1", "--n2", "1", "--prf", "10",
                    "--pretrain-epochs", "1", "--epochs", "1", "--steps", "5", "--pooled-epochs", "1",
                    "--pooled-steps", "10", "--batch", "4", "--anchors", "6", "--pseudo-k", "5", "20",
                    "--procedures", "merge", "merge-strict"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    (pooled,) = [r for r in lines if r.get("kind") == "train" and r["model"] == "pooled"]
    labelled = [s for s in pooled["sources"] if s["kind"] == "labels"]
    assert [s["corpus"] for s in labelled] == ["toyb"]
    assert {s["corpus"] for s in pooled["sources"] if s["kind"].startswith("kmeans")} == {"toya", "toyb"}
    assert 0 < pooled["calibration"]["cut"] < 1
    anchored = [r for r in lines if r.get("kind") == "anchored"]
    assert [r["anchors_per_bag"] for r in anchored] == [1, 5]
    for r in anchored:
        for rule in ("own-prf", "own", "pooled", "cosine", "prf"):
            assert 0 < r[rule]["average_precision"] <= 1
    methods = {r["method"] for r in lines if r.get("kind") == "cluster"}
    merges = {f"{m}-{p}" for m in ("own-prf", "own", "pooled") for p in ("merge", "merge-strict")}
    assert methods == {"kmeans-true-k", "kmeans-silhouette-k"} | merges
    (folder,) = (tmp_path / "runs").iterdir()
    table = bench_dac.pooled_table([folder]).splitlines()
    ap_row = next(line for line in table if line.startswith("| toya | 1 | 1 |"))
    assert f"{anchored[0]['pooled']['average_precision']:.3f}" in ap_row  # the run's own figure, as a mean of one
    assert any(line.startswith("| toya | pooled-merge | 1 |") for line in table)


def test_the_bench_embeds_labelled_csvs_and_pools_them_from_a_folder(tmp_path, monkeypatch, capsys):
    """bench.dac embed + pooled --npz-dir (issue 31's protocol on a GPU box without the corpora): each labelled
    CSV becomes DIR/NAME.npz of unit rows in the file's order with its labels; pooled reads every corpus from the
    folder, trains the pooled model on the other corpus's labels only, and refuses an adapted set beside it."""
    import json

    import pandas as pd

    from bench import dac as bench_dac

    class Toy:  # encodes a text "c<k> ..." near the k-th of 8 directions (a stand-in for the model)
        def encode(self, texts, **kw):
            gen = np.random.default_rng(len(texts))
            centres = np.eye(16, dtype=np.float32)[:8] * 3
            return np.stack([centres[int(t.split()[0][1:])] + gen.normal(0, 0.5, 16) for t in texts]).astype(np.float32)

    monkeypatch.setattr("core.embed.load_model", lambda name, device="auto": Toy())
    gen = np.random.default_rng(0)
    for name in ("toya", "toyb"):
        k = gen.integers(0, 8, 400)
        pd.DataFrame({"id": range(400), "text": [f"c{c} words {i}" for i, c in enumerate(k)],
                      "label": [f"class{c}" for c in k]}).to_csv(tmp_path / f"{name}.csv", index=False)
    bench_dac.main(["embed", "--csv", str(tmp_path / "toya.csv"), str(tmp_path / "toyb.csv"), "--model", "toy",
                    "--out", str(tmp_path / "npz"), "--device", "cpu"])
    a = np.load(tmp_path / "npz" / "toya.npz")
    assert a["x"].shape == (400, 16) and np.allclose(np.linalg.norm(a["x"], axis=1), 1, atol=1e-5)
    frame = pd.read_csv(tmp_path / "toya.csv")
    assert (a["labels"] == stages.labels_from_column(frame["label"])).all()  # the file's order, the import's codes
    assert (np.argmax(a["x"][:, :8], axis=1) == frame["text"].str[1].astype(int)).mean() > 0.95

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    capsys.readouterr()
    tiny = ["--seeds", "0", "--device", "cpu", "--bag", "120", "--hidden", "32", "--inducing", "8", "--n1", "1",
            "--n2", "1", "--prf", "10", "--pretrain-epochs", "1", "--epochs", "1", "--steps", "3", "--pooled-epochs",
            "1", "--pooled-steps", "5", "--batch", "2", "--anchors", "4", "--pseudo-k", "5", "--procedures"]
    bench_dac.main(["pooled", "--npz-dir", str(tmp_path / "npz"), "--targets", "toya", "--extra", "toyb",
                    "--own", "own-prf", *tiny])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert lines[0]["rows"] == {"toya": 400, "toyb": 400}
    (pooled,) = [r for r in lines if r.get("kind") == "train" and r["model"] == "pooled"]
    assert [s["corpus"] for s in pooled["sources"] if s["kind"] == "labels"] == ["toyb"]
    assert [r["anchors_per_bag"] for r in lines if r.get("kind") == "anchored"] == [1, 5]
    with pytest.raises(SystemExit, match="--embedding-set"):
        bench_dac.main(["pooled", "--npz-dir", str(tmp_path / "npz"), "--targets", "toya", "--extra", "toyb",
                        "--embedding-set", "sccl-s0", *tiny])


def test_the_bench_reads_both_rules_of_choose_k_from_one_scoring(tmp_path, monkeypatch, capsys):
    """bench.dac pooled (own models only) and choosek: the 1-SE rule's k comes from the same candidate
    scores as the best score's (one scoring), never above it."""
    import json

    from bench import dac as bench_dac

    x, y = clustered_unit_vectors(600, 16, clusters=8, seed=20, spread=0.3)
    monkeypatch.setattr(bench_dac, "load_data", lambda a: (a.corpus, x, y))
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    tiny = ["--seeds", "0", "--bag", "100", "--hidden", "32", "--prf", "10", "--epochs", "1", "--steps", "5",
            "--batch", "2"]
    bench_dac.main(["pooled", "--targets", "toy", "--own", "own-prf", "--skip-pooled", "--device", "cpu",
                    "--inducing", "8", "--n1", "1", "--n2", "1", "--pretrain-epochs", "1", "--anchors", "4",
                    "--procedures", "choose-k", "choose-k-1se", *tiny])
    bench_dac.main(["choosek", "--corpora", "toy", *tiny])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    for best, one in (("own-prf-choose-k", "own-prf-choose-k-1se"), ("dac-choose-k-best", "dac-choose-k-1se")):
        (b,) = [r for r in rows if r.get("method") == best]
        (o,) = [r for r in rows if r.get("method") == one]
        assert o["info"]["scores"] == b["info"]["scores"] and o["info"]["rule"] == "1se"
        assert o["info"]["chosen_k"] == infer.pick_k(b["info"]["scores"], "1se") <= b["info"]["chosen_k"]


def test_cli_trains_a_pooled_model_from_other_corpora_and_clusters_by_merging(so_copy):
    """precompute.dac train --stage pooled (issue 31): classes from the pooled corpora, K-Means
    pseudo-classes of the target too, the PRF feature on, a cut on the pooled corpora's held-out
    classes; then the merge procedure clusters the target with it."""
    import shutil

    from core.cluster import store
    from core.cluster.dac import store as models
    from precompute import cluster
    from precompute import dac as dac_job

    shutil.copytree(so_copy / "so", so_copy / "other")  # a second labelled corpus, same embedding model
    small = ["--epochs", "2", "--steps", "4", "--batch", "2", "--bag", "120", "--hidden", "32", "--inducing", "8"]
    assert dac_job.main(["train", "--corpus", "so", "--stage", "pooled", "--pool", "other", "--model", "p",
                         "--pseudo-k", "5", "20", "--mixup", "3", *small]) == 0
    t = models.load("so", "p")
    assert t.config.prf == 100 and [s["stage"] for s in t.stages] == ["pooled"]
    kinds = {(s["corpus"], s["kind"]) for s in t.stages[-1]["sources"]}
    assert kinds == {("so", "kmeans-5"), ("so", "kmeans-20"), ("other", "labels"), ("other", "kmeans-5"),
                     ("other", "kmeans-20"), ("other", "mixup")}  # no label of the target, mixed classes of the pool
    assert 0 < t.calibration["cut"] < 1 and t.stages[-1]["schedule"] == "cosine"
    held_out = sum(s.get("held_out", 0) for s in t.stages[-1]["sources"])
    assert t.calibration["classes"] == held_out  # the card counts the held-out classes, not every class
    with pytest.raises(SystemExit, match="needs --pool"):
        dac_job.main(["train", "--corpus", "so", "--stage", "pooled", *small])
    with pytest.raises(ValueError, match="'other' has no column 'nope'"):
        dac_job.main(["train", "--corpus", "so", "--stage", "pooled", "--pool", "other", "--label-column", "nope",
                      *small])
    assert cluster.main(["--corpus", "so", "--method", "dac", "--param", "model='p'", "--param", "procedure='merge'",
                         "--param", "bag=120", "--no-terms"]) == 0
    merged = [s for s in store.listing("so") if s.method == "dac" and s.meta["params"]["procedure"] == "merge"]
    assert merged and merged[0].meta["rows"] == 300


def test_the_bench_reads_an_adapted_embedding_set_of_a_target_when_asked(so_copy):
    """bench.dac pooled --embedding-set: DAC and its baselines on an adapted set's vectors (the labels the
    corpus's own), a missing set named."""
    from argparse import Namespace

    from bench import dac as bench_dac
    from core import embedsets
    from core.corpus import load_corpus

    corpus = load_corpus("so")
    adapted = np.roll(np.asarray(corpus.embeddings, np.float32), 1, axis=1)
    embedsets.save(corpus, "adapted", adapted, {"method": "test"})
    ask = dict(npz=None, corpus="so", label_column="label")
    name, x, y = bench_dac.load_data(Namespace(**ask, embedding_set="adapted"))
    np.testing.assert_allclose(x, adapted)
    _, own, y2 = bench_dac.load_data(Namespace(**ask, embedding_set="import"))
    np.testing.assert_allclose(own, np.asarray(corpus.embeddings, np.float32))
    assert name == "so" and len(np.unique(y)) == 20 and (y == y2).all()
    with pytest.raises(embedsets.EmbeddingSetError, match="no embedding set 'nope'"):
        bench_dac.load_data(Namespace(**ask, embedding_set="nope"))


def test_a_model_is_used_only_with_the_embedding_set_it_learnt(so_copy):
    """A DAC model records the embedding set it was trained on (``precompute.dac --embedding-set``); on
    another set of the same corpus (same size, other vectors) the clustering job refuses it, naming both."""
    from core import embedsets
    from core.cluster.dac import store as models
    from core.cluster.jobs import cluster_corpus
    from core.corpus import load_corpus
    from precompute import dac as dac_cli

    corpus = load_corpus("so")
    embedsets.save(corpus, "adapted", np.roll(np.asarray(corpus.embeddings, np.float32), 1, axis=1), {"method": "t"})
    tiny = ["--stage", "pretrain", "--epochs", "1", "--steps", "2", "--batch", "2", "--bag", "50", "--hidden", "16",
            "--inducing", "4", "--device", "cpu"]
    assert dac_cli.main(["train", "--corpus", "so", "--model", "on-adapted", "--embedding-set", "adapted", *tiny]) == 0
    assert dac_cli.main(["train", "--corpus", "so", "--model", "on-import", *tiny]) == 0
    on_adapted, on_import = models.load("so", "on-adapted"), models.load("so", "on-import")
    assert on_adapted.corpus["embedding_set"] == "adapted" and on_import.corpus["embedding_set"] == "import"
    assert models.mismatch(on_adapted, corpus, "adapted") is None and models.mismatch(on_import, corpus) is None
    why = models.mismatch(on_import, corpus, "adapted")
    assert "'import'" in why and "'adapted'" in why
    legacy = models.load("so", "on-import")
    legacy.corpus.pop("embedding_set")  # a model saved before models recorded their set learnt the import's
    assert models.other_vectors(legacy, "import") is None and models.other_vectors(legacy, "adapted")
    with_set = embedsets.with_set(corpus, "adapted")
    with pytest.raises(ValueError, match="trained on the embedding set 'import'"):
        cluster_corpus(with_set, "dac", None, embedding_set="adapted", lang=None,
                       params={"model": "on-import", "procedure": "choose-k"})
    with pytest.raises(SystemExit, match="--from on-import"):  # a stage goes on only on the set it began on
        dac_cli.main(["train", "--corpus", "so", "--model", "next", "--from", "on-import", "--embedding-set",
                      "adapted", *tiny[:1], "kmeans", *tiny[2:]])
    with pytest.raises(SystemExit, match="pooled"):
        dac_cli.main(["train", "--corpus", "so", "--stage", "pooled", "--pool", "so", "--embedding-set", "adapted"])


def test_the_blend_of_a_model_and_the_prf_rule_takes_the_better_and_runs_membership_only(tmp_path, monkeypatch,
                                                                                         capsys):
    """bench.dac pooled --blend: the weight of the model's probability against the PRF score is the one with
    the best AP on held-out seen classes (1 where the model ranks perfectly, 0 where the PRF score does);
    with no procedures the run stops after the membership figures."""
    import json

    from bench import dac as bench_dac

    rng = np.random.default_rng(0)
    truth = rng.random(400) < 0.3
    perfect, noise = truth + 0.01 * rng.random(400), 10 * rng.random(400)  # noise that swamps a small weight
    assert bench_dac.blend_weight(perfect, noise, truth) == 1.0
    assert bench_dac.blend_weight(noise, perfect, truth) == 0.0
    x, y = clustered_unit_vectors(600, 16, clusters=8, seed=20, spread=0.3)
    monkeypatch.setattr(bench_dac, "load_data", lambda a: (a.corpus, x, y))
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "runs"))
    bench_dac.main(["pooled", "--targets", "toy", "--own", "own-prf", "--skip-pooled", "--device", "cpu", "--seeds", "0",
                    "--bag", "200", "--hidden", "32", "--prf", "10", "--epochs", "1", "--steps", "5", "--batch", "2",
                    "--inducing", "8", "--n1", "1", "--n2", "1", "--pretrain-epochs", "1", "--anchors", "6",
                    "--procedures", "--blend"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    anchored = [r for r in lines if r.get("kind") == "anchored"]
    assert len(anchored) == 2 and not [r for r in lines if r.get("kind") == "cluster"]
    for r in anchored:
        assert 0 <= r["blend"]["weight"] <= 1 and 0 < r["blend"]["average_precision"] <= 1
