"""Large-corpus storage (issue 29): vectors brought from elsewhere, checked and aligned by id; the fp16
memory-mapped store searched in place with the same answers as the fp32 matrix."""

from __future__ import annotations

import errno
import html
import json
import os
import sys
import threading
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import vectorstore
from core.corpus import CorpusError, ImportSpec, import_corpus, load_corpus, summary
from core.ingest import InputError
from core.search import REGISTRY as SEARCHES, SearchContext
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from core.rows import TextColumn


def no_model(name, device):
    raise AssertionError("a corpus with brought vectors must not load a model")


@pytest.fixture
def source(so_corpus, tmp_path):
    """The 300 StackOverflow titles as an input file with one empty text (dropped by validation) at
    row 10, and their real vectors as computed at import."""
    frame = so_corpus.frame[["id", "text", "label"]].copy()
    frame.loc[10, "text"] = ""
    src = tmp_path / "so.csv"
    frame.to_csv(src, index=False)
    return src, frame, np.asarray(so_corpus.embeddings)


def write_parquet(path, ids, vectors):
    pq.write_table(pa.table({"id": pa.array([str(i) for i in ids]),
                             "embedding": pa.array(list(map(list, np.asarray(vectors, np.float64))),
                                                   pa.list_(pa.float32()))}), path, row_group_size=64)


def test_brought_npy_follows_the_input_rows_and_records_where_it_came_from(source, tmp_path):
    src, frame, x = source
    np.save(tmp_path / "v.npy", x * 3.0)  # not unit length: normalised and counted
    c = import_corpus(ImportSpec(input=src, name="brought", vectors=tmp_path / "v.npy", vectors_model="MiniLM (GPU box)"),
                      root=tmp_path / "data", model_loader=no_model)
    keep = np.r_[0:10, 11:len(frame)]
    assert c.n == len(frame) - 1 and list(c.frame["id"]) == list(frame["id"].iloc[keep])
    assert np.allclose(c.embeddings, x[keep], atol=1e-6)
    v = c.manifest["vectors"]
    assert v["path"].endswith("v.npy") and v["normalised_rows"] == len(frame) - 1 and v["rows_in_file"] == len(frame)
    assert c.manifest["models"][0]["name"] == "MiniLM (GPU box)"


def test_brought_parquet_is_aligned_by_id_in_any_order(source, tmp_path):
    src, frame, x = source
    order = np.random.default_rng(0).permutation(len(frame))
    ids = list(frame["id"].iloc[order]) + ["not-in-the-corpus"]
    write_parquet(tmp_path / "v.parquet", ids, np.vstack([x[order], x[:1]]))
    c = import_corpus(ImportSpec(input=src, name="pq", vectors=tmp_path / "v.parquet"), root=tmp_path / "data",
                      model_loader=no_model)
    for i in (0, 5, 57, 299):
        assert np.allclose(c.embeddings[c.row_of(frame["id"].iat[i])], x[i], atol=1e-6)
    assert c.manifest["vectors"]["unused_rows"] == 2  # the unknown id and the dropped empty text


@pytest.mark.parametrize("damage, says", [
    ("short", "299 vectors for 300 data rows"),
    ("missing_id", "no vector for 1 corpus ids"),
    ("nan", "non-finite values"),
    ("zero", "zero vectors"),
    ("ragged", "do not hold 384 values"),
    ("duplicate", "more than one vector"),
    ("csv", "not a readable .npy matrix (it does not start as numpy.save writes one)"),  # numpy: "load it unsafely"
    ("empty", "not a readable .npy matrix"),
])
def test_vectors_that_do_not_fit_are_refused_naming_file_and_rows_and_the_old_corpus_stays(source, tmp_path,
                                                                                         damage, says):
    src, frame, x = source
    root = tmp_path / "data"
    np.save(tmp_path / "good.npy", x)
    before = import_corpus(ImportSpec(input=src, name="c", vectors=tmp_path / "good.npy"), root=root,
                           model_loader=no_model)
    ids, v = list(frame["id"]), x.copy()
    if damage == "short":
        bad = tmp_path / "bad.npy"
        np.save(bad, v[:-1])
    elif damage in ("csv", "empty"):
        bad = tmp_path / "bad.npy"
        bad.write_text("id,embedding\n1,0.5\n" if damage == "csv" else "")
    else:
        bad = tmp_path / "bad.parquet"
        rows = [list(r) for r in v.astype(np.float64)]
        if damage == "missing_id":
            ids, rows = ids[1:], rows[1:]
        elif damage == "nan":
            rows[42][7] = float("nan")
        elif damage == "zero":
            rows[42] = [0.0] * len(rows[42])
        elif damage == "ragged":
            rows[42] = rows[42][:100]
        elif damage == "duplicate":
            ids[43] = ids[42]
        pq.write_table(pa.table({"id": ids, "embedding": rows}), bad)
    with pytest.raises(InputError) as err:
        import_corpus(ImportSpec(input=src, name="c", vectors=bad, overwrite=True), root=root, model_loader=no_model)
    message = str(err.value)
    assert bad.name in message and says in message and "unsafely" not in message
    if damage in ("nan", "zero"):
        assert "42" in message or "43" in message  # the row (1-based) and its id
        assert repr(frame["id"].iat[42]) in message
    after = load_corpus("c", root)
    assert after.manifest["data_dir"] == before.manifest["data_dir"] and np.allclose(after.embeddings, before.embeddings)


