"""The clustering registry (one suite over every method), DEC/IDEC's laws, K-Means restarts and
resumption, and the store of clusterings."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest
import torch
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from core.cluster import REGISTRY, ClusterContext
from core.cluster import store
from core.cluster.base import Clustering
from core.cluster.deep import soft_assign, target_distribution
from core.cluster.evaluate import accuracy, group_iou, label_scores, purity
from core.cluster.kmeans import kmeans, objective
from tests.conftest import clustered_unit_vectors

# small enough for a test: DEC/IDEC's defaults are sized for corpora of 10k+ texts
FAST = {"kmeans": {}, "dec": dict(pretrain_epochs=4, max_steps=60, update_interval=20, batch_size=64,
                                  hidden=(32,), latent=8),
        "idec": dict(pretrain_epochs=4, max_steps=60, update_interval=20, batch_size=64, hidden=(32,), latent=8),
        "dac": dict(train_epochs=3, train_steps=25, train_batch=4, bag=150, anchors=120, hidden=32,
                    train_cluster_size=50)}


VECTOR_METHODS = sorted(n for n, m in REGISTRY.items() if not m.needs_texts)  # ClusterBERT: tests/test_adapt.py


def k_for(name, k):
    """The k a method is asked for: none for one that finds its own number of clusters."""
    return k if REGISTRY[name].needs_k else None


def mixture(sizes, dim=16, spread=0.6, seed=0):
    """Unit vectors around one random unit centre per class; class sizes as given."""
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((len(sizes), dim))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    y = np.repeat(np.arange(len(sizes)), sizes)
    x = c[y] + spread * rng.standard_normal((len(y), dim)) / np.sqrt(dim)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32), y


@pytest.mark.parametrize("name", VECTOR_METHODS)
def test_every_method_labels_every_row_in_range_and_repeats_for_a_seed(name):
    x, y = clustered_unit_vectors(301, 16, clusters=5, seed=3)
    m = REGISTRY[name]
    a = m.fit(ClusterContext(x), k_for(name, 5), seed=7, **FAST[name])
    b = m.fit(ClusterContext(x), k_for(name, 5), seed=7, **FAST[name])
    assert isinstance(a, Clustering) and a.method == name
    assert a.k == 5 if m.needs_k else abs(a.k - 5) <= 1  # DAC finds the number itself, give or take one
    assert a.labels.shape == (301,) and a.labels.dtype == np.int32
    assert a.labels.min() >= 0 and a.labels.max() < a.k
    np.testing.assert_array_equal(a.labels, b.labels)
    assert accuracy(y, a.labels) > 0.9  # five well separated clusters are found
    assert a.history and a.params  # what it did and with which settings is recorded


@pytest.mark.parametrize("name", VECTOR_METHODS)
def test_every_method_survives_duplicates_and_more_clusters_than_distinct_points(name):
    x, _ = clustered_unit_vectors(4, 8, clusters=2, seed=1)
    dup = np.repeat(x, 10, axis=0)  # 40 rows, 4 distinct
    r = REGISTRY[name].fit(ClusterContext(dup), k_for(name, 6), seed=0, **{**FAST[name], **(
        {"min_size": 1} if name == "dac" else {})})
    assert r.labels.shape == (40,) and 0 <= r.labels.min() and r.labels.max() < 6
    # copies of one row always share a cluster
    for i in range(4):
        assert len(set(r.labels[i * 10:(i + 1) * 10])) == 1


@pytest.mark.parametrize("name", VECTOR_METHODS)
def test_every_method_refuses_bad_k_and_unknown_parameters(name):
    x, _ = clustered_unit_vectors(20, 4)
    m = REGISTRY[name]
    with pytest.raises(ValueError, match="k must be between 1 and the number of rows" if m.needs_k
                       else "finds the number of clusters itself"):
        m.fit(ClusterContext(x), 21)
    with pytest.raises(ValueError, match="has no parameter 'n_clusterz'"):
        m.fit(ClusterContext(x), k_for(name, 3), n_clusterz=3)


def test_dec_target_rows_sum_to_one_and_sharpen_the_assignment():
    g = torch.Generator().manual_seed(0)
    z, mu = torch.randn(200, 5, generator=g), torch.randn(4, 5, generator=g)
    q = soft_assign(z, mu)
    p = target_distribution(q)
    torch.testing.assert_close(q.sum(1), torch.ones(200))
    torch.testing.assert_close(p.sum(1), torch.ones(200))
    entropy = lambda d: -(d * d.log()).sum(1)  # noqa: E731
    assert entropy(p).mean() < entropy(q).mean()  # sharper
    assert (entropy(p) < entropy(q)).float().mean() > 0.9  # on nearly every row (f_j can soften a few)
    confident = q.max(1).values > 0.5
    assert (p.max(1).values[confident] > q.max(1).values[confident]).all()


def test_dec_loss_falls_and_accuracy_rises_from_its_kmeans_start():
    x, y = clustered_unit_vectors(600, 16, clusters=4, seed=0, spread=1.0)
    p = dict(pretrain_epochs=10, update_interval=20, batch_size=64, latent=8, hidden=(32,), tol=0.0, cluster_lr=3e-3)
    start = REGISTRY["dec"].fit(ClusterContext(x), 4, seed=0, max_steps=0, **p)  # K-Means in the latent space
    end = REGISTRY["dec"].fit(ClusterContext(x), 4, seed=0, max_steps=400, **p)
    intervals = [h for h in end.history if "loss" in h]
    # against each fixed target the loss falls; over the run, too (each refresh sharpens the target)
    assert np.mean([h["loss_end"] < h["loss_start"] for h in intervals]) >= 0.8
    assert intervals[-1]["loss"] < 0.95 * max(h["loss"] for h in intervals[:5])
    assert accuracy(y, end.labels) > accuracy(y, start.labels) + 0.03


def test_idec_reconstruction_keeps_a_small_cluster_that_dec_distorts():
    """Imbalanced classes (450/80/40/30) and a fast clustering step: DEC's size-normalised target
    drags rows of the big class into the small ones; IDEC's reconstruction term holds them."""
    x, y = mixture([450, 80, 40, 30], seed=0)
    p = dict(pretrain_epochs=10, update_interval=20, batch_size=64, latent=8, hidden=(32,), tol=0.0,
             cluster_lr=1e-2, max_steps=1500)
    dec = REGISTRY["dec"].fit(ClusterContext(x), 4, seed=0, **p)
    idec = REGISTRY["idec"].fit(ClusterContext(x), 4, seed=0, **p)
    assert accuracy(y, idec.labels) == 1.0
    assert accuracy(y, dec.labels) < 0.95
    assert sorted(np.bincount(idec.labels)) == [30, 40, 80, 450]


