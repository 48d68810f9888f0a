"""Method parameters, one mechanism for every registry (search methods and clustering methods): the
defaults a method declares, a given value checked against its default's kind and the method's limits,
an unknown name refused. A misspelt or malformed parameter is an error that names it, never silently
dropped or turned into a crash deep in a fit."""

from __future__ import annotations

import inspect
from typing import Any, Callable

MAX_COUNT = 10_000_000  # the largest whole-number parameter any method takes (epochs, steps, sizes, ...)


def check_param(label: str, name: str, value: Any, default: Any, limits: tuple | None = None) -> None:
    """ValueError naming the parameter when ``value`` is not of the kind its default is, not a finite
    number, or outside ``limits`` (inclusive; for a word, a frozenset of the words allowed) and the
    generic bound on counts."""
    import math

    def fail(why: str):
        raise ValueError(f"{label}: parameter {name!r} {why}, got {str(value)[:40]!r}")

    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if default is None:  # any value: the method checks it (a model name, a date, a list of authors)
        return
    if isinstance(default, bool):
        if not isinstance(value, bool):
            fail("must be True or False")
        return
    if isinstance(default, tuple):
        if not isinstance(value, (tuple, list)) or not value or not all(
                isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_COUNT for v in value):
            fail("must be a list of positive whole numbers, e.g. (256, 64)")
        return
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool):
            fail("must be a whole number")
    elif isinstance(default, float):
        if not number:
            fail("must be a number")
    elif isinstance(default, str):
        words = limits if isinstance(limits, frozenset) else None  # a word from a fixed list
        count = default == "auto" and words is None  # "auto" or a whole number (K-Means's n_init, niter, sample)
        if isinstance(value, str):
            if words is not None and value not in words:
                fail("must be one of " + ", ".join(sorted(words)))
            if count and value != "auto":
                fail("must be 'auto' or a whole number")
        elif not (count and isinstance(value, int) and not isinstance(value, bool)):
            fail("must be 'auto' or a whole number" if count else "must be a word")
    if number:
        if not math.isfinite(value):
            fail("must be a finite number")
        lo, hi = limits if limits else (-math.inf, MAX_COUNT if isinstance(value, int) else math.inf)
        if isinstance(value, int) and limits is None and value < 0:
            fail("must not be negative")
        if not lo <= value <= hi:
            fail(f"must be between {lo:g} and {hi:g}")




def resolve(label: str, defaults: dict, limits: dict, given: dict) -> dict:
    """The defaults updated by ``given``; ValueError naming an unknown parameter, or a value of the
    wrong kind or out of bounds (``--param n_init=[1,2]``, ``tol=nan``, ``n_init=1e9``)."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(f"{label} has no parameter {', '.join(map(repr, unknown))}; "
                         f"it takes: {', '.join(sorted(defaults)) or 'none'}")
    for name, value in given.items():
        check_param(label, name, value, defaults[name], limits.get(name))
    return {**defaults, **given}


def keyword_defaults(fn: Callable) -> dict:
    """The keyword-only parameters of ``fn`` with their defaults: a search method's parameters are its
    function's own (one place to read them)."""
    return {p.name: p.default for p in inspect.signature(fn).parameters.values()
            if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
