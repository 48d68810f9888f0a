"""Annotate: build a topic group with keyword and semantic searches; undo; save; export."""

from __future__ import annotations

import streamlit as st

from core import annotate
from core.export import FORMATS
from core.search import REGISTRY, SEMANTIC, NotApplicable
from core.search.keyword import KeywordError
from core.session import EXCLUDED, INCLUDED, Session
from core.store import GroupExists, GroupNotFound
from ui import state
from ui.text import md, quoted

name, corpus = state.start_page("Annotate", "✏️")
ctx = state.search_context(name)
store = state.store(name)
session = state.session()
PER_PAGE = 50


def say(kind: str, text: str) -> None:
    st.session_state["ann_msg"] = (kind, text)


def run(method: str, k: int | None, **params) -> None:
    first_words = method == "auto" and ctx.word_index is not None and not ctx.word_index.built
    try:
        with st.spinner("Reading the corpus's words (once per corpus)…" if first_words else "Searching…"):
            r = annotate.ask(ctx, session, method, k, **params)
    except (NotApplicable, KeywordError, ValueError) as exc:
        say("error", md(exc))
        return
    chosen = r.info.get("chosen")
    chosen = f" (chose {REGISTRY[chosen].label if chosen in REGISTRY else chosen})" if chosen else ""
    extra = f" of {r.info['hits']:,} hits ({r.info['already_labelled']:,} already labelled)" if "hits" in r.info else ""
    say("success", f"{REGISTRY[method].label}{chosen}: {len(r):,} new texts{extra}, added as included.")
    st.session_state["ann_view"] = "Last search"
    st.session_state["ann_page"] = 1


def on_keyword() -> None:
    g = st.session_state.get
    dates = g("kw_dates") or ()
    limit = int(g("kw_limit") or 0)
    run("keyword", limit or None, query=g("kw_query", ""), is_regex=g("kw_regex", False),
        case_insensitive=not g("kw_case", False), diacritics_insensitive=not g("kw_diacritics", False),
        date_from=dates[0] if len(dates) > 0 else None, date_to=dates[1] if len(dates) > 1 else None,
        authors=g("kw_authors") or None)


def on_label(rows, label: int) -> None:
    session.set_labels(rows, label)


def on_toggle(row: int) -> None:
    session.toggle(row)


def on_undo() -> None:
    step = session.undo()
    say("info", f"Undid: {step.kind} {step.method or ''}" if step else "Nothing to undo.")


def on_save() -> None:
    g = st.session_state.get
    try:
        n = store.save(g("save_name", ""), corpus.ids_of(session.included), corpus.ids_of(session.excluded),
                       annotator=g("save_annotator", ""), notes=g("save_notes", ""),
                       session_json=session.to_json(), overwrite=g("save_overwrite", False))
    except GroupExists as exc:
        say("warning", f"A group named {quoted(exc.name)} exists: tick 'Overwrite' to save it as a new version.")
    except ValueError as exc:
        say("error", md(exc))
    else:
        say("success", f"Saved group {quoted(g('save_name').strip())} (version {n}).")


def on_open() -> None:
    group_name = st.session_state.get("open_name")
    try:
        g = store.load(group_name)
    except GroupNotFound:
        say("error", f"No group named {quoted(group_name)}.")
        return
    state.open_group(corpus, g)
    st.session_state["ann_view"] = "Included"
    say("success", f"Opened {quoted(g.name)} version {g.number}: {len(g.included)} included, {len(g.excluded)} excluded.")


def on_new() -> None:
    st.session_state["session"] = Session()
    say("info", "Started a new, empty group.")


# ---- sidebar: counters, save, open, export ------------------------------------------------
state.counters(session)
with st.sidebar:
    st.button("Undo", on_click=on_undo, disabled=not session.history, key="undo", width="stretch")
    with st.expander("Save group", expanded=True):
        st.text_input("Group name", key="save_name")
        st.text_input("Annotator", key="save_annotator")
        st.text_area("Notes", key="save_notes", height=68)
        st.checkbox("Overwrite (adds a new version)", key="save_overwrite")
        st.button("Save", on_click=on_save, type="primary", key="save_btn",
                  disabled=not session.labels)
    groups = store.names()
    with st.expander("Open a saved group", expanded=not session.labels and bool(groups)):
        st.selectbox("Group", groups, key="open_name")
        st.button("Open group", on_click=on_open, disabled=not groups, key="open_btn")
    with st.expander("Export"):
        fmt = st.selectbox("Format", list(FORMATS), key="export_fmt")
        data = state.group_export(name, corpus.ids_of(session.included), corpus.ids_of(session.excluded), fmt)
        st.download_button("Download", data, file_name=f"{st.session_state.get('save_name') or 'group'}.{fmt}",
                           mime=FORMATS[fmt], disabled=not session.labels, key="export_btn")
    st.button("New empty group", on_click=on_new, key="new_btn")

