"""Work saved after a groups file's newest backup, read back from the damaged file that backup replaces.

A backup (core/backup.py) is at most half an hour old; what was saved after it is in the damaged file
only. Damage is seldom everywhere: a page overwritten or a file cut short leaves most of it readable. When
a backup is put back, :func:`put_back` reads the file it replaced (read-only: it stays byte for byte, with
its write-ahead log, beside the backup) and brings into the backup what that file holds and the backup
lacks:

* rows added after the backup to the tables that only grow (groups, versions with their labels, the
  journal and its events, topics), known by their ids: a row's id is above the backup's highest (ids are
  handed out in order), and kept, so that every reference between them holds;
* the later state of rows that change (a group's notes, deletion and time; drafts, which hold unsaved
  work, with their steps; annotators' assignments and submissions; an adjudicator's decisions; names).

A version is brought back whole or not at all: all its labels read, as many as it says it holds. What
cannot be read is named (a version of which group, saved when) and left out. A file that is not the
backup's own history (its groups' ids and creation times differ) is not read into it, nor is one that still
checks out (``PRAGMA quick_check``): a backup put back over a sound file goes back to the backup on purpose.
A row of the backup that the damaged file no longer holds (a draft discarded, a decision taken back after the
backup) is removed.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from core import backup
from core.db import SQLite

# the tables whose rows only grow, known by id, in the order their references need
GROWING = ("groups", "topics", "journal", "events", "versions")
# the tables whose rows change, by their keys: where the damaged file's row differs, it is the later one
CHANGING = {"drafts": ("token",), "assignments": ("topic_id", "annotator"), "decisions": ("topic_id", "item_id"),
            "people": ("browser",)}
_NAMED = {"groups": "groups", "topics": "topics", "journal": "journal entries", "events": "labelling events",
          "versions": "versions", "labels": "labels", "drafts": "drafts", "assignments": "assignments",
          "decisions": "decisions", "people": "names", "updated": "groups"}
# how line() says each: (one, many), in the order it says them
_SAID = {"versions": ("version", "versions"), "labels": ("label", "labels"), "groups": ("new group", "new groups"),
         "updated": ("group changed (notes, deletion or name)", "groups changed (notes, deletion or name)"),
         "drafts": ("draft of unsaved work", "drafts of unsaved work"),
         "journal": ("journal entry", "journal entries"), "events": ("labelling event", "labelling events"),
         "topics": ("topic", "topics"), "assignments": ("assignment", "assignments"),
         "decisions": ("adjudicator's decision", "adjudicator's decisions"), "people": ("name", "names"),
         "removed": ("deletion made after the backup", "deletions made after the backup")}


class Refused(ValueError):
    """Nothing of the damaged file is read in: not the backup's own history, no list of groups, a read that
    stopped."""


@dataclass
class Salvage:
    """What :func:`recover` brought back (table -> rows) and what it could not read."""
    brought: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    refused: str = ""  # why nothing was read in (not the same file's history, nothing readable)

    def add(self, what: str, n: int = 1) -> None:
        if n:
            self.brought[what] = self.brought.get(what, 0) + n

    def line(self) -> str:
        if self.refused:
            return f"Nothing was read from the file it replaced: {self.refused}."
        parts = [f"{n:,} {said[n != 1]}" for k, said in _SAID.items() if (n := self.brought.get(k))]
        said = ("Read back from the file it replaced, saved after the backup: " + ", ".join(parts) + "."
                if parts else "The file it replaced held nothing saved after the backup that could be read.")
        if self.lost:
            said += (f" Could not be read ({len(self.lost)}): " + "; ".join(self.lost[:5])
                     + ("; …" if len(self.lost) > 5 else "") + ".")
        return said


def _ro(path: Path) -> sqlite3.Connection:
    """The damaged file, read-only (core.backup.read_only). ``writable_schema`` makes SQLite read a schema that
    names pages past the file's end (a file cut short: every table "malformed" otherwise), so the tables whose
    pages are there can be read; nothing can be written."""
    con = backup.read_only(path)
    con.execute("PRAGMA writable_schema=ON")
    return con


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def _read(src: sqlite3.Connection, sql: str, params: tuple, one_by_one, salvage: Salvage,
          what: str, rescue=None) -> tuple[list, set]:
    """Rows of ``sql``, and the params of those that could not be read; where the damage stops the read, the
    rows one at a time (``one_by_one``: an iterable of (sql, params, name) each reading one row), naming those
    that cannot be read."""
    try:
        return src.execute(sql, params).fetchall(), set()
    except sqlite3.DatabaseError:
        pass
    rows, unread = [], set()
    try:
        singles = list(one_by_one())
    except sqlite3.DatabaseError as exc:
        salvage.lost.append(f"{what} ({exc})")
        return rows, unread
    for one_sql, one_params, name in singles:
        try:
            rows.extend(src.execute(one_sql, one_params).fetchall())
        except sqlite3.DatabaseError:
            if rescue is None or not rescue(one_params):  # a row made again from other pages is not lost
                unread.add(one_params)
                salvage.lost.append(name)
    return rows, unread


def _opened(path: Path) -> tuple[sqlite3.Connection, dict]:
    """``path`` read-only, and the columns of each table salvage reads (none: a table it lacks or cannot name)."""
    src = _ro(path)
    try:
        common = {t: _columns(src, t) for t in (*GROWING, "labels", "draft_steps", *CHANGING)}
        if not common["groups"]:
            raise sqlite3.DatabaseError("it names no table of groups")
    except sqlite3.DatabaseError:
        src.close()
        raise
    return src, common


def grafted(damaged: Path, first_page_from: Path) -> Path:
    """A copy of ``damaged`` (beside it, with its write-ahead log) whose first page is ``first_page_from``'s. The
    first page holds the file's header and the list of its tables (where each table's pages start): overwritten,
    the file reads as "not a database" though every table's pages are there. The backup's first page lists the
    same tables at the same pages, as long as no table was made since (a table's first page never moves);
    what the copy reads is checked against the backup as any damaged file is (``_same_history``)."""
    with open(first_page_from, "rb") as f:
        head = f.read(65536)  # the largest page there is
    size = int.from_bytes(head[16:18], "big")
    size = 65536 if size == 1 else size
    out = Path(damaged).with_name(f"{Path(damaged).name}.first-page-{os.getpid()}")
    shutil.copyfile(damaged, out)
    for extra in ("-wal", "-shm"):
        if Path(f"{damaged}{extra}").is_file():
            shutil.copyfile(f"{damaged}{extra}", f"{out}{extra}")
    page = bytearray(head[:size])
    page[28:32] = (out.stat().st_size // size).to_bytes(4, "big")  # the file's length in pages, not the backup's
    page[92:96] = page[24:28]  # ... taken as valid
    if Path(f"{damaged}-wal").is_file():
        page[18:20] = b"\x02\x02"  # a file in WAL mode (the backup is one file): its log is read
    with open(out, "r+b") as f:
        f.write(page)
    return out


def _remove(path: Path) -> None:
    for extra in ("", "-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


def recover(damaged: Path, into: Path, first_page_from: Path | None = None) -> Salvage:
    """Bring into ``into`` (the backup just put back, its schema current) what ``damaged`` holds that it lacks
    (see the module's docstring). One transaction: ``into`` gets all of it or, on an error, none. A file whose
    first page is damaged is read with that of ``first_page_from`` (the backup's own file: :func:`grafted`)."""
    salvage = Salvage()
    if damaged is None or not Path(damaged).is_file() or Path(damaged).stat().st_size == 0:
        salvage.refused = "there was none, or it was empty"
        return salvage
    graft, unreadable = None, ""
    try:
        src, common = _opened(damaged)
    except sqlite3.DatabaseError as exc:
        unreadable = f"it cannot be read at all ({exc})"
        try:
            if first_page_from is None:
                raise
            graft = grafted(damaged, first_page_from)
            src, common = _opened(graft)
            salvage.lost.append("its first page (the list of its tables), read as the backup's")
        except (sqlite3.DatabaseError, OSError):
            if graft is not None:
                _remove(graft)
            salvage.refused = unreadable
            return salvage
    try:
        with SQLite(into).tx() as db:  # one transaction, foreign keys on
            dst = db.cur
            try:
                here = {t: set(_columns(dst, t)) for t in common}
                common = {t: [c for c in cols if c in here[t]] for t, cols in common.items()}
                if not _same_history(src, dst, common["groups"], salvage) and graft is not None:
                    raise Refused(unreadable)  # noise read with the backup's first page: none of its groups
                tops = {table: _grown(src, dst, table, common, salvage) for table in GROWING}
                # a group brought in none of whose versions could be read is left out (its versions are named)
                salvage.add("groups", -dst.execute("DELETE FROM groups WHERE id > ? AND NOT EXISTS (SELECT 1 FROM "
                                                   "versions v WHERE v.group_id = groups.id)",
                                                   (tops["groups"],)).rowcount)
                for table, keys in CHANGING.items():
                    if common[table]:
                        _changed(src, dst, table, keys, common, salvage)
            except sqlite3.Error as exc:  # a read of the damaged file that stopped (the backup was just checked):
                raise Refused(f"reading it stopped ({exc})") from exc  # not taken for damage of the backup
    except Refused as exc:  # rolled back: the backup stays as it was put back
        salvage.brought.clear()
        salvage.lost.clear()
        salvage.refused = str(exc)
    finally:
        src.close()
        if graft is not None:
            _remove(graft)
    return salvage


def _same_history(src, dst, cols, salvage: Salvage) -> int:
    """Groups the backup holds, as the damaged file holds them (same id, same creation time), brought up
    to their later state there (notes, deletion, name, time); a group created at another time: not the same
    file. Returns how many of the backup's groups were read there."""
    listed = ", ".join(cols)
    at = {c: n for n, c in enumerate(cols)}
    mine = {r[at["id"]]: r for r in dst.execute(f"SELECT {listed} FROM groups")}
    if not mine:
        return 0
    top = max(mine)
    rows, _ = _read(src, f"SELECT {listed} FROM groups WHERE id <= ?", (top,),
                 lambda: ((f"SELECT {listed} FROM groups WHERE id = ?", (i,),
                           f"any later change to group {mine[i][at['name']]!r}") for i in mine),
                 salvage, "the groups of the backup")
    seen = 0
    for row in rows:
        gid = row[at["id"]]
        if gid not in mine:
            continue
        seen += 1
        if row[at["created_at"]] != mine[gid][at["created_at"]]:
            raise Refused(f"it is not this backup's own history (group #{gid} was created at "
                          f"{row[at['created_at']]} there, {mine[gid][at['created_at']]} here)")
        if tuple(row) != tuple(mine[gid]):  # changed after the backup (deleted, put back, saved over, renamed)
            changed = [c for c in cols if c not in ("id", "created_at")]
            try:
                dst.execute(f"UPDATE groups SET {', '.join(c + '=?' for c in changed)} WHERE id=?",
                            [row[at[c]] for c in changed] + [gid])
                salvage.add("updated")
            except sqlite3.IntegrityError:  # renamed to a name another group holds here
                salvage.lost.append(f"the later name, notes or deletion of group {row[at['name']]!r}")
    if rows and not seen:
        raise Refused("none of the backup's groups is in it")
    return seen


def _grown(src, dst, table: str, common, salvage: Salvage) -> int:
    """The rows of ``table`` added after the backup (ids above its highest, which is returned), ids kept."""
    cols = common[table]
    top = dst.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0]
    if "id" not in cols:
        return top
    listed = ", ".join(cols)

    def singles():
        try:  # the ids where the rows' pages are damaged: from the index of the table's UNIQUE (other pages)
            ids = [i for (i,) in src.execute(f"SELECT id FROM {table} INDEXED BY sqlite_autoindex_{table}_1 "
                                             "WHERE id > ?", (top,))]
        except sqlite3.DatabaseError:  # damaged too, or none
            ids = None
        if ids is None:
            ids = range(top + 1, (src.execute(f"SELECT MAX(id) FROM {table}").fetchone()[0] or top) + 1)
        return ((f"SELECT {listed} FROM {table} WHERE id = ?", (i,), f"{_NAMED[table]} #{i}") for i in ids)

    again = {"groups": _group_by_name, "versions": _version_from_labels}.get(table)
    rows, _ = _read(src, f"SELECT {listed} FROM {table} WHERE id > ? ORDER BY id", (top,), singles, salvage,
                    f"the {_NAMED[table]} after #{top}",
                    rescue=(lambda key: again(src, dst, key[0], common, salvage)) if again else None)
    at = {c: n for n, c in enumerate(cols)}
    insert = f"INSERT INTO {table} ({listed}) VALUES ({', '.join('?' * len(cols))})"
    for row in rows:
        labels = _version_labels(src, dst, row, at, common["labels"], salvage) if table == "versions" else None
        if table == "versions" and labels is None:
            continue
        try:
            dst.execute(insert, row)
        except sqlite3.IntegrityError:
            salvage.lost.append(_clash(dst, table, row, at))
            continue
        salvage.add(table)
        if labels:
            _insert_labels(dst, common["labels"], labels, salvage)
    return top


def _insert_labels(dst, cols: list, labels: list, salvage: Salvage) -> None:
    dst.executemany(f"INSERT INTO labels ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", labels)
    salvage.add("labels", len(labels))


def _group_by_name(src, dst, gid: int, _common, salvage: Salvage) -> bool:
    """A group made after the backup whose own row cannot be read, made again from what lies on other pages: its
    corpus and name from the index of names, its annotator and creation time from its first version. Its notes,
    and a deletion, are lost (named). False where even that cannot be read, or the name is the backup's."""
    try:
        corpus, name = src.execute("SELECT corpus, name FROM groups INDEXED BY sqlite_autoindex_groups_1 "
                                   "WHERE id = ?", (gid,)).fetchone()
        annotator, created = src.execute("SELECT annotator, created_at FROM versions WHERE group_id = ? "
                                         "ORDER BY number LIMIT 1", (gid,)).fetchone()
        dst.execute("INSERT INTO groups (id, corpus, name, annotator, notes, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, '', ?, ?)", (gid, corpus, name, annotator, created, created))
    except (sqlite3.DatabaseError, TypeError):  # unreadable, not there (None), or a name the backup holds
        return False
    salvage.add("groups")
    salvage.lost.append(f"the notes of group {name!r}, and whether it was deleted (its name read from the index)")
    return True


def _version_from_labels(src, dst, vid: int, common, salvage: Salvage) -> bool:
    """A version saved after the backup whose own row cannot be read, made again from what lies on other pages:
    its group and number from the index of versions (their UNIQUE (group_id, number)), its labels, its annotator
    from its group. Its time is lost (named): it is dated its group's last save."""
    cols = common["labels"]
    try:
        gid, number = src.execute("SELECT group_id, number FROM versions INDEXED BY sqlite_autoindex_versions_1 "
                                  "WHERE id = ?", (vid,)).fetchone()
        name, annotator, when = dst.execute("SELECT name, annotator, updated_at FROM groups WHERE id = ?",
                                            (gid,)).fetchone()
        labels = src.execute(f"SELECT {', '.join(cols)} FROM labels WHERE version_id = ?", (vid,)).fetchall()
        included = sum(1 for r in labels if r[cols.index("label")] == 1)
        dst.execute("INSERT INTO versions (id, group_id, number, annotator, created_at, n_included, n_excluded) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (vid, gid, number, annotator, when, included,
                                                     len(labels) - included))
    except (sqlite3.DatabaseError, TypeError, ValueError):  # unreadable, not there (None), or not of the backup
        return False
    salvage.add("versions")
    _insert_labels(dst, cols, labels, salvage)
    salvage.lost.append(f"the time of version {number} of {name!r} (its labels read back, it is dated its group's "
                        "last save)")
    return True


def _version_labels(src, dst, row, at, cols, salvage: Salvage) -> list | None:
    """All the labels of a version added after the backup, as many as it holds; or None, and it is named."""
    vid, gid = row[at["id"]], row[at["group_id"]]
    name = dst.execute("SELECT name FROM groups WHERE id=?", (gid,)).fetchone()
    said = f"version {row[at['number']]} of {name[0] if name else f'group #{gid}'!r} (saved {row[at['created_at']]})"
    try:
        labels = src.execute(f"SELECT {', '.join(cols)} FROM labels WHERE version_id = ?", (vid,)).fetchall()
    except sqlite3.DatabaseError:
        labels = None
    if name is None or labels is None or len(labels) != row[at["n_included"]] + row[at["n_excluded"]]:
        salvage.lost.append(said)
        return None
    return labels


def _clash(dst, table: str, row, at) -> str:
    if table == "groups":
        return f"group {row[at['name']]!r} (created {row[at['created_at']]}): the backup has another of that name"
    if table == "topics":
        return f"topic {row[at['name']]!r}: the backup has another of that name"
    return f"{_NAMED[table]} #{row[at['id']]}: it does not fit the backup"


def _draft_named(src, token: str) -> str:
    """A draft that cannot be read, named as its journal (on other pages) knows it: whose, and its last step."""
    try:
        who, at = src.execute("SELECT who, MAX(at) FROM journal WHERE work = ?", (token,)).fetchone()
    except sqlite3.DatabaseError:
        who = at = None
    return f"a draft of unsaved work by {who} (its last step {at})" if who else f"a draft of unsaved work ({token})"


def _changed(src, dst, table: str, keys: tuple, common, salvage: Salvage) -> None:
    """Rows of a table whose rows change: the damaged file's, where they differ from the backup's (or the backup
    lacks them); with drafts, their steps too. A row of the backup that the damaged file no longer holds (a draft
    discarded, a decision taken back after the backup) is deleted; one that cannot be read is left as it is."""
    cols = common[table]
    listed = ", ".join(cols)
    where = " AND ".join(f"{k} = ?" for k in keys)
    at = {c: n for n, c in enumerate(cols)}
    mine = {tuple(r[at[k]] for k in keys): tuple(r) for r in dst.execute(f"SELECT {listed} FROM {table}")}
    # where the damage stops the read: the backup's rows one at a time (rows it lacks cannot be found so)
    def singles():
        try:  # the keys alone, from the index of the table's key where the rows' own pages are damaged
            keys_there = [tuple(k) for k in src.execute(f"SELECT {', '.join(keys)} FROM {table} "
                                                        f"ORDER BY {', '.join(keys)}")]
        except sqlite3.DatabaseError:
            keys_there = []
        return ((f"SELECT {listed} FROM {table} WHERE {where}", k, f"any later change to {table} {k!r}" if k in mine
                 else _draft_named(src, k[0]) if table == "drafts"
                 else f"one of the {_NAMED[table]} ({', '.join(map(str, k))})")
                for k in [*mine, *(k for k in keys_there if k not in mine)])

    rows, unread = _read(src, f"SELECT {listed} FROM {table}", (), singles, salvage, f"the {_NAMED[table]}")
    gone = set(mine) - unread - {tuple(row[at[k]] for k in keys) for row in rows}
    for k in gone:
        if table == "drafts":
            dst.execute("DELETE FROM draft_steps WHERE token = ?", k)
        dst.execute(f"DELETE FROM {table} WHERE {where}", k)
    salvage.add("removed", len(gone))
    for row in rows:
        key = tuple(row[at[k]] for k in keys)
        if mine.get(key) == tuple(row):
            continue
        steps = None
        if table == "drafts":
            try:
                steps = src.execute("SELECT token, seq, step_json FROM draft_steps WHERE token = ?", key).fetchall()
            except sqlite3.DatabaseError:
                salvage.lost.append(f"the draft of {row[at['owner']]} saved {row[at['updated_at']]}")
                continue
        try:
            dst.execute(f"INSERT OR REPLACE INTO {table} ({listed}) VALUES ({', '.join('?' * len(cols))})", row)
        except sqlite3.IntegrityError:  # a topic the backup lacks and that could not be read
            salvage.lost.append(f"{_NAMED[table]} {key!r}: it does not fit the backup")
            continue
        if steps is not None:
            dst.execute("DELETE FROM draft_steps WHERE token = ?", key)
            dst.executemany("INSERT INTO draft_steps (token, seq, step_json) VALUES (?, ?, ?)", steps)
        salvage.add(table)


def put_back(db: Path, copy: Path, damaged: bool | None = None):
    """Put ``copy`` back as ``db`` (core.backup.restore: the file it replaces kept beside it), bring its
    schema up to date, and, where the file it replaces is damaged, read into it what that file holds and it
    lacks. A file that still checks out is replaced on purpose (to go back to the backup, ``--yes``): nothing
    of it is read in. ``damaged``: what the caller already knows of the file (its check is not run again); by
    default it is checked (``PRAGMA quick_check``: 0.3 s on a groups file of 91 MB). Returns (the replaced file
    or None, Salvage)."""
    if damaged is None:  # emptied counts as damaged
        damaged = Path(db).exists() and (Path(db).stat().st_size == 0 or not backup.sound(db))
    aside = backup.restore(db, copy)
    SQLite(db)  # opened as the app opens it: WAL mode, the schema brought up to date
    if aside is not None and not damaged:
        return aside, Salvage(refused="it still checked out, and the backup was put back over it on purpose")
    return aside, recover(aside, db, first_page_from=copy)
