"""Copies of a corpus's groups file (SQLite) kept beside it, so that a file damaged on disk (cut short,
overwritten, emptied) costs at most the work since its newest copy, not every saved group.

After a write, when the newest copy is older than ``EVERY_S``, the store takes one (on a thread of its
own: the save does not wait) with SQLite's online backup (a consistent snapshot, the write-ahead log
included, while others go on writing), checks it (``PRAGMA quick_check``), and renames it into
``backups/groups-YYYYMMDDTHHMMSSZ.sqlite`` (atomic). The newest ``KEEP`` copies are kept. A copy that
cannot be taken (no room, a read-only folder) is logged and never fails the save. ``restore`` puts a copy
back and keeps the file it replaces (core/salvage.py then reads back from a damaged one what was saved after
the copy).

PostgreSQL (a team's store) is backed up by its server's own tools (``pg_dump``), and a corpus's groups there
are copied out into a SQLite file by ``python -m precompute.store snapshot`` (core/migrate.py).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

log = logging.getLogger(__name__)

EVERY_S = 30 * 60  # a new copy after a write, when the newest is older than this
KEEP = 8  # copies kept (at least EVERY_S apart: four hours of work and more)
# and no more than take this room, in bytes (the newest two always kept): a file of gigabytes keeps fewer copies
ROOM_FLOOR, ROOM_TIMES = 1e9, 4  # max(ROOM_FLOOR, ROOM_TIMES x the file's size)
SPARE = 50e6  # free bytes a copy leaves on the disk beside itself and its check
FOLDER = "backups"
_STAMP = "%Y%m%dT%H%M%SZ"


def _now() -> float:
    """The time copies are named and aged by (a test moves it on)."""
    return time.time()


@dataclass(frozen=True)
class Copy:
    path: Path
    made: datetime  # UTC, from the name
    size: int

    def line(self) -> str:
        return f"{self.path.name} ({self.made:%Y-%m-%d %H:%M} UTC, {self.size / 1e6:.1f} MB)"


def folder(db: Path) -> Path:
    return Path(db).parent / FOLDER


def copies(db: Path) -> list[Copy]:
    """The copies of ``db``, newest first (named by the time they were taken)."""
    where, stem = folder(db), Path(db).stem
    if not where.is_dir():
        return []
    out = []
    for p in where.glob(f"{stem}-*.sqlite"):
        try:
            made = datetime.strptime(p.stem[len(stem) + 1:], _STAMP).replace(tzinfo=timezone.utc)
            out.append(Copy(p, made, p.stat().st_size))
        except (ValueError, OSError):
            continue  # not one of ours, or gone meanwhile
    return sorted(out, key=lambda c: c.made, reverse=True)


def due(db: Path, every_s: float, now: float | None = None) -> bool:
    newest = copies(db)
    return not newest or (now or _now()) - newest[0].made.timestamp() >= every_s


def take(db: Path, keep: int | None = None, now: float | None = None) -> Path:
    """A checked copy of ``db`` in its backups folder (returned); the oldest beyond ``keep``, or beyond the room
    copies may take (``ROOM_FLOOR``, ``ROOM_TIMES``), removed.
    OSError when there is no room for it (the file's size twice over is asked for), sqlite3.Error when the
    file cannot be read or the copy does not check out (the copy is then removed, the older ones kept)."""
    db = Path(db)
    where = folder(db)
    where.mkdir(exist_ok=True)
    size = db.stat().st_size + _wal_size(db)
    free = shutil.disk_usage(where).free
    if free < 2 * size + SPARE:
        raise OSError(f"no room for a copy of {db.name} ({size / 1e6:.0f} MB; {free / 1e6:.0f} MB free)")
    made = datetime.fromtimestamp(now or _now(), timezone.utc)
    final = where / f"{db.stem}-{made.strftime(_STAMP)}.sqlite"
    tmp = where / f".{final.name}.{os.getpid()}-{secrets.token_hex(3)}.part"  # two processes may copy at once
    try:
        copy_checked(db, tmp)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    _sync(where)
    kept = copies(db)
    for old in kept[within_room([c.size for c in kept], KEEP if keep is None else keep, size):]:
        old.path.unlink(missing_ok=True)
    sweep_left(where, f".{db.stem}-*.part")  # left by a process killed while copying (not one copying now)
    return final


def within_room(sizes: list[int], keep: int, size: int) -> int:
    """How many of the newest copies (``sizes``: theirs, newest first) are kept: the newest ``keep``, and no more
    than take ``ROOM_FLOOR`` bytes, or ``ROOM_TIMES`` times ``size`` (the newest's) where more; the newest two
    always."""
    room, used = max(ROOM_FLOOR, ROOM_TIMES * size), 0
    for i, n in enumerate(sizes[:keep]):
        used += n
        if i >= 2 and used > room:
            return i
    return min(len(sizes), keep)


def sweep_left(where: Path, pattern: str, age_s: float = 3600) -> None:
    """Remove what processes killed midway left in ``where`` (``pattern``: a part-written copy, or a working
    folder with a copy in it), once untouched for ``age_s``: one written to since may be another process's, still
    working."""
    for left in where.glob(pattern):
        try:
            inside = [f.stat().st_mtime for f in left.iterdir()] if left.is_dir() else []
            if _now() - max([left.stat().st_mtime, *inside]) <= age_s:
                continue
            if left.is_dir():
                shutil.rmtree(left)
            else:
                left.unlink()
        except OSError:
            pass  # gone meanwhile, or not ours to remove


def read_only(db: Path, timeout_s: float = 30.0) -> sqlite3.Connection:
    """A connection that reads ``db`` (its write-ahead log included) and can never write it: one that could would,
    closing last, checkpoint the log into the file (copies, checks, and the damaged file salvage reads)."""
    return sqlite3.connect(f"{Path(db).resolve().as_uri()}?mode=ro", uri=True, timeout=timeout_s)


def copy_checked(src: Path, dst: Path) -> None:
    """SQLite's online backup of ``src`` into a new file ``dst`` (journal_mode DELETE, so the copy is
    one file), checked, and flushed to disk. ``src`` is opened read-only: a connection that may write would,
    closing last, checkpoint the write-ahead log into the file it copies."""
    if not src.is_file():
        raise FileNotFoundError(f"no file {src}")
    source = read_only(src)
    target = sqlite3.connect(dst)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
        bad = [r[0] for r in target.execute("PRAGMA quick_check")]
        if bad != ["ok"]:
            raise sqlite3.DatabaseError(f"the copy of {src.name} does not check out: {'; '.join(bad[:3])}")
    finally:
        target.close()
        source.close()
    with open(dst, "rb+") as f:
        os.fsync(f.fileno())


def _wal_size(db: Path) -> int:
    try:
        return Path(f"{db}-wal").stat().st_size
    except OSError:
        return 0


def _sync(where: Path) -> None:
    try:
        fd = os.open(where, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_running: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def after_write(db: Path, every_s: float | None = None, keep: int | None = None) -> threading.Thread | None:
    """Called by the store after a write: a copy when one is due (``EVERY_S``, ``KEEP`` by default), taken
    on a thread of its own, so that the save returns at once (a groups file of 91 MB takes half a second to
    copy and check: bench/backup.py); one at a time per file. Never raises: a copy that cannot be taken is
    logged (the save it follows has been written). Returns the thread (None when no copy is due)."""
    key = str(db)
    try:
        with _lock:
            if key in _running or not due(db, EVERY_S if every_s is None else every_s):
                return None
            thread = threading.Thread(target=_take_logged, args=(Path(db), KEEP if keep is None else keep),
                                      name=f"backup {Path(db).parent.name}")
            _running[key] = thread
        thread.start()
        return thread
    except Exception as exc:  # noqa: BLE001 - a backup must never fail the save it follows
        _running.pop(key, None)
        log.warning("no backup of %s taken: %s", db, exc)
        return None


def _take_logged(db: Path, keep: int) -> None:
    try:
        take(db, keep)
    except Exception as exc:  # noqa: BLE001 - logged: the save it follows has been written
        log.warning("no backup of %s taken: %s", db, exc)
        if isinstance(exc, sqlite3.DatabaseError):  # a copy that does not check out: is the file itself damaged?
            _damage_found(db)
    finally:
        with _lock:
            _running.pop(str(db), None)


def _damage_found(db: Path) -> None:
    """The copies are a check of the file every half hour of saving: a file found damaged (its own quick_check
    fails, not only its copy's) is named on every page from now on, with its newest good copy, while the work since
    can still be read back from it (core/salvage.py), rather than when an annotator opens the damaged version."""
    found = problems(db)
    if found:
        from core.db import SQLite

        SQLite.note_damage(db, "its half-hourly backup found it: " + "; ".join(found[:2]))
        log.error("%s is damaged: %s", db, "; ".join(found[:5]))


def settle() -> None:
    """Wait for the copies being taken (tests, and a job before it reports)."""
    for thread in list(_running.values()):
        thread.join()


def kept_line(db: Path) -> str:
    """What the Groups page says of the copies kept of ``db``."""
    kept = copies(db)
    if not kept:
        return (f"No backup of the groups file yet: one is taken after the first save, then every half hour of "
                f"saving ({FOLDER}/ beside {Path(db).name}).")
    return (f"Backups of the groups file: {len(kept)}, the newest {kept[0].made:%Y-%m-%d %H:%M} UTC, in "
            f"{folder(db)} (python -m precompute.store backups --corpus {Path(db).parent.name} lists them).")


def count_groups(db: Path) -> int | None:
    """The saved groups in a groups file (read-only); None where it is absent or cannot be read."""
    if not Path(db).is_file():
        return None
    try:
        con = read_only(db)
        try:
            return int(con.execute("SELECT COUNT(*) FROM groups").fetchone()[0])
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return None


def problems(db: Path) -> list[str]:
    """What ``PRAGMA quick_check`` finds wrong with the file (read-only; its first few lines), or the error that
    stops it; [] where it checks out."""
    try:
        con = read_only(db)
        try:
            found = [r[0] for r in con.execute("PRAGMA quick_check(5)")]
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if found == ["ok"] else found


def sound(db: Path) -> bool:
    """The file reads and checks out (:func:`problems`): False where a page of it is damaged, which a count of
    its groups alone may not reach."""
    return not problems(db)


def restore(db: Path, copy: Path, now: float | None = None) -> Path | None:
    """Put ``copy`` back as ``db``. The file it replaces (with its -wal and -shm) is moved aside to
    ``<name>.replaced-STAMP`` and returned, never deleted; None when there was none. The copy is checked
    first and stays where it is."""
    db, copy = Path(db), Path(copy)
    if not copy.is_file():
        raise FileNotFoundError(f"no backup {copy}")
    stamp = datetime.fromtimestamp(now or _now(), timezone.utc).strftime(_STAMP)
    tmp = db.with_name(f".{db.name}.{os.getpid()}-{secrets.token_hex(3)}.restoring")
    try:
        copy_checked(copy, tmp)  # checked before anything is moved
        aside = None
        if db.exists():
            aside = db.with_name(f"{db.name}.replaced-{stamp}")
            os.replace(db, aside)
        for extra in ("-wal", "-shm"):  # a log of the replaced file must not be read into the copy
            side = Path(f"{db}{extra}")
            if side.exists():
                os.replace(side, Path(f"{aside}{extra}" if aside else f"{side}.replaced-{stamp}"))
        os.replace(tmp, db)
    finally:
        tmp.unlink(missing_ok=True)
    _sync(db.parent)
    return aside