def test_dec_gives_every_one_of_the_k_clusters_texts():
    """Many clusters for few topics (30 for 4) and a fast clustering step: DEC's sharpening empties clusters
    (the paper's loop, ``keep_k=False``); by default it stops at the refresh that would empty one, so the user
    gets the k topics asked for."""
    x, _ = mixture([150, 150, 150, 150], seed=0)
    p = dict(pretrain_epochs=4, update_interval=20, batch_size=64, latent=8, hidden=(32,), tol=0.0,
             cluster_lr=3e-3, max_steps=600)
    loose = REGISTRY["dec"].fit(ClusterContext(x), 30, seed=0, keep_k=False, **p)
    assert (np.bincount(loose.labels, minlength=30) == 0).any()
    kept = REGISTRY["dec"].fit(ClusterContext(x), 30, seed=0, **p)
    assert (np.bincount(kept.labels, minlength=30) > 0).all()
    assert kept.history[-1]["stopped"] == "a cluster would have been emptied"
    assert kept.history[-1]["empty_clusters"] == 0 and kept.history[-1]["step"] < 600


def test_purity_does_not_reward_merging_clusters_as_nmi_does():
    y = np.repeat([0, 1, 2, 3], 25)
    split = np.repeat(np.arange(8), [13, 12, 13, 12, 13, 12, 13, 12])  # each class cut in two, k = 8
    merged = np.repeat([0, 0, 1, 1], 25)  # pairs of classes joined, k = 2
    assert purity(y, split) == 1.0 and purity(y, merged) == 0.5
    noisy = split.copy()
    noisy[[0, 30, 60]] = 7  # three rows of other classes into the last cluster
    assert purity(y, noisy) == pytest.approx(0.97)
    assert accuracy(y, merged) == 0.5 and accuracy(y, y[::-1]) == 1.0


