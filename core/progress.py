"""Progress of long work, one shape for every job: ``progress(step, total, info)``.

A job in ``core/`` calls it after each step it can count (an epoch, a batch of texts, an iteration);
``info`` holds the step's figures (loss, objective, texts/s, ...). Front ends turn it into a tqdm bar
(command line) or an ``st.progress`` bar (pages); :class:`Clock` says elapsed and remaining time for
either.
"""

from __future__ import annotations

import time
from typing import Callable

# progress(step, total, info)
Progress = Callable[[int, int, dict], None]


def duration(seconds: float) -> str:
    """``75`` -> ``1 min 15 s``; ``4000`` -> ``1 h 07 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Clock:
    """Elapsed time since it was made, and the time left at a given share of the work done (from the
    mean pace so far)."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def remaining(self, done: float, total: float) -> float | None:
        """Seconds left, or None before any work is done."""
        if done <= 0 or total <= 0:
            return None
        return self.elapsed * (total - done) / done

    def line(self, done: float, total: float) -> str:
        """``12 s elapsed, about 40 s left`` (``done`` and ``total`` in any unit)."""
        left = self.remaining(done, total)
        return f"{duration(self.elapsed)} elapsed" + (f", about {duration(left)} left" if left is not None and
                                                     done < total else "")
