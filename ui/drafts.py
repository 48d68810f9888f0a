"""Drafts: the group being built survives a reload or a server restart. A tab's draft is named by a
token the server makes (kept in the URL, ?draft=..., so a reload finds it again). A token in a URL is
only taken when the store holds a draft of that token belonging to this user and, without sign-in,
written by this browser (core.store: claim_draft): a token made up by a client, or someone else's,
gives nothing. The draft is written a step at a time."""

from __future__ import annotations

import dataclasses
import re
import secrets

import streamlit as st

from core import annotate
from core.corpus import Corpus
from core.session import INCLUDED, Session, Step, step_dict
from core.store import DatabaseError, Draft, GroupStore
from ui.text import md, quoted
from ui import access, group, resources


# --- drafts: the group being built survives a reload or a server restart -------------------
# A tab's draft is named by a token the server makes (kept in the URL, ?draft=..., so a reload finds
# it again). A token in a URL is only taken when the store holds a draft of that token belonging to
# this user and, without sign-in, written by this browser (core.store: claim_draft): a token made up
# by a client, or someone else's, gives nothing. The draft is written a step at a time.
def owner() -> str:
    """Whose drafts these are: the signed-in user, else "local" (bound to the browser besides)."""
    return access.identity() or "local"


def draft_browser() -> str | None:
    """The browser to bind a draft to when listing or claiming: None (any) for a signed-in user, whose
    drafts follow them from machine to machine; this browser otherwise."""
    return None if access.signed_in() else access.browser_id()


def draft_writer() -> str:
    """This browser session (a tab since its last reload): the one writer of its draft."""
    return st.session_state.setdefault("draft_writer", secrets.token_hex(8))


def draft_token() -> str:
    """This tab's draft token (made by the server on the tab's first change), kept in the URL."""
    token = st.session_state.get("draft_token")
    if not token:
        token = st.session_state["draft_token"] = secrets.token_urlsafe(16)
    if st.query_params.get("draft") != token:
        st.query_params["draft"] = token
    return token


def _restore_from_url(name: str, c: Corpus) -> None:
    """A fresh browser session whose URL names a draft of this user (a reload, a restarted server):
    take the group back, and go on writing that draft."""
    if "session" in st.session_state or "draft_token" in st.session_state:
        return
    asked = st.query_params.get("draft") or ""
    if not re.fullmatch(r"[A-Za-z0-9_-]{8,64}", asked):
        return
    store = resources.store(name)
    d = store.claim_draft(asked, owner(), browser=access.browser_id(), writer=draft_writer(),
                          any_browser=access.signed_in())
    if d is None or not (d.n_included + d.n_excluded or d.steps or d.undone):  # an empty group with steps
        return  # (a New empty group, everything undone) comes back too: Undo and Redo go on from it
    if said := restore(d, c, store, token=asked):
        getattr(st, "toast" if said[0] == "success" else said[0])(said[1])


