"""The scatter's sketch (core/sketch.py, precompute/sketch.py): the rows' principal coordinates, refused with
its reason where it does not fit the corpus, a topic set apart on it as on the full vectors, and the Scatter
page drawing from it (or, where it is broken, from the full vectors with a warning)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import clustered_unit_vectors


def test_the_sketch_holds_each_rows_principal_coordinates_from_the_fp16_store_or_a_matrix(tmp_path):
    from sklearn.decomposition import PCA

    from core import sketch, vectorstore

    x = clustered_unit_vectors(3000, 48, clusters=9)[0]
    vectorstore.write(tmp_path / vectorstore.FILE, [x[:1700], x[1700:]], len(x), x.shape[1])
    store = vectorstore.codes(tmp_path / vectorstore.FILE)
    reference = PCA(8).fit(np.asarray(store, np.float32))
    want = reference.transform(np.asarray(store, np.float32))
    for i, (rows, folder) in enumerate([(store, tmp_path / "a"), (x, tmp_path / "b")]):
        seen = []
        meta = sketch.build(rows, folder, dim=8, sample=len(x), progress=lambda d, n: seen.append((d, n)))
        got, saved = sketch.load(folder, len(x))
        assert got.dtype == np.float16 and got.shape == (3000, 8) and saved == json.loads((folder / sketch.META).read_text())
        for j in range(8):  # each column is a principal component's coordinate (its sign is free)
            corr = np.corrcoef(got[:, j].astype(np.float64), want[:, j])[0, 1]
            assert abs(corr) > 0.999, (i, j, corr)
        assert meta["explained_variance"] == pytest.approx(reference.explained_variance_ratio_.sum(), abs=0.01)
        assert seen[-1] == (3000, 3000) and not list(folder.glob("*.tmp"))
    with pytest.raises(ValueError, match="between 1 and 47"):
        sketch.build(x, tmp_path / "c", dim=48)


def test_a_sketch_that_does_not_fit_its_corpus_is_refused_with_the_reason(tmp_path):
    from core import sketch

    x = clustered_unit_vectors(500, 24)[0]
    assert sketch.load(tmp_path, 500) is None  # none made: nothing to say
    sketch.build(x, tmp_path, dim=4)
    with pytest.raises(sketch.SketchError, match=r"500 rows x 4 for a corpus of 501 texts"):
        sketch.load(tmp_path, 501)
    raw = (tmp_path / sketch.FILE).read_bytes()
    (tmp_path / sketch.FILE).write_bytes(raw[: len(raw) // 2])  # cut short (a disk full, a copy stopped)
    with pytest.raises(sketch.SketchError, match="unreadable"):
        sketch.load(tmp_path, 500)
    (tmp_path / sketch.FILE).write_bytes(b"")  # left empty: numpy's EOFError stopped the Scatter page
    with pytest.raises(sketch.SketchError, match=r"unreadable \(No data left in file\)"):
        sketch.load(tmp_path, 500)
    (tmp_path / sketch.FILE).unlink()
    with pytest.raises(sketch.SketchError, match="sketch.npy: missing"):
        sketch.load(tmp_path, 500)


def test_a_topic_stands_apart_on_the_sketch_as_on_the_full_vectors(so_corpus):
    """300 real StackOverflow titles (20 tags): for each tag a group of 8 of its titles included and 5 of
    others excluded; the first axis of the discriminant fitted on the 32-column sketch separates the tag's
    other titles from the rest at least as well, on average, as the one fitted on the full vectors."""
    from bench.sketch import separation
    from core.sketch import directions

    x = np.asarray(so_corpus.embeddings, np.float32)
    labels = so_corpus.frame["label"].to_numpy()
    mean, basis, share = directions(x, 32, sample=len(x))
    sketched = (x - mean) @ basis
    rng = np.random.default_rng(0)
    full, small = [], []
    for c in np.unique(labels):
        inc = rng.choice(np.flatnonzero(labels == c), 8, replace=False)
        exc = rng.choice(np.flatnonzero(labels != c), 5, replace=False)
        full.append(separation(x, labels, c, inc, exc)[0])
        small.append(separation(sketched, labels, c, inc, exc)[0])
    assert np.mean(full) > 0.8  # the protocol finds the tags at all
    assert np.mean(small) >= np.mean(full) - 0.02, (np.mean(small), np.mean(full))


def test_the_scatter_draws_from_the_sketch_made_by_the_job_and_warns_when_it_is_broken(tweets, monkeypatch):
    import core.projection as projection
    from core import sketch, vectorstore
    from core.corpus import load_corpus
    from precompute.sketch import main
    from tests.test_pages import app, with_group

    c = load_corpus("tweets", root=tweets)
    assert c.manifest["sketch"]["dim"] == sketch.DIM  # made at import
    (c.data_folder / sketch.FILE).unlink()
    (c.data_folder / sketch.META).unlink()  # as a corpus imported before there were sketches
    from core import hover

    (c.data_folder / hover.FILE).unlink()  # ... and hover samples: the job draws it too
    assert main(["--corpus", "tweets"]) == 0
    assert hover.load(c.data_folder, c.n) is not None
    made = (c.data_folder / sketch.FILE).stat().st_mtime_ns
    assert main(["--corpus", "tweets"]) == 0  # a fitting sketch is kept
    assert (c.data_folder / sketch.FILE).stat().st_mtime_ns == made
    previews = []
    monkeypatch.setattr(projection, "preview_scatter", lambda *a, **k: previews.append(1))
    monkeypatch.setattr(vectorstore, "resident_share", lambda x: 0.1)  # as a cold 10M store
    monkeypatch.setenv("SEMANNO_SCATTER_PREVIEW_FROM", "1000")  # as if large: the sketch needs no preview
    at = with_group(app("pages/3_Scatter.py"), range(0, 40), range(40, 60)).run()
    assert not at.exception and previews == []
    assert any("Drawn from the corpus's sketch" in c.value for c in at.caption)
    assert any("All 2,000 texts" in c.value for c in at.caption)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any("included" in str(t.get("name", "")).lower() for t in spec["data"])
    # made again with other columns while the server runs: the same group state is drawn from the new one
    assert main(["--corpus", "tweets", "--force", "--dim", "16"]) == 0
    at = with_group(app("pages/3_Scatter.py"), range(0, 40), range(40, 60)).run()
    assert not at.exception
    assert any("16 main directions" in c.value for c in at.caption)
    redrawn = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert redrawn["data"] != spec["data"]  # projected anew, not the figure cached for the old sketch
    broken = c.data_folder / "broken.tmp"  # replaced as a copy would replace it (the mapped one stays valid)
    broken.write_bytes(b"not a matrix")
    broken.replace(c.data_folder / sketch.FILE)
    monkeypatch.delenv("SEMANNO_SCATTER_PREVIEW_FROM")
    at = with_group(app("pages/3_Scatter.py"), range(0, 41), range(41, 60)).run()
    assert not at.exception
    assert any("sketch for the scatter cannot be used" in w.value and "precompute.sketch" in w.value
               for w in at.warning)
    assert not any("Drawn from the corpus's sketch" in c.value for c in at.caption)
    assert any("All 2,000 texts" in c.value for c in at.caption)  # the full vectors, as before


def test_vectors_of_few_dimensions_get_no_sketch_and_the_import_says_why(tmp_path):
    import pandas as pd

    from core import sketch
    from core.corpus import ImportSpec, import_corpus

    frame = pd.DataFrame({"id": [f"t{i}" for i in range(100)], "text": [f"text {i} about {i % 7}" for i in range(100)]})
    frame.to_csv(tmp_path / "in.csv", index=False)
    np.save(tmp_path / "v.npy", clustered_unit_vectors(100, 24)[0])

    def no_model(*_):
        raise AssertionError("brought vectors: no model is loaded")

    c = import_corpus(ImportSpec(input=tmp_path / "in.csv", name="small", vectors=tmp_path / "v.npy"),
                      root=tmp_path / "data", model_loader=no_model)
    assert "24 dimensions" in c.manifest["sketch"]["skipped"]
    assert sketch.load(c.data_folder, c.n) is None  # the scatter projects the vectors themselves


def test_the_sketch_is_written_without_loading_torch(tmp_path):
    """An import that embeds elsewhere (a Ray job: its driver never loads a model) writes the sketch with
    numpy alone; importing torch for it cost that driver 1.4 s of the 2 cores (bench/RESULTS.md, issue 30)."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, pathlib, numpy as np\n"
            "from core import sketch\n"
            "x = np.random.default_rng(0).standard_normal((600, 64)).astype(np.float32)\n"
            "meta = sketch.build(x, pathlib.Path(sys.argv[1]), dim=8)\n"
            "print(meta['rows'], 'torch' in sys.modules)\n")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["600", "False"], out.stdout + out.stderr
