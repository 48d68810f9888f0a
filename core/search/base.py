"""What every search method shares: the context it searches, its result, its preconditions."""

from __future__ import annotations

import functools
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np

from core import timezones
from core.params import keyword_defaults, resolve
from core.rows import as_rows, rows_without, unique_rows  # noqa: F401  (re-exported: the methods import them from here)

if TYPE_CHECKING:
    import pandas as pd

    from core.search.index import VectorIndex
    from core.search.keyword import KeywordIndex, QuoteIndex
    from core.search.lexical import WordIndex


class NotApplicable(ValueError):
    """A method cannot run on the current labels; the message is the reason shown to the user."""


@dataclass(frozen=True)
class Ranked:
    """Rows (corpus positions) best first, with their scores; never a labelled row."""

    rows: np.ndarray  # int64
    scores: np.ndarray  # float32, non-increasing (but a keyword search's quotes found by what they quote: spread)
    method: str
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)


class SearchFn(Protocol):
    def __call__(self, ctx: "SearchContext", included: np.ndarray, excluded: np.ndarray,
                 k: int | None = 10, **params: Any) -> Ranked: ...


@dataclass(frozen=True)
class Method:
    name: str  # registry key, e.g. "cos"
    label: str  # button text, e.g. "COS"
    help: str
    min_included: int
    min_excluded: int
    search: SearchFn
    # what else the method needs from the context (a trained model, ...): None when all is there,
    # otherwise the reason in words
    requires: Callable[["SearchContext"], str | None] | None = None
    limits: dict = field(default_factory=dict)  # parameter name -> (lowest, highest), where it matters

    @property
    def defaults(self) -> dict:
        """The method's parameters with their defaults: its search function's keyword-only arguments."""
        return keyword_defaults(self.search)

    def params(self, given: dict) -> dict:
        """``given`` checked like every method's parameters (core.params: the kind of its default, the
        limits; an unknown name is refused), with the defaults filled in."""
        return resolve(self.label, self.defaults, self.limits, given)

    def reason_not_applicable(self, n_included: int, n_excluded: int,
                              ctx: "SearchContext | None" = None) -> str | None:
        """None when the method can run; otherwise what is missing, in words."""
        if ctx is not None and self.requires is not None and (reason := self.requires(ctx)):
            return reason
        if need := self.missing(n_included, n_excluded):
            return f"{self.label} needs {need}"
        return None

    def missing(self, n_included: int, n_excluded: int) -> str | None:
        """What labels the method still waits for, in words ("at least 1 excluded text"); None when it has them."""
        missing = []
        if n_included < self.min_included:
            missing.append(f"at least {self.min_included} included")
        if n_excluded < self.min_excluded:
            missing.append(f"at least {self.min_excluded} excluded")
        if missing:
            return " and ".join(missing) + " text" + ("s" if max(self.min_included, self.min_excluded) > 1 else "")
        return None

    def check(self, included: np.ndarray, excluded: np.ndarray, ctx: "SearchContext | None" = None) -> None:
        reason = self.reason_not_applicable(len(included), len(excluded), ctx)
        if reason:
            raise NotApplicable(reason)


