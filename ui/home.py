"""The home page's summary of the picked corpus: its size, dates, models, languages, warnings, top authors,
and a link to every other page."""

from __future__ import annotations

import streamlit as st

from core import languages
from core.corpus import CorpusError, summary
from core.embed import display_name
from ui import drafts, navigation, resources
from ui.text import md


def corpus_summary(name: str) -> None:
    """The corpus's summary (or its error); stops where the groups' database does not answer."""
    try:
        c = resources.corpus(name)
        info = summary(c)
    except CorpusError as exc:
        st.error(md(exc))
        return
    navigation.database_or_stop(name)
    drafts.keep_draft(name, c)
    st.subheader(f"Corpus: {md(name)}")
    row = st.container(horizontal=True, gap="large")  # wraps in a narrow window (columns cut dates to "2021-0…")
    row.metric("Texts", f"{info['rows']:,}", width="content")
    row.metric("Dimensions", info["dim"], width="content")
    if "authors" in info:
        row.metric("Authors", f"{info['authors']:,}", width="content")
    else:  # not 0 authors: the import had no author column (the Timeline then counts texts, not authors' texts)
        row.metric("Authors", "none", width="content", help="This corpus was imported without an author column (the "
                   "import's 'author column'); import it again with one to see who wrote what.")
    if "date_min" in info:  # two metrics: one date range does not fit a metric's width
        row.metric("First date", f"{info['date_min']:%Y-%m-%d}", width="content")
        row.metric("Last date", f"{info['date_max']:%Y-%m-%d}", width="content")
    st.text("Models: " + ", ".join(display_name(m) for m in info["models"])
            + (f"; dates shown in {c.timezone} time" if c.has_dates else ""))
    with st.spinner("Detecting the corpus's languages again: its import used an older detection…"):
        shares = c.languages  # an older import's: detected again once (~1-3 s), then read from beside its data
    if shares:
        st.text("Languages (share of a sample): " + languages.describe(shares), help=languages.HOW)
    for warning in languages.warnings_of(c):
        st.warning(md(warning, limit=600))
    if "top_authors" in info:
        with st.expander("Top authors"):
            st.dataframe(info["top_authors"].rename("texts"), width="stretch")
    for _, label, _, description in navigation.PAGES[1:]:
        navigation.link(label, description)
