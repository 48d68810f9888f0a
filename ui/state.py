"""The UI layer's shared pieces: cached corpus resources and per-user state (streamlit only here
and in pages/)."""

from __future__ import annotations

import dataclasses
import re
import secrets
from dataclasses import asdict
from pathlib import Path

import numpy as np
import streamlit as st

from core import embedsets, paths, plots
from core.corpus import Corpus, CorpusError, list_corpora, load_corpus
from core.export import group_frame, to_bytes
from core.embed import pick_device
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WORDS_VERSION, WordIndex
from core.search import REGISTRY, SearchContext
from core.session import SWITCH, Session
from core.store import GroupStore, GroupVersion
from ui import access
from ui.text import md, quoted


def stamp(name: str) -> float:
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


@st.cache_data(max_entries=8, show_spinner=False)
def _date_range(root: str, name: str, stamp: float):
    d = _corpus(root, name, stamp).frame["date"]
    return d.min().date(), d.max().date()


@st.cache_data(max_entries=8, show_spinner=False)
def _authors(root: str, name: str, stamp: float) -> list[str]:
    return sorted(_corpus(root, name, stamp).frame["author"].dropna().astype(str).unique().tolist())


@st.cache_data(max_entries=8, show_spinner=False)
def _author_colours(root: str, name: str, stamp: float) -> dict[str, str]:
    frame = _corpus(root, name, stamp).frame
    return plots.author_colours(frame["author"]) if "author" in frame.columns else {}


def _key(name: str) -> tuple[str, str, float]:
    """(data root, corpus, stamp): the arguments every cached function of a corpus is keyed on."""
    return str(paths.data_root()), name, stamp(name)


def author_colours(name: str) -> dict[str, str]:
    """One colour per author of the corpus, the same on every page."""
    return _author_colours(*_key(name))


def date_range(name: str):
    """First and last date of the corpus (computed once per import)."""
    return _date_range(*_key(name))


def authors(name: str) -> list[str]:
    """The corpus's authors, sorted (computed once per import)."""
    return _authors(*_key(name))


@st.cache_data(max_entries=8, show_spinner=False)
def _saved_group_rows(root: str, name: str, stamp: float, db_stamp: tuple) -> dict:
    c, s = _corpus(root, name, stamp), _store(str(paths.groups_db(name, Path(root))))
    return {g: c.rows_of(s.load(g).included) for g in s.names()}


def saved_group_rows(name: str) -> dict:
    """Included rows of each saved group (latest versions), read again only when the groups'
    database changes (its file and write-ahead log's mtimes), not on every rerun."""
    db = paths.groups_db(name)
    files = (db, Path(f"{db}-wal"))
    return _saved_group_rows(*_key(name), tuple(f.stat().st_mtime_ns if f.exists() else 0 for f in files))


def _set_stamp(name: str, set_name: str) -> float:
    mf = embedsets.folder(name) / set_name / "manifest.json"
    return mf.stat().st_mtime if set_name != embedsets.IMPORT and mf.exists() else 0.0


def embedding_set(name: str) -> str:
    """The embedding set this user picked for the corpus (default: the import's)."""
    return st.session_state.get("embedding_set") or embedsets.IMPORT


@st.cache_resource(max_entries=4, show_spinner="Loading the embedding set…")
def _corpus_with_set(root: str, name: str, stamp: float, set_name: str, set_stamp: float) -> Corpus:
    return embedsets.with_set(_corpus(root, name, stamp), set_name)


@st.cache_resource(max_entries=4, show_spinner="Building the search index…")
def _search_context_with_set(root: str, name: str, stamp: float, set_name: str, set_stamp: float) -> SearchContext:
    """The import's context with the set's vectors (the keyword and word indexes are shared)."""
    base = _search_context(root, name, stamp)
    c = _corpus_with_set(root, name, stamp, set_name, set_stamp)
    return dataclasses.replace(base, index=VectorIndex(c.embeddings, device=base.device))


@st.cache_data(max_entries=8, show_spinner="Loading the clustering…")
def _clustering_labels(root: str, name: str, stamp: float, stem: str, files: tuple) -> np.ndarray:
    from core.cluster import store as clusterings

    return clusterings.labels_for(_corpus(root, name, stamp), stem)


