"""Figure functions and the 2-D projection, on small real slices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import plots
from core.projection import lda_directions, project, topic_directions, topic_map, topic_names
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def tweets():
    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:400]
    f["date"] = pd.to_datetime(f["date"]).dt.tz_localize(None)
    return f


def test_timeline_one_box_per_text_per_author(tweets):
    tl = plots.timeline(tweets, "day", top=5)
    assert tl.mode == "per text" and tl.bin == "day"
    boxes = {tr.name: len(tr.x) for tr in tl.figure.data}
    assert sum(boxes.values()) == len(tweets)
    top5 = tweets["author"].value_counts().head(5)
    for author, n in top5.items():
        assert boxes[author] == n
    assert boxes["other"] == len(tweets) - top5.sum()
    # boxes per date: each day's stack height equals the texts of that day
    days = pd.concat([pd.Series(pd.to_datetime(tr.x)) for tr in tl.figure.data]).value_counts()
    expected = tweets["date"].dt.floor("D").value_counts()
    assert days.sort_index().tolist() == expected.sort_index().tolist()
    assert all(tr.type == "bar" for tr in tl.figure.data) and tl.figure.layout.barmode == "stack"


def test_timeline_aggregates_counts_above_limit(tweets):
    tl = plots.timeline(tweets, "week", top=3, per_text_limit=100)
    assert tl.mode == "counts"
    weeks = tweets["date"].dt.floor("D") - pd.to_timedelta(tweets["date"].dt.weekday, unit="D")
    author = tweets["author"].value_counts().index[0]
    tr = next(t for t in tl.figure.data if t.name == author)
    expected = weeks[tweets["author"] == author].value_counts().sort_index()
    assert list(tr.y) == expected.tolist()
    assert sum(int(np.sum(t.y)) for t in tl.figure.data) == len(tweets)


def test_sparse_month_bars_are_a_month_wide_and_counts_are_whole_numbers():
    """issue 26: two months with texts four months apart drew four-month-wide bars, and a count axis
    in steps of 0.5."""
    f = pd.DataFrame({"date": pd.to_datetime(["2021-01-05", "2021-01-20", "2021-05-10"]), "author": ["a", "b", "a"],
                      "text": ["x", "y", "z"]})
    fig = plots.timeline(f, "month").figure
    month_ms = 30.44 * 86_400_000
    for tr in fig.data:
        assert tr.width == pytest.approx(0.9 * month_ms) and tr.offset == pytest.approx(0.05 * month_ms)
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.tickformat == ",d"
    many = pd.DataFrame({"date": pd.to_datetime(["2021-01-05"] * 40), "author": ["a"] * 40, "text": ["x"] * 40})
    assert plots.timeline(many, "day").figure.layout.yaxis.dtick is None  # Plotly's own whole-number steps


def test_timeline_hover_is_escaped_and_errors_are_clear():
    f = pd.DataFrame({"date": pd.to_datetime(["2021-01-01"]), "author": ["<b>x</b>"],
                      "text": ["<img src=x onerror=alert(1)>"]})
    hover = plots.timeline(f).figure.data[0].hovertext[0]
    assert "<img" not in hover and "&lt;img src=x onerror=alert(1)&gt;" in hover and "&lt;b&gt;" in hover
    with pytest.raises(ValueError, match="no dates"):
        plots.timeline(pd.DataFrame({"text": ["a"]}))
    assert plots.auto_bin(pd.Series(pd.to_datetime(["2021-01-01", "2021-12-31"]))) == "week"
    assert plots.auto_bin(pd.Series(pd.to_datetime(["2019-01-01", "2021-12-31"]))) == "month"


def test_scatter_colours_counts_and_selection():
    rng = np.random.default_rng(0)
    xy = rng.standard_normal((1000, 2)).astype(np.float32)
    labels = np.zeros(1000, np.int8)
    labels[:30], labels[30:50] = 1, -1
    texts = np.array([f"t{i}" for i in range(1000)], dtype=object)
    sc = plots.scatter(xy, labels, texts, hover_sample=100)
    by_name = {t.name: t for t in sc.figure.data}
    assert all(t.type == "scattergl" for t in sc.figure.data)
    assert by_name["included"].marker.color == plots.INCLUDED_COLOUR and len(by_name["included"].x) == 30
    assert by_name["excluded"].marker.color == plots.EXCLUDED_COLOUR and len(by_name["excluded"].x) == 20
    assert sum(len(t.x) for t in sc.figure.data) == 1000 and sc.hover_rows == 150
    assert by_name["unlabelled"].hoverinfo == "skip"
    # a selection event maps back to corpus rows through the trace it came from
    inc_curve = [t.name for t in sc.figure.data].index("included")
    rows = plots.selected_rows(sc, [{"curve_number": inc_curve, "point_index": 3}, {"curve_number": 0, "point_index": 0}])
    assert sorted(rows.tolist()) == sorted([3, int(sc.trace_rows[0][0])])
    # compact: coordinates are float32 arrays (sent base64-encoded by plotly)
    assert np.asarray(by_name["unlabelled"].x).dtype == np.float32
    legend = [t.name for t in sc.figure.data if t.showlegend is not False]
    assert legend.count("unlabelled") == 1 and "unlabelled (with text)" not in legend


def test_a_small_scatter_still_names_its_unlabelled_points_in_the_legend():
    """Every unlabelled text fits the hover sample: the text-less trace is empty, so the sample's own
    trace carries the legend entry (the yellow points were once missing from the legend there)."""
    xy = np.random.default_rng(1).standard_normal((200, 2)).astype(np.float32)
    labels = np.zeros(200, np.int8)
    labels[:5], labels[5:7] = 1, -1
    sc = plots.scatter(xy, labels, np.array([f"t{i}" for i in range(200)], dtype=object), hover_sample=5000)
    shown = [t.name for t in sc.figure.data if t.showlegend is not False and len(t.x)]
    assert sorted(shown) == ["excluded", "included", "unlabelled (with text)"] and sc.hover_rows == 200


def test_projection_separates_included_from_excluded(so_corpus):
    x = np.asarray(so_corpus.embeddings)
    labels = so_corpus.frame["label"].to_numpy()
    members, others = np.flatnonzero(labels == labels[0]), np.flatnonzero(labels != labels[0])
    inc, exc = members[:8], others[:40]
    w = lda_directions(x, inc, exc, n_unlabelled=100)
    xy = project(x, w)
    assert xy.shape == (len(x), 2) and xy.dtype == np.float32
    ci, ce = xy[inc].mean(0), xy[exc].mean(0)

    def near_included(rows):
        return np.linalg.norm(xy[rows] - ci, axis=1) < np.linalg.norm(xy[rows] - ce, axis=1)

    # the fitted classes are separated in the plane ...
    assert near_included(inc).mean() == 1.0 and (~near_included(exc)).mean() >= 0.95
    # ... and unseen texts of the topic land on the included side far more often than others
    assert near_included(members[8:]).mean() >= near_included(others[40:]).mean() + 0.4
    with pytest.raises(ValueError, match="at least 1 included text"):
        lda_directions(x, np.zeros(0, np.int64), exc)


def test_projection_with_included_texts_only(so_corpus):
    """Keyword hits come in included: before anything is excluded the scatter sets the included texts
    apart from the rest of the corpus, to the right, and its second axis still spreads the texts."""
    x = np.asarray(so_corpus.embeddings)
    labels = so_corpus.frame["label"].to_numpy()
    members, others = np.flatnonzero(labels == labels[0]), np.flatnonzero(labels != labels[0])
    inc = members[:8]
    w = lda_directions(x, inc, np.zeros(0, np.int64), n_unlabelled=500)
    xy = project(x, w)
    assert np.isfinite(xy).all()
    assert xy[inc, 0].mean() > np.median(xy[:, 0])  # included to the right
    # unseen texts of the topic lie to the right of the others on the first axis
    assert np.median(xy[members[8:], 0]) > np.quantile(xy[others, 0], 0.75)
    # the second axis is a direction of its own (orthogonal to the first) along which texts vary
    assert abs(float(w[:, 0] @ w[:, 1])) < 1e-3
    assert xy[:, 1].std() > 0.5 * xy[:, 0].std()



def _class_separation(xy: np.ndarray, labels: np.ndarray) -> float:
    """Between-class over within-class spread of the labelled classes in the plane (Fisher's criterion)."""
    centre = xy.mean(0)
    between = sum((labels == c).sum() * np.sum((xy[labels == c].mean(0) - centre) ** 2) for c in np.unique(labels))
    within = sum(np.sum((xy[labels == c] - xy[labels == c].mean(0)) ** 2) for c in np.unique(labels))
    return float(between / within)


def test_corpus_map_shows_the_classes_apart_before_any_group(so_corpus):
    """The Scatter page's map before any group: axes fitted on topics K-Means finds, without a label. The
    StackOverflow titles' 20 true classes lie further apart on it than on the texts' two largest spreads (what a
    map without labels would otherwise draw); the same map on every fit; too few texts named."""
    from bench.corpus_map import pca_directions

    x = np.asarray(so_corpus.embeddings)
    labels = so_corpus.frame["label"].to_numpy()
    w = topic_directions(x)
    assert w.shape == (x.shape[1], 2) and w.dtype == np.float32 and np.allclose(np.linalg.norm(w, axis=0), 1)
    on_map = _class_separation(project(x, w), labels)
    on_spreads = _class_separation(project(x, pca_directions(x)), labels)
    assert on_map > 1.2 * on_spreads, (on_map, on_spreads)
    assert np.array_equal(topic_directions(x), w)  # no flipped or rotated map on a second page run
    with pytest.raises(ValueError, match="at least 6 texts"):
        topic_directions(x[:5])


def test_the_map_names_each_topic_by_words_of_its_own_texts(so_corpus):
    """Each topic of the map is named by key lemmas of its texts: a topic's first word is in a larger share of
    its own texts than of the others'."""
    found = topic_map(np.asarray(so_corpus.embeddings))
    texts = so_corpus.frame["text"]
    names = topic_names(found, texts)
    assert len(names) == len(found.centres) and found.centres.shape == (len(names), 2)
    lower = texts.take(found.rows).str.lower().to_numpy()
    specific = 0
    for topic, name in enumerate(names):
        first = name.split(" · ")[0]
        mine = found.labels == topic
        if not first or mine.sum() < 10:
            continue
        has = np.array([first in t for t in lower])
        specific += has[mine].mean() > has[~mine].mean()
    assert specific >= 0.8 * sum((found.labels == t).sum() >= 10 and bool(n) for t, n in enumerate(names))


def test_names_and_key_lemmas_take_the_language_the_import_detected(so_corpus, monkeypatch):
    """The import records the corpus's languages; the map's names and a clustering's key lemmas read it there
    instead of detecting it again (three languages' dictionaries loaded: ~2.5 s of a first Scatter map), and
    name the same topics as when they detect it."""
    import dataclasses

    from core import languages
    from core.cluster import jobs, store

    textless = dataclasses.replace(so_corpus, manifest={**so_corpus.manifest, "languages": {}})
    assert languages.of_corpus(so_corpus) == "en" and languages.of_corpus(textless) == "auto"
    found = topic_map(np.asarray(so_corpus.embeddings))
    detected = topic_names(found, so_corpus.frame["text"])

    def no_detection(*a, **k):
        raise AssertionError("the language was detected again")

    monkeypatch.setattr(languages, "detect", no_detection)
    assert topic_names(found, so_corpus.frame["text"], lang=languages.of_corpus(so_corpus)) == detected
    labels = found.labels if len(found.labels) == so_corpus.n else np.arange(so_corpus.n) % 5
    monkeypatch.setattr(store, "labels_for", lambda corpus, stem: labels)
    saved = {}
    monkeypatch.setattr(store, "save_terms", lambda name, stem, table: saved.setdefault(stem, table))
    jobs.terms(so_corpus, "kmeans-k5")
    assert len(saved["kmeans-k5"]) == len(set(labels.tolist()))
    unrecorded = dataclasses.replace(so_corpus, manifest={**so_corpus.manifest, "languages": {}})
    with pytest.raises(AssertionError, match="detected again"):  # an import that did not record it: detected
        jobs.terms(unrecorded, "kmeans-k5")


def test_map_names_are_escaped_and_never_cover_one_another():
    fig = plots.go.Figure()
    places = np.array([[0.0, 0.0], [0.01, 0.0], [0.9, 0.9], [0.5, 0.5]])
    names = ["<img src=x onerror=alert(1)>", "covered", "far away", ""]
    written = plots.name_places(fig, places, names, (0.0, 1.0, 0.0, 1.0))
    assert written == [0, 2]  # the second would cover the first; an empty name is not written
    texts = [a.text for a in fig.layout.annotations]
    assert texts == ["&lt;img src=x onerror=alert(1)&gt;", "far away"]
    assert plots.name_places(plots.go.Figure(), places, names, (0.0, 1.0, 0.0, 1.0), order=[1, 0, 2]) == [1, 2]


def test_bin_table_counts_each_part_against_the_whole_corpus_per_bin():
    """The Timeline's download: per bin of the corpus and part, the part's texts, all texts and the share; a bin
    where a part has no text is 0, a bin of the corpus without any text is left out, undated texts are not counted;
    a group named like a spreadsheet formula is written as text."""
    from core.export import neutralise_formulas

    whole_dates = pd.Series(pd.to_datetime(["2021-03-01 10:00", "2021-03-01 23:59", "2021-03-02 08:00",
                                            "2021-03-04 12:00", None]))
    parts = {"vaccines": plots.bin_counts(whole_dates.iloc[[0, 3, 4]], "day"),
             "=HYPERLINK(\"x\")": plots.bin_counts(whole_dates.iloc[[1, 2]], "day")}
    table = neutralise_formulas(plots.bin_table(parts, plots.bin_counts(whole_dates, "day")))
    first = table[table["texts_of"] == "vaccines"]
    assert first["bin_start"].dt.strftime("%Y-%m-%d").tolist() == ["2021-03-01", "2021-03-02", "2021-03-04"]
    assert first["texts"].tolist() == [1, 0, 1] and first["all_texts"].tolist() == [2, 1, 1]
    assert first["share_percent"].tolist() == [50.0, 0.0, 100.0]
    assert table["texts_of"].tolist()[3:] == ["'=HYPERLINK(\"x\")"] * 3
    assert table["texts"].tolist()[3:] == [1, 1, 0]

def test_size_histogram_counts():
    fig = plots.size_histogram(np.array([1, 1, 3, 12, 40, 40, 150]))
    clusters, texts = fig.data
    assert list(clusters.y[:6]) == [2, 1, 0, 1, 2, 1] and sum(clusters.y) == 7
    assert sum(texts.y) == 247
    assert list(clusters.x[:3]) == ["1", "2-4", "5-9"] and clusters.x[-1] == "3000+", "a one-size bin reads '1'"
    # the texts' axis counts in round ticks of its own, not ticks synced to the clusters' grid (4.77k, 9.55k)
    assert fig.layout.yaxis2.tickmode == "auto" and fig.layout.yaxis2.showgrid is False


def test_each_author_keeps_one_distinct_colour_across_charts(tweets):
    colours = plots.author_colours(tweets["author"])
    top = tweets["author"].value_counts().index[:20]
    assert len(top) >= 5 and len({colours[a] for a in top}) == len(top), "the most prolific authors are told apart"
    # two charts of different subsets: an author has the same colour in both
    a = plots.timeline(tweets.iloc[:200], colours=colours).figure
    b = plots.timeline(tweets.iloc[200:400], colours=colours).figure
    in_a = {t.name: t.marker.color for t in a.data}
    in_b = {t.name: t.marker.color for t in b.data}
    shared = (set(in_a) & set(in_b)) - {"other"}
    assert shared and all(in_a[n] == in_b[n] == colours[n] for n in shared)
    assert len(set(in_a.values())) == len(in_a), "no two authors share a colour within a chart"


def test_author_names_in_legends_are_escaped():
    frame = pd.DataFrame({"date": pd.to_datetime(["2021-01-01", "2021-01-02"]), "text": ["x", "y"],
                          "author": ['<a href="https://example.com/phish">x</a>', "ok"]})
    fig = plots.timeline(frame).figure
    names = [t.name for t in fig.data]
    assert '&lt;a href=&quot;https://example.com/phish&quot;&gt;x&lt;/a&gt;' in names
    assert not any("<a" in n for n in names)


def test_a_lasso_over_the_density_image_selects_exactly_the_rows_inside_it():
    """Selections at ten million rows go by cells: cells wholly inside at once, rows of the cells the
    outline crosses one by one. The same rows as testing every point."""
    from matplotlib.path import Path

    from core.plots import _raster, points_in_polygon, rows_in_shape

    rng = np.random.default_rng(4)
    xy = np.vstack([rng.normal(0, 1, (20_000, 2)), rng.normal(3, 0.3, (5_000, 2))]).astype(np.float32)
    r = _raster(xy, grid=(60, 40))
    star = np.linspace(0, 2 * np.pi, 11)[:-1]
    radius = np.where(np.arange(10) % 2 == 0, 2.5, 0.8)  # concave: a five-pointed star
    shapes = [(0.2 + radius * np.cos(star), -0.1 + radius * np.sin(star)),
              ([-1, 3.2, 3.2, -1], [-0.5, -0.5, 3.1, 3.1]),  # a box
              ([2.9, 3.05, 3.0], [2.9, 2.95, 3.1]),  # a sliver inside one or two cells
              ([-1e9, 1e9, 0.5], [-1e9, -1e9, 1e9])]  # far past the image on every side
    for vx, vy in shapes:
        expected = np.flatnonzero(points_in_polygon(xy[:, 0].astype(float), xy[:, 1].astype(float), vx, vy))
        reference = np.flatnonzero(Path(np.c_[vx, vy]).contains_points(xy.astype(float)))
        assert len(np.setxor1d(expected, reference)) <= 2  # matplotlib's own test (edge points may differ)
        got = rows_in_shape(r, vx, vy)
        assert got.tolist() == expected.tolist() and len(expected) > 0


def test_density_image_counts_the_unlabelled_texts_of_each_cell():
    """Above ``raster_from`` rows the unlabelled texts are an image: each cell's count (log-scaled) is
    the number of unlabelled texts whose point lies in it; labelled texts are points, not counted."""
    rng = np.random.default_rng(2)
    xy = np.vstack([rng.normal(0, 1, (3000, 2)), rng.normal(4, 0.5, (1000, 2))]).astype(np.float32)
    labels = np.zeros(len(xy), np.int8)
    labels[rng.choice(len(xy), 60, replace=False)] = 1
    labels[np.flatnonzero(labels == 0)[:40]] = -1
    sc = plots.scatter(xy, labels, None, raster_from=1000)
    image = next(t for t in sc.figure.data if t.type == "heatmap")
    z = np.nan_to_num(np.expm1(np.asarray(image.z, np.float64)))  # (y cells, x cells)
    x_edges, y_edges = sc.raster.x_edges, sc.raster.y_edges
    unl = xy[labels == 0].astype(np.float64)
    expected, _, _ = np.histogram2d(unl[:, 1], unl[:, 0], bins=[y_edges, x_edges])
    assert np.abs(z - expected).max() < 1e-3 and round(z.sum()) == (labels == 0).sum()
    assert sc.raster.cell.shape == (len(xy),)


def test_scatter_hover_reads_texts_by_position_from_a_series():
    """The page hands the corpus's text column (a Series) without turning a million texts into an
    array: hover texts must still be the rows' own, whatever the Series's index."""
    xy = np.random.default_rng(1).standard_normal((500, 2)).astype(np.float32)
    labels = np.zeros(500, np.int8)
    labels[[7, 400]], labels[[3]] = 1, -1
    texts = pd.Series([f"text <{i}>" for i in range(500)], index=np.arange(500) + 10_000, dtype="string")
    sc = plots.scatter(xy, labels, texts, hover_sample=20)
    by_name = {t.name: t for t in sc.figure.data}
    assert list(by_name["included"].hovertext) == ["text &lt;7&gt;", "text &lt;400&gt;"]
    assert list(by_name["excluded"].hovertext) == ["text &lt;3&gt;"]
    sample = sc.trace_rows[[t.name for t in sc.figure.data].index("unlabelled (with text)")]
    assert list(by_name["unlabelled (with text)"].hovertext) == [f"text &lt;{r}&gt;" for r in sample]


def test_projection_of_an_fp16_store_matches_the_float32_product(so_corpus, monkeypatch):
    """A large corpus's fp16 rows are widened a few thousand at a time (blocks of a memory-mapped
    store, never written): the coordinates of the float32 product, every row once."""
    from core import vectorstore

    monkeypatch.setattr(vectorstore, "STEP", 64)  # many steps, the last one short
    x16 = np.asarray(so_corpus.embeddings, np.float16)[:1000]
    x16.setflags(write=False)  # as the memory-mapped store is
    w = lda_directions(np.asarray(so_corpus.embeddings), np.arange(8), np.arange(100, 140), n_unlabelled=100)
    exact = x16.astype(np.float32) @ w
    xy = project(x16, w)
    assert xy.dtype == np.float32 and xy.shape == exact.shape
    assert np.abs(xy - exact).max() <= 1e-5 * np.abs(exact).max()


@pytest.mark.filterwarnings("ignore:Converting to PeriodArray")
@pytest.mark.parametrize("unit", ["ms", "ns"])
def test_timeline_bins_by_integer_arithmetic_are_the_calendar_bins(unit):
    """Days, Monday-started weeks and months counted on the dates' integers (ten million dates) are
    the bins pandas' calendar gives, before 1970 too, and time-zone aware dates keep pandas' way."""
    rng = np.random.default_rng(3)
    dates = pd.Series(pd.Timestamp("1969-11-20") + pd.to_timedelta(rng.integers(0, 900 * 86_400, 5_000), unit="s"))
    for d in (dates.astype(f"datetime64[{unit}]"), dates.dt.tz_localize("UTC").dt.tz_convert("Europe/Prague")):
        for name in ("day", "week", "month"):
            codes, starts = plots.bin_codes(d, name)
            assert starts.is_monotonic_increasing and starts.is_unique
            if name == "month" and d.dt.tz is not None:
                continue  # pandas' own months of aware dates (it warns that it drops the zone)
            expected = plots.bin_start(d, name)
            assert (pd.Series(starts[codes]).reset_index(drop=True) == expected.reset_index(drop=True)).all(), name
    weeks = plots.bin_codes(dates, "week")[1]
    assert (weeks.weekday == 0).all() and (weeks.hour == 0).all()
    far = pd.Series(pd.to_datetime(["1700-01-01", "2021-05-03", "2021-05-04"]))  # centuries apart: no huge table
    codes, starts = plots.bin_codes(far, "day")
    assert codes.tolist() == [0, 1, 2] and starts[0] == pd.Timestamp("1700-01-01")


def test_author_codes_are_the_same_from_dictionary_codes_as_from_strings(tweets):
    """A loaded corpus keeps its authors dictionary-encoded: ranks, names and the timeline are those of
    the strings; a part of the corpus names and ranks only the authors it has."""
    authors = tweets["author"].astype("string")
    authors.iloc[[5, 9]] = ""  # no author: "unknown", one author however it is missing
    authors.iloc[[11]] = pd.NA
    coded = authors.astype("category")
    for part in (slice(None), slice(0, 120)):
        c1, n1 = plots.author_codes(authors.iloc[part])
        c2, n2 = plots.author_codes(coded.iloc[part])
        assert c1.tolist() == c2.tolist() and n1.tolist() == n2.tolist()
        assert len(n2) == authors.iloc[part].replace("", pd.NA).fillna("unknown").nunique()
        counts = pd.Series(n2[c2]).value_counts()
        assert counts.is_monotonic_decreasing and counts[n2[0]] == counts.max()
    assert "unknown" in n1 and (n1[c1[[5, 9, 11]]] == "unknown").all()
    for bin_name in ("day", "week", "month"):
        a = plots.timeline(tweets.assign(author=authors), bin_name, per_text_limit=50).figure
        b = plots.timeline(tweets.assign(author=coded), bin_name, per_text_limit=50).figure
        assert a.to_json() == b.to_json()
