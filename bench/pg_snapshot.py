"""What a save of many labels on a team's PostgreSQL costs (by COPY, and by executemany as before), and what a
snapshot of its groups costs (``python -m precompute.store snapshot``, core/migrate.py):
a corpus's groups copied out of a throwaway server (durable commits, as an operator's) into a checked SQLite file;
after one version saved, the next with every label read from the server again and, in turn, as the app takes it (the
unchanged versions' labels from the previous snapshot); and putting it back into the server after its groups are
lost (every version copied back and checked), and the room a first snapshot asks for (its size guessed from the
server's counts); a team's saves and searches while the snapshot job the app starts by itself runs beside them
(the day's first and one after it, each at CPU niceness 0 and at the app's, core.migrate.NICE, in turn; with
``--during-only``, only these). Medians of --repeat runs.
With ``--page``, only what the Groups page does with the kept snapshots: compare them with the server on each view
(core.migrate.lacking), and put back versions the server lost, where it has saved others under their numbers since;
the server holds --drafts drafts of unsaved work (ten steps each) and --decisions adjudicator's decisions, compared
too, and put back once it loses a tenth of them (a draft discarded and a decision taken back among them stay away).

    python -m bench.pg_snapshot [--groups 40] [--versions 5] [--labels 10000] [--repeat 3]
                                [--during-repeat 1] [--during-only] [--tweet-ids]
    python -m bench.pg_snapshot --page [--groups 400] [--versions 5] [--labels 10] [--snapshots 8] [--repeat 9]
                                [--drafts 200] [--decisions 5000]

Prints one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from core import migrate
from core.db import PostgreSQL
from core.migrate import expected_size, put_back_snapshot, snapshot
from core.store import GroupStore
from testbed.postgres import throwaway_server


def saves(pg: GroupStore, a) -> None:
    """A save of --labels labels on the server, its labels sent by COPY (the store's way) and, alternating in the
    same run, by executemany (the way before)."""
    from core.db import Runner

    by_copy = Runner.insert_rows

    def by_statements(self, table, columns, rows):
        self.many(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)

    runs: dict[str, list[float]] = {"COPY": [], "executemany": []}
    labels = [f"s-{i}" for i in range(a.labels)]
    pg.save("warm-up", labels, [])
    for n in range(2 * max(5, a.repeat)):
        how = "COPY" if n % 2 else "executemany"
        Runner.insert_rows = by_copy if how == "COPY" else by_statements
        try:
            t = time.perf_counter()
            pg.save("saves", labels, [], overwrite=True)
            runs[how].append((time.perf_counter() - t) * 1e3)
        finally:
            Runner.insert_rows = by_copy
    for how, ms in runs.items():
        print(json.dumps({"step": f"a save of {a.labels:,} labels on the server, by {how}",
                          "median_ms": round(statistics.median(ms), 1), "runs_ms": [round(x, 1) for x in ms]}))


def during_snapshot(pg: GroupStore, dsn: str, groups_db: Path, nice: int, first: bool) -> None:
    """Saves of a 1,000-label group every 0.2 s into the corpus (a team at work), each followed by a search's work
    (the app's server answers searches beside saves), with no snapshot running and while the job the app starts
    after a save (core.migrate.after_write: a process of its own, at CPU niceness ``nice``) copies its groups out:
    with ``first``, the day's first (no snapshot to take labels from: a folder of its own), else one after the
    previous."""
    import os

    import numpy as np

    from core import migrate

    if first:
        groups_db = groups_db.parent.parent.parent / f"first-{time.time_ns()}" / groups_db.parent.name / groups_db.name
    os.environ[migrate.NICE_ENV] = str(nice)

    side, labels = GroupStore(pg.db, corpus=pg.corpus), [f"p-{i}" for i in range(1000)]
    rows = np.random.default_rng(0).standard_normal((300_000, 384), dtype=np.float32)  # a COS search's work
    searches: dict[str, list[float]] = {"quiet": [], "busy": []}

    def paced(until, when="quiet") -> list[float]:
        out = []
        while until(len(out)):
            t = time.perf_counter()
            side.save("paced", labels, [], overwrite=True)
            out.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            np.argpartition(-(rows @ rows[len(out)]), 100)[:100]
            searches[when].append((time.perf_counter() - t) * 1e3)
            time.sleep(0.2)
        return out

    quiet = paced(lambda n: n < 40)
    t = time.perf_counter()
    job = migrate.after_write(groups_db.parent.name, groups_db, dsn, every_s=0, check_s=0)
    start_ms = (time.perf_counter() - t) * 1e3
    busy = paced(lambda n: job.poll() is None, "busy")
    job_s, code = time.perf_counter() - t, job.wait()
    assert code == 0, (groups_db.parent / "backups" / migrate.SNAPSHOT_LOG).read_text()[-2000:]
    quiet += paced(lambda n: n < 40)

    def pct(ms, q):
        return round(sorted(ms)[min(len(ms) - 1, int(q * len(ms)))], 1)

    which = ("the day's first snapshot job (every label from the server)" if first else
             "a snapshot job after the previous (unchanged versions' labels from it)") + f", at niceness {nice}"
    said = (groups_db.parent / "backups" / migrate.SNAPSHOT_LOG).read_text()
    print(json.dumps({"step": f"the app's snapshot job (after_write): {which}", "start_ms": round(start_ms, 1),
                      "job_s": round(job_s, 2), "exit": code, "said": said.count(f"at CPU niceness {nice}")}))
    for when, ms in (("no snapshot running", quiet), (f"while {which} runs", busy)):
        print(json.dumps({"step": f"a save of 1,000 labels every 0.2 s, {when}", "saves": len(ms),
                          "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99)}))
    for when, ms in (("no snapshot running", searches["quiet"]),
                     (f"while {which} runs", searches["busy"])):
        print(json.dumps({"step": f"a search's work (300,000 x 384 cosines, top 100) after each save, {when}",
                          "searches": len(ms), "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99)}))


def page(pg: GroupStore, groups_db: Path, a) -> None:
    """The Groups page's comparison of --snapshots kept snapshots with the server (no version lacking, then ten
    groups of which the server lost the last version and saved another under its number), and its put-back."""
    from core import migrate

    step = {"kind": "search", "method": "keyword", "params": {"q": "flood"}, "changes": [[i, 0, 1] for i in range(5)]}
    for i in range(a.drafts):  # a team's work in progress, and an adjudicator's decisions
        pg.sync_draft(f"draft-{i}", f"annotator {i % 16}", keep=0, steps=[{**step, "id": f"s{n}"} for n in range(10)],
                      n_included=5, n_excluded=0, saved=False, browser="b", writer="w")
    if a.decisions:
        pg.create_topic("adjudicated", "", created_by="lead")
        pg.decide("adjudicated", {f"t{i}": 1 if i % 3 else -1 for i in range(a.decisions)}, "lead")
    for _ in range(a.snapshots):
        migrate.snapshot(pg, groups_db, keep=a.snapshots)
        time.sleep(1.05)  # snapshots are named by the second

    def views(expect: int) -> tuple[float, list[float]]:
        migrate._held.cache_clear()
        for cache in ("_work_held", "_held_work"):  # each view's first as in a fresh process
            if hasattr(migrate, cache):
                getattr(migrate, cache).cache_clear()
        runs = []
        for _ in range(a.repeat + 1):
            t = time.perf_counter()
            found = migrate.lacking(pg, groups_db)
            runs.append((time.perf_counter() - t) * 1e3)
            assert found.versions == expect, found
            assert not getattr(found, "drafts", None) and not getattr(found, "decisions", None), found
        return runs[0], runs[1:]

    for lost in (0, 10):
        with pg.db.tx() as db:  # the server loses the last version of ``lost`` groups; each is saved again
            for g in range(lost):
                [(vid,)] = db.run("SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus=? "
                                  "AND g.name=? AND v.number=?", (pg.corpus, f"group {g}", a.versions))
                db.run("DELETE FROM labels WHERE version_id=?", (vid,))
                db.run("DELETE FROM versions WHERE id=?", (vid,))
        for g in range(lost):
            pg.save(f"group {g}", [f"again-{g}"], [], overwrite=True)
        first, runs = views(lost)
        print(json.dumps({"step": f"the Groups page's comparison of {a.snapshots} snapshots ({a.groups * a.versions:,} "
                          f"versions, {a.drafts:,} drafts and {a.decisions:,} decisions each) with the server, {lost} "
                          "versions lacking", "first_ms": round(first, 1),
                          "median_ms": round(statistics.median(runs), 1), "runs_ms": [round(x, 1) for x in runs]}))
    found = migrate.lacking(pg, groups_db)
    t = time.perf_counter()
    reports = migrate.put_back_lacking(pg, found)
    print(json.dumps({"step": "putting them back beside the server's groups", "s": round(time.perf_counter() - t, 2),
                      "groups beside": len(found.beside), "snapshots copied": len(reports),
                      "said": reports[0][1].line()[:300]}))
    assert migrate.lacking(pg, groups_db).versions == 0
    if hasattr(migrate, "Work"):  # the server loses a tenth of the drafts and decisions, less one discarded and one
        with pg.db.tx() as db:  # taken back on purpose
            for i in range(0, a.drafts, 10):
                db.run("DELETE FROM draft_steps WHERE token=?", (f"draft-{i}",))
                db.run("DELETE FROM drafts WHERE token=?", (f"draft-{i}",))
            db.run("DELETE FROM decisions WHERE substr(item_id, length(item_id), 1)='0'")
        pg.sync_draft("discarded", "annotator 0", keep=0, steps=[step], n_included=5, n_excluded=0, saved=False,
                      browser="b", writer="w")
        migrate.snapshot(pg, groups_db, keep=a.snapshots)
        pg.delete_draft("discarded", "annotator 0")
        pg.decide("adjudicated", {"t1": None}, "lead")
        found = migrate.lacking(pg, groups_db)
        t = time.perf_counter()
        reports = migrate.put_back_lacking(pg, found)
        print(json.dumps({"step": "putting back the drafts and decisions the server lost",
                          "s": round(time.perf_counter() - t, 2), "drafts": len(found.drafts),
                          "decisions": len(found.decisions), "said": reports[0][1].line()[:300]}))
        assert not migrate.lacking(pg, groups_db) and pg.load_draft("discarded") is None
        assert "t1" not in pg.decisions("adjudicated")
    migrate._held.cache_clear()  # as in the snapshot job, a process of its own
    for cache in ("_work_held", "_held_work"):
        if hasattr(migrate, cache):
            getattr(migrate, cache).cache_clear()
    t = time.perf_counter()
    past = migrate._prune(groups_db, a.snapshots // 2)
    print(json.dumps({"step": f"a snapshot job's pruning to the newest {a.snapshots // 2} (each snapshot's versions "
                      "compared, none holding one the server lacks)", "ms": round((time.perf_counter() - t) * 1e3, 1),
                      "kept past": len(past)}))


def label_id(a, g: int, v: int, i: int) -> str:
    """A labelled text's id: short (``g-v-i``), or a tweet's 19 digits with ``--tweet-ids``."""
    return f"{1_800_000_000_000_000_000 + g * 10**12 + v * 10**9 + i}" if a.tweet_ids else f"{g}-{v}-{i}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--groups", type=int, default=40)
    p.add_argument("--versions", type=int, default=5)
    p.add_argument("--labels", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--during-repeat", type=int, default=1, help="rounds of the saves beside the job (each: the "
                   "day's first and one after it, at niceness 0 and the app's, in turn)")
    p.add_argument("--during-only", action="store_true", help="only the saves and searches beside the job")
    p.add_argument("--tweet-ids", action="store_true", help="texts' ids of a tweet's 19 digits (else g-v-i)")
    p.add_argument("--page", action="store_true", help="only the Groups page's comparison and put-back")
    p.add_argument("--snapshots", type=int, default=8, help="with --page: snapshots kept")
    p.add_argument("--drafts", type=int, default=200, help="with --page: drafts of unsaved work at the server")
    p.add_argument("--decisions", type=int, default=5000, help="with --page: an adjudicator's decisions there")
    a = p.parse_args(argv)
    with throwaway_server(fsync=True) as server, tempfile.TemporaryDirectory(prefix="bench-snapshot-") as tmp:
        pg = GroupStore(PostgreSQL(server.dsn), corpus="bench")
        if not a.page:
            saves(GroupStore(pg.db, corpus="saves"), a)  # a corpus of its own: not in the snapshot
        t = time.perf_counter()
        for g in range(a.groups):
            for v in range(a.versions):
                pg.save(f"group {g}", [label_id(a, g, v, i) for i in range(a.labels)], [f"x{g}-{v}"], overwrite=True)
        print(json.dumps({"step": "built", "groups": a.groups, "versions": a.versions,
                          "labels_per_version": a.labels, "s": round(time.perf_counter() - t, 1)}))
        if a.page:
            page(pg, Path(tmp) / "bench" / "groups.sqlite", a)
            return 0
        if a.during_only:
            snapshot(pg, Path(tmp) / "bench" / "groups.sqlite")
            beside(pg, server.dsn, Path(tmp) / "bench" / "groups.sqlite", a)
            return 0
        taken, back, size, said = [], [], 0, ""
        full, since, reused_said = [], [], ""
        for n in range(a.repeat):
            t = time.perf_counter()
            path, report = snapshot(pg, Path(tmp) / "bench" / "groups.sqlite")
            taken.append(time.perf_counter() - t)
            size = path.stat().st_size
            for how in ("full", "since") if n % 2 else ("since", "full"):  # in turn, after one version saved
                time.sleep(1.05)  # snapshots are named by the second
                pg.save("group 0", [label_id(a, 0, n, i) for i in range(a.labels)], [], overwrite=True)
                t = time.perf_counter()
                if how == "full":  # none to take labels from: every one read from the server
                    with mock.patch.object(migrate, "_previous", lambda _db: (None, None)):
                        snapshot(pg, Path(tmp) / "bench" / "groups.sqlite")
                    full.append(time.perf_counter() - t)
                else:
                    reused_said = snapshot(pg, Path(tmp) / "bench" / "groups.sqlite")[1].line()
                    since.append(time.perf_counter() - t)
            with pg.db.tx() as db:  # the server loses the corpus's groups
                db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON "
                       "g.id=v.group_id WHERE g.corpus='bench')")
                db.run("DELETE FROM versions WHERE group_id IN (SELECT id FROM groups WHERE corpus='bench')")
                db.run("DELETE FROM groups WHERE corpus='bench'")
            t = time.perf_counter()
            said = put_back_snapshot(path, pg).line()
            back.append(time.perf_counter() - t)
            time.sleep(1.05)  # snapshots are named by the second
        assert len(pg.names()) == a.groups and pg.load("group 0", 1).included[:1] == [label_id(a, 0, 0, 0)]
        for step, runs in (("snapshot (PostgreSQL -> a checked SQLite file)", taken),
                           ("putting it back into the server that lost the groups", back),
                           ("a snapshot after one version saved, every label read from the server", full),
                           ("the same, the unchanged versions' labels from the previous snapshot", since)):
            print(json.dumps({"step": step, "median_s": round(statistics.median(runs), 2),
                              "runs_s": [round(x, 2) for x in runs]}))
        print(json.dumps({"step": "the snapshot", "mb": round(size / 1e6, 1), "snapshot said": report.line(),
                          "put back said": said, "the one after one version saved said": reused_said}))
        guessed, asked = [], 0
        for _ in range(a.repeat):  # the room a first snapshot asks for (none kept to go by), and what asking costs
            t = time.perf_counter()
            asked = expected_size(pg, [])
            guessed.append(time.perf_counter() - t)
        print(json.dumps({"step": "a first snapshot's size guessed from the server (core.migrate.expected_size)",
                          "guessed_mb": round(asked / 1e6, 1), "snapshot_mb": round(size / 1e6, 1),
                          "median_ms": round(1000 * statistics.median(guessed), 1)}))
        beside(pg, server.dsn, Path(tmp) / "bench" / "groups.sqlite", a)
    return 0


def beside(pg: GroupStore, dsn: str, groups_db: Path, a) -> None:
    """during_snapshot's rounds: the day's first job and one after the previous, each at niceness 0 (as before)
    and at the app's (core.migrate.NICE), in turn."""
    for r in range(a.during_repeat):
        for first in (False, True):
            for nice in (0, migrate.NICE) if (r + first) % 2 == 0 else (migrate.NICE, 0):
                during_snapshot(pg, dsn, groups_db, nice, first)


if __name__ == "__main__":
    raise SystemExit(main())
