"""bench/gpu.py, the script a borrowed GPU box runs in its few minutes: here on the CPU, small, so that a
session that is lent a GPU finds it working (its figures are in bench/RESULTS.md)."""

from __future__ import annotations

import json
import tempfile

import numpy as np


def test_the_carried_half_precision_model_gives_the_packaged_models_vectors(tmp_path):
    from sentence_transformers import SentenceTransformer

    from bench import gpu
    from core.embed import load_model

    gpu.main(["pack", "--out", str(tmp_path / "carry")])
    carried = tmp_path / "carry" / "minilm" / "model.safetensors"
    assert carried.stat().st_size < 50 * 2**20  # half of the fp32 file: it fits beside the code in one call
    gpu.main(["restore", "--src", str(tmp_path / "carry" / "minilm"), "--dst", str(tmp_path / "minilm")])
    texts = ["flood warning for the river valley", "the match ended in a draw", "Povodně na Moravě"]
    a = load_model("default", "cpu").encode(texts, normalize_embeddings=True)
    b = SentenceTransformer(str(tmp_path / "minilm"), device="cpu").encode(texts, normalize_embeddings=True)
    assert (a * b).sum(1).min() >= 0.9999


def test_the_search_and_kmeans_bench_runs_every_method_and_finds_the_class(tmp_path, monkeypatch):
    from bench import gpu

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path))
    gpu.main(["search", "--sizes", "40000", "--k", "40", "--sample", "20000", "--repeat", "2"])
    lines = [json.loads(line) for f in tmp_path.glob("gpu-search-*/lines.jsonl") for line in f.read_text().splitlines()]
    by_op = {r["op"]: r for r in lines}
    assert not [r for r in lines if "error" in r], [r for r in lines if "error" in r]
    for op in ("cos", "lda", "nn1", "nn2", "suggest"):
        assert by_op[op]["top1_in_class"] and by_op[op]["median_ms"] > 0
    assert by_op["numpy_X@q_top10"]["median_ms"] > 0
    app, whole = by_op["kmeans_app"], by_op["kmeans_whole"]
    assert app["sampled"] and app["fitted_on"] == 20000 and app["clusters_used"] >= 0.9 * 40
    assert whole["k"] == 40 and whole["iterations"] >= 1
    assert np.isfinite(app["seconds"]) and np.isfinite(whole["seconds"])


def _texts_csv(path, n=60):
    import pandas as pd

    from tests.conftest import shared_file

    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), nrows=n, dtype=str, keep_default_na=False)
    frame[["text"]].to_csv(path, index=False)
    return frame["text"].tolist()


def test_a_model_packed_for_one_file_keeps_its_vectors_and_only_those(tmp_path):
    """`pack --texts`: MiniLM zeroed outside the tokens of one file, so that it fits a call beside that file."""
    from sentence_transformers import SentenceTransformer

    from bench import gpu
    from core.embed import load_model

    texts = _texts_csv(tmp_path / "t.csv")
    gpu.main(["pack", "--out", str(tmp_path / "carry"), "--texts", str(tmp_path / "t.csv"), "--n", "60"])
    gz = tmp_path / "carry" / "minilm" / "model.safetensors.gz"
    assert gz.exists() and not (tmp_path / "carry" / "minilm" / "model.safetensors").exists()
    assert gz.stat().st_size < 40 * 2**20
    gpu.main(["restore", "--src", str(tmp_path / "carry" / "minilm"), "--dst", str(tmp_path / "minilm")])
    other = ["Povodně zaplavily vesnice na Moravě", "quantum chromodynamics lattice gauge"]
    full = load_model("default", "cpu").encode(texts + other, normalize_embeddings=True)
    pruned = SentenceTransformer(str(tmp_path / "minilm"), device="cpu").encode(texts + other, normalize_embeddings=True)
    cos = (full * pruned).sum(1)
    assert cos[:len(texts)].min() >= 0.9999  # the file's own texts: unchanged
    assert cos[len(texts):].min() < 0.999  # words outside it lost their rows: the pruning is real


def test_e5_packed_for_one_file_and_measured_with_tokenising_threads(tmp_path, monkeypatch):
    """`pack-e5` then `embed --model e5=...`: e5's own path and its threads both measured, and its import loop."""
    from bench import gpu

    _texts_csv(tmp_path / "t.csv", n=80)
    gpu.main(["pack-e5", "--texts", str(tmp_path / "t.csv"), "--n", "80", "--out", str(tmp_path / "e5")])
    gpu.main(["gunzip", "--src", str(tmp_path / "e5" / "e5-small-q4.bin.gz"), "--dst", str(tmp_path / "e5.bin")])
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "res"))
    gpu.main(["embed", "--model", f"e5={tmp_path / 'e5.bin'}", "--texts", str(tmp_path / "t.csv"), "--n", "80",
              "--precision", "fp32", "--batch-size", "16", "--workers", "0", "2", "--repeat", "1",
              "--import-chunks", "32"])
    lines = [json.loads(line) for f in (tmp_path / "res").glob("gpu-embed-*/lines.jsonl")
             for line in f.read_text().splitlines()]
    assert not [r for r in lines if "error" in r], lines
    e5 = {r["pipeline_workers"]: r for r in lines if r["op"] == "embed_e5"}
    assert set(e5) == {0, 2} and all(r["texts_per_s"] > 0 for r in e5.values())
    assert e5[2]["mean_cos_to_fp32"] > 0.9999  # the threads give the same vectors as tokenising first
    assert [r["model"] for r in lines if r["op"] == "embed_import_path"] == ["e5"]


def test_the_app_drive_goes_through_every_page_and_reports_each_step(tmp_path, monkeypatch, capsys):
    """bench/gpu_app.py drives the real pages with AppTest (what a GPU box runs to check the app end to end):
    here on the CPU, 300 Czech tweets, so that a renamed widget or a page that breaks fails here first."""
    from bench import gpu_app
    from tests.conftest import shared_file

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "results"))
    (tmp_path / "system-tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "system-tmp"))  # where the drive's corpus goes
    for var in ("SEMANNO_DATA", "SEMANNO_IMPORT_ROOTS"):  # the drive sets them for its pages: put back after it
        monkeypatch.setenv(var, str(tmp_path))
    src = shared_file("czech_politicians_tweets_2021.csv")
    code = gpu_app.main(["--csv", str(src), "--rows", "300", "--model", "default", "--dac-steps", "3", "--k", "4"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    steps = {x["step"]: x for x in lines if "step" in x}
    assert code == 0 and lines[-1] == {"done": True, "failed_steps": []}, [s for s in steps.values() if s["errors"]]
    assert not list((tmp_path / "system-tmp").glob("gpu-app-*"))  # the drive's corpus removed after it
    assert "Imported 300 texts" in steps["import (home page)"]["said"]
    for method in ("cos", "lda", "nn1", "nn2", "suggest"):
        assert "10 new texts" in steps[f"search {method}"]["said"], steps[f"search {method}"]
    assert steps["open timeline"]["said"].endswith("1 chart(s)") and steps["open LDA scatter"]["said"].endswith("1 chart(s)")
    assert "K-Means into 4 clusters" in steps["Topics kmeans"]["said"] and "DEC into 4 clusters" in steps["Topics dec"]["said"]
    assert "k chosen by the model" in steps["Topics dac (K-Means, k chosen by the DAC model)"]["said"]