def test_a_full_disk_while_writing_the_vectors_keeps_the_previous_corpus(source, tmp_path, monkeypatch):
    src, frame, x = source
    root = tmp_path / "data"
    np.save(tmp_path / "v.npy", x)
    import_corpus(ImportSpec(input=src, name="c", vectors=tmp_path / "v.npy"), root=root, model_loader=no_model)
    from core import brought

    def full(src_, out, *a, **k):
        out[: len(out) // 2] = 0.5  # half written, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(brought, "fill", full)
    with pytest.raises(CorpusError, match="disk .* filled up .* the corpus was not changed"):
        import_corpus(ImportSpec(input=src, name="c", vectors=tmp_path / "v.npy", overwrite=True, precision="fp16"),
                      root=root, model_loader=no_model)
    c = load_corpus("c", root)
    assert np.allclose(c.embeddings, x[np.r_[0:10, 11:len(frame)]], atol=1e-6)
    assert [p.name for p in (root / "c").iterdir() if p.name.startswith("gen-")] == [c.manifest["data_dir"]]


def test_an_import_with_vectors_on_a_disk_without_room_for_them_is_said_before_reading_them(source, tmp_path,
                                                                                            monkeypatch):
    """Vectors brought to a disk without the room the corpus will take (its vectors as stored, its texts and
    indexes): said before they are read, with how much is needed and free; the corpus there is kept."""
    import core.corpus as cc
    from core import brought

    src, frame, x = source
    root = tmp_path / "data"
    np.save(tmp_path / "v.npy", x)
    import_corpus(ImportSpec(input=src, name="c", vectors=tmp_path / "v.npy"), root=root, model_loader=no_model)
    read = []
    monkeypatch.setattr(brought, "fill", lambda *a, **k: read.append(1))
    real = cc.shutil.disk_usage
    need = len(x) * x.shape[1] * 4  # the vectors alone (float32 below a million rows) fit: the texts' room does not
    monkeypatch.setattr(cc.shutil, "disk_usage", lambda p: real(p)._replace(free=need + 1))
    with pytest.raises(CorpusError, match=r"importing corpus 'c' \(299 texts with vectors of 384 dimensions: .*\) "
                                          r"needs about 0\.\d GB free on the disk of .* GB are free: make room there.*"
                                          r"nothing was changed"):
        import_corpus(ImportSpec(input=src, name="c", vectors=tmp_path / "v.npy", overwrite=True), root=root,
                      model_loader=no_model)
    assert read == []
    assert np.allclose(load_corpus("c", root).embeddings, x[np.r_[0:10, 11:len(frame)]], atol=1e-6)


def test_fp16_store_is_memory_mapped_and_answers_like_fp32(source, tmp_path):
    """The mapped scan gives exactly the in-memory answers for the same (fp16) vectors, and fp16 keeps
    the answers of the fp32 vectors but for near-ties."""
    src, frame, x = source
    np.save(tmp_path / "v.npy", x)
    np.save(tmp_path / "rounded.npy", x.astype(np.float16).astype(np.float32))
    root = tmp_path / "data"
    c16 = import_corpus(ImportSpec(input=src, name="half", vectors=tmp_path / "v.npy", precision="fp16"), root=root,
                        model_loader=no_model)
    c32 = import_corpus(ImportSpec(input=src, name="full", vectors=tmp_path / "v.npy", precision="fp32"), root=root,
                        model_loader=no_model)
    rounded = import_corpus(ImportSpec(input=src, name="rounded", vectors=tmp_path / "rounded.npy"), root=root,
                            model_loader=no_model)
    assert c16.vector_file.exists() and c16.embeddings.dtype == np.float16 and isinstance(c16.embeddings, np.memmap)
    assert c16.manifest["store"] == {"precision": "fp16"} and c32.vector_file is None
    texts = c32.frame["text"].tolist()
    words = WordIndex(texts)

    def context(c, index):
        return SearchContext(index, KeywordIndex(texts), c.frame, word_index=words)

    ctx16 = context(c16, VectorIndex.mapped(c16.vector_file))
    ctx32, ctx_rounded = context(c32, VectorIndex(c32.embeddings)), context(rounded, VectorIndex(rounded.embeddings))
    assert ctx16.index.precision == "fp16-mapped"
    labels = so_labels(c32)
    inc = np.flatnonzero(labels == labels[0])[:5]
    exc = np.flatnonzero(labels != labels[0])[:5]
    for name in ("cos", "lda", "nn1", "nn2", "suggest", "keyword"):
        params = {"query": "excel"} if name == "keyword" else {}
        a = SEARCHES[name].search(ctx16, inc, exc, 20, **params)
        same = SEARCHES[name].search(ctx_rounded, inc, exc, 20, **params)
        b = SEARCHES[name].search(ctx32, inc, exc, 20, **params)
        assert len(a) == len(b) == len(same) > 0, name
        assert list(a.rows) == list(same.rows) and np.allclose(a.scores, same.scores, atol=1e-4), name
        # fp16 moves near-ties, not the topic: as many on-topic hits, most of them the same texts (how many
        # of the same depends on the processor's rounding: NN1's 100 gradient steps shared 15 of 20 on
        # one machine, 14 on another)
        on_topic = [float(np.mean(labels[r.rows] == labels[0])) for r in (a, b)]
        assert on_topic[0] >= on_topic[1] - 0.1 and len(set(a.rows) & set(b.rows)) >= len(b) // 2, (name, on_topic)
    full = ctx16.index.scores(np.asarray(x[0], np.float32))
    assert np.allclose(full, np.asarray(c32.embeddings) @ np.asarray(c32.embeddings[0]), atol=2e-3)


def test_a_mapped_store_goes_to_the_device_a_block_at_a_time_without_a_float32_copy(tmp_path):
    """On a GPU the index holds the rows as one fp16 tensor; a memory-mapped fp16 store gets there in blocks,
    never as a float32 copy of the whole matrix on the host (15 GB at 10M x 384; the GPU box ran the old copy,
    2026-11-26), and without torch's warning about read-only arrays. Checked on the CPU device here."""
    import tracemalloc
    import warnings

    import torch

    from core.paths import ROWS_PER_BLOCK
    from core.search.index import device_rows

    n, dim = 3 * ROWS_PER_BLOCK + 17, 64  # three whole blocks and a part
    rng = np.random.default_rng(0)
    np.save(tmp_path / "v.npy", rng.standard_normal((n, dim)).astype(np.float16))
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    assert not mapped.flags.writeable
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "The given NumPy array is not writable" fails the test
        rows = device_rows(mapped, "cpu", "fp16")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rows.dtype == torch.float16 and tuple(rows.shape) == (n, dim)
    assert np.array_equal(rows.numpy(), np.asarray(mapped))
    assert peak < 2 * ROWS_PER_BLOCK * dim * 4, f"{peak:,} bytes on the host for {n * dim * 4:,} of float32 rows"
    assert device_rows(mapped, "cpu", "fp32").dtype == torch.float32


def so_labels(corpus) -> np.ndarray:
    return pd.factorize(corpus.frame["label"])[0]


def test_a_truncated_store_is_refused_naming_the_file(source, tmp_path):
    src, frame, x = source
    np.save(tmp_path / "v.npy", x)
    root = tmp_path / "data"
    c = import_corpus(ImportSpec(input=src, name="half", vectors=tmp_path / "v.npy", precision="fp16"), root=root,
                      model_loader=no_model)
    with open(c.vector_file, "r+b") as fh:
        fh.truncate(vectorstore.HEADER + 1000)
    with pytest.raises(CorpusError, match=r"vectors\.f16\.faiss.*truncated"):
        load_corpus("half", root)
    manifest = json.loads((root / "half" / "manifest.json").read_text())
    assert manifest["store"]["precision"] == "fp16"


def test_kmeans_on_a_sample_assigns_every_row_of_a_mapped_store_and_finds_the_clusters(tmp_path):
    from sklearn.metrics import adjusted_rand_score

    from core.cluster import REGISTRY as CLUSTERINGS
    from core.cluster.base import ClusterContext
    from testbed.common import clustered

    x, truth = clustered(6000, 32, clusters=12, seed=3)
    path = tmp_path / vectorstore.FILE
    vectorstore.write(path, [x[:2500], x[2500:]], len(x), x.shape[1])
    mapped = vectorstore.codes(path)
    sampled = CLUSTERINGS["kmeans"].fit(ClusterContext(mapped), 12, seed=0, sample=1500)
    whole = CLUSTERINGS["kmeans"].fit(ClusterContext(x), 12, seed=0, sample=0)
    assert sampled.labels.shape == (6000,) and sampled.labels.min() >= 0 and sampled.labels.max() < 12
    assert sampled.params["sample"] == 1500 and sampled.history[-1]["assigned_rows"] == 6000
    assert adjusted_rand_score(truth, sampled.labels) > 0.95
    assert adjusted_rand_score(whole.labels, sampled.labels) > 0.95


QUERIES = [  # (query, is_regex, case_insensitive, diacritics_insensitive)
    ("trump", False, True, True), ("Trump", False, False, True), ("fake news", False, True, True),
    ("očkování", False, True, True), ("očkování", False, True, False), ("vlád", False, True, True),
    ("#maga", False, True, True), ('"fake news"', False, True, True), ("https://t.co", False, True, True),
    (r"trump\w*", True, True, True), (r"^rt @\w+", True, True, True), (r"(hillary|bill) clinton", True, True, True),
    (r"vakcín[ay]|očkován", True, True, True), (r"russia\w*\s+\w+", True, True, True), (r"Trump$", True, False, True),
    (r"korea\W+\w+", True, True, False), ("breaking|obama|babiš", True, True, True),
    ("rt @", False, True, True), ("RT @", False, False, True),  # no word run of 3: every folded text tested
]


def test_the_keyword_index_finds_the_same_texts_as_the_in_memory_engine(tmp_path, monkeypatch):
    from conftest import shared_file
    from core.search import textindex
    from core.search.keyword import _Deadline, find_rows, fold

    en = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["text"], dtype=str,
                     keep_default_na=False, nrows=3000)
    cz = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), usecols=["text"], dtype=str,
                     keep_default_na=False, nrows=3000)
    texts = en["text"].tolist() + cz["text"].tolist() + ['he said "fake news"\nthen left', "Trump"]
    with monkeypatch.context() as m:  # a column of several chunks, as at scale (one per 20,000 texts there)
        m.setattr(textindex, "_BATCH", 777)
        textindex.build(tmp_path / textindex.FILE, texts, len(texts), fold)
    assert not (tmp_path / textindex.FILE).exists()  # no FTS5 file: postings and the folded column only
    memory = KeywordIndex(texts)
    # the server's large-corpus form: the texts read by row from the frame's column, never a list
    indexed = KeywordIndex(TextColumn(pd.Series(texts)), text_index=textindex.TextIndex(tmp_path / textindex.FILE,
                                                                                       len(texts)))
    assert indexed.text_index.folded() is not None  # a regex's candidates come from the folded column
    # an index of the earlier form (SQLite FTS5 trigrams beside them) answers every lookup alike
    fts_path = tmp_path / "fts" / textindex.FILE
    fts_path.parent.mkdir()
    textindex.build(fts_path, texts, len(texts), fold, fts=True)
    fts = KeywordIndex(texts, text_index=textindex.TextIndex(fts_path, len(texts)))
    tix, ftx, deadline = indexed.text_index, fts.text_index, _Deadline(10)
    for key in ("trump", "the", "ockovani", "vlad", "tru", "ing", "zzzqqq"):  # words answer from the postings
        assert tix.word_rows(key, deadline).tolist() == ftx.containing([[key]], deadline).tolist(), key
    for key in ("fake news", "#maga", "https://t.co", "rt @", "e n", "news fake"):
        assert tix.word_rows(key, deadline) is None
        assert tix.containing([[key]], deadline).tolist() == ftx.containing([[key]], deadline).tolist(), key
    for plan in ([["trump", "said"]], [["hillary"], ["clinton", "bill"]], [["fake news"]], [["rt @", "trump"]]):
        assert tix.candidates(plan, deadline).tolist() == ftx.containing(plan, deadline).tolist(), plan
    assert tix.folded().num_chunks == 8
    rows = tix.candidates([["the"]], deadline)  # taken across chunks and joined a block at a time
    blocks = list(tix.joined([["the"]], deadline, block=500))
    assert len(blocks) == -(-len(rows) // 500) and np.concatenate([b[0] for b in blocks]).tolist() == rows.tolist()
    for part, joined, ends in blocks:
        read = textindex.without_link_codes([textindex.one_line(texts[r]) for r in part])
        assert joined.split("\n")[:-1] == [fold(t) for t in read]
        assert [joined[e] for e in ends] == ["\n"] * len(part)
    # an index built before the folded column and the word postings existed reads SQLite: the same rows
    earlier = tmp_path / "earlier" / textindex.FILE
    earlier.parent.mkdir()
    textindex.build(earlier, texts, len(texts), fold, fts=True)
    for f in [textindex.folded_file(earlier), *textindex.words_files(earlier)]:
        f.unlink()
    without = KeywordIndex(texts, text_index=textindex.TextIndex(earlier, len(texts)))
    assert without.text_index.folded() is None and without.text_index.word_rows("trump", deadline) is None
    for query, is_regex, ci, di in QUERIES:
        kw = {"is_regex": is_regex, "case_insensitive": ci, "diacritics_insensitive": di}
        a, b, c = find_rows(memory, query, **kw), find_rows(indexed, query, **kw), find_rows(without, query, **kw)
        assert a.tolist() == b.tolist() == c.tolist() == find_rows(fts, query, **kw).tolist(), query
        assert len(a) > 0, query  # each query finds something, or the comparison says little


def test_indexes_built_at_import_are_what_the_server_searches(source, tmp_path, monkeypatch):
    from core.search.keyword import find_rows
    from core.search.lexical import WORDS_VERSION, words_file
    from ui.resources import search_context_of

    src, frame, x = source
    np.save(tmp_path / "v.npy", x)
    c = import_corpus(ImportSpec(input=src, name="ix", vectors=tmp_path / "v.npy", indexes="on"),
                      root=tmp_path / "data", model_loader=no_model)
    by_lemma = words_file(c.data_folder, "en")[0]  # English titles: words counted by lemma
    assert c.keyword_index_file is not None and by_lemma.exists()
    assert set(c.manifest["indexes"]) == {"keyword", "words"}
    from core import hover

    assert c.manifest["hover"] == {"file": hover.FILE, "rows": min(c.n, hover.SIZE)}
    assert hover.load(c.data_folder, c.n) is not None  # the scatter's hover texts, drawn at import
    from core import sketch

    rows, meta = sketch.load(c.data_folder, c.n)  # the scatter's sketch, made from the brought vectors
    assert rows.shape == (c.n, sketch.DIM) and c.manifest["sketch"]["dim"] == meta["dim"] == sketch.DIM
    ctx = search_context_of(c, "cpu")
    kindex = ctx.keyword_index
    assert kindex.text_index is not None
    assert isinstance(kindex.texts, TextColumn) and not isinstance(kindex.texts, list)  # no copy of every text
    assert kindex.text_index.folded() is not None and c.manifest["indexes"]["keyword"]["folded"]
    expected = [i for i, t in enumerate(c.frame["text"]) if "excel" in t.lower()]
    assert find_rows(kindex, "Excel").tolist() == expected and expected
    for query in ("Excel", "excel"):  # Match case tests the index's candidates on the texts read by row
        cased = [i for i, t in enumerate(c.frame["text"]) if query in t]
        assert find_rows(kindex, query, case_insensitive=False).tolist() == cased
    assert cased != expected  # the case mattered
    assert ctx.word_index.matrix.shape[0] == c.n  # Suggest's words from the file made at import
    assert (ctx.word_index.file, ctx.word_index.lang) == (by_lemma, "en")
    assert len(SEARCHES["suggest"].search(ctx, expected[:3], [i for i in range(20) if i not in expected][:3], 5)) == 5
    # a large corpus imported before words were read as now keeps its matrix: no rebuild of minutes; one by lemma
    # as first read (no forms of words the dictionary lacks), else one of words as written
    from core.search import lexical

    monkeypatch.setattr(lexical, "word_matrix", lambda *a: (_ for _ in ()).throw(AssertionError("rebuilt")))
    for older_name, lang in ((f"words-v{WORDS_VERSION}-en.npz", "en"), (f"words-v{WORDS_VERSION}.npz", None)):
        by_lemma = by_lemma.rename(c.data_folder / older_name)
        older = search_context_of(c, "cpu").word_index
        assert older.file == by_lemma and older.lang == lang and older.matrix.shape[0] == c.n


def test_a_loaded_corpus_holds_one_copy_of_its_texts_and_its_authors_as_codes(source, tmp_path):
    """The texts as the file had them (before HTML entities were unescaped) stay in corpus.parquet for
    whoever needs them, but the server holds one copy of the texts (at 10M rows the second was 1.3 GB);
    authors are held as codes into their names."""
    src, frame, x = source
    frame = frame.assign(author=[f"user{i % 7}" for i in range(len(frame))])
    frame.loc[3, "text"] = "Johnson &amp; Johnson"
    frame.to_csv(src, index=False)
    np.save(tmp_path / "v.npy", x)
    c = import_corpus(ImportSpec(input=src, name="raw", vectors=tmp_path / "v.npy"), root=tmp_path / "data",
                      model_loader=no_model)
    assert "text_raw" not in c.frame.columns and c.frame["text"].iloc[3] == "Johnson & Johnson"
    on_disk = pd.read_parquet(c.data_folder / "corpus.parquet")
    assert on_disk["text_raw"].iloc[3] == "Johnson &amp; Johnson"
    assert isinstance(c.frame["author"].dtype, pd.CategoricalDtype)
    assert c.frame["author"].astype(str).tolist() == on_disk["author"].tolist()
    info = summary(c)
    assert c.has_authors and info["authors"] == 7 and info["top_authors"].sum() == c.n
    # a file of many row groups (one per million rows at scale): each text column is read as one piece,
    # so taking the ten rows a page shows does not join every piece first
    pq.write_table(pq.read_table(c.data_folder / "corpus.parquet"), c.data_folder / "corpus.parquet", row_group_size=50)
    again = load_corpus("raw", tmp_path / "data")
    for col in ("id", "text"):
        assert again.frame[col].array.__arrow_array__().num_chunks == 1
        assert again.frame[col].tolist() == c.frame[col].tolist() and again.frame[col].dtype == c.frame[col].dtype
    rows = [250, 3, 120]
    assert again.frame.iloc[rows]["text"].tolist() == on_disk["text"].iloc[rows].map(html.unescape).tolist()


def test_mapped_store_scores_and_means_of_many_rows_in_one_pass(tmp_path, monkeypatch):
    """A keyword with a large share of the corpus (1.7M hits of 10M) orders its hits by a mean and a scan
    of every row in one sequential pass over the fp16 store, not row by row: the same numbers as the
    float32 arithmetic on those fp16 rows."""
    monkeypatch.setattr(vectorstore, "STEP", 100)  # many blocks, the last one short
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2_050, 24)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    path = tmp_path / vectorstore.FILE
    vectorstore.write(path, [x[:1000], x[1000:]], len(x), x.shape[1])
    index = VectorIndex.mapped(path)
    rounded = x.astype(np.float16).astype(np.float32)
    w = rng.standard_normal(24).astype(np.float32)
    assert np.allclose(index.scores(w), rounded @ w, atol=1e-5)
    many = np.sort(rng.choice(len(x), 900, replace=False))  # more than an eighth: the one-pass way
    few = many[:40]
    for rows in (many, few):
        assert np.allclose(index.mean_of(rows), rounded[rows].mean(axis=0), atol=1e-6)
        assert np.allclose(index.scores_of(rows, w), rounded[rows] @ w, atol=1e-5)
    twice = np.r_[many, many[:5]]  # a row given twice counts twice, as when the rows are gathered
    assert np.allclose(index.mean_of(twice), rounded[twice].mean(axis=0), atol=1e-6)


