"""The scatter's hover sample: a fixed random set of a corpus's rows and their texts, kept in a small file.

Above a few hundred thousand texts the scatter draws the unlabelled rows as a density image and carries
the text of a sample of them only (core/plots.py). Drawn anew at every scatter, that sample read a few
thousand texts at random places of the corpus's text column: from a cold disk 0.3-1.2 s at ten million
texts, and because the kernel reads and maps a mapped file's pages in large blocks around each text, most
of the 1.3 GB column ended up in the server's memory (bench/RESULTS.md, issue 29). Here the sample is drawn
once per corpus (at import, or on the first scatter of a corpus imported before) and its texts written to
``hover.parquet`` beside the corpus (about 1 MB at 5,000 texts); every scatter reads that file. The same
rows carry their text at every scatter, whatever is labelled (labelled rows are drawn with their own texts).

A file that does not fit the corpus (not the rows drawn for it, unreadable) is made again; one that cannot be written
(a read-only data root) leaves the sample in memory only.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILE = "hover.parquet"
SIZE = 5000  # rows with their text on hover: the scatter's default
SEED = 0


def draw(n: int, size: int = SIZE, seed: int = SEED) -> np.ndarray:
    """The sample's rows, sorted: ``size`` distinct rows of ``n`` (every row when there are fewer)."""
    if n <= size:
        return np.arange(n, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False)).astype(np.int64)


def load(data: Path, n: int, size: int = SIZE) -> tuple[np.ndarray, list[str]] | None:
    """(rows, texts) of the saved sample of a corpus of ``n`` rows, or None where there is none that fits: the
    file's rows must be :func:`draw`'s for this corpus (another corpus's, or another size's, are not)."""
    import pandas as pd

    f = Path(data) / FILE
    if not f.exists():
        return None
    try:
        frame = pd.read_parquet(f, columns=["row", "text"])
        rows = frame["row"].to_numpy(dtype=np.int64)
        texts = frame["text"].tolist()
    except Exception as exc:  # unreadable or of another shape: made again
        log.warning("%s is unreadable (%s); drawing the hover sample again", f, exc)
        return None
    if not np.array_equal(rows, draw(n, size)) or any(not isinstance(t, str) for t in texts):
        log.warning("%s is not this corpus's hover sample (%d rows, the corpus %d); drawing it again",
                    f, len(rows), n)
        return None
    return rows, texts


def save(data: Path, rows: np.ndarray, texts: list[str]) -> None:
    import pandas as pd

    from core.atomic import save_parquet

    try:
        save_parquet(Path(data) / FILE, pd.DataFrame({"row": rows, "text": pd.Series(texts, dtype=object)}),
                     cache=True)
    except OSError as exc:  # a read-only data root: kept in memory only
        log.warning("could not save the hover sample to %s (%s)", Path(data) / FILE, exc)


def sample(data: Path | None, texts, size: int = SIZE) -> tuple[np.ndarray, list[str]]:
    """(rows, texts) of a corpus's hover sample: read from ``data`` where it was saved, else drawn, its texts
    taken from ``texts`` (a column with a positional ``take``, a list or an array) and saved to ``data``."""
    n = len(texts)
    got = load(data, n, size) if data is not None else None
    if got is not None:
        return got
    rows = draw(n, size)
    taken = texts.take(rows) if hasattr(texts, "take") else [texts[i] for i in rows]
    out = [str(t) for t in taken]
    if data is not None:
        save(data, rows, out)
    return rows, out
