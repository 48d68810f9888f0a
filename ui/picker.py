"""Which corpus (and embedding set) a page works on: the sidebar's pickers, the URL's ?corpus=, new
corpora noticed while a page is open, and the stop when there is none or it is broken."""

from __future__ import annotations

import streamlit as st

from core import embedsets
from core.corpus import Corpus, CorpusError, list_corpora
from ui.text import md, quoted
from ui import resources

NEXT_SET = "embedding_set_next"  # the set to pick at the next run, before the selector is drawn
EXPORT_FORMAT = "kept:export_format"  # the export format last chosen, on Annotate or Groups: offered on both


def pick_next_run(widget_key: str, value) -> None:
    """Show ``value`` in the picker ``widget_key`` on the next run (after ``st.rerun()``), when it is one of
    the picker's options then. Written under the picker's own key in a run that draws no picker, the value
    may be lost: the browser dropped a DAC model trained on its page after a long training."""
    st.session_state[f"pick_next:{widget_key}"] = value


def apply_pick(widget_key: str, options) -> None:
    """Before the picker ``widget_key`` is drawn: put the value :func:`pick_next_run` left, if it is an option."""
    pending = st.session_state.pop(f"pick_next:{widget_key}", None)
    if pending is not None and pending in options:
        st.session_state[widget_key] = pending


def kept(widget, *args, key: str, valid=None, kept_as: str | None = None, **kwargs):
    """Draw a page's widget, ``widget(*args, key=key, **kwargs)`` (``st.checkbox``, ``column.number_input``, ...), so
    that it comes back as it was left. Streamlit drops a widget's state when a run draws another page (or the same
    page without that widget): a clustering or group picked, a keyword typed, a bin chosen, came back at their defaults
    after a visit elsewhere. The value is kept under a key of its own (``kept_as``: one that pickers of several pages
    share) and put back when the widget is drawn again, while ``valid(value)`` says it still fits (an option still
    offered; not needed where the options and bounds are fixed: the value kept came from the same widget)."""
    kept = kept_as or f"kept:{key}"
    ok = valid or (lambda _value: True)
    if (key not in st.session_state or not ok(st.session_state[key])) and kept in st.session_state \
            and ok(st.session_state[kept]):
        st.session_state[key] = st.session_state[kept]
    value = st.session_state[kept] = widget(*args, key=key, **kwargs)
    return value


def selectbox_kept(label: str, options, key: str, kept_as: str | None = None, **kwargs):
    """A picker that comes back as it was left (:func:`kept`), while its value is still one of ``options``."""
    options = list(options)
    return kept(st.selectbox, label, options, key=key, valid=options.__contains__, kept_as=kept_as, **kwargs)


def _on_pick() -> None:
    st.session_state["corpus"] = st.session_state["corpus_picker"]
    st.session_state.pop("embedding_set", None)  # sets belong to one corpus
    st.session_state.pop("session", None)  # labels refer to rows of one corpus


@st.fragment(run_every=10)
def _watch_corpora() -> None:
    """Every 10 s: when a corpus appeared or went (an import on the command line), rerun the page so the
    picker shows it (it showed only after the next page change). The check is a folder listing."""
    if tuple(list_corpora()) != st.session_state.get("known_corpora"):
        st.rerun(scope="app")


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
    st.session_state["known_corpora"] = tuple(names)
    _watch_corpora()
    if asked != wanted:
        st.query_params["corpus"] = wanted
    return wanted


def load_or_stop(name: str | None) -> Corpus:
    """The loaded corpus, or a message and st.stop() when there is none (with a link to the import) or it is
    broken."""
    if name is None:
        st.info("No corpus yet. Import one on the home page (or run `python -m precompute.embed`).")
        from ui import navigation  # which imports this module

        navigation.link("Home", "Import a corpus on the home page")
    else:
        try:
            return resources.corpus(name)
        except CorpusError as exc:
            st.error(md(exc))
    st.stop()


def pick_embedding_set(name: str, c: Corpus) -> None:
    """A sidebar selector of the corpus's embedding sets, shown when it has more than the import's."""
    sets = embedsets.listing(c)
    if len(sets) < 2:
        st.session_state["embedding_set"] = embedsets.IMPORT
        return
    names = [s.name for s in sets]
    if (made := st.session_state.pop(NEXT_SET, None)) in names:  # a set a page has just made (ui/quotes_set.py)
        st.session_state["embedding_set"] = made
    if st.session_state.get("embedding_set") not in names:
        st.session_state["embedding_set"] = embedsets.IMPORT
    by_name = {s.name: s for s in sets}
    st.sidebar.selectbox("Embedding set", names, key="embedding_set", format_func=lambda v: by_name[v].describe(),
                         help="The vectors every semantic search, scatter and comparison uses: the import's, or "
                              "one adapted to this corpus (python -m precompute.cluster --method clusterbert: on a GPU "
                              "the best adapted set measured; see the README)")
