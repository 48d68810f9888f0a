"""The Annotate page's offer, in a corpus whose keyword index was built by an older version (it folds texts
otherwise than the in-memory search: core.search.textindex.EDITION), to build it again here, with a progress bar."""

from __future__ import annotations

import streamlit as st

from core.corpus import Corpus, CorpusError, reindex_keywords
from ui.text import md

SPEED = 25_000  # texts a second, two cores (bench/RESULTS.md: 1M in 38-48 s)


def draw(name: str, corpus: Corpus) -> None:
    if not corpus.keyword_index_outdated:
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    minutes = max(1, round(corpus.n / SPEED / 60))
    row.caption(f"This corpus's keyword index was built by an older version: a phrase typed across a Windows line "
                f"break is missed, and a short word inside a shortened link's code (t.co/...) found. Build it again "
                f"once: {corpus.n:,} texts, about {minutes} minute{'s' if minutes > 1 else ''} on two cores; the "
                "others' searches go on meanwhile.")
    if not row.button("Build the keyword index again", key="btn_reindex", width="content",
                      help=f"In a terminal: `python -m precompute.reindex --corpus {name}`"):
        return
    bar = st.progress(0.0, text="Indexing the words for keyword search…")

    def progress(done: int, total: int, info: dict) -> None:
        if total:
            stage = md(info.get("stage", "indexing").capitalize())
            bar.progress(min(done / total, 1.0), text=f"{stage}: {done:,} of {total:,}")

    try:
        seconds = reindex_keywords(corpus, progress=progress)
    except (OSError, CorpusError) as exc:  # no room, a folder that cannot be written, another build: the old stays
        bar.empty()
        st.error(f"The keyword index could not be built again (the old one stays): {md(exc)}")
        return
    st.session_state["ann_msg"] = ("success", "The keyword index was built again" + (
        f" in {seconds:.0f} s" if seconds is not None else " meanwhile") + ": a phrase across a line break is found, "
        "and links' codes are not searched.")
    st.rerun()