def test_scattered_rows_of_a_mapped_store_are_asked_of_the_disk_at_once_and_gathered_exactly(tmp_path, monkeypatch):
    """A cold 10M store gave the scatter's 2,000 sampled rows one page fault at a time (~6 s): ``take``
    first asks the kernel for every page those rows lie on, then gathers the same values as ``x[rows]``.
    A part of a map (its offset is its parent's) and a plain array are gathered without the hint."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3_000, 512)).astype(np.float32)  # four rows a page
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    path = tmp_path / vectorstore.FILE
    vectorstore.write(path, [x], len(x), x.shape[1])
    store = vectorstore.codes(path)
    asked = []
    real = vectorstore.os.posix_fadvise
    monkeypatch.setattr(vectorstore.os, "posix_fadvise",
                        lambda fd, off, n, advice: (asked.append((off, n, advice)), real(fd, off, n, advice))[1])
    rows = rng.choice(len(x), 100, replace=False)  # in any order
    got = vectorstore.take(store, rows)
    assert got.dtype == np.float32 and np.array_equal(got, x.astype(np.float16)[rows].astype(np.float32))
    assert asked and all(a == vectorstore.os.POSIX_FADV_WILLNEED for _, _, a in asked)
    covered = np.zeros(path.stat().st_size, bool)
    for off, n, _ in asked:
        covered[off:off + n] = True
    row_bytes = 512 * 2
    for r in rows:  # every byte of every asked row lies in an asked range
        assert covered[vectorstore.HEADER + r * row_bytes: vectorstore.HEADER + (r + 1) * row_bytes].all()
    assert covered.sum() < 0.8 * covered.size  # pages of rows not asked for are not read
    asked.clear()
    part = store[100:]  # carries the parent's offset: not taken for a whole file
    assert np.array_equal(vectorstore.take(part, [0, 5]), x.astype(np.float16)[[100, 105]].astype(np.float32))
    assert np.array_equal(vectorstore.take(x, [3, 1]), x[[3, 1]])
    assert asked == []


def test_a_large_store_is_read_into_the_page_cache_in_the_background_when_it_fits(tmp_path, monkeypatch):
    """The server's first scan after opening a 10M corpus waited for 7.7 GB read page fault by page fault;
    ``warm`` reads the whole file in a background thread, and only when it fits in half the memory
    available."""
    path = tmp_path / vectorstore.FILE
    x = np.ones((5_000, 16), np.float32) / 4
    vectorstore.write(path, [x], len(x), 16)
    assert vectorstore._available_bytes() > 0  # read from /proc/meminfo
    monkeypatch.setattr(vectorstore, "WARM_CHUNK", 64 << 10)
    asked, real = [], vectorstore.populate
    monkeypatch.setattr(vectorstore, "populate", lambda fd, start, n: (asked.append((start, n)), real(fd, start, n))[1])
    monkeypatch.setattr(vectorstore, "_available_bytes", lambda: 10 * path.stat().st_size)
    thread = vectorstore.warm(path)
    thread.join(10)
    assert not thread.is_alive() and thread.daemon
    assert sum(n for _, n in asked) == path.stat().st_size and asked[0][0] == 0 and len(asked) > 1
    asked.clear()
    monkeypatch.setattr(vectorstore, "_available_bytes", lambda: path.stat().st_size)  # would crowd the cache
    assert vectorstore.warm(path) is None and asked == []


def test_the_background_read_yields_to_a_scan_of_the_same_store_and_runs_at_the_lowest_priority(tmp_path, monkeypatch):
    """At 10M the background read beside the corpus's opening and the first scatter's own reader took the two
    cores from them (open 8.6 -> 11.1 s, first scatter +2 s): it now runs at nice 19 and waits while a scan
    reads the same file ahead of itself, then reads the rest."""
    path = tmp_path / vectorstore.FILE
    x = np.ones((5_000, 16), np.float32) / 4
    vectorstore.write(path, [x], len(x), 16)
    monkeypatch.setattr(vectorstore, "WARM_CHUNK", 64 << 10)
    monkeypatch.setattr(vectorstore, "_available_bytes", lambda: 10 * path.stat().st_size)
    asked, nice, real = [], [], vectorstore.populate

    def spy(fd, start, n):
        asked.append((start, n))
        if sys.platform.startswith("linux"):
            nice.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real(fd, start, n)

    monkeypatch.setattr(vectorstore, "populate", spy)
    scan = vectorstore._Ahead(str(path), vectorstore.HEADER, vectorstore.HEADER)  # a scan under way, nothing to read
    thread = vectorstore.warm(path)
    time.sleep(0.3)
    assert thread.is_alive() and asked == []  # waits while the scan reads
    scan.stop()
    scan.stop()  # stopping twice counts once
    thread.join(10)
    assert not thread.is_alive() and sum(n for _, n in asked) == path.stat().st_size
    assert vectorstore._SCANS.get(os.path.realpath(path)) == 0
    if sys.platform.startswith("linux"):
        assert set(nice) == {19}
    # so it does while a page reads part of the store itself (a sample, the scatter's preview)
    asked.clear()
    with vectorstore.foreground(vectorstore.codes(path)):
        thread = vectorstore.warm(path)
        time.sleep(0.3)
        assert thread.is_alive() and asked == []
    thread.join(10)
    assert not thread.is_alive() and sum(n for _, n in asked) == path.stat().st_size
    assert vectorstore._SCANS.get(os.path.realpath(path)) == 0


def test_a_scan_of_a_mapped_store_reads_ahead_of_itself_a_bounded_distance_and_gives_the_same_numbers(
        tmp_path, monkeypatch):
    """A cold projection of 10M rows took 11-16 s in page faults: a reader thread now reads the file in large
    requests ahead of the scan, never more than READ_AHEAD bytes ahead, and stops with the scan."""
    monkeypatch.setattr(vectorstore, "STEP", 100)
    monkeypatch.setattr(vectorstore, "WARM_CHUNK", 16 << 10)
    monkeypatch.setattr(vectorstore, "READ_AHEAD", 48 << 10)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4_000, 64)).astype(np.float32)  # 128 bytes a row: 512 kB
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    path = tmp_path / vectorstore.FILE
    vectorstore.write(path, [x], len(x), x.shape[1])
    store = vectorstore.codes(path)
    events, real, real_at = [], vectorstore.populate, vectorstore._Ahead.at
    monkeypatch.setattr(vectorstore, "populate", lambda fd, start, n: (events.append(("read", start)),
                                                                       real(fd, start, n))[1])
    monkeypatch.setattr(vectorstore._Ahead, "at", lambda self, pos: (events.append(("scan", pos)), real_at(self, pos),
                                                                     time.sleep(0.002))[1])  # the reader gets a turn
    w = rng.standard_normal((64, 2)).astype(np.float32)
    got = vectorstore.times(store, w)
    assert np.allclose(got, x.astype(np.float16).astype(np.float32) @ w, atol=1e-5)
    reads = [pos for kind, pos in events if kind == "read"]
    assert reads[0] == vectorstore.HEADER and len(reads) > 3 and all(p < path.stat().st_size for p in reads)
    scan = vectorstore.HEADER
    for kind, pos in events:  # every read began at most READ_AHEAD past where the scan was
        if kind == "scan":
            scan = pos
        else:
            assert pos - scan <= vectorstore.READ_AHEAD
    readers = [t for t in threading.enumerate() if t.name == "read ahead"]
    for t in readers:
        t.join(5)
    assert not any(t.is_alive() for t in readers)  # it stopped with the scan


def test_a_page_puts_its_long_lived_objects_out_of_the_collectors_view_once_and_new_garbage_is_still_freed():
    """At 10M rows a full garbage collection over the server's objects took 200-390 ms, several times a
    minute, landing on clicks; the server freezes what lives as long as it does (issue 29)."""
    import gc
    import weakref

    from ui import resources

    # Other tests' pages froze what was alive at their time, and those objects may die by their refcount while
    # this test runs (a CI run saw the count fall by two): this test counts from nothing frozen
    gc.unfreeze()
    before = gc.get_freeze_count()
    try:
        resources.settle_page("A page of this test")  # its first run: its imports may still be under way
        assert before == 0 and gc.get_freeze_count() == 0
        resources.settle_page("A page of this test")  # its second run: what is alive now is long-lived
        frozen = gc.get_freeze_count()
        assert frozen > before and len(gc.get_objects()) < frozen
        later = [object()]  # made after the freeze: a second freeze would take it out of the collector's view
        resources.settle_page("A page of this test")
        # once per page and process: nothing more frozen (a frozen object may still die by its refcount, as
        # other tests' threads' objects do in a full run, so the count may fall), and a newer object still seen
        assert gc.get_freeze_count() <= frozen and any(o is later for o in gc.get_objects())

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle made after the freeze: only the collector frees it
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
        resources._RUNS.pop("A page of this test", None)


def test_a_preview_projects_evenly_spread_whole_blocks_asked_of_the_disk_at_once(tmp_path, monkeypatch):
    """The first look at a 10M scatter reads about an eighth of the store: whole blocks from its start to its
    end, asked of the kernel at once, with the coordinates the full projection gives those rows."""
    from core.projection import preview_starts, project, project_preview

    starts = preview_starts(10_000, 1 / 8, block=100)
    assert starts[0] == 0 and starts[-1] == 9_900 and len(starts) == 12  # 100 blocks: an eighth, ends included
    assert np.all(np.diff(starts) >= 800) and np.all(np.diff(starts) <= 1000) and np.all(starts % 100 == 0)
    assert list(preview_starts(250, 1 / 8, block=100)) == [0]  # a small corpus: one block
    rng = np.random.default_rng(5)
    x = rng.standard_normal((10_050, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    path = tmp_path / vectorstore.FILE
    vectorstore.write(path, [x], len(x), x.shape[1])
    store = vectorstore.codes(path)
    asked, real = [], vectorstore.os.posix_fadvise
    monkeypatch.setattr(vectorstore.os, "posix_fadvise",
                        lambda fd, off, n, advice: (asked.append((off, n)), real(fd, off, n, advice))[1])
    w = rng.standard_normal((32, 2)).astype(np.float32)
    rows, xy = project_preview(store, w, 1 / 8, block=100)
    full = project(store, w)
    assert len(rows) == len(set(rows.tolist())) and rows[0] == 0 and rows[-1] == 10_049  # the last, short block
    assert 0.1 < len(rows) / len(x) < 0.16
    assert np.allclose(xy, full[rows], atol=1e-5)
    row_bytes = 32 * 2
    assert sorted(asked) == [(vectorstore.HEADER + int(s) * row_bytes, min(100, len(x) - int(s)) * row_bytes)
                             for s in preview_starts(len(x), 1 / 8, block=100)]
    asked.clear()
    rows2, xy2 = project_preview(x, w, 1 / 8, block=100)  # a plain array: the same rows, no hint
    assert np.array_equal(rows2, rows) and np.allclose(xy2, x[rows] @ w, atol=1e-5) and asked == []
    from core.projection import preview_scatter

    texts = pd.Series([f"text {i}" for i in range(len(x))])
    sc, drawn = preview_scatter(store, w, [5_000, 5_001], [7_777], texts, 1 / 8, hover_sample=50, raster_from=100)
    assert {5_000, 5_001, 7_777} <= set(drawn.tolist()) and set(rows.tolist()) <= set(drawn.tolist())
    traces = {tr.name: rr for tr, rr in zip(sc.figure.data, sc.trace_rows)}
    labelled = {int(drawn[r]) for name, rr in traces.items() if name and "nclud" in name for r in rr}
    assert labelled == {5_000, 5_001}  # the included trace holds exactly the included rows
    assert sc.raster is not None  # the unlabelled rows as a density, as in the full scatter


def test_the_share_of_a_store_in_the_page_cache_is_read_from_the_kernel(tmp_path):
    """The Scatter page shows its preview only while the store is mostly not in the page cache: the share
    comes from ``mincore`` over the store's mapping (None for what is not a mapped store)."""
    path = tmp_path / vectorstore.FILE
    x = np.ones((20_000, 64), np.float32) / 8
    vectorstore.write(path, [x], len(x), 64)
    store = vectorstore.codes(path)
    float(np.asarray(store, np.float32).sum())  # every page read just now
    share = vectorstore.resident_share(store)
    if share is None:
        pytest.skip("this platform has no MAP_POPULATE/mincore through libc")
    assert share == 1.0
    assert vectorstore.resident_share(x) is None and vectorstore.resident_share(store[10:]) is None


