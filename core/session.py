"""An annotation session: labels of corpus rows and the undoable history that produced them.

Rows are corpus positions (ints); the store converts them to corpus ids when saving. Every step
records the label changes it made, so ``undo()`` restores exactly the state before it, and ``redo()`` puts an
undone step back (until a new step is taken, as in an editor).
"""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Iterable

import numpy as np

INCLUDED, EXCLUDED, UNLABELLED = 1, -1, 0
LABEL_NAMES = {INCLUDED: "included", EXCLUDED: "excluded", UNLABELLED: "unlabelled"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Step:
    kind: str  # "search" | "label"
    method: str | None = None  # search method name, or a label action ("include", "exclude", ...)
    params: dict = field(default_factory=dict)
    shown: list[int] = field(default_factory=list)  # rows a search showed, best first
    scores: list[float] = field(default_factory=list)
    changes: list[tuple[int, int, int]] = field(default_factory=list)  # (row, old, new)
    at: str = field(default_factory=_now)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])  # names the step in the journal


def step_dict(step: Step) -> dict:
    """A step as a dict of its fields, for JSON. Its lists are shared, not copied: ``dataclasses.asdict`` copies
    every change, 164 ms for a step that brought in 50,000 texts (this: 0.02 ms), on the autosave of that click."""
    return {f.name: getattr(step, f.name) for f in fields(Step)}


SWITCH = "switch"  # a label step that replaced the whole group (open, new, from a cluster)

_MASK = (1 << 64) - 1
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _marks(rows: np.ndarray, labels: np.ndarray) -> int:
    """Each text's label as a 64-bit number (splitmix64 of the pair; 0 for no label), summed modulo 2**64. Over a
    group's labels it is the group's fingerprint; a step moves it by its changes' new marks less their old."""
    with np.errstate(over="ignore"):  # the arithmetic is modulo 2**64 by design
        x = rows.astype(np.uint64) * np.uint64(2) + (labels == INCLUDED).astype(np.uint64) + _MIX[0]
        x ^= x >> np.uint64(30)
        x *= _MIX[1]
        x ^= x >> np.uint64(27)
        x *= _MIX[2]
        x ^= x >> np.uint64(31)
    x[labels == UNLABELLED] = 0
    return int(x.sum(dtype=np.uint64))


def fingerprint_of(labels: dict[int, int]) -> int:
    return _marks(np.fromiter(labels.keys(), np.int64, len(labels)), np.fromiter(labels.values(), np.int64,
                                                                                   len(labels)))


def _moved(changes: list[tuple[int, int, int]]) -> int:
    """How far a step's changes (row, old, new) move the fingerprint: vectorised, as a step may bring in a million
    texts (a mark computed per change in Python doubled the time of such a step and its undo)."""
    if not changes:
        return 0
    c = np.fromiter(itertools.chain.from_iterable(changes), np.int64, 3 * len(changes)).reshape(-1, 3)
    return (_marks(c[:, 0], c[:, 2]) - _marks(c[:, 0], c[:, 1])) & _MASK


