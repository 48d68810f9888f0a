"""The database under the group store: SQLite (the default: one file per corpus, WAL mode, no set-up) or
PostgreSQL (for teams: one database for every corpus, chosen by ``SEMANNO_DB=postgresql://USER@HOST:PORT/DB``,
psycopg 3 with a connection pool). One schema for both, a ``schema_version`` table, and migrations that
bring an older database up to date in place (SQLite files of earlier versions included).

The store (core/store.py) writes its SQL once, with ``?`` placeholders; a backend runs it. What differs
between the two is here: connecting, transactions, identity columns, row locks.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

SCHEMA_VERSION = 7
DB_VARIABLE = "SEMANNO_DB"
BACKUP_CHECK_S = 60.0  # how often a SQLite file's backups are looked at after writes (core/backup.py)

# {id}: the identity primary key of the dialect; {big}: a 64-bit integer
TABLES = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS groups (
    id {id}, corpus TEXT NOT NULL DEFAULT '', name TEXT NOT NULL, annotator TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deleted_at TEXT,
    topic TEXT, UNIQUE (corpus, name));
CREATE TABLE IF NOT EXISTS versions (
    id {id}, group_id {big} NOT NULL REFERENCES groups(id), number INTEGER NOT NULL,
    annotator TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, n_included INTEGER NOT NULL,
    n_excluded INTEGER NOT NULL, session_json TEXT, saved_by TEXT, work TEXT, last_entry {big},
    kind TEXT NOT NULL DEFAULT 'version', UNIQUE (group_id, number));
CREATE TABLE IF NOT EXISTS labels (
    version_id {big} NOT NULL REFERENCES versions(id), item_id TEXT NOT NULL,
    label INTEGER NOT NULL CHECK (label IN (1, -1)), seq INTEGER, PRIMARY KEY (version_id, item_id));
CREATE TABLE IF NOT EXISTS drafts (
    token TEXT PRIMARY KEY, corpus TEXT NOT NULL DEFAULT '', owner TEXT NOT NULL, browser TEXT NOT NULL DEFAULT '',
    writer TEXT NOT NULL DEFAULT '', created_at TEXT, updated_at TEXT NOT NULL, n_included INTEGER NOT NULL,
    n_excluded INTEGER NOT NULL, saved INTEGER NOT NULL DEFAULT 0, meta_json TEXT NOT NULL DEFAULT '{{}}',
    session_json TEXT NOT NULL, unsaved_behind INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS draft_steps (
    token TEXT NOT NULL REFERENCES drafts(token) ON DELETE CASCADE, seq INTEGER NOT NULL, step_json TEXT NOT NULL,
    PRIMARY KEY (token, seq));
CREATE TABLE IF NOT EXISTS journal (
    id {id}, corpus TEXT NOT NULL DEFAULT '', work TEXT NOT NULL, kind TEXT NOT NULL, step TEXT, at TEXT NOT NULL,
    who TEXT NOT NULL, method TEXT, params_json TEXT NOT NULL DEFAULT '{{}}');
CREATE INDEX IF NOT EXISTS journal_work ON journal (work, id);
CREATE TABLE IF NOT EXISTS events (
    id {id}, entry {big} NOT NULL REFERENCES journal(id), item_id TEXT NOT NULL, old_label INTEGER NOT NULL,
    label INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS events_entry ON events (entry);
CREATE INDEX IF NOT EXISTS events_item ON events (item_id, id);
CREATE TABLE IF NOT EXISTS topics (
    id {id}, corpus TEXT NOT NULL DEFAULT '', name TEXT NOT NULL, guidelines TEXT NOT NULL DEFAULT '',
    blind INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, created_by TEXT NOT NULL DEFAULT '',
    UNIQUE (corpus, name));
CREATE TABLE IF NOT EXISTS assignments (
    topic_id {big} NOT NULL REFERENCES topics(id), annotator TEXT NOT NULL, group_name TEXT NOT NULL,
    submitted_at TEXT, submitted_version INTEGER, PRIMARY KEY (topic_id, annotator));
CREATE TABLE IF NOT EXISTS people (browser TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    topic_id {big} NOT NULL REFERENCES topics(id), item_id TEXT NOT NULL,
    decision INTEGER NOT NULL CHECK (decision IN (1, -1, 0)), decided_by TEXT NOT NULL, decided_at TEXT NOT NULL,
    PRIMARY KEY (topic_id, item_id));
CREATE TABLE IF NOT EXISTS dropped (corpus TEXT, item TEXT, at TEXT, PRIMARY KEY (corpus, item)){lean};
"""
# ``dropped``: work removed on purpose, which a snapshot of the server may still hold and must not put back (a draft
# discarded: item "draft TOKEN"; a decision taken back: "decision [topic, item]", JSON), with when; the row "since"
# (no corpus) says from when on they are recorded (the database made or brought to version 7). Its few words keep a
# SQLite file's list of tables within the file's first page, where a file cut short still has it (core/salvage.py).
SINCE = "INSERT INTO dropped (corpus, item, at) VALUES ('', 'since', ?) ON CONFLICT DO NOTHING"

