"""A team's PostgreSQL groups on the Groups page: the snapshots the app takes of them (core/migrate.py), a warning
where the last one did not finish, and where the server lacks saved versions that kept snapshots hold (a dump from
before put back, rows removed at the server), the groups named and a button that puts them back; so with the
drafts of unsaved work and an adjudicator's decisions it lost (not those discarded or taken back there). Putting
back copies into the server the work it lacks and changes nothing it holds. Work removed at the server on purpose
can be let go instead (asked twice): no longer warned of nor put back. The snapshots of versions let go are removed
a week later, until when one button warns of them again; drafts and decisions let go are recorded at the server as
discarded and taken back (core.store.GroupStore.let_go_lost)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import streamlit as st

from core.db import DatabaseError
from core.migrate import (BESIDE, LET_GO_DAYS, SNAPSHOT_LOG, counted, folder, lacking, last_failure, let_go,
                          let_go_found, put_back_lacking, snapshots_line, snapshots_of)
from core.store import GroupStore
from ui.text import md, quoted

_DONE = "gr_put_back"  # what the last put-back copied, said once after the page reruns
_ASKED = "gr_let_go_asked"  # the versions the user asked to let go, until confirmed or cancelled


def panel(store: GroupStore, name: str) -> None:
    """The snapshots' line, a failed one's warning, and what the server lacks of them with its button; ``name``:
    the corpus's."""
    at = store.snapshots_at
    if done := st.session_state.pop(_DONE, None):
        st.success(done)
    kept = snapshots_of(at)  # listed once for the three below
    st.caption(md(snapshots_line(at, name, kept)))
    if failed := last_failure(at, kept):
        st.warning(md(f"The last snapshot of the team's groups did not finish: {failed}. The groups at the server are "
                      f"as they were; the next save tries again (whole output: {folder(at) / SNAPSHOT_LOG})."))
    try:
        found = lacking(store, at, kept)
    except (OSError, sqlite3.Error, DatabaseError) as exc:  # a snapshot unreadable, the server gone
        st.warning(f"The snapshots could not be compared with the server: {md(exc)}")
        return
    if found.gone:
        _gone(at, found.gone)
    if not found:
        return
    shown = _names(found.names)
    newest, it = found.snapshots[0].made, "it" if found.versions == 1 else "them"
    if found.versions:
        st.warning(f"The snapshots of the team's groups hold {counted(found.versions, 'saved versions')} the "
                   f"server does not, of {shown} (the newest snapshot that holds some: {newest:%Y-%m-%d %H:%M} UTC). "
                   f"The server has lost {it} (a dump from before put back, or rows removed there), unless someone "
                   f"removed {it} there on purpose. The snapshots that hold {it} are kept, past the newest ones, "
                   f"until the server holds {it} again or "
                   f"{'it is' if found.versions == 1 else 'they are'} let go." + _beside(found.beside))
    if found.drafts or found.decisions:
        st.warning(_work_lost(found, newest))
    if st.button("Put back what the server lacks", key="gr_put_back_button", type="primary",
                 help="Copies into the server the groups, versions, journal, topics and assignments of the snapshots "
                      "that it lacks; nothing the server holds is changed (a group of which it holds other versions "
                      f"under the same numbers is put back beside it, as NAME{BESIDE}). So with the drafts of unsaved "
                      "work and an adjudicator's decisions it lost: a draft comes back to its owner's Annotate page, "
                      "offered in an empty tab, as before; those discarded or taken back at the server stay away, "
                      "and so do the versions let go. python -m precompute.store restore puts back a whole snapshot"):
        try:
            with st.spinner("Putting back what the server lacks, and checking every version…"):
                reports = put_back_lacking(store, found)
        except (OSError, sqlite3.Error, DatabaseError, ValueError) as exc:  # ValueError: one there, other labels
            st.error(f"Not put back: {md(exc, limit=1000)}")
        else:
            st.session_state[_DONE] = "Put back: " + "; ".join(
                f"from {md(kept.path.name)}, {md(r.line(), limit=1000)}" for kept, r in reports)
            st.rerun()
    asked = (found.missing, frozenset(found.drafts), found.decisions)
    if st.session_state.get(_ASKED) != asked:
        if st.button("Removed on purpose: let them go…", key="gr_let_go_button",
                     help="Where someone removed this work at the server on purpose: the page stops warning of it and "
                          "does not put it back. The snapshots that hold saved versions go "
                          f"{LET_GO_DAYS} days later; drafts and decisions count as discarded and taken back at the "
                          "server now. Asks again first."):
            st.session_state[_ASKED] = asked
            st.rerun()
        return
    st.warning(_let_go_question(found, shown))
    yes, no = st.columns(2)
    if yes.button("Let them go", key="gr_let_go_confirm", type="primary"):
        try:
            let_go_found(store, at, found)
        except (OSError, sqlite3.Error, DatabaseError) as exc:
            st.error(f"Not let go: {md(exc)}")
            return
        st.session_state.pop(_ASKED, None)
        st.session_state[_DONE] = "Let go: " + "; ".join(
            ([f"{counted(found.versions, 'saved versions')} of {shown}, removed at the server on purpose"]
             if found.versions else []) + ([f"{_work_counted(found)}, as discarded and taken back at the server"]
                                           if found.drafts or found.decisions else [])) + "."
        st.rerun()
    if no.button("Keep warning", key="gr_let_go_cancel"):
        st.session_state.pop(_ASKED, None)
        st.rerun()


