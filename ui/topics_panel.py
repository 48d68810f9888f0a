"""The Topics page's parts: the "Cluster here" form (K-Means, DEC, or K-Means with the k a DAC model chooses, with
key lemmas, run from the browser with a progress bar; the work itself is core.cluster.jobs.cluster_corpus, the same
as the command line's), the groups beside a clustering, and a cluster's texts brought into the group being
built."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import annotate, export
from core.cluster import REGISTRY, store
from core.cluster.evaluate import group_in_clusters
from core.cluster.jobs import cluster_corpus, terms
from core.cluster.topics import outcome_note, suggested_k, with_group
from core.corpus import Corpus
from core.embed import pick_device
from core.progress import Clock, duration
from core.session import EXCLUDED, INCLUDED, UNLABELLED
from ui import group, navigation, picker, resources
from ui.text import md, quoted

# Key lemmas read every text into memory; above this many texts (a memory-mapped corpus) the page leaves
# them to the command line, which a user can run on a bigger machine or at night.
TERMS_UP_TO = 1_000_000
# DEC trains an autoencoder over every text held in memory (float32): above this many, the command line
DEC_UP_TO = 1_000_000
# K-Means with the number of clusters a DAC model chooses (issue 31): the model's bags and K-Means's 13
# candidate clusterings of every text, here up to this many texts; above it, the command line
DAC_UP_TO = 200_000
METHODS = ("kmeans", "dec", "dac")  # registry keys; their labels are the registry's, DAC's below
LABELS = {"dac": "DAC: K-Means, k chosen by a model"}
DAC_HELP = ("DAC: K-Means at k = 2 to 40, each judged by a DAC model of this corpus (trained on the DAC page): "
            "does a cluster's anchor claim its own texts and not its nearest cluster's? The best-judged k is "
            "kept; the box k is not used. It is as good as its model: with a model trained on labelled classes "
            "(the DAC page's labels or groups stage) it clustered better than K-Means with the silhouette's k on "
            "three of the four labelled benchmarks and level on the fourth (three seeds, bench/RESULTS.md); with "
            "a model trained without labels (pretrain) it was worse on two of the four, with one trained on other "
            "corpora better on two and worse on two. Minutes for tens of thousands of texts.")
METHOD_HELP = ("K-Means: seconds to minutes. DEC: K-Means, then an autoencoder and its clusters trained together "
               "to sharpen them; on the four labelled benchmarks (whole corpora, three seeds, bench/RESULTS.md) it "
               "was ahead of K-Means in NMI and accuracy on three and level on the fourth. It stops sharpening before "
               "any cluster is left without texts, so you get the k you asked for (at this form's first guess of k the "
               "paper's loop left 1 to 33 clusters empty on five labelled corpora). On two CPU cores about 13 s "
               "for the 2,400-text demo, 30 s for 100,000 synthetic texts (it stops once assignments settle).")


# The topic table's columns as an analyst reads them (the stored names stay: filters and files use them),
# c-TF-IDF's lemmas first: the rule's are empty for clusters where no lemma is used 10+ times
TABLE_ORDER = ("cluster", "size", "in_group", "group_share", "ctfidf_terms", "rule_terms", "frequent_words", "forms",
               "languages", "mean_len", "sample_text")
TABLE_COLUMNS = {
    "mean_len": st.column_config.NumberColumn("mean length", help="Mean characters per text of the cluster"),
    "in_group": st.column_config.NumberColumn(
        "in the group", help="The chosen group's included texts in this cluster"),
    "group_share": st.column_config.ProgressColumn(
        "of it in the group", format="percent", min_value=0.0, max_value=1.0,
        help="The share of the cluster's texts that are in the chosen group: a cluster mostly in it, but "
        "not wholly, may hold texts of the topic the group does not have yet"),
    "rule_terms": st.column_config.TextColumn(
        "key lemmas (rule)", help="The original rule: lemmas used 10+ times in the cluster that are not among the "
        "corpus's 300 most frequent nor function words. Empty where no lemma is used that often: read c-TF-IDF's."),
    "ctfidf_terms": st.column_config.TextColumn(
        "key lemmas (c-TF-IDF)", help="The cluster's most distinctive lemmas: frequent in it, rare in the corpus "
        "(class-based TF-IDF, as BERTopic), function words of the corpus's language, of English and of the "
        "cluster's other language left out. Each is written in at least 3 of the cluster's texts, so a cluster of "
        "links and emoji, or of a few texts in another language, may have none: read its most used words and "
        "sample text then"),
    "frequent_words": st.column_config.TextColumn(
        "most used words", help="The cluster's most used lemmas, the corpus's common ones included; the lemma "
        "filter searches them too"),
    "forms": st.column_config.TextColumn("word forms", help="The word forms counted under each key lemma"),
    "languages": st.column_config.TextColumn(
        "other language", help="Another language much of the cluster is written in (ISO code, found by its "
        "function words); those function words are left out of the cluster's lemmas too"),
    "sample_text": st.column_config.TextColumn("sample text", width="large"),
}


def cluster_form(name: str, corpus: Corpus) -> None:
    """Method (K-Means, or DEC up to DEC_UP_TO texts), k (a first guess from the corpus size), Run; a stored
    clustering of the same method and k is replaced only when the user ticks so. On success the new
    clustering is picked and the page reruns."""
    top = max(2, min(corpus.n - 1, 12_000))
    trained = resources.dac_models_on_set(name) if corpus.n <= DAC_UP_TO else []
    methods = [m for m in METHODS if (m != "dec" or corpus.n <= DEC_UP_TO) and (m != "dac" or trained)]
    with st.form("tp_cluster"):
        c = st.columns([1, 1, 2])
        method = c[0].selectbox("Method", methods, format_func=lambda m: LABELS.get(m, REGISTRY[m].label),
                                key="tp_method", help=METHOD_HELP + (" " + DAC_HELP if trained else ""))
        k = int(c[1].number_input("Clusters (k)", 2, top, min(suggested_k(corpus.n), top),
                                  help=f"A first guess for {corpus.n:,} texts is {suggested_k(corpus.n):,} "
                                       "(about the square root of half the number of texts). More clusters: "
                                       "smaller, sharper topics. DAC chooses its own."))
        model = (c[2].selectbox("DAC model (for DAC)", trained, key="tp_dac_model",
                                help="A model trained on the DAC page on the embedding set in use; the newest "
                                     "first.") if trained else None)
        # on a line of its own: in the row's last column a window under 1,200 px wide cut it to "...of the same"
        replace = st.checkbox("Replace a stored clustering of the same method and k", key="tp_replace",
                              help="DAC's choice of k always replaces a stored DAC clustering of the k it finds.")
        go = st.form_submit_button("Run", type="primary")
    big = corpus.n > TERMS_UP_TO
    st.caption(("Above a million texts K-Means is fitted on a sample of a million and every text assigned "
                "(about 3 minutes for 10 million texts and k = 1,000 on two cores); key lemmas are then "
                f"computed on the command line: `python -m precompute.keyterms --corpus {name} --clustering "
                "kmeans-k<k>`. DEC, IDEC, encoder adaptation and DAC run on the command line.") if big else
               "Key lemmas are computed with it. Other methods (IDEC, encoder adaptation, DAC's own clusterings) run "
               "on the command line: they train for minutes to hours. The DAC choice of k appears here once the "
               "corpus has a DAC model (the DAC page trains one).")
    if not go:
        return
    label = REGISTRY[method].label
    on_set = resources.embedding_set(name)
    tag = store.set_tag(on_set)  # as the command line: never replaces the import's clustering
    params = {}
    if method == "dac":  # the model chooses k; stored under the k it found (dac-k12), as the command line does
        k, params = None, {"model": model, "procedure": "choose-k"}
    stem = store.stem_of(method, k, tag)
    # DAC's k is known only once it has run (stored as dac-k<found>): it replaces a DAC clustering of that k
    if k is not None and not replace and store.current(name, stem, store.generation_of(corpus)):
        st.warning(f"`{stem}` is already stored: pick it under Clustering, or tick *Replace* to compute it again.")
        return
    bar, clock = st.progress(0.0, text=f"Starting {label}…"), Clock()

    def progress(step: int, total: int, info: dict) -> None:
        bar.progress(min(1.0, step / max(total, 1)),
                     text=f"{label}, step {step:,} of {total:,}; {clock.line(step, total)}")

    try:
        saved = cluster_corpus(corpus, method, k, device=pick_device("auto"), progress=progress, tag=tag,
                               embedding_set=on_set, lang=None, params=params)
    except (ValueError, MemoryError) as exc:
        bar.empty()
        st.error(f"{label} {'with its model ' + md(model) if k is None else f'with k = {k:,}'} did not run: {md(exc)}")
        return
    k = saved.k
    lemmas = ""
    if not big:
        bar.progress(1.0, text=f"{label} done in {duration(clock.elapsed)}; now the key lemmas of its "
                               f"{k:,} clusters…")
        try:
            terms(corpus, saved.stem)
            lemmas = ", with its key lemmas"
        except (ValueError, MemoryError) as exc:  # the clustering is stored all the same
            lemmas = (f"; its key lemmas failed ({md(exc)}): `python -m precompute.keyterms --corpus {name} "
                      f"--clustering {saved.stem}` makes them")
    picker.pick_next_run("tp_k", saved.stem)
    chose = f" (k chosen by the model `{model}`)" if method == "dac" else ""
    note = outcome_note(saved.meta)
    st.session_state["tp_done"] = (f"{label} into {k:,} clusters{chose} stored as `{saved.stem}` in "
                                   f"{duration(clock.elapsed)}{lemmas}." + (f" Note: {note}." if note else ""))
    st.rerun()


def lemmas_to_make(name: str, corpus: Corpus, stem: str, outdated: bool = False) -> None:
    """A stored clustering without key lemmas (made on the command line with them turned off, or by an older
    version), or with key lemmas made with older lists or ranking (``outdated``): say so, and up to
    TERMS_UP_TO texts compute them here with a button (the command line's work, core.cluster.jobs.terms); above,
    give the command. Outdated lemmas stay shown until new ones are stored."""
    command = f"`python -m precompute.keyterms --corpus {name} --clustering {stem}`"
    state = ("These key lemmas were computed the older way: they could name words such as English “after” or "
             "“their”, Spanish “que” in a cluster written in Spanish, a word written in just one of the "
             "cluster's texts, or pieces of words (“th” of “4th”, “knee’” beside “knee”), and miss topic words "
             "such as “fire”" if outdated
             else "No key lemmas for this clustering yet")
    if corpus.n > TERMS_UP_TO:
        st.warning(f"{state}: {command} (above {TERMS_UP_TO:,} texts they are computed on the command line).")
        return
    box = st.warning(f"{state}. Compute them{' again' if outdated else ''} here, or in a terminal: {command}")
    if not st.button("Compute key lemmas again" if outdated else "Compute key lemmas", key="tp_terms",
                     help="Lemmatises every text and ranks each cluster's lemmas: seconds for thousands of texts, "
                          "minutes for hundreds of thousands."):
        return
    clock = Clock()
    with st.spinner(f"Key lemmas of {stem}…"):
        try:
            terms(corpus, stem)
        except (ValueError, MemoryError) as exc:  # a ClusteringError too
            box.error(f"Key lemmas of `{stem}` failed: {md(exc)}")
            return
    st.session_state["tp_done"] = f"Key lemmas of `{stem}` computed in {duration(clock.elapsed)}."
    st.rerun()


def label_agreement(name: str, stem: str) -> None:
    """Where the corpus brought a column of classes (an event, a label): how the clustering agrees with it
    (NMI, ARI, accuracy, purity: what `precompute.evaluate --labels-column` prints)."""
    columns = resources.label_columns(name)
    if not columns:
        return
    column = (picker.selectbox_kept("Compare with a column of classes", columns, "tp_label_col") if len(columns) > 1
              else columns[0])
    scores = resources.column_scores(name, stem, column)
    of = f"of a random {resources.CLASS_SCORE_ROWS:,}; " if scores["sampled"] else ""
    st.caption(f"Against the corpus's column {quoted(column)}: {scores['classes']:,} classes over "
               f"{scores['rows']:,} texts ({of}texts without a class left out).")
    nmi, ari, acc, pure = st.columns(4)
    nmi.metric("NMI", f"{scores['nmi']:.3f}", help="Normalised mutual information, 0 to 1: how much knowing a text's "
               "cluster tells of its class. More clusters than classes is not penalised much.")
    ari.metric("ARI", f"{scores['ari']:.3f}", help="Adjusted Rand index: pairs of texts put together or apart "
               "alike by both, 0 for a chance clustering, 1 for the classes themselves.")
    acc.metric("Accuracy", f"{scores['acc']:.1%}", help="The share of texts in the class their cluster is matched "
               "with, one cluster per class (Hungarian matching): with more clusters than classes, the texts of "
               "unmatched clusters count as wrong.")
    pure.metric("Purity", f"{scores['purity']:.1%}", help="The share of texts whose cluster's most common class is "
                "their own: how far each cluster keeps to one class, however many clusters there are (more "
                "clusters make it higher: compare it at equal k).")


NO_GROUP, BUILDING = "(none)", "(the group being built)"
# the saved groups' IOU table (core.cluster.evaluate.group_iou's names) as an analyst reads it
IOU_COLUMNS = {
    "iou": st.column_config.NumberColumn(
        "IOU", format="%.3f", help="Intersection over union of the group's included texts and its best cluster: the "
        "texts in both over the texts in either, 1 where the cluster is the group"),
    "cluster": st.column_config.NumberColumn("best cluster", help="The cluster with the highest IOU with the group"),
    "group_size": st.column_config.NumberColumn("texts in the group", help="The group's included texts"),
    "cluster_size": st.column_config.NumberColumn("texts in the cluster"),
}


def groups_beside(name: str, stem: str, labels, table):
    """The groups beside a clustering: the saved groups' IOU as the original study scored it (each group's best
    cluster), and where one chosen group's texts lie (a saved group's, or the included texts of the group being
    built): the cluster table (returned) gains each cluster's texts of it and their share, for the page to sort by;
    the table unchanged where no group is chosen."""
    groups = resources.saved_group_rows(name)
    if groups:
        iou = resources.saved_groups_in_clustering(name, stem)
        st.metric("IOU with saved groups (best cluster per group, averaged)", f"{iou['iou']:.3f}")
        st.dataframe([{"group": g, **v} for g, v in iou["groups"].items()], hide_index=True, column_config=IOU_COLUMNS,
                     key="tp_iou")
    building = group.session().included
    options = {NO_GROUP: None, **({BUILDING: building} if len(building) else {}), **groups}
    if len(options) == 1:
        return table
    picked = picker.selectbox_kept("Sort the clusters by a group's texts in them", list(options), "tp_group",
                                   help="Which clusters a group's (included) texts lie in, and how much of each "
                                   "cluster is the group: a cluster mostly in the group may hold texts it still lacks")
    if options.get(picked) is None:  # none chosen, or the group being built since emptied
        return table
    spread = (group_in_clusters(options[picked], labels) if picked == BUILDING
              else resources.saved_groups_in_clustering(name, stem, picked))
    cover = spread["cover"]
    title = "The group being built" if picked == BUILDING else quoted(picked)
    st.caption(md(f"{title}: {spread['rows']:,} texts in {spread['clusters']:,} of {len(table):,} clusters; 80% of "
                  f"them lie in {annotate.plural(cover, 'cluster')}. The table below lists the clusters "
                  "holding most of them first."))
    return with_group(table, spread["counts"])


OPEN_CLUSTER = "kept:tp_cluster"  # (clustering, cluster) open in the table, kept when the page is left


def cluster_table(stem: str, shown) -> int | None:
    """The table of clusters (``shown``: filtered and sorted), one row to pick: the cluster picked, or None. The
    cluster open when the page was left is picked again, where it is still in the table (Streamlit drops a table's
    selection with its page, so "Start a group from this cluster" and a look at Annotate closed it); by the cluster's
    number, not its row, as the table's order may have changed."""
    was = st.session_state.get(OPEN_CLUSTER)
    if "tp_table" not in st.session_state and was and was[0] == stem and was[1] is not None:
        at = np.flatnonzero(shown["cluster"].to_numpy() == was[1])
        if len(at):
            st.session_state["tp_table"] = {"selection": {"rows": [int(at[0])], "columns": [], "cells": []}}
    event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key="tp_table", column_config=TABLE_COLUMNS,
                         column_order=[c for c in TABLE_ORDER if c in shown.columns])
    picked = (event or {}).get("selection", {}).get("rows", [])
    cluster = int(shown.iloc[picked[0]]["cluster"]) if picked and picked[0] < len(shown) else None
    st.session_state[OPEN_CLUSTER] = (stem, cluster)
    return cluster


