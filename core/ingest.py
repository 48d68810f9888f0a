"""Read a table of texts (CSV/TSV/Parquet/JSONL) and validate it before any heavy work.

Every failure raises :class:`InputError` with a message that names the file, the column and
the rows at fault, so a user can fix the source and try again.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from datetime import datetime
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core import timezones

SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
            ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


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


def read_table(path: str | Path, label: str | None = None) -> pd.DataFrame:
    """Read a file into a frame of strings; raise InputError naming the file on failure.

    ``label`` is how messages name the file (e.g. an upload's own name rather than where the
    server keeps it); default: the path."""
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
    suffixes = [x.lower() for x in path.suffixes[-2:]]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    kind = SUFFIXES.get(suffixes[0] if gz and len(suffixes) == 2 else path.suffix.lower())
    if kind is None or (gz and kind == "parquet"):
        raise InputError(
            f"{shown}: unknown file type {''.join(path.suffixes[-2:]) or 'without a suffix'!r}; use .csv, .tsv, "
            ".parquet or .jsonl (.csv, .tsv and .jsonl may be gzipped: .csv.gz)"
        )
    try:
        if kind in ("csv", "tsv"):
            text = _read_utf8(path, shown)
            frame = pd.read_csv(io.StringIO(text), sep=_separator(text) if kind == "csv" else "\t", dtype=str,
                                keep_default_na=False, na_values=[], encoding="utf-8",
                                engine="c")
        elif kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_json(io.StringIO(_read_utf8(path, shown)), lines=True, dtype=False)
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
    numbers in a date column (they would turn into 1970-01-01)."""
    def scalar_text(col: str, what: str, numbers_ok: bool) -> None:
        values = frame[col]
        if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
            return
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
            if numbers_ok:
                return
            raise InputError(f"{source}: column {col!r} ({what}) holds numbers, not text "
                             f"(e.g. {values.iloc[0]}); store it as text")
        _refuse_cells(frame, values, source, col, what, "text", "convert them to text first",
                      lambda v: isinstance(v, str) or (numbers_ok and isinstance(v, int)))

    scalar_text(text_col, "text", numbers_ok=False)
    if id_col is not None:
        scalar_text(id_col, "id", numbers_ok=True)
    if author_col is not None:
        scalar_text(author_col, "author", numbers_ok=True)
    if date_col is not None:
        values = frame[date_col]
        if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
            raise InputError(f"{source}: column {date_col!r} (date) holds numbers (e.g. {values.iloc[0]}), not "
                             "dates; store dates as ISO 8601 text (2021-03-01T10:00:00Z) or a timestamp type")
        if values.dtype == object:
            _refuse_cells(frame, values, source, date_col, "date", "dates", "store them as ISO 8601 text",
                          lambda v: isinstance(v, (str, pd.Timestamp, datetime)))


def _refuse_cells(frame: pd.DataFrame, values: pd.Series, source: str, col: str, what: str, expected: str,
                  advice: str, fits) -> None:
    """InputError naming file, column, rows and the first bad cell, unless every non-missing cell fits."""
    ok = values.map(lambda v: v is None or (isinstance(v, float) and v != v) or fits(v)).to_numpy(dtype=bool)
    if not ok.all():
        first = values.iloc[int(np.flatnonzero(~ok)[0])]
        raise InputError(f"{source}: column {col!r} ({what}) must hold {expected}, but rows {_rows(frame.index[~ok])} "
                         f"hold {_kind(first)} (e.g. {str(first)[:60]!r}); {advice}")


def _find_columns(frame: pd.DataFrame, source: str, columns: Columns) -> dict[str, str | None]:
    """The source column of each role (None: an optional default column that is simply absent);
    InputError listing the existing columns when a named one is missing."""
    found: dict[str, str | None] = {}
    for role in ("text", "id", "date", "author"):
        col = getattr(columns, role)
        if col is None or col in frame.columns:
            found[role] = col
        elif role == "text" or col != getattr(Columns(), role):
            raise InputError(f"{source}: column {col!r} ({role}) not found; the columns are: "
                             + ", ".join(repr(c) for c in frame.columns))
        else:
            found[role] = None
    return found


def _ids(out: pd.DataFrame, source: str, id_col: str | None, report: Report) -> pd.Series:
    if id_col is None:
        report.id_source = "row number"
        return pd.Series([str(i) for i in range(len(out))], index=out.index)
    raw = out[id_col]
    blank = raw.isna() | (raw.astype(str).str.strip() == "")
    if blank.any():
        raise InputError(f"{source}: column {id_col!r} has missing ids in rows {_rows(out.index[blank])}")
    return raw.astype(str).str.strip()


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
                            "import with row numbers as ids (--id-column '', on the home page: id column empty)"
                            if rounded else "to keep the first of each, import with `--dedupe first` "
                            "(on the home page: Duplicate ids = first)"))
    report.duplicates_dropped = int(dup.sum())
    report.notes.append(f"dropped {report.duplicates_dropped} rows with duplicate ids")
    return keep & ~dup


def _dates(raw: pd.Series, keep: pd.Series, source: str, date_col: str, options: Options,
           report: Report) -> tuple[pd.Series, pd.Series]:
    """(naive UTC timestamps, rows still kept); dates the file writes without an offset are wall times of
    ``options.timezone`` (UTC by default)."""
    blank = raw.isna() | (raw.astype(str).str.strip() == "")
    values = raw.where(~blank, None)
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
            raise InputError(f"{source}: column {date_col!r} has {int(bad.sum())} unparseable dates in rows "
                             f"{_rows(raw.index[bad])}, e.g. {examples}; use --bad-dates drop or null")
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
    cols = _find_columns(frame, source, columns)
    out = frame.copy()
    out.index = pd.RangeIndex(len(out))
    check_column_types(out, source, cols["text"], cols["id"], cols["date"], cols["author"])
    text = out[cols["text"]]
    text = text.where(~text.isna(), "").astype(str)
    ids = _ids(out, source, cols["id"], report)

    keep = pd.Series(True, index=out.index)
    empty = text.str.strip() == ""
    if empty.any() and not options.keep_empty:
        report.empty_dropped = int(empty.sum())
        report.notes.append(f"dropped {report.empty_dropped} empty texts (rows {_rows(out.index[empty])})")
        keep &= ~empty
    keep = _drop_duplicates(ids, keep, source, cols["id"], options, report)
    dates = None
    if cols["date"] is not None:
        dates, keep = _dates(out[cols["date"]], keep, source, cols["date"], options, report)

    text, raw_text = _unescape_entities(text, report)
    result = pd.DataFrame({"id": ids, "text": text})
    if raw_text is not None:
        result["text_raw"] = raw_text
    if dates is not None:
        result["date"] = dates
    if cols["author"] is not None:
        result["author"] = out[cols["author"]].astype("string").fillna("")
    used = {c for c in cols.values() if c} | {"text_raw"}
    for col in out.columns:  # every other source column is kept
        if col not in used and col not in result.columns:
            result[col] = out[col]
    result = result[keep.values].reset_index(drop=True)
    report.source_rows = np.flatnonzero(keep.values)  # each row's data row in the file (brought vectors)
    _rounded_conversations(result, report)
    if result.empty:
        raise InputError(f"{source}: no rows left after validation ({'; '.join(report.notes)})")
    report.rows_kept = len(result)
    return result, report
