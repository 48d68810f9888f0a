"""A JSON file of posts read as a stream: one object a line (JSONL, twarc2's pages of API v2 responses) or an array
of them (a scraper's ``.json``, a Twitter archive's ``tweets.js``), each object cut down to what the import reads as
it is read: its own plain values, and of the objects and lists it nests (an API's user, entities, the tweet it
retweets) only the fields named in ``paths``. Held whole, 300,000 tweets of Twitter's API v1.1 took 5.7 GB to read;
a file of millions could not be read on one machine.

Telegram Desktop's export (``result.json``: one object, a chat's messages in its ``messages``, or every chat's in an
export of all data) and DiscordChatExporter's of a channel are read a message at a time too (:func:`_read_export`,
by ``ijson``'s incremental parser). Another file that is one object (an API response saved over several lines) is
not read here (:func:`read` returns None): :func:`core.ingest._parse_json` reads it whole."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd

from core import platforms

BLOCK = 1 << 20  # what an array is read by
CHUNK = 10_000  # objects made a frame at a time (held whole until then)
LONGEST = 64 << 20  # an array's element longer than this is taken as a fault, not read on to the file's end
HALF = re.compile("[\ud800-\udfff]")  # half of a character cut in two: what a JSON escape such as \ud83d alone reads as


def _whole(value, halves: list):
    """``value`` with each half of a character cut in two (a UTF-16 surrogate left alone: a JSON escape ``\\ud83d``
    with no second half, as a tool that cut a text at a length in UTF-16 writes it) made U+FFFD, in nested dicts and
    lists too (:func:`_leaf`, which appends to ``halves`` for each one). A decoder joins a pair's two halves, so a
    half left is alone."""
    if isinstance(value, dict):
        return {k: _whole(v, halves) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v, halves) for v in value]
    return _leaf(value, halves)


def frame_of(records: list, first: int = 0) -> pd.DataFrame:
    """``pd.DataFrame.from_records(records)``; where a string holds half of a character cut in two (which no UTF-8
    text, so no column of strings, can hold) each half is read as U+FFFD, and the rows that held one (0-based, from
    ``first``) are in the frame's ``attrs['halves']``. The file is read, not refused for an emoji cut short."""
    try:
        return pd.DataFrame.from_records(records)
    except UnicodeEncodeError:
        mended, whole = [], []
        for n, record in enumerate(records):
            found: list = []
            whole.append(_whole(record, found))
            if found:
                mended.append(first + n)
        frame = pd.DataFrame.from_records(whole)
        frame.attrs["halves"] = mended
        return frame


def read_records(records: list) -> pd.DataFrame:
    """The records as a frame (:func:`frame_of`), what was mended said in its ``attrs['note']``."""
    frame = frame_of(records)
    halves = frame.attrs.pop("halves", None)
    return with_note(frame, halves_note(halves)) if halves else frame


def halves_note(rows: list[int]) -> str:
    """What the import says of the rows (0-based) :func:`frame_of` mended."""
    shown = ", ".join(f"{n + 1:,}" for n in rows[:5]) + (f" (and {len(rows) - 5:,} more)" if len(rows) > 5 else "")
    return (f"read half of a character cut in two (a JSON escape such as \\ud83d alone: an emoji cut short) as \ufffd "
            f"in {len(rows):,} row(s): {shown}")


def with_note(frame: pd.DataFrame, note: str) -> pd.DataFrame:
    """``frame`` with ``note`` added to its ``attrs['note']`` (what the import reports of how it read the file)."""
    frame.attrs["note"] = "; ".join(filter(None, [frame.attrs.get("note"), note]))
    return frame


def tree(paths: Iterable[str]) -> dict:
    """``paths`` ('user.screen_name', 'referenced_tweets.author.username') as a tree of field names."""
    out: dict = {}
    for path in paths:
        node = out
        for key in path.split("."):
            node = node.setdefault(key, {})
    return out


def slim(value, fields: dict, halves: list | None = None):
    """``value`` (an object a JSON object nests, or a list) cut down to the fields ``fields`` names, at any depth (a
    list: each of its objects so); a plain value as it is. A string kept that holds half of a character cut in two has
    each half made U+FFFD, and True appended to ``halves`` (:func:`_leaf`)."""
    if isinstance(value, dict):  # by the few names asked for, not the object's many
        return {k: slim(value[k], sub, halves) if sub else _leaf(value[k], halves) for k, sub in fields.items()
                if k in value}
    if isinstance(value, list):
        return [slim(v, fields, halves) for v in value]
    return value


def _holds_half(value, fields: dict) -> bool:
    """Whether what :func:`slim` keeps of ``value`` holds half of a character cut in two."""
    found: list = []
    slim(value, fields, found)
    return bool(found)


