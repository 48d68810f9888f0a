"""Copy a corpus's groups from its SQLite file into PostgreSQL (``python -m precompute.store migrate``):
groups and every version with its labels, drafts with their steps, the journal with its events, topics,
assignments and the adjudicator's decisions. One transaction: it is all there or none of it. Then every
version is checked by its content (a checksum of its labels) on both sides. Run again, it copies nothing
that is already there (and says so); a group that exists in PostgreSQL with other content is refused,
never overwritten. Nothing is deleted from the SQLite file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from core import backup
from core.atomic import save_json, try_lock
from core.db import SQLite
from core.embed import need_room
from core.store import ABANDONED_DRAFT_DAYS, MAX_NAME_CHARS, UNSAVED, GroupStore, dropped_decision, dropped_draft


@dataclass
class Report:
    copied: dict = field(default_factory=dict)  # table -> rows copied
    already: int = 0  # versions found in PostgreSQL with the same content
    verified: int = 0  # versions whose labels are the same on both sides after the copy
    beside: dict = field(default_factory=dict)  # group -> the group it was copied into, beside the one there
    # versions whose labels come from the previous snapshot (migrate's reuse, then _labels_from): (new id, its id
    # there, included, excluded)
    from_previous: list = field(default_factory=list)

    @property
    def reused(self) -> int:
        return len(self.from_previous)

    def line(self) -> str:
        copied = ", ".join(counted(n, t) for t, n in self.copied.items() if n) or "nothing new"
        put = "".join(f"; ‘{g}’ put beside the server's as ‘{b}’ (it holds other versions under the same "
                      "numbers)" for g, b in self.beside.items())
        old = (f"; the labels of {counted(self.reused, 'versions')} taken from the previous snapshot (unchanged at "
               "the server since) and counted") if self.reused else ""
        return (f"copied {copied}; {counted(self.already, 'versions')} {'was' if self.already == 1 else 'were'} there "
                f"already; {counted(self.verified, 'versions')} verified (same labels on both sides){old}{put}")


def counted(n: int, things: str) -> str:
    """``n`` things in words, ``things`` said in the plural: 1 version, 2 versions, 1 journal entry."""
    if n != 1:
        return f"{n:,} {things}"
    return f"1 {things[:-3] + 'y' if things.endswith('ies') else things[:-1]}"


class OtherLabels(ValueError):
    """A version the destination holds under the source's group and number, with other labels: nothing copied."""


def checksum(labels) -> str:
    h = hashlib.sha256()
    for item, label in sorted((str(i), int(v)) for i, v in labels):
        h.update(f"{item}\t{label}\n".encode())
    return h.hexdigest()


_LABELS = "SELECT item_id, label FROM labels WHERE version_id=?"
_VERSION = ("SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus=? AND g.name=? AND "
            "v.number=?")  # a group's version by its number (a snapshot's rows carry the corpus "")


def _version_labels(db, version_id: int) -> list:
    return db.run(_LABELS, (version_id,))


def _ordered(db, version_id: int, dialect: str) -> list:
    """A version's labels in the order they were given (its copy keeps it)."""
    return db.run("SELECT item_id, label FROM labels WHERE version_id=? ORDER BY "
                  + ("COALESCE(seq, rowid)" if dialect == "sqlite" else "seq"), (version_id,))


def _clash(s, dialect: str, d, there_gid: int, versions: list, sums: dict, same: set) -> bool:
    """Whether the destination's group ``there_gid`` holds a version under one of ``versions``' numbers (the
    source's, read by ``s`` of the source's ``dialect``) with other labels. The source versions compared are
    summed into ``sums``; those found with the same labels are added to ``same``."""
    held = dict(d.run("SELECT number, id FROM versions WHERE group_id=?", (there_gid,)))
    for vid, number, *_ in versions:
        if number in held:
            if vid not in sums:  # read once, also where a second group beside is compared
                sums[vid] = checksum(_ordered(s, vid, dialect))
            if checksum(_version_labels(d, held[number])) != sums[vid]:
                return True
            same.add(vid)
    return False


BESIDE = " (put back)"  # a group put back beside the server's of the same name: NAME (put back), (put back 2), ...
_BESIDE = re.compile(r" \(put back(?: \d+)?\)$")


def beside_names(name: str):
    """The names, in turn, under which a snapshot's group is put back beside the server's group of the same name
    when the server holds other versions under the snapshot's numbers (saved after it lost them): ``NAME (put
    back)``, ``NAME (put back 2)``..., the name cut to leave room (core.store.MAX_NAME_CHARS)."""
    for n in range(1, 1000):
        suffix = BESIDE if n == 1 else f"{BESIDE[:-1]} {n})"
        yield name[:MAX_NAME_CHARS - len(suffix)].rstrip() + suffix


def _base(name: str) -> str:
    """A group's name without the mark of one put back beside another (beside_names)."""
    return _BESIDE.sub("", name) if name.endswith(")") else name


