"""The group store's jobs: copy a corpus's groups from its SQLite file into PostgreSQL, and check where a
server keeps them.

    python -m precompute.store migrate --corpus NAME --to postgresql://USER@HOST:PORT/DB
    python -m precompute.store where --corpus NAME
    python -m precompute.store backups --corpus NAME
    python -m precompute.store restore --corpus NAME [--backup FILE] [--yes] [--beside]
    SEMANNO_DB=postgresql://... python -m precompute.store snapshot --corpus NAME
    SEMANNO_DB=postgresql://... python -m precompute.store let-go --corpus NAME [--yes | --undo]

``migrate`` copies groups, every version with its labels, drafts, the journal of label events, topics and
assignments in one transaction, then checks every version's labels on both sides (checksums). Run
again, it copies only what is missing; nothing is ever deleted from the SQLite file. Afterwards start
the app with ``SEMANNO_DB`` set to the same address.

``backups`` lists the copies of a corpus's SQLite groups file that the app keeps (core/backup.py: one after
a write when the newest is half an hour old, the newest eight kept), with the saved groups in each.
``restore`` puts one back (the newest unless ``--backup`` names another): the file it replaces is moved
aside to ``groups.sqlite.replaced-TIME``, never deleted, and what that file still holds that was saved after the
backup (new versions, groups, drafts, the journal: core/salvage.py) is read back into it, and said. A file that
still checks out and holds saved groups is replaced only with ``--yes`` (nothing of it is read back then).

With ``SEMANNO_DB`` set (a team's PostgreSQL), ``snapshot`` copies the corpus's groups, every version with its
labels, drafts, the journal, topics, assignments and decisions out of the server into a new SQLite file,
``backups/postgresql-TIME.sqlite`` (each version's labels checked against the server's; the newest eight kept,
within a room; refused before it writes where the disk has no room for it). The app runs it after a save when the
newest is half an hour old (core.migrate.after_write); run it yourself before upgrading the server, or from cron (it
waits for a snapshot being taken to finish: one at a time per corpus). The app can open such a file as a corpus's
groups file.
``backups`` then lists the snapshots, and ``restore`` copies into the server what it lacks of one (the newest
unless ``--backup`` names another): a group, version, draft or topic lost there comes back; nothing the server
holds is overwritten, and a version it holds with other labels refuses the whole copy; with ``--beside`` that
version's group is put back whole beside the server's, as ``NAME (put back)`` (the server lost the snapshot's
version and one was saved since under its number: both kept, to be compared). ``let-go`` lists the saved versions,
drafts and decisions the snapshots hold and the server lacks; with ``--yes`` they are let go, as on the Groups page
(removed at the server on purpose: no longer warned of nor put back by the page; the snapshots of versions removed a
week later, drafts and decisions recorded at the server as discarded and taken back); ``--undo`` warns of the
versions again. The server's own tools (pg_dump) back up the whole database.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from tqdm import tqdm

from core import backup, paths, salvage
from core.db import PostgreSQL, configured_dsn, safe_target
from core.migrate import (LET_GO_DAYS, LOCK_ENV, OtherLabels, counted, lacking, let_go, let_go_found, let_go_of,
                          migrate, put_back_snapshot, snapshot, snapshot_lock, snapshots_of, yield_cpu)
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
    sn = sub.add_parser("snapshot", help="copy a corpus's groups out of PostgreSQL (SEMANNO_DB) into a checked "
                                         "SQLite file in its backups folder")
    sn.add_argument("--corpus", required=True)
    sn.add_argument("--nice", type=int, choices=range(0, 20), metavar="0-19",
                    help="take it at this CPU niceness (19: the lowest), the app's searches beside it first; "
                         "started with setsid (cron: `setsid python -m precompute.store snapshot ... --nice 19`), "
                         "its session's group of processes too, which is what Linux weighs against the app")
    b = sub.add_parser("backups", help="list the backups of a corpus's groups file (with SEMANNO_DB: its snapshots), "
                                       "newest first")
    b.add_argument("--corpus", required=True)
    r = sub.add_parser("restore", help="put a backup of a corpus's groups file back (the file replaced is kept; "
                                       "from a damaged one, what was saved after the backup is read back); with "
                                       "SEMANNO_DB, copy into PostgreSQL what it lacks of a snapshot")
    r.add_argument("--corpus", required=True)
    r.add_argument("--backup", type=Path, help="the backup to put back (a file of `backups`; the newest if not given)")
    r.add_argument("--yes", action="store_true", help="replace a groups file that still checks out and holds groups "
                                                      "(going back to the backup: nothing of it is read back)")
    r.add_argument("--beside", action="store_true",
                   help="with SEMANNO_DB: a group of which the server holds other versions under the snapshot's "
                        "numbers is put back whole beside it, as 'NAME (put back)', instead of refusing the copy")
    lg = sub.add_parser("let-go", help="with SEMANNO_DB: list the saved versions, drafts and decisions the snapshots "
                                       "hold and the server lacks; --yes lets them go (removed at the server on "
                                       "purpose: the Groups page no longer warns of them nor puts them back; the "
                                       f"versions' snapshots go {LET_GO_DAYS} days later); --undo warns of the "
                                       "versions let go again")
    lg.add_argument("--corpus", required=True)
    how = lg.add_mutually_exclusive_group()
    how.add_argument("--yes", action="store_true", help="let what is listed go")
    how.add_argument("--undo", action="store_true",
                     help="warn of the versions let go again (drafts and decisions let go stay so)")
    return p


def _groups_in(db: Path) -> str:
    n = backup.count_groups(db)
    return "unreadable" if n is None else f"{n} saved groups"


def list_backups(name: str) -> int:
    db = paths.groups_db(name)
    kept = backup.copies(db)
    if not kept:
        print(f"no backups of {db} (in {backup.folder(db)})")
        return 0
    print(f"backups of {db}, newest first:")
    for c in kept:
        print(f"  {c.path}  {c.line()}  {_groups_in(c.path)}")
    return 0


def _chosen(name: str, given: Path | None, kept: list, none_kept: str) -> Path:
    """The file ``--backup`` names (a path, or a name as `backups` lists it), else the newest of ``kept``."""
    if given is None:
        if not kept:
            raise ValueError(none_kept)
        return kept[0].path
    beside = backup.folder(paths.groups_db(name)) / given
    chosen = beside if not given.is_file() and beside.is_file() else given
    if not chosen.is_file():
        raise ValueError(f"--backup {chosen}: no such file (python -m precompute.store backups --corpus {name} "
                         "lists them)")
    return chosen


def restore(name: str, chosen: Path | None, yes: bool) -> int:
    db = paths.groups_db(name)
    chosen = _chosen(name, chosen, backup.copies(db), f"no backups of {db} in {backup.folder(db)}")
    n = backup.count_groups(chosen)
    if n is None:
        raise ValueError(f"--backup {chosen}: not a groups file that can be read")
    damaged = db.exists() and (db.stat().st_size == 0 or not backup.sound(db))  # checked once (0.3 s at 91 MB)
    live = backup.count_groups(db) if db.exists() and not damaged else None  # None: absent or damaged, what it is for
    if live and not yes:
        raise ValueError(f"{db} still reads and holds {live} saved groups; put back {chosen.name} ({n} saved "
                         "groups) over it with --yes (the file is kept beside it)")
    aside, got = salvage.put_back(db, chosen, damaged=damaged)
    log.info("put back %s (%d saved groups) as %s%s", chosen, n, db,
             f"; the file it replaced is kept as {aside}" if aside else "")
    if aside is not None:
        log.info("%s", got.line())
    return 0


@contextmanager
def versions_bar(what: str):
    """A progress bar of versions copied, then checked (core.migrate's ``progress``), on stderr."""
    bar = tqdm(desc=what, unit="version", file=sys.stderr)

    def step(n: int) -> None:
        if bar.total is None:
            bar.total = n
            bar.refresh()
        else:
            bar.update(n)
    try:
        yield step
    finally:
        bar.close()


def take_snapshot(name: str, dsn: str, a) -> int:
    if os.environ.get(LOCK_ENV):  # started by the app after a save: it holds the lock it was handed until it exits,
        lock = None  # and runs beside the app's searches, on the CPU they leave
        log.info("taking a snapshot of corpus %s's groups at CPU niceness %s", name, yield_cpu())
    else:  # from a terminal or cron: the lock taken after a snapshot being taken finishes, at the caller's priority
        if a.nice is not None:  # or at the one asked for
            log.info("taking a snapshot of corpus %s's groups at CPU niceness %s", name, yield_cpu(a.nice))
        lock = snapshot_lock(paths.groups_db(name))
    try:
        with versions_bar("versions copied, then checked") as step:
            path, report = snapshot(GroupStore(PostgreSQL(dsn), corpus=name), paths.groups_db(name), progress=step)
    finally:
        if lock is not None:
            os.close(lock)
    log.info("corpus %s at PostgreSQL %s -> %s: %s", name, safe_target(dsn), path, report.line())
    return 0


def list_snapshots(name: str, dsn: str, _a) -> int:
    kept = snapshots_of(paths.groups_db(name))
    if not kept:
        print(f"no snapshots of corpus {name}'s groups at PostgreSQL {safe_target(dsn)} (take one with python -m "
              f"precompute.store snapshot --corpus {name})")
        return 0
    print(f"snapshots of corpus {name}'s groups at PostgreSQL {safe_target(dsn)}, newest first:")
    for c in kept:
        print(f"  {c.path}  {c.line()}  {_groups_in(c.path)}")
    if gone := let_go_of(paths.groups_db(name)):
        print(f"{counted(len(gone), 'saved versions')} let go on the Groups page (removed at "
              f"the server on purpose), of {', '.join(sorted({g for g, _, _ in gone}))[:300]}: restore puts "
              f"{'them' if len(gone) != 1 else 'it'} back with the rest of a snapshot")
    return 0


def let_go_work(name: str, dsn: str, a) -> int:
    """The Groups page's *Removed on purpose: let them go* and *Warn of them again*, from a terminal."""
    groups_db = paths.groups_db(name)
    if a.undo:
        n = len(let_go_of(groups_db))
        let_go(groups_db, [])
        print(f"{counted(n, 'saved versions')} let go before {'are' if n != 1 else 'is'} warned of again (the "
              "Groups page offers to put back what the server lacks)")
        return 0
    store = GroupStore(PostgreSQL(dsn), corpus=name)
    found = lacking(store, groups_db)
    if not found:
        print(f"the snapshots of corpus {name}'s groups hold no saved version, draft or decision the server lacks: "
              "nothing to let go")
        return 0
    print(f"what the snapshots of corpus {name}'s groups hold and PostgreSQL {safe_target(dsn)} lacks:")
    for group, number, made in sorted(found.missing):
        print(f"  {group}  version {number}  saved {made}")
    for token, owner in sorted(found.drafts.items(), key=lambda d: (d[1], d[0])):
        print(f"  a draft of unsaved work of {owner}  (token {token})")
    for topic, item in sorted(found.decisions):
        print(f"  an adjudicator's decision on {topic}  item {item}")
    things = found.in_words()
    if not a.yes:
        print(f"{things} in all. Where someone removed them at the server on purpose, --yes lets them go; "
              "otherwise the Groups page (or restore) puts them back")
        return 0
    let_go_found(store, groups_db, found)
    print(f"let go: {things}"
          + (f"; the snapshots that hold only these versions go {LET_GO_DAYS} days from now (--undo warns of them "
             "again until then)" if found.versions else "")
          + ("; the drafts and decisions are recorded at the server as discarded and taken back (no --undo)"
             if found.drafts or found.decisions else ""))
    return 0


def restore_snapshot(name: str, dsn: str, a) -> int:
    chosen = _chosen(name, a.backup, snapshots_of(paths.groups_db(name)),
                     f"no snapshots of corpus {name}'s groups (python -m precompute.store snapshot --corpus {name} "
                     "takes one)")
    if backup.count_groups(chosen) is None:
        raise ValueError(f"--backup {chosen}: not a snapshot that can be read (python -m precompute.store backups "
                         f"--corpus {name} lists them)")
    with versions_bar("versions copied (or there), then checked") as step:
        try:
            report = put_back_snapshot(chosen, GroupStore(PostgreSQL(dsn), corpus=name), progress=step,
                                       beside=a.beside)
        except OtherLabels as exc:  # without --beside (with it, such a group is put back beside)
            raise ValueError(f"{exc}; --beside puts that group back beside the server's, as 'NAME (put back)', "
                             "keeping both") from None
    log.info("%s -> corpus %s at PostgreSQL %s (what it lacked; nothing there overwritten): %s", chosen, name,
             safe_target(dsn), report.line())
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    name = paths.check_name(a.corpus)
    dsn = configured_dsn()
    if a.command == "where":
        print(f"PostgreSQL at {safe_target(dsn)}" if dsn else f"SQLite file {paths.groups_db(name)}")
        return 0
    if a.command in ("snapshot", "backups", "restore", "let-go") and dsn:
        return {"snapshot": take_snapshot, "backups": list_snapshots, "restore": restore_snapshot,
                "let-go": let_go_work}[a.command](name, dsn, a)
    if a.command == "let-go":
        raise ValueError("let-go is for the snapshots of a team's PostgreSQL groups, and SEMANNO_DB is not set: a "
                         "SQLite groups file's backups keep no versions past their count")
    if a.command == "snapshot":
        raise ValueError("snapshot copies a corpus's groups out of PostgreSQL, and SEMANNO_DB is not set: the app "
                         "backs up a SQLite groups file itself (python -m precompute.store backups --corpus "
                         f"{name})")
    if a.command == "restore" and a.beside:
        raise ValueError("--beside is for a team's PostgreSQL snapshots, and SEMANNO_DB is not set: a backup of a "
                         "SQLite groups file is put back whole (what was saved after it is read back)")
    if a.command in ("backups", "restore"):
        return list_backups(name) if a.command == "backups" else restore(name, a.backup, a.yes)
    db = paths.groups_db(name)
    if not db.exists():
        raise ValueError(f"corpus {name!r} has no groups file ({db.name}) to migrate")
    if not a.to.startswith(("postgresql://", "postgres://")):
        raise ValueError("--to must be a postgresql://USER@HOST:PORT/DB address")
    with versions_bar("versions copied (or there), then checked") as step:
        report = migrate(GroupStore(db), GroupStore(PostgreSQL(a.to), corpus=name), progress=step)
    log.info("corpus %s -> PostgreSQL at %s: %s", name, safe_target(a.to), report.line())
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
