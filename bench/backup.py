"""What the groups file's backups cost (core/backup.py): a save when no copy is due, a save that starts one
(taken on a thread of its own), a save while one is taken, a copy alone, putting one back, and putting one
back over a damaged file with the work saved after it read back (core/salvage.py), on a groups file of a
team's size. Medians of --repeat runs.

    python -m bench.backup [--groups 40] [--versions 5] [--labels 10000] [--repeat 5]

Prints one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from core import backup
from core import db as dbmod
from core.store import GroupStore


def build(path: Path, groups: int, versions: int, labels: int) -> GroupStore:
    s = GroupStore(path)
    for g in range(groups):
        for v in range(versions):
            inc = [f"{g}-{v}-{i}" for i in range(labels)]
            s.save(f"group {g}", inc, [f"x{g}-{v}"], overwrite=True)
    return s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.backup", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--groups", type=int, default=40)
    p.add_argument("--versions", type=int, default=5)
    p.add_argument("--labels", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-backup-") as tmp:
        db = Path(tmp) / "c" / "groups.sqlite"
        backup.EVERY_S = 1e12  # no copy after the first save's
        t = time.perf_counter()
        s = build(db, a.groups, a.versions, a.labels)
        built = time.perf_counter() - t
        backup.settle()
        shutil.rmtree(backup.folder(db))
        size = db.stat().st_size + backup._wal_size(db)
        print(json.dumps({"step": "built", "groups": a.groups, "versions": a.versions, "labels_per_version": a.labels,
                          "mb": round(size / 1e6, 1), "s": round(built, 1)}))
        one = [f"r{i}" for i in range(a.labels)]

        def save_ms(due: bool) -> float:
            dbmod.BACKUP_CHECK_S = 0.0 if due else 1e12
            dbmod.SQLite._backup_checked.clear()
            backup.EVERY_S = 0.0 if due else 1e12
            t = time.perf_counter()
            s.save("timed", one, [], overwrite=True)
            return (time.perf_counter() - t) * 1e3

        def timed(fn) -> list[float]:
            out = []
            for _ in range(a.repeat):
                t = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t) * 1e3)
                time.sleep(1.05)  # copies are named by the second
            return out

        plain = [save_ms(False) for _ in range(a.repeat)]
        with_copy, beside, its_copy = [], [], []
        for _ in range(a.repeat):
            with_copy.append(save_ms(True))  # the copy starts on its own thread
            t = time.perf_counter()
            beside.append(save_ms(False))  # another save while it is taken
            backup.settle()
            its_copy.append((time.perf_counter() - t) * 1e3)
            time.sleep(1.05)
        copy = timed(lambda: backup.take(db))
        newest = backup.copies(db)[0].path
        put_back = timed(lambda: backup.restore(db, newest))
        for step, ms in (("save, no copy due", plain), ("save that starts a copy (on its thread)", with_copy),
                         ("a save while the copy is taken", beside),
                         ("from the save's return to the copy in place", its_copy),
                         ("a copy alone (backup.take)", copy), ("putting one back (backup.restore)", put_back)):
            print(json.dumps({"step": step, "median_ms": round(statistics.median(ms), 1),
                              "runs_ms": [round(x, 1) for x in ms]}))
        print(json.dumps({"step": "kept", "copies": len(backup.copies(db)), "keep": backup.KEEP}))
        read_back(db, s, a)
    return 0


def read_back(db: Path, s: GroupStore, a) -> None:
    """Putting a copy back over a damaged file, reading back what was saved after the copy
    (core.salvage.put_back): five versions of 10,000 labels and a deleted group saved after it, with one page of an
    older version's labels overwritten with noise, or the first page, or every page of the versions' table; and
    the soundness check (PRAGMA quick_check) that decides it."""
    import os
    import sqlite3

    from core import salvage

    backup.EVERY_S = 1e12
    newest = backup.take(db)
    for v in range(5):
        s.save(f"after {v}", [f"a{v}-{i}" for i in range(a.labels)], [], overwrite=True)
    s.delete("group 0")
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cases = {"a page of an older version's labels": [con.execute(
                 "SELECT pageno FROM dbstat WHERE name='labels' AND pagetype='leaf' ORDER BY pageno LIMIT 1 OFFSET 100"
             ).fetchone()[0]],
             "the first page (the list of tables: read with the backup's)": [1],
             "every page of the versions' table (versions made again from their labels)":
                 [p for (p,) in con.execute("SELECT pageno FROM dbstat WHERE name='versions'")]}
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    sound = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        assert backup.sound(db)
        sound.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"step": "is the file sound? (backup.sound, quick_check)", "median_ms": round(statistics.median(
        sound), 1), "runs_ms": [round(x, 1) for x in sound]}))
    template = db.with_name("sound.template")
    shutil.copyfile(db, template)
    damaged = db.with_name("damaged.template")
    for case, pages in cases.items():
        shutil.copyfile(template, damaged)
        with open(damaged, "r+b") as f:
            for page in pages:
                f.seek((page - 1) * size)
                f.write(os.urandom(size))
        runs, said = [], ""
        for _ in range(a.repeat):
            for extra in ("", "-wal", "-shm"):
                Path(f"{db}{extra}").unlink(missing_ok=True)
            shutil.copyfile(damaged, db)
            t = time.perf_counter()
            _, got = salvage.put_back(db, newest)
            runs.append((time.perf_counter() - t) * 1e3)
            said = got.line()
            time.sleep(1.05)  # the replaced files are named by the second
        print(json.dumps({"step": "putting one back over a damaged file, reading back the work after it "
                                  f"(salvage.put_back): {case}", "median_ms": round(statistics.median(runs), 1),
                          "runs_ms": [round(x, 1) for x in runs], "said": said}))


if __name__ == "__main__":
    raise SystemExit(main())
