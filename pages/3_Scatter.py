"""LDA scatter: the whole corpus projected to 2-D by a discriminant fitted on the current group.
Select points (box or lasso) to include or exclude them."""

from __future__ import annotations

import os

import numpy as np
import streamlit as st

from core import annotate, plots, vectorstore
from core.projection import (PREVIEW_HOVER, PREVIEW_SHARE, axis_titles, lda_directions, preview_scatter,
                             project)
from core.session import EXCLUDED, INCLUDED
from ui import drafts, group, navigation, resources
from ui.text import md

name, corpus = navigation.start_page("LDA scatter", "✨")
session = group.session()
group.counters(session)
st.title("LDA scatter")
HOVER_SAMPLE = int(os.environ.get("SEMANNO_SCATTER_HOVER_SAMPLE", 5000))
# above this many texts the unlabelled ones are a density image (tests lower it to see that form)
RASTER_FROM = int(os.environ.get("SEMANNO_SCATTER_RASTER_FROM", plots.RASTER_FROM))


# from this many texts the first view of a group state is a preview from evenly spread blocks of the corpus
# (projection.PREVIEW_SHARE of it), drawn while the whole corpus is projected (a cold 10M store: 7.7 GB to read)
PREVIEW_FROM = int(os.environ.get("SEMANNO_SCATTER_PREVIEW_FROM", 2_000_000))
# ... and only while less than this share of its vector store is in the page cache (warm, the full one is
# ready in ~3-5 s at 10M and a preview would only delay it)
PREVIEW_BELOW = float(os.environ.get("SEMANNO_SCATTER_PREVIEW_BELOW", 0.9))


def space(corpus_name: str, sketched: str) -> np.ndarray:
    """The rows the scatter projects: the import's sketch (core/sketch.py) where there is one (``sketched``:
    its identity, a part of every cache key below), else the vectors of the picked embedding set."""
    return resources.scatter_sketch(corpus_name)[0] if sketched else resources.search_context(corpus_name).vectors


@st.cache_data(max_entries=8, show_spinner="Fitting the discriminant…")
def directions(corpus_name: str, stamp: str, included: tuple, excluded: tuple, sketched: str) -> np.ndarray:
    return lda_directions(space(corpus_name, sketched), np.array(included, np.int64), np.array(excluded, np.int64))


@st.cache_data(max_entries=8, show_spinner="Projecting the corpus…")
def coordinates(corpus_name: str, stamp: str, included: tuple, excluded: tuple, sketched: str) -> np.ndarray:
    return project(space(corpus_name, sketched), directions(corpus_name, stamp, included, excluded, sketched))


inc, exc = session.included, session.excluded
if len(inc) < 1:
    st.info(f"The scatter needs at least 1 included text in the group being built (now none, {len(exc)} excluded). "
            "Build the group on the Annotate page: a keyword search brings its hits in as included.")
    st.stop()
if len(exc) < 1:
    st.caption("Nothing is excluded yet: the horizontal axis sets the included texts (to the right) apart from "
               "the rest of the corpus, the vertical one is the texts' largest spread beside it. Exclude texts "
               "to make the first axis also separate them.")


@st.cache_resource(max_entries=4, show_spinner=False)
def figure(corpus_name: str, stamp: str, included: tuple, excluded: tuple, sketched: str) -> plots.Scatter:
    """The figure of one group state: reruns (a selection event is one) reuse it. A resource, not
    data: an unpickled copy serialises differently, and a changed spec clears the selection."""
    xy = coordinates(corpus_name, stamp, included, excluded, sketched)
    labels = np.zeros(len(xy), dtype=np.int8)
    labels[list(included)], labels[list(excluded)] = INCLUDED, EXCLUDED
    return plots.scatter(xy, labels, resources.corpus(corpus_name).frame["text"], hover_sample=HOVER_SAMPLE,
                         raster_from=RASTER_FROM, axes=axis_titles(len(excluded)))


PREVIEW_HOVER_SAMPLE = min(HOVER_SAMPLE, PREVIEW_HOVER)


def preview(corpus_name: str, stamp: str, included: tuple, excluded: tuple, sketched: str
            ) -> tuple[plots.Scatter, int]:
    """A first look on the axes of the full scatter; shown once per group state, so not cached."""
    sc, rows = preview_scatter(space(corpus_name, sketched),
                               directions(corpus_name, stamp, included, excluded, sketched), included, excluded,
                               resources.corpus(corpus_name).frame["text"], PREVIEW_SHARE,
                               hover_sample=PREVIEW_HOVER_SAMPLE, raster_from=RASTER_FROM,
                               axes=axis_titles(len(excluded)))
    return sc, len(rows)


