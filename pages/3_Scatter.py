"""LDA scatter: the whole corpus projected to 2-D by a discriminant fitted on the current group.
Select points (box or lasso) to include or exclude them."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import plots
from core.projection import lda_directions, project
from core.session import EXCLUDED, INCLUDED
from ui import state

name, corpus = state.start_page("LDA scatter", "✨")
session = state.session()
state.counters(session)
st.title("LDA scatter")
HOVER_SAMPLE = 5000


@st.cache_data(max_entries=8, show_spinner="Projecting the corpus…")
def coordinates(corpus_name: str, stamp: str, included: tuple, excluded: tuple) -> np.ndarray:
    vectors = state.search_context(corpus_name).vectors
    w = lda_directions(vectors, np.array(included, np.int64), np.array(excluded, np.int64))
    return project(vectors, w)


inc, exc = session.included, session.excluded
if len(inc) < 1 or len(exc) < 1:
    st.info(f"The scatter needs at least 1 included and 1 excluded text in the group being built "
            f"(now {len(inc)} included, {len(exc)} excluded). Build the group on the Annotate page.")
    st.stop()

xy = coordinates(name, corpus.manifest.get("created_at", ""), tuple(inc.tolist()), tuple(exc.tolist()))
labels = np.zeros(corpus.n, dtype=np.int8)
labels[inc], labels[exc] = INCLUDED, EXCLUDED
sc = plots.scatter(xy, labels, corpus.frame["text"].to_numpy(), hover_sample=HOVER_SAMPLE)
st.caption(f"All {corpus.n:,} texts: green included, red excluded, yellow unlabelled. Hover shows the text "
           f"of {sc.hover_rows:,} texts: the labelled ones and a sample of up to {HOVER_SAMPLE:,} unlabelled ones "
           "(the rest are drawn without text, to keep the page light at 300k texts). Drag a lasso (or pick "
           "box select in the chart's toolbar) to select texts, then include or exclude them.")
event = st.plotly_chart(sc.figure, width="stretch", key="scatter", on_select="rerun",
                        selection_mode=("box", "lasso"))
picked = plots.selected_rows(sc, (event or {}).get("selection", {}).get("points", []))
a, b, c, _ = st.columns([1, 1, 1, 3])
a.button(f"Include selected ({len(picked)})", disabled=not len(picked), key="sc_inc",
         on_click=session.set_labels, args=(picked, INCLUDED))
b.button(f"Exclude selected ({len(picked)})", disabled=not len(picked), key="sc_exc",
         on_click=session.set_labels, args=(picked, EXCLUDED))
c.button("Undo", disabled=not session.history, key="sc_undo", on_click=session.undo)
if len(picked):
    st.dataframe(corpus.frame.iloc[picked[:200]][["id", "text"]], hide_index=True, width="stretch")
