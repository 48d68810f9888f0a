"""The demo corpus the home page offers brings its texts' vectors (demo/make_demo.py): a new user's first import
no longer embeds 2,400 texts on their machine (about half a minute on two cores) before they can look at anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from core import paths
from core.safeload import load_npy
from tests.conftest import ROOT
from ui.text import unescape


def test_the_demos_vectors_are_the_packaged_models_for_its_texts_row_by_row(tmp_path, model):
    """The shipped vectors follow the shipped CSV's rows and are what an import with the packaged model computes for
    those texts (a CSV made again without its vectors, or rows out of order, fails here)."""
    from core.corpus import ImportSpec, import_corpus, load_corpus

    demo = pd.read_csv(paths.DEMO_FILE, dtype=str, keep_default_na=False)
    shipped = load_npy(paths.DEMO_VECTORS)
    assert shipped.shape == (len(demo), 384) and shipped.dtype == np.float16
    rows = np.linspace(0, len(demo) - 1, 60).astype(int)  # spread over the file: every event, first and last row
    demo.iloc[rows].to_csv(tmp_path / "sample.csv", index=False)
    import_corpus(ImportSpec(input=tmp_path / "sample.csv", name="sample"), root=tmp_path / "data",
                  model_loader=lambda name, device: model)
    embedded = load_corpus("sample", tmp_path / "data")
    at = {i: n for n, i in enumerate(demo["id"])}
    theirs = shipped[[at[i] for i in embedded.frame["id"]]].astype(np.float32)
    cos = (theirs * np.asarray(embedded.embeddings, dtype=np.float32)).sum(1) / np.linalg.norm(theirs, axis=1)
    assert cos.min() >= 0.999, f"row {rows[int(cos.argmin())] + 2} of {paths.DEMO_FILE.name}: cosine {cos.min():.4f}"


def test_the_home_pages_demo_import_brings_the_shipped_vectors_and_names_the_packaged_model(empty_root, monkeypatch):
    """*Import the demo corpus* imports the texts with their shipped vectors, named as the packaged model's (the one
    that would have embedded them), so every search and the model-coverage check read it as before; no model is
    loaded for it."""
    from core.corpus import load_corpus, load_manifest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    assert any("their vectors by the packaged model included (a few seconds)" in unescape(m.value) for m in at.markdown)
    loads = []
    monkeypatch.setattr("core.corpus.load_model", lambda name, device="auto": loads.append(name))
    at.button(key="demo_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Imported 2,400 texts into corpus" in unescape(s.value) for s in at.success)
    assert loads == [], "the demo import loaded a model"
    manifest = load_manifest(paths.DEMO_NAME, empty_root)
    assert [m["name"] for m in manifest["models"]] == ["default"] and manifest["dim"] == 384
    corpus = load_corpus(paths.DEMO_NAME, empty_root)
    shipped = load_npy(paths.DEMO_VECTORS).astype(np.float32)
    at_row = {i: n for n, i in enumerate(pd.read_csv(paths.DEMO_FILE, dtype=str, keep_default_na=False)["id"])}
    mine = np.asarray(corpus.embeddings, dtype=np.float32)
    theirs = shipped[[at_row[i] for i in corpus.frame["id"]]]
    cos = (mine * theirs).sum(1) / np.linalg.norm(theirs, axis=1)
    assert cos.min() >= 0.9999
    assert at.selectbox(key="corpus_picker").value == paths.DEMO_NAME
