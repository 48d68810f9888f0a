"""Shared fixtures: real slices of ../shared/data, the packaged model loaded once, tiny corpora."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# tests see the real error of a failing page (users see a short message: .streamlit/config.toml)
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")


@pytest.fixture(autouse=True)
def _bench_runs_out_of_the_repository(tmp_path_factory, monkeypatch):
    """A test that calls a benchmark's main() writes its run folder to a temporary place, not
    into results (which holds only the runs RESULTS.md cites)."""
    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path_factory.getbasetemp() / "bench-results"))


def shared_file(name: str) -> Path:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the real corpora live in ../shared/data beside the project "
                    "(CI always has them)")
    return path


def slice_csv(src: Path, dst: Path, n: int, skip: int = 0) -> Path:
    frame = pd.read_csv(src, dtype=str, keep_default_na=False)
    frame.iloc[skip: skip + n].to_csv(dst, index=False)
    return dst


@pytest.fixture(scope="session")
def model():
    from core.embed import load_model

    return load_model("default", "cpu")


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> str:
    """A sentence-transformers folder as the packaged model's (its tokenizer, pooling, config), but a BERT of two
    layers 32 wide with random weights: for tests of how a fine-tuning or an encoding runs (resume, checkpoints,
    the texts' order), where what the encoder knows does not matter and the packaged model's six layers cost 16-33 s
    a test. Tests of what an adaptation gives keep the packaged model."""
    import json
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    from core.embed import resolve_model

    packaged = Path(resolve_model("default"))
    folder = tmp_path_factory.mktemp("tiny") / "encoder"
    shutil.copytree(packaged, folder, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "README.md"))
    config = BertConfig.from_pretrained(packaged)
    config.update(dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64))
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    pooling = folder / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "word_embedding_dimension": 32}))
    return str(folder)


@pytest.fixture(scope="session")
def so_corpus(tmp_path_factory, model):
    """300 StackOverflow titles (15 per label), embedded with the real packaged model."""
    from core.corpus import ImportSpec, import_corpus

    root = tmp_path_factory.mktemp("data_so")
    frame = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)
    frame = frame.groupby("label", group_keys=False).head(15).reset_index(drop=True)
    src = root / "so300.csv"
    frame.to_csv(src, index=False)
    return import_corpus(ImportSpec(input=src, name="so"), root=root, model_loader=lambda n, d: model)


@pytest.fixture(scope="session")
def tweets_root(tmp_path_factory, model):
    """A data root holding 'tweets': 2,000 Czech politicians' tweets (dates, authors), real
    embeddings, plus two hostile rows that must stay inert in a browser."""
    from core.corpus import ImportSpec, import_corpus

    root = tmp_path_factory.mktemp("data_tweets")
    frame = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    frame = frame.iloc[:1998]
    evil = pd.DataFrame({"id": ["xss-img", "xss-script"],
                         "text": ["<img src=x onerror=alert(1)> očkování", "<script>alert(1)</script> očkování"],
                         "date": ["2021-03-01T10:00:00Z", "2021-03-02T10:00:00Z"], "author": ["evil", "evil"]})
    frame = pd.concat([frame, evil], ignore_index=True)
    src = root / "tweets.csv"
    frame.to_csv(src, index=False)
    import_corpus(ImportSpec(input=src, name="tweets"), root=root, model_loader=lambda n, d: model)
    return root


@pytest.fixture
def tweets(tmp_path, tweets_root, monkeypatch):
    """A private copy of the tweets data root, as $SEMANNO_DATA (pages may write to it)."""
    import shutil

    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    monkeypatch.setenv("SEMANNO_DATA", str(root))
    return root


def xlsx_cells(data: bytes) -> dict[str, tuple[str, str]]:
    """The first sheet of an .xlsx as {cell: ("text" | "value", its content)}, read from its XML (the
    export writes inline strings)."""
    import io
    import xml.etree.ElementTree as ET
    import zipfile

    ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    out = {}
    for c in ET.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")).iterfind(".//m:c", ns):
        t = c.find("m:is/m:t", ns)
        out[c.get("r")] = ("text", t.text or "") if t is not None else ("value", c.find("m:v", ns).text)
    return out


def import_again(root: Path, frame: pd.DataFrame, name: str = "tweets") -> None:
    """Import ``frame`` (id, text, date, author) as corpus ``name`` again, over the earlier import, with random
    384-d vectors (what a test of rows moving by a new import needs, in a second)."""
    from core.corpus import ImportSpec, import_corpus

    class Fake:
        def get_sentence_embedding_dimension(self):
            return 384

        def encode(self, texts, **kw):
            return np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)

    frame.to_csv(root / "again.csv", index=False)
    import_corpus(ImportSpec(input=root / "again.csv", name=name, overwrite=True), root=root,
                  model_loader=lambda n, d: Fake())


def import_newest_first(root: Path, name: str = "tweets") -> None:
    """The corpus ``name`` imported again with its rows in reverse order: every text on another row (import_again)."""
    frame = pd.read_parquet(next((root / name).glob("gen-*/corpus.parquet")))
    import_again(root, frame.iloc[::-1][["id", "text", "date", "author"]], name)


def clustered_unit_vectors(n: int, dim: int, clusters: int = 7, seed: int = 0, spread: float = 0.3):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    labels = rng.integers(0, clusters, n)
    x = centres[labels] + spread * rng.standard_normal((n, dim)) * np.sqrt(1.0)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), labels


@pytest.fixture(autouse=True, scope="session")
def _page_errors_in_full():
    """AppTest runs pages in this process: show their real errors here (users get a short message)."""
    from streamlit import config

    config.get_option("client.showErrorDetails")  # parse the project's config first
    config.set_option("client.showErrorDetails", "full")


@pytest.fixture
def empty_root(tmp_path, monkeypatch, model):
    """An empty data root as $SEMANNO_DATA, imports allowed from tmp_path, and every model load
    answered by the packaged model (so a home-page import needs no other model)."""
    root = tmp_path / "empty"
    monkeypatch.setenv("SEMANNO_DATA", str(root))
    monkeypatch.setenv("SEMANNO_IMPORT_ROOTS", str(tmp_path))
    monkeypatch.setattr("core.corpus.load_model", lambda name, device="auto": model)
    return root


@pytest.fixture
def so_copy(tmp_path, so_corpus, monkeypatch):
    """A private copy of the 300-title StackOverflow corpus as $SEMANNO_DATA (a test may write to it)."""
    import shutil

    root = tmp_path / "so_data"
    shutil.copytree(so_corpus.folder, root / "so")
    monkeypatch.setenv("SEMANNO_DATA", str(root))
    return root


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL server for the session (testbed/postgres.py). Skipped, with the reason,
    where PostgreSQL cannot be started; CI sets SEMANNO_REQUIRE_POSTGRES, so there it fails instead."""
    from testbed.postgres import Unavailable, throwaway_server

    cm = throwaway_server()
    try:
        server = cm.__enter__()
    except Unavailable as exc:
        if os.environ.get("SEMANNO_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required here (SEMANNO_REQUIRE_POSTGRES is set): {exc}")
        pytest.skip(f"PostgreSQL cannot be started here: {exc}")
    try:
        yield server
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture(params=["sqlite", "postgresql"])
def make_store(request, tmp_path):
    """A factory of group stores on each backend: the corpus's SQLite file, or the session's PostgreSQL
    (one database, this test's own corpus name)."""
    import uuid

    from core.store import GroupStore

    if request.param == "sqlite":
        return lambda corpus="c": GroupStore(tmp_path / f"{corpus}.sqlite")
    from core.db import PostgreSQL

    server = request.getfixturevalue("pg_server")
    prefix = uuid.uuid4().hex[:8]
    return lambda corpus="c": GroupStore(PostgreSQL(server.dsn), corpus=f"{corpus}-{prefix}")