def _leaf(value, halves: list | None):
    if value.__class__ is str and not value.isascii() and HALF.search(value):
        if halves is not None:
            halves.append(True)
        return HALF.sub("\ufffd", value)
    return value


BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark: no part of the file's JSON


def _open(path: Path, binary: bool = False):
    """The file opened as text, or as bytes (for ``ijson``), gunzipped for .gz; a byte-order mark is not part of it."""
    if binary:
        fh = gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")
        if fh.read(len(BOM)) != BOM:
            fh.seek(0)
        return fh
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _first_text(path: Path) -> str:
    with _open(path) as fh:
        return fh.read(BLOCK)


def _first_line(path: Path, head: str) -> str:
    """The file's first line that is not blank: from ``head`` (its first block) where that holds it whole."""
    head = head.lstrip()
    if "\n" in head:
        return head[:head.index("\n")]
    with _open(path) as fh:  # a first line longer than a block
        return next((line for line in fh if line.strip()), "")


def read(path: Path, paths: Iterable[str]) -> pd.DataFrame | None:
    """The file's objects as a frame, each cut down to what the import reads (:func:`slim`), read a block at a time;
    None where the file is one object (or no JSON this reader knows: the caller reads it whole and names the fault).
    ValueError naming the line (and character) of an object that is no JSON; UnicodeDecodeError, OSError as the file
    raises them."""
    head = _first_text(path)
    start = head.lstrip()[:1]
    if head.lstrip().startswith("window.YTD") or start == "[":  # an array (a Twitter archive's tweets.js assigns one)
        objects = _array(path)
    elif start == "{":
        with _open(path, binary=True) as fh:
            export = _export_kind(fh)
        if export is not None:  # Telegram's or Discord's: a message at a time
            return _read_export(path, export, tree(paths))
        try:
            first = json.loads(_first_line(path, head))
        except ValueError:
            return None  # one object over several lines (an API's response saved), or a first line that is no JSON
        objects = _lines(path)
    else:
        return None
    return _frame(objects, tree(paths))


def _lines(path: Path) -> Iterator[list[dict]]:
    """The objects of a JSONL file, a line each, decoded a batch of lines at a time (:func:`_batch`: one call of the
    decoder)."""
    number = 0
    with _open(path) as fh:
        while batch := _batch(fh):
            try:
                values = json.loads("[" + ",".join(line for line in batch if line.strip()) + "]")
            except json.JSONDecodeError:
                values = None  # the line at fault named below
            if values is None or not all(isinstance(v, dict) for v in values):
                name_fault(batch, number)
                raise ValueError(f"lines {number + 1:,}-{number + len(batch):,} are no JSON objects")  # not reached
            number += len(batch)
            yield values


def _batch(fh) -> list[str]:
    """The file's next lines: :data:`CHUNK` of them, or fewer that hold :data:`BLOCK` characters four times (an
    API's pages of a hundred tweets a line)."""
    out, size = [], 0
    for line in fh:
        out.append(line)
        size += len(line)
        if len(out) >= CHUNK or size >= 4 * BLOCK:
            break
    return out


def name_fault(batch: list[str], number: int = 0) -> None:
    """Raise a ValueError naming the first of ``batch``'s lines (``number`` lines before them) that is no JSON object
    (a decoder names a position in the whole); return where each is one."""
    for n, line in enumerate(batch, number + 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {n:,} is no JSON ({exc.msg} at its character {exc.colno}): "
                             f"{line.strip()[:80]!r}") from None
        if not isinstance(value, dict):
            raise ValueError(f"line {n:,} is no JSON object: {line.strip()[:80]!r}")


_BETWEEN = re.compile(r"[ \t\r\n,]*")  # what comes between an array's objects


