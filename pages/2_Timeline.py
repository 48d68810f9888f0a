"""Timeline: texts of a group (a saved group, a keyword search, the whole corpus) per date, stacked by author, or as
a share of all texts per date; several saved groups compared, a line each."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import plots, timezones, wordforms
from core.annotate import plural
from core.export import neutralise_formulas
from core.search import NotApplicable
from core.search.keyword import KeywordError
from core.store import GroupNotFound
from ui import group, keyword_form, navigation, picker, resources
from ui.text import md, quoted

name, corpus = navigation.start_page("Timeline", "📈")
session = group.session()
group.counters(session)
st.title("Timeline")

if not corpus.has_dates:
    st.warning("This corpus has no dates, so there is no timeline. Import it with a date column "
               "(`--date-column`) to see one.")
    st.stop()

sources = ["Group being built (included)", "Saved groups (included)", "Keyword search", "The whole corpus"]
# an analyst who opens the page with no group being built sees the saved groups first, where there are any
first = 1 if not len(session.included) and resources.group_names(name) else 0
# every choice below comes back as it was left after a visit to another page (picker.kept)
source = picker.kept(st.radio, "Texts", sources, index=first, horizontal=True, key="tl_source",
                     valid=sources.__contains__)
rows = np.zeros(0, np.int64)
label = source.split(" (")[0].lower()  # what the texts are, in the download
compare = {}  # saved group -> its included rows, where two or more are compared
if source == sources[3]:
    rows = None  # every text: the frame as it is, not a copy of its rows
elif source == sources[0]:
    rows = session.included
    if not len(rows):
        st.info("The group being built has no included texts yet: search on the Annotate page first.")
        navigation.link("Annotate", "Search on the Annotate page")
elif source == sources[1]:
    names = resources.group_names(name)
    picked = picker.kept(st.multiselect, "Groups (two or more: compared, a line each)", names, default=names[:1],
                         key="tl_groups", max_selections=len(plots.AUTHOR_PALETTE),
                         valid=lambda v: set(v) <= set(names)) if names else []
    try:
        compare = {g: resources.saved_group_labels(name, g)[0] for g in picked}
    except GroupNotFound as exc:  # deleted since the list was read
        st.error(f"No group named {quoted(str(exc.args[0]))}.")
    if len(compare) == 1:
        (label, rows), = compare.items()
        compare = {}
    elif not names:
        st.info("No saved groups yet.")
    elif not picked:
        st.info("Pick a saved group, or several to compare them.")
else:
    query = picker.kept(st.text_input, "Keyword (case- and diacritics-insensitive)", key="tl_query")
    t1, t2, t3 = st.columns([1, 1, 3])
    is_regex = picker.kept(t1.checkbox, "Regular expression", key="tl_regex", help=keyword_form.REGEX_HELP)
    forms = wordforms.language_of(corpus)
    if forms and not picker.kept(t2.checkbox, "Every form", value=True, key="tl_forms",
                                 help=keyword_form.forms_help(forms)):
        forms = None
    quotes = keyword_form.has_quotes(corpus) and picker.kept(t3.checkbox, "Quoted tweets too", value=True,
                                                             key="tl_quotes", help=keyword_form.QUOTES_HELP)
    if not query.strip():
        st.info("Type a keyword (or a regular expression, ticked): its hits appear here over time.")
    else:
        try:
            rows = resources.text_matches(name, query, is_regex, forms, quotes)
            if not len(rows):
                st.info(f"No text matches {quoted(query)}.")
        except (KeywordError, NotApplicable) as exc:
            st.error(md(exc))

b1, b2 = st.columns([2, 3], vertical_alignment="bottom")
BINS = ["auto", "day", "week", "month"]
bin_name = picker.kept(b1.segmented_control, "Bin", BINS, default="auto", key="tl_bin") or "auto"
share = (rows is not None or bool(compare)) and picker.kept(
    b2.toggle, "As a share of all texts", key="tl_share",
    help="Each bin's texts of this group as a percentage of all the corpus's texts in that bin: how much of what "
         "was written that day (week, month) the topic takes, whatever the corpus's own volume does.")
if rows is None:  # the whole corpus: its own counts, its figure kept per bin
    first, last = resources.date_range(name)
    bin_name = plots.auto_bin(pd.Series(pd.to_datetime([first, last]))) if bin_name == "auto" else bin_name
    whole = resources.bin_counts(name, bin_name)
    parts, tl = {label: whole}, resources.whole_timeline(name, bin_name)
elif compare or len(rows):
    if compare:  # one line per group: no authors, no texts read
        dates = {g: timezones.local(corpus.frame["date"].iloc[r], corpus.timezone).dropna() for g, r in compare.items()}
    else:
        cols = [c for c in ("date", "author", "text") if c in corpus.frame.columns and
                (c != "text" or len(rows) <= plots.PER_TEXT_LIMIT)]  # counts per bin above the limit: no text read
        shown = timezones.shown(corpus.frame.iloc[rows][cols], corpus.timezone)
        dates = {label: shown["date"].dropna()}
    bin_name = plots.auto_bin(pd.concat(list(dates.values()))) if bin_name == "auto" else bin_name
    parts = {g: plots.bin_counts(d, bin_name) for g, d in dates.items()}
    whole = resources.bin_counts(name, bin_name)
    if compare or share:
        tl = plots.line_timeline(plots.bin_table(parts, whole), bin_name, share)
    else:
        tl = plots.timeline(shown, bin_name, colours=resources.author_colours(name))
if rows is None or compare or len(rows):
    if compare:
        st.caption(f"{plural(len(compare), 'saved group')}, {plural(tl.n, 'text')} in all: " +
                   (f"each as a percentage of all of the corpus's texts per {tl.bin}" if share else
                    f"their texts per {tl.bin}") + " (hover for the counts; a text in two groups counts in both).")
    elif tl.mode == "share":
        st.caption(f"{tl.n:,} texts, as a percentage of all of the corpus's texts per {tl.bin} (hover for the "
                   "counts); bins without any text of the corpus are left out.")
    elif tl.mode == "counts":
        st.caption(f"{tl.n:,} texts: above {plots.PER_TEXT_LIMIT:,} texts the timeline shows counts per "
                   f"{tl.bin}{' and author' if corpus.has_authors else ''} (hover for the counts) instead of one "
                   "box per text.")
    else:
        st.caption(f"{plural(tl.n, 'text')}, one box each, per {tl.bin}; hover a box for its text.")
    if not corpus.has_authors and not compare:
        st.caption("This corpus has no authors: all texts are in one colour.")
    st.plotly_chart(tl.figure, width="stretch", key="tl_chart")
    # made when clicked, not on every rerun; a group's name is the user's text, so no cell is run as a formula
    st.download_button(f"Download the counts per {tl.bin} (CSV)",
                       lambda: neutralise_formulas(plots.bin_table(parts, whole)).to_csv(index=False),
                       file_name=f"{name}-timeline-{tl.bin}.csv", mime="text/csv", on_click="ignore", key="tl_csv",
                       help="Per bin: these texts, all the corpus's texts and their share in percent.")
