"""Topics: browse K-Means clusters through their key lemmas; start a group from a cluster."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import paths, plots
from core.evaluate import group_iou
from core.topics import cluster_table, filter_clusters
from core.clusterings import available, kmeans_file, load_clustering, load_terms, terms_file
from ui import state

name, corpus = state.start_page("Topics", "🧭")
st.title("Topics")

ks = available(name)
if not ks:
    st.info("No clustering yet. In a terminal run\n\n"
            f"`python -m precompute.kmeans --corpus {name} --k 1000`\n\n"
            f"`python -m precompute.keyterms --corpus {name} --k 1000`")
    st.stop()


@st.cache_data(max_entries=4, show_spinner="Loading the clustering…")
def load(root: str, corpus_name: str, k: int, stamps: tuple):
    """Keyed on the clustering's and key terms' files (their mtimes), not only on the corpus: a new
    clustering or new key terms show on the next rerun, no restart needed."""
    labels, _, stats = load_clustering(corpus_name, k)
    terms = load_terms(corpus_name, k)
    return labels, cluster_table(labels, state.corpus(corpus_name).frame["text"].to_numpy(), terms), stats, terms is not None


def files_stamp(k: int) -> tuple:
    files = (kmeans_file(name, k), terms_file(name, k))
    return (state.stamp(name),) + tuple(f.stat().st_mtime_ns if f.exists() else 0 for f in files)


k = st.selectbox("Clustering", ks, format_func=lambda v: f"K-Means, k = {v:,}", key="tp_k")
labels, table, stats, has_terms = load(str(paths.data_root()), name, k, files_stamp(k))
if not has_terms:
    st.warning(f"No key lemmas for k={k} yet: `python -m precompute.keyterms --corpus {name} --k {k}`")
st.caption(f"{stats.get('iterations')} iterations, {stats.get('seconds')} s, on {stats.get('device')}.")
st.plotly_chart(plots.size_histogram(table["size"].to_numpy()), width="stretch", key="tp_hist")

groups = state.saved_group_rows(name)
if groups:
    iou = group_iou(groups, labels)
    st.metric("IOU with saved groups (best cluster per group, averaged)", f"{iou['iou']:.3f}")
    st.dataframe([{"group": g, **v} for g, v in iou["groups"].items()], hide_index=True)

f1, f2, f3 = st.columns(3)
top = int(table["size"].max())
size_range = f1.slider("Cluster size", 1, max(top, 2), (1, max(top, 2)), key="tp_size")
min_len = f2.number_input("Mean text length above", 0, 1000, 0, key="tp_len")
lemma = f3.text_input("Contains the lemma", key="tp_lemma")
shown = filter_clusters(table, size_range, min_len, lemma).sort_values("size", ascending=False)
st.caption(f"{len(shown):,} of {len(table):,} clusters. Click a row to see its texts.")
event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                     key="tp_table", column_config={"sample_text": st.column_config.TextColumn(width="large")})
picked = (event or {}).get("selection", {}).get("rows", [])
if picked:
    cluster = int(shown.iloc[picked[0]]["cluster"])
    rows = np.flatnonzero(labels == cluster)
    st.subheader(f"Cluster {cluster}: {len(rows):,} texts")
    if st.button("Start a group from this cluster", type="primary", key="tp_start",
                 help="The group you are building is kept: Undo on the Annotate page brings it back."):
        said = state.switch_group(rows, [], "cluster")
        st.session_state.update(ann_msg=("success", f"Started a group from cluster {cluster}: {len(rows):,} texts "
                                         f"included.{said}"), ann_view="Included", ann_page=1)
        st.switch_page("pages/1_Annotate.py")
    cols = [c for c in ("id", "text", "date", "author") if c in corpus.frame.columns]
    st.dataframe(corpus.frame.iloc[rows[:500]][cols], hide_index=True, width="stretch")
    if corpus.has_dates:
        cols = [c for c in ("date", "author", "text") if c in corpus.frame.columns]
        st.plotly_chart(plots.timeline(corpus.frame.iloc[rows][cols], colours=state.author_colours(name)).figure,
                        width="stretch", key="tp_timeline")