def test_a_prepared_keyword_index_has_read_what_the_first_search_needs_and_answers_the_same(so_corpus, tmp_path):
    """The server prepares a large corpus's keyword index in a background thread when it opens it (the first
    search of a cold 10M corpus met its deadline reading it); prepared or not, a search answers the same, and
    an index missing its parts is prepared without an error of its own."""
    from core.search import textindex
    from core.search.keyword import find_rows, fold

    texts = so_corpus.frame["text"].tolist()
    textindex.build(tmp_path / textindex.FILE, texts, len(texts), fold)
    cold = KeywordIndex(texts, text_index=textindex.TextIndex(tmp_path / textindex.FILE, len(texts)))
    prepared = textindex.TextIndex(tmp_path / textindex.FILE, len(texts))
    prepared.prepare()
    assert {"words", "folded", "bounds"} <= set(prepared._loaded)
    warm = KeywordIndex(texts, text_index=prepared)
    for query in ("excel", "sql server", "vba"):
        assert find_rows(warm, query).tolist() == find_rows(cold, query).tolist()
    assert len(find_rows(warm, "excel")) > 0
    for f in [textindex.folded_file(tmp_path / textindex.FILE), *textindex.words_files(tmp_path / textindex.FILE)]:
        f.unlink()
    broken = textindex.TextIndex(tmp_path / textindex.FILE, len(texts))
    broken.prepare()  # nothing to read: no exception
    assert broken._loaded.get("words") is None and broken._loaded.get("folded") is None


