"""The scatter's fixed hover sample (core/hover.py): drawn once, kept in a small file, its texts never read
again from the corpus's column; the figure carries those texts for the sample's unlabelled rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import hover, plots


class CountingTexts:
    """A text column that counts the texts read from it (the mapped column of a large corpus)."""

    def __init__(self, texts):
        self.texts, self.read = pd.Series(texts), 0

    def __len__(self):
        return len(self.texts)

    def take(self, rows):
        self.read += len(rows)
        return self.texts.take(rows)


def test_sample_is_drawn_once_saved_and_read_back_without_the_texts(tmp_path):
    texts = CountingTexts([f"text {i}" for i in range(20_000)])
    rows, got = hover.sample(tmp_path, texts, size=500)
    assert texts.read == 500 and len(set(rows.tolist())) == 500 and np.all(np.diff(rows) > 0)
    assert got == [f"text {r}" for r in rows]
    assert (tmp_path / hover.FILE).stat().st_size < 100_000
    again_rows, again = hover.sample(tmp_path, texts, size=500)
    assert texts.read == 500, "the second scatter reads the small file, not the corpus's texts"
    assert again_rows.tolist() == rows.tolist() and again == got


def test_a_sample_of_another_corpus_or_a_broken_file_is_drawn_again(tmp_path, caplog):
    hover.sample(tmp_path, [f"a{i}" for i in range(1000)], size=100)
    other = CountingTexts([f"b{i}" for i in range(3000)])  # a corpus of other rows in the same folder
    rows, got = hover.sample(tmp_path, other, size=100)
    assert other.read == 100 and got == [f"b{r}" for r in rows]
    (tmp_path / hover.FILE).write_bytes(b"not parquet")
    rows, got = hover.sample(tmp_path, other, size=100)
    assert other.read == 200 and got == [f"b{r}" for r in rows]
    assert "drawing" in caplog.text
    small = hover.sample(None, ["x", "y"], size=100)  # fewer texts than the sample: every one, nothing saved
    assert small[0].tolist() == [0, 1] and small[1] == ["x", "y"]


@pytest.mark.parametrize("raster_from", [10, 1_000_000])
def test_scatter_carries_the_fixed_samples_texts_escaped_and_leaves_labelled_rows_to_their_traces(raster_from):
    n = 400
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(n, 2)).astype(np.float32)
    texts = CountingTexts([f"row {i} <img src=x onerror=alert(1)>" for i in range(n)])
    rows = np.array([3, 10, 50, 200, 399])
    sample = (rows, [f"sampled {r} <script>x</script>" for r in rows])
    labels = np.zeros(n, np.int8)
    labels[10], labels[200] = 1, -1
    sc = plots.scatter(xy, labels, texts, hover=sample, raster_from=raster_from)
    traces = {t.name: t for t in sc.figure.data}
    with_text = traces["unlabelled (with text)"]
    assert list(with_text.hovertext) == [plots.safe_hover(f"sampled {r} <script>x</script>", max_chars=300)
                                         for r in (3, 50, 399)]
    assert all("<script>" not in h for h in with_text.hovertext)
    assert texts.read == 2, "only the two labelled rows' texts are read from the column"
    assert "row 10" in traces["included"].hovertext[0] and "row 200" in traces["excluded"].hovertext[0]
    assert sc.hover_rows == 5
    wrapped = plots._wrapped.cache_info().misses
    again = plots.scatter(xy, labels, texts, hover=sample, raster_from=raster_from)  # the group's next step
    assert plots._wrapped.cache_info().misses == wrapped, "the same texts were wrapped again (0.38 s at 300k)"
    assert [list(t.hovertext or []) for t in again.figure.data] == [list(t.hovertext or []) for t in sc.figure.data]
