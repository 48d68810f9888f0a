"""The group store's jobs: copy a corpus's groups from its SQLite file into PostgreSQL, and check where a
server keeps them.

    python -m precompute.store migrate --corpus NAME --to postgresql://USER@HOST:PORT/DB
    python -m precompute.store where --corpus NAME

``migrate`` copies groups, every version with its labels, drafts, the journal of label events, topics and
assignments in one transaction, then checks every version's labels on both sides (checksums). Run
again, it copies only what is missing; nothing is ever deleted from the SQLite file. Afterwards start
the app with ``SEMANNO_DB`` set to the same address.
"""

from __future__ import annotations

import argparse
import logging
import sys

from core import paths
from core.db import PostgreSQL, configured_dsn, safe_target
from core.migrate import migrate
from core.store import GroupStore
from precompute._cli import run_main

log = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m precompute.store", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("migrate", help="copy a corpus's groups from SQLite into PostgreSQL")
    m.add_argument("--corpus", required=True)
    m.add_argument("--to", required=True, help="postgresql://USER@HOST:PORT/DB")
    w = sub.add_parser("where", help="say where this server keeps a corpus's groups (SEMANNO_DB or SQLite)")
    w.add_argument("--corpus", required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    name = paths.check_name(a.corpus)
    if a.command == "where":
        dsn = configured_dsn()
        print(f"PostgreSQL at {safe_target(dsn)}" if dsn else f"SQLite file {paths.groups_db(name)}")
        return 0
    db = paths.groups_db(name)
    if not db.exists():
        raise ValueError(f"corpus {name!r} has no groups file ({db.name}) to migrate")
    if not a.to.startswith(("postgresql://", "postgres://")):
        raise ValueError("--to must be a postgresql://USER@HOST:PORT/DB address")
    report = migrate(GroupStore(db), GroupStore(PostgreSQL(a.to), corpus=name))
    log.info("corpus %s -> PostgreSQL at %s: %s", name, safe_target(a.to), report.line())
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
