"""Saved groups in SQLite (one database per corpus, WAL mode, every save one transaction).

A group has a unique name per corpus, an annotator, notes, timestamps, and versions: every save
adds a version with its labels (corpus id, included/excluded) and the session's history, so no
earlier version is ever lost. Deleting is soft (``deleted_at``) and can be undone.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Sequence

SCHEMA = """
CREATE TABLE IF NOT EXISTS groups (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    annotator TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    group_id INTEGER NOT NULL REFERENCES groups(id),
    number INTEGER NOT NULL,
    annotator TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    n_included INTEGER NOT NULL,
    n_excluded INTEGER NOT NULL,
    session_json TEXT,
    saved_by TEXT,
    UNIQUE (group_id, number)
);
CREATE TABLE IF NOT EXISTS labels (
    version_id INTEGER NOT NULL REFERENCES versions(id),
    item_id TEXT NOT NULL,
    label INTEGER NOT NULL CHECK (label IN (1, -1)),
    PRIMARY KEY (version_id, item_id)
);
CREATE TABLE IF NOT EXISTS drafts (
    token TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    n_included INTEGER NOT NULL,
    n_excluded INTEGER NOT NULL,
    saved INTEGER NOT NULL DEFAULT 0,
    meta_json TEXT NOT NULL DEFAULT '{}',
    session_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS draft_steps (
    token TEXT NOT NULL REFERENCES drafts(token) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    step_json TEXT NOT NULL,
    PRIMARY KEY (token, seq)
);
"""
# columns added to tables of older databases: (table, column, definition)
MIGRATIONS = [("versions", "saved_by", "TEXT"),
              ("drafts", "browser", "TEXT NOT NULL DEFAULT ''"),
              ("drafts", "writer", "TEXT NOT NULL DEFAULT ''"),
              ("drafts", "created_at", "TEXT")]

# Drafts are pruned when saved (or empty) and untouched for SAVED_DRAFT_DAYS, and whatever they hold
# when untouched for ABANDONED_DRAFT_DAYS (README: "Drafts"); never an unsaved one younger than that.
SAVED_DRAFT_DAYS = 1
ABANDONED_DRAFT_DAYS = 30


class GroupExists(ValueError):
    """A group of that name exists; the caller must choose overwrite (new version) or a new name."""

    def __init__(self, name: str):
        super().__init__(f"a group named {name!r} exists; overwrite it (a new version) or choose another name")
        self.name = name


MAX_NAME_CHARS = 120


def check_group_name(name: object) -> str:
    """The name, stripped; ValueError when it is empty, invisible, too long or holds control
    characters (a name is shown in lists and becomes an export's file name)."""
    if not isinstance(name, str):
        raise ValueError(f"a group name must be text, got {type(name).__name__}")
    name = name.strip()
    if not name:
        raise ValueError("a group needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"a group name may have at most {MAX_NAME_CHARS} characters; this one has {len(name):,}")
    bad = [c for c in name if unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn")]
    if bad:
        raise ValueError(f"a group name cannot hold control characters (found U+{ord(bad[0]):04X})")
    if all(unicodedata.category(c) in ("Cf", "Zs", "Zl", "Zp", "Mn", "Me") for c in name):
        raise ValueError("a group name needs at least one visible character")
    return name


class GroupNotFound(KeyError):
    pass


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class GroupInfo:
    name: str
    annotator: str
    notes: str
    created_at: str
    updated_at: str
    deleted_at: str | None
    versions: int
    n_included: int
    n_excluded: int


@dataclass(frozen=True)
class GroupVersion:
    name: str
    number: int
    annotator: str
    created_at: str
    included: list[str]
    excluded: list[str]
    session_json: str | None
    notes: str
    saved_by: str | None = None  # the signed-in identity that saved this version, when sign-in is on


@dataclass(frozen=True)
class Draft:
    """The group a user was building, autosaved after every change (one per browser tab): the steps
    of its session, appended as they happen (a click writes one small row, however large the group)."""

    token: str
    owner: str
    updated_at: str
    n_included: int
    n_excluded: int
    saved: bool  # True when it equals what was last saved or opened: nothing would be lost
    meta: dict  # the save form's fields: name, annotator, notes
    session_json: str  # drafts written before steps were stored one by one: the whole session; else ""
    browser: str = ""  # the browser that wrote it (a hash; "" when unknown)
    steps: tuple = ()  # the session's history, step by step (dicts), when read with its steps


class GroupStore:
    def __init__(self, path: str | Path, timeout_s: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.timeout_s = timeout_s
        self._pruned_at = 0.0
        con = self._connect()
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(SCHEMA)
            for table, column, definition in MIGRATIONS:  # databases made by earlier versions
                if column not in {r[1] for r in con.execute(f"PRAGMA table_info({table})")}:
                    con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        finally:
            con.close()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA synchronous=FULL")
        return con

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: writers queue instead of failing)."""
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            yield con
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()

    def save(self, name: str, included: Sequence[str], excluded: Sequence[str], *, annotator: str = "",
             notes: str | None = None, session_json: str | None = None, overwrite: bool = False,
             saved_by: str | None = None) -> int:
        """Save a new version of group ``name``; return its version number.

        With ``overwrite=False`` an existing live group raises GroupExists. Overwriting adds a
        version: earlier versions stay readable through ``load(name, version=N)``.
        """
        name = check_group_name(name)
        inc, exc = [str(i) for i in included], [str(i) for i in excluded]
        both = set(inc) & set(exc)
        if both:
            raise ValueError(f"ids both included and excluded: {sorted(both)[:5]}")
        now = _now()
        with self._tx() as con:
            row = con.execute("SELECT id, deleted_at FROM groups WHERE name=?", (name,)).fetchone()
            if row and row[1] is None and not overwrite:
                raise GroupExists(name)
            if row:
                gid = row[0]
                con.execute("UPDATE groups SET updated_at=?, deleted_at=NULL, annotator=?"
                            + (", notes=?" if notes is not None else "") + " WHERE id=?",
                            (now, annotator, notes, gid) if notes is not None else (now, annotator, gid))
            else:
                gid = con.execute("INSERT INTO groups (name, annotator, notes, created_at, updated_at) "
                                  "VALUES (?, ?, ?, ?, ?)", (name, annotator, notes or "", now, now)).lastrowid
            number = con.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE group_id=?",
                                 (gid,)).fetchone()[0]
            vid = con.execute("INSERT INTO versions (group_id, number, annotator, created_at, n_included, "
                              "n_excluded, session_json, saved_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              (gid, number, annotator, now, len(inc), len(exc), session_json, saved_by)).lastrowid
            con.executemany("INSERT INTO labels (version_id, item_id, label) VALUES (?, ?, ?)",
                            [(vid, i, 1) for i in inc] + [(vid, i, -1) for i in exc])
        return number

    def list(self, include_deleted: bool = False) -> list[GroupInfo]:
        con = self._connect()
        try:
            rows = con.execute(
                "SELECT g.name, g.annotator, g.notes, g.created_at, g.updated_at, g.deleted_at, "
                "COUNT(v.id), "
                "(SELECT n_included FROM versions WHERE group_id=g.id ORDER BY number DESC LIMIT 1), "
                "(SELECT n_excluded FROM versions WHERE group_id=g.id ORDER BY number DESC LIMIT 1) "
                "FROM groups g LEFT JOIN versions v ON v.group_id=g.id "
                + ("" if include_deleted else "WHERE g.deleted_at IS NULL ")
                + "GROUP BY g.id ORDER BY g.updated_at DESC").fetchall()
        finally:
            con.close()
        return [GroupInfo(*r[:6], int(r[6]), int(r[7] or 0), int(r[8] or 0)) for r in rows]

    def names(self) -> list[str]:
        return [g.name for g in self.list()]

    def load(self, name: str, version: int | None = None) -> GroupVersion:
        con = self._connect()
        try:
            g = con.execute("SELECT id, notes FROM groups WHERE name=?", (name,)).fetchone()
            if not g:
                raise GroupNotFound(name)
            q = ("SELECT id, number, annotator, created_at, session_json, saved_by FROM versions WHERE group_id=? "
                 + ("AND number=?" if version else "ORDER BY number DESC LIMIT 1"))
            v = con.execute(q, (g[0], version) if version else (g[0],)).fetchone()
            if not v:
                raise GroupNotFound(f"{name} version {version}")
            labels = con.execute("SELECT item_id, label FROM labels WHERE version_id=? ORDER BY rowid",
                                 (v[0],)).fetchall()
        finally:
            con.close()
        return GroupVersion(name, v[1], v[2], v[3], [i for i, lab in labels if lab == 1],
                            [i for i, lab in labels if lab == -1], v[4], g[1], v[5])

    def versions(self, name: str) -> list[tuple[int, str, str, int, int]]:
        con = self._connect()
        try:
            return con.execute("SELECT v.number, v.created_at, v.annotator, v.n_included, v.n_excluded "
                               "FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.name=? "
                               "ORDER BY v.number", (name,)).fetchall()
        finally:
            con.close()

    def delete(self, name: str) -> None:
        """Soft delete: hidden from the list, restorable with ``restore``."""
        with self._tx() as con:
            if con.execute("UPDATE groups SET deleted_at=? WHERE name=? AND deleted_at IS NULL",
                           (_now(), name)).rowcount == 0:
                raise GroupNotFound(name)

    def restore(self, name: str) -> None:
        with self._tx() as con:
            if con.execute("UPDATE groups SET deleted_at=NULL WHERE name=? AND deleted_at IS NOT NULL",
                           (name,)).rowcount == 0:
                raise GroupNotFound(name)

    # --- drafts: autosaved work in progress ------------------------------------------------
    # A draft belongs to its owner (the signed-in user, or "local") and to the browser that wrote it,
    # and one browser session at a time writes it (``writer``): a second tab that opens the same URL
    # takes the draft over, and the first one goes on under a new token. Tokens are made by the
    # server; a token a client makes up is never found here, so it gives nothing.

    def sync_draft(self, token: str, owner: str, *, browser: str, writer: str, keep: int, steps: Sequence[dict],
                   n_included: int, n_excluded: int, saved: bool, meta: dict | None = None) -> bool:
        """Bring the draft ``token`` in step with a session: its first ``keep`` steps stay, later ones are
        replaced by ``steps``. Creates the draft when it does not exist. False, and nothing written,
        when the draft belongs to another owner or another writer took it over."""
        now = _now()
        with self._tx() as con:
            row = con.execute("SELECT owner, writer FROM drafts WHERE token=?", (token,)).fetchone()
            if row is None:
                con.execute("INSERT INTO drafts (token, owner, browser, writer, created_at, updated_at, n_included, "
                            "n_excluded, saved, meta_json, session_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')",
                            (token, owner, browser, writer, now, now, n_included, n_excluded, int(saved),
                             json.dumps(meta or {})))
            elif row[0] != owner or row[1] != writer:
                return False
            else:
                con.execute("UPDATE drafts SET updated_at=?, n_included=?, n_excluded=?, saved=?, meta_json=?, "
                            "session_json='' WHERE token=?",
                            (now, n_included, n_excluded, int(saved), json.dumps(meta or {}), token))
            con.execute("DELETE FROM draft_steps WHERE token=? AND seq>=?", (token, keep))
            con.executemany("INSERT INTO draft_steps (token, seq, step_json) VALUES (?, ?, ?)",
                            [(token, keep + i, json.dumps(step, ensure_ascii=False)) for i, step in enumerate(steps)])
        return True

    def claim_draft(self, token: str, owner: str, *, browser: str, writer: str, any_browser: bool = False
                    ) -> Draft | None:
        """The draft with its steps, now written by ``writer`` (this browser session), when it belongs
        to ``owner`` and, unless ``any_browser`` (a signed-in user on another machine), to ``browser``;
        otherwise None and nothing changes."""
        with self._tx() as con:
            r = con.execute(f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE token=?", (token,)).fetchone()
            if r is None or r[1] != owner or (not any_browser and r[8] != browser):
                return None
            con.execute("UPDATE drafts SET writer=? WHERE token=?", (writer, token))
            steps = tuple(json.loads(j) for (j,) in con.execute(
                "SELECT step_json FROM draft_steps WHERE token=? ORDER BY seq", (token,)))
        return dataclasses.replace(_draft(r), steps=steps)

    def load_draft(self, token: str) -> Draft | None:
        """The draft with its steps (no ownership check: for the owner's own code paths and tests)."""
        con = self._connect()
        try:
            r = con.execute(f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE token=?", (token,)).fetchone()
            steps = tuple(json.loads(j) for (j,) in con.execute(
                "SELECT step_json FROM draft_steps WHERE token=? ORDER BY seq", (token,))) if r else ()
        finally:
            con.close()
        return dataclasses.replace(_draft(r), steps=steps) if r else None

    def drafts(self, owner: str, browser: str | None = None, unsaved_only: bool = True, limit: int = 5) -> list[Draft]:
        """The owner's most recent drafts that hold labels (and, by default, unsaved work); with
        ``browser``, only those that browser wrote. Without their steps (see :meth:`claim_draft`)."""
        con = self._connect()
        try:
            rows = con.execute(f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE owner=? AND n_included + n_excluded > 0"
                               + (" AND browser=?" if browser is not None else "")
                               + (" AND saved=0" if unsaved_only else "") + " ORDER BY updated_at DESC LIMIT ?",
                               (owner, *([browser] if browser is not None else []), limit)).fetchall()
        finally:
            con.close()
        return [_draft(r) for r in rows]

    def delete_draft(self, token: str, owner: str, browser: str | None = None) -> bool:
        """Delete the owner's draft (with ``browser``: only if that browser wrote it); True if it was."""
        with self._tx() as con:
            cur = con.execute("DELETE FROM drafts WHERE token=? AND owner=?" + (" AND browser=?" if browser is not None
                                                                                else ""),
                              (token, owner, *([browser] if browser is not None else [])))
            if cur.rowcount:
                con.execute("DELETE FROM draft_steps WHERE token=?", (token,))
            return bool(cur.rowcount)

    def prune_drafts(self, now: datetime | None = None) -> int:
        """Delete drafts that are saved or empty and untouched for SAVED_DRAFT_DAYS, and any draft
        untouched for ABANDONED_DRAFT_DAYS; returns how many. An unsaved draft younger than that stays."""
        from datetime import timedelta

        now = now or datetime.now(timezone.utc)
        done = (now - timedelta(days=SAVED_DRAFT_DAYS)).isoformat(timespec="milliseconds")
        abandoned = (now - timedelta(days=ABANDONED_DRAFT_DAYS)).isoformat(timespec="milliseconds")
        with self._tx() as con:
            gone = [t for (t,) in con.execute(
                "SELECT token FROM drafts WHERE (updated_at < ? AND (saved=1 OR n_included + n_excluded = 0)) "
                "OR updated_at < ?", (done, abandoned))]
            con.executemany("DELETE FROM draft_steps WHERE token=?", [(t,) for t in gone])
            con.executemany("DELETE FROM drafts WHERE token=?", [(t,) for t in gone])
        return len(gone)

    def prune_drafts_now_and_then(self, every_s: float = 3600.0) -> None:
        """:meth:`prune_drafts` at most once per ``every_s`` seconds per store object (a page calls this
        on every autosave; the prune itself runs rarely)."""
        import time

        if time.monotonic() - self._pruned_at >= every_s:
            self._pruned_at = time.monotonic()
            self.prune_drafts()


_DRAFT_COLUMNS = "token, owner, updated_at, n_included, n_excluded, saved, meta_json, session_json, browser"


def _draft(r) -> Draft:
    try:
        meta = json.loads(r[6])
    except ValueError:
        meta = {}
    return Draft(r[0], r[1], r[2], int(r[3]), int(r[4]), bool(r[5]), meta if isinstance(meta, dict) else {}, r[7],
                 r[8] or "")