SHOWN_TEXTS = 500  # a cluster's texts in its table; the download holds them all


def cluster_texts(corpus: Corpus, stem: str, cluster: int, rows) -> None:
    """A cluster's texts: the first SHOWN_TEXTS in a table (saying so when there are more), and all of them, with the
    file's other columns, as a CSV made when the button is clicked."""
    first = export.texts_frame(corpus, rows[:SHOWN_TEXTS])  # the download's own rows and columns, the first of them
    st.dataframe(first[[c for c in ("id", "text", "date", "author") if c in first.columns]], hide_index=True,
                 width="stretch", key="tp_texts")
    line = st.container(horizontal=True, vertical_alignment="center")
    if len(rows) > SHOWN_TEXTS:
        line.caption(f"The first {SHOWN_TEXTS:,} of its {len(rows):,} texts, in the corpus's order; the download holds "
                     "them all.")
    line.download_button(f"Download its {annotate.plural(len(rows), 'text')} (CSV)",
                         lambda: export.to_bytes(export.texts_frame(corpus, rows), "csv"), on_click="ignore",
                         file_name=f"{corpus.name}-{stem}-cluster{cluster}.csv", mime="text/csv", key="tp_csv",
                         help="Id, text, date and author, then the file's other columns; no cell runs as a formula "
                              "in a spreadsheet.")