def test_kmeans_plus_plus_restarts_reach_scikit_learns_objective():
    from sklearn.cluster import KMeans

    x, _ = mixture([300, 200, 100, 60, 40, 20, 10, 10], dim=12, spread=1.2, seed=4)
    ours = kmeans(x, 8, init="k-means++", n_init=10, niter=100, tol=0, seed=0)
    ref = KMeans(8, n_init=10, random_state=0).fit(x)
    assert objective(x, ours.labels, ours.centroids) <= 1.005 * ref.inertia_
    one_random = kmeans(x, 8, init="random", n_init=1, niter=100, tol=0, seed=0)
    assert ours.objective[-1] <= one_random.objective[-1] + 1e-3  # restarts keep the best


def test_kmeans_resumes_from_its_checkpoint_to_the_same_result(tmp_path):
    x, _ = clustered_unit_vectors(997, 16, clusters=30, seed=2)
    params = dict(init="k-means++", n_init=3, niter=15, tol=0)
    whole = REGISTRY["kmeans"].fit(ClusterContext(x), 30, seed=1, **params)

    class Killed(Exception):
        pass

    steps = []

    def kill_at_the_12th_iteration(step, total, info):
        steps.append(step)
        if len(steps) == 12:  # in the second start: the first one converges within 10 iterations
            raise Killed

    ctx = ClusterContext(x, checkpoint=tmp_path / "ck")
    with pytest.raises(Killed):
        REGISTRY["kmeans"].fit(ctx, 30, seed=1, progress=kill_at_the_12th_iteration, **params)
    assert (tmp_path / "ck" / "state.pt").exists()
    seen = []
    resumed = REGISTRY["kmeans"].fit(ctx, 30, seed=1, progress=lambda s, t, i: seen.append(s), **params)
    assert seen[0] == steps[-1]  # it went on from the last checkpoint, not from the start
    np.testing.assert_array_equal(resumed.labels, whole.labels)
    assert not (tmp_path / "ck" / "state.pt").exists()


def test_dec_resumes_from_its_checkpoint_to_the_same_result(tmp_path):
    x, _ = clustered_unit_vectors(400, 16, clusters=4, seed=5, spread=1.0)
    p = dict(FAST["dec"], tol=0.0, max_steps=100)
    whole = REGISTRY["dec"].fit(ClusterContext(x), 4, seed=0, **p)

    def kill_after_two_refreshes(step, total, info):
        if info.get("step") == 40:
            raise KeyboardInterrupt

    ctx = ClusterContext(x, checkpoint=tmp_path / "ck")
    with pytest.raises(KeyboardInterrupt):
        REGISTRY["dec"].fit(ctx, 4, seed=0, progress=kill_after_two_refreshes, **p)
    phases = []
    resumed = REGISTRY["dec"].fit(ctx, 4, seed=0, progress=lambda s, t, info: phases.append(info["phase"]), **p)
    assert "pretrain" not in phases  # it went on from the checkpoint: no second pretraining
    np.testing.assert_array_equal(resumed.labels, whole.labels)
    assert [h.get("step") for h in resumed.history] == [h.get("step") for h in whole.history]