def clustering_labels(name: str, stem: str) -> np.ndarray:
    """A stored clustering's labels, read again only when its file changes (ClusteringError when it
    does not fit the corpus)."""
    from core.cluster import store as clusterings

    return _clustering_labels(*_key(name), stem, clusterings.stamp(name, stem))


@st.cache_resource(max_entries=64, show_spinner=False)
def _once(fn_name: str, root: str, name: str, stamp: float):
    from importlib import import_module

    module, _, attr = fn_name.rpartition(".")
    return getattr(import_module(module), attr)(name)


def once_per_corpus(fn, name: str):
    """``fn(name)`` run once per server process and import of the corpus (a migration that writes:
    never on every rerun)."""
    return _once(f"{fn.__module__}.{fn.__name__}", *_key(name))


def corpus(name: str) -> Corpus:
    """The loaded corpus, its embeddings those of the set the user picked."""
    set_name = embedding_set(name)
    if set_name == embedsets.IMPORT:
        return _corpus(*_key(name))
    try:
        return _corpus_with_set(*_key(name), set_name, _set_stamp(name, set_name))
    except embedsets.EmbeddingSetError as exc:
        st.warning(md(f"{exc}; using the import's embeddings."))
        st.session_state["embedding_set"] = embedsets.IMPORT
        return _corpus(*_key(name))


def pick_embedding_set(name: str, c: Corpus) -> None:
    """A sidebar selector of the corpus's embedding sets, shown when it has more than the import's."""
    sets = embedsets.listing(c)
    if len(sets) < 2:
        st.session_state["embedding_set"] = embedsets.IMPORT
        return
    names = [s.name for s in sets]
    if st.session_state.get("embedding_set") not in names:
        st.session_state["embedding_set"] = embedsets.IMPORT
    by_name = {s.name: s for s in sets}
    st.sidebar.selectbox("Embedding set", names, key="embedding_set", format_func=lambda v: by_name[v].describe(),
                         help="The vectors every semantic search, scatter and comparison uses: the import's, or "
                              "one adapted to this corpus (python -m precompute.cluster --method clusterbert)")


@st.cache_resource(max_entries=4, show_spinner=False)
def _dac_model(path: str, stamp: tuple, device: str):
    from core.cluster.dac import train as dac_train

    return dac_train.load(Path(path), device)


def picked_model(name: str, model: str | None = None):
    """(the DAC model the user picked for this corpus, None) or (None, why not): nothing picked, the
    file is gone, refused or unreadable, or it belongs to another corpus. Only a model the user picked
    (``dac_model``, the DAC page's picker) is ever loaded: never "the newest file"."""
    from core.cluster.dac import store as dac_store
    from core.cluster.dac.train import ModelError

    wanted = model or st.session_state.get("dac_model")
    if not wanted:
        return None, "no DAC model picked (DAC page)"
    pick = next((m for m in dac_store.listing(name) if m.name == wanted), None)
    if pick is None:
        return None, f"there is no DAC model {quoted(wanted)} for this corpus"
    try:
        trained = _dac_model(str(pick.path), pick.stamp, pick_device("auto"))
    except ModelError as exc:
        return None, md(exc)
    reason = dac_store.mismatch(trained, corpus(name))
    return (None, md(reason)) if reason else (trained, None)


def dac_model(name: str, model: str | None = None):
    """The DAC model the user picked, when it can be used for this corpus; otherwise None."""
    return picked_model(name, model)[0]


@st.cache_data(max_entries=8, show_spinner=False)
def _keyword_example(root: str, name: str, stamp: float) -> str:
    from core.annotate import example_query

    return example_query(_corpus(root, name, stamp).frame["text"].to_numpy())


def keyword_example(name: str) -> str:
    """An example query for the keyword box made of this corpus's own frequent words."""
    return _keyword_example(*_key(name))


def keyword_rows(name: str, query: str, limit: int = 20) -> list[int]:
    """The first ``limit`` rows whose text holds ``query`` (case and diacritics ignored); [] on a
    query the keyword search refuses."""
    from core.search.keyword import KeywordError, find_rows

    try:
        return [int(r) for r in find_rows(search_context(name).keyword_index, query)[:limit]]
    except KeywordError:
        return []


