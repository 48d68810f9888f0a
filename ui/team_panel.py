"""The Team and Review pages' panels: who the user is (signed in, or a name chosen once per browser),
the new-topic form, the adjudication table. The logic is core/teams.py and the store's."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import timezones
from core.store import GroupStore
from core.teams import progress_by_text
from ui import access, picker, resources
from ui.text import md, quoted


def whoami(name: str, store: GroupStore) -> str:
    """The user's name for team work: the signed-in identity; on a server without sign-in, a name
    chosen once in this browser (asked for here, kept for this browser); st.stop() until there is one."""
    who = access.identity()
    if who:
        return who
    browser = access.browser_id()
    known = store.person(browser)
    with st.sidebar.form("team_name"):
        typed = st.text_input("Your name (team work)", value=known or "", max_chars=60,
                              help="Recorded with your labels and topics; kept for this browser.")
        if st.form_submit_button("Use this name"):
            try:
                store.set_person(browser, typed)
                st.rerun()
            except ValueError as exc:
                st.error(md(exc))
    if not known:
        st.info("Type your name in the sidebar first: it goes with your labels, topics and agreement.")
        st.stop()
    return known


def new_topic_form(store: GroupStore, me: str) -> None:
    with st.form("team_new", clear_on_submit=True):
        topic = st.text_input("Topic name", max_chars=80, key="team_new_name")
        guidelines = st.text_area("Guidelines", help="What belongs to the topic and what does not, with examples.",
                                  key="team_new_guidelines")
        people = st.text_input("Annotators (comma-separated names)", value=me, key="team_new_people")
        blind = st.checkbox("Blind: nobody sees the others' labels until they submit", value=True, key="team_new_blind")
        go = st.form_submit_button("Create the topic", type="primary")
    if not go:
        return
    try:
        store.create_topic(topic, guidelines, created_by=me, blind=blind)
        for person in [p.strip() for p in people.split(",") if p.strip()]:
            store.assign(topic.strip(), person)
        st.session_state["team_msg"] = ("success", f"Created the topic {quoted(topic.strip())}.")
        picker.pick_next_run("team_topic", topic.strip())
        st.rerun()
    except ValueError as exc:
        st.error(md(exc))


def how_line(p, zone: str = "UTC") -> str:
    """A text's provenance in words: who, through which search (with its query), when (in ``zone``)."""
    if p is None:
        return ""
    query = p.params.get("query") if isinstance(p.params, dict) else None
    method = {"keyword": "KW", "toggle": "a click", "review": "review"}.get(p.method or "", p.method or "")
    return f"{p.who}: {method}" + (f" ‘{query}’" if query else "") + f", {timezones.wall(p.at, zone)}"


def copy_codes(name: str, corpus, ids) -> dict[str, int]:
    """id -> the code of its text among the corpus's copies (core/copies.py), for the ids in this import."""
    ids = [str(i) for i in ids]
    rows = corpus.id_index.get_indexer(ids)
    codes = resources.copies_of(name).codes
    return {i: int(codes[r]) for i, r in zip(ids, rows) if r >= 0}


def progress_table(name: str, corpus, store: GroupStore, rows) -> pd.DataFrame:
    """Who has done how much on a topic. Where the corpus shares texts (core/copies.py), a text and its copies
    count once, as the Annotate and Review pages count them, with the rows labelled beside."""
    shared = resources.copies_of(name).rows_with_copies > 0
    out = []
    for a in rows:
        reviewed, included, labelled = a.reviewed, a.included, a.reviewed
        if shared and a.reviewed:
            reviewed, included = _texts_progress(store, corpus, name, a.group,
                                                 (a.last_activity, a.reviewed, a.included, *resources.corpus_key(name)))
        out.append({"annotator": a.annotator, "texts reviewed": reviewed, "included": included}
                   | ({"rows labelled (copies too)": labelled} if shared else {})
                   | {"last save": (a.last_activity or "")[:16].replace("T", " "),
                      "submitted": (a.submitted_at or "")[:16].replace("T", " ")})
    return pd.DataFrame(out)


@st.cache_data(max_entries=64, show_spinner=False)
def _texts_progress(_store: GroupStore, _corpus, name: str, group: str, saved: tuple) -> tuple[int, int]:
    """A group's (texts reviewed, included), a text and its copies once; kept until the group is saved again
    (``saved``: its last save, its counts and the corpus's key). Uncached 0.24 s for three groups of 20,000 labels."""
    labels = _store.load(group).labels()
    return progress_by_text(labels, copy_codes(name, _corpus, labels))