def restore(d: Draft, c: Corpus, store: GroupStore, token: str | None = None, behind: bool = False
            ) -> tuple[str, str] | None:
    """Make the draft ``d`` this tab's group: with ``token`` (a reload: the draft is this tab's own) going on
    writing it, otherwise copied into this tab's draft; with ``behind`` (a new tab's offer of a draft whose unsaved
    work is a group behind a switch: unsaved_left), back at that group, the steps after it a Redo away; of a draft
    whose every step was undone (undone_work), with those steps put back, an Undo away each. A draft
    built on an earlier import of the corpus is rebuilt by its texts' ids (on_this_import) under a new token, and its
    old draft deleted. Returns (kind, what to tell the user): "success", "warning" (rebuilt), or "error" (it cannot
    be restored; the draft is left as it is); None for an empty draft that cannot be."""
    moved = on_this_import(d, c, store, behind)
    if moved is None:
        unsaved = d.n_included + d.n_excluded or (behind and (unsaved_left(d) or undone_work(d)))
        return ("error", "Your unsaved group was built on an earlier import of this corpus and cannot be restored "
                "(rows changed, and it was written before label events kept its texts' ids). Saved groups are not "
                "affected.") if unsaved else None
    if moved[0] is not d:
        message = adopt_moved(c.name, moved)  # under a new token: the old steps name old rows
        store.delete_draft(d.token, owner(), draft_browser())
        return "warning", message
    if token:
        st.session_state["draft_token"] = token
    s = adopt_draft(d, own=token is not None)
    if behind and (ahead := undone_work(d)):  # every step was undone: Redo puts them back, as it would have there
        while s.undone:
            group.redo()
        return "success", (f"Restored the group whose every step you had undone ({ahead['included']:,} included, "
                           f"{ahead['excluded']:,} excluded). Undo (Alt+Z) takes its steps back again.")
    if behind and (left := unsaved_left(d)) and (back := s.unsaved_behind()):
        for _ in range(back[0]):
            group.undo()
        return "success", (f"Restored the unsaved group you were building ({left['included']:,} included, "
                           f"{left['excluded']:,} excluded). Redo (Alt+Y) takes you to {went_on_to(left)} again.")
    return "success", (f"Restored the group you were building ({d.n_included:,} included, {d.n_excluded:,} "
                       "excluded)." if d.n_included + d.n_excluded else
                       "Restored your work: the group is empty now; Undo (Alt+Z) takes back its last step.")


def _behind(d: Draft) -> dict | None:
    """The unsaved group a switch left in the draft ``d`` (Session.unsaved_behind), as its autosave described it
    for a list of drafts, read without their steps: its counts, name, and what it was left for (action, group)."""
    left = d.meta.get("behind")
    return left if d.unsaved_behind and isinstance(left, dict) and {"included", "excluded"} <= left.keys() else None


def undone_work(d: Draft) -> dict | None:
    """For a draft whose every step was undone (its group empty and unsaved, Redo would bring it back): the counts
    of the group Redo gives, as its autosave wrote them (Session.ahead); else None."""
    ahead = d.meta.get("ahead")
    if d.n_included + d.n_excluded or d.saved or not isinstance(ahead, dict) or {"included", "excluded"} - set(ahead):
        return None
    return ahead if ahead["included"] + ahead["excluded"] else None


def unsaved_left(d: Draft) -> dict | None:
    """_behind, where it is the draft's unsaved work that a new tab offers: the draft's own group is empty or saved."""
    return None if d.n_included + d.n_excluded and not d.saved else _behind(d)


def also_behind(d: Draft) -> str:
    """For a draft offered for its own unsaved group: the unsaved group a switch to it left (for a cluster's group, or
    a saved group opened and changed since), in words; else ""."""
    if (left := _behind(d)) is None:
        return ""
    return (f" Before it you were building another unsaved group ({left['included']:,} included, "
            f"{left['excluded']:,} excluded): once this one is restored, Undo takes you back to it.")


def offer_line(d: Draft) -> str:
    """What a new tab says of the draft ``d`` it offers: when, the group's name and counts, and which unsaved work
    it is (a group left for another: unsaved_left; a group whose every step was undone: undone_work; else its own
    group, and any unsaved group behind it: also_behind)."""
    left, ahead = unsaved_left(d), undone_work(d)
    shown = left or ahead or {"included": d.n_included, "excluded": d.n_excluded}
    name = left.get("name") if left else d.meta.get("name")
    if left:
        which = f", which you left for {went_on_to(left)}."
    elif ahead:
        which = ", whose every step you undid."
    else:
        which = "." + also_behind(d)
    return (f"You have an unsaved group from {d.updated_at[:16].replace('T', ' ')} UTC"
            f"{' named ' + quoted(name) if name else ''}: {shown['included']:,} included, {shown['excluded']:,} "
            f"excluded{which}")