def cluster_into_group(corpus: Corpus, stem: str, cluster: int, rows) -> None:
    """Where a group is being built: how many of a cluster's texts it holds, and a button that brings in the
    others, as a search's hits come in (included, for review on the Annotate page; one Undo takes them out)."""
    session = group.session()
    if not session.labels:
        return
    labels = annotate.labels_of(session, rows)
    new, included, excluded = (int((labels == v).sum()) for v in (UNLABELLED, INCLUDED, EXCLUDED))
    title = quoted(group.meta()["name"]) if group.meta().get("name") else "The group being built"
    st.caption(md(f"{title} has {included:,} of these texts included and {excluded:,} excluded; {new:,} it has not "
                  "labelled."))
    if st.button(f"Bring the {new:,} into the group being built", key="tp_bring", disabled=not new,
                 help="They come in as included, as a search's hits do, those closest to the group's included texts "
                 "first, for you to review on the Annotate page (Last search); Undo there takes them all out."):
        annotate.bring_cluster(session, resources.search_context(corpus.name).index, rows, stem, cluster)
        st.session_state.update(ann_msg=("success", f"Brought {annotate.plural(new, 'text')} of cluster {cluster} in "
                                         "as included: exclude those off the topic."), ann_view="Last search",
                                ann_page=1)
        navigation.go("pages/1_Annotate.py")
