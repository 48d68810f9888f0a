"""LDA scatter: the whole corpus projected to 2-D by a discriminant fitted on the current group, or on the
corpus's own topics (a map before any group). Select points (box or lasso) to include or exclude them."""

from __future__ import annotations

import streamlit as st

from core import annotate, plots, projection
from core.session import EXCLUDED, INCLUDED
from ui import drafts, group, navigation, resources, scatter
from ui.text import md, quoted

name, corpus = navigation.start_page("LDA scatter", "✨")
session = group.session()
group.counters(session)
st.title("LDA scatter")

BUILT = "The group being built"
saved = resources.group_names(name)
shown_group = st.selectbox("Group", [BUILT, *saved], key="sc_group", disabled=not saved,
                           help="The group being built (a lasso adds to it), or a saved group to look at (read-only "
                                "here: open it in Annotate to change it).")
editable = shown_group == BUILT
inc, exc = (session.included, session.excluded) if editable else resources.saved_group_labels(name, shown_group)
VIEWS = {"group": "Set the group apart", "topics": "The corpus's topics"}
if "sc_view" not in st.session_state:  # set once on arriving: a lasso's first include keeps the map in view
    st.session_state["sc_view"] = "group" if len(inc) else "topics"
view = st.segmented_control(
    "Axes", list(VIEWS), format_func=VIEWS.get, key="sc_view",
    help="Set the group apart: a discriminant of the group being built (its included texts, its excluded ones, "
         "the rest). The corpus's topics: a discriminant of the topics K-Means finds among a sample of the corpus, "
         "the same map whatever is labelled, the group's texts drawn on it.") or ("group" if len(inc) else "topics")


def on_undo(redo: bool = False) -> None:
    st.session_state["sc_msg"] = group.redo() if redo else group.undo()


def undo_buttons(where) -> None:
    where.button("Undo", disabled=not session.history, key="sc_undo", on_click=on_undo)
    where.button("Redo", disabled=not session.undone, key="sc_redo", on_click=on_undo, args=(True,))


if view == "topics" and corpus.n < projection.MAP_FROM:
    st.info(f"A map of the corpus's topics needs at least {projection.MAP_FROM} texts; this corpus has {corpus.n:,}. "
            "Set the group apart instead (above; it needs an included text).")
    st.stop()
if view == "group" and len(inc) < 1:
    st.info(f"The scatter needs at least 1 included text in the group being built (now none, {len(exc):,} excluded). "
            "Build the group on the Annotate page: a keyword search brings its hits in as included. Or look at "
            "the corpus's topics (above) and select texts there." if editable else
            f"The saved group {quoted(shown_group)} has no included text to set apart: look at it on the corpus's "
            "topics (above).")
    if editable:
        if session.history or session.undone:  # a lasso that excluded every included text: one Undo away, here
            undo_buttons(st.container(horizontal=True))
            if "sc_msg" in st.session_state:
                st.info(st.session_state.pop("sc_msg"))
        navigation.link("Annotate", "Build the group on the Annotate page")
    st.stop()
if view == "topics":
    st.caption(f"A map of the whole corpus: its axes set apart the topics that K-Means finds among "
               f"{min(corpus.n, projection.TOPIC_SAMPLE):,} of its texts (up to {projection.TOPICS}), so texts on "
               "one subject lie together. The largest topics are named by their key lemmas at their centre (a name "
               "that would cover another is left out). Hover to read the texts; a lasso around a clump includes or "
               "excludes it.")
elif len(exc) < 1:
    st.caption("Nothing is excluded yet: the horizontal axis sets the included texts (to the right) apart from "
               "the rest of the corpus, the vertical one is the texts' largest spread beside it. Exclude texts "
               "to make the first axis also separate them.")

sketch, sketch_problem, sketch_tag = resources.scatter_sketch(name)
if sketch_problem:
    st.warning(f"The corpus's sketch for the scatter cannot be used ({md(sketch_problem)}), so every text's full "
               "vector is projected instead (slower where the corpus is large and not yet read from disk). "
               f"`python -m precompute.sketch --corpus {name} --force` makes it again.")
