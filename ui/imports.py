"""The home page's import, apart from its widgets: where an upload goes, which server paths and
models the browser may name, and the message shown after the page reloads."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import streamlit as st

from core import paths
from core.embed import DEFAULT_MODEL, KNOWN_MODELS
from core.ingest import SUFFIXES, InputError, read_head

UPLOAD_CHUNK = 1 << 20


# What the uploader offers: every type the import reads, and gzipped ones (tweets.csv.gz)
UPLOAD_TYPES = sorted({s.lstrip(".") for s in SUFFIXES} | {"gz"})


def upload_suffix(name: str) -> str:
    """The suffix an upload keeps on the server, so that the import knows its type: '.csv.gz' for a
    gzipped CSV (not '.gz' alone), else the last suffix; only the import's own types are kept whole."""
    suffixes = [x.lower() for x in Path(name).suffixes[-2:]]
    if len(suffixes) == 2 and suffixes[1] == ".gz" and suffixes[0] in SUFFIXES:
        return "".join(suffixes)
    return suffixes[-1] if suffixes else ""


def save_upload(upload) -> Path:
    """Copy an uploaded file to the data root's .uploads folder in 1 MB pieces (no second copy
    in memory) under a fresh name; the caller deletes it after the import."""
    folder = paths.data_root() / ".uploads"
    folder.mkdir(parents=True, exist_ok=True)
    suffix = upload_suffix(upload.name)
    target = folder / f"{uuid.uuid4().hex}{suffix}"
    upload.seek(0)
    with open(target, "wb") as fh:
        shutil.copyfileobj(upload, fh, UPLOAD_CHUNK)
    return target


def server_file(text: str) -> Path:
    """A server path typed in the browser, confined to the operator's import folders."""
    return paths.confine(text, paths.import_roots(), "file", "SEMANNO_IMPORT_ROOTS")


def file_head(upload, path_text: str | None, sheet: str | None = None):
    """(the first rows of the file picked in the form, None), or (None, why they cannot be read); (None, None)
    while nothing is picked. The file is an upload, or a path inside the operator's import folders; ``sheet``: a
    workbook's (default: the one the import would read; the rows' ``attrs`` name it and the others). Read once per
    file and sheet and kept in the session: the form reruns on every widget, and a workbook's first rows cost its
    whole sheet's reading (1.9 s for 300,000 rows, bench.read_files)."""
    key = ("upload", upload.file_id) if upload is not None else ("path", path_text) if path_text else None
    if key is None:
        return None, None
    if key[0] == "path":
        try:  # the same path after the file changed is another file
            stat = server_file(path_text).stat()
            key += (stat.st_mtime_ns, stat.st_size)
        except (OSError, ValueError):
            pass  # said by the reading below
    kept = st.session_state.get("imp_head")
    if kept is None or kept[0] != key:  # another file: what was read of the one before is let go
        kept = st.session_state["imp_head"] = (key, {})
    if sheet not in kept[1]:
        result = kept[1][sheet] = _read_head(upload, path_text, sheet)
        if result[0] is not None:  # the sheet read by default is that sheet's when picked by name too
            kept[1].setdefault(result[0].attrs.get("sheet"), result)
    return kept[1][sheet]


def _read_head(upload, path_text: str | None, sheet: str | None):
    try:
        if upload is not None:
            upload.seek(0)
            try:
                return read_head(upload, upload.name, sheet=sheet), None
            finally:
                upload.seek(0)
        if path_text:
            try:
                with open(server_file(path_text), "rb") as fh:
                    return read_head(fh, path_text, sheet=sheet), None
            except OSError as exc:  # named as typed, not by where the server keeps it
                return None, f"{path_text}: cannot be opened ({exc.strerror or exc.__class__.__name__})"
    except (InputError, ValueError) as exc:  # ValueError: a path outside the import folders
        return None, str(exc)
    return None, None


def models_from(text: str) -> list[str]:
    """Model names typed in the browser: 'default', a packaged model's name, or a folder inside
    the operator's model folders (never any path on the server)."""
    out = []
    for m in (m.strip() for m in text.split(",")):
        if not m:
            continue
        if m in KNOWN_MODELS:  # 'default' among them
            out.append(m)
        else:
            out.append(str(paths.confine(m, paths.model_roots(), "model", "SEMANNO_MODEL_ROOTS")))
    return out or [DEFAULT_MODEL]


def remember_result(kind: str, text: str) -> None:
    """A message for the next run of the page (an import ends with a rerun to switch corpus)."""
    st.session_state["import_result"] = (kind, text)


def show_result() -> None:
    if "import_result" in st.session_state:
        kind, text = st.session_state.pop("import_result")
        getattr(st, kind)(text)
