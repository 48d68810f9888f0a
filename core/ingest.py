"""Read a table of texts (CSV/TSV/Parquet/JSONL) and validate it before any heavy work.

Every failure raises :class:`InputError` with a message that names the file, the column and
the rows at fault, so a user can fix the source and try again.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
import warnings
from datetime import date, datetime, time as dtime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from core import json_records, platforms, timezones

# .txt: a table as Excel saves it as "Unicode Text" (UTF-16, tabs) or "Text" (tabs), read as a CSV of its separator
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet",
            ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".js": "jsonl",
            ".xlsx": "workbook", ".xlsm": "workbook", ".xls": "workbook", ".ods": "workbook"}
NOT_GZIPPED = ("parquet", "workbook")  # compressed in their own way


class InputError(ValueError):
    """The input file cannot become a corpus; the message says why and where."""


@dataclass(frozen=True)
class Columns:
    id: str | None = "id"
    text: str = "text"
    date: str | None = "date"
    author: str | None = "author"


@dataclass(frozen=True)
class Options:
    dedupe: str = "error"  # error | first
    keep_empty: bool = False  # False: drop empty/whitespace-only texts (counted)
    bad_dates: str = "error"  # error | drop | null
    timezone: str = "UTC"  # the zone of dates written without an offset, and the one the pages show (core.timezones)

    def __post_init__(self) -> None:  # as typed in a form: '' or spaces mean UTC (checked by validate)
        object.__setattr__(self, "timezone", (self.timezone or "UTC").strip() or "UTC")


@dataclass
class Report:
    rows_read: int = 0
    rows_kept: int = 0
    empty_dropped: int = 0
    duplicates_dropped: int = 0
    bad_dates_dropped: int = 0
    bad_dates_nulled: int = 0
    id_source: str = "column"
    columns: dict[str, str | None] = field(default_factory=dict)  # each role's column in the file, as read
    notes: list[str] = field(default_factory=list)
    source_rows: np.ndarray | None = field(default=None, repr=False)  # kept rows' positions in the file

    def record(self) -> dict:
        """What the manifest keeps (not the row positions)."""
        return {k: v for k, v in self.__dict__.items() if k != "source_rows"}


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _rows(index_values, limit: int = 5) -> str:
    """Human row numbers: 1-based data rows (the header is row 0 of a CSV)."""
    shown = [str(int(i) + 1) for i in list(index_values)[:limit]]
    more = len(index_values) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def _read_utf8(path: Path, shown: str) -> str:
    """The file's text (gunzipped for .gz), read once; InputError naming byte and line when it is
    not UTF-8."""
    if path.suffix.lower() == ".gz":
        import gzip

        try:
            data = gzip.decompress(path.read_bytes())
        except (OSError, EOFError) as exc:
            raise InputError(f"{shown}: not a readable gzip file ({exc})") from None
    else:
        data = path.read_bytes()
    return _decode(data, shown)


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # what Excel's "Unicode Text" (UTF-16, tab-separated) starts with


def _decode(data: bytes, shown: str) -> str:
    if data.startswith(UTF16_BOMS) and not data.startswith(b"\xff\xfe\x00\x00"):  # UTF-16 says so; UTF-32 is not read
        try:
            return data.decode("utf-16")  # the mark tells the byte order, and is not part of the first column name
        except UnicodeDecodeError as exc:
            where = data[:exc.start].decode("utf-16", errors="replace").count("\n") + 1
            raise InputError(f"{shown}: starts as UTF-16 but is not valid UTF-16 (byte {exc.start}, line {where}): "
                             "re-save the file as UTF-8 (in Excel: 'CSV UTF-8')") from None
    try:
        return data.decode("utf-8-sig")  # a byte-order mark is not part of the first column name
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        letters = _cp1250_letters(data)
        likely = (f"; perhaps it is Windows-1250, the encoding of Czech Windows and Excel (read so it holds "
                  f"{', '.join(letters)}): convert it with `iconv -f cp1250 -t utf-8`, or" if letters else ":")
        raise InputError(f"{shown}: not valid UTF-8 (byte {exc.start}, line {line}){likely} re-save the file as "
                         "UTF-8 (in Excel: 'CSV UTF-8')") from None


# Letters of Czech and Slovak that Windows-1250 and ISO-8859-2 have and Latin-1 lacks (as decoded by cp1250).
_CENTRAL = set("ěščřžůťďňľĺŕĚŠČŘŽŮŤĎŇĽĹŔ")


def _cp1250_letters(data: bytes) -> list[str]:
    """Up to four Czech or Slovak letters the file holds when decoded as Windows-1250 (what Excel
    writes on a Czech Windows); [] when it does not decode so or holds fewer than two distinct ones
    (one alone is often a Latin-1 letter: è reads as č)."""
    try:
        text = data[:1 << 20].decode("cp1250")
    except UnicodeDecodeError:
        return []
    found = sorted(_CENTRAL.intersection(text))
    return found[:4] if len(found) >= 2 else []


def _separator(text: str) -> str:
    """A .csv file's separator, read from its header line: ',' unless that line has none and has
    semicolons (what Excel writes where the comma is the decimal mark, as in Czech) or tabs."""
    header = text.split("\n", 1)[0]
    if "," in header:
        return ","
    return max((";", "\t"), key=header.count) if (";" in header or "\t" in header) else ","


def _parse_text(text: str, kind: str, rows: int | None = None, text_column: str | None = None) -> pd.DataFrame:
    """A CSV, TSV or JSONL file's text as a frame (CSV and TSV cells as strings, '' for an empty one); ``rows``: only
    the first so many. A report's title lines before a CSV's header are left out (:func:`_header_row`, which
    ``text_column`` names the texts' column to; the frame's ``attrs['note']`` says so)."""
    if kind == "jsonl":
        return _parse_json(text, rows)
    first = _cells(text[:text.find("\n")] if "\n" in text[:100_000] else text[:100_000], kind)
    cells = [first] if _names_texts(first, text_column) else [_cells(line, kind)
                                                              for line in text.split("\n", TITLE_ROWS)[:TITLE_ROWS]]
    skip = _header_row(cells, text_column)
    body = text.split("\n", skip)[skip] if skip else text
    sep = _separator(body) if kind == "csv" else "\t"
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            # index_col=False: a first row with a field more than the header made pandas take the ids for an index
            # and every column one to the left (the texts read as ids); a separator ending every line, too
            frame = pd.read_csv(io.StringIO(body), sep=sep, dtype=str, keep_default_na=False, na_values=[],
                                engine="c", nrows=rows, index_col=False)
    except pd.errors.ParserError as exc:
        open_quote = re.search(r"EOF inside string starting at row (\d+)", str(exc))
        if open_quote:
            raise ValueError(_open_quote(body, sep, int(open_quote.group(1)), skip)) from None
        if not re.search(r"Expected \d+ fields", str(exc)):
            raise
        n = _fields_beyond_header(body, sep, skip, rows)  # a row with anything beyond the header's: named
        # else only empty fields beyond it: read past them
        frame = pd.read_csv(io.StringIO(body), sep=sep, dtype=str, keep_default_na=False, na_values=[],
                            engine="python", nrows=rows, index_col=False, on_bad_lines=lambda fields: fields[:n])
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in said):  # a row longer than the header, cut
        _fields_beyond_header(body, sep, skip, rows)
    if skip:
        frame.attrs["note"] = _titles_note(skip, cells)
    _note_twins(frame, cells[skip] if skip < len(cells) else [])
    return frame


def _open_quote(body: str, sep: str, row: int, skip: int) -> str:
    """What to say of a file whose quoted text opened in data row ``row`` (pandas' count) never closes: the row, the
    line of the file it starts on and its first words (the file read record by record up to it)."""
    reader = csv.reader(io.StringIO(body), delimiter=sep)
    line = 1
    try:
        for _ in range(row):
            next(reader)
            line = reader.line_num + 1
    except (StopIteration, csv.Error):
        pass
    start = body.split("\n", line)[line - 1].rstrip("\r") if line <= body.count("\n") + 1 else ""
    where = f"row {row} (line {line + skip} of the file)"
    return (f"a quoted text opens in {where} and never closes, so the rest of the file would be one text: a quote "
            f"mark (\") is missing or stray there, near: {start[:80]!r}; quote marks inside a quoted text are doubled "
            "(\"\")")


def _fields_beyond_header(body: str, sep: str, skip: int, rows: int | None) -> int:
    """ValueError naming the rows of a table that hold more fields than its header names, where the fields beyond
    are not empty (a text holding the separator, not in quotes: its words past it were lost, or read as the next
    column); an empty field past the last (a separator ending every line, as some exports write) loses nothing.
    Else the header's number of fields."""
    reader = csv.reader(io.StringIO(body), delimiter=sep)
    header = next(reader, [])
    n, line, found, count = len(header), reader.line_num + 1, [], 0
    for row, fields in enumerate(reader, 1):
        if len(fields) > n and any(f.strip() for f in fields[n:]):
            count += 1
            if len(found) < 3:
                found.append(f"row {row} (line {line + skip} of the file, {len(fields)} fields, "
                             f"{sep.join(fields)[:60]!r})")
        line = reader.line_num + 1
        if rows is not None and row >= rows:
            break
    if count:
        name = {",": "comma", ";": "semicolon", "\t": "tab"}.get(sep, repr(sep))
        raise ValueError(f"{count} {'row holds' if count == 1 else 'rows hold'} more fields than the header's {n}: "
                         + "; ".join(found) + ("; …" if count > len(found) else "")
                         + f". A text holding a {name} must be in quotes (\"like{sep} this\"), or the header lacks a "
                           "column")
    return n


def _note_twins(frame: pd.DataFrame, header: list[str]) -> None:
    """A note for a file whose header names a column twice: pandas read the second as 'name.1'; the first is the one
    the import reads by that name."""
    twins = sorted({c for c in header if c.strip() and header.count(c) > 1})
    if twins:
        kept = [str(c) for c in frame.columns if any(re.fullmatch(re.escape(t) + r"\.\d+", str(c)) for t in twins)]
        frame.attrs["note"] = "; ".join(filter(None, [frame.attrs.get("note"), (
            "the header names " + ", ".join(f"{c!r}" for c in twins) + " more than once: the first of each is read "
            "by that name, the others kept as " + ", ".join(f"{c!r}" for c in kept))]))


TITLE_ROWS = 30  # the rows looked through for a header below a report's title lines


def _cells(line: str, kind: str) -> list[str]:
    """The cells of one line of a CSV (its own separator) or TSV, as a header would be read; a title line's are short,
    so a line is read as far as its first 10,000 characters."""
    try:
        return next(csv.reader([line[:10_000].rstrip("\r")], delimiter=_separator(line) if kind == "csv" else "\t"), [])
    except csv.Error:  # a quote left open where the line was cut
        return []


def _header_row(rows: list[list[str]], text: str | None = None) -> int:
    """The row of a table's header among its first ``rows`` (each a list of cells): 0, unless the first names no
    column of texts (``text``, or by :data:`ALIASES`) and a later one does and has more cells filled than each row
    before it: those are a report's title lines (Brandwatch, Meltwater and Talkwalker export so), not data."""
    def filled(row: list) -> int:
        return sum(1 for c in row if str(c).strip())

    if not rows or _names_texts(rows[0], text):
        return 0
    for i, row in enumerate(rows[1:TITLE_ROWS], 1):
        if _names_texts(row, text) and all(filled(r) < filled(row) for r in rows[:i]):
            return i
    return 0


def _names_texts(row: list, text: str | None = None) -> bool:
    """Whether a header ``row`` names a column of texts: ``text``, or one of :data:`ALIASES`'s."""
    return bool((text and text in row) or TEXT_KEYS & {_name_key(str(c)) for c in row})


def _titles_note(skip: int, rows: list[list[str]]) -> str:
    titles = [" ".join(str(c).strip() for c in r if str(c).strip()) for r in rows[:skip]]
    shown = ", ".join([repr(t[:40]) for t in titles if t][:3])
    return f"the header is row {skip + 1}: the {skip} before it were read as a report's title lines ({shown})"


def _parse_json(text: str, rows: int | None = None) -> pd.DataFrame:
    """A JSON file's objects as a frame: one object a line (JSONL), or an array of them (a ``.json`` a scraper
    saved; a head cut short is read as far as its objects are whole); Twitter API v2's responses (one a line, or
    one alone), as ``twarc2 search`` saves them, are made one tweet a row (:func:`core.platforms.flatten_pages`)."""
    begin = re.match(r"\s*", text).end()  # found without copying the file's text
    if text.startswith("window.YTD", begin):  # a Twitter archive's tweets.js: JavaScript that assigns the array
        text = platforms.ARCHIVE.sub("", text, count=1)
        begin = re.match(r"\s*", text).end()
    start = text[begin:begin + 1]
    if start == "[":
        records = json.loads(text) if rows is None else _first_objects(text, rows)
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ValueError("a JSON array of objects (one per text) was expected")
    else:
        try:
            end = text.find("\n", begin)
            first = json.loads(text[begin:end if end >= 0 else len(text)] or "null")
        except ValueError:
            first = None
        if first is None and start == "{":  # one object written over several lines (an API's response saved)
            try:
                records = [json.loads(text)]
            except ValueError:
                _name_bad_line(text)  # else a line that is no JSON
                raise
        elif platforms.is_pages([first]) or platforms.unwrap([first]) != [first]:  # pages, or wrapped posts
            records = [json.loads(line) for line in [line for line in text.splitlines() if line.strip()][:rows]]
        else:  # one object a line
            if rows is not None:
                text = "\n".join([line for line in text.splitlines() if line.strip()][:rows])
            try:
                return pd.read_json(io.StringIO(text), lines=True, dtype=False)
            except (ValueError, TypeError):
                _name_bad_line(text)
                raise
    if platforms.is_pages(records):
        records = platforms.flatten_pages(records)
    elif len(records) == 1 and platforms.is_discord(records[0]):
        records = platforms.discord_messages(records[0]["messages"])
    elif len(records) == 1 and platforms.is_telegram(records[0]):
        records = platforms.telegram_messages(records[0])
        if records and platforms.CHAT in records[0]:  # an export of all data: its chats named
            frame = json_records.read_records(records[:rows])
            return json_records.with_note(frame, platforms.chats_note(len({str(m["id"]).rsplit("/", 1)[0]
                                                                                for m in records})))
    return json_records.read_records(platforms.unwrap(records[:rows]))


def _name_bad_line(text: str) -> None:
    """Raise a ValueError naming the first line of ``text`` that is no JSON object (pandas names a position)."""
    json_records.name_fault(text.splitlines())


def _first_objects(text: str, rows: int) -> list:
    """The first ``rows`` objects of a JSON array whose text may stop inside one (the first MiB of a file)."""
    decoder, out, i = json.JSONDecoder(), [], text.index("[") + 1
    while len(out) < rows:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            break
        try:
            obj, i = decoder.raw_decode(text, i)
        except ValueError:
            if out:
                break  # the head was cut inside this object
            raise
        out.append(obj)
    return out


def _file_kind(path: Path, shown: str) -> str:
    """'csv', 'tsv', 'parquet', 'jsonl' or 'workbook' by the file's suffix (.gz after csv, tsv and jsonl)."""
    suffixes = [x.lower() for x in path.suffixes[-2:]]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    kind = SUFFIXES.get(suffixes[0] if gz and len(suffixes) == 2 else path.suffix.lower())
    if kind is None or (gz and kind in NOT_GZIPPED):
        raise InputError(
            f"{shown}: unknown file type {''.join(path.suffixes[-2:]) or 'without a suffix'!r}; use .csv, .tsv, "
            ".txt (a table Excel saved as 'Unicode Text'), .parquet, .jsonl or a workbook (.xlsx, .xls, .ods); .csv, "
            ".tsv and .jsonl may be gzipped: .csv.gz"
        )
    return kind


HEAD_BYTES = 1 << 20  # what read_head reads of a text file at most


def read_head(stream, name: str, rows: int = 200, sheet: str | None = None) -> pd.DataFrame:
    """The first ``rows`` rows of a file, read as :func:`read_table` reads the whole: for a form to offer the file's
    own columns before an import. ``stream`` is the file opened for binary reading (an upload, or a path opened),
    ``name`` its name (its type by the suffix); ``sheet``: a workbook's (default: the one the import reads). InputError
    naming the file where it cannot be read so."""
    kind = _file_kind(Path(name), name)
    try:
        if kind == "workbook":
            frame = read_workbook(stream, name, rows, sheet)
        elif kind == "parquet":
            import pyarrow.parquet as pq

            batch = next(pq.ParquetFile(stream).iter_batches(batch_size=rows), None)
            frame = batch.to_pandas() if batch is not None else pd.DataFrame()
        else:
            if name.lower().endswith(".gz"):
                import gzip

                stream = gzip.GzipFile(fileobj=stream)
            data = stream.read(HEAD_BYTES + 1)
            if len(data) > HEAD_BYTES:  # cut at a line's end: the rows after it are not needed
                end = {UTF16_BOMS[0]: b"\n\x00", UTF16_BOMS[1]: b"\x00\n"}.get(data[:2], b"\n")
                at = data.rfind(end, 0, HEAD_BYTES)
                while len(end) == 2 and at > 0 and at % 2:  # a UTF-16 line's end is at an even byte
                    at = data.rfind(end, 0, at)
                data = data[:at + len(end)] if at >= 0 else data[:HEAD_BYTES - HEAD_BYTES % 2]
            export = json_records.export_head(data, rows) if kind == "jsonl" else None  # Telegram's, Discord's
            frame = export if export is not None else _parse_text(_decode(data, name), kind, rows)
    except InputError:
        raise
    except Exception as exc:  # pandas', pyarrow's and gzip's own errors: the file is named with what they say
        raise InputError(f"{name}: cannot be read as {kind.upper()}: {exc}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame


BIG = 2 ** 53  # from here on, a number a workbook holds is not every integer: a long id there was rounded


def _workbook_cell(v: object) -> str:
    """A workbook's cell as a CSV of the same table writes it: numbers as written (5, not 5.0), dates and times in
    ISO 8601, nothing as ''; a number of 16 or more digits as a spreadsheet shows one it rounded (1.34490224401417E+18:
    a tweet id typed as a number), which the import refuses as an id and reads as no conversation."""
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        if abs(v) >= BIG:
            return f"{float(v):.14E}"
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    if isinstance(v, (datetime, date, dtime)):
        return v.isoformat()
    return str(v)


def read_workbook(source, shown: str, rows: int | None = None, sheet: str | None = None, text: str | None = None
                  ) -> pd.DataFrame:
    """A sheet of a workbook (.xlsx, .xls, .ods; read by python-calamine) as a frame of strings written as a CSV of
    it would be (:func:`_workbook_cell`); ``rows``: only the first so many. The sheet: ``sheet`` where named (an
    InputError naming the sheets where the workbook has none of that name), else the first whose columns hold the
    texts (a column named ``text``, or by :data:`ALIASES`: a summary sheet before the data is passed over), else the
    first. The frame's ``attrs`` keep the workbook's ``sheets`` and the ``sheet`` read, and, where it has several,
    a ``note`` saying which was read (validate adds it to the import's notes)."""
    book = pd.ExcelFile(source, engine="calamine")
    sheets = [str(n) for n in book.sheet_names]
    if sheet is not None and sheet not in sheets:
        raise InputError(f"{shown}: the workbook has no sheet {sheet!r}; its sheets are: "
                         + ", ".join(repr(n) for n in sheets))
    chosen = sheet if sheet is not None else _sheet_of_texts(book, sheets, text)
    frame = book.parse(sheets.index(chosen), dtype=object, nrows=rows)
    titles = None
    if not _names_texts([str(c) for c in frame.columns], text) and len(frame):  # no texts named: title lines?
        top = book.parse(sheets.index(chosen), header=None, dtype=object, nrows=TITLE_ROWS)
        top = [[_workbook_cell(v) for v in row] for row in top.itertuples(index=False)]
        skip = _header_row(top, text)
        if skip:
            frame = book.parse(sheets.index(chosen), header=skip, dtype=object, nrows=rows)
            titles = _titles_note(skip, top)
    frame = frame.apply(lambda col: col.map(_workbook_cell)) if len(frame) else frame.astype(str)
    frame.attrs.update(sheets=sheets, sheet=chosen)
    if len(sheets) > 1:
        rest = [n for n in sheets if n != chosen]
        others = ", ".join(repr(n) for n in rest[:3]) + (", …" if len(rest) > 3 else "")
        how = ("as asked" if sheet is not None else "the first" if chosen == sheets[0]
               else "the first with a column of texts")
        frame.attrs["note"] = (f"read the sheet {chosen!r} ({how}) of the workbook's {len(sheets)} (not {others}; "
                               "another is read with --sheet, or picked on the home page)")
    if titles:
        frame.attrs["note"] = "; ".join(filter(None, [frame.attrs.get("note"), titles]))
    return frame


def _sheet_of_texts(book, sheets: list[str], text: str | None) -> str:
    """The first of a workbook's ``sheets`` whose header has the texts' column ``text``, else the first whose header
    names one of the text's :data:`ALIASES`, else the first (the import then says the column is missing)."""
    if len(sheets) == 1:
        return sheets[0]
    headers = [[str(c) for c in book.parse(i, nrows=0).columns] for i in range(len(sheets))]
    by_name = [n for n, h in zip(sheets, headers) if text and text in h]
    by_alias = [n for n, h in zip(sheets, headers) if _names_texts(h)]
    return (by_name + by_alias + sheets)[0]


def guess_columns(head: pd.DataFrame) -> dict[str, str | None]:
    """Each role's column in a file whose first rows are ``head``, as the import would find it with its default
    columns (None: none found; the text's too); a field of nested objects as 'user.screen_name', which the import
    takes by that name."""
    head = head.copy(deep=False)  # a field of nested objects found for a role is added to this copy only
    found, _ = _find_columns(head, "", Columns(), Report(), text_required=False)
    return found


def read_table(path: str | Path, label: str | None = None, sheet: str | None = None, text: str | None = None,
               fields: Iterable[str] = ()) -> pd.DataFrame:
    """Read a file into a frame of strings; raise InputError naming the file on failure.

    ``label`` is how messages name the file (e.g. an upload's own name rather than where the
    server keeps it); default: the path. ``sheet``, ``text``: a workbook's sheet, and the texts' column that
    picks one where no sheet is named (:func:`read_workbook`). ``fields``: the columns the import is told to read
    (a JSON file's objects are read as a stream and cut down to the fields the import reads: these among them)."""
    path = Path(path)
    shown = label or str(path)
    if len(shown) > 120:  # a file name of hundreds of characters: name it, shortened
        shown = shown[:80] + "…" + shown[-30:]
    try:
        if not path.exists():
            raise InputError(f"{shown}: no such file")
        if not path.is_file():
            raise InputError(f"{shown}: not a file")
    except OSError as exc:  # a name too long for the file system, a permission denied on a folder, ...
        raise InputError(f"{shown}: cannot be opened ({exc.strerror or exc.__class__.__name__})") from None
    kind = _file_kind(path, shown)
    if sheet is not None and kind != "workbook":
        raise InputError(f"{shown}: a sheet ({sheet!r}) was named, but the file is not a workbook (.xlsx, .xls, .ods)")
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
        elif kind == "workbook":
            frame = read_workbook(path, shown, sheet=sheet, text=text)
        else:
            frame = _stream_json(path, [text or "", *fields]) if kind == "jsonl" else None
            if frame is None:  # a CSV or TSV, or a JSON file that is one object
                frame = _parse_text(_read_utf8(path, shown), kind, text_column=text)
    except InputError:
        raise
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise InputError(f"{shown}: cannot be read as {kind.upper()}: {str(exc).replace(str(path), shown)}") from None
    except Exception as exc:  # pyarrow raises its own error types for corrupt parquet
        raise InputError(f"{shown}: cannot be read as {kind.upper()}: {str(exc).replace(str(path), shown)}") from None
    if frame.empty:
        raise InputError(f"{shown}: no data rows")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _stream_json(path: Path, named: list[str]) -> pd.DataFrame | None:
    """A JSON file's objects read as a stream, each cut down to the fields the import reads (:mod:`core.json_records`:
    :data:`NESTED`'s, :data:`REPLY_TO`'s, the whole texts', and those ``named`` for the import); None where the file
    is one object, or not UTF-8 or not gzip as its name says (read whole, where the fault is named)."""
    paths = {".".join(p) for fields in NESTED.values() for p in fields} | set(platforms.WHOLE_TEXT_FIELDS)
    paths |= {p for p in [*REPLY_TO, *named] if p and "." in p}
    try:
        return json_records.read(path, paths)
    except (UnicodeDecodeError, OSError, EOFError):
        return None


def _kind(value: object) -> str:
    """The type of a cell in words, for messages."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "binary data"
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return "a list"
    if isinstance(value, dict):
        return "a struct"
    return type(value).__name__


def check_column_types(frame: pd.DataFrame, source: str, text_col: str, id_col: str | None,
                       date_col: str | None, author_col: str | None) -> None:
    """Refuse, naming file, column and rows, cells that would silently become something else:
    lists, structs or bytes where text is expected (they would turn into ``"['a' 'b']"``), and
    numbers in a date column that are no Unix times (they would turn into 1970-01-01)."""
    for col, role in ((text_col, "text"), (id_col, "id"), (author_col, "author"), (date_col, "date")):
        if col is not None:
            _check_type(frame, source, col, role)


def _check_type(frame: pd.DataFrame, source: str, col: str, role: str) -> None:
    """InputError unless column ``col`` holds what its ``role`` needs (check_column_types)."""
    values = frame[col]
    if role == "date":
        numbers = pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype)
        if numbers and _unix_unit(values.dropna()) is None:
            raise InputError(f"{source}: column {col!r} (date) holds numbers (e.g. {values.iloc[0]}), not "
                             "dates; store dates as ISO 8601 text (2021-03-01T10:00:00Z), a timestamp type, or Unix "
                             "times (seconds or milliseconds since 1970)")
        if values.dtype == object:
            _refuse_cells(frame, values, source, col, "date", "dates", "store them as ISO 8601 text",
                          lambda v: isinstance(v, (str, pd.Timestamp, datetime)))
        return
    numbers_ok = role != "text"
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        return
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        if numbers_ok:
            return
        raise InputError(f"{source}: column {col!r} ({role}) holds numbers, not text "
                         f"(e.g. {values.iloc[0]}); store it as text")
    _refuse_cells(frame, values, source, col, role, "text", "convert them to text first",
                  lambda v: isinstance(v, str) or (numbers_ok and isinstance(v, int)))


def _refuse_cells(frame: pd.DataFrame, values: pd.Series, source: str, col: str, what: str, expected: str,
                  advice: str, fits) -> None:
    """InputError naming file, column, rows and the first bad cell, unless every non-missing cell fits."""
    ok = values.map(lambda v: v is None or (isinstance(v, float) and v != v) or fits(v)).to_numpy(dtype=bool)
    if not ok.all():
        first = values.iloc[int(np.flatnonzero(~ok)[0])]
        raise InputError(f"{source}: column {col!r} ({what}) must hold {expected}, but rows {_rows(frame.index[~ok])} "
                         f"hold {_kind(first)} (e.g. {str(first)[:60]!r}); {advice}")


# The names other tools give each column (Twitter's API and its exports, snscrape, Reddit, a spreadsheet's
# capitalised headings, Czech ones: obsah, datum, autor), tried in this order where a file has no column of the
# role's own name; compared without case, spaces, dots, dashes or underscores ('Created At', 'user.screen_name').
ALIASES = {
    "text": ("text", "full_text", "tweet_text", "tweet", "content", "raw_content", "body", "message", "hit_sentence",
             "obsah"),  # hit_sentence: Meltwater's
    "id": ("id", "id_str", "tweet_id", "status_id", "post_id", "message_id", "uri",  # uri: Bluesky's
           "cid", "comment_id"),  # cid: YouTube's comments as youtube-comment-downloader writes them
    "date": ("date", "created_at", "created_utc", "created", "timestamp", "datetime", "date_time", "publish_date",
             "published_at", "published", "posted_at", "datum",  # not 'time': "10:15" reads as today
             "time_parsed"),  # youtube-comment-downloader's Unix time of a comment's "2 years ago"
    "author": ("author", "username", "screen_name", "user_screen_name", "user_username", "user_name", "handle",
               "author_name", "influencer", "user", "from", "author_id", "user_id", "autor"),
    # influencer: Meltwater's; from: Telegram's
}
ROLE_WORDS = {"text": "texts", "id": "ids", "date": "dates", "author": "authors"}
DATE_SAMPLE = 1_000  # a column named like the dates is taken where this many of its first values all read as dates


def _name_key(name: str) -> str:
    return re.sub(r"[\s._-]+", "", str(name).casefold())


TEXT_KEYS = {_name_key(a) for a in ALIASES["text"]}  # a header naming a column of texts (_names_texts)


def _by_name(columns) -> dict[str, str]:
    """Each of ``columns`` by its name's key (:func:`_name_key`); the first of two with one key."""
    out: dict[str, str] = {}
    for c in columns:
        out.setdefault(_name_key(c), c)
    return out


def _why_not(frame: pd.DataFrame, source: str, col: str, role: str) -> str | None:
    """Why column ``col``, found by its name, cannot be the ``role`` column (None: it can)."""
    try:
        _check_type(frame, source, col, role)
    except InputError:
        return "it holds no plain values"
    values = frame[col]
    if role == "id":
        ids = values.astype(str).str.strip()
        if (values.isna() | (ids == "")).any():
            return "some rows have none"
        if ids.duplicated().any():
            return "it repeats some"
    if role == "date":
        sample = values[values.notna() & (values.astype(str).str.strip() != "")].head(DATE_SAMPLE)
        try:
            _dates(sample, pd.Series(True, index=sample.index), source, col, Options(), Report())
        except InputError:
            return "not all of its first values read as dates"
    return None


# Where a role is a field of an object a JSON file nests, by its path: Twitter's API v1.1 (the user's screen_name)
# and v2 (the author's username), Bluesky's post view (the record's text and createdAt, the author's handle),
# Mastodon's status (the account's acct: user@server)
NESTED = {"text": (("record", "text"),), "date": (("record", "createdAt"),),
          "author": (("user", "screen_name"), ("user", "username"), ("author", "username"), ("author", "handle"),
                     ("account", "acct"), ("author", "name"))}  # the last: Discord's (DiscordChatExporter's)


def _nested_column(frame: pd.DataFrame, by_key: dict[str, str], role: str, report: Report) -> str | None:
    """The column ``outer.key`` made (added to ``frame``) from the first of :data:`NESTED`'s fields for ``role`` that
    the file's objects hold as plain values, said in the notes; None where there is none."""
    for outer, *keys in NESTED[role]:
        col = by_key.get(_name_key(outer))
        if col is not None and _add_field(frame, ".".join([col, *keys])):
            report.notes.append(f"field {'.'.join(keys)!r} of column {col!r} read as the {ROLE_WORDS[role]}")
            return ".".join([col, *keys])
    return None


def _holds_objects(frame: pd.DataFrame, col: str) -> bool:
    """Whether column ``col`` is there and holds a JSON file's nested objects (its first value that is there)."""
    first = frame[col].first_valid_index() if col in frame.columns else None  # no copy of the column
    return first is not None and isinstance(frame[col].at[first], dict)


def _add_field(frame: pd.DataFrame, name: str) -> bool:
    """Add column ``name`` = 'outer.key' (or 'outer.key.inner', ...) to ``frame``: the field ``key`` of the objects in
    its column ``outer`` (a JSON file's nested objects; ``inner`` of the objects in that field), where they hold it
    as plain values; False where not."""
    outer, _, path = name.partition(".")
    if not path or not _holds_objects(frame, outer):
        return False
    keys = path.split(".")
    inner = frame[outer].map(lambda d: platforms.dig(d, keys))
    if not inner.notna().any() or not inner.dropna().map(lambda v: isinstance(v, (str, int))).all():
        return False
    frame[name] = inner.astype("string")
    return True


def _sheet_read(frame: pd.DataFrame) -> str:
    return f" ({frame.attrs['note']})" if frame.attrs.get("note") else ""


def _find_columns(frame: pd.DataFrame, source: str, columns: Columns, report: Report, text_required: bool = True
                  ) -> tuple[dict[str, str | None], set[str]]:
    """The source column of each role (None: an optional role the file has no column for; the text's too unless
    ``text_required``), and the roles whose column was found by name (:data:`ALIASES`, said in the report's notes)
    because the file has none of the role's default name; InputError listing the existing columns when a named one
    is missing."""
    found: dict[str, str | None] = {}
    defaults = Columns()
    for role in ("text", "id", "date", "author"):
        col = getattr(columns, role)
        nested = col == getattr(defaults, role) and role in NESTED and _holds_objects(frame, col)  # twarc2's author
        if col is None or (col in frame.columns and not nested) or (col != getattr(defaults, role)
                                                                    and _add_field(frame, col)):
            found[role] = col  # a name as 'user.screen_name': a field of the objects a JSON file nests
        elif col != getattr(defaults, role):
            raise InputError(f"{source}: column {col!r} ({role}) not found; the columns are: "
                             + ", ".join(repr(c) for c in frame.columns) + _sheet_read(frame))
    by_key = _by_name(frame.columns)
    guessed: set[str] = set()
    for role in ("text", "id", "date", "author"):
        if role in found:
            continue
        found[role] = None
        nested_tried = False
        for alias in ALIASES[role]:
            if role in NESTED and alias.endswith("_id") and not nested_tried:  # a user's name before its number
                nested_tried, found[role] = True, _nested_column(frame, by_key, role, report)
                if found[role]:
                    guessed.add(role)
                    break
            col = by_key.get(_name_key(alias))
            if col is None or col in found.values():
                continue
            why = None if role == "text" else _why_not(frame, source, col, role)  # a text column's faults are named
            if why is None:
                found[role] = col
                guessed.add(role)
                report.notes.append(f"column {col!r} read as the {ROLE_WORDS[role]} (the file has no column "
                                    f"{getattr(defaults, role)!r})")
                break
            report.notes.append(f"column {col!r} not read as the {ROLE_WORDS[role]}: {why}")
        if found[role] is None and role in NESTED and not nested_tried:
            found[role] = _nested_column(frame, by_key, role, report)
            guessed.update([role] if found[role] else [])
        if role == "text" and found[role] is None and text_required:
            raise InputError(f"{source}: column {columns.text!r} (text) not found; the columns are: "
                             + ", ".join(repr(c) for c in frame.columns) + _sheet_read(frame))
    return found, guessed


def _header_again(frame: pd.DataFrame) -> pd.Series:
    """Rows that repeat the header, each cell its column's name (``cat a.csv b.csv``), or blank under a heading the
    file left blank (pandas writes its index so: ``,id,text``; read as 'Unnamed: 0'): two columns at least and one
    named, so that a one-column file's text that is the column's name stays a text."""
    again = pd.Series(False, index=frame.index)
    named = [c for c in frame.columns if not _UNNAMED.fullmatch(str(c))]
    if len(frame.columns) < 2 or not named:
        return again
    rows = frame.index
    for col in named:  # each column reads only the rows still in question (10M rows: a column's lengths)
        name = str(col).strip().casefold()
        cells = frame.loc[rows, col]
        if not pd.api.types.is_string_dtype(cells):  # numbers, dates, mixed cells (Parquet, JSON): no header in them
            return again
        cells = cells.astype("string")
        near = cells.str.len().between(len(name), len(name) + 8).fillna(False).to_numpy(bool)
        cells = cells[near]
        rows = cells.index[(cells.str.strip().str.casefold() == name).fillna(False).to_numpy(bool)]
        if not len(rows):
            return again
    for col in frame.columns.difference(named):
        cells = frame.loc[rows, col]
        rows = rows[(cells.isna() | (cells.astype(str).str.strip() == "")).to_numpy(bool)]
    again[rows] = True
    return again


_UNNAMED = re.compile(r"Unnamed: \d+")  # pandas's name for a blank heading


def _ids(out: pd.DataFrame, source: str, id_col: str | None, report: Report) -> pd.Series:
    if id_col is None:
        report.id_source = "row number"
        return pd.Series([str(i) for i in range(len(out))], index=out.index)
    raw = out[id_col]
    blank = raw.isna() | (raw.astype(str).str.strip() == "")
    if blank.any():
        raise InputError(f"{source}: column {id_col!r} has missing ids in rows {_rows(out.index[blank])}")
    ids = raw.astype(str).str.strip()
    nul = ids.str.contains("\x00", regex=False)
    if nul.any():  # PostgreSQL keeps no NUL in a text: a group holding such a text could not be saved for a team
        raise InputError(f"{source}: column {id_col!r} has ids holding a NUL character (\\x00) in rows "
                         f"{_rows(out.index[nul])}; a database keeps no such id: mend the file's ids, or import with "
                         f"row numbers as ids (--id-column ''; on the home page: id column = (row numbers))")
    return ids


# An id a spreadsheet showed in scientific notation and saved so (1,3449E+18; 1.34490224401417E+18): many ids read
# as one (core.threads reads none from such a conversation_id)
ROUNDED = r"^\s*-?\d[.,]\d+[eE]\+?\d+\s*$"
_ROUNDED = re.compile(ROUNDED)


def _drop_duplicates(ids: pd.Series, keep: pd.Series, source: str, id_col: str | None, options: Options,
                     report: Report) -> pd.Series:
    dup = ids.duplicated(keep="first") & keep
    if not dup.any():
        return keep
    if options.dedupe == "error":
        first = list(dict.fromkeys(ids[dup]))[:5]
        rounded = sum(bool(_ROUNDED.match(str(i))) for i in first) > len(first) / 2
        # each id with every row that holds it (its first too), so that both copies can be looked up
        holding = ids[ids.isin(first) & keep]
        where = "; ".join(f"{i!r} in rows {_rows(holding.index[holding == i])}" for i in first)
        n = int(dup.sum())
        raise InputError(f"{source}: column {id_col!r} has {n} duplicate id{'s' if n != 1 else ''} (a row whose "
                         f"id an earlier row has), e.g. {where}; "
                         + ("these look like long numbers a spreadsheet rounded (Excel keeps 15 digits): the "
                            "original ids are not in this file. Export it again with the id column as text, or "
                            "import with row numbers as ids (--id-column '', on the home page: id column (row numbers))"
                            if rounded else "to keep the first of each, import with `--dedupe first` "
                            "(on the home page: Duplicate ids = first)"))
    report.duplicates_dropped = int(dup.sum())
    n = report.duplicates_dropped
    report.notes.append(f"dropped {n:,} row{'s' if n != 1 else ''} with a duplicate id (one an earlier row has)")
    return keep & ~dup


def _dates(raw: pd.Series, keep: pd.Series, source: str, date_col: str, options: Options,
           report: Report) -> tuple[pd.Series, pd.Series]:
    """(naive UTC timestamps, rows still kept); dates the file writes without an offset are wall times of
    ``options.timezone`` (UTC by default)."""
    blank = raw.isna() | (raw.astype(str).str.strip() == "")
    values = raw.where(~blank, None)
    unit = _unix_unit(raw[~blank])
    if unit is not None:  # an instant, as a number: no zone's wall time
        numbers = values if pd.api.types.is_numeric_dtype(values.dtype) else values.astype(str).str.strip()
        dates = pd.to_datetime(pd.to_numeric(numbers, errors="coerce"), unit=unit, utc=True)
        report.notes.append(f"read column {date_col!r} as Unix times ({UNIX_WORDS[unit]} since 1970, UTC)")
        return dates.dt.tz_convert("UTC").dt.tz_localize(None), keep
    day_first = _day_first(values, source, date_col, report)
    dates = pd.to_datetime(values.where(~day_first, None) if day_first.any() else values, errors="coerce", utc=True,
                           format="mixed")
    if day_first.any():  # pandas reads 2.1.2024 as 1 February and 13.1.2024 as 13 January: day first here
        dates[day_first] = pd.to_datetime(values[day_first], errors="coerce", utc=True, format="mixed", dayfirst=True)
    zone = options.timezone  # checked by validate
    if zone != timezones.UTC:  # dates without an offset are wall times of the corpus's zone, not UTC
        wall = _without_offset(values) & dates.notna().to_numpy()
        if wall.any():
            naive = dates[wall].dt.tz_convert("UTC").dt.tz_localize(None)
            dates[wall] = timezones.to_utc(naive, zone).dt.tz_localize("UTC")
    bad = dates.isna() & ~blank & keep
    if bad.any():
        if options.bad_dates == "error":
            examples = ", ".join(repr(str(v)) for v in raw[bad].head(3))
            n = int(bad.sum())
            raise InputError(f"{source}: column {date_col!r} has {n:,} unparseable date{'s' if n != 1 else ''} in "
                             f"row{'s' if n > 1 else ''} {_rows(raw.index[bad])}, e.g. {examples}; to leave those "
                             "rows out, or keep them without a date, import with `--bad-dates drop` or `null` (on "
                             "the home page: Bad dates = drop or null)")
        if options.bad_dates == "drop":
            report.bad_dates_dropped = int(bad.sum())
            keep = keep & ~bad
        else:
            report.bad_dates_nulled = int(bad.sum())
    return dates.dt.tz_convert("UTC").dt.tz_localize(None), keep


# An offset written in a date: 07:04:16Z, 10:00:00+01:00, 10:00-05, "20:19:24 +0000 2018" (Twitter's), UTC, GMT;
# never the dashes of a date itself (2021-01-01, 10-Oct-2021). RE2 syntax.
_OFFSET = (r"(?:\dZ\b|\d:\d{2}(?::\d{2})?(?:[.,]\d+)?\s*[+-]\d{2}(?::?\d{2})?\b|\s[+-]\d{4}\b"
           r"|\b(?:UTC|GMT)\b)")


def _arrow_strings(values: pd.Series):
    """A column of strings as a pyarrow array (pandas's own strings are arrow-backed: no copy)."""
    import pyarrow as pa

    if hasattr(values.array, "__arrow_array__"):
        return pa.array(values.array)
    return pa.array(values.to_numpy(dtype=object), type=pa.string(), from_pandas=True)


def _without_offset(values: pd.Series) -> np.ndarray:
    """Which dates of a column say nothing of their zone (a timestamp column: all or none, by its type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return np.full(len(values), getattr(values.dtype, "tz", None) is None)
    try:
        a = _arrow_strings(values) if pd.api.types.is_string_dtype(values.dtype) else None
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        a = None
    if a is None:  # not text (JSONL numbers are refused before): nothing to move
        return np.zeros(len(values), bool)
    return ~pc.fill_null(pc.match_substring_regex(a, _OFFSET), True).to_numpy(zero_copy_only=False)


# Dates written day first with dots (2.1.2024, 02. 01. 2024 10:30: Czech, German, ...) and dates with slashes,
# whose order only the column as a whole can tell (13/1/2024 is day first, 1/13/2024 month first). RE2 syntax.
_DOTTED = r"^\s*\d{1,2}\.\s*\d{1,2}\.\s*\d{2,4}(?:\D|$)"
_SLASHED = r"^\s*(?P<first>\d{1,2})/(?P<second>\d{1,2})/\d{2,4}(?:\D|$)"


# A date column of Unix times (Reddit's created_utc, many APIs' timestamps): every value a whole number of seconds of
# 9-10 digits (1973-2286), with or without a fraction, or of milliseconds of 12-13 digits (1973-2286)
UNIX = {"s": r"^\s*\d{9,10}(?:\.\d*)?\s*$", "ms": r"^\s*\d{12,13}(?:\.0*)?\s*$"}
UNIX_WORDS = {"s": "seconds", "ms": "milliseconds"}


def _unix_unit(values: pd.Series) -> str | None:
    """'s' or 'ms' where every one of ``values`` (a date column's non-blank ones) is a Unix time so (:data:`UNIX`);
    None otherwise, and for none at all. A column of ISO dates costs one look at its first value."""
    if not len(values) or pd.api.types.is_datetime64_any_dtype(values.dtype) or pd.api.types.is_bool_dtype(
            values.dtype):
        return None
    if pd.api.types.is_numeric_dtype(values.dtype):  # a JSONL or Parquet column of numbers
        v = values.to_numpy(dtype=np.float64)
        if ((v >= 1e8) & (v < 1e10)).all():
            return "s"
        return "ms" if ((v >= 1e11) & (v < 1e13) & (v == np.floor(v))).all() else None
    first = str(values.iloc[0])
    for unit, pattern in UNIX.items():
        if re.match(pattern, first) and values.astype(str).str.match(pattern).all():
            return unit
    return None


def _day_first(values: pd.Series, source: str, date_col: str, report: Report) -> np.ndarray:
    """Which rows of a date column to read day first: dotted dates always; dates with slashes when
    one of them has a first number above 12 (and none a second one). Slashed dates that say nothing
    (every number <= 12) are read month first, as pandas does, with a note; a column holding both
    orders is refused, naming rows of each. Matched in pyarrow (one pass of ~40 ms per million rows
    where no date starts so)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pd.api.types.is_string_dtype(values.dtype):  # a Parquet column of timestamps, JSONL numbers
        return np.zeros(len(values), bool)
    try:
        a = _arrow_strings(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all strings (a JSONL column of numbers): as before
        return np.zeros(len(values), bool)
    if not pc.any(pc.match_substring_regex(a, r"^\s*\d{1,2}[./]")).as_py():  # ISO dates and the like: done
        return np.zeros(len(values), bool)
    dotted = pc.fill_null(pc.match_substring_regex(a, _DOTTED), False).to_numpy(zero_copy_only=False)
    parts = pc.extract_regex(a, _SLASHED)
    slashed = parts.is_valid().to_numpy(zero_copy_only=False)
    if not slashed.any():
        return dotted
    first = pc.fill_null(pc.cast(parts.field("first"), pa.int32()), 0).to_numpy(zero_copy_only=False)
    second = pc.fill_null(pc.cast(parts.field("second"), pa.int32()), 0).to_numpy(zero_copy_only=False)
    days_first, months_first = slashed & (first > 12), slashed & (second > 12)
    if days_first.any() and months_first.any():
        def rows(mask: np.ndarray) -> str:
            where = values.index[mask]
            return f"rows {_rows(where, 3)}, e.g. {str(values[where[0]])!r}"

        raise InputError(f"{source}: column {date_col!r} mixes day/month/year dates ({rows(days_first)}) with "
                         f"month/day/year ones ({rows(months_first)}); write them in one order (best ISO: 2024-01-31)")
    if days_first.any():
        return dotted | slashed
    if not months_first.any():
        example = str(values[values.index[slashed][0]])
        report.notes.append(f"read {int(slashed.sum()):,} dates such as {example!r} in column {date_col!r} as "
                            "month/day/year: no day above 12 says otherwise")
    return dotted


def _unescape_entities(text: pd.Series, report: Report) -> tuple[pd.Series, pd.Series | None]:
    """Tweets carry HTML entities as the Twitter API sends them ("Johnson &amp; Johnson"): the
    characters to show, and what the file said (None when nothing changed)."""
    shown = text.map(lambda t: html.unescape(t) if "&" in t else t)
    changed = shown != text
    if not changed.any():
        return shown, None
    report.notes.append(f"unescaped HTML entities (&amp; and the like) in {int(changed.sum())} texts; "
                        "the texts as read are in column text_raw")
    return shown, text


def spreadsheet_rounded(values):
    """Which of ``values`` (a column, or an Arrow array of text) are long numbers a spreadsheet rounded (``ROUNDED``),
    as an Arrow boolean array (nulls false); None where the values are not text. pyarrow's regex: 0.4 s at 10M rows,
    pandas' 2.8 s."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # numbers of several kinds (a spreadsheet's cells): none written so
        return None
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return pc.fill_null(pc.match_substring_regex(arr, ROUNDED), False)


# Where a file names the tweet each one replies to (Twitter's API v1.1 and the exports made from it) but no
# conversation, the column the conversations are made from (core.threads.from_replies); compared as ALIASES are
REPLY_TO = ("in_reply_to_status_id_str", "in_reply_to_status_id", "in_reply_to_tweet_id", "replied_to_id",
            "reply_to_id", "in_reply_to_id", "parent_id", "reply_to_message_id",  # the last: Telegram's
            "record.reply.parent.uri", "reference.messageId")  # Bluesky's, Discord's
# Reddit's parent_id names a comment or post by its "fullname": its kind (t1_ a comment, t3_ a post) before the id
# that the file's id column holds; the kind is left out, so a post's comments are its conversation, and the comments
# of a post the file lacks are one conversation named by the post.
FULLNAME = r"^t[1-6]_"


def _conversations_from_replies(result: pd.DataFrame, report: Report, id_name: str | None = None) -> None:
    """A ``conversation_id`` column made from the tweet each text replies to (:func:`core.threads.from_replies`),
    where the file has a column of those (:data:`REPLY_TO`) and none of conversations, or from YouTube's comment
    ids (``id_name``, the file's id column, ``cid``: a reply's id is its comment's id, a dot, its own); said in the
    notes."""
    from core.threads import COLUMN

    if COLUMN in result.columns:
        return
    by_key = _by_name(result.columns)
    col = next((by_key[_name_key(a)] for a in REPLY_TO if _name_key(a) in by_key), None)
    if col is None:  # a field of the objects the file nests
        col = next((a for a in REPLY_TO if "." in a and _add_field(result, a)), None)
        if col is None:
            parents = platforms.youtube_parents(result["id"]) if id_name and _name_key(id_name) == "cid" else None
            if parents is not None:
                _conversations_made(result, parents, f"the comment ids of column {id_name!r} (YouTube's: a reply's "
                                    "id is its comment's, a dot and its own)", report)
            return
    raw = result.pop(col) if "." in col and col not in by_key.values() else result[col]
    if pd.api.types.is_float_dtype(raw.dtype) and ((raw.dropna() % 1 == 0) & (raw.dropna().abs() < BIG)).all():
        raw = raw.astype("Int64")  # small ids (Telegram's message numbers) a blank made floats: each exact
    if pd.api.types.is_float_dtype(raw.dtype):  # a JSONL or Parquet column of numbers with blanks: 1.2e18 is no id
        report.notes.append(f"column {col!r} holds its tweet ids as floating-point numbers, which round them: "
                            "no conversations were made from it")
        return
    parents = raw.astype("string").fillna("").str.strip().str.replace(FULLNAME, "", regex=True).to_numpy(dtype=object)
    parents[spreadsheet_rounded(pd.Series(parents, dtype="string")).to_numpy(zero_copy_only=False)] = ""
    _conversations_made(result, parents, f"column {col!r}", report)


def _conversations_made(result: pd.DataFrame, parents: np.ndarray, source: str, report: Report) -> None:
    """``result``'s conversation_id from each row's parent ('' for none), read from ``source``; said in the notes."""
    from core.threads import COLUMN, from_replies

    names = from_replies(result["id"].to_numpy(dtype=object), parents)
    result[COLUMN] = pd.array(names, dtype="string")
    shared = pd.Series(names).duplicated(keep=False).to_numpy()
    report.notes.append(f"conversations made from {source}: {int((parents != '').sum()):,} replies, "
                        f"{pd.Series(names[shared]).nunique():,} conversations of two or more texts")


def _leave_out_nested(result: pd.DataFrame, report: Report, read_without: Iterable[str] = ()) -> None:
    """Leave out the columns of nested objects or lists (an API's user, entities, retweeted tweet): the fields the
    import reads are taken from them first (the author, whole texts, replies), and kept they would be a Python object
    per row in every page's corpus (300,000 Twitter API v1.1 tweets: 4 s more to load it, GBs of memory); said in
    the notes with those ``read_without`` (a JSON file read as a stream leaves them out as it reads it)."""
    nested = [c for c in result.columns if c not in ("id", "text", "date", "author")
              and result[c].dtype == object and result[c].dropna().head(1_000).map(
                  lambda v: isinstance(v, (dict, list, tuple, np.ndarray))).any()]
    if nested:
        result.drop(columns=nested, inplace=True)
    nested += [c for c in read_without if c not in nested and c not in result.columns]
    if nested:
        shown = ", ".join(repr(c) for c in nested[:6]) + (", …" if len(nested) > 6 else "")
        report.notes.append(f"left out {len(nested)} columns of nested objects or lists ({shown}): the fields read "
                            "from them are in the corpus's own columns")


def _rounded_conversations(result: pd.DataFrame, report: Report) -> None:
    """Say where a spreadsheet rounded the conversation ids (core.threads takes those texts as in no conversation:
    thousands of tweets would otherwise read as one thread)."""
    from core.threads import COLUMN

    found = spreadsheet_rounded(result[COLUMN]) if COLUMN in result.columns else None
    rounded = found.to_numpy(zero_copy_only=False) if found is not None else None
    if rounded is not None and rounded.any():
        example, where = result[COLUMN][rounded].iloc[0], _rows(report.source_rows[rounded])
        report.notes.append(f"column {COLUMN!r} holds {int(rounded.sum()):,} long numbers a spreadsheet rounded "
                            f"(such as {example!r}, in rows {where}): those texts are taken as in no conversation "
                            "(export the column as text to keep them)")


QUOTED = "quoted_text"  # the tweet a quote quotes, "@name: text" (core.platforms.quoted_texts)


def validate(frame: pd.DataFrame, source: str, columns: Columns = Columns(),
             options: Options = Options()) -> tuple[pd.DataFrame, Report]:
    """Return the corpus frame (id, text, [date], [author], extra columns) and a report.

    Rows are numbered as data rows, 1-based, in messages.
    """
    if options.dedupe not in ("error", "first"):
        raise ValueError(f"dedupe must be 'error' or 'first', got {options.dedupe!r}")
    if options.bad_dates not in ("error", "drop", "null"):
        raise ValueError(f"bad_dates must be 'error', 'drop' or 'null', got {options.bad_dates!r}")
    try:
        timezones.check(options.timezone)
    except ValueError as exc:
        raise InputError(f"{source}: {exc}") from None
    report = Report(rows_read=len(frame))
    if frame.attrs.get("note"):  # which sheet of a workbook was read
        report.notes.append(frame.attrs["note"])
    cols, guessed = _find_columns(frame, source, columns, report)
    report.columns = dict(cols)
    out = frame.copy()
    out.index = pd.RangeIndex(len(out))
    check_column_types(out, source, cols["text"], cols["id"], cols["date"], cols["author"])
    text = out[cols["text"]]
    text = text.where(~text.isna(), "").astype(str)
    html_written = _name_key(cols["text"]) == "content" and platforms.looks_like_html(text)  # Mastodon's status
    raw_html = text if html_written else None
    if html_written:
        text = text.map(platforms.html_text)
        report.notes.append(f"column {cols['text']!r} is written in HTML (as Mastodon writes a post): read as the "
                            "text a reader sees; as written in column text_raw")
        boosted = platforms.boosts(out)
        if boosted is not None:  # a boost's own content is empty
            boosted = boosted.set_axis(text.index)
            text = text.where(boosted.isna() | (text.str.strip() != ""), boosted.astype(object))
            n = int(boosted.notna().sum())
            report.notes.append(f"read {n:,} boost{'' if n == 1 else 's'} as Twitter writes a retweet, \"RT @acct: "
                                "text\" (the boosted status's text; each boost's date and author its own)")
    if cols["text"] in ("text", "full_text"):  # the API's own fields: where it cut them, read whole
        text, whole = platforms.whole_texts(out, text)
        if whole:
            report.notes.append(f"read {whole:,} texts the Twitter API had cut short whole, from the tweets "
                                "it nests beside them (extended_tweet, note_tweet, the retweeted tweet)")
    again = _header_again(out)  # files joined one after another: each later file's header is a row here
    ids = _ids(out, source, cols["id"], report)
    quoted = platforms.quoted_texts(out) if QUOTED not in out.columns else None
    if quoted is not None:
        quoted = quoted.map(lambda t: html.unescape(t) if "&" in t else t)  # as Twitter escapes a tweet's text
        report.notes.append(f"{int((quoted != '').sum()):,} texts quote a tweet: what each quotes is in column "
                            f"{QUOTED!r}, shown under it on the Annotate page (`python -m precompute.quotes "
                            "--corpus NAME` makes the embedding set that lets the semantic searches read each with "
                            "what it quotes)")

    keep = pd.Series(True, index=out.index)
    if again.any():
        keep &= ~again
        n, s = int(again.sum()), "s" if again.sum() != 1 else ""
        report.notes.append(f"left out {n:,} row{s} that repeat{'' if s else 's'} the header (row{s} "
                            f"{_rows(out.index[again])}): files joined one after another")
    empty = (text.str.strip() == "") & keep
    if empty.any() and not options.keep_empty:
        report.empty_dropped = int(empty.sum())
        n = report.empty_dropped
        report.notes.append(f"dropped {n:,} empty text{'s' if n != 1 else ''} (row{'s' if n != 1 else ''} "
                            f"{_rows(out.index[empty])})")
        keep &= ~empty
    keep = _drop_duplicates(ids, keep, source, cols["id"], options, report)
    dates = None
    if cols["date"] is not None:
        try:
            dates, keep = _dates(out[cols["date"]].where(~again), keep, source, cols["date"], options, report)
        except InputError as exc:
            if "date" not in guessed:
                raise
            raise InputError(f"{exc} (column {cols['date']!r} was taken as the dates by its name: name another "
                             "date column, or none)") from None

    if cols["date"] is not None and _name_key(cols["date"]) == "timeparsed" and "time" in out.columns:
        report.notes.append(f"the dates of column {cols['date']!r} were read from a comment's age as YouTube shows it "
                            "(column 'time', such as '2 years ago'): each is only as near as that")
    text, raw_text = (text, raw_html) if html_written else _unescape_entities(text, report)
    result = pd.DataFrame({"id": ids, "text": text})
    if raw_text is not None:
        result["text_raw"] = raw_text
    if dates is not None:
        result["date"] = dates
    if cols["author"] is not None:
        result["author"] = out[cols["author"]].astype("string").fillna("")
    if quoted is not None:
        result[QUOTED] = quoted.set_axis(result.index)
    used = {c for c in cols.values() if c} | {"text_raw"}
    for col in out.columns:  # every other source column is kept
        if col not in used and col not in result.columns:
            result[col] = out[col]
    result = result[keep.values].reset_index(drop=True)
    report.source_rows = np.flatnonzero(keep.values)  # each row's data row in the file (brought vectors)
    _conversations_from_replies(result, report, cols["id"])
    _rounded_conversations(result, report)
    _leave_out_nested(result, report, frame.attrs.get("left_out", ()))
    if result.empty:
        why = [*report.notes,
               *([f"left out {report.bad_dates_dropped:,} rows whose date in column {cols['date']!r} could not be "
                  "read, as bad dates = drop asks"] if report.bad_dates_dropped else [])]
        raise InputError(f"{source}: no rows left after validation: {'; '.join(why) or 'the file has no data rows'}")
    report.rows_kept = len(result)
    return result, report
