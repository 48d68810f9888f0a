"""The corpus's text column as an uncompressed Arrow file the server memory-maps.

Read from corpus.parquet, every text sat in the server's heap: 1.3 GB of its 2.1 GB at ten million
tweets, read and decompressed at every start (several seconds). Written once beside corpus.parquet as
one Arrow array of ``large_string`` (64-bit offsets: more than 2 GB of text is allowed), the column is
mapped instead: opening costs nothing, a page of ten texts reads ten texts' pages, and those pages are
the kernel's file cache (dropped under pressure, read again, shared by every server process), not the
heap. The file is a cache of corpus.parquet: absent, unreadable, or not matching the Parquet file
(rows, or the Parquet file's size recorded in it), it is not used and the texts come from Parquet.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa

log = logging.getLogger(__name__)

FILE = "texts.arrow"
_SOURCE_BYTES = b"corpus.parquet bytes"


def file_of(data: Path) -> Path:
    return Path(data) / FILE


def write(data: Path, texts, parquet: Path) -> Path | None:
    """Write ``texts`` (an Arrow array, chunked array or pandas column of strings) as FILE in ``data``, atomically,
    recording the size of ``parquet`` (the file it mirrors). Returns the file, or None where it could
    not be written (a read-only data root or a full disk: the corpus then reads its texts from
    Parquet, as before)."""
    from core.atomic import atomic_path

    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):  # a pandas column
        texts = texts.array.__arrow_array__() if hasattr(texts.array, "__arrow_array__") \
            else pa.array(texts.astype(object), pa.large_string())
    texts = texts if isinstance(texts, pa.ChunkedArray) else pa.chunked_array([texts])
    if texts.type != pa.large_string():
        texts = texts.cast(pa.large_string())
    one = texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    schema = pa.schema([pa.field("text", pa.large_string())],
                       metadata={_SOURCE_BYTES: str(Path(parquet).stat().st_size).encode()})
    target = file_of(data)
    try:
        with atomic_path(target) as tmp:
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
                writer.write_batch(pa.record_batch([one], schema=schema))
    except OSError as exc:
        log.warning("could not write %s (%s); the texts are read from corpus.parquet", target, exc)
        return None
    return target


def read(data: Path, parquet: Path, rows: int) -> pa.ChunkedArray | None:
    """The mapped text column (one chunk, ``large_string``), or None where FILE is absent or is not the
    text column of ``parquet`` with ``rows`` rows (then the caller reads Parquet)."""
    f = file_of(data)
    if not f.exists():
        return None
    try:
        reader = pa.ipc.open_file(pa.memory_map(str(f)))
        schema = reader.schema
        size = (schema.metadata or {}).get(_SOURCE_BYTES)
        if schema.names != ["text"] or schema.field("text").type != pa.large_string() \
                or size != str(Path(parquet).stat().st_size).encode() or reader.num_record_batches != 1:
            log.warning("%s does not match %s; the texts are read from it", f, Path(parquet).name)
            return None
        col = reader.get_batch(0).column(0)
    except (OSError, pa.ArrowInvalid) as exc:
        log.warning("%s is unreadable (%s); the texts are read from corpus.parquet", f, exc)
        return None
    if len(col) != rows:
        log.warning("%s has %d rows, corpus.parquet %d; the texts are read from it", f, len(col), rows)
        return None
    return pa.chunked_array([col])