# columns that older databases lack: (table, column, definition), added in place
ADDED_COLUMNS = [("versions", "saved_by", "TEXT"), ("versions", "work", "TEXT"), ("versions", "last_entry", "{big}"),
                 ("versions", "kind", "TEXT NOT NULL DEFAULT 'version'"), ("labels", "seq", "INTEGER"),
                 ("groups", "corpus", "TEXT NOT NULL DEFAULT ''"), ("groups", "topic", "TEXT"),
                 ("drafts", "corpus", "TEXT NOT NULL DEFAULT ''"), ("drafts", "browser", "TEXT NOT NULL DEFAULT ''"),
                 ("drafts", "writer", "TEXT NOT NULL DEFAULT ''"), ("drafts", "created_at", "TEXT"),
                 ("assignments", "submitted_version", "INTEGER"),
                 ("drafts", "unsaved_behind", "INTEGER NOT NULL DEFAULT 0")]


class DatabaseError(RuntimeError):
    """The database cannot be reached or used; the message names the host and the reason, never a
    password."""


class DamagedFile(DatabaseError):
    """A corpus's groups file that cannot be used as it is: damaged (cut short, overwritten), or emptied or
    missing while backups of it are kept (core/backup.py). ``newest``: its newest backup, or None. The
    message says how to put that back; nothing is written to the file."""

    def __init__(self, path: Path, why: str, newest=None, state: str = "damaged"):
        self.path, self.newest, self.state = Path(path), newest, state
        if newest is None:
            text = (f"{path} is damaged ({why}); nothing was written to it. Restore it from a backup, or rename it "
                    "to start again with an empty one")
        else:
            what = f"is damaged ({why}); nothing was written to it" if state == "damaged" else \
                f"is {state}, but backups of it are kept"
            text = (f"{path} {what}. Its newest backup is {newest.path.parent.name}/{newest.line()}: put it back with "
                    f"python -m precompute.store restore --corpus {self.path.parent.name} (the file it replaces is "
                    "kept beside it, and what was saved after the backup is read back from it where it can be), or "
                    "move the file and its backups folder away to start again with no groups")
        super().__init__(text)