def mapped_files() -> str:
    with open("/proc/self/maps") as fh:
        return fh.read()


def test_the_texts_are_memory_mapped_from_their_own_file_and_a_stale_or_broken_one_is_never_used(
        source, tmp_path, monkeypatch):
    """The server maps the text column from texts.arrow (at 10M rows 1.3 GB that left the heap) and shows
    exactly the texts of corpus.parquet; a file that is broken, of other rows, or older than the Parquet
    file beside it is passed over for the Parquet file, and a large corpus imported before the file
    existed gets it on its next open."""
    from core import corpus as corpus_mod, textcolumn

    src, frame, x = source
    np.save(tmp_path / "v.npy", x)
    root = tmp_path / "data"
    c = import_corpus(ImportSpec(input=src, name="mapped", vectors=tmp_path / "v.npy"), root=root, model_loader=no_model)
    f = textcolumn.file_of(c.data_folder)
    on_disk = pd.read_parquet(c.data_folder / "corpus.parquet", columns=["id", "text"])
    assert f.exists() and str(f) in mapped_files()
    assert c.frame["text"].tolist() == on_disk["text"].tolist() and c.frame["text"].dtype == on_disk["text"].dtype
    assert list(c.frame.columns[:2]) == ["id", "text"]
    assert c.frame.iloc[[250, 3, 120]]["text"].tolist() == on_disk["text"].iloc[[250, 3, 120]].tolist()
    folder = c.data_folder
    del c

    def texts() -> list:
        return load_corpus("mapped", root).frame["text"].tolist()

    good = f.read_bytes()
    f.write_bytes(good[: len(good) // 2])  # cut short
    assert texts() == on_disk["text"].tolist()
    f.write_bytes(b"not arrow at all")
    assert texts() == on_disk["text"].tolist()
    # another file's texts (one row fewer), written as for this Parquet file: its rows do not match
    textcolumn.write(folder, pa.array(on_disk["text"].tolist()[:-1]), folder / "corpus.parquet")
    assert texts() == on_disk["text"].tolist()
    # the Parquet file rewritten with a text changed after texts.arrow was written: the stale file is not used
    f.write_bytes(good)
    changed = pd.read_parquet(folder / "corpus.parquet")
    changed.loc[7, "text"] = "a text edited in corpus.parquet, longer than any title was"
    changed.to_parquet(folder / "corpus.parquet", index=False)
    assert texts()[7] == "a text edited in corpus.parquet, longer than any title was"
    # a large corpus (here: the threshold lowered) without the file gets it when it is opened
    f.unlink()
    monkeypatch.setattr(corpus_mod, "INDEXES_FROM_ROWS", 10)
    again = load_corpus("mapped", root)
    assert f.exists() and str(f) in mapped_files() and again.frame["text"].tolist()[7].startswith("a text edited")
    assert again.frame["text"].array.__arrow_array__().num_chunks == 1