key = (name, str(resources.stamp(name)), tuple(inc.tolist()), tuple(exc.tolist()), view, sketch_tag)
slot = st.empty()
if scatter.needs_preview(key, corpus.n):
    with slot.container():
        with st.spinner("A first look at the corpus…"):
            first, shown = scatter.preview(*key)
        st.caption(f"A first look from {shown:,} of {corpus.n:,} texts (blocks spread evenly over the corpus; "
                   f"{scatter.preview_hover_sample():,} of them with their text on hover). "
                   "The full scatter, where a lasso selects every text, is being computed and replaces it.")
        st.plotly_chart(first.figure, width="stretch", key="scatter_preview", theme=None,
                        config={"plotGlPixelRatio": 1})
with st.spinner(f"Drawing all {corpus.n:,} texts" + (", the corpus's topics found and named…" if view == "topics"
                                                     else " on the axes that set the group apart…")):
    sc = scatter.figure(*key)  # a second on a new server for a small corpus; nothing showed meanwhile
scatter.drawn(key)
slot.empty()
if sketch is not None:
    st.caption(f"Drawn from the corpus's sketch: each text's place on its vectors' {sketch.shape[1]} main "
               "directions, made at import. With a few dozen labelled texts the discriminant sets a topic apart "
               "better there than on the full vectors, and ten million texts are projected in seconds.")
if sc.raster is None:
    hover = ("Hover shows each one's text." if sc.hover_rows >= corpus.n else  # a small corpus: every text
             f"Hover shows the text of {sc.hover_rows:,} texts: the labelled ones and a sample of up to "
             f"{scatter.hover_sample():,} unlabelled ones (the rest are drawn without text, to keep the page light "
             "at 300k texts).")
    st.caption(f"All {corpus.n:,} texts: green included, red excluded, yellow unlabelled. {hover} Drag a lasso (or "
               "pick box select in the chart's toolbar) to select texts"
               + (", then include or exclude them." if editable else " and list them below."))
else:
    st.caption(f"All {corpus.n:,} texts: the unlabelled ones as a density (darker: more texts), a sample of "
               f"{scatter.hover_sample():,} of them as yellow points with their text on hover, green included, red "
               "excluded. A lasso or box selects every text inside it, drawn as a point or not.")
# theme=None (our template is in the figure) and WebGL at 1x pixel ratio (Plotly's default is 2x):
# together about 1.5 s less to draw 300k points where WebGL has no GPU (bench/RESULTS.md).
event = st.plotly_chart(sc.figure, width="stretch", key="scatter", on_select="rerun", theme=None,
                        selection_mode=("box", "lasso"), config={"plotGlPixelRatio": 1})
selection = (event or {}).get("selection", {})
picked = plots.selected_rows(sc, selection.get("points", []), selection)


def on_bulk(rows, label: int) -> None:
    step = annotate.label(resources.copies_of(name), session, rows, label,
                          keep_explicit=not st.session_state.get("sc_overturn", False))
    st.session_state["sc_msg"] = annotate.bulk_message(step, label)


if not editable:
    st.caption(f"The saved group {quoted(shown_group)}, read-only here: open it in Annotate (the sidebar's *Open a "
               "saved group*, or the Groups page) to change it, or pick the group being built to select texts.")
    if len(picked):
        st.dataframe(corpus.frame.iloc[picked[:200]][["id", "text"]], hide_index=True, width="stretch")
    st.stop()
row = st.container(horizontal=True, vertical_alignment="center")  # wraps in a narrow window, no name cut short
row.button(f"Include selected ({len(picked):,})", disabled=not len(picked), key="sc_inc", on_click=on_bulk,
           args=(picked, INCLUDED))
row.button(f"Exclude selected ({len(picked):,})", disabled=not len(picked), key="sc_exc", on_click=on_bulk,
           args=(picked, EXCLUDED))
undo_buttons(row)
row.checkbox("Also overturn my own labels", key="sc_overturn",
           help="Off: texts you labelled yourself keep their label; only the others change.")
if "sc_msg" in st.session_state:
    st.info(st.session_state.pop("sc_msg"))
drafts.autosave(name, corpus, session)
if len(picked):
    st.dataframe(corpus.frame.iloc[picked[:200]][["id", "text"]], hide_index=True, width="stretch")
