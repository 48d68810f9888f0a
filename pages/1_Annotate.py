"""Annotate: build a topic group with keyword and semantic searches; undo; save; export."""

from __future__ import annotations

import streamlit as st

from core import annotate
from core.search import BUTTONS, REGISTRY, NotApplicable
from core.search.keyword import KeywordError
from ui import (drafts, group, group_panel, keyword_form, navigation, picker, quotes_set, reindex, resources,
                team_panel, text_list, view_filter)
from ui.text import md

name, corpus = navigation.start_page("Annotate", "✏️")
ctx = resources.search_context(name)
store = resources.store(name)
session = group.session()
PER_PAGE = 50
SHORTCUTS = {"cos": "Alt+1", "lda": "Alt+2", "nn1": "Alt+3", "nn2": "Alt+4", "suggest": "Alt+S"}


def say(kind: str, text: str) -> None:
    st.session_state["ann_msg"] = (kind, text)


def run(method: str, k: int | None, **params) -> None:
    first_words = method == "suggest" and ctx.word_index is not None and not ctx.word_index.built
    try:
        with st.spinner("Reading the corpus's words (once per corpus)…" if first_words else "Searching…"):
            r = annotate.ask(ctx, session, method, k, **params)
    except (NotApplicable, KeywordError, ValueError) as exc:
        return say("error", md(exc))
    say("success" if len(r) else "info", annotate.search_message(method, r))  # nothing found: said neutrally
    st.session_state.update(ann_view="Last search", ann_page=1)


def on_keyword() -> None:
    k, params = keyword_form.request(corpus)
    run("keyword", k, **params)


def on_more_hits() -> None:
    params = annotate.last_keyword(session)
    if params is not None:
        run("keyword", int(st.session_state.get("kw_limit") or 0) or annotate.KEYWORD_PAGE, **params)


def on_bulk(rows, label: int, picked: dict) -> None:
    """A page action; ``picked`` says how its rows were picked (the filter), kept with the step."""
    step = annotate.label(ctx.copies, session, rows, label, params=picked,
                          keep_explicit=not st.session_state.get("bulk_overturn", False))
    say("info", annotate.bulk_message(step, label))


group_panel.sidebar(corpus, session, store, say)

# ---- searches -----------------------------------------------------------------------------
st.title("Annotate")
team_panel.guidelines_beside(store, group.meta().get("name", ""))
group_panel.offer_draft(corpus, session, store, say)
keyword_form.draw(name, corpus, on_submit=on_keyword)
quotes_set.draw(name, corpus)  # in a corpus with quotes: the semantic searches read them with what they quote
reindex.draw(name, corpus)  # a keyword index built by an older version: built again here


@st.fragment
def results() -> None:
    """Counters, semantic searches and the result list: a click here reruns only this part."""
    try:
        if resources.imported_again(name, corpus):  # this part's corpus is the earlier import: the page takes the new
            st.rerun(scope="app")  # (the click's change is written first, by the earlier import's ids: finally)
        _results()
    finally:
        drafts.autosave(name, corpus, session)  # every change, also from a fragment-only rerun


def _results() -> None:
    group.counters(session, st)
    recent = annotate.recent_yield(session)
    if advice := annotate.stop_advice(recent):  # when to stop (bench/stopping.py)
        (st.info if recent.dried_up else st.caption)(advice)
    avail = annotate.availability(session, ctx)
    # a row that wraps where the window is narrow (half a laptop's screen beside the guidelines): in columns the
    # buttons shrank until they showed their shortcuts alone, the method's name cut off
    with st.container(horizontal=True, vertical_alignment="bottom"):
        # this and the view, its page and filter come back as they were left after a visit to another page
        k = picker.kept(st.number_input, "Texts per search", 1, 500, 10, key="sem_k", width=120)
        for method in BUTTONS:
            m = REGISTRY[method]
            st.button(m.label, key=f"btn_{method}", disabled=avail[method] is not None, on_click=run,
                      help=avail[method] or m.help, args=(method, int(k)), width="content",
                      type="primary" if method == "suggest" else "secondary", shortcut=SHORTCUTS.get(method))
    if needs := annotate.unmet_needs(avail, BUTTONS, session.counts()):
        st.caption(needs)
    if "ann_msg" in st.session_state:
        kind, text = st.session_state.pop("ann_msg")
        getattr(st, kind)(text)
    views = {"Last search": "last", "Included": "included", "Excluded": "excluded"}
    # rows that wrap in a narrow window rather than cut their widgets' names short (as columns did)
    show = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
    view = picker.kept(show.radio, "Show", list(views), horizontal=True, key="ann_view", valid=views.__contains__)
    view_filter.draw(show)
    advice_row = st.container(horizontal=True, vertical_alignment="center")
    advice_col = advice_row.container()
    last_kw, exhausted = annotate.last_keyword(session), annotate.keyword_exhausted(session)
    advice_row.button("More hits", key="btn_kw_more", disabled=last_kw is None or exhausted, on_click=on_more_hits,
                      shortcut="Alt+K", width="content",
                      help="Search a keyword first" if last_kw is None else
                      f"Every hit of the keyword ‘{md(last_kw['query'])}’ is in the group" if exhausted else
                      f"The next hits of the keyword ‘{md(last_kw['query'])}’, most typical first")
    if view == "Last search" and (advice := annotate.keyword_advice(session)):
        advice_col.caption(advice)
    in_view = annotate.view_rows(session, views[view])
    each_once = annotate.distinct(ctx, *in_view)
    copies = len(in_view[0]) - len(each_once[0])  # labelled with a text the list shows
    if (filtered := view_filter.apply(name, *each_once, views[view])) is None:
        return
    rows, scores = filtered
    pages = annotate.page_count(len(rows), PER_PAGE)
    if st.session_state.get("ann_page", 1) > pages:
        st.session_state["ann_page"] = 1
    more = f"; {copies:,} copies of them besides" if copies else ""
    page = (picker.kept(st.number_input, f"Page (of {pages}, {len(rows):,} texts{more})", 1, pages, key="ann_page",
                        valid=lambda v: 1 <= v <= pages)
            if pages > 1 else 1)
    shown, shown_scores = annotate.page_of(rows, scores, page, PER_PAGE)
    table = annotate.rows_frame(corpus.frame, session, shown, shown_scores, corpus.timezone,
                                annotate.copy_counts(ctx, shown))
    if not len(table):
        if not session.labels:  # a new group, also one opened empty (a team topic's, at first) or undone to nothing
            st.info("Start with a keyword search; its hits come in as included. Click the ones that are off-topic "
                    "to exclude them, then ask COS, LDA, NN1, NN2 or Suggest for more.")
        else:
            st.info(f"Nothing to show under '{view}'. The group has {len(session.included):,} included and "
                    f"{len(session.excluded):,} excluded texts: pick another view, or search.")
        return
    text_list.bulk_actions(rows, shown, on_bulk)
    text_list.texts(name, corpus, ctx.copies, session, table, copies, ctx.threads)

results()