def migrate(src: GroupStore, dst: GroupStore, progress=None, saved_work_only: bool = False,
            beside: bool = False, leave: frozenset = frozenset(), reuse: dict | None = None,
            lost_work_only: bool = False, within: tuple | None = None) -> Report:
    """Copy ``src`` into ``dst`` what ``dst`` lacks: a SQLite store into the PostgreSQL store of the same corpus; or,
    for a snapshot (:func:`snapshot`) and putting one back, PostgreSQL into a new SQLite file and back. ``progress``:
    called with the number of versions, then with 1 as each is copied (or found there), then as each is checked (a job's
    progress bar). ``saved_work_only``: only what the app never removes (groups and versions, the journal, topics and
    assignments), not drafts (discarded, pruned) nor an adjudicator's decisions (taken back): an older copy's would come
    back; ``lost_work_only``: of the drafts and decisions, only those ``dst`` lost (_lost: not discarded nor taken back
    there, as its ``dropped`` table says), and where ``within`` is given (the drafts' tokens and the decisions' (topic,
    item) the Groups page showed: Lacking's), only those of them. ``beside``: a group of which ``dst`` holds a version
    under one of the source's numbers with other labels (the server lost the source's and a new one was saved since) is
    copied whole into a group of its own beside it, the first of :func:`beside_names` that is new or holds no other
    labels under those numbers (a second put-back finds it there), instead of refusing the copy; without it such a
    version refuses the whole copy (OtherLabels). ``leave``: versions not copied, as (group, number, time saved) with
    the group's name as _base gives it (the versions let go: let_go); a group of none but those neither. ``reuse`` (a
    snapshot's: _previous): (group, number, time saved, included, excluded) -> the id of a version of the previous
    snapshot; a version of the source found there is copied without its labels, which are not read from the source nor
    checked here (Report.from_previous: _labels_from copies and counts them)."""
    rep = Report()
    count = rep.copied
    tick = progress or (lambda n: None)
    with src.db.read() as s, dst.db.tx() as d:
        # one view of the source for the whole copy and its check, as it was when the copy began: a version saved
        # meanwhile (the app snapshots a team's server while it saves) is left to the next copy, not a failed check
        s.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ" if src.db.dialect == "postgresql" else "BEGIN")
        tick(2 * s.one("SELECT COUNT(*) FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus=?",
                       (src.corpus,))[0])
        entry_map: dict[int, int] = {}
        sums: dict[int, str] = {}  # a source version's labels' checksum
        moved: dict[str, str] = {}  # a source group -> the group beside the destination's it is copied into
        have_works = {w for (w,) in d.run("SELECT DISTINCT work FROM journal WHERE corpus=?", (dst.corpus,))}
        for work, in s.run("SELECT DISTINCT work FROM journal WHERE corpus=?", (src.corpus,)):
            if work in have_works:
                for (old,), (new,) in zip(
                        s.run("SELECT id FROM journal WHERE corpus=? AND work=? ORDER BY id", (src.corpus, work)),
                        d.run("SELECT id FROM journal WHERE corpus=? AND work=? ORDER BY id", (dst.corpus, work))):
                    entry_map[old] = new
                continue
            for jid, kind, step, at, who, method, params in s.run(
                    "SELECT id, kind, step, at, who, method, params_json FROM journal WHERE corpus=? AND work=? "
                    "ORDER BY id", (src.corpus, work)):
                new = d.one("INSERT INTO journal (corpus, work, kind, step, at, who, method, params_json) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", (dst.corpus, work, kind, step, at, who, method, params))[0]
                entry_map[jid] = new
                events = s.run("SELECT item_id, old_label, label FROM events WHERE entry=? ORDER BY id", (jid,))
                d.many("INSERT INTO events (entry, item_id, old_label, label) VALUES (?, ?, ?, ?)",
                       [(new, *e) for e in events])
                count["journal entries"] = count.get("journal entries", 0) + 1
                count["events"] = count.get("events", 0) + len(events)
        for gid, name, annotator, notes, created, updated, deleted, topic in s.run(
                "SELECT id, name, annotator, notes, created_at, updated_at, deleted_at, topic FROM groups WHERE corpus=?",
                (src.corpus,)):
            versions = s.run("SELECT id, number, annotator, created_at, n_included, n_excluded, session_json, "
                             "saved_by, work, last_entry, kind FROM versions WHERE group_id=? ORDER BY number", (gid,))
            if leave and versions:
                versions = [v for v in versions if (_base(name), v[1], v[3]) not in leave]
                if not versions:
                    continue  # every version let go: not the group either
            row = d.one("SELECT id FROM groups WHERE corpus=? AND name=?", (dst.corpus, name))
            same: set = set()  # source versions found there with the same labels
            if row is not None and beside and _clash(s, src.db.dialect, d, row[0], versions, sums, same):
                topic = None  # the whole group beside the server's; not one of a topic's assigned groups
                for other in beside_names(name):
                    same = set()
                    row = d.one("SELECT id FROM groups WHERE corpus=? AND name=?", (dst.corpus, other))
                    if row is None or not _clash(s, src.db.dialect, d, row[0], versions, sums, same):
                        break
                moved[name] = other
            if row is None:
                row = d.one("INSERT INTO groups (corpus, name, annotator, notes, created_at, updated_at, deleted_at, "
                            "topic) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                            (dst.corpus, moved.get(name, name), annotator, notes, created, updated, deleted, topic))
                count["groups"] = count.get("groups", 0) + 1
            new_gid = row[0]
            for vid, number, v_annot, v_created, n_inc, n_exc, sj, saved_by, work, last, kind in versions:
                tick(1)
                if vid in same:
                    rep.already += 1
                    continue
                there = d.one("SELECT id FROM versions WHERE group_id=? AND number=?", (new_gid, number))
                prior = reuse.get((name, number, v_created, n_inc, n_exc)) if reuse and there is None else None
                if prior is None:
                    order = _ordered(s, vid, src.db.dialect)
                    sums[vid] = checksum(order)  # the labels read once: copied, and checked against the copy's
                if there is not None:
                    if checksum(_version_labels(d, there[0])) != sums[vid]:
                        raise OtherLabels(f"group {moved.get(name, name)!r} version {number} is in PostgreSQL already "
                                         "with other labels: "
                                         "nothing was copied (check which one is right before migrating again)")
                    rep.already += 1
                    continue
                new_vid = d.one("INSERT INTO versions (group_id, number, annotator, created_at, n_included, n_excluded, "
                                "session_json, saved_by, work, last_entry, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                                "RETURNING id", (new_gid, number, v_annot, v_created, n_inc, n_exc, sj, saved_by, work,
                                                 entry_map.get(last) if last is not None else None, kind or "version"))[0]
                if prior is None:
                    d.insert_rows("labels", ("version_id", "item_id", "label", "seq"),
                                  [(new_vid, i, v, n) for n, (i, v) in enumerate(order)])
                else:
                    rep.from_previous.append((new_vid, prior, n_inc, n_exc))
                    sums[vid] = None  # counted once they are there
                count["versions"] = count.get("versions", 0) + 1
                if name in moved:
                    rep.beside[name] = moved[name]  # said where something was put there
        lost = _lost(_together([_work(s.run, src.corpus)]), _work(d.run, dst.corpus, times=False)
                     ) if lost_work_only else None
        if lost is not None and within is not None:
            lost = {t: o for t, o in lost[0].items() if t in within[0]}, lost[1] & within[1]
        if not saved_work_only:  # what the source knows was discarded or taken back on purpose
            _copy_dropped(s, src.corpus, d, dst.corpus)
        for r in [] if saved_work_only else s.run(
                "SELECT token, owner, browser, writer, created_at, updated_at, n_included, n_excluded, saved, "
                "meta_json, session_json, unsaved_behind FROM drafts WHERE corpus=?", (src.corpus,)):
            if d.one("SELECT 1 FROM drafts WHERE token=?", (r[0],)) or (lost is not None and r[0] not in lost[0]):
                continue
            d.run("INSERT INTO drafts (token, corpus, owner, browser, writer, created_at, updated_at, n_included, "
                  "n_excluded, saved, meta_json, session_json, unsaved_behind) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (r[0], dst.corpus, *r[1:]))
            d.many("INSERT INTO draft_steps (token, seq, step_json) VALUES (?, ?, ?)",
                   s.run("SELECT token, seq, step_json FROM draft_steps WHERE token=? ORDER BY seq", (r[0],)))
            count["drafts"] = count.get("drafts", 0) + 1
        for tid, name, guidelines, blind, created, by in s.run(
                "SELECT id, name, guidelines, blind, created_at, created_by FROM topics WHERE corpus=?", (src.corpus,)):
            row = d.one("SELECT id FROM topics WHERE corpus=? AND name=?", (dst.corpus, name)) or d.one(
                "INSERT INTO topics (corpus, name, guidelines, blind, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?) "
                "RETURNING id", (dst.corpus, name, guidelines, blind, created, by))
            for annotator, group, submitted, version in s.run(
                    "SELECT annotator, group_name, submitted_at, submitted_version FROM assignments WHERE topic_id=?",
                    (tid,)):
                d.run("INSERT INTO assignments (topic_id, annotator, group_name, submitted_at, submitted_version) "
                      "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", (row[0], annotator, group, submitted, version))
            for item, decision, by, at in [] if saved_work_only else s.run(
                    "SELECT item_id, decision, decided_by, decided_at FROM decisions WHERE topic_id=?", (tid,)):
                if lost is not None and (name, item) not in lost[1]:
                    continue
                if d.one("INSERT INTO decisions (topic_id, item_id, decision, decided_by, decided_at) VALUES "
                         "(?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1", (row[0], item, decision, by, at)):
                    count["decisions"] = count.get("decisions", 0) + 1
        # verify inside the transaction: every version of the source, the same labels on both sides
        for name, number, vid, made in s.run("SELECT g.name, v.number, v.id, v.created_at FROM versions v JOIN "
                                             "groups g ON g.id=v.group_id WHERE g.corpus=?", (src.corpus,)):
            if (_base(name), number, made) in leave:
                continue
            if sums.get(vid, "") is None:  # its labels are the previous snapshot's
                tick(1)
                continue
            there = d.one(_VERSION, (dst.corpus, moved.get(name, name), number))
            if there is None or checksum(_version_labels(d, there[0])) != sums.get(vid):  # every one read above
                raise ValueError(f"verification failed for {name!r} version {number}: nothing was copied")
            rep.verified += 1
            tick(1)
    return rep


@dataclass(frozen=True)
class Work:
    """A store's drafts and adjudicator's decisions (a server's, or a snapshot's) and what it recorded as removed
    on purpose (core.db's ``dropped``): ``drafts``: token -> (owner, time written, whether it holds unsaved work
    (core.store.UNSAVED)); ``decisions``: topic -> {item: time decided} (a server's: topic -> {item}, no times);
    ``dropped``: its item -> when; ``since``: from when on those are recorded (None where they are not: a
    snapshot taken before)."""
    drafts: dict
    decisions: dict
    dropped: dict
    since: str | None


def _work(run, corpus: str, recorded: bool = True, times: bool = True) -> Work:
    """The Work of a store, read with ``run`` (a Runner's, or a SQLite connection's execute, rows listed);
    ``recorded``: whether it has a ``dropped`` table; ``times``: the decisions' times too. A topic's decisions are
    read on their own, as sets of ids (whose hashes Python keeps), not as rows joined with their topic's name."""
    drafts = {t: (o, at, bool(w)) for t, o, at, w in run(
        f"SELECT token, owner, updated_at, {UNSAVED} FROM drafts WHERE corpus=?", (corpus,))}
    decisions = {}
    for tid, topic in run("SELECT id, name FROM topics WHERE corpus=?", (corpus,)):
        if times:
            decisions[topic] = dict(run("SELECT item_id, decided_at FROM decisions WHERE topic_id=?", (tid,)))
        else:
            decisions[topic] = {i for i, in run("SELECT item_id FROM decisions WHERE topic_id=?", (tid,))}
    return Work(drafts, decisions, *(_dropped(run, corpus) if recorded else ({}, None)))


def _dropped(run, corpus: str) -> tuple[dict, str | None]:
    """What a store recorded as removed on purpose (core.db's ``dropped``: its item -> when) and from when on it
    records (None where it does not say), read with ``run`` as _work reads."""
    rows = run("SELECT corpus, item, at FROM dropped WHERE corpus=? OR corpus=''", (corpus,))
    since = [at for c, item, at in rows if c == "" and item == "since"]
    return {i: at for c, i, at in rows if c == corpus and i != "since"}, min(since) if since else None


@dataclass(frozen=True)
class Held:
    """The Work of one or more snapshots (``works``, newest first) and every draft's token and decision's item
    any of them holds (``tokens``; ``items``: topic -> items), and what any of them recorded as removed on purpose
    (``dropped``, as _recorded gives it), made once for a list of snapshots (_held_work)."""
    works: tuple
    tokens: frozenset
    items: dict
    dropped: dict


def _together(works) -> Held:
    """The snapshots' Work as one Held."""
    works = tuple(works)
    topics = set().union(*(w.decisions.keys() for w in works))
    return Held(works, frozenset().union(*(w.drafts.keys() for w in works)),
                {t: frozenset().union(*(w.decisions.get(t, {}).keys() for w in works)) for t in topics},
                _recorded(w.dropped for w in works))


def _lost(held: Held, there: Work, now: datetime | None = None, also: tuple = ()) -> tuple[dict, frozenset]:
    """What ``there`` (a server, or the newest snapshot) lost of the work ``held`` (snapshots) holds, as (draft's
    token -> its owner, {(topic, item)} of decisions): a draft holding unsaved work (as the snapshot written last
    holds it), written since ``there`` records what is discarded and within ABANDONED_DRAFT_DAYS (an older one is
    pruned), that ``there`` neither holds nor recorded as discarded; a decision made since then (the latest of the
    snapshots' times) on an item of which ``there`` holds none, not taken back after it was made. Nothing where
    ``there`` records nothing (its drafts discarded and decisions taken back before are not known). A discard or a
    taking back that ``there`` lost the record of (a server brought back from an older dump) but a snapshot of
    ``held`` recorded, or one of ``also`` (more such records: Work.dropped's), counts as recorded."""
    if there.since is None:
        return {}, frozenset()
    now = now or datetime.now(timezone.utc)
    cutoff = max(there.since, (now - timedelta(days=ABANDONED_DRAFT_DAYS)).isoformat(timespec="milliseconds"))
    records = (there.dropped, held.dropped, *also)  # looked up for the few lacking, not merged on every view

    def recorded(item: str) -> str:
        return max(r.get(item, "") for r in records)

    drafts = {}
    for t in held.tokens.difference(there.drafts):  # few, where any: the rest are there
        owner, at, unsaved = max((w.drafts[t] for w in held.works if t in w.drafts), key=lambda d: d[1])
        if unsaved and at >= cutoff and not recorded(dropped_draft(t)):
            drafts[t] = owner
    decisions = set()
    for topic, items in held.items.items():
        for item in items.difference(there.decisions.get(topic, ())):
            at = max(w.decisions[topic][item] for w in held.works if item in w.decisions.get(topic, {}))
            if there.since <= at > recorded(dropped_decision(topic, item)):
                decisions.add((topic, item))
    return drafts, frozenset(decisions)


def _recorded(records) -> dict:
    """Several stores' records of what was removed on purpose (Work.dropped's) as one, each item at its latest
    time."""
    records = [r for r in records if r]
    if len(records) == 1:
        return records[0]
    dropped: dict = {}
    for record in records:
        for item, at in record.items():
            if at > dropped.get(item, ""):
                dropped[item] = at
    return dropped


def _holds(work: Work, drafts: dict, decisions: frozenset) -> bool:
    """Whether a snapshot's Work holds any of these drafts (tokens) or decisions ((topic, item))."""
    return any(t in work.drafts for t in drafts) or any(i in work.decisions.get(t, {}) for t, i in decisions)


def _stamped(path: Path) -> tuple[str, int]:
    """A snapshot file as its caches (_held, _work_held, _held_work) key it: its path and time of change."""
    return str(path), path.stat().st_mtime_ns


@functools.lru_cache(maxsize=64)
def _work_held(path: str, _stamp: int) -> Work:
    """A snapshot's Work (read once; ``_stamp``, its time of change, keys the cache)."""
    con = backup.read_only(Path(path))
    try:
        recorded = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='dropped'").fetchone()
        return _work(lambda sql, args: con.execute(sql, args).fetchall(), "", recorded is not None)
    finally:
        con.close()


@functools.lru_cache(maxsize=8)
def _held_work(snapshots: tuple) -> Held:
    """The Held of snapshots given as (path, time of change), newest first (once for each list)."""
    return _together(_work_held(path, stamp) for path, stamp in snapshots)


def _copy_dropped(s, corpus: str, d, to: str) -> None:
    """Copy what the source recorded as discarded or taken back on purpose (core.db's ``dropped``) that ``d``
    lacks; ``d`` records from the earlier of the two times they began."""
    dropped, since = _dropped(s.run, corpus)  # not the drafts and decisions: only what was removed
    d.many("INSERT INTO dropped (corpus, item, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
           [(to, item, at) for item, at in dropped.items()])
    if since is not None:
        d.run("UPDATE dropped SET at=? WHERE corpus='' AND item='since' AND at>?", (since, since))


SNAPSHOTS = "postgresql"  # backups/postgresql-TIME.sqlite: a corpus's groups copied out of PostgreSQL
SNAPSHOT_LOG = "postgresql-snapshot.log"  # the last snapshot the app started: its progress, or why it failed
ROW_BYTES = 32  # a snapshot's bytes per label and per event, besides twice the id (expected_size)
LOCK = ".snapshot.lock"  # held by a snapshot job for its whole run (core.atomic.try_lock): one at a time per corpus
LET_GO = "postgresql-let-go.json"  # saved versions the server lacks that the team removed there on purpose (let_go)
LET_GO_DAYS = 7  # how long the snapshots that hold versions let go are still kept past the newest ones
LOCK_ENV = "SEMANNO_SNAPSHOT_LOCK"  # the job started by the app: the descriptor of the lock it was handed
NICE_ENV = "SEMANNO_SNAPSHOT_NICE"  # the job started by the app: its CPU niceness (NICE unless set)
NICE = 19  # the lowest CPU priority: the job takes only the CPU the app's searches leave (yield_cpu)
log = logging.getLogger(__name__)
_started: dict[str, tuple[float, subprocess.Popen | None]] = {}  # groups file -> (looked at, its snapshot job)
_started_lock = threading.Lock()


def after_write(corpus: str, groups_db: Path, dsn: str, every_s: float | None = None,
                check_s: float | None = None) -> subprocess.Popen | None:
    """A snapshot of a corpus's PostgreSQL groups after a save when the newest is ``every_s`` old (the SQLite
    file's backups' half hour, core/backup.py) or there is none: ``python -m precompute.store snapshot``, started
    in a process of its own (its copying takes no time from the page that saved), its output in
    ``backups/postgresql-snapshot.log``. Looked for at most every ``check_s`` per corpus in this process, and never
    while a snapshot is being taken, by this server or another of the team or from cron: the server takes the
    snapshots' lock (``LOCK``) before it starts the job and hands it over, so two that look at once start one.
    Returns the job started, or None. Never raises: a snapshot must not fail the save it follows."""
    from core.db import BACKUP_CHECK_S

    key, now = str(groups_db), time.monotonic()
    with _started_lock:
        last = _started.get(key)
        if last and (now < last[0] + (BACKUP_CHECK_S if check_s is None else check_s)
                     or (last[1] is not None and last[1].poll() is None)):
            return None
        _started[key] = (now, None)
    try:
        newest = snapshots_of(groups_db)
        if newest and time.time() - newest[0].made.timestamp() < (backup.EVERY_S if every_s is None else every_s):
            return None
        where = folder(groups_db)
        where.mkdir(parents=True, exist_ok=True)
        lock = try_lock(where / LOCK)
        if lock is None:
            return None  # a snapshot is being taken
        env = {**os.environ, "SEMANNO_DB": dsn, "SEMANNO_DATA": str(Path(groups_db).parent.parent),
               LOCK_ENV: str(lock)}
        try:
            with open(where / SNAPSHOT_LOG, "wb") as out:  # the child keeps its own handle
                job = subprocess.Popen([sys.executable, "-m", "precompute.store", "snapshot", "--corpus", corpus],
                                       cwd=Path(__file__).resolve().parents[1], env=env, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                       pass_fds=(lock,))
        finally:
            os.close(lock)  # the job holds the lock through its copy until it exits, however it ends
        with _started_lock:
            _started[key] = (now, job)
        return job
    except Exception as exc:  # noqa: BLE001 - logged: the save it follows has been written
        log.warning("no snapshot of corpus %s's groups started: %s", corpus, exc)
        return None


def yield_cpu(wanted: int | None = None) -> int | None:
    """Lowers this process's CPU priority to niceness ``wanted`` (by default ``SEMANNO_SNAPSHOT_NICE``, or
    ``NICE``, the lowest): the snapshot job the app starts after a save (after_write) then takes only the CPU its
    searches leave, where before a search beside it took about twice its time (bench/pg_snapshot.py); a snapshot
    from cron does the same with ``--nice``. The job runs in a session of its own, which Linux schedules as a
    group of its own (autogroup) weighed against the app's by the group's niceness, not the process's: both are
    set, the group's only where the process leads its session (else the group is the terminal's or the caller's,
    left as it is: logged). Returns the niceness it runs at, or None where the system has none (logged; the job
    goes on)."""
    asked = f"{NICE_ENV}={os.environ.get(NICE_ENV)!r}" if wanted is None else f"--nice {wanted}"
    try:
        wanted = int(os.environ.get(NICE_ENV, NICE) if wanted is None else wanted)
        now = os.nice(max(0, wanted - os.nice(0)))
    except (AttributeError, ValueError, OSError) as exc:
        log.warning("the snapshot job runs at the priority it was started with (%s): %s", asked, exc)
        return None
    group = Path("/proc/self/autogroup")
    if not group.exists():
        return now
    if os.getsid(0) != os.getpid():  # its session's group holds the processes that started it: not lowered
        log.info("its session's group of processes (%s) is left as it is: Linux weighs that group against the "
                 "app's, not this process (start the job with setsid to lower both)", group.read_text().strip())
        return now
    try:  # alone in its session's group: the group is the job
        group.write_text(str(now))
        log.info("its session's group of processes: %s", group.read_text().strip())
    except OSError as exc:
        log.warning("the snapshot job's group of processes runs at the priority it was started with: %s", exc)
    return now


def last_failure(groups_db: Path, kept: list | None = None) -> str | None:
    """The last line of the app's last snapshot job (``backups/postgresql-snapshot.log``) where it did not end in
    a snapshot: it failed, or was killed midway. None where it did, where none ran, and while one is being taken.
    ``kept``: the snapshots (snapshots_of), where already listed."""
    where = folder(groups_db)
    try:
        written = (where / SNAPSHOT_LOG).stat().st_mtime
        lines = [line.strip() for line in re.split(r"[\r\n]+", (where / SNAPSHOT_LOG).read_text(errors="replace"))
                 if line.strip()]
        if not lines or _being_taken(where):
            return None  # starting, or copying
        kept = snapshots_of(groups_db) if kept is None else kept
        if kept and (any(kept[0].path.name in line for line in lines[-3:])  # its last words name the one it wrote
                     or kept[0].path.stat().st_mtime > written):  # or one was taken since (from cron)
            return None
    except OSError:
        return None
    return lines[-1][:300]


def snapshots_line(groups_db: Path, corpus: str, kept: list | None = None) -> str:
    """What the Groups page says of the snapshots kept of a corpus's PostgreSQL groups (``kept``: snapshots_of,
    where already listed)."""
    kept = snapshots_of(groups_db) if kept is None else kept
    taken = (f"taken after a save when the newest is half an hour old, in {folder(groups_db)} "
             f"(python -m precompute.store backups --corpus {corpus} lists them, restore puts one back)")
    if not kept:
        return f"No snapshot of the team's groups yet: one is {taken}."
    ordinary = _ordinary(kept, backup.KEEP)
    past = (f"; {len(kept) - ordinary:,} older than the newest {ordinary} kept, as they hold saved versions the "
            "server lacks") if len(kept) > ordinary else ""
    return (f"Snapshots of the team's groups at PostgreSQL: {len(kept)} ({sum(c.size for c in kept) / 1e6:,.1f} MB"
            f"{past}), the newest {kept[0].made:%Y-%m-%d %H:%M} UTC; {taken}.")


_VERSIONS = ("SELECT g.name, v.number, v.created_at FROM versions v JOIN groups g ON g.id=v.group_id "
             "WHERE g.corpus=?")


@dataclass
class Lacking:
    """Saved versions that kept snapshots hold and the server does not (a dump from before put back, rows removed
    at the server): ``snapshots`` (core.backup.Copy) holding some, newest first; the groups' names; how many;
    ``beside``: those of the names of which the server holds other versions under the snapshots' numbers (saved
    since it lost them): put back, each goes beside the server's group as a group of its own (beside_names);
    ``missing``: those versions as (group, number, time saved); ``gone``: the versions the snapshots hold and the
    server lacks that were let go (let_go), not among the others, with when each was let go; ``drafts`` (token
    -> owner) and ``decisions`` ({(topic, item)}): the drafts of unsaved work and an adjudicator's decisions the
    snapshots hold that the server lost (_lost: not discarded nor taken back there)."""
    snapshots: list
    names: list[str]
    versions: int
    beside: list[str] = field(default_factory=list)
    missing: frozenset = frozenset()
    gone: dict = field(default_factory=dict)
    drafts: dict = field(default_factory=dict)
    decisions: frozenset = frozenset()

    def __bool__(self) -> bool:
        """Whether the server lacks anything the snapshots hold (saved versions, drafts or decisions)."""
        return bool(self.versions or self.drafts or self.decisions)

    def in_words(self) -> str:
        """How many saved versions, drafts and decisions the server lacks, in words (_things)."""
        return _things(self.versions, _work_of((self.drafts, self.decisions)))


def lacking(store: GroupStore, groups_db: Path | None, kept: list | None = None, gone: dict | None = None) -> Lacking:
    """What the corpus's PostgreSQL store lacks of the saved versions its kept snapshots hold: every snapshot, not
    only the newest, since one taken after the loss holds it no more. Each version's group, number and time of
    saving are compared, no labels (a version the server lost and one saved since under its number differ in
    time); a version put back beside the server's group (beside_names) counts as there, and so does one of which
    the server holds a version under its number with the same labels (only then are labels read). A snapshot's
    versions are read once (without writing it), the server's on every call. ``kept``: the snapshots
    (snapshots_of), where already listed. A version let go (let_go; ``gone``, where already read) is not lacking.
    The drafts and decisions the server lost (_lost) are found alike."""
    kept_ones = snapshots_of(groups_db) if kept is None else kept
    if not kept_ones:  # nothing to compare: the server is not asked
        return Lacking([], [], 0)
    gone = let_go_of(groups_db) if gone is None and groups_db is not None else gone or {}
    holding, missing, left = [], set(), set()
    with store.db.read() as s:
        drafts, decisions = _lost(_held_work(tuple(_stamped(c.path) for c in kept_ones)),
                                  _work(s.run, store.corpus, times=False))
        rows = s.run(_VERSIONS, (store.corpus,))
        there = {(_base(name), number, made) for name, number, made in rows}
        numbered = {(name, number) for name, number, _ in rows}
        sums: dict = {}  # the server's versions read for their labels, once a call

        def there_sum(name, number, _made):
            if (name, number) not in sums:
                sums[name, number] = _sum_there(s, store, name, number)
            return sums[name, number]

        for kept in kept_ones:
            stamp = kept.path.stat().st_mtime_ns
            theirs = {v for v in _held(str(kept.path), stamp) - there  # one saved again under its number with the
                      if (v[0], v[1]) not in numbered  # same labels is not lost: labels read for these alone
                      or _sum_held(str(kept.path), stamp, *v) != there_sum(*v)}
            left |= theirs & gone.keys()
            theirs -= gone.keys()
            if theirs or _holds(_work_held(str(kept.path), stamp), drafts, decisions):
                holding.append(kept)
                missing |= theirs
    return Lacking(holding, sorted({name for name, _, _ in missing}), len(missing),
                   sorted({name for name, number, _ in missing if (name, number) in numbered}), frozenset(missing),
                   {v: gone[v] for v in left}, drafts, decisions)


def let_go_of(groups_db: Path) -> dict:
    """The versions let go (let_go) of a corpus's snapshots: (group, number, time saved) -> when; {} where none,
    and where the record cannot be read (logged: the Groups page then warns of them again, nothing is removed)."""
    path = folder(groups_db) / LET_GO
    try:
        return {(r["group"], int(r["number"]), r["saved"]): datetime.fromisoformat(r["at"]).astimezone(timezone.utc)
                for r in json.loads(path.read_text(encoding="utf-8"))["versions"]}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a damaged record: as if none were let go
        log.warning("%s cannot be read (%s): the versions let go are lacking again", path, exc)
        return {}


def let_go(groups_db: Path, versions, at: datetime | None = None) -> dict:
    """Record saved versions the server lacks (``versions``: Lacking.missing's) as removed there on purpose: the
    Groups page stops warning of them and does not put them back (``restore`` from a terminal still does), and the
    snapshots that hold them are kept ``LET_GO_DAYS`` days more past the newest ones (_prune), then removed as the
    others are. ``versions`` empty: none is let go any more (the page warns of them again). Returns the record."""
    at = at or datetime.now(timezone.utc)  # one let go before keeps its time
    return _change_let_go(groups_db, lambda known: {**{tuple(v): at for v in versions}, **known} if versions else {})


def let_go_found(store: GroupStore, groups_db: Path, found: Lacking) -> None:
    """Let go of all that ``found`` (lacking) says the server lacks: its saved versions (let_go) and its drafts and
    decisions (recorded at the server as discarded and taken back: GroupStore.let_go_lost)."""
    if found.versions:
        let_go(groups_db, found.missing)
    if found.drafts or found.decisions:
        store.let_go_lost(found.drafts, found.decisions)


def _change_let_go(groups_db: Path, change) -> dict:
    """Write the record of the versions let go as ``change`` makes it of the one read (under a lock: two servers
    of a team at once); returns it."""
    where = folder(groups_db)
    where.mkdir(parents=True, exist_ok=True)
    lock = try_lock(where / f"{LOCK}.let-go", wait=True)
    try:
        known = change(let_go_of(groups_db))
        save_json(where / LET_GO, {"versions": [{"group": g, "number": n, "saved": made, "at": t.isoformat()}
                                                for (g, n, made), t in sorted(known.items())]})
    finally:
        os.close(lock)
    return known


@functools.lru_cache(maxsize=256)
def _sum_held(path: str, _stamp: int, name: str, number: int, made: str) -> str:
    """The checksum of a snapshot's version (``name`` as _base gives it, its number and time of saving)."""
    con = backup.read_only(Path(path))
    try:
        for vid, group in con.execute("SELECT v.id, g.name FROM versions v JOIN groups g ON g.id=v.group_id WHERE "
                                      "v.number=? AND v.created_at=?", (number, made)):
            if _base(group) == name:
                return checksum(con.execute(_LABELS, (vid,)))
        return ""
    finally:
        con.close()


def _sum_there(s, store: GroupStore, name: str, number: int) -> str:
    """The checksum of the server's version ``number`` of group ``name``."""
    row = s.one(_VERSION, (store.corpus, name, number))
    return checksum(_version_labels(s, row[0])) if row else "-"


@functools.lru_cache(maxsize=64)
def _held(path: str, _stamp: int) -> frozenset:
    """A snapshot's versions as (group, number, time saved), a group put back beside another under the other's
    name (_base); ``_stamp`` (its time of change) keys the cache."""
    con = backup.read_only(Path(path))
    try:  # a snapshot holds one corpus: its rows carry none
        return frozenset((_base(name), number, made) for name, number, made in con.execute(_VERSIONS, ("",)))
    finally:
        con.close()


def _held_by(kept: list) -> set:
    """The versions any of the snapshots ``kept`` (snapshots_of) holds, as _held gives them."""
    return set().union(*(_held(*_stamped(c.path)) for c in kept))


def put_back_lacking(store: GroupStore, found: Lacking) -> list[tuple]:
    """Put into the server the saved work of each snapshot in ``found`` that it lacks, newest first (what a later one
    holds comes from it), and the drafts and decisions it lost that ``found`` lists (``lost_work_only``, ``within``):
    those discarded or taken back there on purpose (as the server or any snapshot recorded) do not come back (``python
    -m precompute.store restore`` puts back everything). A group of which the server holds other versions under the
    snapshot's numbers is put back beside it (migrate's ``beside``). A snapshot that lacks nothing more once the newer
    ones are back is not copied again. Returns (snapshot, Report) for each put back. Stops at the first that cannot be
    put back (ValueError); what came before stays. The versions let go (``found.gone``) are left out."""
    reports = []
    for kept in found.snapshots:
        if reports and not lacking(store, None, [kept], found.gone):
            continue  # the newer ones held all it had that the server lacked
        try:
            reports.append((kept, put_back_snapshot(kept.path, store, lost_work_only=True, beside=True,
                                                    leave=frozenset(found.gone),
                                                    within=(found.drafts, found.decisions))))
        except ValueError as exc:
            done = f" (put back before it: {counted(len(reports), 'newer snapshots')})"
            raise ValueError(f"{kept.path.name}: {exc}{done if reports else ''}") from None
    return reports


def folder(groups_db: Path) -> Path:
    """Where a corpus's snapshots, their lock and the app's last job's log are: its backups folder, beside the
    backups of its SQLite file (``groups_db``: where that file is or would be)."""
    return backup.folder(Path(groups_db))


def snapshots_of(groups_db: Path) -> list:
    """A corpus's snapshots of its PostgreSQL groups (core.backup.Copy), newest first, beside the backups of its
    SQLite file (``groups_db``: where that file is or would be)."""
    return backup.copies(Path(groups_db).with_name(f"{SNAPSHOTS}.sqlite"))


def snapshot(src: GroupStore, groups_db: Path, keep: int = backup.KEEP, progress=None) -> tuple[Path, Report]:
    """Every group of ``src`` (a corpus's PostgreSQL store) with every version, draft, the journal, topics and
    decisions, copied into a new SQLite file and checked there (each version's labels against the server's), made
    one checked file (core.backup) and renamed into the corpus's backups folder as ``postgresql-TIME.sqlite``
    (OSError first where there is no room for it: _room_for). The newest ``keep`` are kept (fewer past a room), and
    an older one holding what the server lost (_prune). The labels of a version the day's newest snapshot holds as
    the server does come from that snapshot (_previous, _labels_from; where it does not hold what it says, every
    label is read from the server again). The app can open the file (a SQLite groups file);
    ``restore`` copies back into the server what it lacks. Returns (the file, what was copied)."""
    where = folder(groups_db)
    where.mkdir(parents=True, exist_ok=True)
    _sweep(where)
    _room_for(src, groups_db, where)
    with tempfile.TemporaryDirectory(prefix=".snapshot-", dir=where) as tmp:
        work = Path(tmp) / "groups.sqlite"
        previous, reuse = _previous(groups_db)
        report = migrate(src, GroupStore(SQLite(work, backups=False)), progress, reuse=reuse)
        if report.from_previous:
            try:
                _labels_from(work, previous, report.from_previous)
            except (sqlite3.Error, ValueError) as exc:  # the previous one unreadable, or not as it said
                log.warning("the labels of %d versions could not be taken from %s (%s): every version's are read "
                            "from the server", len(report.from_previous), previous.name, exc)
                for left in Path(tmp).glob("groups.sqlite*"):
                    left.unlink()
                report = migrate(src, GroupStore(SQLite(work, backups=False)))  # its bar has been through once
        part = Path(tmp) / "checked.sqlite"
        backup.copy_checked(work, part)
        while True:  # a name is a second: one taken this second already is not overwritten, this one waits for the next
            final = where / f"{SNAPSHOTS}-{datetime.now(timezone.utc).strftime(backup._STAMP)}.sqlite"
            try:
                os.link(part, final)  # fails where the name is taken, even by another process at the same moment
                break
            except FileExistsError:
                time.sleep(0.1)
            except OSError:  # a file system without hard links
                if not final.exists():
                    os.replace(part, final)
                    break
                time.sleep(0.1)
    backup._sync(where)
    _prune(groups_db, keep)
    return final, report


def _previous(groups_db: Path) -> tuple[Path | None, dict | None]:
    """The newest snapshot, where it was taken today (UTC), and its versions as migrate's ``reuse`` takes them: a
    version the server holds as that snapshot does (the same group, number, time of saving and counts) takes its
    labels from there, not from the server (a saved version never changes). The first snapshot of a day reads
    every label from the server again. (None, None) where there is none to use."""
    kept = snapshots_of(groups_db)
    if not kept or kept[0].made.date() != datetime.now(timezone.utc).date():
        return None, None
    try:
        con = backup.read_only(kept[0].path)
        try:
            return kept[0].path, {tuple(r[:5]): r[5] for r in con.execute(
                "SELECT g.name, v.number, v.created_at, v.n_included, v.n_excluded, v.id FROM versions v JOIN groups g "
                "ON g.id=v.group_id")}
        finally:
            con.close()
    except sqlite3.Error as exc:
        log.warning("%s cannot be read (%s): every version's labels are read from the server", kept[0].path.name, exc)
        return None, None


def _labels_from(work: Path, previous: Path, pairs: list) -> None:
    """Copy into the snapshot being made (``work``) the labels of its versions that the previous snapshot holds
    (``pairs``: Report.from_previous), in their order, in one statement; then count each version's included and
    excluded labels against its own counts. ValueError where one differs (nothing is kept of the copy)."""
    con = sqlite3.connect(work.resolve().as_uri(), uri=True, isolation_level=None)
    try:
        con.execute("ATTACH DATABASE ? AS prev", (f"{previous.resolve().as_uri()}?mode=ro",))
        con.execute("BEGIN IMMEDIATE")
        con.execute("CREATE TEMP TABLE reused (new INTEGER PRIMARY KEY, old INTEGER NOT NULL, inc INTEGER NOT NULL, "
                    "exc INTEGER NOT NULL)")
        con.executemany("INSERT INTO temp.reused VALUES (?, ?, ?, ?)", pairs)
        con.execute("INSERT INTO main.labels (version_id, item_id, label, seq) SELECT r.new, l.item_id, l.label, "
                    "COALESCE(l.seq, l.rowid) FROM temp.reused r JOIN prev.labels l ON l.version_id=r.old "
                    "ORDER BY r.new, l.item_id")
        off = con.execute("SELECT r.new FROM temp.reused r LEFT JOIN (SELECT version_id, SUM(label=1) AS inc, "
                          "SUM(label=-1) AS exc FROM main.labels WHERE version_id IN (SELECT new FROM temp.reused) "
                          "GROUP BY version_id) c ON c.version_id=r.new WHERE COALESCE(c.inc, 0)!=r.inc OR "
                          "COALESCE(c.exc, 0)!=r.exc LIMIT 1").fetchone()
        if off is not None:
            raise ValueError(f"version #{off[0]}'s labels there are not as many as it holds")
        con.execute("COMMIT")
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()


def expected_size(src: GroupStore, kept: list) -> int:
    """About how many bytes a snapshot of ``src`` takes: the newest kept one's size and a tenth more, or, where
    the server holds more than that or there is none, its labels and events at ``ROW_BYTES`` each and twice their
    ids' mean length (the id is held in the row and in its index; measured in bench/pg_snapshot.py)."""
    with src.db.read() as s:
        labels = s.one("SELECT COALESCE(SUM(v.n_included + v.n_excluded), 0) FROM versions v JOIN groups g ON "
                       "g.id=v.group_id WHERE g.corpus=?", (src.corpus,))[0]
        events = s.one("SELECT COUNT(*) FROM events e JOIN journal j ON j.id=e.entry WHERE j.corpus=?",
                       (src.corpus,))[0]
        width = s.one("SELECT AVG(LENGTH(item_id)) FROM (SELECT l.item_id FROM labels l JOIN versions v ON "
                      "v.id=l.version_id JOIN groups g ON g.id=v.group_id WHERE g.corpus=? LIMIT 1000) AS sample",
                      (src.corpus,))[0] or 20
    counted = int(1e6 + (int(labels) + int(events)) * (ROW_BYTES + 2 * float(width)))  # 1 MB: the tables' own
    return max(counted, int(kept[0].size * 1.1) if kept else 0)


def _room_for(src: GroupStore, groups_db: Path, where: Path) -> None:
    """core.embed.NoRoom (a ValueError), before anything is written, where the backups folder's disk has no room
    for a snapshot: its copy and the checked copy of it side by side (expected_size twice over), and
    ``core.backup.SPARE`` bytes beside them. A disk filled by a snapshot would fail the saves of the app's SQLite
    files on it, and the server's where it shares the disk; a refused one is named on the Groups page
    (last_failure), the snapshots kept are kept."""
    size = expected_size(src, snapshots_of(groups_db))
    need_room(where, int(2 * size + backup.SPARE),
              f"a snapshot of corpus {src.corpus}'s groups (its copy and the check's, {size / 1e6:,.0f} MB each)",
              "nothing was written, and the snapshots kept are kept; free room on that disk for the next")


def _records_of(kept: list) -> dict:
    """What any of the snapshots ``kept`` (snapshots_of) recorded as removed on purpose (_recorded); one that cannot
    be read adds nothing (_prune removes it)."""
    records = []
    for c in kept:
        try:
            records.append(_work_held(*_stamped(c.path)).dropped)
        except (OSError, sqlite3.Error):
            pass
    return _recorded(records)


def _ordinary(kept: list, keep: int) -> int:
    """How many of the newest snapshots (``kept``: snapshots_of) are kept as a matter of course: as many as of a
    SQLite file's backups (core.backup.within_room: the newest ``keep``, within a room)."""
    return backup.within_room([c.size for c in kept], keep, kept[0].size) if kept else 0


def _prune(groups_db: Path, keep: int) -> list[Path]:
    """Remove the snapshots beyond the newest ``keep`` (fewer where they would take more room: _ordinary), but for
    one that holds saved versions that neither the server (as the newest snapshot, just taken, holds it) nor a newer
    snapshot kept holds: the server lost them, and a loss nobody has seen on the Groups page yet would otherwise
    roll out of the snapshots within ``keep`` saves' half hours. Of several that hold a lost version, the newest is
    kept. A version let go (let_go) ``LET_GO_DAYS`` days ago or more counts as held. So with the drafts and
    decisions the server lost (_lost, against the newest snapshot). Returns those kept past ``keep``; one that
    cannot be read is removed, as before."""
    kept_ones, past = snapshots_of(groups_db), []
    keep = _ordinary(kept_ones, keep)
    since = datetime.now(timezone.utc) - timedelta(days=LET_GO_DAYS)
    gone = let_go_of(groups_db)
    try:
        covered = _held_by(kept_ones[:keep]) | {v for v, at in gone.items() if at <= since}
        newest = _work_held(*_stamped(kept_ones[0].path)) if kept_ones else None
        records = _records_of(kept_ones)
        work = _work_of(_lost(_held_work(tuple(_stamped(c.path) for c in kept_ones[1:keep])), newest,
                              also=(records,))) if kept_ones else set()
    except (OSError, sqlite3.Error) as exc:  # a kept one unreadable: the old rule, by count
        log.warning("snapshots pruned by count alone: %s", exc)
        covered = None
    for old in kept_ones[keep:]:
        try:
            lost = covered is not None and {v for v in _held(*_stamped(old.path)) - covered
                                             if not _same_in(kept_ones[0].path, old.path, *v)}
            lost_work = covered is not None and _work_of(_lost(_together([_work_held(*_stamped(old.path))]),
                                                               newest, also=(records,))) - work
        except (OSError, sqlite3.Error):
            lost = lost_work = set()
        if lost or lost_work:
            covered |= lost
            work |= lost_work
            past.append(old.path)
            log.warning("%s kept past the newest %d: it holds %s the server lacks%s; the Groups page puts them back",
                        old.path.name, keep, _things(len(lost), lost_work),
                        f" (of {', '.join(sorted({name for name, _, _ in lost})[:5])})" if lost else "")
        else:
            old.path.unlink(missing_ok=True)
    if gone:  # the record keeps only the versions let go that a snapshot still holds
        try:
            held = _held_by(snapshots_of(groups_db))
        except (OSError, sqlite3.Error):
            held = None
        if held is not None and gone.keys() - held:
            _change_let_go(groups_db, lambda known: {v: at for v, at in known.items() if v in held})
    return past


def _work_of(lost: tuple[dict, frozenset]) -> set:
    """_lost's drafts and decisions as one set: ("draft", token), ("decision", (topic, item))."""
    return {("draft", t) for t in lost[0]} | {("decision", k) for k in lost[1]}


def _things(versions: int, work: set) -> str:
    """How many saved versions, drafts and decisions (_work_of), in words."""
    drafts = sum(1 for kind, _ in work if kind == "draft")
    parts = [counted(versions, "saved versions") if versions else "", counted(drafts, "unsaved drafts")
             if drafts else "", counted(len(work) - drafts, "adjudicator's decisions") if len(work) > drafts else ""]
    return ", ".join(p for p in parts if p)


def _same_in(newest: Path, old: Path, name: str, number: int, made: str) -> bool:
    """Whether the newest snapshot holds version ``number`` of group ``name`` with the labels that ``old`` holds
    under it (saved again with the same labels after the server lost it: not lost)."""
    con = backup.read_only(newest)
    try:
        row = con.execute(_VERSION, ("", name, number)).fetchone()
        there = checksum(con.execute(_LABELS, row)) if row else "-"
    finally:
        con.close()
    return there == _sum_held(str(old), old.stat().st_mtime_ns, name, number, made)


def _sweep(where: Path) -> None:
    """The working folders of snapshots and put-backs killed midway (each holds a copy of a corpus's groups)."""
    for pattern in (".snapshot-*", ".put-back-*"):
        backup.sweep_left(where, pattern)


def _being_taken(where: Path) -> bool:
    """A snapshot is being taken, by this server or another of the team or from cron: its job holds ``LOCK``."""
    lock = try_lock(where / LOCK)
    if lock is not None:
        os.close(lock)
    return lock is None


def snapshot_lock(groups_db: Path):
    """The snapshots' lock of a corpus (``LOCK``) for a snapshot taken from a terminal or cron, waiting for one
    being taken to finish: a descriptor to close when done."""
    return try_lock(folder(groups_db) / LOCK, wait=True)


def put_back_snapshot(chosen: Path, dst: GroupStore, progress=None, saved_work_only: bool = False,
                      beside: bool = False, leave: frozenset = frozenset(), lost_work_only: bool = False,
                      within: tuple | None = None) -> Report:
    """Copy into ``dst`` (the corpus's PostgreSQL store) what it lacks of a snapshot: groups, versions, drafts, topics,
    assignments, decisions and journal entries it does not hold (``saved_work_only``, ``beside``, ``leave``,
    ``lost_work_only``, ``within``: see migrate). Nothing there is overwritten: a version the server holds with other
    labels refuses the whole copy, or with ``beside`` puts its group back beside the server's. The snapshot is read from
    a copy of it (opening a SQLite file may write to it); core.embed.NoRoom where the disk has no room for that copy."""
    where = Path(chosen).parent
    _sweep(where)
    size = Path(chosen).stat().st_size
    need_room(where, int(size + backup.SPARE), f"reading {Path(chosen).name} back (from a copy of it, beside it, "
              f"{size / 1e6:,.0f} MB)", "nothing was put back; free room on that disk")
    with tempfile.TemporaryDirectory(prefix=".put-back-", dir=where) as tmp:
        work = Path(tmp) / "groups.sqlite"
        shutil.copyfile(chosen, work)
        return migrate(GroupStore(SQLite(work, backups=False)), dst, progress, saved_work_only, beside, leave,
                       lost_work_only=lost_work_only, within=within)
