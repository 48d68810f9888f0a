"""A damaged groups file met on a page: what the file is and where its newest backup is kept, with a button that
puts that back (core/salvage.py reads back what was saved after it); and ``named``, for the readers of saved
versions, which meet damage only where a damaged page of the file lies (an old version's labels, a group's latest)."""

from __future__ import annotations

import functools
import sqlite3

import streamlit as st

from core.db import DamagedFile, DatabaseError
from ui.text import md


def stop(exc: DamagedFile) -> None:
    """A groups file damaged (or emptied, or deleted) on disk: what the file is, and where a backup of it
    is kept, a button that puts that back (the file it replaces is kept beside it, never deleted, and what was
    saved after the backup is read back from it: core/salvage.py). Stops."""
    st.error(f"The groups' file cannot be used: {md(exc, limit=1000)}.")
    if exc.newest is not None and st.button(f"Put back the backup of {exc.newest.made:%Y-%m-%d %H:%M} UTC",
                                            type="primary", key="restore_backup",
                                            help="What was saved after the backup is read back from the damaged file "
                                                 "where it can be; that file is kept beside it, renamed"):
        from core import salvage

        try:
            with st.spinner("Putting the backup back, and reading back what was saved after it…"):
                aside, got = salvage.put_back(exc.path, exc.newest.path, damaged=True)  # known: not checked again
        except (OSError, sqlite3.Error, DatabaseError) as err:
            st.error(f"The backup could not be put back: {md(err)}")
        else:
            st.session_state["restored_backup"] = (exc.newest.path.name, aside.name if aside else "",
                                                   got.line() if aside else "")
            st.rerun()
    st.stop()


def named(reader):
    """``reader`` (of saved versions, drawn on a page) with a damaged page of the groups file named as ``stop``
    names it, not a traceback; the store records the damage, so that every page names it from then on."""
    @functools.wraps(reader)
    def read(*args, **kwargs):
        try:
            return reader(*args, **kwargs)
        except DamagedFile as exc:
            stop(exc)
    return read
