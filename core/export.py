"""Export a saved group (id, text, label, date, author), or every group of a corpus side by side, as CSV, Excel,
JSONL or Parquet; a cluster's texts too."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from core import timezones
from core.corpus import Corpus

FORMATS = {"csv": "text/csv", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
           "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}
LABELS = {"csv": "CSV", "xlsx": "Excel (.xlsx)", "jsonl": "JSON Lines", "parquet": "Parquet"}  # as offered
XLSX_ROWS = 1_048_575  # an Excel sheet's rows, less the header
XLSX_CELL = 32_767  # the characters an Excel cell holds


def texts_frame(corpus: Corpus, rows: Sequence[int]) -> pd.DataFrame:
    """The texts of these rows (positions in the corpus, in its order): id, text, date and author where the corpus has
    them, then the file's other columns as imported (a tweet's ``conversation_id``, ``lang``...; one called ``label``
    as ``label (file)``), dates as the pages show them (wall times of the corpus's zone)."""
    f = corpus.frame
    cols = ["id", "text"] + [c for c in ("date", "author") if c in f.columns]
    out = f.iloc[np.asarray(rows, np.int64)][cols + [c for c in f.columns if c not in cols]].copy()
    out = out.rename(columns={"label": "label (file)"})
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(out[col].cat.categories.dtype)  # plain text, as imported
    return timezones.shown(out, corpus.timezone)


def group_frame(corpus: Corpus, included: Sequence[str], excluded: Sequence[str]) -> pd.DataFrame:
    """The group's texts (:func:`texts_frame`) with their label after the text; ids the corpus no longer holds are
    kept at the end, without a text."""
    labels = {str(i): "included" for i in included} | {str(i): "excluded" for i in excluded}
    out = texts_frame(corpus, np.flatnonzero(corpus.frame["id"].isin(labels.keys()).to_numpy()))
    out.insert(2, "label", out["id"].map(labels))
    missing = set(labels) - set(out["id"])
    if missing:  # ids of a group saved on an earlier import of the corpus: keep them, say so
        extra = pd.DataFrame({"id": sorted(missing), "text": None, "label": [labels[i] for i in sorted(missing)]})
        out = pd.concat([out, extra], ignore_index=True)
    return out.reset_index(drop=True)


GROUP_COLUMN = "group: "  # the column of each group in an export of every group: "group: vaccines"


def groups_frame(corpus: Corpus, groups: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> pd.DataFrame:
    """Every text labelled in any of ``groups`` (name -> (included ids, excluded ids)), once, in the corpus's
    order: :func:`texts_frame`'s columns with, after the text, a column per group (by name) saying
    ``included``, ``excluded`` or nothing; ids the corpus no longer holds at the end, without a text."""
    labels = {name: {str(i): "included" for i in inc} | {str(i): "excluded" for i in exc}
              for name, (inc, exc) in sorted(groups.items())}
    every = set().union(*labels.values()) if labels else set()
    out = texts_frame(corpus, np.flatnonzero(corpus.frame["id"].isin(every).to_numpy()))
    missing = sorted(every - set(out["id"]))
    if missing:  # ids of groups saved on an earlier import of the corpus: kept, said by the empty text
        out = pd.concat([out, pd.DataFrame({"id": missing, "text": None})], ignore_index=True)
    for k, (name, of) in enumerate(labels.items()):
        out.insert(2 + k, GROUP_COLUMN + name, out["id"].map(of))
    return out.reset_index(drop=True)


def saved_groups_frame(corpus: Corpus, store, names: Sequence[str]) -> pd.DataFrame:
    """:func:`groups_frame` of these saved groups of ``store`` (a GroupStore), each at its latest version."""
    saved = {name: store.load(name) for name in names}
    return groups_frame(corpus, {name: (g.included, g.excluded) for name, g in saved.items()})


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy where every text cell that a spreadsheet would run as a formula (starting with
    ``= + - @``, tab or carriage return) starts with an apostrophe instead, as OWASP advises for
    CSV; the texts stay readable and the export opens safely in Excel or LibreOffice."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            values = out[col].astype(object)
            risky = np.fromiter((isinstance(v, str) and v.startswith(FORMULA_START) for v in values),
                                dtype=bool, count=len(values))
            if risky.any():
                out[col] = [("'" + v) if r else v for v, r in zip(values, risky)]
    return out


def to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    buf = io.BytesIO()
    if fmt == "csv":
        # CSV is what spreadsheets open: no cell may run as a formula there, and a byte-order mark, without
        # which Excel reads UTF-8 as the Windows code page (Příliš comes out as PĹ™Ă­liĹˇ)
        buf.write(neutralise_formulas(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8-sig"))
    elif fmt == "xlsx":
        _write_xlsx(frame, buf)
    elif fmt == "jsonl":
        buf.write(frame.to_json(orient="records", lines=True, force_ascii=False, date_format="iso").encode("utf-8"))
    else:
        frame.to_parquet(buf, index=False)
    return buf.getvalue()


def _write_xlsx(frame: pd.DataFrame, out) -> None:
    """One sheet, streamed row by row (XlsxWriter's constant-memory mode). Texts stay text: never a
    formula (a tweet '=1+1' shows as written), a number or a link; a text longer than a cell holds
    (32,767 characters) is cut with '…'; dates keep their time. ValueError when the group has more
    rows than a sheet."""
    import xlsxwriter

    if len(frame) > XLSX_ROWS:
        raise ValueError(f"{len(frame):,} texts do not fit one Excel sheet ({XLSX_ROWS:,} rows); export CSV or "
                         "Parquet instead")
    book = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_formulas": False,
                                     "strings_to_numbers": False, "strings_to_urls": False})
    sheet = book.add_worksheet("group")
    when = book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    sheet.write_row(0, 0, list(frame.columns))
    for j, col in enumerate(frame.columns):
        if pd.api.types.is_datetime64_any_dtype(frame[col]):
            sheet.set_column(j, j, 19, when)
    columns = [frame[c].astype(object).where(frame[c].notna(), None).tolist() for c in frame.columns]
    for i, row in enumerate(zip(*columns), start=1):
        for j, value in enumerate(row):
            if value is None:
                continue
            if isinstance(value, str):
                sheet.write_string(i, j, value if len(value) <= XLSX_CELL else value[:XLSX_CELL - 1] + "…")
            elif isinstance(value, pd.Timestamp):
                sheet.write_datetime(i, j, value.to_pydatetime(), when)
            else:
                sheet.write(i, j, value)
    book.close()


def write(frame: pd.DataFrame, fmt: str, path: Path) -> Path:
    from core.atomic import atomic_path

    with atomic_path(Path(path)) as tmp:
        tmp.write_bytes(to_bytes(frame, fmt))
    return Path(path)
