"""The LDA scatter's figures (the Scatter page draws them): the discriminant of a group state, the
corpus projected on it, the figure, and the first look at a large corpus whose vectors are not yet read
from disk. Each group state is a key ``(corpus, stamp, included, excluded, view, sketch identity)``; ``view`` is
"group" (the axes set the group apart) or "topics" (the map of the corpus's own topics, the same for every group
state: fitted and projected once per corpus).

Settings are read from the environment at each call (tests change them between page runs):
``SEMANNO_SCATTER_HOVER_SAMPLE`` (unlabelled texts with their text on hover), ``SEMANNO_SCATTER_RASTER_FROM``
(from this many texts the unlabelled ones are a density image), ``SEMANNO_SCATTER_PREVIEW_FROM`` and
``SEMANNO_SCATTER_PREVIEW_BELOW`` (a first look, from a sixteenth of the corpus, for corpora of at least
that many texts without a sketch while less than that share of their store is in the page cache: cold, a
10M store is 7.7 GB to read; warm, the full scatter is ready in ~3-5 s and a preview would only delay it).
"""

from __future__ import annotations

import os

import numpy as np
import streamlit as st

from core import languages, plots, projection, vectorstore
from core.session import EXCLUDED, INCLUDED
from ui import resources


def hover_sample() -> int:
    return int(os.environ.get("SEMANNO_SCATTER_HOVER_SAMPLE", 5000))


def raster_from() -> int:
    return int(os.environ.get("SEMANNO_SCATTER_RASTER_FROM", plots.RASTER_FROM))


def preview_hover_sample() -> int:
    return min(hover_sample(), projection.PREVIEW_HOVER)


def space(corpus_name: str, sketched: str) -> np.ndarray:
    """The rows the scatter projects: the import's sketch (core/sketch.py) where there is one (``sketched``:
    its identity, a part of every cache key here), else the vectors of the picked embedding set."""
    return resources.scatter_sketch(corpus_name)[0] if sketched else resources.search_context(corpus_name).vectors


@st.cache_data(max_entries=8, show_spinner="Fitting the discriminant…")
def _group_directions(corpus_name: str, stamp: str, included: tuple, excluded: tuple, sketched: str) -> np.ndarray:
    return projection.lda_directions(space(corpus_name, sketched), np.array(included, np.int64),
                                     np.array(excluded, np.int64))


@st.cache_data(max_entries=4, show_spinner="Finding the corpus's topics…")
def _topic_map(corpus_name: str, stamp: str, sketched: str) -> projection.TopicMap:
    return projection.topic_map(space(corpus_name, sketched))


@st.cache_data(max_entries=4, show_spinner="Naming the corpus's topics…")
def topic_names(corpus_name: str, stamp: str, sketched: str) -> list[str]:
    """The map's topics, each named by its key lemmas (written on the map at the topic's centre)."""
    corpus = resources.corpus(corpus_name)
    return projection.topic_names(_topic_map(corpus_name, stamp, sketched), corpus.frame["text"],
                                  lang=languages.of_corpus(corpus))


def directions(corpus_name: str, stamp: str, included: tuple, excluded: tuple, view: str, sketched: str
               ) -> np.ndarray:
    if view == "topics":
        return _topic_map(corpus_name, stamp, sketched).directions
    return _group_directions(corpus_name, stamp, included, excluded, sketched)


@st.cache_data(max_entries=8, show_spinner="Projecting the corpus…")
def _projected(corpus_name: str, stamp: str, included: tuple, excluded: tuple, view: str, sketched: str
               ) -> np.ndarray:
    return projection.project(space(corpus_name, sketched),
                              directions(corpus_name, stamp, included, excluded, view, sketched))


def coordinates(corpus_name: str, stamp: str, included: tuple, excluded: tuple, view: str, sketched: str
                ) -> np.ndarray:
    """Every text's place: the topic map's do not depend on the labels, so one projection serves them all."""
    if view == "topics":
        included = excluded = ()
    return _projected(corpus_name, stamp, included, excluded, view, sketched)


@st.cache_resource(max_entries=4, show_spinner=False)
def figure(corpus_name: str, stamp: str, included: tuple, excluded: tuple, view: str, sketched: str
           ) -> plots.Scatter:
    """The figure of one group state: reruns (a selection event is one) reuse it. A resource, not
    data: an unpickled copy serialises differently, and a changed spec clears the selection."""
    xy = coordinates(corpus_name, stamp, included, excluded, view, sketched)
    labels = np.zeros(len(xy), dtype=np.int8)
    labels[list(included)], labels[list(excluded)] = INCLUDED, EXCLUDED
    sc = plots.scatter(xy, labels, resources.corpus(corpus_name).frame["text"], hover_sample=hover_sample(),
                       raster_from=raster_from(), axes=projection.axis_titles(len(excluded), view),
                       hover=resources.hover_sample(corpus_name, hover_sample()))
    if view == "topics":  # the largest topics named first; a name that would cover another is left out
        found = _topic_map(corpus_name, stamp, sketched)
        lo, hi = xy.min(0), xy.max(0)
        plots.name_places(sc.figure, found.centres, topic_names(corpus_name, stamp, sketched),
                          (lo[0], hi[0], lo[1], hi[1]), np.argsort(-np.bincount(found.labels), kind="stable"))
    return sc


def preview(corpus_name: str, stamp: str, included: tuple, excluded: tuple, view: str, sketched: str
            ) -> tuple[plots.Scatter, int]:
    """A first look on the axes of the full scatter: (its figure, the texts it shows). Shown once per group
    state, so not cached."""
    sc, rows = projection.preview_scatter(space(corpus_name, sketched),
                                          directions(corpus_name, stamp, included, excluded, view, sketched),
                                          included, excluded, resources.corpus(corpus_name).frame["text"],
                                          projection.PREVIEW_SHARE, hover_sample=preview_hover_sample(),
                                          raster_from=raster_from(),
                                          axes=projection.axis_titles(len(excluded), view))
    return sc, len(rows)


def _cold(corpus_name: str) -> bool:
    """Whether most of the corpus's vector store is out of the page cache (never for an in-memory matrix)."""
    share = vectorstore.resident_share(resources.search_context(corpus_name).vectors)
    return share is not None and share < float(os.environ.get("SEMANNO_SCATTER_PREVIEW_BELOW", 0.9))


@st.cache_resource(show_spinner=False)
def _drawn() -> set:
    """Group states whose full scatter this server has made (they need no preview again)."""
    return set()


def needs_preview(key: tuple, n: int) -> bool:
    """Whether this group state gets a first look before its full scatter: a large corpus without a sketch
    (a sketch is read in ~1 s even from a cold disk, a twelfth of the store), a state not drawn yet by this
    server, its store mostly out of the page cache."""
    return (not key[-1] and n >= int(os.environ.get("SEMANNO_SCATTER_PREVIEW_FROM", 2_000_000))
            and key not in _drawn() and _cold(key[0]))


def drawn(key: tuple) -> None:
    """Remember that this server has made the full scatter of ``key``."""
    seen = _drawn()
    if len(seen) > 256:  # a memory of recent states, not a log
        seen.clear()
    seen.add(key)
