"""A team's PostgreSQL groups on the Groups page: the snapshots the app takes of them (core/migrate.py), a warning
where the last one did not finish, and where the server lacks saved versions the newest snapshot holds (a dump from
before put back, rows removed at the server), a button that puts them back. Putting back copies into the server
what it lacks and changes nothing it holds, as ``python -m precompute.store restore`` does."""

from __future__ import annotations

import sqlite3

import streamlit as st

from core import backup
from core.db import DatabaseError
from core.migrate import SNAPSHOT_LOG, lacking, last_failure, put_back_snapshot, snapshots_line, snapshots_of
from core.store import GroupStore
from ui.text import md, quoted

_DONE = "gr_put_back"  # what the last put-back copied, said once after the page reruns


def panel(store: GroupStore, name: str) -> None:
    """The snapshots' line, a failed one's warning, and what the server lacks of the newest with its button;
    ``name``: the corpus's."""
    at = store.snapshots_at
    if done := st.session_state.pop(_DONE, None):
        st.success(done)
    st.caption(md(snapshots_line(at, name)))
    if failed := last_failure(at):
        st.warning(md(f"The last snapshot of the team's groups did not finish: {failed}. The groups at the server are "
                      f"as they were; the next save tries again (whole output: {backup.folder(at) / SNAPSHOT_LOG})."))
    kept = snapshots_of(at)
    if not kept:
        return
    newest = kept[0]
    try:
        names, versions = lacking(newest.path, store)
    except (OSError, sqlite3.Error, DatabaseError) as exc:  # a snapshot unreadable, the server gone
        st.warning(f"The newest snapshot ({md(newest.path.name)}) could not be compared with the server: {md(exc)}")
        return
    if not versions:
        return
    shown = ", ".join(quoted(n) for n in names[:10]) + (f" and {len(names) - 10:,} more" if len(names) > 10 else "")
    st.warning(f"The newest snapshot of the team's groups ({newest.made:%Y-%m-%d %H:%M} UTC) holds {versions:,} saved "
               f"version{'s' if versions != 1 else ''} the server does not, of {shown}. The server has lost them (a "
               "dump from before put back, or rows removed there), unless someone removed them on purpose.")
    if st.button("Put back what the server lacks", key="gr_put_back_button", type="primary",
                 help="Copies into the server the groups, versions, drafts, topics and decisions of the newest "
                      "snapshot that it lacks; nothing the server holds is changed or overwritten"):
        try:
            with st.spinner("Putting back what the server lacks, and checking every version…"):
                report = put_back_snapshot(newest.path, store)
        except (OSError, sqlite3.Error, DatabaseError, ValueError) as exc:  # ValueError: one there, other labels
            st.error(f"Nothing was put back: {md(exc, limit=1000)}")
        else:
            st.session_state[_DONE] = f"Put back from {md(newest.path.name)}: {md(report.line(), limit=1000)}."
            st.rerun()
