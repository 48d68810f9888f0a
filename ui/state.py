"""The UI layer's shared pieces: cached corpus resources and per-user state (streamlit only here
and in pages/)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core import paths
from core.corpus import Corpus, CorpusError, list_corpora, load_corpus
from core.export import group_frame, to_bytes
from core.search import SearchContext
from core.embed import pick_device
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WORDS_VERSION, WordIndex
from core.session import Session
from core.store import GroupStore, GroupVersion
from ui.text import md, quoted


def _stamp(name: str) -> float:
    """Changes when a corpus is re-imported, so cached resources are rebuilt."""
    mf = paths.manifest_file(name)
    return mf.stat().st_mtime if mf.exists() else 0.0


@st.cache_resource(show_spinner="Loading corpus…", max_entries=4)
def _corpus(root: str, name: str, stamp: float) -> Corpus:
    return load_corpus(name, Path(root))


@st.cache_resource(show_spinner="Building the search index…", max_entries=4)
def _search_context(root: str, name: str, stamp: float) -> SearchContext:
    c = _corpus(root, name, stamp)
    device = pick_device("auto")
    texts = c.frame["text"].tolist()
    words = WordIndex(texts, c.data_folder / f"words-v{WORDS_VERSION}.npz")
    return SearchContext(VectorIndex(c.embeddings, device=device), KeywordIndex(texts), c.frame,
                         device=device, word_index=words)


@st.cache_resource(max_entries=8)
def _store(path: str) -> GroupStore:
    return GroupStore(path)


def corpus(name: str) -> Corpus:
    return _corpus(str(paths.data_root()), name, _stamp(name))


def search_context(name: str) -> SearchContext:
    return _search_context(str(paths.data_root()), name, _stamp(name))


def store(name: str) -> GroupStore:
    return _store(str(paths.groups_db(name)))


def _on_pick() -> None:
    st.session_state["corpus"] = st.session_state["corpus_picker"]
    st.session_state.pop("session", None)  # labels refer to rows of one corpus


def pick_corpus(sidebar: bool = True) -> str | None:
    """The corpus this page works on: the user's choice, else ?corpus=NAME, else the first.

    Shows a selector (in the sidebar) and keeps the URL in step with it.
    """
    names = list_corpora()
    if not names:
        return None
    asked = st.query_params.get("corpus")
    wanted = st.session_state.get("corpus") or asked
    if wanted not in names:
        if wanted:
            st.warning(f"There is no corpus named {quoted(wanted, 80)}; showing {quoted(names[0])}.")
        wanted = names[0]
    if st.session_state.get("corpus") not in (None, wanted):
        st.session_state.pop("session", None)
    st.session_state["corpus"] = wanted
    st.session_state["corpus_picker"] = wanted
    where = st.sidebar if sidebar else st
    where.selectbox("Corpus", names, key="corpus_picker", on_change=_on_pick)
    if asked != wanted:
        st.query_params["corpus"] = wanted
    return wanted


def load_or_stop(name: str | None) -> Corpus:
    """The loaded corpus, or a message and st.stop() when there is none or it is broken."""
    if name is None:
        st.info("No corpus yet. Import one on the home page (or run `python -m precompute.embed`).")
        st.stop()
    try:
        return corpus(name)
    except CorpusError as exc:
        st.error(md(exc))
        st.stop()


def session() -> Session:
    """The group being built by this user (one per browser session)."""
    if "session" not in st.session_state:
        st.session_state["session"] = Session()
    return st.session_state["session"]


def counters(s: Session, where=None) -> None:
    where = where or st.sidebar
    c = s.counts()
    a, b = where.columns(2)
    a.metric("Included", c["included"])
    b.metric("Excluded", c["excluded"])


def start_page(title: str, icon: str) -> tuple[str, Corpus]:
    """Every page's first lines: page config, the corpus picker, the loaded corpus (or a stop)."""
    st.set_page_config(page_title=title, page_icon=icon, layout="wide")
    name = pick_corpus()
    return name, load_or_stop(name)


@st.cache_data(max_entries=16, show_spinner=False)
def export_bytes(name: str, stamp: float, included: tuple, excluded: tuple, fmt: str) -> bytes:
    """A group's export file, built once per group state and format (not on every rerun)."""
    return to_bytes(group_frame(corpus(name), included, excluded), fmt)


def group_export(name: str, included_ids, excluded_ids, fmt: str) -> bytes:
    return export_bytes(name, _stamp(name), tuple(included_ids), tuple(excluded_ids), fmt)


def open_group(c: Corpus, group: GroupVersion) -> Session:
    """Make a saved group the group being built (one undoable 'open' step)."""
    s = Session.from_labels(c.rows_of(group.included), c.rows_of(group.excluded))
    st.session_state["session"] = s
    st.session_state["save_name"] = group.name
    return s
