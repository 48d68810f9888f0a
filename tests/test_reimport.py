"""Re-importing a corpus never loses its saved groups: a kill at any point of the re-import leaves
the old corpus (or the new one) listed and loadable with every group, and a retry recovers."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.corpus import ImportSpec, import_corpus, list_corpora, load_corpus
from core import backup
from core.store import GroupStore
from tests.conftest import ROOT

DRIVER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import numpy as np
    import core.corpus as cc
    from core.corpus import ImportSpec, import_corpus

    class Fake:  # a deterministic stand-in for a sentence-transformer
        calls = 0
        def get_sentence_embedding_dimension(self): return 16
        def encode(self, texts, **kw):
            Fake.calls += 1
            if POINT == "embed" and Fake.calls == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=16) for t in texts]).astype("float32")

    POINT, src, root = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    def kill_after(fn):
        def wrapped(*a, **kw):
            out = fn(*a, **kw)
            os.kill(os.getpid(), signal.SIGKILL)
        return wrapped
    if POINT in ("save_parquet", "save_npy", "save_json", "remove_stale_generations"):
        setattr(cc, POINT, kill_after(getattr(cc, POINT)))
    import_corpus(ImportSpec(input=src, name="kw", overwrite=True, chunk_size=2, batch_size=2),
                  root=root, model_loader=lambda n, d: Fake())
""")


def fake_model():
    class Fake:
        def get_sentence_embedding_dimension(self):
            return 16

        def encode(self, texts, **kw):
            return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=16) for t in texts]).astype(np.float32)

    return Fake()


def write(path: Path, texts: list[str]) -> Path:
    pd.DataFrame({"id": [f"t{i}" for i in range(len(texts))], "text": texts}).to_csv(path, index=False)
    return path


@pytest.fixture
def old_corpus(tmp_path):
    root = tmp_path / "data"
    src = write(tmp_path / "v1.csv", ["one apple", "two pears", "three plums"])
    import_corpus(ImportSpec(input=src, name="kw"), root=root, model_loader=lambda n, d: fake_model())
    store = GroupStore(root / "kw" / "groups.sqlite")
    store.save("fruit", ["t0", "t1"], ["t2"])
    store.save("fruit", ["t0"], ["t1", "t2"], overwrite=True)
    store.save("plums", ["t2"], [])
    backup.settle()  # the copy the first save started, taken before a test damages the file
    return root


def groups_of(root: Path, name: str = "kw") -> dict[str, int]:
    store = GroupStore(root / name / "groups.sqlite")
    return {g.name: g.versions for g in store.list()}


NEW_TEXTS = ["one apple", "two pears", "three plums", "four figs", "five kiwis"]


