"""Shared set-up for the CLI jobs: logging to stderr, clean error exits."""

from __future__ import annotations

import logging
from typing import Callable

from core.db import DatabaseError


def quiet_logging() -> None:
    """INFO logging for the project's jobs, without what libraries say at that level that is harmless:
    faiss reports each optimised build it could not load ("Could not load library with AVX512 support
    ... ModuleNotFoundError") before it loads the one this CPU has."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("faiss", "faiss.loader"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    quiet_logging()
    try:
        return main(argv)
    except (ValueError, FileNotFoundError, DatabaseError) as exc:  # InputError and CorpusError are ValueErrors
        logging.getLogger("semanno").error("%s", exc)
        return 2
    except KeyboardInterrupt:
        logging.getLogger("semanno").error("interrupted; rerun the same command to resume")
        return 130



def whole(lo: int, what: str = "a whole number"):
    """An argparse type: a whole number >= ``lo`` (argparse names the option in its error)."""
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {value}")
        return value

    return parse


def number(lo: float, hi: float, lo_open: bool = False, hi_open: bool = False):
    """An argparse type: a finite number in [lo, hi] (``lo_open``/``hi_open``: that end excluded)."""
    import argparse
    import math

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < lo or value > hi or (lo_open and value == lo) or (hi_open and value == hi):
            raise argparse.ArgumentTypeError(f"must be in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}, "
                                             f"got {text}")
        return value

    return parse


def add_engine_args(p) -> None:
    """``--engine``, ``--ray-address`` and ``--ray-actors``: where a job embeds its texts (core.corpus.ENGINE_OPTIONS),
    the same for every job that embeds."""
    p.add_argument("--engine", choices=["process", "ray"], default="process",
                   help="embed here (default) or as a Ray Data job: a local Ray, or the cluster at --ray-address "
                        "(needs pip install -r requirements-ray.txt)")
    p.add_argument("--ray-address", help="a Ray cluster (e.g. ray://head:10001 or head:6379); default: start Ray here")
    p.add_argument("--ray-actors", type=whole(1), help="embedding actors (default: one per GPU, else one per 2 CPUs)")


def engine_args(a) -> dict:
    """The parsed :func:`add_engine_args` as core.corpus's engine options."""
    return {"engine": a.engine, "ray_address": a.ray_address, "ray_actors": a.ray_actors}