class Session:
    def __init__(self) -> None:
        self.labels: dict[int, int] = {}
        self.history: list[Step] = []
        self.revision = 0  # bumped by every change and undo: what an autosave compares
        # the labels as one number, the same whichever steps led to them (a search that changed nothing, a text
        # toggled twice, an undo and a redo): what tells a saved group from an unsaved one (is_saved)
        self.fingerprint = 0
        self.saved_as: set[int] = set()  # fingerprints of the labels that a saved version holds (saved or opened)
        self._moves: dict[str, int] = {}  # step id -> how far it moves the fingerprint
        # how many of the first steps of ``history`` are already in the draft store: an autosave
        # writes only the steps after them (an undo lowers it), so a click costs the same at 10 or
        # 100,000 labels
        self.synced = 0
        # the journal: every step applied and every undo, in order, never rewritten (an undo is an entry
        # of its own). Autosave appends it to the store as label events (who, when, how, per text);
        # ``journal_synced`` entries of it are there already.
        self.journal: list[dict] = []
        self.journal_synced = 0
        # the steps undone, the latest last: what redo() puts back. A new step forgets them (the group has moved
        # on from the state they were taken in). The draft keeps them too (a reload can still redo);
        # ``undone_synced`` of the first ones are there already.
        self.undone: list[Step] = []
        self.undone_synced = 0

    # --- reading -----------------------------------------------------------------------
    def _rows(self, label: int) -> np.ndarray:
        return np.array(sorted(r for r, v in self.labels.items() if v == label), dtype=np.int64)

    @property
    def included(self) -> np.ndarray:
        return self._rows(INCLUDED)

    @property
    def excluded(self) -> np.ndarray:
        return self._rows(EXCLUDED)

    def label_of(self, row: int) -> int:
        return self.labels.get(int(row), UNLABELLED)

    def counts(self) -> dict[str, int]:
        values = list(self.labels.values())
        return {"included": values.count(INCLUDED), "excluded": values.count(EXCLUDED),
                "steps": len(self.history)}

    def last_search(self, method: str | None = None) -> Step | None:
        """The group's last search (of ``method``, where given) since it was opened or started: none across a switch
        (after *New empty group* the last search of the group left behind was listed, its texts shown unlabelled,
        with its advice)."""
        for step in reversed(self.history):
            if step.kind == "search" and method in (None, step.method):
                return step
            if step.method == SWITCH:
                return None
        return None

    def mark_saved(self) -> None:
        """A saved version holds the labels as they are now (saved, or opened from the store)."""
        self.saved_as.add(self.fingerprint)

    def is_saved(self) -> bool:
        """Whether a version saved or opened here holds the labels as they are: by what they are, not by the steps
        since, so a search that brought nothing new, a text toggled back, or an Undo and its Redo leave it saved."""
        return self.fingerprint in self.saved_as

    def is_empty(self) -> bool:
        return not self.labels and not self.history

    def explicit(self) -> dict[int, int]:
        """Labels a person chose (a click, a bulk or lasso action, an opened group's labels), as
        opposed to the *included* a search hit comes in with: row -> label."""
        out: dict[int, int] = {}
        for step in self.history:
            for row, _old, new in step.changes:
                if step.kind == "label" and new != UNLABELLED:
                    out[row] = new
                else:
                    out.pop(row, None)
        return out

    # --- changing ----------------------------------------------------------------------
    def _apply(self, step: Step, updates: Iterable[tuple[int, int]]) -> Step:
        """Record ``step`` with the changes ``updates`` make. A label step that changes nothing (a page's texts all
        included already) is not recorded: an Undo of it undid nothing, and it cleared what Redo could put back.
        A search is recorded even so (it is what "Last search" shows), and so is a switch (the group it left)."""
        for row, new in updates:  # one at a time: a row given twice changes from what the first left
            row, new = int(row), int(new)
            if new not in LABEL_NAMES:
                raise ValueError(f"label must be 1, -1 or 0, got {new!r}")
            old = self.label_of(row)
            if old == new:
                continue
            step.changes.append((row, old, new))
            if new == UNLABELLED:
                del self.labels[row]
            else:
                self.labels[row] = new
        if not step.changes and step.kind == "label" and step.method != SWITCH:
            return step
        self.undone.clear()
        self.undone_synced = 0
        self.history.append(step)
        self.revision += 1
        self.fingerprint = (self.fingerprint + self._moved(step)) & _MASK
        self.journal.append({"kind": "apply", "step": step.id, "at": step.at, "method": step.method,
                             "params": step.params, "changes": step.changes})
        return step

    def add_search(self, method: str, params: dict, rows: Iterable[int], scores: Iterable[float] = (),
                   default_label: int = INCLUDED, copies: Iterable[int] = ()) -> Step:
        """Record a search; its unlabelled hits come in as ``default_label`` (included), and so do the
        unlabelled ``copies`` of them (core.copies), which the step does not show."""
        rows = [int(r) for r in rows]
        step = Step("search", method, dict(params), rows, [float(s) for s in scores])
        brought = [*rows, *(int(r) for r in copies)]
        return self._apply(step, ((r, default_label) for r in brought if self.label_of(r) == UNLABELLED))

    def set_labels(self, rows: Iterable[int], label: int, action: str | None = None,
                   keep_explicit: bool = False, params: dict | None = None) -> Step:
        """Label ``rows``. With ``keep_explicit`` (bulk actions: a page, a lasso), rows a person
        labelled otherwise keep their label; the step's params count what changed and what was kept,
        beside ``params`` (how the rows were picked, e.g. the filter of a page: kept with the label events)."""
        rows = list(dict.fromkeys(int(r) for r in rows))
        name = action or {INCLUDED: "include", EXCLUDED: "exclude", UNLABELLED: "clear"}[label]
        kept: list[int] = []
        if keep_explicit:
            chosen = self.explicit()
            kept = [r for r in rows if chosen.get(r, label) != label]
            rows = [r for r in rows if chosen.get(r, label) == label]
        step = self._apply(Step("label", name, {**(params or {}), "n": len(rows) + len(kept), "kept": len(kept)}),
                           ((r, label) for r in rows))
        step.params["changed"] = len(step.changes)
        return step

    def relabel(self, labels: dict[int, int], action: str, params: dict | None = None) -> Step:
        """Give each row of ``labels`` its label (some included, some excluded) in one undoable step."""
        step = self._apply(Step("label", action, {**(params or {}), "n": len(labels), "kept": 0}), labels.items())
        step.params["changed"] = len(step.changes)
        return step

    def switch_to(self, included: Iterable[int], excluded: Iterable[int], action: str, **params) -> Step:
        """Replace the whole group in one undoable step (open a saved group, start a new or a
        cluster's group): undo brings back the group that was being built, labels and all."""
        inc, exc = [int(r) for r in included], [int(r) for r in excluded]
        new = {r: INCLUDED for r in inc} | {r: EXCLUDED for r in exc}
        updates = [(r, UNLABELLED) for r in self.labels if r not in new] + list(new.items())
        return self._apply(Step("label", SWITCH, {"action": action, **params}), updates)

    def unsaved_behind(self) -> tuple[int, Step] | None:
        """The nearest unsaved group that a switch left (open, new, from a cluster: ``switch_to`` with
        ``left_unsaved``): how many Undos bring it back, and that switch. None when every group behind is saved."""
        for back, step in enumerate(reversed(self.history), start=1):
            if step.method == SWITCH and step.params.get("left_unsaved"):
                return back, step
        return None

    def ahead(self) -> dict[str, int] | None:
        """The counts of the group that Redo brings back, every undone step put back (included, excluded); None when
        nothing is undone."""
        if not self.undone:
            return None
        labels = dict(self.labels)
        for step in reversed(self.undone):  # the latest undone is redone first
            for row, _old, new in step.changes:
                if new == UNLABELLED:
                    labels.pop(row, None)
                else:
                    labels[row] = new
        inc = sum(1 for v in labels.values() if v == INCLUDED)
        return {"included": inc, "excluded": len(labels) - inc}

    def flipped(self, row: int) -> int:
        """The label a click on ``row`` gives it: included <-> excluded (an unlabelled row: included)."""
        return EXCLUDED if self.label_of(row) == INCLUDED else INCLUDED

    def toggle(self, row: int) -> Step:
        return self.set_labels([row], self.flipped(row), action="toggle")

    def undo(self) -> Step | None:
        """Revert the last step; None when there is nothing to undo."""
        if not self.history:
            return None
        step = self.history.pop()
        self.synced = min(self.synced, len(self.history))
        for row, old, _new in reversed(step.changes):
            self._set(row, old)
        self.undone.append(step)
        self.revision += 1
        self.fingerprint = (self.fingerprint - self._moved(step)) & _MASK
        self.journal.append({"kind": "undo", "step": step.id, "at": _now(), "method": step.method, "params": {},
                             "changes": [(row, new, old) for row, old, new in reversed(step.changes)]})
        return step

    def redo(self) -> Step | None:
        """Put back the step the last undo took (the same step: its changes, search and place in the history);
        None when there is nothing to redo. The journal records it as a step of its own (kind ``redo``)."""
        if not self.undone:
            return None
        step = self.undone.pop()
        self.undone_synced = min(self.undone_synced, len(self.undone))
        for row, _old, new in step.changes:
            self._set(row, new)
        self.history.append(step)
        self.revision += 1
        self.fingerprint = (self.fingerprint + self._moved(step)) & _MASK
        self.journal.append({"kind": "redo", "step": step.id, "at": _now(), "method": step.method,
                             "params": step.params, "changes": list(step.changes)})
        return step

    def _moved(self, step: Step) -> int:
        """How far ``step`` moves the fingerprint, worked out once a step (its undo and redo take it back)."""
        if step.id not in self._moves:
            self._moves[step.id] = _moved(step.changes)
        return self._moves[step.id]

    def _set(self, row: int, label: int) -> None:
        if label == UNLABELLED:
            self.labels.pop(row, None)
        else:
            self.labels[row] = label

    def base_entry(self, method: str = "copy") -> dict:
        """A journal entry that sets every current label from nothing: what a work starts from when its
        group came from elsewhere (another tab's draft, a draft written before the journal)."""
        return {"kind": "base", "step": None, "at": _now(), "method": method, "params": {},
                "changes": [(row, UNLABELLED, v) for row, v in sorted(self.labels.items())]}

    def unsynced_journal(self) -> list[dict]:
        return self.journal[self.journal_synced:]

    # --- serialising -------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"version": 1, "labels": [[r, v] for r, v in sorted(self.labels.items())],
                "history": [step_dict(s) for s in self.history]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Session":
        s = cls()
        s.labels = {int(r): int(v) for r, v in d.get("labels", [])}
        s.history = [_step(h) for h in d.get("history", [])]
        s.fingerprint = fingerprint_of(s.labels)
        return s

    @classmethod
    def from_json(cls, text: str) -> "Session":
        return cls.from_dict(json.loads(text))

    def unsynced_steps(self) -> list[dict]:
        """The steps an autosave has not written yet, as dicts (see ``synced``)."""
        return [step_dict(step) for step in self.history[self.synced:]]

    def unsynced_undone(self) -> list[dict]:
        """The undone steps an autosave has not written yet, as dicts (see ``undone_synced``)."""
        return [step_dict(step) for step in self.undone[self.undone_synced:]]

    @classmethod
    def from_history(cls, steps: Iterable[dict], undone: Iterable[dict] = ()) -> "Session":
        """The session whose history is ``steps`` (dicts, in order): the labels are what the steps'
        changes leave, replayed from an empty group. ``undone``: the steps Redo can put back (the latest
        last), as a draft keeps them."""
        s = cls()
        s.undone = [_step(h) for h in undone]
        s.undone_synced = len(s.undone)
        for h in steps:
            step = _step(h)
            for row, _old, new in step.changes:
                if new == UNLABELLED:
                    s.labels.pop(row, None)
                else:
                    s.labels[row] = new
            s.history.append(step)
        s.synced = len(s.history)
        s.fingerprint = fingerprint_of(s.labels)
        return s


def _step(h: dict) -> Step:
    """A step back from its dict (as ``step_dict`` made it, after JSON: changes as lists)."""
    h = dict(h)
    h["changes"] = [tuple(int(v) for v in c) for c in h.get("changes", [])]
    return Step(**h)