def safe_target(dsn: str) -> str:
    """A PostgreSQL address without its password: ``user@host:port/db``."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(dsn)
        return f"{u.username or ''}@{u.hostname or '?'}:{u.port or 5432}{u.path or ''}"
    except ValueError:
        return "(an address that cannot be read)"


class Backend:
    dialect = ""
    ids = {"id": "", "big": "", "lean": ""}

    def tx(self, lock: bool = False):  # pragma: no cover - each backend's
        """A write transaction yielding ``run(sql, params=()) -> rows`` and ``many(sql, rows)``."""
        raise NotImplementedError

    def read(self):  # pragma: no cover
        raise NotImplementedError

    def schema(self) -> str:
        return TABLES.format(**self.ids)

    def known_damage(self) -> None:
        """Raises the damage this process met on the store, while it lasts (SQLite: DamagedFile)."""


class Runner:
    """What a transaction body calls: ``run`` one statement (rows back when it returns some), ``many``
    for executemany, ``one`` the first row or None."""

    def __init__(self, cursor, convert):
        self.cur, self.convert = cursor, convert

    def run(self, sql: str, params: Sequence = ()) -> list:
        self.cur.execute(self.convert(sql), tuple(params))
        return self.cur.fetchall() if self.cur.description else []

    def one(self, sql: str, params: Sequence = ()) -> Any:
        rows = self.run(sql, params)
        return rows[0] if rows else None

    def many(self, sql: str, rows: Sequence[Sequence]) -> None:
        if rows:
            self.cur.executemany(self.convert(sql), [tuple(r) for r in rows])

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence]) -> None:
        """Many new rows into ``table``: PostgreSQL's COPY where the connection has it (psycopg: a save of
        10,000 labels in one stream, not 10,000 statements), else executemany."""
        if not rows:
            return
        listed = ", ".join(columns)
        copy = getattr(self.cur, "copy", None)
        if copy is None:
            self.many(f"INSERT INTO {table} ({listed}) VALUES ({', '.join('?' * len(columns))})", rows)
            return
        with copy(f"COPY {table} ({listed}) FROM STDIN") as stream:
            for row in rows:
                stream.write_row(row)

    @property
    def rowcount(self) -> int:
        return self.cur.rowcount


class SQLite(Backend):
    """One file (per corpus), WAL mode, every write one ``BEGIN IMMEDIATE`` transaction (writers queue
    instead of failing), synchronous=FULL."""

    dialect = "sqlite"
    ids = {"id": "INTEGER PRIMARY KEY", "big": "INTEGER", "lean": " WITHOUT ROWID"}
    _backup_checked: dict[str, float] = {}
    # path -> (the file's identity, DamagedFile) of a file this process found damaged: every page says so from then
    # on (a damaged page of an old version is met only where that version is read), until the file is replaced
    _damaged: dict[str, tuple[tuple, "DamagedFile"]] = {}

    def __init__(self, path: str | Path, timeout_s: float = 30.0, backups: bool = True):
        self.path, self.timeout_s, self.backups = Path(path), timeout_s, backups  # backups: of a working file, none
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refuse_lost()
        with self._damage_named():
            con = self._connect()
            try:
                con.execute("PRAGMA journal_mode=WAL")
                migrate_sqlite(con, self)
            finally:
                con.close()

    def _refuse_lost(self) -> None:
        """A groups file emptied or deleted while backups of it are kept is not started afresh (which would
        show no groups, and soon replace the backups with copies of nothing): DamagedFile says how to put the
        newest back. Without backups an absent file is a new corpus's."""
        from core import backup

        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = None
        wal = Path(f"{self.path}-wal")
        if size or (wal.exists() and wal.stat().st_size):
            return
        kept = backup.copies(self.path)
        if kept:
            raise DamagedFile(self.path, "", kept[0], state="missing" if size is None else "empty")

    @contextmanager
    def _damage_named(self) -> Iterator[None]:
        """A damaged file (cut short, overwritten: "file is not a database", "database disk image is malformed")
        as a DamagedFile naming it and its newest backup, which the pages show instead of a traceback; the file
        is never touched."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if not any(why in str(exc) for why in ("not a database", "malformed", "corrupt")):
                raise
            raise SQLite.note_damage(self.path, str(exc)) from exc

    @staticmethod
    def note_damage(path: Path, why: str) -> DamagedFile:
        """Remember that ``path`` is damaged (``why``), for every page from now on (:meth:`known_damage`); returns
        the DamagedFile, naming its newest backup."""
        from core import backup

        kept = backup.copies(path)
        damaged = DamagedFile(path, why, kept[0] if kept else None)
        SQLite._damaged[str(path)] = (_identity(path), damaged)
        return damaged

    def known_damage(self) -> None:
        """Raises the DamagedFile this process met on the file (anywhere: loading an old version), while the
        file is the one it was met on (same inode, size and time), or, where it has changed since (another tab
        wrote to it), while it still fails its check (core.backup.sound); a backup put back is another file."""
        from core import backup

        key = str(self.path)
        met = SQLite._damaged.get(key)
        if met is None:
            return
        if met[0] == _identity(self.path):
            raise met[1]
        if self.path.exists() and not backup.sound(self.path):
            SQLite._damaged[key] = (_identity(self.path), met[1])
            raise met[1]
        SQLite._damaged.pop(key, None)

    def _after_write(self) -> None:
        """A backup of the file when one is due (core/backup.py); looked for at most every BACKUP_CHECK_S per
        file in this process, so a write costs no more than a clock read otherwise."""
        from core import backup

        now = time.monotonic()
        key = str(self.path)
        if not self.backups or now < SQLite._backup_checked.get(key, -1e18) + BACKUP_CHECK_S:
            return
        SQLite._backup_checked[key] = now
        backup.after_write(self.path)

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA synchronous=FULL")
        return con

    @contextmanager
    def tx(self, lock: bool = False) -> Iterator[Runner]:
        with self._damage_named():
            con = self._connect()
            try:
                con.execute("BEGIN IMMEDIATE")
                yield Runner(con.cursor(), lambda s: s)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
            finally:
                con.close()
        self._after_write()

    @contextmanager
    def read(self) -> Iterator[Runner]:
        with self._damage_named():
            con = self._connect()
            try:
                yield Runner(con.cursor(), lambda s: s)
            finally:
                con.close()

    def __str__(self) -> str:
        return f"SQLite file {self.path.name}"


def _identity(path: Path) -> tuple:
    try:
        st = Path(path).stat()
    except OSError:
        return ()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _to_pg(sql: str) -> str:
    return sql.replace("?", "%s")


class PostgreSQL(Backend):
    """A PostgreSQL database shared by every corpus (rows carry their corpus), through a psycopg 3
    connection pool shared by the server's threads. Writes run in one transaction each; a save locks its
    group's row (``FOR UPDATE``) so two people saving the same group queue instead of colliding."""

    dialect = "postgresql"
    ids = {"id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "big": "BIGINT", "lean": ""}
    _pools: dict[str, Any] = {}
    _lock = threading.Lock()

    def __init__(self, dsn: str, timeout_s: float = 3.0):
        self.dsn, self.timeout_s = dsn, timeout_s
        self._pool(dsn, timeout_s)
        with self.tx() as db:
            migrate_postgres(db, self)

    @property
    def pool(self):
        """The server's shared pool (a fresh one after :meth:`_renewed` replaced a stalled one)."""
        return self._pool(self.dsn, self.timeout_s)

    @classmethod
    def _renewed(cls, dsn: str, timeout_s: float, stale):
        """After a pool timed out: when the server answers a connection of its own, the pool is only
        waiting out its reconnect backoff (seconds, doubling, after an outage), so it is replaced by a
        fresh one at once. A server still down raises psycopg's OperationalError."""
        import psycopg

        psycopg.connect(dsn, connect_timeout=max(1, int(timeout_s))).close()
        with cls._lock:
            if cls._pools.get(dsn) is stale:
                del cls._pools[dsn]
                stale.close(timeout=0)
        return cls._pool(dsn, timeout_s)

    @contextmanager
    def _connection(self):
        """A connection of the pool, its transaction committed or rolled back on the way out."""
        from psycopg_pool import PoolTimeout

        pool = self.pool
        try:
            con = pool.getconn()
        except PoolTimeout:
            pool = self._renewed(self.dsn, self.timeout_s, pool)
            con = pool.getconn()
        try:
            with con:
                yield con
        finally:
            pool.putconn(con)

    @classmethod
    def _pool(cls, dsn: str, timeout_s: float):
        try:
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise DatabaseError("SEMANNO_DB names PostgreSQL but psycopg is not installed: pip install -r "
                                "requirements.txt") from None
        with cls._lock:
            pool = cls._pools.get(dsn)
            if pool is None:
                # check: a connection broken by a server restart is replaced, not handed out
                pool = ConnectionPool(dsn, min_size=1, max_size=20, timeout=timeout_s, open=False,
                                      check=ConnectionPool.check_connection,
                                      kwargs={"connect_timeout": max(1, int(timeout_s))})
                try:
                    pool.open(wait=True, timeout=timeout_s)
                except Exception as exc:
                    pool.close()
                    raise DatabaseError(f"cannot reach PostgreSQL at {safe_target(dsn)}: {_reason(exc)}") from None
                cls._pools[dsn] = pool
        return pool

    @contextmanager
    def tx(self, lock: bool = False) -> Iterator[Runner]:
        try:
            with self._connection() as con:
                with con.transaction():
                    yield Runner(con.cursor(), _to_pg)
        except DatabaseError:
            raise
        except Exception as exc:
            import psycopg

            if isinstance(exc, (psycopg.OperationalError, psycopg.errors.AdminShutdown)) or \
                    type(exc).__name__ == "PoolTimeout":
                raise DatabaseError(f"PostgreSQL at {safe_target(self.dsn)} is unreachable: {_reason(exc)}") from None
            if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):  # pasted notes holding one: said, not a trace
                raise ValueError("PostgreSQL keeps no NUL character (\\x00) in a text, and what was to be written holds "
                                 "one (pasted into the notes?): remove it and save again") from None
            raise

    read = tx

    def __str__(self) -> str:
        return f"PostgreSQL at {safe_target(self.dsn)}"