def _let_go_question(found, shown: str) -> str:
    """The question asked before letting go of what the server lacks: saved versions (which a button can warn of
    again for a week) and drafts and decisions (recorded at the server as discarded and taken back, for good)."""
    parts = []
    if found.versions:
        it = "it" if found.versions == 1 else "them"
        parts.append(f"{counted(found.versions, 'saved versions')} of {shown}? The page will no longer warn of {it} "
                     f"nor put {it} back. The snapshots that hold {it} are kept {LET_GO_DAYS} more days, then removed "
                     f"as older snapshots are: until then, a button here warns of {it} again.")
    if found.drafts or found.decisions:
        these = "them" if len(found.drafts) + len(found.decisions) != 1 else "it"
        parts.append(f"{_work_counted(found)}? The server records {these} as discarded and taken back there now: "
                     f"the page will not warn of {these} again (no button undoes it), and the snapshots that hold "
                     f"{these} are then kept only as long as other snapshots are.")
    return ("Let go of " + " And of ".join(parts) + " python -m precompute.store restore still puts a whole "
            "snapshot back.")


def _work_counted(found) -> str:
    """The drafts and decisions the server lost, counted and named by owner and topic."""
    drafts, decisions = len(found.drafts), len(found.decisions)
    decided = counted(decisions, "adjudicator's decisions")
    parts = [f"{counted(drafts, 'drafts')} of unsaved work (of {_names(sorted(set(found.drafts.values())))})"
             if drafts else "", f"{decided} on {_names(sorted({topic for topic, _ in found.decisions}))}"
             if decisions else ""]
    return " and ".join(p for p in parts if p)


def _gone(at, gone: dict) -> None:
    """The versions let go that the snapshots still hold, with a button that warns of them again."""
    n, first = len(gone), min(gone.values())
    st.caption(f"{counted(n, 'saved versions')} the server lacks, of "
               f"{_names(sorted({name for name, _, _ in gone}))}, {'were' if n != 1 else 'was'} let go (removed at "
               f"the server on purpose) on {first:%Y-%m-%d %H:%M} UTC"
               f"{' and after' if len(set(gone.values())) > 1 else ''}"
               f": a snapshot that holds {'them' if n != 1 else 'it'} is removed {LET_GO_DAYS} days after, as older "
               f"snapshots are (from {first + timedelta(days=LET_GO_DAYS):%Y-%m-%d %H:%M} UTC).")
    if st.button("Warn of them again", key="gr_warn_again", help="Undo letting them go: the page warns of them "
                 "and offers to put them back, and their snapshots are kept while the server lacks them"):
        try:
            let_go(at, [])
        except OSError as exc:
            st.error(f"Not changed: {md(exc)}")
            return
        st.rerun()


def _work_lost(found, newest) -> str:
    """The warning's words on the drafts and decisions the server lost."""
    these = "them" if len(found.drafts) + len(found.decisions) != 1 else "it"
    offered = (" Put back, a draft is offered again to its owner on the Annotate page (in an empty tab), who can go "
               "on with it or discard it." if found.drafts else "")
    return (f"The snapshots hold {_work_counted(found)} that the server lost (newest snapshot that holds some: "
            f"{newest:%Y-%m-%d %H:%M} UTC): nobody discarded or took {these} back there.{offered}")


def _beside(names: list[str]) -> str:
    """The warning's words on groups of which the server holds other versions under the snapshots' numbers."""
    if not names:
        return ""
    shown, one = _names(names), len(names) == 1
    return (f" Of {shown} the server holds other versions under the same numbers (saved since the loss): the "
            f"snapshots' versions of {'it go back beside it, as a group of its own' if one else 'each go back beside'}"
            f"{'' if one else ' it, as groups of their own'} named {quoted(names[0] + BESIDE)}"
            f"{'' if one else ' and so on'}, so that both can be compared.")


def _names(names: list[str], most: int = 10) -> str:
    """Groups' names for a message: the first ``most`` quoted, and how many more."""
    more = f" and {len(names) - most:,} more" if len(names) > most else ""
    return ", ".join(quoted(n) for n in names[:most]) + more
