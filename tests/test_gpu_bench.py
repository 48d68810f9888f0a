"""bench/gpu.py, the script a borrowed GPU box runs in its few minutes: here on the CPU, small, so that a
session that is lent a GPU finds it working (its figures are in bench/RESULTS.md)."""

from __future__ import annotations

import json

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
    gpu.main(["search", "--sizes", "60000", "--k", "40", "--sample", "30000", "--repeat", "2"])
    lines = [json.loads(line) for f in tmp_path.glob("gpu-search-*/lines.jsonl") for line in f.read_text().splitlines()]
    by_op = {r["op"]: r for r in lines}
    assert not [r for r in lines if "error" in r], [r for r in lines if "error" in r]
    for op in ("cos", "lda", "nn1", "nn2", "suggest"):
        assert by_op[op]["top1_in_class"] and by_op[op]["median_ms"] > 0
    assert by_op["numpy_X@q_top10"]["median_ms"] > 0
    app, whole = by_op["kmeans_app"], by_op["kmeans_whole"]
    assert app["sampled"] and app["fitted_on"] == 30000 and app["clusters_used"] >= 0.9 * 40
    assert whole["k"] == 40 and whole["iterations"] >= 1
    assert np.isfinite(app["seconds"]) and np.isfinite(whole["seconds"])
