"""Work saved after a groups file's newest backup, read back from the damaged file when the backup is put back:
new versions (whole, with all their labels), new and changed groups, drafts of unsaved work with their steps,
the journal, a topic's assignments and decisions; what cannot be read is named; the damaged file is only read."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core import backup, salvage
from core import db as dbmod
from core.store import DatabaseError, GroupStore
from tests.conftest import ROOT
from tests.test_backup import corpus  # noqa: F401 - the fixture: a corpus folder 'c' and its groups.sqlite

OLD_IN, OLD_OUT = [f"o{i}" for i in range(20_000)], [f"x{i}" for i in range(4_000)]


def at() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def saved_then_backed_up(db: Path) -> GroupStore:
    """A file with a large old group and two small ones, and its backup (taken after the first save)."""
    s = GroupStore(db)
    s.save("old", OLD_IN, OLD_OUT, notes="before")
    backup.settle()
    s.save("gone later", ["g1"], [])
    s.save("kept", ["k1", "k2"], ["k3"])
    s.create_topic("floods", "texts on floods", created_by="lead")
    s.assign("floods", "ann")
    s.set_person("browser-1", "Ann")
    s.sync_draft("tok0", "ann", browser="browser-1", writer="w0", keep=0, steps=[{"step": "z"}], n_included=1,
                 n_excluded=0, saved=False)
    s.decide("floods", {"k2": 1}, who="lead")
    backup.settle()
    for c in backup.copies(db):  # one copy, of all of the above
        c.path.unlink()
    backup.take(db)
    return s


def work_after_the_backup(s: GroupStore) -> None:
    s.save("old", ["o1", "o2", "new1"], ["x1"], overwrite=True, notes="after")
    s.save("new", ["n1", "n2"], ["n3"])
    s.delete("gone later")
    s.sync_draft("tok1", "ann", browser="browser-1", writer="w1", keep=0, steps=[{"step": "a"}, {"step": "b"}],
                 n_included=2, n_excluded=0, saved=False,
                 journal=[{"kind": "apply", "step": "a", "at": at(), "method": "keyword",
                           "changes": [("n1", 0, 1), ("n2", 0, 1)]}])
    s.decide("floods", {"k1": 1, "k3": -1, "k2": None}, who="lead")  # k2's decision taken back
    s.set_person("browser-1", "Ann N.")
    assert s.delete_draft("tok0", "ann")  # discarded


def checkpointed(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)


def overwrite_page(db: Path, table: str, where: float) -> int:
    """Overwrite one leaf page of ``table`` (at ``where``, 0-1, along its pages) with noise, as a bad sector
    or a stray write would; returns the page's number."""
    con = sqlite3.connect(db)
    pages = [p for (p,) in con.execute("SELECT pageno FROM dbstat WHERE name=? AND pagetype='leaf' ORDER BY pageno",
                                       (table,))]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    page = pages[int(where * (len(pages) - 1))]
    with open(db, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(os.urandom(size))
    return page


def left_in_the_log(db: Path) -> None:
    """A change to 'kept' left in the write-ahead log only, as a crash leaves the last saves."""
    left = ("import sqlite3, sys, os\n"
            "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "con.execute('PRAGMA wal_autocheckpoint=0')\n"
            "con.execute(\"UPDATE groups SET notes='only in the log' WHERE name='kept'\")\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", left, str(db)], check=True, timeout=60)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def job(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "precompute.store", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_work_saved_after_the_backup_is_read_back_from_the_damaged_file(corpus):
    s = saved_then_backed_up(corpus)
    work_after_the_backup(s)
    checkpointed(corpus)
    overwrite_page(corpus, "labels", 0.3)  # in the old group's first version, which the backup holds
    with pytest.raises(DatabaseError, match="groups.sqlite is damaged"):
        GroupStore(corpus).load("old", version=1)
    damaged = digest(corpus)

    r = job("restore", "--corpus", "c")
    assert r.returncode == 0, r.stderr
    said = r.stderr
    assert "Read back from the file it replaced, saved after the backup:" in said, said
    assert ("saved after the backup: 2 versions, 7 labels, 1 new group, 2 groups changed (notes, deletion or name), "
            "1 draft of unsaved work, 1 journal entry, 2 labelling events, 2 adjudicator's decisions, 1 name, "
            "2 deletions made after the backup.") in said, said
    assert "Could not be read" not in said, said

    s = GroupStore(corpus)
    old = s.load("old")
    assert (old.number, old.included, old.excluded, old.notes) == (2, ["o1", "o2", "new1"], ["x1"], "after")
    first = s.load("old", version=1)  # from the backup, whole
    assert (first.included, first.excluded) == (OLD_IN, OLD_OUT)
    new = s.load("new")
    assert (new.included, new.excluded) == (["n1", "n2"], ["n3"])
    assert {g.name: g.deleted_at is not None for g in s.list(include_deleted=True)} == \
        {"old": False, "new": False, "kept": False, "gone later": True}, "the deletion after the backup holds"
    draft = s.load_draft("tok1")
    assert draft is not None and draft.steps == ({"step": "a"}, {"step": "b"})
    assert s.load_draft("tok0") is None, "a draft discarded after the backup stays discarded"
    assert s.work_labels("tok1") == {"n1": 1, "n2": 1}, "the draft's journal and its events"
    assert {i: d for i, (d, _, _) in s.decisions("floods").items()} == {"k1": 1, "k3": -1}
    assert s.person("browser-1") == "Ann N."
    aside = [p for p in corpus.parent.glob("groups.sqlite.replaced-*") if not p.name.endswith(("-wal", "-shm"))]
    assert [digest(p) for p in aside] == [damaged], "the damaged file is only read"


def test_a_version_whose_labels_cannot_all_be_read_is_named_and_left_out(corpus):
    s = saved_then_backed_up(corpus)
    s.save("kept", OLD_IN[:8_000], [], overwrite=True)  # version 2, saved after the backup, on pages of its own
    s.save("new", ["n1"], [])
    checkpointed(corpus)
    con = sqlite3.connect(corpus)
    top = con.execute("SELECT MAX(rowid) FROM labels").fetchone()[0]
    con.close()
    overwrite_page(corpus, "labels", 0.9)  # among kept's version 2 labels (the old group's are the first 24,000)
    aside, got = salvage.put_back(corpus, backup.copies(corpus)[0].path)
    assert aside is not None and top > 24_000
    said = got.line()
    assert "version 2 of 'kept' (saved " in said and "Could not be read (1)" in said, said
    assert "1 new group" in said, said
    s = GroupStore(corpus)
    assert s.load("kept").number == 1 and s.load("new").included == ["n1"], "no version is brought back in part"


def test_a_file_cut_short_gives_back_what_lies_before_the_cut_and_names_what_lay_after(corpus):
    """A file cut short (a full disk, a copy stopped) names pages past its end in its schema: SQLite called every
    table "malformed", and nothing was read back. What lies before the cut now comes back; a version past it, and
    its new group with it, is named and left out."""
    s = saved_then_backed_up(corpus)
    s.save("kept", ["k1"], [], overwrite=True, notes="later")  # the groups' page is near the start of the file
    s.save("late", [f"l{i}" for i in range(3_000)], [])  # its labels at the end
    checkpointed(corpus)
    data = corpus.read_bytes()
    corpus.write_bytes(data[:len(data) * 3 // 4])
    aside, got = salvage.put_back(corpus, backup.copies(corpus)[0].path)
    said = got.line()
    assert "1 group changed (notes, deletion or name)" in said and "version 1 of 'late' (saved " in said, said
    s = GroupStore(corpus)
    assert s.load("kept").notes == "later" and "late" not in s.names(), "no group without a version"
    assert s.load("old").included == OLD_IN


def test_work_only_in_the_damaged_file_s_write_ahead_log_is_read_back(corpus):
    """A crash leaves the last saves in the write-ahead log (groups.sqlite-wal); it moves aside with the file and
    is read from there."""
    s = saved_then_backed_up(corpus)
    checkpointed(corpus)
    overwrite_page(corpus, "labels", 0.2)
    left_in_the_log(corpus)
    assert Path(f"{corpus}-wal").stat().st_size > 0
    aside, got = salvage.put_back(corpus, backup.copies(corpus)[0].path)
    assert Path(f"{aside}-wal").exists() and "1 group changed (notes, deletion or name)" in got.line(), got.line()
    assert GroupStore(corpus).load("kept").notes == "only in the log"


def test_a_file_whose_first_page_is_overwritten_is_read_with_the_backup_s_first_page(corpus):
    """The first page holds the header and the list of tables: overwritten (a stray write at the file's start),
    the file read as "not a database" and nothing came back, though every table's pages were there. It is now
    read with the backup's first page (the same tables at the same pages), its write-ahead log too."""
    s = saved_then_backed_up(corpus)
    work_after_the_backup(s)
    checkpointed(corpus)
    left_in_the_log(corpus)
    with open(corpus, "r+b") as f:
        f.write(os.urandom(4096))
    before = digest(corpus)
    aside, got = salvage.put_back(corpus, backup.copies(corpus)[0].path)
    said = got.line()
    assert said.startswith("Read back from the file it replaced, saved after the backup: 2 versions, 7 labels, "
                           "1 new group, 3 groups changed"), said
    assert said.endswith("Could not be read (1): its first page (the list of its tables), read as the backup's."), said
    s = GroupStore(corpus)
    assert (s.load("old").included, s.load("new").included) == (["o1", "o2", "new1"], ["n1", "n2"])
    assert s.load("kept").notes == "only in the log" and "gone later" not in s.names()
    assert digest(aside) == before and sorted(p.name for p in corpus.parent.iterdir() if "first-page" in p.name) == []


@pytest.mark.parametrize("table", ["groups", "versions", "drafts"])
def test_a_table_whose_own_pages_are_all_damaged_comes_back_from_its_index_and_the_other_tables(corpus, table):
    """Every page of the groups' or the versions' table overwritten: versions whose group's row (or their own)
    could not be read were lost whole, labels and all. The ids, names and numbers are also in the index of each
    table's UNIQUE, on pages of its own: a new group comes back by its name, a version by its group, number and
    labels, and only what those lack is named. A draft is named where it cannot be read (it was left out unsaid)."""
    s = saved_then_backed_up(corpus)
    work_after_the_backup(s)
    checkpointed(corpus)
    con = sqlite3.connect(corpus)
    pages = [p for (p,) in con.execute("SELECT pageno FROM dbstat WHERE name=?", (table,))]
    con.close()
    with open(corpus, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * 4096)
            f.write(os.urandom(4096))
    _aside, got = salvage.put_back(corpus, backup.copies(corpus)[0].path)
    said = got.line()
    s = GroupStore(corpus)
    if table == "drafts":
        assert re.search(r"Could not be read \(1\): a draft of unsaved work by ann \(its last step 20[-0-9T:.+]+\)\.$",
                         said), said
        assert not s.drafts("ann", unsaved_only=False)
        return
    assert said.startswith("Read back from the file it replaced, saved after the backup: 2 versions, 7 labels"), said
    assert (s.load("old").included, s.load("old").excluded, s.load("new").included) == \
        (["o1", "o2", "new1"], ["x1"], ["n1", "n2"])
    if table == "groups":
        assert "1 new group" in said and "the notes of group 'new', and whether it was deleted (its name read " \
            "from the index)" in said and "any later change to group 'old'" in said, said
    else:
        assert "the time of version 2 of 'old' (its labels read back, it is dated its group's last save)" in said
        assert (s.load("old").number, s.load("old").notes, s.load("old", 1).included) == (2, "after", OLD_IN)


def test_a_file_that_is_not_the_backup_s_history_or_not_a_database_is_not_read_in(corpus, tmp_path):
    s = saved_then_backed_up(corpus)
    work_after_the_backup(s)
    copy = backup.copies(corpus)[0].path
    other = tmp_path / "other" / "groups.sqlite"  # another corpus's file, its groups created at other times
    other.parent.mkdir()
    o = GroupStore(other)
    o.save("old", ["z"], [])
    o.save("kept", ["z"], [])
    restored = tmp_path / "restored.sqlite"
    restored.write_bytes(copy.read_bytes())
    got = salvage.recover(other, restored)
    assert got.refused.startswith("it is not this backup's own history (group #1 was created at "), got.line()
    assert got.line().startswith("Nothing was read from the file it replaced: it is not this backup's own history")
    assert sqlite3.connect(restored).execute("SELECT COUNT(*) FROM versions").fetchone()[0] == 3, "left as it was"
    noise = tmp_path / "noise.sqlite"
    noise.write_bytes(b"\x00not a database" * 4096)
    for first_page in (None, copy):  # noise with the backup's first page names no group of the backup
        got = salvage.recover(noise, restored, first_page_from=first_page)
        assert got.refused.startswith("it cannot be read at all (file is not a database)"), got.line()
    assert sqlite3.connect(restored).execute("SELECT COUNT(*) FROM versions").fetchone()[0] == 3, "left as it was"


def test_a_damaged_old_version_is_named_on_every_page_and_its_button_reads_the_later_work_back(tweets, monkeypatch):
    """A damaged page among an old version's labels is met only where that version is read (the Groups page's
    Version box): that page names the file and its backup, every page does so from then on, and the button puts
    the backup back with the version saved after it."""
    from streamlit.testing.v1 import AppTest

    from core.corpus import load_corpus
    from ui.text import unescape

    monkeypatch.setattr(dbmod.SQLite, "_backup_checked", {})
    monkeypatch.setattr(dbmod.SQLite, "_damaged", {})
    ids = load_corpus("tweets").frame["id"].astype(str).tolist()
    db = tweets / "tweets" / "groups.sqlite"
    s = GroupStore(db)
    s.save("vaccines", ids[:1500], ids[1500:1900])
    backup.settle()  # the backup holds version 1
    s.save("vaccines", ids[:10], ids[10:12], overwrite=True, notes="after the backup")
    checkpointed(db)
    overwrite_page(db, "labels", 0.5)  # among version 1's labels

    def run(page: str, at: AppTest | None = None) -> tuple[AppTest, str]:
        at = (at or AppTest.from_file(str(ROOT / page), default_timeout=120)).run()
        assert not at.exception, at.exception
        return at, " ".join(unescape(e.value) for e in at.error)

    groups, said = run("pages/5_Groups.py")
    assert said == "", "the latest version reads"
    groups.selectbox(key="gr_version").select(1)
    groups, said = run("", groups)
    assert "groups.sqlite is damaged (database disk image is malformed)" in said, said
    assert [b.key for b in groups.button if b.key == "restore_backup"] == ["restore_backup"]
    annotate, said = run("pages/1_Annotate.py")  # from then on, every page
    assert "groups.sqlite is damaged" in said and "Its newest backup is backups/groups-" in said, said

    groups.button(key="restore_backup").click()
    groups, said = run("", groups)
    assert said == ""
    put_back = " ".join(unescape(x.value) for x in groups.success)
    assert "Read back from the file it replaced, saved after the backup: 1 version, 12 labels, 1 group changed" \
        in put_back, put_back
    s = GroupStore(db)
    assert (s.load("vaccines").included, s.load("vaccines").notes) == (ids[:10], "after the backup")
    assert s.load("vaccines", 1).included == ids[:1500]


def test_a_backup_that_finds_the_file_damaged_names_it_on_every_page_with_the_last_good_copy(corpus, monkeypatch):
    """The half-hourly copy is a check of the file: a copy that does not check out, of a file that does not either,
    names the file as damaged from then on (the work since is still in it to read back), not when an annotator
    happens to open the damaged version; no copy of the damaged file is kept in place of a good one."""
    import time

    monkeypatch.setattr(dbmod.SQLite, "_damaged", {})
    s = GroupStore(corpus)
    s.save("old", OLD_IN, OLD_OUT)
    backup.settle()
    good = backup.copies(corpus)
    checkpointed(corpus)
    overwrite_page(corpus, "labels", 0.5)
    s.db.known_damage()  # not known yet: nothing read the page
    monkeypatch.setattr(dbmod, "BACKUP_CHECK_S", 0.0)
    monkeypatch.setattr(backup, "_now", lambda: time.time() + 2 * backup.EVERY_S)  # a copy is due
    s.save("later", ["l1", "l2"], [])  # a save that does not read the damaged page goes in
    backup.settle()
    assert backup.copies(corpus) == good, "the damaged file's copy is not kept"
    with pytest.raises(dbmod.DamagedFile, match=r"is damaged \(its half-hourly backup found it: .*\).* Its newest "
                                                rf"backup is backups/{good[0].path.name}"):
        GroupStore(corpus).db.known_damage()
    monkeypatch.setattr(dbmod, "BACKUP_CHECK_S", 1e12)  # no copy after the next write: its own check counts
    s.save("more", ["m1"], [])  # another tab writes to it meanwhile: it is still damaged, and still named so
    with pytest.raises(dbmod.DamagedFile, match="its half-hourly backup found it"):
        s.db.known_damage()
    aside, got = salvage.put_back(corpus, good[0].path)
    assert "2 versions, 3 labels, 2 new groups" in got.line(), got.line()
    s = GroupStore(corpus)
    s.db.known_damage()  # the file put back is another: nothing known of it
    assert s.load("later").included == ["l1", "l2"] and s.load("old").included == OLD_IN