def search_context(name: str) -> SearchContext:
    """The corpus's search context (cached) over the picked embedding set, with the DAC model the
    user picked, if any."""
    set_name = embedding_set(name)
    base = (_search_context(*_key(name)) if set_name == embedsets.IMPORT
            else _search_context_with_set(*_key(name), set_name, _set_stamp(name, set_name)))
    return dataclasses.replace(base, dac=dac_model(name))


def store(name: str) -> GroupStore:
    return _store(str(paths.groups_db(name)))


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


# --- the save form's fields, kept apart from the widgets (which exist on Annotate only) ------
META_KEYS = {"name": "save_name", "annotator": "save_annotator", "notes": "save_notes"}


def meta() -> dict:
    """Name, annotator and notes of the group being built."""
    return st.session_state.setdefault("group_meta", {"name": "", "annotator": "", "notes": ""})


def set_meta(**fields: str) -> None:
    """Change the group's fields and the save form's widgets (call from a callback, or before
    the form is drawn)."""
    m = meta()
    for field, value in fields.items():
        m[field] = value or ""
        st.session_state[META_KEYS[field]] = value or ""


def bind_meta_widgets() -> None:
    """Before drawing the save form: widgets start from the group's fields."""
    for field, key in META_KEYS.items():
        if key not in st.session_state:
            st.session_state[key] = meta()[field]


def read_meta_widgets() -> None:
    """After drawing the save form: what the user typed becomes the group's fields."""
    for field, key in META_KEYS.items():
        meta()[field] = st.session_state.get(key, "") or ""


# --- drafts: the group being built survives a reload or a server restart -------------------
# A tab's draft is named by a token the server makes (kept in the URL, ?draft=..., so a reload finds
# it again). A token in a URL is only taken when the store holds a draft of that token belonging to
# this user and, without sign-in, written by this browser (core.store: claim_draft): a token made up
# by a client, or someone else's, gives nothing. The draft is written a step at a time.
def owner() -> str:
    return access.identity() or "local"


def draft_browser() -> str | None:
    """The browser to bind a draft to when listing or claiming: None (any) for a signed-in user, whose
    drafts follow them from machine to machine; this browser otherwise."""
    return None if access.signed_in() else access.browser_id()


def draft_writer() -> str:
    """This browser session (a tab since its last reload): the one writer of its draft."""
    return st.session_state.setdefault("draft_writer", secrets.token_hex(8))


def draft_token() -> str:
    """This tab's draft token (made by the server on the tab's first change), kept in the URL."""
    token = st.session_state.get("draft_token")
    if not token:
        token = st.session_state["draft_token"] = secrets.token_urlsafe(16)
    if st.query_params.get("draft") != token:
        st.query_params["draft"] = token
    return token


def _restore_from_url(name: str, c: Corpus) -> None:
    """A fresh browser session whose URL names a draft of this user (a reload, a restarted server):
    take the group back, and go on writing that draft."""
    if "session" in st.session_state or "draft_token" in st.session_state:
        return
    asked = st.query_params.get("draft") or ""
    if not re.fullmatch(r"[A-Za-z0-9_-]{8,64}", asked):
        return
    d = store(name).claim_draft(asked, owner(), browser=access.browser_id(), writer=draft_writer(),
                                any_browser=access.signed_in())
    if d is None or (d.n_included + d.n_excluded) == 0:
        return
    if d.meta.get("generation") != c.manifest.get("data_dir"):
        st.warning("Your unsaved group was built on an earlier import of this corpus and cannot be restored "
                   "(rows changed). Saved groups are not affected.")
        return
    st.session_state["draft_token"] = asked
    adopt_draft(d, own=True)
    st.toast(f"Restored the group you were building ({d.n_included:,} included, {d.n_excluded:,} excluded).")


