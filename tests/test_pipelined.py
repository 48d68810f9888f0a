"""core/pipelined.py: tokenising threads ahead of the model give SentenceTransformer's own vectors, in the
texts' order, and the import path takes it where it applies (on CUDA; here checked on the CPU). Which vectors a
text gets does not depend on what the model knows: a tiny encoder of the packaged model's shape (conftest) stands in
for it, where the packaged model took 20 s a test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared_file

ODD = ["", "   ", "flood " * 600, "Povodně na Moravě: ěščřžýáíé", "🙂🙂 #tag @user http://t.co/x", "a"]


@pytest.fixture(scope="module")
def tweets() -> list[str]:
    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), nrows=300, dtype=str,
                        keep_default_na=False)
    return frame["text"].tolist() + ODD


@pytest.fixture(scope="module")
def encoder(tiny_encoder):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(tiny_encoder, device="cpu")


def test_pipelined_vectors_are_the_models_own_in_the_texts_order(encoder, tweets):
    from core.pipelined import PipelinedEncoder

    enc = PipelinedEncoder(encoder, workers=3)
    try:
        got = enc.encode(tweets, batch_size=16)  # 20 batches: several in flight at once
    finally:
        enc.close()
    want = encoder.encode(tweets, batch_size=16)
    assert got.shape == want.shape and got.dtype == np.float32
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.9999, cos.min()
    # a text's vector does not depend on which batch it fell in or where it stands in the list
    alone = PipelinedEncoder(encoder, workers=1).encode([tweets[-3]], batch_size=1)
    assert float(alone[0] @ got[-3]) >= 0.9999
    assert enc.get_sentence_embedding_dimension() == want.shape[1]
    assert PipelinedEncoder(encoder, workers=1).encode([]).shape == (0, want.shape[1])


def test_wrap_takes_only_a_cuda_model_of_the_common_shape(model):
    from core.pipelined import supported, wrap

    assert supported(model)
    assert wrap(model) is model  # on the CPU the model's own encode (one tokeniser is not what limits it)

    class E5Like:  # the packaged e5 runner has its own encode: never wrapped
        device = "cuda"

        def encode(self, texts, **kw):
            return np.zeros((len(texts), 4), np.float32)

    e5 = E5Like()
    assert not supported(e5) and wrap(e5) is e5


def test_the_import_path_gives_the_same_chunks_with_a_pipelined_model(encoder, tweets, tmp_path):
    from core.embed import embed_model_chunked
    from core.pipelined import PipelinedEncoder

    plain = embed_model_chunked(tweets, encoder, "default", tmp_path / "a", chunk_size=128, batch_size=32)
    seen = []
    piped = embed_model_chunked(tweets, PipelinedEncoder(encoder, workers=2), "default", tmp_path / "b",
                                chunk_size=128, batch_size=32, progress=lambda d, n, info: seen.append(d))
    assert piped.shape == plain.shape
    assert ((piped * plain).sum(1)).min() >= 0.9999
    assert seen[-1] == len(tweets) and seen == sorted(seen)


def test_a_pipelined_import_embeds_runs_of_missing_chunks_in_one_call_and_resumes(encoder, tweets, tmp_path, monkeypatch):
    from core import embed
    from core.pipelined import PipelinedEncoder

    class Counted(PipelinedEncoder):
        calls: list = []

        def encode(self, texts, **kw):
            self.calls.append(len(texts))
            return super().encode(texts, **kw)

    enc = Counted(encoder, workers=2)
    monkeypatch.setattr(embed, "PIPELINED_ROWS", 200)  # at most 200 texts a call: chunks of 64 go three at a time
    first = embed.embed_model_chunked(tweets, enc, "default", tmp_path, chunk_size=64, batch_size=32)
    assert enc.calls == [192, 114]  # 306 texts: chunks 0-2, then 3-4
    plan = embed.ChunkPlan(tweets, "default", tmp_path, 64)
    plan.file(1).unlink()  # a run killed after some chunks were saved
    plan.file(2).unlink()
    enc.calls.clear()
    again = embed.embed_model_chunked(tweets, enc, "default", tmp_path, chunk_size=64, batch_size=32)
    assert enc.calls == [128]  # only the two missing chunks, together
    assert np.allclose(first, again, atol=1e-5)
    assert ((first * encoder.encode(tweets)).sum(1)).min() >= 0.9999
