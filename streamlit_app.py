"""Semantic Annotator: home page. Choose a corpus, see its summary, import a new one (or the demo)."""

from __future__ import annotations

import streamlit as st

from ui import access, home, import_form, imports, navigation, picker, resources

st.set_page_config(page_title="Semantic Annotator", page_icon="🔎", layout="wide")
access.gate()
nav = st.sidebar.empty()  # the links first (a stop below keeps them), drawn again at the end in place: they
navigation.navigation(nav.container())  # then carry the corpus and this tab's draft
st.title("Semantic Annotator")
st.caption("Find every text on a topic: keyword searches, then semantic searches that learn from "
           "what you include and exclude.")

name = picker.pick_corpus()
imports.show_result()
if name is None:
    st.info("There is no corpus yet. Import a CSV, TSV, Parquet, JSON or Excel file of texts below "
            "(columns `id`, `text`, and optionally `date`, `author`, or as a Twitter export names them; posts as "
            "Twitter, Mastodon, Bluesky, Telegram or Discord export them; the form offers the file's own), or from a "
            "terminal:\n\n"
            "`python -m precompute.embed tweets.csv --name tweets`")
else:
    home.corpus_summary(name)
import_form.demo_offer(name)
st.divider()
import_form.draw(name)
navigation.navigation(nav.container())
if name is not None:  # drawn: now, while the user reads, what the first key lemmas need
    resources.warm_key_lemmas(name)
