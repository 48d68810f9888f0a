"""The reliability campaign's fast subset (bench/reliability.py --fast), in CI: kills during
saves, concurrent writers, kills during an import, the bad-input matrix, catastrophic regexes, and
the attacks of issue 25. Each test reads the campaign's own event lines and checks every event."""

from __future__ import annotations

import json

import pytest

from testbed import reliability
from tests.conftest import shared_file


def events(capsys, part: str, n: int | None = None) -> list[dict]:
    """The campaign's event lines of ``part`` (exactly ``n`` of them when given)."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    found = [e for e in lines if e.get("part") == part]
    assert n is None or len(found) == n, found
    return found


@pytest.mark.slow
def test_kills_during_saves_lose_no_committed_version(capsys):
    reliability.kills(10)
    assert all(t["versions"] > 0 and t["lost"] == [] and t["integrity"] == "ok" for t in events(capsys, "kills", 10))


@pytest.mark.slow
def test_concurrent_writers_lose_nothing_and_never_see_a_locked_database(capsys):
    reliability.writers(2, 5)
    (t,) = events(capsys, "writers")
    assert t["saves"] > 10 and t["missing"] == 0 and t["errors"] == [] and t["integrity"] == "ok", t


@pytest.mark.slow
def test_kills_during_an_import_resume_to_the_same_corpus_with_its_groups(capsys):
    reliability.import_kills(3)
    assert all(t["listed_after_kill"] and t["identical"] and t["groups_kept"] for t in events(capsys, "import_kills", 3))


def test_every_bad_input_is_named_and_nothing_saved_is_lost(capsys):
    reliability.bad_inputs()
    cases = events(capsys, "bad_inputs")
    assert len(cases) >= 18
    for c in cases:
        assert c["ok"] and c.get("corpus_and_groups_intact", c.get("groups_intact")), c


@pytest.mark.slow
def test_catastrophic_patterns_answer_within_the_deadline(capsys):
    shared_file("russian_troll_tweets_recent300k.csv")
    reliability.regex(30_000)
    trials = events(capsys, "regex")
    assert len(trials) == len(reliability.CATASTROPHIC) + 2
    for t in trials:
        assert t["seconds"] <= 2.0 * 1.1 + 0.05 and (t["hits"] is not None or "longer than" in t["message"] or
                                                      "limit" in t["message"]), t


@pytest.mark.slow
def test_planted_files_claimed_names_and_others_drafts_get_nowhere(capsys):
    from tests.browser import require_browser

    require_browser()
    reliability.attacks()
    trials = {t["attack"]: t for t in events(capsys, "attacks")}
    assert len(trials) == 9
    assert all(t["ok"] for t in trials.values()), [t for t in trials.values() if not t["ok"]]
    assert not any(t.get("code_ran") for t in trials.values())
    assert "refused to load the checkpoint state.pt" in trials["planted checkpoint resumed"]["message"]
    assert trials["through the proxy the save records the proxy's user"]["saved_by"] == "alice@example.org"
    assert trials["Bob opens Alice's draft URL and searches"]["owner_after"] == "alice@example.org"


@pytest.mark.slow
def test_the_team_store_on_postgresql_loses_nothing_to_kills_writers_or_a_restart(capsys, pg_server):
    """On the session's PostgreSQL: kills of a saving process, 4 concurrent writers, the server stopped
    and started under a writer, a version rebuilt from 100,000 events."""
    reliability.store_kills(pg_server.dsn, 3)
    assert all(t["versions"] > 0 and t["lost"] == [] for t in events(capsys, "store_kills", 3))
    reliability.store_writers(pg_server.dsn, 4, 4)
    (w,) = events(capsys, "store_writers", 1)
    assert w["saves"] > 50 and w["errors"] == [] and w["missing"] == 0
    reliability.postgres_restart(pg_server, 8.0)
    (r,) = events(capsys, "postgres_restart", 1)
    assert r["missing"] == 0 and r["named"] and r["errors_during_outage"] >= 1 and r["saves_after_restart"] > 0, r
    reliability.rebuild(pg_server.dsn, 100_000)
    (b,) = events(capsys, "rebuild", 1)
    assert b["same_as_saved"]


def test_a_team_of_annotators_at_work_gets_every_click_and_version_written(capsys, pg_server):
    """Three annotators of one topic on the session's PostgreSQL, each from 200 keyword hits, clicking every 0.1 s
    on average (the figures' run: 16 and 32 at a person's pace, bench.reliability --only team_paced): every click's
    autosave, save and progress read answers without an error, and every version saved loads back with the labels
    its annotator had."""
    reliability.team_paced(pg_server.dsn, 3, 6, pace=0.1, start=200)
    (t,) = events(capsys, "team_paced", 1)
    assert t["n_errors"] == 0 and t["missing"] == 0, t
    assert t["click"]["n"] > 60 and t["save"]["n"] >= 3 and t["progress"]["n"] >= 3, t