def adopt_draft(d, own: bool = False) -> Session:
    """Make a draft's group this tab's group. ``own``: the draft is this tab's (its steps are written
    already); otherwise it is copied into this tab's draft on the next autosave."""
    s = Session.from_history(d.steps) if d.steps or not d.session_json else Session.from_json(d.session_json)
    s.synced = len(s.history) if own and d.steps else 0
    st.session_state["session"] = s
    for field in META_KEYS:
        meta()[field] = str(d.meta.get(field, "") or "")
        st.session_state.pop(META_KEYS[field], None)  # the form re-reads the fields
    st.session_state["saved_rev"] = s.revision if d.saved else -1
    st.session_state["draft_rev"] = (draft_token(), s.revision, d.saved, tuple(meta().values())) if own else None
    return s


def autosave(name: str, c: Corpus, s: Session) -> None:
    """Write what changed in this tab's draft since the last write (end of a page run): the new steps
    only. When another tab took the draft over (a duplicated tab), this one goes on under a new token."""
    saved = st.session_state.get("saved_rev") == s.revision
    token = draft_token()
    key = (token, s.revision, saved, tuple(meta().values()))
    if st.session_state.get("draft_rev") == key or (s.is_empty() and "draft_rev" not in st.session_state):
        return
    counts = s.counts()
    db = store(name)
    fields = dict(browser=access.browser_id(), writer=draft_writer(), n_included=counts["included"],
                  n_excluded=counts["excluded"], saved=saved, meta={**meta(), "generation": c.manifest.get("data_dir")})
    if not db.sync_draft(token, owner(), keep=s.synced, steps=s.unsynced_steps(), **fields):
        st.session_state.pop("draft_token")  # the draft is someone else's now: a new one for this tab
        token = draft_token()
        db.sync_draft(token, owner(), keep=0, steps=[asdict(step) for step in s.history], **fields)
    s.synced = len(s.history)
    st.session_state["draft_rev"] = (token, s.revision, saved, tuple(meta().values()))
    db.prune_drafts_now_and_then()


def mark_saved(s: Session) -> None:
    st.session_state["saved_rev"] = s.revision


def unsaved(s: Session) -> bool:
    return bool(s.labels) and st.session_state.get("saved_rev") != s.revision


# --- steps that replace the whole group: undoable, never silent ----------------------------
def switch_group(included_rows, excluded_rows, action: str, **fields: str) -> str:
    """Make another group the one being built (open, new, from a cluster); returns what to tell
    the user. The group being built is not lost: Undo brings it back with its name and notes."""
    s = session()
    before = s.counts()
    was_unsaved = unsaved(s)
    s.switch_to(included_rows, excluded_rows, action, previous_meta=dict(meta()))
    set_meta(name=fields.get("name", ""), notes=fields.get("notes", ""),
             annotator=fields.get("annotator", meta().get("annotator", "")))
    st.session_state["save_overwrite"] = False
    if was_unsaved:
        return (f" The unsaved group you were building ({before['included']:,} included, "
                f"{before['excluded']:,} excluded) is one Undo away.")
    return ""


def undo() -> str:
    """Undo the last step (a switch brings back the previous group's fields too); a message."""
    s = session()
    step = s.undo()
    if step is None:
        return "Nothing to undo."
    if step.method == SWITCH:
        set_meta(**{k: v for k, v in step.params.get("previous_meta", {}).items() if k in META_KEYS})
        return "Undid: back to the group you were building before."
    if step.kind == "search":
        label = REGISTRY[step.method].label if step.method in REGISTRY else step.method
        return f"Undid: {label} ({len(step.changes):,} texts)."
    n = len(step.changes)
    return f"Undid: {step.method} ({n:,} text{'s' if n != 1 else ''})."


def counters(s: Session, where=None) -> None:
    where = where or st.sidebar
    c = s.counts()
    a, b = where.columns(2)
    a.metric("Included", c["included"])
    b.metric("Excluded", c["excluded"])


# (script, sidebar name, icon, what the home page says of it); Material icons: no emoji font needed
PAGES = [("streamlit_app.py", "Home", ":material/home:", ""),
         ("pages/1_Annotate.py", "Annotate", ":material/edit_note:", "Annotate: build a topic group"),
         ("pages/2_Timeline.py", "Timeline", ":material/timeline:", "Timeline of a group"),
         ("pages/3_Scatter.py", "Scatter", ":material/scatter_plot:", "LDA scatter of the corpus"),
         ("pages/4_Topics.py", "Topics", ":material/category:", "Topics: K-Means clusters and key lemmas"),
         ("pages/5_Groups.py", "Groups", ":material/folder_open:", "Saved groups"),
         ("pages/6_DAC.py", "DAC", ":material/hub:", "DAC (Deep Amortized Clustering): a model's view of an anchor")]


