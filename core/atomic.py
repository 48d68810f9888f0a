"""Atomic file writes: write to a temporary file in the same folder, fsync, rename. And an exclusive
lock on a file, for jobs that must not run twice at once on the same data."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from core.safeload import load_npy

log = logging.getLogger(__name__)


@contextmanager
def atomic_path(target: Path, cache: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success. Its folder is made where
    missing, except for a ``cache`` (what a page computes once and keeps beside an import): its folder gone means
    the corpus was imported again meanwhile, and it must not come back (FileNotFoundError: the caller keeps what it
    computed in memory, as where the folder cannot be written)."""
    target = Path(target)
    if cache and not target.parent.is_dir():
        raise FileNotFoundError(f"{target.parent} is gone (the corpus was imported again)")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp_path, 0o644)  # mkstemp creates 0600; outputs are ordinary files
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def save_npy(target: Path, array: np.ndarray, cache: bool = False) -> None:
    with atomic_path(target, cache) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)


def kept_codes(path: Path, n: int, compute: Callable[[], np.ndarray], what: str,
               older: str | None = None) -> np.ndarray:
    """One int32 code per row of a corpus (``n`` rows), derived from it and kept beside it: read from ``path`` when it
    holds ``n`` of them, otherwise ``compute()``d and written there (kept in memory only where the folder cannot be
    written). ``what`` names them in the log; ``older``: a pattern of the files of earlier rules' codes, removed."""
    path = Path(path)
    if older:
        try:
            for old in path.parent.glob(older):
                if old != path:
                    old.unlink()
        except OSError:  # a read-only corpus folder
            pass
    if path.exists():
        try:
            codes = load_npy(path, mmap_mode="r")
            if codes.shape == (n,) and codes.dtype == np.int32:
                return np.asarray(codes)
            log.warning("%s: %s rows for %s texts; %s computed again", path, codes.shape, n, what)
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s); %s computed again", path, exc, what)
    codes = np.asarray(compute(), dtype=np.int32)
    try:
        save_npy(path, codes, cache=True)
    except OSError as exc:  # a read-only corpus folder
        log.warning("%s cannot be written (%s); the %s are kept in memory only", path, exc, what)
    return codes


def save_json(target: Path, obj: Any, cache: bool = False) -> None:
    with atomic_path(target, cache) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str), encoding="utf-8")


def save_parquet(target: Path, frame, cache: bool = False) -> None:
    with atomic_path(target, cache) as tmp:
        frame.to_parquet(tmp, index=False)


class Busy(RuntimeError):
    """Another process holds the lock."""


def try_lock(lock_file: Path, wait: bool = False) -> int | None:
    """An exclusive lock on ``lock_file`` (created if needed): the descriptor that holds it, or None where another
    holds it (``wait``: until it is free). Closing the descriptor (and every copy a child process was handed)
    releases it; so does the operating system when its holder exits, even on a kill."""
    import fcntl

    lock_file = Path(lock_file)
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created if needed) for the block; Busy at once when
    another process holds it. The operating system releases it when the holder exits, even on a kill."""
    import fcntl

    fd = try_lock(lock_file)
    if fd is None:
        raise Busy(str(lock_file))
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