# ---- searches -----------------------------------------------------------------------------
st.title("Annotate")
with st.form("kw_form", border=True):
    q1, q2 = st.columns([5, 1])
    q1.text_input("Keyword or regular expression", key="kw_query", placeholder="e.g. ockovani|vakcin",
                  label_visibility="collapsed")
    q2.form_submit_button("Search (KW)", on_click=on_keyword, type="primary", width="stretch")
    o = st.columns(5)
    o[0].checkbox("Regular expression", key="kw_regex")
    o[1].checkbox("Match case", key="kw_case")
    o[2].checkbox("Match diacritics", key="kw_diacritics")
    if corpus.has_dates:
        lo, hi = corpus.frame["date"].min().date(), corpus.frame["date"].max().date()
        o[3].date_input("Dates", value=(lo, hi), min_value=lo, max_value=hi, key="kw_dates")
    o[4].number_input("Add at most (0 = all)", 0, None, 0, step=10, key="kw_limit",
                      help="Add only this many hits, the most typical first (closest to the centre of all "
                           "hits). Reviewing a few dozen typical hits and then pressing Suggest, which "
                           "also weighs the words, finds a topic with fewer texts reviewed than going "
                           "through hundreds of keyword hits one by one (bench/RESULTS.md).")
    if corpus.has_authors:
        st.multiselect("Authors (none = all)", sorted(corpus.frame["author"].unique()), key="kw_authors")

avail = annotate.availability(session)
b = st.columns([1] * (len(SEMANTIC) + 1) + [3])
k = b[0].number_input("k", 1, 500, 10, key="sem_k", label_visibility="collapsed")
for col, method in zip(b[1:], SEMANTIC):
    m = REGISTRY[method]
    col.button(m.label, key=f"btn_{method}", disabled=avail[method] is not None, help=avail[method] or m.help,
               on_click=run, args=(method, int(k)), width="stretch",
               type="primary" if method == "auto" else "secondary")
reasons = sorted({r for m, r in avail.items() if r and m in SEMANTIC})
if reasons:
    b[-1].caption(" · ".join(reasons))

if "ann_msg" in st.session_state:
    kind, text = st.session_state.pop("ann_msg")
    getattr(st, kind)(text)

# ---- results --------------------------------------------------------------------------------
views = {"Last search": "last", "Included": "included", "Excluded": "excluded"}
view = st.radio("Show", list(views), horizontal=True, key="ann_view")
rows, scores = annotate.view_rows(session, views[view])
pages = max(1, -(-len(rows) // PER_PAGE))
if st.session_state.get("ann_page", 1) > pages:
    st.session_state["ann_page"] = 1
page = st.number_input(f"Page (of {pages}, {len(rows):,} texts)", 1, pages, key="ann_page") if pages > 1 else 1
shown = rows[(page - 1) * PER_PAGE: page * PER_PAGE]
shown_scores = scores[(page - 1) * PER_PAGE: page * PER_PAGE] if scores is not None else None
table = annotate.rows_frame(corpus.frame, session, shown, shown_scores)

if len(table):
    a, bb, _ = st.columns([2, 2, 3])
    a.button("Include all on this page", on_click=on_label, args=(shown, INCLUDED), key="bulk_inc")
    bb.button("Exclude all on this page", on_click=on_label, args=(shown, EXCLUDED), key="bulk_exc")
    st.caption("Each text is included (🟢) or excluded (🔴); click its button to switch. "
               "Texts are shown exactly as written.")
    for r in table.itertuples(index=False):
        inc = r.label == "included"
        box = st.container(border=True)
        c1, c2 = box.columns([3, 17])
        # a button, not a checkbox: a click is an event, so no stale widget value can re-fire it
        c1.button("🟢 included" if inc else "🔴 excluded", key=f"tog_{r.row}", on_click=on_toggle,
                  args=(int(r.row),), help="Click to exclude" if inc else "Click to include")
        c2.text(r.text)
        meta = [str(r.date)[:16] if getattr(r, "date", None) is not None else "",
                getattr(r, "author", "") or "", f"score {r.score:.3f}" if r.score == r.score else "", f"id {r.id}"]
        c2.text("  ·  ".join(m for m in meta if m))
elif view == "Last search" and session.last_search() is not None:
    st.info("The last search found no new texts.")
else:
    st.info("Start with a keyword search; its hits come in as included. Click the ones that are off-topic to exclude them, "
            "then ask COS, LDA, NN1, NN2 or Suggest for more.")
