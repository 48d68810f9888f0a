"""Topics: browse any stored clustering through its key lemmas, compare two clusterings, start a
group from a cluster."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import paths, plots, timezones
from core.annotate import plural
from core.cluster import REGISTRY, store
from core.cluster.evaluate import agreement, best_matches
from core.cluster.topics import SUGGESTED, filter_clusters, run_summary, sharper_hint, suggested_k
from ui import group, navigation, picker, resources, topics_panel
from ui.text import md

name, corpus = navigation.start_page("Topics", "🧭")
st.title("Topics")
generation = store.generation_of(corpus)
resources.once_per_corpus(store.migrate_legacy, name)  # clusterings of older versions move, once per server process
stored = store.listing(name)
usable = [s for s in stored if not s.stale(generation)]
if len(usable) < len(stored):
    st.caption(f"{len(stored) - len(usable)} clustering(s) computed on an earlier import of this corpus are "
               "hidden: run them again under *Cluster here* (K-Means, DEC, DAC's choice of k) or with "
               "`python -m precompute.cluster ... --force`.")
if "tp_done" in st.session_state:
    st.success(st.session_state.pop("tp_done"))
if not usable:
    # corpus names and stored clusterings' names are checked to hold only [A-Za-z0-9_.-]: safe in code spans
    st.info("No clustering yet. Run one below (*Cluster here*), or in a terminal\n\n"
            f"`python -m precompute.cluster --corpus {name} --method kmeans --k {suggested_k(corpus.n)}`\n\n"
            f"(methods: {', '.join(REGISTRY)}; key lemmas are computed with it).\n\n"
            f"Sharper topics: {sharper_hint(name, corpus.n)}.")
    st.subheader("Cluster here", anchor=False)  # the name the hints above use (an expander once one exists)
    topics_panel.cluster_form(name, corpus)
    st.stop()
with st.expander("Cluster here (K-Means, DEC, DAC's choice of k)"):
    topics_panel.cluster_form(name, corpus)


def loaded(stem: str):
    """(labels, the cluster table, whether key lemmas exist): the labels through the one cache of
    clusterings (resources.clustering_labels), the table through resources.cluster_view."""
    return resources.clustering_labels(name, stem), *resources.cluster_view(name, stem)


@st.cache_data(max_entries=8, show_spinner="Comparing the clusterings…")
def compared(root: str, corpus_name: str, stem: str, other: str, stamps: tuple) -> dict:
    """NMI/ARI of two stored clusterings, once per pair of files rather than on every rerun (the
    expander's body runs even when it is closed)."""
    return agreement(loaded(stem)[0], loaded(other)[0])


by_stem = {s.stem: s for s in usable}
picker.apply_pick("tp_k", by_stem)  # a clustering just made here
chosen = by_stem[picker.selectbox_kept("Clustering", by_stem, "tp_k", format_func=lambda v: by_stem[v].describe())]
try:
    labels, table, lemmas = loaded(chosen.stem)
except store.ClusteringError as exc:
    st.error(md(str(exc)))
    st.stop()
meta = chosen.meta
if lemmas != "current":
    topics_panel.lemmas_to_make(name, corpus, chosen.stem, outdated=lemmas == "outdated")
objective = (f", {meta.get('objective_kind') or 'objective'} {meta['objective']:,.4g}"
             if meta.get("objective") is not None else "")
if not any(s.meta.get("method") == SUGGESTED for s in usable):
    st.caption(f"Sharper topics: {sharper_hint(name, corpus.n)}.")
trained = run_summary(meta)
st.caption(md(f"{trained + ', ' if trained else ''}{meta.get('seconds')} s on {meta.get('device')}, seed "
              f"{meta.get('seed')}{objective}; computed {chosen.created_at[:16].replace('T', ' ')} UTC."))
st.plotly_chart(plots.size_histogram(table["size"].to_numpy()), width="stretch", key="tp_hist")
with st.popover("Delete this clustering"):
    st.caption("Its file and key lemmas are removed; run it again (here or with `python -m precompute.cluster`) "
               "to get it back.")
    if st.button("Delete", key="tp_delete", disabled=not st.checkbox("Yes, delete it", key="tp_sure")):
        store.delete(name, chosen.stem)
        st.session_state.pop("tp_k", None)
        st.rerun()

table = topics_panel.groups_beside(name, chosen.stem, labels, table)
topics_panel.label_agreement(name, chosen.stem)

f1, f2, f3 = st.columns(3)
top = int(table["size"].max())
# the filters come back as they were left after a visit to another page (the size's while it fits this clustering)
size_range = picker.kept(f1.slider, "Cluster size", 1, max(top, 2), (1, max(top, 2)), key="tp_size",
                         valid=lambda v: 1 <= v[0] <= v[1] <= max(top, 2))
min_len = picker.kept(f2.number_input, "Mean text length above", 0, 1000, 0, key="tp_len")
lemma = picker.kept(f3.text_input, "Contains the lemma", key="tp_lemma")
shown = filter_clusters(table, size_range, min_len, lemma).sort_values(
    ["in_group", "size"] if "in_group" in table else "size", ascending=False)
st.caption(f"{len(shown):,} of {len(table):,} clusters. Click a row to see its texts.")
cluster = topics_panel.cluster_table(chosen.stem, shown)

others = [s for s in usable if s.stem != chosen.stem]
with st.expander("Compare with another clustering", expanded=False):
    if not others:
        st.caption("Only one clustering is stored: run another method or k to compare.")
    else:
        other = by_stem[picker.selectbox_kept("Other clustering", [s.stem for s in others], "tp_other",
                                              format_func=lambda v: by_stem[v].describe())]
        other_labels = loaded(other.stem)[0]
        agree = compared(str(paths.data_root()), name, chosen.stem, other.stem,
                         (resources.stamp(name), store.stamp(name, chosen.stem), store.stamp(name, other.stem)))
        a1, a2 = st.columns(2)
        a1.metric("NMI between them", f"{agree['nmi']:.3f}")
        a2.metric("ARI between them", f"{agree['ari']:.3f}")
        if cluster is None:
            st.caption("Pick a cluster in the table to see its best matches in the other clustering.")
        else:
            st.caption(f"Clusters of the other clustering holding most of cluster {cluster}:")
            st.dataframe(best_matches(labels, other_labels, cluster), hide_index=True, key="tp_matches")

if cluster is not None:
    rows = np.flatnonzero(labels == cluster)
    st.subheader(f"Cluster {cluster}: {plural(len(rows), 'text')}")
    if st.button("Start a group from this cluster", type="primary", key="tp_start",
                 help="The group you are building is kept: Undo on the Annotate page brings it back."):
        said = group.switch_group(rows, [], "cluster")
        st.session_state.update(ann_msg=("success", f"Started a group from cluster {cluster}: "
                                         f"{plural(len(rows), 'text')} included.{said}"), ann_view="Included",
                                ann_page=1)
        navigation.go("pages/1_Annotate.py")
    topics_panel.cluster_into_group(corpus, chosen.stem, cluster, rows)
    topics_panel.cluster_texts(corpus, chosen.stem, cluster, rows)
    if corpus.has_dates:
        cols = [c for c in ("date", "author", "text") if c in corpus.frame.columns]
        local = timezones.shown(corpus.frame.iloc[rows][cols], corpus.timezone)
        st.plotly_chart(plots.timeline(local, colours=resources.author_colours(name)).figure, width="stretch",
                        key="tp_timeline")
