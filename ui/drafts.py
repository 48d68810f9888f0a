"""Drafts: the group being built survives a reload or a server restart. A tab's draft is named by a
token the server makes (kept in the URL, ?draft=..., so a reload finds it again). A token in a URL is
only taken when the store holds a draft of that token belonging to this user and, without sign-in,
written by this browser (core.store: claim_draft): a token made up by a client, or someone else's,
gives nothing. The draft is written a step at a time."""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict

import streamlit as st

from core.corpus import Corpus
from core.session import Session
from core.store import DatabaseError
from ui.text import md
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
    d = resources.store(name).claim_draft(asked, owner(), browser=access.browser_id(), writer=draft_writer(),
                                any_browser=access.signed_in())
    if d is None or not (d.n_included + d.n_excluded or d.steps or d.undone):  # an empty group with steps
        return  # (a New empty group, everything undone) comes back too: Undo and Redo go on from it
    if d.meta.get("generation") != c.manifest.get("data_dir"):
        st.warning("Your unsaved group was built on an earlier import of this corpus and cannot be restored "
                   "(rows changed). Saved groups are not affected.")
        return
    st.session_state["draft_token"] = asked
    adopt_draft(d, own=True)
    st.toast(f"Restored the group you were building ({d.n_included:,} included, {d.n_excluded:,} excluded)."
             if d.n_included + d.n_excluded else "Restored your work: the group is empty now; Undo (Alt+Z) takes "
             "back its last step.")


def adopt_draft(d, own: bool = False) -> Session:
    """Make a draft's group this tab's group. ``own``: the draft is this tab's (its steps are written
    already); otherwise it is copied into this tab's draft on the next autosave."""
    steps_own = own and bool(d.steps)  # this tab's own steps, undone ones too: Redo goes on after a reload
    s = (Session.from_history(d.steps, d.undone if steps_own else ()) if d.steps or not d.session_json
         else Session.from_json(d.session_json))
    s.synced = len(s.history) if steps_own else 0
    if not steps_own:  # this tab's work starts from the copied group: one entry sets its labels
        s.journal.append(s.base_entry("copied from another tab" if d.steps else "restored"))
    st.session_state["session"] = s
    kept = d.meta.get("redo_meta") if steps_own else None  # the fields Redo of a switch brings back (group.undo)
    st.session_state["redo_meta"] = ({k: v for k, v in kept.items() if isinstance(v, dict)}
                                     if isinstance(kept, dict) else {})
    for field in group.META_KEYS:
        group.meta()[field] = str(d.meta.get(field, "") or "")
        st.session_state.pop(group.META_KEYS[field], None)  # the form re-reads the fields
    st.session_state["saved_rev"] = s.revision if d.saved else -1
    st.session_state["draft_rev"] = (draft_token(), s.revision, d.saved, tuple(group.meta().values())) if own else None
    return s


def autosave(name: str, c: Corpus, s: Session) -> None:
    """Write what changed in this tab's draft since the last write (end of a page run): the new steps
    only. When another tab took the draft over (a duplicated tab), this one goes on under a new token."""
    saved = st.session_state.get("saved_rev") == s.revision
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
    fields = dict(browser=access.browser_id(), writer=draft_writer(), n_included=counts["included"],
                  n_excluded=counts["excluded"], saved=saved,
                  meta={**group.meta(), "generation": c.manifest.get("data_dir"), "redo_meta": redo_meta})

    def with_ids(entries):  # the journal names texts by id (rows belong to one import)
        rows = [row for e in entries for row, _, _ in e["changes"]]
        ids = dict(zip(rows, c.ids_of(rows)))
        return [{**e, "changes": [(ids[row], old, new) for row, old, new in e["changes"]]} for e in entries]

    if not db.sync_draft(token, owner(), keep=s.synced, steps=s.unsynced_steps(), journal=with_ids(s.unsynced_journal()),
                         who=resources.viewer(name), keep_undone=s.undone_synced, undone=s.unsynced_undone(), **fields):
        st.session_state.pop("draft_token")  # the draft is someone else's now: a new one for this tab
        token = draft_token()  # whose work starts from the group as it is
        db.sync_draft(token, owner(), keep=0, steps=[asdict(step) for step in s.history],
                      journal=with_ids([s.base_entry("went on in a new tab")]), who=resources.viewer(name),
                      undone=[asdict(step) for step in s.undone], **fields)
    s.synced, s.journal_synced, s.undone_synced = len(s.history), len(s.journal), len(s.undone)
    st.session_state["draft_rev"] = (token, s.revision, saved, tuple(group.meta().values()))
    db.prune_drafts_now_and_then()


def keep_draft(name: str, c: Corpus) -> None:
    """The group being built back from the URL's draft after a reload, and this tab's draft named in
    the URL of every page, so that F5 anywhere brings it back."""
    _restore_from_url(name, c)
    if "draft_token" in st.session_state or not group.session().is_empty():
        draft_token()