# --- the store ----------------------------------------------------------------------------------

def fake(method="kmeans", k=3, n=12, seed=0) -> Clustering:
    rng = np.random.default_rng(seed)
    return Clustering(rng.integers(0, k, n).astype(np.int32), rng.standard_normal((k, 4)).astype(np.float32),
                      method, k, {"niter": 5}, [{"iteration": 0, "objective": 1.5}], 0.1, seed, "cpu")


def test_store_round_trip_listing_and_delete(tweets):
    a, b = fake(), fake("dec", 5, seed=1)
    store.save("tweets", a, generation="g1")
    store.save("tweets", b, generation="g1", tag="trial")
    listed = store.listing("tweets")
    assert [s.stem for s in listed] == ["dec-k5-trial", "kmeans-k3"]
    assert "DEC, k = 5 [trial]" in listed[0].describe()
    got, meta = store.load("tweets", "kmeans-k3", "g1")
    np.testing.assert_array_equal(got.labels, a.labels)
    np.testing.assert_allclose(got.centroids, a.centroids)
    assert meta["objective"] == 1.5 and meta["params"] == {"niter": 5}
    with pytest.raises(store.ClusteringError, match="earlier import"):
        store.load("tweets", "kmeans-k3", "g2")  # re-imported since: its labels describe other rows
    assert listed[1].stale("g2") and not listed[1].stale("g1")
    store.delete("tweets", "dec-k5-trial")
    assert [s.stem for s in store.listing("tweets")] == ["kmeans-k3"]
    with pytest.raises(store.ClusteringError, match="run python -m precompute.cluster --corpus tweets --method dec --k 5"):
        store.load("tweets", "dec-k5")
    with pytest.raises(ValueError, match="tag"):
        store.stem_of("kmeans", 3, "../x")


def test_store_corrupt_file_gives_a_clear_error(tweets):
    store.save("tweets", fake(), generation="g1")
    path = store.clustering_file("tweets", "kmeans-k3")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(store.ClusteringError, match="damaged clustering file"):
        store.load("tweets", "kmeans-k3")
    path.write_bytes(b"\x00garbage" * 100)  # numpy read it as pickled data, and its message said to load it unsafely
    with pytest.raises(store.ClusteringError, match=r"damaged clustering file \(not an \.npz archive\)") as err:
        store.load("tweets", "kmeans-k3")
    assert "pickle" not in str(err.value)


def _write_forever(root: str, started) -> None:  # child process: keeps rewriting one clustering
    os.environ["SEMANNO_DATA"] = root
    big = Clustering(np.zeros(3_000_000, np.int32), None, "kmeans", 3, {}, [], 0.0)
    started.set()
    while True:
        store.save("tweets", big, generation="g1")


def test_store_write_killed_midway_leaves_the_previous_file(tweets):
    first = fake()
    store.save("tweets", first, generation="g1")
    ctx = mp.get_context("fork")
    started = ctx.Event()
    proc = ctx.Process(target=_write_forever, args=(str(tweets), started))
    proc.start()
    started.wait(30)
    folder = store.folder("tweets")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # wait until a temporary file is being written, then kill
        if any(f.name.endswith(".tmp") for f in folder.iterdir()):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    got, meta = store.load("tweets", "kmeans-k3")
    assert len(got.labels) in (12, 3_000_000)  # the old file or a whole new one, never a torn one
    assert json.loads(store.clustering_file("tweets", "kmeans-k3").with_suffix(".json").read_text())["k"] == 3


