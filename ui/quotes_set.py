"""The Annotate page's offer, in a corpus with quotes, to read each quote with what it quotes in the semantic
searches (the embedding set ``quotes``, core/quoted.py): made here with a progress bar, then picked."""

from __future__ import annotations

import streamlit as st

from core import embedsets, quoted
from core.corpus import Corpus
from ui import keyword_form, picker, resources
from ui.text import md


def draw(name: str, corpus: Corpus) -> None:
    if not keyword_form.has_quotes(corpus) or resources.embedding_set(name) == quoted.SET:
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    if quoted.SET in {s.name for s in embedsets.listing(corpus)}:
        row.caption("COS, LDA, NN1 and NN2 read each quote's own words only (Suggest's words read what it quotes "
                    "too): pick **quotes** as the *Embedding set* in the sidebar to read each with what it quotes.")
        return
    if quoted.made_before(corpus):  # for an earlier import of the corpus: its quoted tweets' vectors kept
        row.caption("The embedding set quotes was made for an earlier import of this corpus: make it again for this "
                    "one (only the tweets quoted since are embedded).")
    else:
        row.caption("COS, LDA, NN1 and NN2 read each quote's own words only (‘Přesně tak.’ is far from the tweet "
                    "it quotes; Suggest's words read what it quotes too): read each with what it quotes, once for "
                    "this corpus.")
    if not row.button("Read quotes with what they quote", key="btn_quotes_set", width="content",
                      help="Embeds the tweets the quotes quote with the corpus's own model and moves each quote's "
                           "vector towards its quoted tweet's, in an embedding set of its own (quotes); the import's "
                           f"vectors stay as they are. In a terminal: `python -m precompute.quotes --corpus {name}`"):
        return
    bar = st.progress(0.0, text="Embedding the tweets the quotes quote…")

    def progress(done: int, total: int, info: dict) -> None:
        if total:
            bar.progress(min(done / total, 1.0), text=f"Embedding the tweets the quotes quote: {done:,} of {total:,}")

    try:
        made = quoted.build(corpus, progress=progress)
    except ValueError as exc:  # no quotes with words, no model to embed them with
        bar.empty()
        st.error(md(exc))
        return
    st.session_state[picker.NEXT_SET] = made.name  # picked at the rerun
    n, kept = made.manifest["quotes"], made.manifest["quoted_tweets"] - made.manifest["embedded"]
    again = (f" ({made.manifest['embedded']:,} quoted {'tweet' if made.manifest['embedded'] == 1 else 'tweets'} "
             f"embedded now, {kept:,} kept from the set made before)") if kept else ""
    st.session_state["ann_msg"] = ("success", f"{n:,} {'quote is' if n == 1 else 'quotes are'} now read with what "
                                              f"{'it quotes' if n == 1 else 'they quote'}{again}: the semantic "
                                              "searches use the embedding set quotes (sidebar).")
    st.rerun()
