"""The vectors of a large corpus on disk as fp16, memory-mapped: one file that is at once a FAISS index
(an fp16 scalar-quantizer flat index, opened with ``IO_FLAG_MMAP_IFC``: searched in place with SIMD, no
copy in memory) and, past its 81-byte header, a plain row-major (N, D) fp16 array that numpy maps for
gathering rows. Nothing holds the matrix in fp32: 10 million 384-d rows are 7.7 GB on disk and in the
page cache, not in the server's own memory.

The file is written block by block (the import never holds the matrix either): FAISS's header for
this index type is made from a one-row index and its two sizes (rows; code bytes) patched.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable

import numpy as np

from core.rows import unique_rows

FILE = "vectors.f16.faiss"
HEADER = 81  # bytes before the codes, for an fp16 IndexScalarQuantizer (magic, d, ntotal, ..., code bytes)
_NTOTAL, _CODE_BYTES = slice(8, 16), slice(73, 81)


def _header(n: int, dim: int) -> bytes:
    import tempfile

    import faiss

    one = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    one.add(np.zeros((1, dim), np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        faiss.write_index(one, str(Path(tmp) / "one"))
        raw = bytearray((Path(tmp) / "one").read_bytes())
    if len(raw) != HEADER + 2 * dim or struct.unpack("<q", raw[_NTOTAL])[0] != 1 or \
            struct.unpack("<Q", raw[_CODE_BYTES])[0] != 2 * dim:
        raise RuntimeError("this FAISS writes fp16 indexes in a layout this tool does not know")
    raw[_NTOTAL] = struct.pack("<q", n)
    raw[_CODE_BYTES] = struct.pack("<Q", n * dim * 2)
    return bytes(raw[:HEADER])


def write(path: Path, blocks: Iterable[np.ndarray], n: int, dim: int) -> None:
    """Write ``n`` rows of dimension ``dim``, given as blocks of rows in order, as the store at ``path``
    (atomically). The rows are stored as fp16 (unit rows lose ~1e-3 of a cosine)."""
    from core.atomic import atomic_path

    written = 0
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(_header(n, dim))
            for block in blocks:
                block = np.ascontiguousarray(block, dtype=np.float16)
                if block.ndim != 2 or block.shape[1] != dim:
                    raise ValueError(f"a block of shape {block.shape} does not fit {dim}-d vectors")
                fh.write(block.tobytes())
                written += len(block)
        if written != n:
            raise ValueError(f"{written:,} rows were written where {n:,} were announced")


def create(path: Path, n: int, dim: int) -> np.memmap:
    """A new store at ``path`` (not atomic: give it a temporary name) as a writeable (N, D) fp16 map
    whose rows the caller fills in any order, then flushes."""
    with open(path, "wb") as fh:
        fh.write(_header(n, dim))
        fh.truncate(HEADER + n * dim * 2)  # sparse until written; a full disk fails on the writes
    return np.memmap(path, dtype=np.float16, mode="r+", offset=HEADER, shape=(n, dim))


def rows_and_dim(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        head = fh.read(HEADER)
    dim = struct.unpack("<i", head[4:8])[0]
    return struct.unpack("<q", head[_NTOTAL])[0], dim


def codes(path: Path) -> np.memmap:
    """The rows as a read-only (N, D) fp16 memory map."""
    n, dim = rows_and_dim(path)
    if os.path.getsize(path) != HEADER + n * dim * 2:
        raise ValueError(f"{Path(path).name}: {os.path.getsize(path):,} bytes, expected {HEADER + n * dim * 2:,} "
                         f"for {n:,} rows of {dim} fp16 values (a truncated file?)")
    return np.memmap(path, dtype=np.float16, mode="r", offset=HEADER, shape=(n, dim))


def index(path: Path):
    """The store as a FAISS index searched in place (memory-mapped)."""
    import faiss

    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)


STEP = 4096  # rows widened to float32 at a time: 6 MB, in cache for the product that follows


def _blocks(x: np.ndarray):
    """(start, the rows as a float32 torch tensor) for each block of a (possibly memory-mapped,
    read-only) fp16 matrix: torch widens them (its vectorised conversion; numpy widens element by
    element, 1.6 s a million rows) into one reused buffer; rows are copied, never written back."""
    import torch

    n, dim = x.shape
    raw = np.empty((min(STEP, n), dim), dtype=np.float16)
    wide = torch.empty((min(STEP, n), dim), dtype=torch.float32)
    where = _mapped_file(x) if n > STEP else None
    ahead = _Ahead(where[0], where[1], where[1] + x.nbytes) if where else None
    try:
        for s in range(0, n, STEP):
            m = min(STEP, n - s)
            if ahead is not None:
                ahead.at(where[1] + s * raw.strides[0])
            np.copyto(raw[:m], x[s:s + m])
            wide[:m].copy_(torch.from_numpy(raw[:m]))
            yield s, wide[:m]
    finally:
        if ahead is not None:
            ahead.stop()


def times(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` (float32, (N, k)) for fp16 rows and a few columns w (D, k), exact to the float32 product,
    in one pass. Computed as ``w.T @ rows.T``: torch's ``rows @ w`` with k = 2 ran a slow general product
    (2 ms a block against 0.3), and numpy's BLAS threads beside torch's fought over two cores. Ten
    million rows: ~2.5 s on 2 cores, against 8 s for FAISS's search with k = N (which also sorts) and
    4.9 s for torch's fp16 product (within 2e-4 only)."""
    import torch

    w = np.asarray(w, np.float32)
    w2 = w.reshape(-1, 1) if w.ndim == 1 else w
    out = np.empty((len(x), w2.shape[1]), np.float32)
    if len(x):
        wt = torch.from_numpy(np.array(w2.T, dtype=np.float32, order="C"))  # a copy: w may be read-only
        part = torch.empty((w2.shape[1], min(STEP, len(x))), dtype=torch.float32)
        res = torch.from_numpy(out)
        for s, rows in _blocks(x):
            torch.matmul(wt, rows.t(), out=part[:, :len(rows)])
            res[s:s + len(rows)] = part[:, :len(rows)].t()
    return out[:, 0] if w.ndim == 1 else out


