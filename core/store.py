"""Saved groups, their versions, drafts and the journal of labelling steps; on SQLite (the default: one
file per corpus) or PostgreSQL (for teams: ``SEMANNO_DB``), through one interface (core/db.py).

A group has a unique name per corpus, an annotator, notes, timestamps, and versions: every save adds a
version with its labels (corpus id, included/excluded) and the session's history, so no earlier
version is ever lost. Deleting is soft (``deleted_at``) and can be undone.

Every labelling step (a search bringing texts in, a click, a bulk or lasso action, a group switch, an
undo) is appended to the **journal** of the tab's work as it happens, with who, when, the method and
its parameters, and one **event** per text it changed. A saved version records how far its work's
journal went, so its membership can be rebuilt from the events (:meth:`GroupStore.membership`), and a
text's provenance (who labelled it, when, through which search) read back (:meth:`GroupStore.provenance`).
"""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from core.db import Backend, DatabaseError, PostgreSQL, SQLite, configured_dsn  # noqa: F401 (DatabaseError: re-exported)
from core.db import now_iso as _now

# Drafts are pruned when saved (or empty) and untouched for SAVED_DRAFT_DAYS, and whatever they hold
# when untouched for ABANDONED_DRAFT_DAYS (README: "Drafts"); never an unsaved one younger than that.
SAVED_DRAFT_DAYS = 1
ABANDONED_DRAFT_DAYS = 30


class GroupExists(ValueError):
    """A group of that name exists; the caller must choose overwrite (new version) or a new name. Says who saved
    its latest version (``by``), which (``number``) and when (``at``), where known."""

    def __init__(self, name: str, number: int | None = None, by: str = "", at: str = ""):
        super().__init__(f"a group named {name!r} exists; overwrite it (a new version) or choose another name")
        self.name, self.number, self.by, self.at = name, number, by or "", at or ""


MAX_NAME_CHARS = 120