def _reason(exc: Exception) -> str:
    """The first line of a connection error, with any password in it cut out."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return re.sub(r"password=\S+|:[^:@/]+@", ":***@", text)[:200]


def now_iso() -> str:
    """Now in UTC as the store writes its times (ISO 8601, milliseconds): they compare as text."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _version(db: Runner) -> int:
    row = db.one("SELECT MAX(version) FROM schema_version")
    return int(row[0]) if row and row[0] is not None else 0


def migrate_sqlite(con: sqlite3.Connection, backend: SQLite) -> None:
    """Bring a SQLite file up to SCHEMA_VERSION in place: tables that are missing are made, columns
    that older files lack are added (their data stays), and the version is recorded."""
    con.execute("BEGIN IMMEDIATE")
    try:
        for statement in [s for s in backend.schema().split(";") if s.strip()]:
            if "groups (" in statement and _has_table(con, "groups"):
                continue  # an older file's groups table (UNIQUE(name)) stays: one corpus per file
            con.execute(statement)
        for table, column, definition in ADDED_COLUMNS:
            if column not in {r[1] for r in con.execute(f"PRAGMA table_info({table})")}:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition.format(**backend.ids)}")
        if _version(Runner(con.cursor(), lambda s: s)) < SCHEMA_VERSION:
            con.execute(SINCE, (now_iso(),))
            con.execute("DELETE FROM schema_version")
            con.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def migrate_postgres(db: Runner, backend: PostgreSQL) -> None:
    """Bring a PostgreSQL database up to SCHEMA_VERSION (one transaction, under an advisory lock so two
    servers starting at once do not both migrate)."""
    def current() -> int:
        return _version(db) if db.one("SELECT to_regclass('schema_version')")[0] else 0

    if current() >= SCHEMA_VERSION:  # the usual case: no DDL, so no table lock on a database in use
        return
    db.run("SELECT pg_advisory_xact_lock(?)", (20261123,))
    if current() >= SCHEMA_VERSION:  # another server migrated it while this one waited
        return
    for statement in [s for s in backend.schema().split(";") if s.strip()]:
        db.run(statement)
    for table, column, definition in ADDED_COLUMNS:
        db.run(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {definition.format(**backend.ids)}")
    if _version(db) < SCHEMA_VERSION:
        db.run(SINCE, (now_iso(),))
        db.run("DELETE FROM schema_version")
        db.run("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))


def configured_dsn() -> str | None:
    """``$SEMANNO_DB`` when it names PostgreSQL; None for the default (SQLite); DatabaseError when it is
    set to something this tool cannot use."""
    import os

    value = (os.environ.get(DB_VARIABLE) or "").strip()
    if not value or value.lower() == "sqlite":
        return None
    if not re.match(r"^postgres(ql)?://", value):
        raise DatabaseError(f"{DB_VARIABLE} must be a postgresql://USER@HOST:PORT/DB address (or unset for SQLite); "
                            f"got one starting {value.split(':')[0][:20]!r}")
    return value
