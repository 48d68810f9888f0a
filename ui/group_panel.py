"""The Annotate page's group panel: undo, save, open, export, new group, and the offer to restore
an unsaved group from another tab. Layout and callbacks only; the work is in ui/group.py and ui/drafts.py."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from core.corpus import Corpus
from core.export import FORMATS, LABELS
from core.session import Session
from core.store import DatabaseError, GroupExists, GroupNotFound, GroupStore, VersionChanged
from ui import access, drafts, group, picker, resources, team_panel
from ui.text import md, quoted

Say = Callable[[str, str], None]


def _exists(exc: GroupExists, saving_as: str) -> str:
    """What a Save under a taken name says. Where someone else saved that group: whose it is, and where a team
    compares several people's work on one topic (a second annotator who ticked Overwrite made their work the
    first one's next version, and the Review page never compared the two)."""
    if not exc.by or exc.by.strip().casefold() == (saving_as or "").strip().casefold():
        return f"A group named {quoted(exc.name)} exists: tick 'Overwrite' to save it as a new version."
    return (f"A group named {quoted(exc.name)} exists, saved by {md(exc.by)} (version {exc.number}, "
            f"{exc.at[:16].replace('T', ' ')} UTC): tick 'Overwrite' to make yours its next version, or give yours "
            "another name. For several people on one topic, each with a group of their own and their agreement "
            "measured, make a topic on the Team page.")


def team_name(store: GroupStore) -> str | None:
    """The name this browser chose for team work (none without a browser's cookie, or with the database down)."""
    browser = access.browser_id()
    try:
        return store.person(browser) if browser else None
    except DatabaseError:
        return None


