"""The Topics page's "Cluster here" form: K-Means of this corpus with its key lemmas, run from the browser
with a progress bar (the work itself is core.cluster.jobs.cluster_corpus, the same as the command line's)."""

from __future__ import annotations

import streamlit as st

from core.cluster import store
from core.cluster.jobs import cluster_corpus, terms
from core.cluster.topics import suggested_k
from core.corpus import Corpus
from core.embed import pick_device
from core.progress import Clock, duration
from ui import resources
from ui.text import md

# Key lemmas read every text into memory; above this many texts (a memory-mapped corpus) the page leaves
# them to the command line, which a user can run on a bigger machine or at night.
TERMS_UP_TO = 1_000_000


def cluster_form(name: str, corpus: Corpus) -> None:
    """k (a first guess from the corpus size), Run; a stored K-Means of the same k is replaced only when
    the user ticks so. On success the new clustering is picked and the page reruns."""
    top = max(2, min(corpus.n - 1, 12_000))
    with st.form("tp_cluster"):
        c = st.columns([1, 2])
        k = int(c[0].number_input("Clusters (k)", 2, top, min(suggested_k(corpus.n), top),
                                  help=f"A first guess for {corpus.n:,} texts is {suggested_k(corpus.n):,} "
                                       "(about the square root of half the number of texts). More clusters: "
                                       "smaller, sharper topics."))
        replace = c[1].checkbox("Replace a stored K-Means with the same k", key="tp_replace")
        go = st.form_submit_button("Run K-Means", type="primary")
    big = corpus.n > TERMS_UP_TO
    st.caption(("Above a million texts K-Means is fitted on a sample of a million and every text assigned "
                "(about 3 minutes for 10 million texts and k = 1,000 on two cores); key lemmas are then "
                f"computed on the command line: `python -m precompute.keyterms --corpus {name} --clustering "
                "kmeans-k<k>`.") if big else
               "Key lemmas are computed with it. Other methods (DEC, IDEC, encoder adaptation, DAC) run on "
               "the command line: they train for minutes to hours.")
    if not go:
        return
    on_set = resources.embedding_set(name)
    tag = store.set_tag(on_set)  # as the command line: never replaces the import's clustering
    stem = store.stem_of("kmeans", k, tag)
    if not replace and store.current(name, stem, store.generation_of(corpus)):
        st.warning(f"`{stem}` is already stored: pick it under Clustering, or tick *Replace* to compute it again.")
        return
    bar, clock = st.progress(0.0, text="Starting K-Means…"), Clock()

    def progress(step: int, total: int, info: dict) -> None:
        bar.progress(min(1.0, step / max(total, 1)),
                     text=f"K-Means, step {step:,} of {total:,}; {clock.line(step, total)}")

    try:
        saved = cluster_corpus(corpus, "kmeans", k, device=pick_device("auto"), progress=progress, tag=tag,
                               embedding_set=on_set, lang=None)
    except (ValueError, MemoryError) as exc:
        bar.empty()
        st.error(f"K-Means with k = {k:,} did not run: {md(exc)}")
        return
    lemmas = ""
    if not big:
        bar.progress(1.0, text=f"K-Means done in {duration(clock.elapsed)}; now the key lemmas of its "
                               f"{k:,} clusters…")
        try:
            terms(corpus, saved.stem)
            lemmas = ", with its key lemmas"
        except (ValueError, MemoryError) as exc:  # the clustering is stored all the same
            lemmas = (f"; its key lemmas failed ({md(exc)}): `python -m precompute.keyterms --corpus {name} "
                      f"--clustering {saved.stem}` makes them")
    st.session_state["tp_pick"] = saved.stem  # the page picks it before its selectbox is drawn
    st.session_state["tp_done"] = (f"K-Means into {k:,} clusters stored as `{saved.stem}` in "
                                   f"{duration(clock.elapsed)}{lemmas}.")
    st.rerun()
