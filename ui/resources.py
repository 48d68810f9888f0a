"""Cached resources of a corpus, shared by every browser session of the server (never mutated):
the loaded corpus and its embedding set, the search context, the groups' store, derived arrays and
frames, the DAC model the user picked, export files. Everything a page reads from disk goes through here."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import threading
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from core import copies, embedsets, hover, languages, paths, plots, threads, timezones, vectorstore, wordforms
from core.corpus import Corpus, CorpusError, load_corpus
from core.export import group_frame, to_bytes
from core.embed import pick_device
from core.ingest import QUOTED
from core.quoted import words_read
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex, words_file
from core.search import SearchContext
from core.db import configured_dsn
from core.store import GroupStore
from ui import damage
from ui.text import md, quoted


def stamp(name: str) -> float:
    """Changes when a corpus is re-imported, so cached resources are rebuilt."""
    mf = paths.manifest_file(name)
    return mf.stat().st_mtime if mf.exists() else 0.0


def imported_again(name: str, c: Corpus) -> bool:
    """The corpus was imported again since ``c`` was loaded: a part of a page that reruns alone (a fragment) still
    holds the earlier import, and the whole page must run to take the new one (ui.drafts brings the group over)."""
    from core.corpus import load_manifest

    try:
        return load_manifest(name).get("data_dir") != c.manifest.get("data_dir")
    except CorpusError:
        return False  # the page's own run says what is wrong


def _settled(resource):
    """A long-lived resource, just built: every object alive now (the server's modules, the corpus,
    its indexes) leaves the garbage collector's view. They live as long as the server, and at ten
    million rows a full collection over them took 200-390 ms several times a minute, landing on any
    click (issue 29's toggle and keyword times). Objects freed later are still freed."""
    gc.freeze()
    return resource


_RUNS: dict[str, int] = {}


def settle_page(page: str) -> None:
    """At a page's second run in this server, the modules its first run imported (plotting, search
    methods) leave the garbage collector's view too (see _settled): once per page and process."""
    _RUNS[page] = _RUNS.get(page, 0) + 1
    if _RUNS[page] == 2:
        _settled(None)


@st.cache_resource(show_spinner="Loading corpus…", max_entries=4)
def _corpus(root: str, name: str, stamp: float) -> Corpus:
    c = load_corpus(name, Path(root))
    if c.vector_file is not None:  # a large corpus: its store read into the page cache while the user looks
        vectorstore.warm(c.vector_file)
    return _settled(c)


def warm_key_lemmas(name: str) -> threading.Thread | None:
    """At the end of the Home page's run, once per server and language, while the user reads the page: what key
    lemmas need is imported (scikit-learn, ~2 s cold on 2 cores; Suggest and the word searches use it too), and a
    thread reads the corpus language's lemma dictionary (0.3-0.7 s) and every language's function words (0.3 s),
    and for Czech the dictionary of word forms (core.wordforms: ~5 s), which the first Scatter map's topic names
    would otherwise wait for.

    The imports run in the page's own thread, after everything is drawn; the thread imports nothing. A thread
    that imported scikit-learn while a page imported it too (Review, Topics) left the page with half-initialised
    modules: "cannot import name 'clone' from partially initialized module 'sklearn.base'" stopped about one
    Review page in six opened on a new server. Importing before the Home page was drawn instead cost it 2.2 s."""
    try:  # the import's set: a picked embedding set's warning is shown once, by the page
        lang = languages.of_corpus(_corpus(*corpus_key(name)), fallback="")
    except CorpusError:  # the page has said why the corpus cannot be opened; nothing to get ready
        return None
    return _key_lemmas_ready(lang)


@st.cache_resource(show_spinner=False)  # once per server and language
def warm_word_forms(lang: str) -> threading.Thread:
    """Read the language's dictionary of word forms (core.wordforms) in a thread while the user types the first
    keyword: Czech takes 1.6-1.8 s, German 4.4 s, which the first search with Every form would otherwise wait for
    (a search that comes first waits for the thread's read, under the dictionary's lock). Suggest's first word
    matrix of a corpus reads the same dictionary (its words counted by lemma)."""
    return _warm_in_thread("warm word forms", lambda: wordforms.warm(lang))


def _warm_in_thread(name: str, work) -> threading.Thread:
    """``work()`` in a daemon thread: a warm-up, so whatever fails there fails again, with its message, where the
    work is used."""
    def run():
        try:
            work()
        except Exception:
            pass

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


@st.cache_resource(show_spinner=False)  # once per server and language; two Home pages at once: the other waits
def _key_lemmas_ready(lang: str) -> threading.Thread:
    import simplemma  # noqa: F401  (the lemmatiser's package; its dictionaries are read in the thread)
    import stopwordsiso  # noqa: F401

    from core.cluster.keyterms import JOINS_UNLISTED, Lemmatiser, word_languages

    def work():
        word_languages()
        if lang:
            Lemmatiser(lang)("playing" if lang == "en" else "a")  # English reads its list of today's words
        if lang in JOINS_UNLISTED:  # the dictionary's changes of ending, which join Czech forms it lacks
            wordforms.warm(lang)

    return _warm_in_thread("warm key lemmas", work)


def vector_index(c: Corpus, device: str) -> VectorIndex:
    """A large corpus's fp16 store is searched where it lies (memory-mapped); others in memory."""
    return VectorIndex.mapped(c.vector_file, device) if c.vector_file else VectorIndex(c.embeddings, device=device)


def keyword_index(c: Corpus, texts: Sequence[str]) -> KeywordIndex:
    """A large corpus's keyword index on disk (built at import); otherwise the texts joined in memory."""
    from core.search.textindex import TextIndex

    f = c.keyword_index_file
    if not f:
        return KeywordIndex(texts)
    index = TextIndex(f, c.n)
    # read while the page draws and the user types (the first search of a cold 10M corpus met its deadline)
    threading.Thread(target=index.prepare, name="keyword index", daemon=True).start()
    return KeywordIndex(texts, text_index=index)


def search_context_of(c: Corpus, device: str, found: copies.Copies | None = None,
                      conversations: threads.Threads | None | bool = False) -> SearchContext:
    """What the server searches a corpus with. A large corpus (its keyword index on disk, its word
    matrix built at import) keeps its texts in the frame's column, read by row; a smaller one gets
    them as a list, joined in memory for the keyword scan. ``found``: the corpus's copies, when read
    already; ``conversations``: its conversations (core.threads), when read already (None: it has none)."""
    from core.rows import TextColumn

    texts = TextColumn(c.frame["text"]) if c.keyword_index_file else c.frame["text"].tolist()
    read = words_read(texts, c.frame.get(QUOTED))  # a quote's words with what it quotes
    file, lang = words_file(c.data_folder, wordforms.language_of(c), built_at_import=bool(c.keyword_index_file),
                            quotes=read is not texts)
    words = WordIndex(read, file, lang=lang)
    return SearchContext(vector_index(c, device), keyword_index(c, texts), c.frame, timezone=c.timezone,
                         device=device, word_index=words,
                         threads=threads.load_or_build(c.data_folder, c.frame) if conversations is False
                         else conversations,
                         copies=found if found is not None
                         else copies.load_or_build(c.data_folder, c.frame["text"], c.frame.get(QUOTED)),
                         quotes_folder=c.quotes_folder)


@st.cache_resource(show_spinner="Building the search index…", max_entries=4)
def _search_context(root: str, name: str, stamp: float) -> SearchContext:
    ctx = search_context_of(_corpus(root, name, stamp), pick_device("auto"), _copies(root, name, stamp),
                            _threads(root, name, stamp))
    # Suggest's days (SearchContext.days: about a second at 10M rows), read while the user labels, not at a click
    threading.Thread(target=lambda: ctx.n_days, name="days", daemon=True).start()
    # and what its quotes quote (the keyword search's *Quoted tweets too*), read before the first search
    threading.Thread(target=lambda: ctx.quotes, name="quotes", daemon=True).start()
    return _settled(ctx)


@st.cache_resource(show_spinner="Finding the texts that are copies of one another (once per corpus)…", max_entries=4)
def _copies(root: str, name: str, stamp: float) -> copies.Copies:
    c = _corpus(root, name, stamp)
    return copies.load_or_build(c.data_folder, c.frame["text"], c.frame.get(QUOTED))


def copies_of(name: str) -> copies.Copies:
    """The corpus's copies (core/copies.py), shared by its pages."""
    return _copies(*corpus_key(name))


@st.cache_resource(show_spinner=False, max_entries=4)
def _threads(root: str, name: str, stamp: float):
    c = _corpus(root, name, stamp)
    return threads.load_or_build(c.data_folder, c.frame)


def threads_of_corpus(name: str):
    """The corpus's conversations (core/threads.py; None where it has none), shared by its pages."""
    return _threads(*corpus_key(name))


@st.cache_resource(max_entries=8, show_spinner=False)
def _store(root: str, name: str, dsn: str | None) -> GroupStore:
    from core.store import open_store

    return open_store(name, Path(root))  # PostgreSQL when SEMANNO_DB names one, else the corpus's SQLite file


@st.cache_data(max_entries=8, show_spinner=False)
def _date_range(root: str, name: str, stamp: float):
    c = _corpus(root, name, stamp)
    d = c.frame["date"]
    return tuple(timezones.local(x, c.timezone).date() for x in (d.min(), d.max()))  # days of the corpus's zone


@st.cache_data(max_entries=16, show_spinner="Counting the corpus's texts per date…")
def _bin_counts(root: str, name: str, stamp: float, bin_name: str) -> pd.Series:
    c = _corpus(root, name, stamp)
    return plots.bin_counts(timezones.local(c.frame["date"], c.timezone), bin_name)


def bin_counts(name: str, bin_name: str) -> pd.Series:
    """The whole corpus's texts per ``bin_name`` ("day", "week", "month"), in its time zone (once per import)."""
    return _bin_counts(*corpus_key(name), bin_name)


@st.cache_resource(max_entries=8, show_spinner="Drawing the corpus's timeline…")
def _whole_timeline(root: str, name: str, stamp: float, bin_name: str) -> plots.Timeline:
    c = _corpus(root, name, stamp)
    cols = [x for x in ("date", "author", "text") if x in c.frame.columns and
            (x != "text" or c.n <= plots.PER_TEXT_LIMIT)]  # counts per bin above the limit: no text read
    return plots.timeline(timezones.shown(c.frame[cols], c.timezone), bin_name,
                          colours=_author_colours(root, name, stamp))


def whole_timeline(name: str, bin_name: str) -> plots.Timeline:
    """The whole corpus's timeline per ``bin_name``, stacked by author: drawn once per import and bin (a second at
    10M texts), then the same figure on every rerun."""
    return _whole_timeline(*corpus_key(name), bin_name)


# The two author tables are cache_resource (shared, read-only), not cache_data: cache_data hands every
# caller an unpickled copy, and at 500,000 authors (10M tweets) that was ~0.3 s of every Annotate run
@st.cache_resource(max_entries=8, show_spinner=False)
def _authors(root: str, name: str, stamp: float) -> list[str]:
    authors = _corpus(root, name, stamp).frame["author"]
    if isinstance(authors.dtype, pd.CategoricalDtype):  # a loaded corpus: its authors are the categories
        return sorted(str(a) for a in authors.cat.remove_unused_categories().cat.categories)
    return sorted(authors.dropna().astype(str).unique().tolist())


@st.cache_resource(max_entries=8, show_spinner=False)
def _author_colours(root: str, name: str, stamp: float) -> dict[str, str]:
    frame = _corpus(root, name, stamp).frame
    return plots.author_colours(frame["author"]) if "author" in frame.columns else {}


@st.cache_resource(max_entries=8, show_spinner=False)
def _hover(root: str, name: str, stamp: float, size: int) -> tuple[np.ndarray, list[str]]:
    c = _corpus(root, name, stamp)
    return hover.sample(c.data_folder, c.frame["text"], size)


def hover_sample(name: str, size: int) -> tuple[np.ndarray, list[str]]:
    """(rows, texts) of the scatter's fixed hover sample of the corpus (core/hover.py): read from its small
    file, drawn and saved on a corpus's first scatter where the import did not make it."""
    return _hover(*corpus_key(name), int(size))


def corpus_key(name: str) -> tuple[str, str, float]:
    """(data root, corpus, stamp): the arguments every cached function of a corpus is keyed on."""
    return str(paths.data_root()), name, stamp(name)


def author_colours(name: str) -> dict[str, str]:
    """One colour per author of the corpus, the same on every page."""
    return _author_colours(*corpus_key(name))


def date_range(name: str):
    """First and last date of the corpus (computed once per import)."""
    return _date_range(*corpus_key(name))


def top_authors(name: str, n: int) -> list[str]:
    """The corpus's ``n`` authors with the most texts, most first (the order of their colours)."""
    return list(itertools.islice(author_colours(name), n))  # not a list of every author, each rerun


def authors(name: str) -> list[str]:
    """The corpus's authors, sorted (computed once per import)."""
    return _authors(*corpus_key(name))


@st.cache_data(max_entries=8, show_spinner=False)
def _saved_group_rows(root: str, name: str, stamp: float, db_stamp: tuple) -> dict:
    c, s = _corpus(root, name, stamp), _store(root, name, configured_dsn())
    return {g: c.rows_of(s.load(g).included) for g in s.names()}


@damage.named
def saved_group_rows(name: str) -> dict:
    """Included rows of each saved group this user may see (latest versions), read again only when the groups
    change (GroupStore.stamp: a file's mtimes, or PostgreSQL's last update), not on every rerun."""
    hidden = hidden_groups(name)
    return {g: rows for g, rows in _saved_group_rows(*corpus_key(name), store(name).stamp()).items() if g not in hidden}


def viewer(name: str) -> str:
    """Who is looking (and labelling, for the journal and team topics): the signed-in user, else the name
    chosen in this browser (the Team page asks for it), else "local"."""
    from ui import access

    return access.identity() or store(name).person(access.browser_id()) or "local"


def hidden_groups(name: str) -> set[str]:
    """The saved groups this user may not see yet: other annotators' groups of a blind topic
    (core.teams.hidden_groups)."""
    from core.teams import hidden_groups as hidden

    return hidden(viewer(name), store(name).team_groups())


def group_names(name: str) -> list[str]:
    """The saved groups' names this user may see (``hidden_groups`` left out)."""
    hidden = hidden_groups(name)
    return [g for g in store(name).names() if g not in hidden]


@st.cache_data(max_entries=8, show_spinner=False)
def _saved_group_labels(root: str, name: str, stamp: float, group: str, db_stamp: tuple) -> tuple:
    c, s = _corpus(root, name, stamp), _store(root, name, configured_dsn())
    version = s.load(group)
    return np.sort(c.rows_of(version.included)), np.sort(c.rows_of(version.excluded))


@damage.named
def saved_group_labels(name: str, group: str) -> tuple[np.ndarray, np.ndarray]:
    """(included rows, excluded rows) of a saved group's latest version, sorted; read again when the groups
    change."""
    return _saved_group_labels(*corpus_key(name), group, store(name).stamp())


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
    return dataclasses.replace(base, index=vector_index(c, base.device))


def label_columns(name: str) -> list[str]:
    """The corpus's columns of classes (an event, a label: core.cluster.evaluate.categorical_columns), found
    once per import (each is read whole)."""
    return _label_columns(*corpus_key(name))


@st.cache_data(max_entries=8, show_spinner=False)
def _label_columns(root: str, name: str, stamp: float) -> list[str]:
    from core.cluster.evaluate import categorical_columns

    return categorical_columns(_corpus(root, name, stamp).frame)


# above: scored on a random sample of this many texts (10M rows: 20 s whole, 0.7 s sampled; bench.class_scores)
CLASS_SCORE_ROWS = 500_000


def column_scores(name: str, stem: str, column: str) -> dict:
    """NMI, ARI and accuracy of a stored clustering against a column of classes, once per clustering file."""
    from core.cluster import store as clusterings

    return _column_scores(*corpus_key(name), stem, clusterings.stamp(name, stem), column)


@st.cache_data(max_entries=16, show_spinner="Comparing with the classes…")
def _column_scores(root: str, name: str, stamp: float, stem: str, files: tuple, column: str) -> dict:
    from core.cluster.evaluate import column_scores

    return column_scores(_corpus(root, name, stamp).frame[column], _clustering_labels(root, name, stamp, stem, files),
                         at_most=CLASS_SCORE_ROWS)


@st.cache_data(max_entries=8, show_spinner="Loading the clustering…")
def _clustering_labels(root: str, name: str, stamp: float, stem: str, files: tuple) -> np.ndarray:
    from core.cluster import store as clusterings

    return clusterings.labels_for(_corpus(root, name, stamp), stem)


def clustering_labels(name: str, stem: str) -> np.ndarray:
    """A stored clustering's labels, read again only when its file changes (ClusteringError when it
    does not fit the corpus)."""
    from core.cluster import store as clusterings

    return _clustering_labels(*corpus_key(name), stem, clusterings.stamp(name, stem))


def saved_groups_in_clustering(name: str, stem: str, group: str | None = None) -> dict:
    """The saved groups this user may see against a stored clustering: their IOU (core.cluster.evaluate.group_iou),
    or with ``group`` where that group's texts lie (group_in_clusters); once per clustering file and state of the
    groups, not on every rerun of the Topics page (10M rows, five groups: 0.18 s)."""
    from core.cluster import store as clusterings

    visible = tuple(saved_group_rows(name))
    return _groups_in_clustering(*corpus_key(name), stem, clusterings.stamp(name, stem), store(name).stamp(),
                                 visible, group)


@st.cache_data(max_entries=16, show_spinner=False)
def _groups_in_clustering(root: str, name: str, stamp: float, stem: str, files: tuple, db_stamp: tuple,
                          visible: tuple, group: str | None) -> dict:
    from core.cluster.evaluate import group_in_clusters, group_iou

    rows = _saved_group_rows(root, name, stamp, db_stamp)
    labels = _clustering_labels(root, name, stamp, stem, files)
    if group is not None:
        return group_in_clusters(rows[group], labels)
    return group_iou({g: rows[g] for g in visible}, labels)


@st.cache_resource(max_entries=64, show_spinner=False)
def _once(fn_name: str, root: str, name: str, stamp: float):
    from importlib import import_module

    module, _, attr = fn_name.rpartition(".")
    return getattr(import_module(module), attr)(name)


def once_per_corpus(fn, name: str):
    """``fn(name)`` run once per server process and import of the corpus (a migration that writes:
    never on every rerun)."""
    return _once(f"{fn.__module__}.{fn.__name__}", *corpus_key(name))


@st.cache_data(max_entries=6, show_spinner="Loading the clustering…")
def _cluster_view(root: str, name: str, stamp: float, stem: str, files: tuple):
    from core.cluster import store as clusterings
    from core.cluster.keyterms import outdated
    from core.cluster.topics import cluster_table

    labels = _clustering_labels(root, name, stamp, stem, files)
    terms = clusterings.load_terms(name, stem)
    lemmas = "missing" if terms is None else "outdated" if outdated(terms) else "current"
    return cluster_table(labels, _corpus(root, name, stamp).frame["text"], terms), lemmas


def cluster_view(name: str, stem: str):
    """A stored clustering's table for the topic browser (one row per cluster, key lemmas when
    computed) and its key lemmas' state: "missing", "outdated" (made with older function-word lists) or
    "current"; read again only when its files change."""
    from core.cluster import store as clusterings

    return _cluster_view(*corpus_key(name), stem, clusterings.stamp(name, stem))


def corpus(name: str) -> Corpus:
    """The loaded corpus, its embeddings those of the set the user picked."""
    set_name = embedding_set(name)
    if set_name == embedsets.IMPORT:
        return _corpus(*corpus_key(name))
    try:
        return _corpus_with_set(*corpus_key(name), set_name, _set_stamp(name, set_name))
    except embedsets.EmbeddingSetError as exc:
        st.warning(md(f"{exc}; using the import's embeddings."))
        st.session_state["embedding_set"] = embedsets.IMPORT
        return _corpus(*corpus_key(name))


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
    reason = dac_store.mismatch(trained, corpus(name), embedding_set(name))
    return (None, md(reason)) if reason else (trained, None)


@st.cache_data(max_entries=64, show_spinner=False)
def _model_set(path: str, stamp: tuple) -> str | None:
    """The embedding set a DAC model file learnt (None where the file cannot be read)."""
    from core.cluster.dac import store as dac_store
    from core.cluster.dac import train as tr

    try:
        return dac_store.learnt_set(tr.load(Path(path), "cpu"))
    except tr.ModelError:
        return None


def dac_models_on_set(name: str) -> list[str]:
    """The corpus's DAC models (newest first) that learnt the embedding set picked in the sidebar: the
    only ones a clustering on this set can use."""
    from core.cluster.dac import store as dac_store

    want = embedding_set(name)
    return [m.name for m in dac_store.listing(name) if _model_set(str(m.path), m.stamp) == want]


def dac_model(name: str, model: str | None = None):
    """The DAC model the user picked, when it can be used for this corpus; otherwise None."""
    return picked_model(name, model)[0]


@st.cache_data(max_entries=8, show_spinner=False)
def _keyword_example(root: str, name: str, stamp: float) -> str:
    from core.annotate import example_query

    return example_query(_corpus(root, name, stamp).frame["text"])


def keyword_example(name: str) -> str:
    """An example query for the keyword box made of this corpus's own frequent words."""
    return _keyword_example(*corpus_key(name))


def keyword_rows(name: str, query: str, limit: int = 20) -> list[int]:
    """The first ``limit`` hits of ``query`` in the corpus (core.search.keyword.first_hits)."""
    from core.search.keyword import first_hits

    return first_hits(search_context(name).keyword_index, query, limit)


def search_context(name: str) -> SearchContext:
    """The corpus's search context (cached) over the picked embedding set. No DAC model in it: no page
    search uses one (the Annotate page has no DAC button, Suggest's DAC re-rank is off: bench/RESULTS.md,
    issue 31); the DAC page loads the picked model itself (``picked_model``)."""
    set_name = embedding_set(name)
    return (_search_context(*corpus_key(name)) if set_name == embedsets.IMPORT
            else _search_context_with_set(*corpus_key(name), set_name, _set_stamp(name, set_name)))


@st.cache_resource(max_entries=8, show_spinner=False)
def _text_matches(root: str, name: str, stamp: float, query: str, is_regex: bool,
                  word_forms: str | None = None, quotes: bool = False) -> np.ndarray:
    from core.annotate import text_matches

    rows = text_matches(_search_context(root, name, stamp), query, is_regex, word_forms, quotes).astype(np.int32)
    rows.setflags(write=False)  # shared by every session: read-only
    return rows


def text_matches(name: str, query: str, is_regex: bool, word_forms: str | None = None,
                 quotes: bool = False) -> np.ndarray:
    """The rows whose text holds a filter's query (cached per corpus and query: the Annotate page's filter
    is read again on every click, and which texts hold a word does not change with the labels); ``word_forms``,
    a language: its words in every form (core.wordforms); ``quotes``: a quote whose quoted tweet holds it too."""
    return _text_matches(*corpus_key(name), query, is_regex, word_forms, quotes)


@st.cache_resource(max_entries=4, show_spinner=False)
def _sketch(root: str, name: str, stamp: float, files: tuple) -> tuple[np.ndarray | None, str | None]:
    from core import sketch

    c = _corpus(root, name, stamp)
    try:
        got = sketch.load(c.data_folder, c.n)
    except sketch.SketchError as exc:
        return None, str(exc)
    return (got[0] if got else None), None


def scatter_sketch(name: str) -> tuple[np.ndarray | None, str | None, str]:
    """(the import's low-dimensional sketch of the vectors, None, its files' identity) for the scatter
    (core/sketch.py); (None, None, "") where the corpus has none or another embedding set is picked (the
    sketch is of the import's vectors); (None, why, "") where its files are there but cannot be used. The
    identity changes when the sketch is made again (figures cached for the old one are not reused)."""
    from core import sketch

    if embedding_set(name) != embedsets.IMPORT:
        return None, None, ""
    folder = _corpus(*corpus_key(name)).data_folder
    files = []  # the files' identities: a sketch made (or replaced) while the server runs is seen at once
    for f in (folder / sketch.FILE, folder / sketch.META):
        try:
            st_ = f.stat()
            files.append((st_.st_ino, st_.st_mtime_ns, st_.st_size))
        except FileNotFoundError:
            files.append(None)
    x, problem = _sketch(*corpus_key(name), tuple(files))
    return x, problem, (str(files) if x is not None else "")


def store(name: str) -> GroupStore:
    """The corpus's groups (cached per server process); DatabaseError when PostgreSQL is unreachable."""
    return _store(str(paths.data_root()), name, configured_dsn())


@st.cache_data(max_entries=8, show_spinner="Preparing the export…")
def _saved_group_file(root: str, name: str, stamp: float, group: str, version: int, fmt: str) -> bytes:
    g = _store(root, name, configured_dsn()).load(group, version)
    return to_bytes(group_frame(_corpus(root, name, stamp), g.included, g.excluded), fmt)


@damage.named
def saved_group_file(name: str, group: str, version: int, fmt: str) -> bytes:
    """A saved version's export file, made once per (version, format). Not deferred: a deferred
    download registered on one run was gone when the first click after changing the version reached
    the server ("Deferred file not found"); a saved version never changes, so its file is made once and
    the button's link stays valid across reruns."""
    return _saved_group_file(*corpus_key(name), group, int(version), fmt)