def keep_draft(name: str, c: Corpus) -> None:
    """The group being built back from the URL's draft after a reload, and this tab's draft named in
    the URL of every page, so that F5 anywhere brings it back."""
    _restore_from_url(name, c)
    if "draft_token" in st.session_state or not session().is_empty():
        draft_token()


def link_params() -> dict:
    """What every page link carries: the corpus, and this tab's draft (so that a reload on any page
    brings the group being built back)."""
    out = {}
    if st.session_state.get("corpus"):
        out["corpus"] = st.session_state["corpus"]
    if st.session_state.get("draft_token"):
        out["draft"] = st.session_state["draft_token"]
    return out


def navigation(where=None) -> None:
    """The sidebar's list of pages, with the names we give them; each link keeps the corpus and the
    draft in the URL."""
    from streamlit.errors import StreamlitAPIException

    where = where or st.sidebar
    params = link_params()
    with where:
        try:
            for page, label, icon, _ in PAGES:
                st.page_link(page, label=label, icon=icon, query_params=params or None)
        except StreamlitAPIException:  # a page run on its own (AppTest of one page): no app to link to
            return
        st.divider()


def start_page(title: str, icon: str) -> tuple[str, Corpus]:
    """Every page's first lines: page config, sign-in, the corpus picker, the loaded corpus (or
    a stop), and the group being built back from its draft after a reload (on any page: the URL of
    every page carries the draft). The page links are drawn last, at the top of the sidebar, so
    that they carry the draft's token."""
    st.set_page_config(page_title=title, page_icon=icon, layout="wide")
    access.gate()
    nav = st.sidebar.container()
    try:
        name = pick_corpus()
        c = load_or_stop(name)
        pick_embedding_set(name, c)
        c = corpus(name)
        keep_draft(name, c)
    finally:
        navigation(nav)
    return name, c


def group_export(c: Corpus, included_ids, excluded_ids, fmt: str):
    """The export file, built only when the user clicks Download (a callable for
    st.download_button): nothing is computed on reruns."""
    return lambda: to_bytes(group_frame(c, list(included_ids), list(excluded_ids)), fmt)


@st.cache_data(max_entries=8, show_spinner="Preparing the export…")
def _saved_group_file(root: str, name: str, stamp: float, group: str, version: int, fmt: str) -> bytes:
    g = _store(str(paths.groups_db(name, Path(root)))).load(group, version)
    return to_bytes(group_frame(_corpus(root, name, stamp), g.included, g.excluded), fmt)


def saved_group_file(name: str, group: str, version: int, fmt: str) -> bytes:
    """A saved version's export file, made once per (version, format). Not deferred: a deferred
    download registered on one run was gone when the first click after changing the version reached
    the server ("Deferred file not found"); a saved version never changes, so its file is made once and
    the button's link stays valid across reruns."""
    return _saved_group_file(*_key(name), group, int(version), fmt)


def session_export(c: Corpus, s: Session, fmt: str):
    """Like group_export, for the group being built, read at click time (never stale)."""
    return lambda: group_export(c, c.ids_of(s.included), c.ids_of(s.excluded), fmt)()


def open_group(c: Corpus, group: GroupVersion) -> str:
    """Make a saved group the group being built (one undoable step, with its name, annotator
    and notes); returns what to tell the user."""
    inc, exc = c.rows_of(group.included), c.rows_of(group.excluded)
    extra = switch_group(inc, exc, "open", name=group.name, notes=group.notes, annotator=group.annotator)
    mark_saved(session())
    missing = len(group.included) + len(group.excluded) - len(inc) - len(exc)
    gone = f" {missing:,} of its texts are not in this import of the corpus." if missing else ""
    return (f"Opened {quoted(group.name)} version {group.number}: {len(inc):,} included, "
            f"{len(exc):,} excluded.{gone}{extra}")
