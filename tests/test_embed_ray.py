"""The import's embedding as a Ray Data job (issue 30), on a local Ray: the in-process vectors, resumable
after a kill, and clear messages when Ray is missing or its cluster unreachable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from core.corpus import ImportSpec, import_corpus, load_corpus
from core.ingest import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -r requirements-ray.txt")
    yield ray
    ray.shutdown()


@pytest.fixture
def so_input(so_corpus, tmp_path):
    src = tmp_path / "so.csv"
    so_corpus.frame[["id", "text"]].to_csv(src, index=False)
    return src, np.asarray(so_corpus.embeddings)


def no_model(name, device):
    raise AssertionError("the Ray path loads the model in its actors, not in the importing process")


def cosines(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_ray_path_gives_the_in_process_vectors(ray_local, so_input, tmp_path):
    src, expected = so_input
    c = import_corpus(ImportSpec(input=src, name="r", engine="ray", chunk_size=64, ray_actors=1),
                      root=tmp_path / "data", model_loader=no_model)
    assert c.n == len(expected) and c.manifest["models"][0]["engine"] == "ray"
    assert cosines(np.asarray(c.embeddings), expected).min() >= 0.9999
    # the local Ray the import started is stopped once the vectors are in; one the caller started stays
    assert not ray_local.is_initialized()
    ray_local.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    again = import_corpus(ImportSpec(input=src, name="r2", engine="ray", chunk_size=256, ray_actors=1),
                          root=tmp_path / "data", model_loader=no_model)
    assert ray_local.is_initialized()
    np.testing.assert_allclose(np.asarray(again.embeddings), np.asarray(c.embeddings), atol=1e-5)


def test_a_ray_import_embeds_its_quotes_set_on_ray_too(ray_local, so_corpus, tmp_path, monkeypatch):
    """An import with --engine ray that makes the set quotes embeds what the quotes quote on Ray as well, not in the
    importing process (whose model loader here fails), and gets the vectors the in-process path gives them; the
    command that makes the set again takes --engine ray too."""
    from core import embedsets, quoted
    from core.ingest import QUOTED
    from precompute import quotes as quotes_cli

    texts = so_corpus.frame["text"].tolist()
    frame = so_corpus.frame[["id", "text"]].copy()
    frame[QUOTED] = [f"@asker: {texts[100 + i]}" if i < 30 else "" for i in range(len(frame))]
    src = tmp_path / "quotes.csv"
    frame.to_csv(src, index=False)
    root = tmp_path / "data"
    ray_local.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # one Ray for both embeddings
    c = import_corpus(ImportSpec(input=src, name="q", engine="ray", chunk_size=128, ray_actors=1, quotes_set=True),
                      root=root, model_loader=no_model)
    made = {s.name: s for s in embedsets.listing(c)}[quoted.SET]
    assert made.manifest["quoted_tweets"] == 30 and made.manifest["embedded"] == 30
    keys, kept = np.load(made.path / quoted.KEYS), np.load(made.path / quoted.KEPT)
    at = np.searchsorted(keys, quoted.body_keys(texts[100:130]))
    assert cosines(kept[at], np.asarray(so_corpus.embeddings)[100:130]).min() >= 0.9999
    monkeypatch.setenv("SEMANNO_DATA", str(root))
    np.save(made.path / quoted.KEPT, -kept)  # as if the model changed: every quoted tweet embedded again
    assert quotes_cli.main(["--corpus", "q", "--engine", "ray", "--ray-actors", "1"]) == 0
    again = {s.name: s for s in embedsets.listing(load_corpus("q", root))}[quoted.SET]
    assert again.manifest["embedded"] == 30
    np.testing.assert_allclose(np.load(again.path / quoted.KEPT), kept, atol=1e-5)


def test_a_killed_ray_import_resumes_from_its_chunks(ray_local, so_input, tmp_path):
    src, expected = so_input
    root = tmp_path / "data"
    env = {**os.environ, "SEMANNO_DATA": str(root), "PYTHONPATH": ROOT, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "precompute.embed", str(src), "--name", "r", "--engine", "ray", "--chunk-size", "32",
           "--ray-actors", "1", "--batch-size", "8"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    work = root / ".work" / "r"
    deadline = time.time() + 240
    while time.time() < deadline and len(list(work.glob("model-*/chunk_*.npy"))) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the import and the Ray it started
    proc.wait()
    files = list(work.glob("model-*/chunk_*.npy"))
    first = {p.name: p.stat().st_mtime_ns for p in files}
    rows_done = sum(np.load(p).shape[0] for p in files)
    assert 2 <= len(first) < 10, "the kill came too late to test a resume"
    events = []
    c = import_corpus(ImportSpec(input=src, name="r", engine="ray", chunk_size=32, ray_actors=1, batch_size=8),
                      root=root, model_loader=no_model, progress=lambda d, t, i: events.append(i))
    assert cosines(np.asarray(c.embeddings), expected).min() >= 0.9999
    resumed = [e.get("resumed_from") for e in events if e.get("engine") == "ray"]
    assert resumed and resumed[0] == rows_done  # the killed run's chunks were not recomputed
    assert not work.exists()  # a finished import leaves no working files behind


def test_without_ray_the_import_says_how_to_install_it(so_input, tmp_path, monkeypatch):
    src, _ = so_input
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(InputError, match="requirements-ray.txt"):
        import_corpus(ImportSpec(input=src, name="r", engine="ray"), root=tmp_path / "data", model_loader=no_model)
    assert not (tmp_path / "data" / "r" / "manifest.json").exists()


def test_an_unreachable_cluster_is_named(ray_local, so_input, tmp_path):
    src, _ = so_input
    t = time.time()
    with pytest.raises(InputError, match=r"Ray cluster at '127\.0\.0\.1:9'"):
        import_corpus(ImportSpec(input=src, name="r", engine="ray", ray_address="127.0.0.1:9"),
                      root=tmp_path / "data", model_loader=no_model)
    assert time.time() - t < 120