def _array(path: Path) -> Iterator[list[dict]]:
    """The objects of a JSON array (after a tweets.js's assignment), decoded from blocks of the file: a block's whole
    objects at once where they nest no objects (a scraper's flat records), else one at a time."""
    decoder = json.JSONDecoder()
    with _open(path) as fh:
        buf, eof = fh.read(BLOCK), False
        lines, column = 0, 0  # the lines before buf's first character, and that line's characters before it
        match = platforms.ARCHIVE.match(buf)
        i = buf.index("[", match.end() if match else 0) + 1
        batches = True  # until a batch fails to read (objects that nest objects): then an object at a time

        def read_on() -> bool:  # the text from i on, and a block more; False at the file's end
            nonlocal buf, i, lines, column, eof
            more = fh.read(BLOCK)
            eof = not more
            newline = buf.rfind("\n", 0, i)
            lines, column = lines + buf.count("\n", 0, i), column + i if newline < 0 else i - newline - 1
            buf, i = buf[i:] + more, 0
            return not eof

        while True:
            i = _BETWEEN.match(buf, i).end()
            if i >= len(buf) or (buf[i] != "]" and len(buf) - i < BLOCK // 2 and not eof):
                if not read_on() and i >= len(buf):
                    raise ValueError(f"the JSON array ends without its ']' (line {lines + 1:,})")
                continue
            if buf[i] == "]":
                return
            cut = buf.rfind("},", i) if batches else -1
            if cut > i:  # the objects up to the last "}," read in one call where it ends one of the array's own
                try:
                    values = json.loads("[" + buf[i:cut + 1] + "]")
                except ValueError:
                    values = None  # "}," ended an object nested in one of them (or is in a string): one at a time
                if values is not None and all(isinstance(v, dict) for v in values):
                    yield values
                    i = cut + 1
                    continue
                batches = False
            try:
                value, end = decoder.raw_decode(buf, i)
            except json.JSONDecodeError as exc:
                if not eof and len(buf) - i < LONGEST:
                    read_on()  # an object longer than what is read yet: decoded again with the file's next block
                    continue
                newline = buf.rfind("\n", 0, exc.pos)
                where = exc.pos - newline if newline >= 0 else column + exc.pos + 1
                raise ValueError(f"{exc.msg}: line {lines + buf.count(chr(10), 0, exc.pos) + 1:,}, "
                                 f"character {where:,}") from None
            if not isinstance(value, dict):
                raise ValueError("a JSON array of objects (one per text) was expected")
            yield [value]
            i = end


TELEGRAM_CHATS = tuple(f"{s}.list" for s in platforms.TELEGRAM_SECTIONS)  # where an export of all data lists chats


def _export_kind(fh) -> str | None:
    """"chat" where ``fh`` (bytes of one object) is Telegram Desktop's export of a chat (its ``messages`` an array),
    "all" where it is an export of all data (chats listed in ``chats.list`` and ``left_chats.list``), "discord" where
    it is DiscordChatExporter's of a channel (its ``guild`` or ``channel`` named before its ``messages``); None where
    it is none of them. Read as far as it takes (an export of all data lists its contacts and sessions first), to the
    end of the first object (a JSONL file's first line) or :data:`LOOKED_THROUGH` of its values at most."""
    import ijson

    discord = False
    try:
        for n, (prefix, event, value) in enumerate(ijson.parse(fh)):
            if event == "start_array" and (prefix == "messages" or prefix in TELEGRAM_CHATS):
                return "discord" if discord and prefix == "messages" else "chat" if prefix == "messages" else "all"
            discord = discord or (event == "map_key" and not prefix and value in platforms.DISCORD_KEYS)
            if n >= LOOKED_THROUGH:
                break
    except (ijson.JSONError, UnicodeDecodeError):  # the second: half a character (ijson's C parser takes it so)
        pass  # no JSON (the reader that reads it whole names the fault), or more than one object (JSONL)
    return None


LOOKED_THROUGH = 1_000_000  # the values of a file that is one object looked through for a Telegram export's


class _Read:
    """What :func:`_export_messages` has read: the messages, and the chats (an export of all data's) they were in."""

    def __init__(self) -> None:
        self.messages = 0
        self.chats: set[str] = set()


def _export_messages(fh, export: str, read: _Read, chunk: int | None = None) -> Iterator[list[dict]]:
    """The messages of export ``export`` (:func:`_export_kind`) in ``fh``, as the import reads them, a batch of up to
    ``chunk`` (:data:`CHUNK`) at a time; ``read`` counts them as they are read."""
    import ijson

    chunk = chunk or CHUNK
    if export in ("chat", "discord"):  # one chat: its messages built by the parser's own (C) builder
        kept = platforms.chat_messages if export == "chat" else platforms.discord_messages
        batch = []
        for m in ijson.items(fh, "messages.item", use_float=True):
            batch.append(m)
            read.messages += 1
            if len(batch) >= chunk:
                yield kept(batch)
                batch = []
        yield kept(batch)
        return
    # every chat's: each chat's id and name (written before its messages) named in each of its messages
    chat, batch, builder, depth = {}, [], None, 0
    starts = {f"{c}.item": f"{c}.item.messages.item" for c in TELEGRAM_CHATS}
    names = {f"{c}.item.{key}": key for c in TELEGRAM_CHATS for key in ("id", "name")}
    for prefix, event, value in ijson.parse(fh, use_float=True):
        if builder is not None:  # within a message
            builder.event(event, value)
            if event == "start_map" or event == "start_array":
                depth += 1
            elif (event == "end_map" or event == "end_array") and not (depth := depth - 1):
                batch.extend(platforms.chat_messages([builder.value], chat))
                builder = None
                read.messages += 1
                if len(batch) >= chunk:
                    yield batch
                    batch = []
        elif event == "start_map" and prefix in starts.values():
            builder, depth = ijson.ObjectBuilder(), 1
            builder.event(event, value)
            read.chats.add(str(chat.get("id", chat.get("name", ""))))
        elif event == "start_map" and prefix in starts:
            chat = {}
        elif prefix in names and event in ("string", "number"):
            chat[names[prefix]] = value
    yield batch


def _read_export(path: Path, export: str, fields: dict) -> pd.DataFrame:
    """A Telegram export's messages as :func:`core.platforms.telegram_messages` makes them (a Discord channel's as
    :func:`core.platforms.discord_messages` keeps them), read a message at a time (:func:`_frame`), an export of all
    data's chats counted in ``attrs['note']``: at 300,000 messages reading takes about 290 MB where the file read
    whole took 1.5 GB (bench/api_json.py). ValueError naming how many messages were read where the file is cut short
    or broken."""
    import ijson

    read = _Read()

    def batches() -> Iterator[list[dict]]:
        with _open(path, binary=True) as fh:
            yield from _export_messages(fh, export, read)

    try:
        frame = _frame(batches(), fields)
    except ijson.JSONError as exc:
        fault = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__  # the parser's words
        raise ValueError(f"{'a Discord' if export == 'discord' else 'a Telegram'} export cut short or broken after "
                         f"{read.messages:,} messages ({fault})") from None
    if export == "all":
        with_note(frame, platforms.chats_note(len(read.chats)))
    return frame


def export_head(data: bytes, rows: int) -> pd.DataFrame | None:
    """The first ``rows`` messages of a Telegram or Discord export (:func:`_export_kind`) whose first bytes are
    ``data`` (cut anywhere: the messages whole in it), as the import reads them, for a form to offer the file's
    columns; None where ``data`` begins no such export, or holds none of its messages whole."""
    import io

    import ijson

    data = data[len(BOM):] if data.startswith(BOM) else data
    export = _export_kind(io.BytesIO(data))
    if export is None:
        return None
    out: list[dict] = []
    try:
        for batch in _export_messages(io.BytesIO(data), export, _Read(), chunk=min(rows, 50)):
            out.extend(batch)
            if len(out) >= rows:
                break
    except ijson.JSONError:
        pass  # where the first bytes were cut
    if not out:
        return None
    return read_records(out[:rows])


def _frame(batches: Iterator[list[dict]], fields: dict) -> pd.DataFrame:
    """The objects, read a batch at a time (API v2 pages made one tweet a row, wrapped posts unwrapped), as one frame
    built a :data:`CHUNK` at a time, each chunk's nested values cut down to ``fields`` (:func:`slim`) as it is built;
    the names of the nested values left out in its ``attrs['left_out']``."""
    left_out: set[str] = set()
    frames, chunk, order, halves = [], [], {}, []
    wrapper = None

    def flush() -> None:
        nonlocal wrapper
        if wrapper is None:  # a feed item's post, an archive's tweet: as platforms.unwrap takes them
            wrapper = platforms.wrapper(chunk[0])
        first = sum(map(len, frames))
        frame = frame_of(platforms.unwrap(chunk, wrapper) if wrapper else chunk, first)
        nested_halves = set(frame.attrs.pop("halves", ()))
        chunk.clear()
        order.update(dict.fromkeys(frame.columns))
        for col in frame.columns[frame.dtypes == object]:  # strings and numbers have dtypes of their own
            sub = fields.get(col)
            values = frame[col].tolist()
            if sub is not None:
                found: list = []
                frame[col] = pd.Series([slim(v, sub, found) for v in values], index=frame.index, dtype=object)
                if found:  # rare: which rows held one
                    nested_halves.update(first + n for n, v in enumerate(values) if _holds_half(v, sub))
            elif any(isinstance(v, (dict, list)) for v in values):
                left_out.add(col)
        halves.extend(sorted(nested_halves))
        # a column none of a chunk's objects has a value in is left out of it: its dtype (object) is none of the
        # file's, and joined to the others' it would make their numbers objects
        frames.append(frame.drop(columns=[c for c in frame.columns if c in left_out or frame[c].isna().all()]))

    for batch in batches:
        if platforms.is_pages(batch):  # API v2 responses: their tweets
            chunk.extend(platforms.flatten_pages(batch))
        else:
            chunk.extend(batch)
        if len(chunk) >= CHUNK:
            flush()
    if chunk:
        flush()
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0] if frames else pd.DataFrame()
    # a field that nests objects in some and is null (or plain) in others: left out, as the import leaves it out
    kept = [c for c in order if c not in left_out]
    for col in kept:
        if col not in frame.columns:  # no object of the file has a value in it
            frame[col] = pd.Series([None] * len(frame), dtype=object)
    frame = frame[kept]
    frame.attrs["left_out"] = [c for c in order if c in left_out]
    return with_note(frame, halves_note(halves)) if halves else frame
