"""K-Means, key lemmas, and clustering metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from core.cluster.evaluate import accuracy, group_iou, label_scores
from core.cluster.keyterms import Lemmatiser, key_terms, lemmas
from core.cluster.kmeans import kmeans, objective
from tests.conftest import clustered_unit_vectors, shared_file


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
    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2])
    res = group_iou({"a": [0, 1, 2, 3], "b": [5, 6]}, clusters)
    # a: best is cluster 0: |{0,1,2}| / |{0,1,2,3}| = 3/4 ; b: cluster 2: 2/5
    assert res["groups"]["a"]["iou"] == pytest.approx(0.75) and res["groups"]["b"]["iou"] == pytest.approx(0.4)
    assert res["iou"] == pytest.approx((0.75 + 0.4) / 2)


def test_czech_key_lemmas_collapse_inflections_and_drop_function_words():
    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:3000]
    lem = Lemmatiser("cs")
    for forms in (("očkování", "očkováním"), ("volby", "voleb", "volbách"), ("vláda", "vlády", "vládou", "vládě")):
        assert len({lem(w) for w in forms}) == 1, forms
    assert lemmas("Viz https://t.co/x @babis 2021 Praha!", lem) == [lem("viz"), lem("praha")]
    text = f["text"].str.lower()
    labels = np.where(text.str.contains("očkov|vakcín"), 1, 0)
    kt = key_terms(f["text"].tolist(), labels, lang="auto", top=15, min_count=5)
    assert kt.lang == "cs"
    vaccine = kt.table.set_index("cluster").loc[1]
    assert {lem("vakcína"), lem("očkovat"), lem("očkování")} & set(vaccine["ctfidf_terms"][:5])
    function_words = {lem(w) for w in ("a", "se", "na", "je", "že", "v", "to")} | {"you", "really", "very", "the"}
    for col in ("rule_terms", "ctfidf_terms"):
        for terms in kt.table[col]:
            assert not function_words & set(terms), (col, terms)
    assert kt.table["size"].sum() == len(f)
    # the forms counted under a vaccine lemma are shown beside it, inflections included
    shown = {f.split(": ")[0]: f.split(": ")[1].split("/") for f in vaccine["forms"]}
    assert lem("očkovat") in shown and len(shown[lem("očkovat")]) >= 3, vaccine["forms"]
    assert all(lem(form) == lemma or len(form) > 3 for lemma, fs in shown.items() for form in fs)


def test_lemma_filter_is_case_and_diacritics_insensitive_and_matches_prefixes():
    from core.cluster.topics import filter_clusters

    table = pd.DataFrame({"cluster": [0, 1, 2], "size": [5, 5, 5], "mean_len": [10.0] * 3,
                          "rule_terms": ["očkování, vakcína", "rozpočet", ""],
                          "ctfidf_terms": ["", "Babiš", "volby"]})
    for needle, expected in (("ockovani", [0]), ("OČKOVÁNÍ", [0]), ("vakc", [0]), ("babis", [1]),
                             ("vol", [2]), ("ánky", []), ("", [0, 1, 2])):
        assert filter_clusters(table, lemma=needle)["cluster"].tolist() == expected, needle


def test_unknown_czech_forms_join_the_known_lemma_with_their_stem():
    from collections import Counter

    from core.cluster.keyterms import Lemmatiser, merge_unknown

    lem = Lemmatiser("cs")
    counts = Counter({"vakcína": 5, "vakcíny": 3, "vakcín": 4, "volby": 6, "volbama": 1, "roušky": 2,
                      "rouška": 2, "tendru": 1, "polský": 2})
    merged = merge_unknown(counts, lem)
    assert merged["vakcín"] == "vakcína" and merged["volbama"] == lem("volby")
    assert "tendru" not in merged  # no known lemma with its stem in this corpus: left alone
    assert "polský" not in merged and "vakcína" not in merged  # known words are never remapped
    assert merge_unknown(counts, Lemmatiser("en")) == {}  # Czech endings only for Czech


def test_english_function_words_are_no_key_lemmas_of_a_czech_corpus():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    english = f["text"].str.contains(r"(?i)\b(?:you|the|really|very|we)\b")
    assert english.sum() >= 50  # Czech politicians quote and write English now and then
    kt = key_terms(f["text"].tolist(), english.to_numpy().astype(int), lang="cs", top=15, min_count=5)
    quoting = kt.table.set_index("cluster").loc[1]
    for col in ("rule_terms", "ctfidf_terms"):
        assert quoting[col] and not set(quoting[col]) & ENGLISH_STOP_WORDS, quoting[col]


def test_the_lemma_filter_finds_the_demos_flood_events_by_the_word_flood():
    """issue 26: on the demo (16 crisis events, five of them floods) 'flood' found no cluster: it is the
    corpus's commonest word (no key lemma anywhere) and its clusters' key terms were hashtags
    (coflood, abflood). Hashtags now count for the word inside them, and the filter also searches a
    cluster's frequent words."""
    import pandas as pd

    from core.cluster.keyterms import hashtag_parts, key_terms
    from core.cluster.topics import cluster_table, filter_clusters
    from tests.conftest import ROOT

    demo = pd.read_csv(ROOT / "demo" / "crisislex_demo.csv.gz", dtype=str, keep_default_na=False)
    codes, events = pd.factorize(demo["event"])
    table = cluster_table(codes, demo["text"].to_numpy(), key_terms(demo["text"].tolist(), codes, lang="en").table)
    found = sorted(events[c] for c in filter_clusters(table, lemma="flood")["cluster"])
    assert found == sorted(e for e in events if "flood" in e.lower()), found
    fires = sorted(events[c] for c in filter_clusters(table, lemma="wildfire")["cluster"])
    assert fires and all("wildfire" in e.lower() for e in fires), fires  # no flood event named by 'wildfire'
    assert hashtag_parts("Help #COflood and #BoulderFlood") == ["oflood", "boulder", "flood"]