def check_group_name(name: object, what: str = "a group name", empty: str = "a group needs a name") -> str:
    """The name, stripped; ValueError when it is empty, invisible, too long or holds control
    characters (a name is shown in lists and becomes an export's file name). ``what`` and ``empty`` word the
    messages for another kind of name (a person's)."""
    if not isinstance(name, str):
        raise ValueError(f"{what} must be text, got {type(name).__name__}")
    name = name.strip()
    if not name:
        raise ValueError(empty)
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{what} may have at most {MAX_NAME_CHARS} characters; this one has {len(name):,}")
    bad = [c for c in name if unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn")]
    if bad:
        raise ValueError(f"{what} cannot hold control characters (found U+{ord(bad[0]):04X})")
    if all(unicodedata.category(c) in ("Cf", "Zs", "Zl", "Zp", "Mn", "Me") for c in name):
        raise ValueError(f"{what} needs at least one visible character")
    return name


class GroupNotFound(KeyError):
    pass


class TeamGroup(ValueError):
    """The group is a topic's record (an annotator's group for it, or its gold): the Team and Review pages count it,
    so it is not deleted. The message says whose and for which topic."""

    def __init__(self, name: str, topic: str, annotator: str | None, submitted: bool):
        whose = f"{annotator}'s group for the topic {topic!r}" if annotator else f"the gold of the topic {topic!r}"
        counted = (", submitted: the topic's agreement and gold count it" if submitted else
                   ": the topic's Team page counts it")
        super().__init__(f"{name!r} is {whose}{counted}, so it is not deleted; save a new version instead")
        self.name, self.topic, self.annotator = name, topic, annotator


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
    work: str | None = None  # the tab's work (draft token) whose journal this version's labels came from
    last_entry: int | None = None  # how far that journal went when it was saved
    kind: str = "version"  # "version", or "gold" for an adjudicated topic

    def labels(self) -> dict[str, int]:
        """id -> 1 (included) or -1 (excluded)."""
        return {**{i: 1 for i in self.included}, **{i: -1 for i in self.excluded}}


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
    undone: tuple = ()  # the steps Redo can put back (dicts, the latest last), when read with its steps
    unsaved_behind: int = 0  # texts of the unsaved group behind a switch (its counts in meta["behind"])


class VersionChanged(ValueError):
    """The group was saved again (by someone) since this session opened or last saved it: saving over it
    asks first. The message says who saved it and when."""

    def __init__(self, name: str, number: int, by: str, at: str):
        super().__init__(f"{name!r} was changed by {by or 'someone'} at {at[:16].replace('T', ' ')} UTC (version "
                         f"{number}) since you opened it")
        self.name, self.number, self.by, self.at = name, number, by, at


@dataclass(frozen=True)
class Provenance:
    """Who last labelled a text, when, how (the method and its parameters), and to what."""

    item_id: str
    label: int
    who: str
    at: str
    method: str | None
    params: dict


class GroupStore:
    """The groups, drafts and journal of one corpus. ``GroupStore(path)``: a SQLite file (the default;
    one per corpus). ``GroupStore(backend, corpus=NAME)``: any backend of core/db.py (PostgreSQL shares one
    database between corpora: its rows carry ``corpus``)."""

    def __init__(self, where: str | Path | Backend, corpus: str = "", timeout_s: float = 30.0):
        self.db = where if isinstance(where, Backend) else SQLite(where, timeout_s)
        self.corpus = corpus
        self.path = getattr(self.db, "path", None)
        self._pruned_at = 0.0
        self.snapshots_at: Path | None = None  # PostgreSQL: the groups file beside which snapshots are taken

    def _saved(self) -> None:
        """After a write of saved work (a version, a deletion, a topic, a submission, a decision): on PostgreSQL
        opened by :func:`open_store`, a snapshot of the corpus's groups when one is due (core/migrate.py). A SQLite
        file takes its own backups (core/db.py)."""
        if self.snapshots_at is not None:
            from core import migrate

            migrate.after_write(self.corpus, self.snapshots_at, self.db.dsn)

    def __str__(self) -> str:
        return str(self.db)

    # --- groups and versions -------------------------------------------------------------------
    def save(self, name: str, included: Sequence[str], excluded: Sequence[str], *, annotator: str = "",
             notes: str | None = None, session_json: str | None = None, overwrite: bool = False,
             saved_by: str | None = None, expect: int | None = None, work: str | None = None,
             topic: str | None = None, kind: str = "version") -> int:
        """Save a new version of group ``name``; return its version number.

        With ``overwrite=False`` an existing live group raises GroupExists. Overwriting adds a version:
        earlier versions stay readable through ``load(name, version=N)``. ``expect``: the version this
        session opened or last saved; when the group's latest version is another one (someone saved in
        between), VersionChanged says who and when, and nothing is written. ``work``: the tab's work whose
        journal this version's labels come from (its position is recorded with the version).
        """
        name = check_group_name(name)
        inc, exc = [str(i) for i in included], [str(i) for i in excluded]
        both = set(inc) & set(exc)
        if both:
            raise ValueError(f"ids both included and excluded: {sorted(both)[:5]}")
        now = _now()
        with self.db.tx() as db:
            lock = " FOR UPDATE" if self.db.dialect == "postgresql" else ""
            row = db.one("SELECT id, deleted_at FROM groups WHERE corpus=? AND name=?" + lock, (self.corpus, name))
            if row is None:
                row = db.one("INSERT INTO groups (corpus, name, annotator, notes, created_at, updated_at, topic) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id, deleted_at",
                             (self.corpus, name, annotator, notes or "", now, now, topic))
                created = row is not None
                if row is None:  # created by another writer a moment ago: take its row, locked
                    row = db.one("SELECT id, deleted_at FROM groups WHERE corpus=? AND name=?" + lock,
                                 (self.corpus, name))
            else:
                created = False
            gid, deleted = row
            latest = db.one("SELECT number, COALESCE(saved_by, annotator), created_at FROM versions WHERE group_id=? "
                            "ORDER BY number DESC LIMIT 1", (gid,))
            if not created and deleted is None and not overwrite:
                raise GroupExists(name, *(latest or ()))
            if expect is not None and latest is not None and latest[0] != expect and not created:
                raise VersionChanged(name, latest[0], latest[1], latest[2])
            if not created:
                db.run("UPDATE groups SET updated_at=?, deleted_at=NULL, annotator=?"
                       + (", notes=?" if notes is not None else "") + " WHERE id=?",
                       (now, annotator, notes, gid) if notes is not None else (now, annotator, gid))
            number = (latest[0] if latest else 0) + 1
            last = db.one("SELECT MAX(id) FROM journal WHERE corpus=? AND work=?", (self.corpus, work))[0] if work else None
            vid = db.one("INSERT INTO versions (group_id, number, annotator, created_at, n_included, n_excluded, "
                         "session_json, saved_by, work, last_entry, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                         "RETURNING id", (gid, number, annotator, now, len(inc), len(exc), session_json, saved_by,
                                          work, last, kind))[0]
            db.insert_rows("labels", ("version_id", "item_id", "label", "seq"),
                           [(vid, i, 1, n) for n, i in enumerate(inc)] + [(vid, i, -1, len(inc) + n)
                                                                          for n, i in enumerate(exc)])
        self._saved()
        return number

    def list(self, include_deleted: bool = False) -> list[GroupInfo]:
        with self.db.read() as db:
            rows = db.run(
                "SELECT g.name, g.annotator, g.notes, g.created_at, g.updated_at, g.deleted_at, "
                "(SELECT COUNT(*) FROM versions WHERE group_id=g.id), "
                "(SELECT n_included FROM versions WHERE group_id=g.id ORDER BY number DESC LIMIT 1), "
                "(SELECT n_excluded FROM versions WHERE group_id=g.id ORDER BY number DESC LIMIT 1) "
                "FROM groups g WHERE g.corpus=?" + ("" if include_deleted else " AND g.deleted_at IS NULL")
                + " ORDER BY g.updated_at DESC", (self.corpus,))
        return [GroupInfo(*r[:6], int(r[6]), int(r[7] or 0), int(r[8] or 0)) for r in rows]

    def stamp(self) -> tuple:
        """Changes whenever a group of the corpus changes (for caches): the SQLite file's and its
        write-ahead log's mtimes, or PostgreSQL's latest update and count."""
        if self.path is not None:
            return tuple(f.stat().st_mtime_ns if f.exists() else 0 for f in (self.path, Path(f"{self.path}-wal")))
        with self.db.read() as db:
            return tuple(db.one("SELECT MAX(updated_at), COUNT(*), MAX(deleted_at) FROM groups WHERE corpus=?",
                                (self.corpus,)))

    def names(self) -> list[str]:
        return [g.name for g in self.list()]

    def _version_row(self, db, name: str, version: int | None):
        g = db.one("SELECT id, notes FROM groups WHERE corpus=? AND name=?", (self.corpus, name))
        if not g:
            raise GroupNotFound(name)
        v = db.one("SELECT id, number, annotator, created_at, session_json, saved_by, work, last_entry, kind "
                   "FROM versions WHERE group_id=? " + ("AND number=?" if version else "ORDER BY number DESC LIMIT 1"),
                   (g[0], version) if version else (g[0],))
        if not v:
            raise GroupNotFound(f"{name} version {version}")
        return g, v

    def load(self, name: str, version: int | None = None) -> GroupVersion:
        order = "COALESCE(seq, rowid)" if self.db.dialect == "sqlite" else "seq"
        with self.db.read() as db:
            g, v = self._version_row(db, name, version)
            labels = db.run(f"SELECT item_id, label FROM labels WHERE version_id=? ORDER BY {order}", (v[0],))
        return GroupVersion(name, v[1], v[2], v[3], [i for i, lab in labels if lab == 1],
                            [i for i, lab in labels if lab == -1], v[4], g[1], v[5], v[6], v[7], v[8])

    def versions(self, name: str) -> list[tuple[int, str, str, int, int]]:
        with self.db.read() as db:
            return [tuple(r) for r in db.run(
                "SELECT v.number, v.created_at, v.annotator, v.n_included, v.n_excluded FROM versions v "
                "JOIN groups g ON g.id=v.group_id WHERE g.corpus=? AND g.name=? ORDER BY v.number", (self.corpus, name))]

    def delete(self, name: str) -> None:
        """Soft delete: hidden from the list, restorable with ``restore``. A topic's group (an annotator's, or its
        gold) raises TeamGroup: the topic's agreement and gold go on counting it, so it would only vanish from the
        list (:meth:`team_record`)."""
        if (record := self.team_record(name)) is not None:
            raise TeamGroup(name, *record)
        with self.db.tx() as db:
            db.run("UPDATE groups SET deleted_at=? WHERE corpus=? AND name=? AND deleted_at IS NULL",
                   (_now(), self.corpus, name))
            if db.rowcount == 0:
                raise GroupNotFound(name)
        self._saved()

    def team_record(self, name: str) -> tuple[str, str | None, bool] | None:
        """(topic, annotator, submitted) where the group is an annotator's for a topic, (topic, None, False) where it
        is a topic's gold; None for any other group."""
        from core.teams import gold_group

        for topic, annotator, group, submitted_at in self.team_groups():
            if group == name:
                return topic.name, annotator, submitted_at is not None
        return next(((t.name, None, False) for t in self.topics() if gold_group(t.name) == name), None)

    def restore(self, name: str) -> None:
        with self.db.tx() as db:
            db.run("UPDATE groups SET deleted_at=NULL WHERE corpus=? AND name=? AND deleted_at IS NOT NULL",
                   (self.corpus, name))
            if db.rowcount == 0:
                raise GroupNotFound(name)
        self._saved()

    # --- the journal: every labelling step, with its events --------------------------------------
    def append_journal(self, work: str, who: str, entries: Sequence[dict]) -> None:
        """Append a tab's journal entries (core.session.Session.journal: kind apply|undo|redo|base, step id, at,
        method, params, and ``changes`` as (item_id, old, new)) with one event per changed text."""
        with self.db.tx() as db:
            self._append_journal(db, work, who, entries)

    def _append_journal(self, db, work: str, who: str, entries: Sequence[dict]) -> None:
        for e in entries:
            entry = db.one("INSERT INTO journal (corpus, work, kind, step, at, who, method, params_json) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                           (self.corpus, work, e["kind"], e.get("step"), e["at"], who, e.get("method"),
                            json.dumps(e.get("params") or {}, ensure_ascii=False, default=str)))[0]
            db.many("INSERT INTO events (entry, item_id, old_label, label) VALUES (?, ?, ?, ?)",
                    [(entry, str(i), int(old), int(new)) for i, old, new in e["changes"]])

    def membership(self, name: str, version: int | None = None) -> tuple[list[str], list[str]]:
        """A version's (included, excluded) ids rebuilt from its work's events, up to where its journal
        was when it was saved (the events replayed in order, from an empty group)."""
        with self.db.read() as db:
            _, v = self._version_row(db, name, version)
            work, last = v[6], v[7]
            if work is None or last is None:
                raise ValueError(f"{name!r} version {v[1]} was saved without a journal (before label events)")
        state = self.work_labels(work, last)
        return [i for i, v in state.items() if v == 1], [i for i, v in state.items() if v == -1]

    def work_labels(self, work: str, up_to: int | None = None, before_step: str | None = None,
                    through_step: str | None = None) -> dict[str, int]:
        """id -> label (1 or -1) of every text a work's events (up to entry ``up_to``; with ``before_step``, up to
        where the step of that id last took effect: the group it replaced; with ``through_step``, up to and with
        it: the group it made, undone since or not) leave labelled, the events replayed in order from an empty
        group: a version's members, or a draft's group by id (rows move when the corpus is imported again). Empty
        when that step never took effect in that work."""
        with self.db.read() as db:
            if (step := before_step or through_step) is not None:
                r = db.one("SELECT MAX(id) FROM journal WHERE corpus=? AND work=? AND step=? AND kind IN "
                           "('apply', 'redo')", (self.corpus, work, step))
                if r is None or r[0] is None:
                    return {}
                up_to = int(r[0]) - (1 if before_step is not None else 0)
            rows = db.run("SELECT e.item_id, e.label FROM events e JOIN journal j ON j.id=e.entry WHERE j.corpus=? "
                          "AND j.work=? AND j.id<=? ORDER BY e.id",
                          (self.corpus, work, up_to if up_to is not None else 2 ** 62))
        state: dict[str, int] = {}
        for item, label in rows:
            if label:
                state[item] = label
            else:
                state.pop(item, None)
        return state

    def provenance(self, item_ids: Sequence[str], works: Sequence[str]) -> dict[str, Provenance]:
        """For each text, the last event that labelled it in any of ``works`` (a tab's own work, the work
        of the version it opened): who, when, how."""
        items, works = [str(i) for i in item_ids], [w for w in works if w]
        if not items or not works:
            return {}
        out: dict[str, Provenance] = {}
        with self.db.read() as db:
            rows = db.run(
                f"SELECT e.item_id, e.label, j.who, j.at, j.method, j.params_json FROM events e JOIN journal j "
                f"ON j.id=e.entry WHERE j.corpus=? AND j.work IN ({','.join('?' * len(works))}) AND e.item_id IN "
                f"({','.join('?' * len(items))}) ORDER BY e.id", (self.corpus, *works, *items))
        for item, label, who, at, method, params in rows:
            out[item] = Provenance(item, int(label), who, at, method, json.loads(params or "{}"))
        return out

    def journal(self, work: str, up_to: int | None = None) -> list[dict]:
        """A work's journal with its events, in order (up to entry ``up_to``: a version's own events),
        for an export of a group's event log."""
        with self.db.read() as db:
            rows = db.run("SELECT j.id, j.kind, j.step, j.at, j.who, j.method, j.params_json, e.item_id, e.old_label, "
                          "e.label FROM journal j JOIN events e ON e.entry=j.id WHERE j.corpus=? AND j.work=? AND j.id<=? "
                          "ORDER BY e.id", (self.corpus, work, up_to if up_to is not None else 2 ** 62))
        return [{"entry": r[0], "kind": r[1], "step": r[2], "at": r[3], "who": r[4], "method": r[5],
                 "params": r[6], "item_id": r[7], "old_label": r[8], "label": r[9]} for r in rows]

    # --- team work: topics, assignments, the people of a browser ------------------------------
    def create_topic(self, name: str, guidelines: str, created_by: str, blind: bool = True) -> None:
        """A named topic with written guidelines (ValueError when the corpus has one of that name)."""
        name = check_group_name(name)
        with self.db.tx() as db:
            row = db.one("INSERT INTO topics (corpus, name, guidelines, blind, created_at, created_by) VALUES "
                         "(?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
                         (self.corpus, name, str(guidelines), int(bool(blind)), _now(), created_by))
        if row is None:
            raise ValueError(f"a topic named {name!r} exists")
        self._saved()

    def topics(self) -> list:
        from core.teams import Topic

        with self.db.read() as db:
            rows = db.run("SELECT name, guidelines, blind, created_by, created_at FROM topics WHERE corpus=? "
                          "ORDER BY created_at", (self.corpus,))
        return [Topic(r[0], r[1], bool(r[2]), r[3], r[4]) for r in rows]

    def topic(self, name: str):
        found = [t for t in self.topics() if t.name == name]
        if not found:
            raise GroupNotFound(f"topic {name}")
        return found[0]

    def team_groups(self) -> list[tuple]:
        """Every topic's annotators and their groups, for who may see which group: (Topic, annotator, group,
        submitted_at) rows."""
        from core.teams import Topic

        with self.db.read() as db:
            rows = db.run("SELECT t.name, t.guidelines, t.blind, t.created_by, t.created_at, a.annotator, "
                          "a.group_name, a.submitted_at FROM assignments a JOIN topics t ON t.id=a.topic_id "
                          "WHERE t.corpus=?", (self.corpus,))
        return [(Topic(r[0], r[1], bool(r[2]), r[3], r[4]), r[5], r[6], r[7]) for r in rows]

    def assign(self, topic: str, annotator: str) -> str:
        """Assign the topic to an annotator (again: nothing changes); returns the group they build for it."""
        from core.teams import check_annotator, topic_group

        annotator = check_annotator(annotator)
        group = check_group_name(topic_group(topic, annotator))
        with self.db.tx() as db:
            t = db.one("SELECT id FROM topics WHERE corpus=? AND name=?", (self.corpus, topic))
            if t is None:
                raise GroupNotFound(f"topic {topic}")
            db.run("INSERT INTO assignments (topic_id, annotator, group_name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                   (t[0], annotator, group))
        self._saved()
        return group

    def assignments(self, topic: str) -> list:
        """The topic's annotators with their progress: texts reviewed and included in their group's latest
        version, its last save, when they submitted and which version, and whether that version is still in the
        store (one that could not be read back when a damaged file was put back from its backup is not)."""
        from core.teams import Assignment

        submitted = ("COALESCE(a.submitted_version, (SELECT MAX(v.number) FROM versions v WHERE v.group_id=g.id AND "
                     "v.created_at <= a.submitted_at))")  # submitted before the number was kept: the latest then
        with self.db.read() as db:
            rows = db.run(
                "SELECT a.annotator, a.group_name, a.submitted_at, "
                "(SELECT v.n_included + v.n_excluded FROM versions v WHERE v.group_id=g.id ORDER BY v.number DESC LIMIT 1), "
                "(SELECT v.n_included FROM versions v WHERE v.group_id=g.id ORDER BY v.number DESC LIMIT 1), "
                f"g.updated_at, {submitted}, (SELECT MAX(v.number) FROM versions v WHERE v.group_id=g.id), "
                f"(SELECT COUNT(*) FROM versions v WHERE v.group_id=g.id AND v.number={submitted}) "
                "FROM assignments a JOIN topics t ON t.id=a.topic_id LEFT JOIN groups g ON g.corpus=t.corpus AND "
                "g.name=a.group_name WHERE t.corpus=? AND t.name=? ORDER BY a.annotator", (self.corpus, topic))
        return [Assignment(topic, r[0], r[1], r[2], int(r[3] or 0), int(r[4] or 0), r[5], r[6], int(r[7] or 0),
                           submitted_lost=bool(r[2]) and not r[8]) for r in rows]

    def submit(self, topic: str, annotator: str) -> int:
        """The annotator is done with the topic: their group's latest version (there must be one) is the one that
        counts from now on; returns its number. Submitting again after a later save counts that one instead."""
        with self.db.tx() as db:
            row = db.one("SELECT a.group_name FROM assignments a JOIN topics t ON t.id=a.topic_id "
                         "WHERE t.corpus=? AND t.name=? AND a.annotator=?", (self.corpus, topic, annotator))
            if row is None:
                raise GroupNotFound(f"{annotator} is not assigned to {topic}")
            latest = db.one("SELECT MAX(v.number) FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus=? "
                            "AND g.name=?", (self.corpus, row[0]))
            if latest is None or latest[0] is None:
                raise ValueError(f"save your group {row[0]!r} before submitting it")
            db.run("UPDATE assignments SET submitted_at=?, submitted_version=? WHERE annotator=? AND "
                   "topic_id=(SELECT id FROM topics WHERE corpus=? AND name=?)",
                   (_now(), int(latest[0]), annotator, self.corpus, topic))
        self._saved()
        return int(latest[0])

    def decide(self, topic: str, decisions: dict[str, int | None], who: str) -> None:
        """Record an adjudicator's decisions on a topic's disagreements as they are made (item id -> 1
        included, -1 excluded, 0 left out of the gold; None takes a decision back), so that none is lost
        before the gold version is saved. The caller checks that ``who`` may adjudicate."""
        bad = {i: d for i, d in decisions.items() if d not in (1, -1, 0, None)}
        if bad:
            raise ValueError(f"a decision must be 1, -1, 0 or None, got {bad!r}")
        at = _now()
        with self.db.tx() as db:
            t = db.one("SELECT id FROM topics WHERE corpus=? AND name=?", (self.corpus, topic))
            if t is None:
                raise GroupNotFound(f"topic {topic}")
            back = [str(i) for i, d in decisions.items() if d is None]
            db.many("DELETE FROM decisions WHERE topic_id=? AND item_id=?", [(t[0], i) for i in back])
            # taken back on purpose: a snapshot that holds the decision does not put it back (core.migrate)
            db.many(_DROP, [(self.corpus, dropped_decision(topic, i), at) for i in back])
            db.many("DELETE FROM dropped WHERE corpus=? AND item=?",
                    [(self.corpus, dropped_decision(topic, str(i))) for i, d in decisions.items() if d is not None])
            db.many("INSERT INTO decisions (topic_id, item_id, decision, decided_by, decided_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (topic_id, item_id) DO UPDATE SET decision=excluded.decision, "
                    "decided_by=excluded.decided_by, decided_at=excluded.decided_at",
                    [(t[0], str(i), int(d), who, at) for i, d in decisions.items() if d is not None])
        self._saved()

    def decisions(self, topic: str) -> dict[str, tuple[int, str, str]]:
        """The decisions recorded on a topic's disagreements: item id -> (decision, by whom, when)."""
        with self.db.read() as db:
            rows = db.run("SELECT d.item_id, d.decision, d.decided_by, d.decided_at FROM decisions d JOIN topics t ON "
                          "t.id=d.topic_id WHERE t.corpus=? AND t.name=?", (self.corpus, topic))
        return {r[0]: (int(r[1]), r[2], r[3]) for r in rows}

    def person(self, browser: str) -> str | None:
        """The name chosen in a browser (a server without sign-in: one name per browser)."""
        with self.db.read() as db:
            row = db.one("SELECT name FROM people WHERE browser=?", (browser,))
        return row[0] if row else None

    def others_named(self, browser: str, name: str) -> list[str]:
        """How other browsers spell ``name`` where they chose it too (case and accents aside, as people type it):
        on a server without sign-in, two people who pick one name would share one group per topic."""
        from core.search.keyword import fold  # folded as the keyword search folds (the search package: here only)

        with self.db.read() as db:
            rows = db.run("SELECT name FROM people WHERE browser<>?", (browser,))
        return sorted({n for (n,) in rows if fold(n.strip()) == fold(str(name).strip())})

    def set_person(self, browser: str, name: str) -> None:
        name = check_group_name(name, what="your name", empty="type your name first")
        with self.db.tx() as db:
            db.run("INSERT INTO people (browser, name) VALUES (?, ?) ON CONFLICT (browser) DO UPDATE SET "
                   "name=excluded.name", (browser, name))

    # --- drafts: autosaved work in progress ------------------------------------------------
    # A draft belongs to its owner (the signed-in user, or "local") and to the browser that wrote it,
    # and one browser session at a time writes it (``writer``): a second tab that opens the same URL
    # takes the draft over, and the first one goes on under a new token. Tokens are made by the
    # server; a token a client makes up is never found here, so it gives nothing.

    def sync_draft(self, token: str, owner: str, *, browser: str, writer: str, keep: int, steps: Sequence[dict],
                   n_included: int, n_excluded: int, saved: bool, meta: dict | None = None,
                   journal: Sequence[dict] = (), who: str | None = None, keep_undone: int = 0,
                   undone: Sequence[dict] = (), unsaved_behind: int = 0) -> bool:
        """Bring the draft ``token`` in step with a session: its first ``keep`` steps stay, later ones are
        replaced by ``steps``; so with the steps Redo can put back (``keep_undone``, ``undone``: written at
        seq -1, -2, ...), how many texts the unsaved group behind a switch holds (``unsaved_behind``: work
        that a new tab offers even when the group now is empty or saved); and the new ``journal`` entries (with
        ids for rows: see append_journal) are appended as ``who``'s (default: the owner), all in one transaction.
        Creates the draft when it does not exist. False, and nothing written, when the draft belongs to another
        owner or another writer took it over."""
        now = _now()
        with self.db.tx() as db:
            lock = " FOR UPDATE" if self.db.dialect == "postgresql" else ""
            row = db.one("SELECT owner, writer, corpus FROM drafts WHERE token=?" + lock, (token,))
            if row is None:
                db.run("INSERT INTO drafts (token, corpus, owner, browser, writer, created_at, updated_at, n_included, "
                       "n_excluded, saved, meta_json, session_json, unsaved_behind) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)",
                       (token, self.corpus, owner, browser, writer, now, now, n_included, n_excluded, int(saved),
                        json.dumps(meta or {}), unsaved_behind))
            elif row[0] != owner or row[1] != writer or row[2] != self.corpus:
                return False
            else:
                db.run("UPDATE drafts SET updated_at=?, n_included=?, n_excluded=?, saved=?, meta_json=?, "
                       "session_json='', unsaved_behind=? WHERE token=?",
                       (now, n_included, n_excluded, int(saved), json.dumps(meta or {}), unsaved_behind, token))
            db.run("DELETE FROM draft_steps WHERE token=? AND (seq>=? OR seq<?)", (token, keep, -keep_undone))
            db.many("INSERT INTO draft_steps (token, seq, step_json) VALUES (?, ?, ?)",
                    [(token, keep + i, json.dumps(step, ensure_ascii=False)) for i, step in enumerate(steps)]
                    + [(token, -(keep_undone + i + 1), json.dumps(step, ensure_ascii=False))
                       for i, step in enumerate(undone)])
            self._append_journal(db, token, who or owner, journal)
        return True

    def _draft_with_steps(self, db, token: str) -> Draft | None:
        r = db.one(f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE corpus=? AND token=?", (self.corpus, token))
        if r is None:
            return None
        rows = db.run("SELECT seq, step_json FROM draft_steps WHERE token=? ORDER BY seq", (token,))
        steps = tuple(json.loads(j) for seq, j in rows if seq >= 0)
        undone = tuple(json.loads(j) for seq, j in reversed(rows) if seq < 0)  # -1 first: the first undone
        return dataclasses.replace(_draft(r), steps=steps, undone=undone)

    def claim_draft(self, token: str, owner: str, *, browser: str, writer: str, any_browser: bool = False
                    ) -> Draft | None:
        """The draft with its steps, now written by ``writer`` (this browser session), when it belongs
        to ``owner`` and, unless ``any_browser`` (a signed-in user on another machine), to ``browser``;
        otherwise None and nothing changes."""
        with self.db.tx() as db:
            d = self._draft_with_steps(db, token)
            if d is None or d.owner != owner or (not any_browser and d.browser != browser):
                return None
            db.run("UPDATE drafts SET writer=? WHERE token=?", (writer, token))
        return d

    def load_draft(self, token: str) -> Draft | None:
        """The draft with its steps (no ownership check: for the owner's own code paths and tests)."""
        with self.db.read() as db:
            return self._draft_with_steps(db, token)

    def drafts(self, owner: str, browser: str | None = None, unsaved_only: bool = True, limit: int = 5) -> list[Draft]:
        """The owner's most recent drafts that hold labels (and, by default, unsaved work: their group, an unsaved
        group behind a switch to another, or a group whose every step was undone); with ``browser``, only those that
        browser wrote. Without their steps (see :meth:`claim_draft`)."""
        holds = UNSAVED if unsaved_only else f"(n_included + n_excluded > 0 OR unsaved_behind > 0 OR {_ALL_UNDONE})"
        with self.db.read() as db:
            rows = db.run(f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE corpus=? AND owner=? AND {holds}"
                          + (" AND browser=?" if browser is not None else "")
                          + " ORDER BY updated_at DESC LIMIT ?",
                          (self.corpus, owner, *([browser] if browser is not None else []), limit))
        return [_draft(r) for r in rows]

    def delete_draft(self, token: str, owner: str, browser: str | None = None) -> bool:
        """Delete the owner's draft (with ``browser``: only if that browser wrote it); True if it was."""
        mine = "corpus=? AND token=? AND owner=?" + (" AND browser=?" if browser is not None else "")
        args = (self.corpus, token, owner, *([browser] if browser is not None else []))
        with self.db.tx() as db:
            gone = db.run(f"SELECT token FROM drafts WHERE {mine}", args)
            db.run(f"DELETE FROM draft_steps WHERE token IN (SELECT token FROM drafts WHERE {mine})", args)
            db.run(f"DELETE FROM drafts WHERE {mine}", args)
            # discarded on purpose: a snapshot that holds the draft does not put it back (core.migrate)
            db.many(_DROP, [(self.corpus, dropped_draft(t), _now()) for (t,) in gone])
            return bool(gone)

    def let_go_lost(self, drafts, decisions) -> None:
        """Record drafts (tokens) and an adjudicator's decisions ((topic, item)) that snapshots hold and the server
        lost (core.migrate.Lacking's) as discarded and taken back now, on purpose: a snapshot no longer puts them
        back nor keeps them past the newest ones, as if their owner had discarded them (a draft's record goes when
        a discard's would). A decision made again since removes its record, as always."""
        at = _now()
        rows = ([(self.corpus, dropped_draft(t), at) for t in drafts]
                + [(self.corpus, dropped_decision(topic, item), at) for topic, item in decisions])
        with self.db.tx() as db:
            db.many(_DROP, rows)
        self._saved()

    def prune_drafts(self, now: datetime | None = None) -> int:
        """Delete drafts that are saved or empty (and hold no unsaved group behind a switch, nor the undone steps of
        an unsaved one) and untouched for SAVED_DRAFT_DAYS, and any draft untouched for ABANDONED_DRAFT_DAYS; returns
        how many. An unsaved draft younger than that stays."""
        from datetime import timedelta

        now = now or datetime.now(timezone.utc)
        done = (now - timedelta(days=SAVED_DRAFT_DAYS)).isoformat(timespec="milliseconds")
        abandoned = (now - timedelta(days=ABANDONED_DRAFT_DAYS)).isoformat(timespec="milliseconds")
        with self.db.tx() as db:
            gone = [t for (t,) in db.run(
                "SELECT token FROM drafts WHERE corpus=? AND ((updated_at < ? AND unsaved_behind = 0 AND "
                f"(saved=1 OR n_included + n_excluded = 0) AND NOT {_ALL_UNDONE}) OR updated_at < ?)",
                (self.corpus, done, abandoned))]
            db.many("DELETE FROM draft_steps WHERE token=?", [(t,) for t in gone])
            db.many("DELETE FROM drafts WHERE token=?", [(t,) for t in gone])
            # a draft discarded before a draft would be pruned untouched: a snapshot's is left out by then too
            db.run("DELETE FROM dropped WHERE corpus=? AND substr(item, 1, 6)='draft ' AND at < ?",
                   (self.corpus, abandoned))
        return len(gone)

    def prune_drafts_now_and_then(self, every_s: float = 3600.0) -> None:
        """:meth:`prune_drafts` at most once per ``every_s`` seconds per store object (a page calls this
        on every autosave; the prune itself runs rarely)."""
        import time

        if time.monotonic() - self._pruned_at >= every_s:
            self._pruned_at = time.monotonic()
            self.prune_drafts()


_DROP = ("INSERT INTO dropped (corpus, item, at) VALUES (?, ?, ?) ON CONFLICT (corpus, item) DO UPDATE "
         "SET at=excluded.at")


def dropped_draft(token: str) -> str:
    """How the ``dropped`` table (core.db) names a draft discarded."""
    return f"draft {token}"


def dropped_decision(topic: str, item: str) -> str:
    """How the ``dropped`` table (core.db) names a decision taken back: its topic's name and item, as JSON."""
    return "decision " + json.dumps([topic, str(item)], ensure_ascii=False)


_DRAFT_COLUMNS = ("token, owner, updated_at, n_included, n_excluded, saved, meta_json, session_json, browser, "
                  "unsaved_behind")
# a draft whose every step was undone: its group is empty and unsaved, and Redo would bring its work back (the undone
# steps are its rows of draft_steps with seq < 0)
_ALL_UNDONE = ("(saved=0 AND n_included + n_excluded = 0 AND EXISTS "
               "(SELECT 1 FROM draft_steps u WHERE u.token = drafts.token AND u.seq < 0))")

# a draft that holds unsaved work: its group's labels unsaved, an unsaved group behind a switch, or every step undone
UNSAVED = f"((n_included + n_excluded > 0 AND saved=0) OR unsaved_behind > 0 OR {_ALL_UNDONE})"


def _draft(r) -> Draft:
    try:
        meta = json.loads(r[6])
    except ValueError:
        meta = {}
    return Draft(r[0], r[1], r[2], int(r[3]), int(r[4]), bool(r[5]), meta if isinstance(meta, dict) else {}, r[7],
                 r[8] or "", unsaved_behind=int(r[9] or 0))


def open_store(corpus: str, root: Path | None = None) -> GroupStore:
    """The groups of a corpus where this server keeps them: PostgreSQL when ``SEMANNO_DB`` names one
    (shared by every corpus), else the corpus's own SQLite file. DatabaseError (host and reason, never a
    password) when PostgreSQL cannot be reached."""
    from core import paths

    dsn = configured_dsn()
    if dsn:
        store = GroupStore(PostgreSQL(dsn), corpus=paths.check_name(corpus))
        store.snapshots_at = paths.groups_db(corpus, root)
        return store
    return GroupStore(paths.groups_db(corpus, root))
