"""Backups of a corpus's groups file: taken after writes, checked, kept to a number, and put back by the
store's job or a page's button when the file is damaged, emptied or deleted, the file replaced kept."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import backup
from core import db as dbmod
from core.store import DatabaseError, GroupStore
from tests.conftest import ROOT


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A data root with one corpus folder ('c'), as $SEMANNO_DATA; a fresh backup clock for its file."""
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    monkeypatch.delenv("SEMANNO_DB", raising=False)
    monkeypatch.setattr(dbmod.SQLite, "_backup_checked", {})
    (tmp_path / "c").mkdir()
    return tmp_path / "c" / "groups.sqlite"


def job(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "precompute.store", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def replaced(db: Path) -> list[Path]:
    """The files a restore moved aside (without their -wal and -shm)."""
    return [a for a in sorted(db.parent.glob(f"{db.name}.replaced-*")) if not a.name.endswith(("-wal", "-shm"))]


def test_a_write_takes_a_checked_backup_and_the_newest_are_kept(corpus, monkeypatch):
    s = GroupStore(corpus)
    assert backup.copies(corpus) == [], "opening a file is no write"
    s.save("a", ["1", "2"], [])
    backup.settle()  # the copy is taken on a thread of its own
    first = backup.copies(corpus)
    assert len(first) == 1 and backup.count_groups(first[0].path) == 1
    s.save("b", ["3"], [])
    assert backup.copies(corpus) == first, "not again within the half hour"
    # half an hour later each write takes one; no more than KEEP are kept, the newest
    monkeypatch.setattr(dbmod, "BACKUP_CHECK_S", 0.0)
    clock = [first[0].made.timestamp()]
    monkeypatch.setattr(backup, "_now", lambda: clock[0])
    stale, fresh = backup.folder(corpus) / ".groups-killed.part", backup.folder(corpus) / ".groups-copying.part"
    end = clock[0] + (backup.KEEP + 2) * backup.EVERY_S  # the clock at the last save below
    for part, at in ((stale, clock[0] - 2 * 3600), (fresh, end)):  # left by a killed process; being written now
        part.write_bytes(b"half")
        os.utime(part, (at, at))
    for i in range(backup.KEEP + 2):
        clock[0] += backup.EVERY_S
        s.save(f"g{i}", [str(i)], [])
        backup.settle()
    kept = backup.copies(corpus)
    assert len(kept) == backup.KEEP and first[0].path not in [k.path for k in kept]
    assert backup.count_groups(kept[0].path) == 2 + backup.KEEP + 2, "the newest holds every group saved"
    assert [k.made for k in kept] == sorted((k.made for k in kept), reverse=True)
    con = sqlite3.connect(kept[0].path)  # one file, whole: no write-ahead log beside it is needed
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert list(backup.folder(corpus).glob(".*")) == [fresh], "a part-written copy left by a killed process goes"


def test_copies_of_a_large_file_keep_to_their_room_and_the_newest_two_stay(corpus, monkeypatch):
    GroupStore(corpus).save("g", [str(i) for i in range(5000)], [])
    backup.settle()
    con = sqlite3.connect(corpus)  # the log into the file: take() counts both, and a checkpoint between takes
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # would move the size the room is measured by
    con.close()
    size = corpus.stat().st_size + backup._wal_size(corpus)
    monkeypatch.setattr(backup, "ROOM_FLOOR", 0)
    monkeypatch.setattr(backup, "ROOM_TIMES", 3.5)  # room for three copies of this file, not the eight kept else
    t0 = backup.copies(corpus)[0].made.timestamp()
    for k in range(1, 6):
        backup.take(corpus, now=t0 + k * backup.EVERY_S)
    kept = backup.copies(corpus)
    assert len(kept) == 3 and kept[0].made.timestamp() == t0 + 5 * backup.EVERY_S
    assert sum(c.size for c in kept) <= 3.5 * size
    monkeypatch.setattr(backup, "ROOM_TIMES", 0.1)  # no room for even one: the newest two stay all the same
    backup.take(corpus, now=t0 + 6 * backup.EVERY_S)
    assert len(backup.copies(corpus)) == 2


def test_a_save_does_not_wait_for_its_copy_and_one_copy_is_taken_at_a_time(corpus, monkeypatch):
    import threading

    release, started = threading.Event(), []
    take = backup.take

    def slow_take(db, keep=None, now=None):  # a large file's copy: half a second at 91 MB
        started.append(db)
        release.wait(30)
        return take(db, keep, now)

    monkeypatch.setattr(backup, "take", slow_take)
    monkeypatch.setattr(dbmod, "BACKUP_CHECK_S", 0.0)
    s = GroupStore(corpus)
    try:
        s.save("a", ["1"], [])  # returns while its copy waits
        s.save("b", ["2"], [])  # a copy is due still (none is written yet), but one is being taken
        assert started == [corpus] and backup.copies(corpus) == [] and sorted(s.names()) == ["a", "b"]
    finally:
        release.set()
        backup.settle()
    assert len(backup.copies(corpus)) == 1 and backup._running == {}


def test_a_backup_that_cannot_be_taken_never_fails_the_save(corpus, monkeypatch, caplog):
    monkeypatch.setattr(backup.shutil, "disk_usage", lambda p: type("U", (), {"free": 10})())
    s = GroupStore(corpus)
    with caplog.at_level(logging.WARNING):
        assert s.save("a", ["1"], []) == 1
        backup.settle()
    assert s.load("a").included == ["1"] and backup.copies(corpus) == []
    assert "no backup of" in caplog.text and "no room for a copy of groups.sqlite" in caplog.text


@pytest.mark.parametrize("loss", ["damaged", "empty", "missing"])
def test_a_lost_file_is_not_started_afresh_and_the_job_puts_the_newest_backup_back(corpus, loss):
    s = GroupStore(corpus)
    s.save("kept", ["1", "2"], ["3"], notes="mine")
    backup.settle()
    for extra in ("-wal", "-shm"):
        Path(f"{corpus}{extra}").unlink(missing_ok=True)
    if loss == "missing":
        corpus.unlink()
    else:
        corpus.write_bytes(b"" if loss == "empty" else b"\x00not a database" * 4096)
    before = corpus.read_bytes() if corpus.exists() else None
    newest = backup.copies(corpus)[0]
    with pytest.raises(DatabaseError) as err:
        GroupStore(corpus)
    said = str(err.value)
    assert f"groups.sqlite {'is damaged (file is not a database)' if loss == 'damaged' else 'is ' + loss}" in said
    assert f"backups/{newest.path.name}" in said and "python -m precompute.store restore --corpus c" in said
    assert (corpus.read_bytes() if corpus.exists() else None) == before, "the file is left as it was"

    r = job("backups", "--corpus", "c")
    assert r.returncode == 0 and newest.path.name in r.stdout and "1 saved groups" in r.stdout, r.stdout
    r = job("restore", "--corpus", "c")
    assert r.returncode == 0, r.stderr
    g = GroupStore(corpus).load("kept")
    assert (g.included, g.excluded, g.notes) == (["1", "2"], ["3"], "mine")
    aside = replaced(corpus)
    if loss == "missing":
        assert aside == [] and "kept as" not in r.stderr
    else:
        assert [a.read_bytes() for a in aside] == [before] and f"kept as {aside[0]}" in r.stderr
        assert "Nothing was read from the file it replaced: " + (
            "there was none, or it was empty" if loss == "empty" else "it cannot be read at all") in r.stderr, r.stderr
    assert newest.path.exists(), "the backup stays where it is"


def test_without_backups_an_absent_file_is_a_new_corpus_and_a_damaged_one_says_so(corpus):
    assert GroupStore(corpus).names() == [] and backup.copies(corpus) == []
    corpus.unlink()
    corpus.write_bytes(b"")  # emptied before anything was saved: nothing to put back, a new file
    assert GroupStore(corpus).names() == []
    for extra in ("-wal", "-shm"):
        Path(f"{corpus}{extra}").unlink(missing_ok=True)
    corpus.write_bytes(b"\x00not a database" * 4096)
    with pytest.raises(DatabaseError, match=r"is damaged \(file is not a database\); nothing was written to it\. "
                                            r"Restore it from a backup, or rename it"):
        GroupStore(corpus)
    r = job("restore", "--corpus", "c")
    assert r.returncode == 2 and f"no backups of {corpus}" in r.stderr


def test_the_restore_job_replaces_a_file_with_groups_only_when_told(corpus, monkeypatch):
    s = GroupStore(corpus)
    s.save("old", ["1"], [])
    backup.settle()
    s.save("new", ["2"], [])  # after the backup: the backup lacks it
    r = job("restore", "--corpus", "c")
    assert r.returncode == 2 and "still reads and holds 2 saved groups" in r.stderr and "--yes" in r.stderr
    assert sorted(GroupStore(corpus).names()) == ["new", "old"]
    r = job("restore", "--corpus", "c", "--backup", "nothing.sqlite")
    assert r.returncode == 2 and "--backup nothing.sqlite: no such file" in r.stderr
    r = job("restore", "--corpus", "c", "--beside")
    assert r.returncode == 2 and "--beside is for a team's PostgreSQL snapshots" in r.stderr
    r = job("restore", "--corpus", "c", "--backup", backup.copies(corpus)[0].path.name, "--yes")
    assert r.returncode == 0, r.stderr
    assert GroupStore(corpus).names() == ["old"], "going back to a backup on purpose reads nothing back"
    assert "Nothing was read from the file it replaced: it still checked out, and the backup was put back over " \
        "it on purpose" in r.stderr, r.stderr
    aside = replaced(corpus)
    assert len(aside) == 1 and sorted(GroupStore(aside[0]).names()) == ["new", "old"], "the file replaced is kept"
    monkeypatch.setenv("SEMANNO_DB", "postgresql://u@127.0.0.1:1/x")
    r = job("restore", "--corpus", "c")  # a team's server: its snapshots are put back, not the SQLite file's copies
    assert r.returncode == 2 and "no snapshots of corpus c's groups (python -m precompute.store snapshot" in r.stderr


TAKER = """
import sys
from pathlib import Path
from core import backup
print("copying", flush=True)
backup.take(Path(sys.argv[1]))
print("done", flush=True)
"""


def test_a_copy_killed_halfway_leaves_no_copy_named_and_the_file_as_it_was(corpus, monkeypatch):
    """A process killed while it copies (the server stopped, the machine off): the copy was written under a hidden
    part-name, so no half copy is ever listed or put back, and the groups file was only read."""
    import signal
    import time

    from bench.backup import build

    import shutil

    build(corpus, 12, 3, 10_000)  # about 16 MB: a copy takes a tenth of a second or more
    backup.settle()
    shutil.rmtree(backup.folder(corpus))  # the first save's copy: each copy below is to hold every group
    before = {n: GroupStore(corpus).load(n).included for n in GroupStore(corpus).names()}
    killed = 0
    for delay in (0.0, 0.03, 0.06, 0.12):
        p = subprocess.Popen([sys.executable, "-c", TAKER, str(corpus)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline() == "copying\n"
        time.sleep(delay)  # into the copy, or its check
        p.send_signal(signal.SIGKILL)
        p.wait(30)
        killed += p.stdout.read() != "done\n"
        for c in backup.copies(corpus):  # whatever is listed is whole
            con = sqlite3.connect(c.path)
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert con.execute("SELECT COUNT(*) FROM groups").fetchone()[0] == len(before)
            con.close()
    assert killed, "no copy was killed halfway: the test slept too long"
    after = GroupStore(corpus)
    assert {n: after.load(n).included for n in after.names()} == before


LEFT_IN_LOG = """
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA wal_autocheckpoint=0")
con.execute("UPDATE groups SET notes='only in the log'")
os._exit(0)  # killed: the write is in the write-ahead log, never checkpointed into the file
"""


def test_a_copy_reads_what_is_only_in_the_log_and_never_writes_the_file_it_copies(corpus):
    """The copy is of what was committed, the write-ahead log included; its connection is read-only, so it never
    checkpoints that log into the file (a test damaged the file while a copy ran, and the copy's connection,
    closing last, wrote the log's pages into it)."""
    import shutil

    GroupStore(corpus).save("g", ["1"], [])
    backup.settle()
    shutil.rmtree(backup.folder(corpus))
    subprocess.run([sys.executable, "-c", LEFT_IN_LOG, str(corpus)], check=True, timeout=60)
    assert Path(f"{corpus}-wal").stat().st_size > 0
    before = corpus.read_bytes()
    copy = backup.take(corpus)
    assert corpus.read_bytes() == before, "the file it copies is never written"
    con = sqlite3.connect(copy)
    assert con.execute("SELECT notes FROM groups").fetchone()[0] == "only in the log"
    con.close()