@dataclass(frozen=True)
class SearchContext:
    """Everything a search may read, built once per corpus and shared (never mutated).

    ``keyword_index`` (the texts, for keyword search) and ``word_index`` (Suggest's word
    features) are optional: a method that needs one and finds None falls back or says why."""

    index: "VectorIndex"
    keyword_index: "KeywordIndex | None" = None
    frame: "pd.DataFrame | None" = None  # the corpus's columns (date/author filters)
    timezone: str = "UTC"  # the corpus's (core.timezones): the date filters' days are days of this zone
    device: str = "cpu"
    seed: int = 0
    word_index: "WordIndex | None" = None
    dac: Any = None  # a trained DAC model (core.cluster.dac.train.Trained), for DAC
    # the corpus's copies (core.copies.Copies): a label goes to a text's copies too, and a search's places go to
    # texts not yet seen (core.annotate). None: every text stands alone
    copies: Any = None
    # the corpus's conversations (core.threads.Threads): Suggest counts the labelled texts of each text's
    # conversation. None: no conversations known
    threads: Any = None
    # the folder of a large corpus's index of what its quotes quote (core.search.keyword.QUOTES, built at import).
    # None: what they quote is joined in memory at the first search that asks
    quotes_folder: Any = None

    @property
    def vectors(self) -> np.ndarray:
        return self.index.vectors

    @functools.cached_property
    def days(self) -> np.ndarray | None:
        """Each row's day in the corpus's zone (:attr:`timezone`: the days its Timeline shows; a tweet of 00:30 in
        Prague is on its own day, not the day before), numbered from the corpus's first, -1 for a row without a
        date; None where the frame has no dates (Suggest's day features). Read from the frame once per context."""
        if self.frame is None or "date" not in self.frame.columns:
            return None
        dates = self.frame["date"]
        if not np.issubdtype(dates.dtype, np.datetime64):
            return None
        dates = timezones.local(dates, self.timezone).to_numpy()
        known = ~np.isnat(dates)
        if not known.any():
            return None
        days = dates.astype("datetime64[D]").astype(np.int64)
        return np.where(known, days - days[known].min(), -1).astype(np.int32)

    @functools.cached_property
    def quotes(self) -> "QuoteIndex | None":
        """What the corpus's quotes quote, for the keyword search's *quoted tweets too* (core.search.keyword): built
        at the first search that asks, once per context; None where the corpus holds no quote."""
        from core.ingest import QUOTED
        from core.search.keyword import QuoteIndex

        if self.frame is None or QUOTED not in self.frame.columns:
            return None
        found = QuoteIndex(self.frame[QUOTED], self.quotes_folder)
        return found if len(found.rows) else None

    @functools.cached_property
    def n_days(self) -> int:
        """How many days :attr:`days` numbers, from the corpus's first to its last (0 where it has no dates)."""
        return 0 if self.days is None else int(self.days.max()) + 1


_THREADS_LOCK = threading.Lock()
_THREADS_USERS = [0, 0]  # [fits running now, torch's thread count before the first of them]
_BLAS = [None, -1]  # [threadpoolctl's controller of the loaded BLAS pools, len(sys.modules) when it was made]


def _blas_controller():
    """threadpoolctl's controller, made once rather than at every fit: finding the loaded libraries took
    0.84 ms of each search on the 2-core AMD EPYC and ~2.7 ms on a 16-core GPU box, where limiting through a
    kept controller takes 0.03 (bench/RESULTS.md, "A sixth lease"). Made again once a module has been
    imported since, since a new library (faiss's own OpenBLAS, say) may have come with it. Called under
    ``_THREADS_LOCK``."""
    if _BLAS[0] is None or _BLAS[1] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        _BLAS[0] = ThreadpoolController()
        _BLAS[1] = len(sys.modules)
    return _BLAS[0]


@contextmanager
def one_thread():
    """Run a fit on the labelled rows with one thread (torch and BLAS). Such fits are small; on two
    threads their thread pools spin-wait on each other and, worse, on any busy process beside the
    server: with a training running, LDA took 0.68 s on two threads against 0.05 s on one
    (bench/RESULTS.md, issue 29). Counted across a server's sessions (threads): the first fit in sets
    one thread, the last one out restores the count."""
    import torch

    with _THREADS_LOCK:
        if _THREADS_USERS[0] == 0:
            _THREADS_USERS[1] = torch.get_num_threads()
            torch.set_num_threads(1)
        _THREADS_USERS[0] += 1
        blas = _blas_controller()
    try:
        with blas.limit(limits=1, user_api="blas"):
            yield
    finally:
        with _THREADS_LOCK:
            _THREADS_USERS[0] -= 1
            if _THREADS_USERS[0] == 0:
                torch.set_num_threads(_THREADS_USERS[1])