def sidebar(corpus: Corpus, session: Session, store: GroupStore, say: Say) -> None:
    """Undo, the save form, open, export and new group, in the sidebar."""

    def on_save() -> None:
        group.read_meta_widgets()  # callbacks run before the script: take what was just typed
        m, who = group.meta(), access.identity()
        name = m["name"].strip()
        if not name:  # Ctrl+S pressed in the name's box takes the name as it was before the box's Enter or Tab
            return say("error", "A group needs a name: type it in Group name, press Enter (or Tab), then Save "
                                "(Ctrl+S).")
        try:
            drafts.autosave(corpus.name, corpus, session)  # the journal is in before the version points at it
            n = store.save(m["name"], corpus.ids_of(session.included), corpus.ids_of(session.excluded),
                           annotator=who or m["annotator"], notes=m["notes"], session_json=session.to_json(),
                           overwrite=st.session_state.get("save_overwrite", False), saved_by=who,
                           expect=group.expected_version(name), work=drafts.draft_token(),
                           topic=team_panel.topic_of(store, name))
        except GroupExists as exc:
            return say("warning", _exists(exc, who or m["annotator"]))
        except VersionChanged as exc:
            group.accept_version(exc.name, exc.number)  # a second Save adds yours after theirs
            return say("warning", f"{md(exc)}. Their version stays; press Save again to add yours as version "
                                  f"{exc.number + 1}, or open theirs first (Open a saved group).")
        except DatabaseError as exc:
            return say("error", f"{md(exc)}. Your group is kept in this tab: save again when the database is back.")
        except ValueError as exc:
            return say("error", md(exc))
        session.mark_saved()
        group.accept_version(name, n)
        st.session_state["save_overwrite"] = False  # the next save of another group must not overwrite unasked
        say("success", f"Saved group {quoted(name)} (version {n}).")

    def on_open() -> None:
        try:
            if st.session_state.get("open_name") in resources.hidden_groups(corpus.name):
                raise GroupNotFound(st.session_state.get("open_name"))  # a blind topic's group, not yet to be seen
            say("success", group.open_group(corpus, store.load(st.session_state.get("open_name"))))
        except GroupNotFound:
            return say("error", f"No group named {quoted(st.session_state.get('open_name'))}.")
        except DatabaseError as exc:  # a damaged file: the page below says so, with its backup (navigation)
            return say("error", f"{md(exc)}.")
        st.session_state.update(ann_view="Included", ann_page=1, open_name=None)

    def on_new() -> None:
        say("info", "Started a new, empty group." + group.switch_group([], [], "new"))
        st.session_state.update(ann_view="Last search", ann_page=1)

    with st.sidebar:
        undo_col, redo_col = st.columns(2)
        undo_col.button("Undo", on_click=lambda: say("info", group.undo()), disabled=not session.history, key="undo",
                        width="stretch", shortcut="Alt+Z", help="Undo the last step (Alt+Z)")
        redo_col.button("Redo", on_click=lambda: say("info", group.redo()), disabled=not session.undone, key="redo",
                        width="stretch", shortcut="Alt+Y",
                        help="Put back what Undo took (Alt+Y), until you take a new step")
        with st.expander("Save group", expanded=True):
            who = access.identity()
            if who is None and "annotator_default" not in st.session_state:  # looked up once a session
                group.default_annotator(team_name(store))
            group.bind_meta_widgets()
            st.text_input("Group name", key="save_name", max_chars=120)
            st.text_input("Annotator", key="save_annotator", disabled=who is not None,
                          help=f"Signed in: saved as {md(who)}" if who else None)
            st.text_area("Notes", key="save_notes", height=68)
            group.read_meta_widgets()
            st.checkbox("Overwrite (adds a new version)", key="save_overwrite")
            st.button("Save", on_click=on_save, type="primary", key="save_btn", disabled=not session.labels,
                      shortcut="Ctrl+S", help="Save the group under its name (Ctrl+S; on a Mac, Cmd+S)")
        groups = resources.group_names(corpus.name)
        with st.expander("Open a saved group", expanded=not session.labels and bool(groups)):
            st.selectbox("Group", groups, key="open_name", index=None, placeholder="Choose a group")
            st.button("Open group", on_click=on_open, disabled=not st.session_state.get("open_name"), key="open_btn")
        with st.expander("Export"):
            fmt = picker.selectbox_kept("Format", FORMATS, "export_fmt", picker.EXPORT_FORMAT, format_func=LABELS.get)
            st.download_button("Download", group.session_export(corpus, session, fmt), on_click="ignore",
                               file_name=f"{group.meta()['name'].strip() or 'group'}.{fmt}", mime=FORMATS[fmt],
                               disabled=not session.labels, key="export_btn")
        st.button("New empty group", on_click=on_new, key="new_btn", disabled=session.is_empty())


def offer_draft(c: Corpus, session: Session, store: GroupStore, say: Say) -> None:
    """In an empty tab: the user's latest unsaved group from another tab of theirs (without sign-in:
    of this browser), to restore or discard. Nobody else's draft is ever offered or deleted."""

    def on_draft(token: str, restore: bool) -> None:
        browser = drafts.draft_browser()
        if restore:
            d = store.claim_draft(token, drafts.owner(), browser=access.browser_id(), writer=drafts.draft_writer(),
                                  any_browser=browser is None)
            said = drafts.restore(d, c, store, behind=True) if d is not None else None
            if said:
                say(*said)
            if said and said[0] == "error":
                return  # left offered: Discard it is the user's choice
        store.delete_draft(token, drafts.owner(), browser)  # restored: it lives on in this tab's draft

    if not session.is_empty():
        return
    for d in store.drafts(drafts.owner(), browser=drafts.draft_browser(), limit=2):
        if d.token == st.session_state.get("draft_token"):
            continue
        box = st.container(border=True)
        box.info(drafts.offer_line(d))
        r1, r2, _ = box.columns([1, 1, 4])
        r1.button("Restore it", on_click=on_draft, args=(d.token, True), type="primary", key="draft_restore")
        r2.button("Discard it", on_click=on_draft, args=(d.token, False), key="draft_discard")
        return
