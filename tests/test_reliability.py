"""The reliability campaign's fast subset (bench/reliability.py --fast), in CI: kills during
saves, concurrent writers, kills during an import, the bad-input matrix, catastrophic regexes."""

from __future__ import annotations

import pytest

from bench import reliability
from tests.conftest import shared_file


@pytest.mark.slow
def test_kills_during_saves_lose_no_committed_version():
    r = reliability.kills(10)
    assert r == {"part": "kills", "trials": 10, "failures": 0}


@pytest.mark.slow
def test_concurrent_writers_lose_nothing_and_never_see_a_locked_database():
    r = reliability.writers(2, 5)
    assert r["trials"] > 10 and r["failures"] == 0


@pytest.mark.slow
def test_kills_during_an_import_resume_to_the_same_corpus_with_its_groups():
    r = reliability.import_kills(3)
    assert r == {"part": "import_kills", "trials": 3, "failures": 0}


def test_every_bad_input_is_named_and_nothing_saved_is_lost(capsys):
    r = reliability.bad_inputs()
    out = capsys.readouterr().out
    assert r["failures"] == 0, out


@pytest.mark.slow
def test_catastrophic_patterns_answer_within_the_deadline():
    shared_file("russian_troll_tweets_recent300k.csv")
    r = reliability.regex(30_000)
    assert r["failures"] == 0
