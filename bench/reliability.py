"""Reliability campaign: kills, concurrent writers, interrupted imports, bad inputs, hostile queries.

    python -m bench.reliability                      # the full campaign (figures in bench/RESULTS.md)
    python -m bench.reliability --fast               # the subset CI runs (tests/test_reliability.py)
    python -m bench.reliability --only kills,writers --kills 100 --writers 4 --seconds 60

Each trial prints one JSON line; the last line is the summary: trials and failures per part.
A run writes results/reliability-<date>/ with run.json (commit, command, machine) and the
raw lines.

Parts:
- kills: a writer saves versions of random size in a loop and is SIGKILLed at a random moment;
  every version it reported committed must load intact, and PRAGMA integrity_check must say ok.
- writers: N processes save for S seconds, half to one shared name (overwrite), half to names of
  their own; no committed version may be missing and no "database is locked" may reach a caller.
- import_kills: an import is SIGKILLed at a random moment, then run again: the result must equal
  an uninterrupted import's, and the saved groups of the corpus must all be there.
- bad_inputs: each malformed file gives an InputError naming the file (and column and rows where
  there are some) and leaves the existing corpus and its groups as they were.
- regex: catastrophic patterns over the 300k scale corpus answer within the deadline (+10%).
- attacks: as an attacker on a shared box would (issue 25), against a real server and chromium:
  a model file and a checkpoint whose pickle runs code are planted in the data folder, then the
  pages are opened, the planted model picked and a clustering resumed (nothing may run; each is
  refused by name); a model name that is a path; a request straight to the port claiming a user in
  proxy-header mode (refused) and the same through the signing-in proxy (served, saves record the
  proxy's user); Bob opening Alice's draft URL, and on a server without sign-in another browser
  opening a tab's draft URL or a made-up one (nothing read, nothing overwritten, nothing offered).

- team store (issue 28), on SQLite and on a throwaway PostgreSQL server (testbed/postgres.py, fsync on):
  store_kills (a saving process SIGKILLed; no committed version lost), store_writers (1, 4 and 16
  processes for --seconds each; p50/p99 of a save; 0 lost, 0 errors), postgres_restart (the server
  stopped and started under a writer: errors named, nothing committed lost, saving resumes), rebuild
  (a version's membership rebuilt from 1,000,000 label events: the time), team_paced (16 and 32 annotators of one
  topic at a person's pace, an action every --pace s: a click's autosave, a save and the Team page's progress query,
  p50/p99; 0 errors, every saved version there).

The logic lives in testbed/reliability.py (shared with the tests); this is the command line."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from testbed.common import SCALE, emit, run_folder
from testbed.reliability import (attacks, bad_inputs, import_kills, kills, postgres_restart, rebuild, regex, store_kills,
                                 store_writers, team_paced, writers)

TEAM = "store_kills,store_writers,postgres_restart,rebuild,team_paced"


def team_store(parts: list[str], kills_n: int, seconds: float, counts=(1, 4, 16), events: int = 1_000_000,
               team=(16, 32), pace: float = 2.0) -> list[dict]:
    """The team-store parts on both backends: a SQLite file and a throwaway PostgreSQL server (fsync on,
    as an operator's)."""
    from testbed.postgres import throwaway_server

    out = []
    with tempfile.TemporaryDirectory() as tmp, throwaway_server(fsync=True) as server:
        for where in (str(Path(tmp) / "g.sqlite"), server.dsn):
            if "store_kills" in parts:
                out.append(store_kills(where, kills_n))
            def own(name: str) -> str:
                """A part's own SQLite file. Backups are named by a file's stem: g.sqlite.4 would share g.sqlite's,
                and a new file beside another's backups is refused as lost."""
                return where if where.startswith("postgresql") else str(Path(tmp) / f"{name}.sqlite")

            if "store_writers" in parts:
                for n in counts:
                    out.append(store_writers(own(f"writers{n}"), n, seconds))
            if "rebuild" in parts:
                out.append(rebuild(own("events"), events))
            if "team_paced" in parts:
                for n in team:
                    out.append(team_paced(own(f"team{n}"), n, seconds, pace))
        if "postgres_restart" in parts:
            out.append(postgres_restart(server, 12.0))
    return out


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fast", action="store_true", help="the CI subset: 10 kills, 2 writers for 5 s, 3 import kills, "
                                                       "regex on 30k texts")
    p.add_argument("--only", default="kills,writers,import_kills,bad_inputs,regex,attacks," + TEAM)
    p.add_argument("--kills", type=int, default=100)
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--import-kills", type=int, default=10)
    p.add_argument("--team", default="16,32", help="team_paced: how many annotators, comma-separated (default 16,32)")
    p.add_argument("--pace", type=float, default=2.0, help="team_paced: seconds between an annotator's actions, on "
                                                          "average (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-record", action="store_true", help="do not write results/reliability-*")
    a = p.parse_args(argv)
    if a.fast:
        a.kills, a.writers, a.seconds, a.import_kills = 10, 2, 5, 3
    parts = a.only.split(",")
    out = run_folder("reliability", sys.argv if argv is None else ["bench.reliability", *argv]) if not a.no_record else None
    summary = []
    if "kills" in parts:
        summary.append(kills(a.kills, a.seed))
    if "writers" in parts:
        summary.append(writers(a.writers, a.seconds))
    if "import_kills" in parts:
        summary.append(import_kills(a.import_kills, seed=a.seed))
    if "bad_inputs" in parts:
        summary.append(bad_inputs())
    if "regex" in parts and SCALE.exists():
        summary.append(regex(30_000 if a.fast else None))
    if "attacks" in parts:
        summary.append(attacks())
    if set(parts) & set(TEAM.split(",")):
        summary += team_store(parts, 5 if a.fast else 30, a.seconds, (1, 4) if a.fast else (1, 4, 16),
                              100_000 if a.fast else 1_000_000, (4,) if a.fast else tuple(map(int, a.team.split(","))),
                              a.pace)
    emit(summary=summary)
    if out is not None:
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
