"""Corpus id -> row by sorted 64-bit hashes of the ids (core/idindex.py): the rows pandas' own index
gives, for every kind of id, collisions included; duplicates found and named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import idindex
from core.idindex import IdIndex
from tests.conftest import shared_file


def ids_of(kind: str) -> pd.Series:
    rng = np.random.default_rng(0)
    if kind == "tweets":  # real ids: "DonetskNovosti#3979", as the scale corpus's source has them
        return pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["id"], dtype=str,
                           nrows=20_000)["id"]
    if kind == "long":  # long ids that differ only in the middle: past the bytes hashed from each end
        return pd.Series([f"https://example.com/{'a' * 60}/{i:06d}/{'b' * 30}" for i in range(3000)])
    if kind == "unicode":
        return pd.Series(["", "é", "e\u0301", "日本", "🙂", "a", "ab", "ba", "0", "00"])
    return pd.Series([str(i) for i in rng.permutation(50_000)])


@pytest.mark.parametrize("kind", ["tweets", "long", "unicode", "numbers"])
@pytest.mark.parametrize("dtype", [object, "string[pyarrow]", "str"])
def test_lookups_are_the_rows_a_pandas_index_gives(kind, dtype):
    ids = ids_of(kind).astype(dtype)
    ix, ref = IdIndex(ids), pd.Index(ids.astype(object))
    assert ix.is_unique and ref.is_unique and len(ix) == len(ids)
    rng = np.random.default_rng(1)
    asked = list(ids.iloc[rng.integers(0, len(ids), 500)]) + ["not an id", "", "s1 ", ids.iloc[0] + "x"]
    assert ix.get_indexer(asked).tolist() == ref.get_indexer(asked).tolist()
    assert ix.get_indexer([]).tolist() == []


def test_colliding_hashes_still_give_the_right_rows(monkeypatch):
    """Every id hashed to one of four values: each lookup is settled by comparing the ids."""
    real = idindex.hash_ids
    monkeypatch.setattr(idindex, "hash_ids", lambda ids: real(ids) % np.uint64(4))
    ids = pd.Series([f"id{i}" for i in range(400)], dtype="string")
    ix = IdIndex(ids)
    assert ix.is_unique and ix.duplicated() == []
    asked = ["id7", "id399", "id0", "nope", "id7"]
    assert ix.get_indexer(asked).tolist() == [7, 399, 0, -1, 7]


def test_duplicated_ids_are_named():
    ids = pd.Series(["a", "b", "c", "b", "d", "a", "a"], dtype="string")
    ix = IdIndex(ids)
    assert not ix.is_unique and sorted(ix.duplicated()) == ["a", "b"]
    assert ix.get_indexer(["a", "b", "d"]).tolist() == [0, 1, 4]  # the first row of a duplicated id


def test_a_corpus_whose_file_repeats_an_id_is_refused_with_the_id_named(tmp_path):
    from core.corpus import Corpus, CorpusError, check_corpus

    frame = pd.DataFrame({"id": ["t1", "t2", "t1"], "text": ["a", "b", "c"]})
    x = np.eye(3, 4, dtype=np.float32)
    with pytest.raises(CorpusError, match=r"duplicate ids in corpus.parquet, e.g. \['t1'\]"):
        check_corpus(Corpus("dup", frame, x, {}, tmp_path, tmp_path))
    check_corpus(Corpus("ok", frame.assign(id=["t1", "t2", "t3"]), x, {}, tmp_path, tmp_path))