def went_on_to(left: dict) -> str:
    """What the switch of unsaved_left went on to, in words."""
    if left.get("action") == "new":
        return "a new empty group"
    if left.get("group"):
        return f"the saved group {quoted(str(left['group']))}"
    return "a cluster's group" if left.get("action") == "cluster" else "another group"


def on_this_import(d: Draft, c: Corpus, store: GroupStore, behind: bool = False) -> tuple[Draft, int] | None:
    """``d`` as a draft of this import of the corpus, and how many of its texts the corpus no longer holds. A draft
    built on an earlier import (its steps name that import's rows, which move when a corpus is imported again) is
    rebuilt by id from its label events: one step that gives each of its texts still in the corpus its label (with
    ``behind``, of the unsaved group a switch left, unsaved_left, or of the group whose every step was undone, as
    its steps had made it, undone_work), the unsaved group a switch left behind the draft's own one Undo before it.
    None when that cannot be done (a draft written before label events)."""
    here = c.manifest.get("data_dir")
    if d.meta.get("generation") == here:
        return d, 0
    switch = Session.from_history(d.steps).unsaved_behind() if _behind(d) else None
    own = not (behind and unsaved_left(d))  # the draft's own group is what comes back (else the one behind it)
    if behind and undone_work(d) and d.undone:  # the group its steps had made, all undone since
        labels = store.work_labels(d.token, through_step=d.undone[0]["id"])
    elif own:
        labels = store.work_labels(d.token)
    else:
        labels = store.work_labels(d.token, before_step=switch[1].id)
    if not labels:
        return None
    step, gone = annotate.rebuilt_on_import(labels, c.id_index)
    n_inc = sum(1 for *_, v in step.changes if v == INCLUDED)
    fields = {} if own else switch[1].params.get("previous_meta", {})  # that group's name and notes
    meta = {**d.meta, **fields, "generation": here, "redo_meta": {}, "behind": {}, "ahead": None}
    rebuilt = dataclasses.replace(d, steps=(step_dict(step),), undone=(), session_json="", n_included=n_inc,
                                  n_excluded=len(step.changes) - n_inc, saved=False, unsaved_behind=0, meta=meta)
    if own and switch and (left := store.work_labels(d.token, before_step=switch[1].id)):
        rebuilt = _with_left_behind(rebuilt, annotate.rebuilt_on_import(left, c.id_index)[0], switch[1])
    return rebuilt, gone


def _with_left_behind(d: Draft, left: Step, switch: Step) -> Draft:
    """A draft rebuilt on a new import (its own group, one step) with the unsaved group that a switch had left behind
    it, rebuilt too: that group first, then the switch to the draft's group, so Undo brings the one left back."""
    s = Session.from_history([step_dict(left)])
    was = {k: s.counts()[k] for k in ("included", "excluded")}
    own = d.steps[0]["changes"]
    s.switch_to([r for r, _, v in own if v == INCLUDED], [r for r, _, v in own if v != INCLUDED], left_unsaved=was,
                **{k: v for k, v in switch.params.items() if k in ("action", "group", "previous_meta")})
    behind = behind_meta(s.history[-1])
    return dataclasses.replace(d, steps=tuple(step_dict(step) for step in s.history), meta={**d.meta, "behind": behind},
                               unsaved_behind=behind["included"] + behind["excluded"])


def behind_meta(switch: Step) -> dict:
    """What a list of drafts (read without their steps) shows of the unsaved group that ``switch`` left: its counts,
    name, and what it was left for (a draft's meta "behind": _behind)."""
    p = switch.params
    return {**p["left_unsaved"], "name": p.get("previous_meta", {}).get("name", ""), "action": p.get("action"),
            "group": p.get("group")}


