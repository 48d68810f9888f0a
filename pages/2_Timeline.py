"""Timeline: texts of a group (or of a keyword search) per date, stacked by author."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import plots, timezones
from core.search.keyword import KeywordError, find_rows
from core.store import GroupNotFound
from ui import group, navigation, resources
from ui.text import md, quoted

name, corpus = navigation.start_page("Timeline", "📈")
session = group.session()
group.counters(session)
st.title("Timeline")

if not corpus.has_dates:
    st.warning("This corpus has no dates, so there is no timeline. Import it with a date column "
               "(`--date-column`) to see one.")
    st.stop()

sources = ["Group being built (included)", "Saved group (included)", "Keyword search", "The whole corpus"]
source = st.radio("Texts", sources, horizontal=True, key="tl_source")
rows = np.zeros(0, np.int64)
if source == sources[3]:
    rows = None  # every text: the frame as it is, not a copy of its rows
elif source == sources[0]:
    rows = session.included
    if not len(rows):
        st.info("The group being built has no included texts yet: search on the Annotate page first.")
elif source == sources[1]:
    names = resources.store(name).names()
    group = st.selectbox("Group", names, key="tl_group")
    if group:
        try:
            rows = corpus.rows_of(resources.store(name).load(group).included)
        except GroupNotFound:
            st.error(f"No group named {quoted(group)}.")
    else:
        st.info("No saved groups yet.")
else:
    query = st.text_input("Keyword (case- and diacritics-insensitive)", key="tl_query")
    is_regex = st.checkbox("Regular expression", key="tl_regex")
    if not query.strip():
        st.info("Type a keyword (or a regular expression, ticked): its hits appear here over time.")
    else:
        try:
            rows = find_rows(resources.search_context(name).keyword_index, query, is_regex=is_regex)
            if not len(rows):
                st.info(f"No text matches {quoted(query)}.")
        except KeywordError as exc:
            st.error(md(exc))

b1, b2 = st.columns([2, 3], vertical_alignment="bottom")
bin_name = b1.segmented_control("Bin", ["auto", "day", "week", "month"], default="auto", key="tl_bin") or "auto"
share = rows is not None and b2.toggle(
    "As a share of all texts", key="tl_share",
    help="Each bin's texts of this group as a percentage of all the corpus's texts in that bin: how much of what "
         "was written that day (week, month) the topic takes, whatever the corpus's own volume does.")
if rows is None or len(rows):
    n = corpus.n if rows is None else len(rows)
    cols = [c for c in ("date", "author", "text") if c in corpus.frame.columns and
            (c != "text" or n <= plots.PER_TEXT_LIMIT)]  # counts per bin above the limit: no text read
    frame = corpus.frame[cols] if rows is None else corpus.frame.iloc[rows][cols]
    shown = timezones.shown(frame, corpus.timezone)
    dated = shown["date"].dropna()
    bin_name = plots.auto_bin(dated) if bin_name == "auto" else bin_name
    part, whole = plots.bin_counts(dated, bin_name), resources.bin_counts(name, bin_name)
    if share:
        tl = plots.share_timeline(part, whole, bin_name)
    else:
        tl = plots.timeline(shown, bin_name, colours=resources.author_colours(name))
    if tl.mode == "share":
        st.caption(f"{tl.n:,} texts, as a percentage of all of the corpus's texts per {tl.bin} (hover for the "
                   "counts); bins without any text of the corpus are left out.")
    elif tl.mode == "counts":
        st.caption(f"{tl.n:,} texts: above {plots.PER_TEXT_LIMIT:,} texts the timeline shows counts per "
                   f"{tl.bin} and author (hover for the counts) instead of one box per text.")
    else:
        st.caption(f"{tl.n:,} texts, one box each, per {tl.bin}; hover a box for its text.")
    if not corpus.has_authors:
        st.caption("This corpus has no authors: all texts are in one colour.")
    st.plotly_chart(tl.figure, width="stretch", key="tl_chart")
    st.download_button(f"Download the counts per {tl.bin} (CSV)", plots.bin_table(part, whole).to_csv(index=False),
                       file_name=f"{name}-timeline-{tl.bin}.csv", mime="text/csv", on_click="ignore", key="tl_csv",
                       help="Per bin: these texts, all the corpus's texts and their share in percent.")
