"""A keyword index built at import by an older version folds its texts otherwise than the in-memory search: a CRLF
as two spaces (a phrase typed across a Windows line break is missed) and shortened links' codes kept (a short word
inside one is found). Such a corpus is named on the Annotate page, which builds the index again with a progress bar;
``python -m precompute.reindex`` does the same in a terminal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import shared_file

ROOT = Path(__file__).resolve().parents[1]


def no_model(name, device):
    raise AssertionError("a corpus with brought vectors must not load a model")


@pytest.fixture
def old_index(tmp_path, monkeypatch):
    """120 tweets of the scale corpus and three of our own (a phrase broken by CRLF, the same broken by LF, a link
    whose code holds "qzvw"), imported with a keyword index on disk, which is then built as versions before
    2026-11-30 built it (their folding: every CR and LF a space, links' codes kept; no edition file)."""
    from core.corpus import ImportSpec, import_corpus
    from core.search import textindex
    from core.search.keyword import fold

    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), nrows=120, dtype=str,
                        keep_default_na=False)[["id", "text", "date", "author"]]
    ours = pd.DataFrame({"id": ["crlf", "lf", "link"],
                         "text": ["Povinné\r\nočkování od září", "povinné\nočkování? ne", "watch https://t.co/xqzvwk2"],
                         "date": ["2021-03-01T10:00:00Z"] * 3, "author": ["a", "b", "c"]})
    frame = pd.concat([frame, ours], ignore_index=True)
    src = tmp_path / "tweets.csv"
    frame.to_csv(src, index=False)
    np.save(tmp_path / "v.npy", np.random.default_rng(0).standard_normal((len(frame), 16)).astype(np.float32))
    root = tmp_path / "data"
    c = import_corpus(ImportSpec(input=src, name="ix", vectors=tmp_path / "v.npy", indexes="on"), root=root,
                      model_loader=no_model)
    assert c.keyword_index_file is not None and not c.keyword_index_outdated
    with monkeypatch.context() as m:  # the older folding
        m.setattr(textindex, "one_line", lambda t: t.replace("\r", " ").replace("\n", " "))
        m.setattr(textindex, "without_link_codes", lambda texts: texts)
        textindex.build(c.keyword_index_file, c.frame["text"].tolist(), c.n, fold)
    c.keyword_index_file.with_name(textindex.EDITION_FILE).unlink()
    monkeypatch.setenv("SEMANNO_DATA", str(root))
    return root


def found(root: Path, query: str) -> set[str]:
    from core.corpus import load_corpus
    from core.search.keyword import KeywordIndex, find_rows
    from core.search.textindex import TextIndex

    c = load_corpus("ix", root)
    kindex = KeywordIndex(c.frame["text"].tolist(), text_index=TextIndex(c.keyword_index_file, c.n))
    return set(c.frame["id"].iloc[find_rows(kindex, query)])


def test_the_annotate_page_names_an_older_keyword_index_and_builds_it_again(old_index):
    from core.corpus import load_corpus
    from core.search import textindex

    assert load_corpus("ix", old_index).keyword_index_outdated
    assert found(old_index, "povinné očkování") == {"lf"}, "the older index finds the phrase across a CRLF"
    assert found(old_index, "qzvw") == {"link"}
    page = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120).run()
    assert not page.exception, page.exception
    assert any("keyword index was built by an older version" in c.value for c in page.caption)
    page.button(key="btn_reindex").click().run()
    assert not page.exception, page.exception
    assert any("The keyword index was built again" in s.value for s in page.success), [e.value for e in page.error]
    assert not [b for b in page.button if b.key == "btn_reindex"], "offered again after it was built"
    c = load_corpus("ix", old_index)
    assert not c.keyword_index_outdated and textindex.edition(c.keyword_index_file) == textindex.EDITION
    assert found(old_index, "povinné očkování") == {"crlf", "lf"}, "as the in-memory search finds it"
    assert found(old_index, "qzvw") == set(), "a link's code is not searched"


def test_the_reindex_job_builds_an_older_index_again_and_leaves_todays(old_index, caplog):
    import logging

    from core.corpus import load_corpus
    from core.search import textindex
    from precompute import reindex

    caplog.set_level(logging.INFO)
    assert reindex.main(["--corpus", "ix"]) == 0 and "keyword index built again" in caplog.text
    c = load_corpus("ix", old_index)
    assert not c.keyword_index_outdated and found(old_index, "povinné očkování") == {"crlf", "lf"}
    column = textindex.folded_file(c.keyword_index_file)
    written = column.stat().st_mtime_ns
    caplog.clear()
    assert reindex.main(["--corpus", "ix"]) == 0 and "is today's" in caplog.text
    assert column.stat().st_mtime_ns == written, "today's index was built again without --force"
    assert reindex.main(["--corpus", "ix", "--force"]) == 0 and column.stat().st_mtime_ns != written


def test_a_reindex_beside_an_import_or_another_build_says_so_and_changes_nothing(old_index):
    """The build holds the corpus's import lock: beside an import of the corpus (which may replace the folder it
    writes to) or another user's build, it is refused with a message, and the old index stays; one that finds
    the index built meanwhile does nothing."""
    from core import paths
    from core.atomic import exclusive
    from core.corpus import CorpusError, load_corpus, reindex_keywords
    from precompute import reindex
    from precompute._cli import run_main

    c = load_corpus("ix", old_index)
    with exclusive(paths.work_dir("ix", old_index).parent / "ix.import.lock"):  # an import of the corpus running
        with pytest.raises(CorpusError, match="being imported, or its keyword index built, by another"):
            reindex_keywords(c)
        assert run_main(reindex.main, ["--corpus", "ix"]) != 0
        page = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120).run()
        page.button(key="btn_reindex").click().run()
        said = [e.value for e in page.error]
        assert not page.exception and any("could not be built again (the old one stays)" in e for e in said), said
    assert load_corpus("ix", old_index).keyword_index_outdated, "the old index was changed"
    assert reindex_keywords(c) is not None and reindex_keywords(c) is None, "built twice"