def moved_message(d: Draft, gone: int) -> str:
    """What the user is told when their unsaved group was rebuilt on a new import (on_this_import)."""
    lost = (f" {gone:,} of its texts are no longer in the corpus and were left out (saved groups keep theirs)."
            if gone else " Every one of its texts is still in the corpus.")
    left = _behind(d)
    undo = (f" Undo brings back the unsaved group you had left for it, rebuilt too ({left['included']:,} included, "
            f"{left['excluded']:,} excluded); the steps before cannot be undone." if left else
            " Its earlier steps cannot be undone.")
    return (f"The corpus was imported again since you built this unsaved group: it was rebuilt by its texts' ids "
            f"({d.n_included:,} included, {d.n_excluded:,} excluded).{lost}{undo}")


def adopt_moved(name: str, moved: tuple[Draft, int]) -> str:
    """Make a draft rebuilt on a new import (on_this_import) this tab's group, as a copy under a new token, with the
    copies of its texts that the new import holds unlabelled labelled as their texts (as opening a saved group
    does); what to tell the user."""
    s = adopt_draft(moved[0], how="restored on a new import")
    st.session_state.update(ann_view="Included", ann_page=1)  # its searches are gone: the group itself is shown
    step = annotate.copies_left_out(resources.copies_of(name), s)
    n = step.params["changed"] if step else 0
    return moved_message(*moved) + (f" {n:,} cop{'y' if n == 1 else 'ies'} of its texts in the new import took "
                                    "their text's label, in one step that Undo takes back." if n else "")


def adopt_draft(d, own: bool = False, how: str = "copied from another tab") -> Session:
    """Make a draft's group this tab's group. ``own``: the draft is this tab's (its steps are written
    already); otherwise it is copied into this tab's draft on the next autosave (``how``: the journal's words)."""
    # the steps, undone ones too (Redo goes on after a reload, also where every step was undone, and in a new tab)
    steps_own = own and bool(d.steps or d.undone)
    s = (Session.from_history(d.steps, d.undone) if d.steps or d.undone or not d.session_json
         else Session.from_json(d.session_json))
    s.synced = len(s.history) if steps_own else 0
    if not steps_own:  # this tab's work starts from the copied group: one entry sets its labels
        s.undone_synced = 0  # and the steps Redo can put back are written into this tab's draft
        s.journal.append(s.base_entry(how if d.steps else "restored"))
    st.session_state["session"] = s
    kept = d.meta.get("redo_meta")  # the fields Redo of a switch brings back (group.undo)
    st.session_state["redo_meta"] = ({k: v for k, v in kept.items() if isinstance(v, dict)}
                                     if isinstance(kept, dict) else {})
    for field in group.META_KEYS:
        group.meta()[field] = str(d.meta.get(field, "") or "")
        st.session_state.pop(group.META_KEYS[field], None)  # the form re-reads the fields
    if d.saved:
        s.mark_saved()
    st.session_state["draft_rev"] = (draft_token(), s.revision, d.saved, tuple(group.meta().values())) if own else None
    return s


def autosave(name: str, c: Corpus, s: Session) -> None:
    """Write what changed in this tab's draft since the last write (end of a page run): the new steps
    only. When another tab took the draft over (a duplicated tab), this one goes on under a new token."""
    # saved: a saved version holds the labels, and Redo has nothing to bring back (work undone after a save may be
    # wanted again: such a draft is kept and offered as unsaved work, not deleted a day later as a saved one)
    saved = s.is_saved() and not s.undone
    token = draft_token()
    key = (token, s.revision, saved, tuple(group.meta().values()))
    if st.session_state.get("draft_rev") == key or (s.is_empty() and "draft_rev" not in st.session_state):
        return
    try:
        _write(name, c, s, token, saved)
    except DatabaseError as exc:  # the group stays in this tab; the unwritten steps go at the next write
        st.warning(f"Not saved to the database just now: {md(exc)}. Your group is kept in this tab and is written "
                   "as soon as the database answers again.")


