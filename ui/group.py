"""The group being built by this user (one per browser session): its labels and history, the save
form's fields, the steps that replace the whole group (open, new, from a cluster) and undo, the
counters, exports of it."""

from __future__ import annotations

import streamlit as st

from core import annotate
from core.annotate import plural
from core.corpus import Corpus
from core.export import group_frame, saved_groups_frame, to_bytes
from core.search import REGISTRY
from core.session import SWITCH, Session
from core.store import GroupStore, GroupVersion
from ui import resources
from ui.text import quoted


def session() -> Session:
    """The group being built by this user (one per browser session)."""
    if "session" not in st.session_state:
        st.session_state["session"] = Session()
    return st.session_state["session"]


# --- the save form's fields, kept apart from the widgets (which exist on Annotate only) ------
META_KEYS = {"name": "save_name", "annotator": "save_annotator", "notes": "save_notes"}


def meta() -> dict:
    """Name, annotator and notes of the group being built."""
    return st.session_state.setdefault("group_meta", {"name": "", "annotator": "", "notes": ""})


def set_meta(**fields: str) -> None:
    """Change the group's fields and the save form's widgets (call from a callback, or before
    the form is drawn)."""
    m = meta()
    for field, value in fields.items():
        m[field] = value or ""
        st.session_state[META_KEYS[field]] = value or ""


def default_annotator(name: str | None) -> None:
    """An empty Annotator field takes ``name``, the name this browser chose for team work (the Team and Review
    pages ask for it), so that nobody types their name twice. Once per name: a field emptied on purpose stays
    empty until another name is chosen."""
    if name and not meta()["annotator"] and st.session_state.get("annotator_default") != name:
        set_meta(annotator=name)
    st.session_state["annotator_default"] = name or st.session_state.get("annotator_default", "")


def bind_meta_widgets() -> None:
    """Before drawing the save form: widgets start from the group's fields."""
    for field, key in META_KEYS.items():
        if key not in st.session_state:
            st.session_state[key] = meta()[field]


def read_meta_widgets() -> None:
    """After drawing the save form: what the user typed becomes the group's fields."""
    for field, key in META_KEYS.items():
        meta()[field] = st.session_state.get(key, "") or ""


def expected_version(name: str) -> int | None:
    """The version of group ``name`` this session opened or last saved (a save over another one asks
    first); None when it has neither."""
    seen = st.session_state.get("group_version")
    return seen[1] if seen and seen[0] == name else None


def accept_version(name: str, number: int) -> None:
    """This session has seen version ``number`` of ``name`` (opened or saved it)."""
    st.session_state["group_version"] = (name, int(number))


def unsaved(s: Session) -> bool:
    return bool(s.labels) and not s.is_saved()


# --- steps that replace the whole group: undoable, never silent ----------------------------
def switch_group(included_rows, excluded_rows, action: str, **fields: str) -> str:
    """Make another group the one being built (open, new, from a cluster); returns what to tell
    the user. The group being built is not lost: Undo brings it back with its name and notes."""
    s = session()
    before = s.counts()
    was_unsaved = unsaved(s)
    opened = {"group": fields["name"], "version": fields["version"]} if "version" in fields else {}
    left = {"left_unsaved": {"included": before["included"], "excluded": before["excluded"]}} if was_unsaved else {}
    s.switch_to(included_rows, excluded_rows, action, previous_meta=dict(meta()), **opened, **left)  # journal: which
    set_meta(name=fields.get("name", ""), notes=fields.get("notes", ""),
             annotator=fields.get("annotator", meta().get("annotator", "")))
    st.session_state["save_overwrite"] = False
    if was_unsaved:
        return (f" The unsaved group you were building ({before['included']:,} included, "
                f"{before['excluded']:,} excluded) is one Undo away.")
    return ""


def undo() -> str:
    """Undo the last step (a switch brings back the previous group's fields too); a message."""
    s = session()
    step = s.undo()
    if step is None:
        return "Nothing to undo."
    if step.method == SWITCH:
        st.session_state.setdefault("redo_meta", {})[step.id] = dict(meta())  # what Redo brings back
        set_meta(**{k: v for k, v in step.params.get("previous_meta", {}).items() if k in META_KEYS})
        return "Undid: back to the group you were building before. Redo (Alt+Y) takes you to it again."
    return f"Undid: {_described(step)}."


def redo() -> str:
    """Put back the step the last Undo took (a switch brings back the fields it had); a message."""
    s = session()
    if s.undone and s.undone[-1].method == SWITCH:  # the group it leaves again may have been saved meanwhile
        c = s.counts()
        s.undone[-1].params.pop("left_unsaved", None)
        if unsaved(s):
            s.undone[-1].params["left_unsaved"] = {"included": c["included"], "excluded": c["excluded"]}
    step = s.redo()
    if step is None:
        return "Nothing to redo."
    if step.method == SWITCH:
        set_meta(**st.session_state.get("redo_meta", {}).pop(step.id, {}))
        return "Redid: back to the group you had opened or started."
    return f"Redid: {_described(step)}."


def _described(step) -> str:
    label = REGISTRY[step.method].label if step.kind == "search" and step.method in REGISTRY else step.method
    return f"{label} ({plural(len(step.changes), 'text')})"


def counters(s: Session, where=None) -> None:
    where = where or st.sidebar
    c = s.counts()
    a, b = where.columns(2)
    a.metric("Included", c["included"])
    b.metric("Excluded", c["excluded"])


def group_export(c: Corpus, included_ids, excluded_ids, fmt: str):
    """The export file, built only when the user clicks Download (a callable for
    st.download_button): nothing is computed on reruns."""
    return lambda: to_bytes(group_frame(c, list(included_ids), list(excluded_ids)), fmt)


def session_export(c: Corpus, s: Session, fmt: str):
    """Like group_export, for the group being built, read at click time (never stale)."""
    return lambda: group_export(c, c.ids_of(s.included), c.ids_of(s.excluded), fmt)()


def every_group_export(c: Corpus, store: GroupStore, names: list[str], fmt: str):
    """Like group_export, for these saved groups side by side (their latest versions), read at click time."""
    return lambda: to_bytes(saved_groups_frame(c, store, names), fmt)


def open_group(c: Corpus, group: GroupVersion) -> str:
    """Make a saved group the group being built (one undoable step, with its name, annotator
    and notes); returns what to tell the user."""
    inc, exc = c.rows_of(group.included), c.rows_of(group.excluded)
    extra = switch_group(inc, exc, "open", name=group.name, notes=group.notes, annotator=group.annotator,
                         version=group.number)
    session().mark_saved()
    accept_version(group.name, group.number)
    missing = len(group.included) + len(group.excluded) - len(inc) - len(exc)
    gone = f" {missing:,} of its texts are not in this import of the corpus." if missing else ""
    step = annotate.copies_left_out(resources.copies_of(c.name), session())  # a group saved before copies were known
    copies = (f" {step.params['changed']:,} copies of its texts (the same words, other links) were unlabelled: "
              "they took their text's label, in one step that Undo takes back. Save to keep them." if step else "")
    return (f"Opened {quoted(group.name)} version {group.number}: {len(inc):,} included, "
            f"{len(exc):,} excluded.{gone}{copies}{extra}")