def row_sum(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The sum of the given rows of fp16 x (float64 (D,)), in one sequential pass with a weight per row
    (how often it is given): for a large share of the corpus (a keyword's 1.7M hits of 10M) gathering the rows one by one
    took 5 s."""
    import torch

    weight = np.bincount(np.asarray(rows, np.int64), minlength=len(x)).astype(np.float32)  # a row twice counts twice
    total = torch.zeros(x.shape[1], dtype=torch.float64)
    wt = torch.from_numpy(weight)
    for s, block in _blocks(x):
        total += (wt[s:s + len(block)] @ block).double()
    return total.numpy()


PAGE = 4096


def _mapped_file(x) -> tuple[str, int] | None:
    """(file, byte offset of row 0) when ``x`` is a whole memory-mapped file past its header (a view of
    part of one carries its parent's offset, so it is not taken for one)."""
    name, offset = getattr(x, "filename", None), getattr(x, "offset", None)
    if not isinstance(x, np.memmap) or name is None or offset is None or not x.flags.c_contiguous:
        return None
    try:
        whole = os.path.getsize(name) == int(offset) + x.nbytes
    except OSError:
        return None
    return (name, int(offset)) if whole else None


@contextmanager
def foreground(x: np.ndarray):
    """While a page reads part of a mapped store itself (a sample's rows, a preview's blocks), the
    background read of the same file (``warm``) waits, as it does for a scan: both read one disk, and
    this reader is on the user's path. Nothing for an array that is not a mapped store."""
    where = _mapped_file(x)
    if where is None:
        yield
        return
    path = os.path.realpath(where[0])
    _scan_started(path)
    try:
        yield
    finally:
        _scan_ended(path)


def take(x: np.ndarray, rows) -> np.ndarray:
    """``x[rows]`` as float32. For a memory-mapped store the rows' pages are first asked of the kernel all
    at once (``posix_fadvise WILLNEED``, one call per run of pages), so the disk reads them in parallel
    rather than one page fault after another: a cold 10M store answered 2,000 scattered rows in ~6 s,
    one random read at a time (the scatter's LDA sample, the corpus check at open)."""
    rows = np.asarray(rows, np.int64)
    where = _mapped_file(x) if len(rows) else None
    if where is None:
        return np.asarray(x[rows], dtype=np.float32)
    name, offset = where
    row_bytes = x.shape[1] * x.itemsize
    first = (offset + rows * row_bytes) // PAGE
    last = (offset + (rows + 1) * row_bytes - 1) // PAGE
    pages = unique_rows(first, last)  # a row may straddle two pages
    runs = np.split(pages, np.flatnonzero(np.diff(pages) > 1) + 1)
    with foreground(x):
        _advise(name, [(int(run[0]) * PAGE, (int(run[-1]) - int(run[0]) + 1) * PAGE) for run in runs])
        return np.asarray(x[rows], dtype=np.float32)


def _advise(name: str, ranges) -> None:
    """``posix_fadvise WILLNEED`` for each (start, length) byte range of a file: the kernel starts reading
    them all at once."""
    if not hasattr(os, "posix_fadvise"):
        return
    fd = os.open(name, os.O_RDONLY)
    try:
        for start, length in ranges:
            os.posix_fadvise(fd, start, length, os.POSIX_FADV_WILLNEED)
    finally:
        os.close(fd)


def advise_blocks(x: np.ndarray, starts, length: int) -> None:
    """Ask for the rows [s, s + length) of each start of a mapped store at once (nothing for other arrays)."""
    where = _mapped_file(x)
    if where is not None:
        name, offset = where
        row_bytes = x.shape[1] * x.itemsize
        _advise(name, [(offset + int(s) * row_bytes, int(min(length, len(x) - s)) * row_bytes) for s in starts])


def resident_share(x: np.ndarray) -> float | None:
    """The share of a memory-mapped store's pages in the page cache now (``mincore``), None for an array
    that is not one (or where the platform cannot say). A 10M store: a 1.9 MB answer, milliseconds."""
    libc = _libc()
    if libc is None or _mapped_file(x) is None or not x.nbytes:
        return None
    start = x.ctypes.data - x.ctypes.data % PAGE
    length = x.ctypes.data + x.nbytes - start
    vec = np.zeros(-(-length // PAGE), np.uint8)
    if libc.mincore(start, length, vec.ctypes.data) != 0:
        return None
    return float(np.count_nonzero(vec & 1)) / len(vec)


def _available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


WARM_CHUNK = 64 << 20  # bytes read into the page cache at a time


_LIBC = None
_MAP_FAILED = (1 << 64) - 1  # (void *) -1


def _libc():
    """libc's mmap/munmap/mincore through ctypes, which lets go of the GIL during the call (Python's own
    ``mmap.mmap`` with MAP_POPULATE held it for the whole read: the server's other threads stalled).
    None where the platform has no MAP_POPULATE."""
    global _LIBC
    if _LIBC is None:
        import ctypes
        import mmap

        if not hasattr(mmap, "MAP_POPULATE"):
            _LIBC = False
        else:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long]
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            _LIBC = libc
    return _LIBC or None


def populate(fd: int, start: int, length: int) -> bool:
    """Read bytes [start, start + length) of an open file into the page cache and return once they are
    there, without copying them into this process: a shared read-only mapping made with MAP_POPULATE
    (the kernel reads the range in large requests) and dropped at once. A cold 10M store (7.7 GB) is read
    in ~3.5 s this way on this machine, where a scan's page faults took 11-16 s and ``posix_fadvise
    WILLNEED`` read only the first 232 MB. False where it cannot (no MAP_POPULATE; the hint is then given
    instead)."""
    import mmap

    libc = _libc()
    length += start % mmap.ALLOCATIONGRANULARITY  # a mapping starts at a multiple of the granularity
    start -= start % mmap.ALLOCATIONGRANULARITY
    if libc is None:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, start, length, os.POSIX_FADV_WILLNEED)
        return False
    addr = libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED | mmap.MAP_POPULATE, fd, start)
    if addr is None or addr == _MAP_FAILED:
        return False
    libc.munmap(addr, length)
    return True


def _read_ahead(path: Path, size: int, start: int = 0, limit=None) -> None:
    """Read the file from ``start`` into the page cache chunk by chunk; ``limit(position)`` may block to keep
    the read a bounded distance ahead of a scan, and returns False to stop."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        for pos in range(start, size, WARM_CHUNK):
            if limit is not None and not limit(pos):
                return
            populate(fd, pos, min(WARM_CHUNK, size - pos))
    except OSError:
        pass  # reading ahead is a hint: a file replaced or gone meanwhile is not an error
    finally:
        os.close(fd)


READ_AHEAD = 512 << 20  # how far (bytes) a scan's reader may run ahead of it


class _Ahead:
    """A scan's reader: a daemon thread reads the mapped file into the page cache (``populate``) at most
    ``READ_AHEAD`` bytes ahead of where the scan is, so a cold store is read in large requests while the
    scan computes, instead of page fault by page fault (a cold 10M projection: 11-16 s, the store's
    7.7 GB read at ~0.5-0.7 GB/s). On pages already cached it costs next to nothing (0.05 s for 7.7 GB)."""

    def __init__(self, path: str, start: int, stop: int):
        self._pos, self._stopped, self._path = start, False, os.path.realpath(path)
        self._cond = threading.Condition()
        _scan_started(self._path)
        self.thread = threading.Thread(target=_read_ahead, args=(Path(path), stop, start, self._wait),
                                       name="read ahead", daemon=True)
        self.thread.start()

    def _wait(self, pos: int) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._stopped or pos - self._pos <= READ_AHEAD)
            return not self._stopped

    def at(self, pos: int) -> None:
        with self._cond:
            self._pos = pos
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            self._cond.notify_all()
        _scan_ended(self._path)


_SCANS: dict[str, int] = {}  # file -> readers on the user's path now (scans, foreground reads)
_SCANNING = threading.Condition()


def _scan_started(path: str) -> None:
    with _SCANNING:
        _SCANS[path] = _SCANS.get(path, 0) + 1


def _scan_ended(path: str) -> None:
    """One reader of ``path`` done; a background read waiting on the file goes on once none is left."""
    with _SCANNING:
        _SCANS[path] -= 1
        _SCANNING.notify_all()


def _after_scans(path: str):
    """A background read's pace: it waits while a scan reads the same file ahead of itself (that reader is
    on the user's path; two readers of one file only take the two cores from each other)."""
    def limit(_pos: int) -> bool:
        with _SCANNING:
            _SCANNING.wait_for(lambda: not _SCANS.get(path))
        return True
    return limit


def _background(path: Path, size: int) -> None:
    """``warm``'s thread: the lowest CPU priority (on Linux a thread has its own nice value; reading a file
    here is CPU work in the kernel, which otherwise slowed the corpus's opening beside it by ~2.5 s at 10M),
    then the whole file read, pausing while a scan reads it."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass
    _read_ahead(path, size, 0, _after_scans(os.path.realpath(path)))


def warm(path: Path, share: float = 0.5) -> threading.Thread | None:
    """Read the store into the page cache in the background (a daemon thread, see ``populate``), so the
    first scan after the server opens a corpus (the scatter's projection, a search) does not wait for the
    disk: at 10M rows that is 7.7 GB. The thread runs at the lowest CPU priority and pauses while a scan
    reads the same file ahead of itself. Skipped when the file is larger than ``share`` of the memory
    available now, where it would only push other pages out. Returns the thread (None when skipped)."""
    size = os.path.getsize(path)
    avail = _available_bytes()
    if avail is None or size > share * avail:
        return None
    thread = threading.Thread(target=_background, args=(Path(path), size), name=f"warm {Path(path).name}",
                              daemon=True)
    thread.start()
    return thread