def cold(corpus_name: str) -> bool:
    """Whether most of the corpus's vector store is out of the page cache (never for an in-memory matrix)."""
    share = vectorstore.resident_share(resources.search_context(corpus_name).vectors)
    return share is not None and share < PREVIEW_BELOW


@st.cache_resource(show_spinner=False)
def _drawn() -> set:
    """Group states whose full scatter this server has made (they need no preview again)."""
    return set()


sketch, sketch_problem, sketch_tag = resources.scatter_sketch(name)
if sketch_problem:
    st.warning(f"The corpus's sketch for the scatter cannot be used ({md(sketch_problem)}), so every text's full "
               "vector is projected instead (slower where the corpus is large and not yet read from disk). "
               f"`python -m precompute.sketch --corpus {name} --force` makes it again.")
key = (name, str(resources.stamp(name)), tuple(inc.tolist()), tuple(exc.tolist()), sketch_tag)
drawn = _drawn()
slot = st.empty()
# a sketch is read in ~1 s even from a cold disk (a twelfth of the store): no preview before it
if sketch is None and corpus.n >= PREVIEW_FROM and key not in drawn and cold(name):
    with slot.container():
        with st.spinner("A first look at the corpus…"):
            first, shown = preview(*key)
        st.caption(f"A first look from {shown:,} of {corpus.n:,} texts (blocks spread evenly over the corpus; "
                   f"{PREVIEW_HOVER_SAMPLE:,} of them with their text on hover). "
                   "The full scatter, where a lasso selects every text, is being computed and replaces it.")
        st.plotly_chart(first.figure, width="stretch", key="scatter_preview", theme=None,
                        config={"plotGlPixelRatio": 1})
sc = figure(*key)
if len(drawn) > 256:  # a memory of recent states, not a log
    drawn.clear()
drawn.add(key)
slot.empty()
if sketch is not None:
    st.caption(f"Drawn from the corpus's sketch: each text's place on its vectors' {sketch.shape[1]} main "
               "directions, made at import. With a few dozen labelled texts the discriminant sets a topic apart "
               "better there than on the full vectors, and ten million texts are projected in seconds.")
if sc.raster is None:
    st.caption(f"All {corpus.n:,} texts: green included, red excluded, yellow unlabelled. Hover shows the text "
               f"of {sc.hover_rows:,} texts: the labelled ones and a sample of up to {HOVER_SAMPLE:,} unlabelled "
               "ones (the rest are drawn without text, to keep the page light at 300k texts). Drag a lasso (or "
               "pick box select in the chart's toolbar) to select texts, then include or exclude them.")
else:
    st.caption(f"All {corpus.n:,} texts: the unlabelled ones as a density (darker: more texts), a sample of "
               f"{HOVER_SAMPLE:,} of them as yellow points with their text on hover, green included, red "
               "excluded. A lasso or box selects every text inside it, drawn as a point or not.")
# theme=None (our template is in the figure) and WebGL at 1x pixel ratio (Plotly's default is 2x):
# together about 1.5 s less to draw 300k points where WebGL has no GPU (bench/RESULTS.md).
event = st.plotly_chart(sc.figure, width="stretch", key="scatter", on_select="rerun", theme=None,
                        selection_mode=("box", "lasso"), config={"plotGlPixelRatio": 1})
selection = (event or {}).get("selection", {})
picked = plots.selected_rows(sc, selection.get("points", []), selection)


def on_bulk(rows, label: int) -> None:
    step = session.set_labels(rows, label, keep_explicit=not st.session_state.get("sc_overturn", False))
    st.session_state["sc_msg"] = annotate.bulk_message(step, label)


def on_undo() -> None:
    st.session_state["sc_msg"] = group.undo()


a, b, c, d = st.columns([2, 2, 1, 3])
a.button(f"Include selected ({len(picked):,})", disabled=not len(picked), key="sc_inc", width="stretch",
         on_click=on_bulk, args=(picked, INCLUDED))
b.button(f"Exclude selected ({len(picked):,})", disabled=not len(picked), key="sc_exc", width="stretch",
         on_click=on_bulk, args=(picked, EXCLUDED))
c.button("Undo", disabled=not session.history, key="sc_undo", on_click=on_undo, width="stretch")
d.checkbox("Also overturn my own labels", key="sc_overturn",
           help="Off: texts you labelled yourself keep their label; only the others change.")
if "sc_msg" in st.session_state:
    st.info(st.session_state.pop("sc_msg"))
drafts.autosave(name, corpus, session)
if len(picked):
    st.dataframe(corpus.frame.iloc[picked[:200]][["id", "text"]], hide_index=True, width="stretch")