def test_legacy_kmeans_files_move_into_the_store(tweets):
    old = tweets / "tweets" / "kmeans"
    old.mkdir()
    labels = np.arange(2000, dtype=np.int32) % 7
    np.savez(old / "k7.npz", labels=labels, centroids=np.zeros((7, 4), np.float32),
             stats=json.dumps({"seed": 0, "objective": [5.0, 4.0], "iterations": 3}))
    before = sorted(p.name for p in (tweets / "tweets").rglob("*"))
    assert store.listing("tweets") == [] and sorted(p.name for p in (tweets / "tweets").rglob("*")) == before, \
        "a listing only reads"
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    AppTest.from_file(str(ROOT / "pages" / "4_Topics.py"), default_timeout=60).run()  # the page migrates, once
    assert [s.stem for s in store.listing("tweets")] == ["kmeans-k7"]
    got, meta = store.load("tweets", "kmeans-k7")
    np.testing.assert_array_equal(got.labels, labels)
    assert meta["objective"] == 4.0 and not (old / "k7.npz").exists()


# --- K-Means itself and the clustering metrics (moved from test_topics.py) ---------------------------

@pytest.mark.parametrize("n,k", [(997, 7), (2003, 60)])
def test_kmeans_assignment_is_nearest_centroid_and_matches_faiss(n, k):
    import faiss

    x, _ = clustered_unit_vectors(n, 16, clusters=k, seed=n)
    r = kmeans(x, k, niter=25, seed=0, neighbours=8)
    assert r.labels.shape == (n,) and r.centroids.shape == (k, 16)
    d = ((x[:, None, :] - r.centroids[None]) ** 2).sum(-1)
    agree = (d.argmin(1) == r.labels).mean()
    assert agree >= 0.99, f"only {agree:.3f} of rows sit with their nearest centroid"
    # the centroids are the means of their members
    for c in range(0, k, max(1, k // 5)):
        m = r.labels == c
        if m.any():
            np.testing.assert_allclose(r.centroids[c], x[m].mean(0), atol=1e-4)
    km = faiss.Kmeans(16, k, niter=25, seed=0, max_points_per_centroid=10**9)
    km.train(x)
    _, ref = km.index.search(x, 1)
    assert objective(x, r.labels, r.centroids) <= 1.02 * objective(x, ref[:, 0], km.centroids)
    assert r.objective[-1] <= r.objective[0]


def test_assigning_every_row_in_torch_blocks_gives_faiss_nearest_centroids():
    """The last pass of a sampled K-Means: the torch path (what a GPU box runs, here on the CPU) and FAISS's agree
    on every row's nearest centroid and on the total distance, across block edges and from fp16 rows."""
    from core.cluster.kmeans import assign_all

    x, _ = clustered_unit_vectors(5003, 32, clusters=40, seed=3)
    c = x[np.random.default_rng(0).choice(len(x), 40, replace=False)] + 0.01
    for rows in (x, x.astype(np.float16)):
        ref, ref_total = assign_all(rows, c, block=1000)
        got, total = assign_all(rows, c, block=1000, faiss_on_cpu=False)
        exact = ((np.asarray(rows, np.float32)[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
        assert (got == exact).mean() >= 0.999 and (ref == exact).mean() >= 0.999
        assert total == pytest.approx(ref_total, rel=1e-4)


def test_kmeans_rejects_bad_k():
    x, _ = clustered_unit_vectors(10, 4)
    with pytest.raises(ValueError, match="k must be between 1 and the number of rows"):
        kmeans(x, 11)


def test_metrics_against_sklearn_and_by_hand():
    t = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    p = np.array([5, 5, 1, 1, 1, 1, 7, 7, 7, 5])
    s = label_scores(t, p)
    assert s["nmi"] == pytest.approx(normalized_mutual_info_score(t, p))
    assert s["ari"] == pytest.approx(adjusted_rand_score(t, p))
    # by hand: 5->0 (2 right), 1->1 (3 right), 7->2 (3 right): 8 of 10
    assert s["acc"] == pytest.approx(0.8) and accuracy(t, t) == 1.0
    assert s["purity"] == pytest.approx(0.8)  # 5: 0,0,2 -> 0; 1: 0,1,1,1 -> 1; 7: 2,2,2 -> 2
    # more clusters than classes: every cluster pure, half of the texts in clusters the matching leaves out
    split = label_scores(np.array([0, 0, 1, 1]), np.array([0, 1, 2, 3]))
    assert split["acc"] == 0.5 and split["purity"] == 1.0
    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2])
    res = group_iou({"a": [0, 1, 2, 3], "b": [5, 6]}, clusters)
    # a: best is cluster 0: |{0,1,2}| / |{0,1,2,3}| = 3/4 ; b: cluster 2: 2/5
    assert res["groups"]["a"]["iou"] == pytest.approx(0.75) and res["groups"]["b"]["iou"] == pytest.approx(0.4)
    assert res["iou"] == pytest.approx((0.75 + 0.4) / 2)


def test_where_a_groups_rows_lie_among_the_clusters():
    """The Topics page sorts the clusters by a saved group's texts in them and says how few clusters hold 80%."""
    from core.cluster.evaluate import group_in_clusters

    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 3])
    spread = group_in_clusters([5, 6, 7, 8, 0, 3, 5], clusters)  # a row twice counts once
    assert spread["counts"].tolist() == [1, 1, 4, 0] and spread["rows"] == 6 and spread["clusters"] == 3
    assert spread["cover"] == 2  # 4 + 1 of 6 rows >= 80%; cluster 2 alone holds 67%
    assert group_in_clusters([5, 6, 7, 8], clusters)["cover"] == 1
    empty = group_in_clusters([], clusters)
    assert (empty["clusters"], empty["cover"], empty["rows"]) == (0, 0, 0)


def test_a_column_of_classes_is_found_and_its_empty_cells_are_no_class():
    import pandas as pd

    from core.cluster.evaluate import categorical_columns, column_scores

    frame = pd.DataFrame({"id": list("abcdef"), "text": list("uvwxyz"), "event": ["a", "a", "", "b", None, "b"],
                          "unique": list("pqrstu"), "score": [1, 2, 3, 4, 5, 6],
                          "in_reply_to_user_id": ["1234567", "1234567", "", "7654321", "7654321", "1234567"],
                          "year": ["2012", "2012", "2013", "2013", "2012", "2013"]})
    # not ids (its own or other records'), texts, a column of unique values, or numbers; a short code is a class
    assert categorical_columns(frame) == ["event", "year"]
    s = column_scores(frame["event"], np.array([0, 0, 1, 1, 0, 1]))
    assert s["rows"] == 4 and s["classes"] == 2 and s["nmi"] == pytest.approx(1.0) and s["acc"] == 1.0
    s = column_scores(frame["event"], np.array([0, 1, 1, 0, 0, 1]))
    assert s["acc"] == 0.5
    big = pd.Series(np.repeat(["a", "b"], 5000))
    clusters = np.repeat([0, 1], 5000)
    s = column_scores(big, clusters, at_most=1000)
    assert s["sampled"] and s["rows"] == 1000 and s["nmi"] == pytest.approx(1.0)
    assert not column_scores(big, clusters)["sampled"]


def test_the_cluster_job_checks_every_k_before_fitting_any(tweets, capsys):
    """``--k 4 --k 100000``: the bad k is named before K-Means runs for the good one, which a user would otherwise
    wait for and then see the job fail all the same."""
    from precompute import cluster as job

    with pytest.raises(ValueError, match=r"--k 100000 for corpus 'tweets': k must be between 1 and the number of "
                                         r"rows \(\d+\), got 100000; nothing was clustered"):
        job.run(job.parser().parse_args(["--corpus", "tweets", "--k", "4", "--k", "100000", "--no-terms"]))
    assert store.listing("tweets") == [] and "K-Means k=4" not in capsys.readouterr().err
    assert job.main(["--corpus", "tweets", "--k", "4", "--no-terms"]) == 0
    assert [s.stem for s in store.listing("tweets")] == ["kmeans-k4"]
