"""The Annotate page's filter over the texts it shows: its widgets, and the view it leaves (core.annotate's
text_matches and filter_view, the matches cached in ui.resources)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import annotate, wordforms
from core.search import NotApplicable
from core.search.keyword import KeywordError
from ui import picker, resources
from ui.text import md


def draw(row) -> None:
    """The filter's box and its Pattern tick, in the row (container) given; a change goes back to the first page."""
    picker.kept(
        row.text_input, "Filter these texts", key="ann_filter", placeholder="a word or phrase in them", width=320,
        on_change=st.session_state.update, kwargs={"ann_page": 1},
        help="Shows only the texts of this view that hold it (case and diacritics ignored; with 'Every form' ticked "
             "above, its words in any form; with 'Quoted tweets too', a quote whose quoted tweet holds it: as the "
             "keyword search reads them): e.g. to find the included texts that mention something off-topic and "
             "exclude them all at once. Brings in nothing new.")
    picker.kept(row.checkbox, "Pattern", key="ann_filter_regex", help="Read the filter as a regular expression",
                on_change=st.session_state.update, kwargs={"ann_page": 1})


def picked() -> dict:
    """The filter in force ({} without one): how a page action's rows were picked, kept with its step."""
    query = st.session_state.get("ann_filter", "").strip()
    pattern = bool(st.session_state.get("ann_filter_regex"))
    return {"filter": query, "pattern": pattern, "forms": not pattern and st.session_state.get("kw_forms", True),
            "quotes": bool(st.session_state.get("kw_quotes", True))} if query else {}


def apply(name: str, rows: np.ndarray, scores, view: str):
    """(rows, scores) of the view that the filter keeps, with a caption saying so; None when nothing is left
    to list (a bad query, named; or no text of the view holds it). Without a filter, the view as it is."""
    flt = picked()
    if not flt or not len(rows):
        return rows, scores
    try:
        lang = wordforms.language_of(resources.corpus(name)) if flt["forms"] else None
        matches = resources.text_matches(name, flt["filter"], flt["pattern"], lang, flt["quotes"])
    except (KeywordError, NotApplicable) as exc:
        st.error(f"Filter: {md(exc)}")
        return None
    kept, kept_scores = annotate.filter_view(rows, scores, matches)
    st.caption(annotate.filter_caption(md(flt["filter"]), len(kept), len(rows), view))
    return (kept, kept_scores) if len(kept) else None