def _write(name: str, c: Corpus, s: Session, token: str, saved: bool) -> None:
    """autosave's writing: the new steps and journal entries of this tab's draft, in one transaction."""
    counts = s.counts()
    db = resources.store(name)
    undone = {step.id for step in s.undone}
    redo_meta = {k: v for k, v in st.session_state.get("redo_meta", {}).items() if k in undone}
    behind = s.unsaved_behind()  # an unsaved group that a switch left: a new tab offers it too
    left = behind_meta(behind[1]) if behind else {}
    fields = dict(browser=access.browser_id(), writer=draft_writer(), n_included=counts["included"],
                  n_excluded=counts["excluded"], saved=saved,
                  unsaved_behind=left.get("included", 0) + left.get("excluded", 0),
                  meta={**group.meta(), "generation": c.manifest.get("data_dir"), "redo_meta": redo_meta,
                        "behind": left, "ahead": None if s.labels else s.ahead()})

    def with_ids(entries):  # the journal names texts by id (rows belong to one import)
        rows = [row for e in entries for row, _, _ in e["changes"]]
        ids = dict(zip(rows, c.ids_of(rows)))
        return [{**e, "changes": [(ids[row], old, new) for row, old, new in e["changes"]]} for e in entries]

    if not db.sync_draft(token, owner(), keep=s.synced, steps=s.unsynced_steps(), journal=with_ids(s.unsynced_journal()),
                         who=resources.viewer(name), keep_undone=s.undone_synced, undone=s.unsynced_undone(), **fields):
        st.session_state.pop("draft_token")  # the draft is someone else's now: a new one for this tab
        token = draft_token()  # whose work starts from the group as it is
        db.sync_draft(token, owner(), keep=0, steps=[step_dict(step) for step in s.history],
                      journal=with_ids([s.base_entry("went on in a new tab")]), who=resources.viewer(name),
                      undone=[step_dict(step) for step in s.undone], **fields)
    s.synced, s.journal_synced, s.undone_synced = len(s.history), len(s.journal), len(s.undone)
    st.session_state["draft_rev"] = (token, s.revision, saved, tuple(group.meta().values()))
    db.prune_drafts_now_and_then()


def _follow_new_import(name: str, c: Corpus) -> None:
    """A tab left open while its corpus was imported again: its group names the earlier import's rows, which the new
    import has moved. Before anything reads it, its last change (a click's callback runs before the page) is written
    by the earlier import's ids, and the group is rebuilt by id from its draft's label events, as a reload would
    (on_this_import). The earlier import is kept in the tab's state from one page run to the next for this."""
    was, st.session_state["session_corpus"] = st.session_state.get("session_corpus"), c
    s = st.session_state.get("session")
    if s is None or was is None or was.name != name or was.manifest.get("data_dir") == c.manifest.get("data_dir"):
        return
    if st.session_state.get("draft_token") and s.journal_synced < len(s.journal):
        try:
            _write(name, was, s, st.session_state["draft_token"], saved=False)
        except DatabaseError:
            pass  # said below: the change is not in what comes back
    del st.session_state["session"]  # its rows are the earlier import's
    token = st.session_state.pop("draft_token", None)
    st.session_state.pop("draft_rev", None)
    if s.is_empty() and not s.undone:
        return
    store = resources.store(name)
    d = store.load_draft(token) if token else None
    said = restore(d, c, store, behind=True) if d is not None and d.owner == owner() else None
    if said is None or said[0] == "error":
        st.session_state["session"] = Session()  # not the URL's draft either: it is the same earlier group
        st.warning("The corpus was imported again while you were building your group, and the group could not be "
                   "rebuilt on the new import (it had not been written to the database). Saved groups are not "
                   "affected.")
        return
    st.warning(said[1] + (" Its last change could not be written to the database and is not in it."
                          if s.journal_synced < len(s.journal) else ""))


def keep_draft(name: str, c: Corpus) -> None:
    """The group being built back from the URL's draft after a reload (or rebuilt by id when the corpus was imported
    again under an open tab), and this tab's draft named in the URL of every page, so that F5 anywhere brings it
    back."""
    _follow_new_import(name, c)
    _restore_from_url(name, c)
    if "draft_token" in st.session_state or not group.session().is_empty():
        draft_token()