@pytest.mark.parametrize("point", ["embed", "save_parquet", "save_npy", "save_json", "remove_stale_generations"])
def test_a_killed_reimport_keeps_the_corpus_and_its_groups(tmp_path, old_corpus, point):
    src = write(tmp_path / "v2.csv", NEW_TEXTS)
    proc = subprocess.run([sys.executable, "-c", DRIVER, point, str(src), str(old_corpus)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # still listed and loadable: the old corpus, or (killed after the switch) the new one, whole
    assert list_corpora(old_corpus) == ["kw"]
    c = load_corpus("kw", old_corpus)
    assert c.n == (5 if point in ("save_json", "remove_stale_generations") else 3)
    assert c.embeddings.shape[0] == c.n
    assert groups_of(old_corpus) == {"fruit": 2, "plums": 1}
    assert not list(old_corpus.glob(".trash-*")) and not list(old_corpus.glob(".staging-*"))
    # the same command again finishes the job; the groups are still there, the leftovers gone
    c = import_corpus(ImportSpec(input=src, name="kw", overwrite=True), root=old_corpus,
                      model_loader=lambda n, d: fake_model())
    assert c.n == 5 and groups_of(old_corpus) == {"fruit": 2, "plums": 1}
    gens = [p.name for p in (old_corpus / "kw").iterdir() if p.name.startswith("gen-")]
    assert gens == [c.manifest["data_dir"]]


def test_a_corrupt_groups_database_does_not_stop_a_reimport_nor_get_touched(tmp_path, old_corpus):
    db = old_corpus / "kw" / "groups.sqlite"
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    src = write(tmp_path / "v2.csv", NEW_TEXTS)
    c = import_corpus(ImportSpec(input=src, name="kw", overwrite=True), root=old_corpus,
                      model_loader=lambda n, d: fake_model())
    assert c.n == 5 and db.read_bytes() == before  # left for the user to repair, never moved


@pytest.mark.parametrize("damage", ["texts cut short", "vectors overwritten", "vectors emptied"])
def test_a_damaged_corpus_file_says_to_import_it_again_and_that_import_keeps_its_groups(tmp_path, old_corpus, damage):
    """A corpus.parquet cut short or an embeddings.npy overwritten or emptied is named with what to do (numpy's
    message suggested loading the file "unsafely"); importing the file again mends it with every group."""
    from core.corpus import CorpusError

    data = load_corpus("kw", old_corpus).data_folder
    f = data / ("corpus.parquet" if damage.startswith("texts") else "embeddings.npy")
    f.write_bytes(f.read_bytes()[:100] if damage == "texts cut short" else
                  b"" if damage == "vectors emptied" else b"id,vector\n" * 50)
    with pytest.raises(CorpusError, match=rf"corpus 'kw': {f.name} cannot be read: .*\. Import it again from .*v1\.csv "
                                          r"\(on the home page, tick 'Replace an existing corpus'; or --overwrite\): "
                                          r"its saved groups are kept") as err:
        load_corpus("kw", old_corpus)
    assert "unsafely" not in str(err.value)
    c = import_corpus(ImportSpec(input=tmp_path / "v1.csv", name="kw", overwrite=True), root=old_corpus,
                      model_loader=lambda n, d: fake_model())
    assert c.n == 3 and groups_of(old_corpus) == {"fruit": 2, "plums": 1}


def test_reimport_invalidates_suggests_word_cache(tmp_path, old_corpus):
    """Derived files live in the import's generation: a re-import cannot serve stale words."""
    old = load_corpus("kw", old_corpus)
    (old.data_folder / "words-v1.npz").write_bytes(b"stale")
    src = write(tmp_path / "v2.csv", NEW_TEXTS)
    new = import_corpus(ImportSpec(input=src, name="kw", overwrite=True), root=old_corpus,
                        model_loader=lambda n, d: fake_model())
    assert new.data_folder != old.data_folder and not (new.data_folder / "words-v1.npz").exists()
    assert not old.data_folder.exists()


def test_leftovers_of_older_versions_are_listed_restored_and_purged(tmp_path, old_corpus, capsys, monkeypatch):
    from precompute import trash

    monkeypatch.setenv("SEMANNO_DATA", str(old_corpus))
    # what the old import left: the corpus moved to trash with its groups, the live one with none
    leftover = old_corpus / ".trash-kw-1700000000"
    (leftover).mkdir()
    import sqlite3

    src, dst = sqlite3.connect(old_corpus / "kw" / "groups.sqlite"), sqlite3.connect(leftover / "groups.sqlite")
    src.backup(dst)
    src.close()
    dst.close()
    (old_corpus / "kw" / "groups.sqlite").unlink()
    for extra in ("-wal", "-shm"):
        Path(f"{old_corpus / 'kw' / 'groups.sqlite'}{extra}").unlink(missing_ok=True)
    assert trash.main([]) == 0
    assert ".trash-kw-1700000000\tcorpus kw\t2 saved groups" in capsys.readouterr().out
    assert trash.main(["--restore-groups", leftover.name]) == 0
    assert groups_of(old_corpus) == {"fruit": 2, "plums": 1}
    with pytest.raises(ValueError, match="already has 2 saved groups"):
        trash.restore_groups(leftover, old_corpus)  # never overwrites live groups
    assert trash.main(["--purge"]) == 2 and leftover.exists()  # asks for --yes
    assert trash.main(["--purge", "--yes"]) == 0 and not leftover.exists()


def test_what_a_page_computes_for_an_import_that_is_gone_does_not_bring_its_folder_back(tmp_path):
    """A tab still on the earlier import computes Suggest's word matrix or the copies of its texts after a new
    import removed that import's folder: they serve the tab from memory and leave no folder behind (it had come
    back, holding the one cache, until the next import removed it again)."""
    from core import copies
    from core.search.lexical import WordIndex

    live, gone = tmp_path / "gen-new", tmp_path / "gen-old"
    live.mkdir()
    texts = ["povodně na Moravě", "povodně na Moravě", "vakcína proti covidu"]
    for folder in (live, gone):
        words = WordIndex(texts, folder / "words.npz")
        assert words.matrix.shape[0] == 3
        assert copies.load_or_build(folder, texts).codes.tolist()[0] == copies.load_or_build(folder, texts).codes[1]
    assert sorted(p.name for p in live.iterdir()) == sorted(["words.npz", copies.FILE]), "kept where the import is"
    assert not gone.exists()


class Counting:
    """A model that counts the texts it embeds; ``turn`` stands for another model saved under the same name."""

    def __init__(self, model, turn: bool = False):
        self.model, self.turn, self.texts = model, turn, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def encode(self, texts, **kw):
        self.texts += len(texts)
        out = self.model.encode(texts, **kw)
        return out[:, ::-1].copy() if self.turn else out


def test_an_import_again_with_texts_added_embeds_only_the_new_ones(tmp_path, model):
    """A corpus imported again from a file with new texts added (and its rows in another order): the texts it had
    keep their vectors, only the new ones and a few checked ones are embedded, and every vector is the one a fresh
    import gives. A model changed under its name is caught by the check, and then every text is embedded."""
    from tests.conftest import shared_file

    titles = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)["text"]
    root = tmp_path / "data"
    first = write(tmp_path / "v1.csv", titles.iloc[:200].tolist())
    # kept as a corpus of millions keeps its vectors (fp16, memory-mapped): the kept ones are read from there
    old = import_corpus(ImportSpec(input=first, name="so", precision="fp16"), root=root,
                        model_loader=lambda n, d: model)
    assert old.embeddings.dtype == np.float16
    store = GroupStore(root / "so" / "groups.sqlite")
    store.save("java", ["t0", "t5"], ["t9"])
    texts = titles.iloc[:260].sample(frac=1, random_state=0).tolist()  # 60 new ones, all in another order
    second = write(tmp_path / "v2.csv", texts)
    counting = Counting(model)
    again = import_corpus(ImportSpec(input=second, name="so", overwrite=True), root=root,
                          model_loader=lambda n, d: counting)
    assert counting.texts == 60 + 16
    assert any(n.startswith("kept the vectors of 200 texts the corpus had") and n.endswith("embedded 60")
               for n in again.manifest["validation"]["notes"])
    fresh = import_corpus(ImportSpec(input=second, name="so"), root=tmp_path / "fresh", model_loader=lambda n, d: model)
    cosine = (np.asarray(again.embeddings) * np.asarray(fresh.embeddings)).sum(axis=1)
    assert cosine.min() > 0.9999
    assert groups_of(root, "so") == {"java": 1}

    turned = Counting(model, turn=True)
    third = import_corpus(ImportSpec(input=first, name="so", overwrite=True), root=root,
                          model_loader=lambda n, d: turned)
    assert turned.texts == 16 + 184  # the checked texts, then every other one
    assert any(n.startswith("embedded every text again") for n in third.manifest["validation"]["notes"])
    expected = model.encode(titles.iloc[:200].tolist(), normalize_embeddings=True)[:, ::-1]
    assert (np.asarray(third.embeddings) * expected).sum(axis=1).min() > 0.9999


def test_an_ensemble_imported_again_projects_only_its_new_texts_by_the_pca_kept(tmp_path, model):
    """An ensemble's vectors are combined by a PCA fitted to the corpus: it is kept with the corpus, so an import
    again with new texts embeds only those (and the checked ones) and projects them by it, the texts it had keeping
    their vectors, every vector the one the kept PCA gives. Every text was embedded again before. A model changed
    under its name has every text embedded again and a PCA fitted to them; a damaged PCA file, every text again."""
    from core.embed import Reduction, combine
    from tests.conftest import shared_file

    titles = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)["text"]
    root, other = tmp_path / "data", fake_model()
    models = {"minilm": Counting(model), "fake": Counting(other)}
    spec = dict(name="so", models=["minilm", "fake"], dim=64)  # 384 + 16 dimensions reduced to 64
    old = import_corpus(ImportSpec(input=write(tmp_path / "v1.csv", titles.iloc[:200].tolist()), **spec), root=root,
                        model_loader=lambda n, d: models[n])
    assert old.manifest["pca"]["applied"] and (old.data_folder / old.manifest["pca"]["file"]).is_file()
    first_pca = Reduction.load(old.data_folder / "pca.npz")
    texts = titles.iloc[:260].sample(frac=1, random_state=0).tolist()  # 60 new ones, all in another order
    models = {"minilm": Counting(model), "fake": Counting(other)}
    again = import_corpus(ImportSpec(input=write(tmp_path / "v2.csv", texts), overwrite=True, **spec), root=root,
                          model_loader=lambda n, d: models[n])
    assert models["minilm"].texts == models["fake"].texts == 60 + 16
    assert any(n.startswith("kept the vectors of 200 texts") and n.endswith("(combined by the PCA kept with the "
                                                                             "corpus)")
               for n in again.manifest["validation"]["notes"])
    had = old.frame["text"].tolist()
    vectors = np.asarray(again.embeddings)
    kept = np.array([had.index(t) for t in texts if t in had])
    np.testing.assert_allclose(vectors[[i for i, t in enumerate(texts) if t in had]],
                               np.asarray(old.embeddings)[kept], atol=1e-6)
    new = [i for i, t in enumerate(texts) if t not in had]
    pca = Reduction.load(again.data_folder / "pca.npz")  # kept again in the new generation: the first import's
    np.testing.assert_array_equal(pca.components, first_pca.components)
    expected, _ = combine([model.encode([texts[i] for i in new]), other.encode([texts[i] for i in new])], 64,
                          reduction=pca)
    assert (vectors[new] * expected).sum(axis=1).min() > 0.9999
    assert again.manifest["pca"] == old.manifest["pca"]
    from core.corpus import embed_as_corpus  # other texts embedded as the corpus's (the quotes set's quoted tweets)

    as_its = embed_as_corpus(again, [texts[i] for i in new[:5]], tmp_path / "w", model_loader=lambda n, d: models[n])
    assert (as_its * vectors[new[:5]]).sum(axis=1).min() > 0.9999

    models = {"minilm": Counting(model, turn=True), "fake": Counting(other)}  # a model changed under its name
    turned = import_corpus(ImportSpec(input=write(tmp_path / "v2.csv", texts), overwrite=True, **spec), root=root,
                           model_loader=lambda n, d: models[n])
    assert models["minilm"].texts == 16 + 260  # the checked ones, then every text, a PCA fitted to them again
    refit, _ = combine([model.encode(texts)[:, ::-1], other.encode(texts)], 64)
    assert (np.asarray(turned.embeddings) * refit).sum(axis=1).min() > 0.9999
    assert any(n.startswith("embedded every text again") for n in turned.manifest["validation"]["notes"])

    (turned.data_folder / "pca.npz").write_bytes(b"PK\x03\x04 cut short")  # a damaged PCA: every text embedded again
    models = {"minilm": Counting(model), "fake": Counting(other)}
    third = import_corpus(ImportSpec(input=write(tmp_path / "v2.csv", texts), overwrite=True, **spec), root=root,
                          model_loader=lambda n, d: models[n])
    assert models["minilm"].texts == 260 and len(third.frame) == 260 and third.manifest["pca"]["applied"]


def test_a_corpus_whose_every_text_was_checked_is_embedded_again_under_a_changed_model(tmp_path, old_corpus):
    """Three texts, all of them among the checked ones: a model changed under its name leaves nothing kept, and
    nothing more to embed."""
    turned = Counting(fake_model(), turn=True)
    again = import_corpus(ImportSpec(input=write(tmp_path / "v1.csv", ["one apple", "two pears", "three plums"]),
                                     name="kw", overwrite=True), root=old_corpus, model_loader=lambda n, d: turned)
    assert turned.texts == 3 and again.manifest["validation"]["notes"][-1].startswith("embedded every text again")
    expected = fake_model().encode(["one apple", "two pears", "three plums"])[:, ::-1]
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(again.embeddings), expected, atol=1e-5)
