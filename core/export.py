"""Export a saved group (id, text, label, date, author) as CSV, JSONL or Parquet."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import pandas as pd

from core.corpus import Corpus

FORMATS = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}


def group_frame(corpus: Corpus, included: Sequence[str], excluded: Sequence[str]) -> pd.DataFrame:
    labels = {str(i): "included" for i in included} | {str(i): "excluded" for i in excluded}
    f = corpus.frame
    mask = f["id"].isin(labels.keys())
    cols = ["id", "text"] + [c for c in ("date", "author") if c in f.columns]
    out = f.loc[mask, cols].copy()
    out.insert(2, "label", out["id"].map(labels))
    missing = set(labels) - set(out["id"])
    if missing:  # ids of a group saved on an earlier import of the corpus: keep them, say so
        extra = pd.DataFrame({"id": sorted(missing), "text": None, "label": [labels[i] for i in sorted(missing)]})
        out = pd.concat([out, extra], ignore_index=True)
    return out.reset_index(drop=True)


def to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    buf = io.BytesIO()
    if fmt == "csv":
        buf.write(frame.to_csv(index=False).encode("utf-8"))
    elif fmt == "jsonl":
        buf.write(frame.to_json(orient="records", lines=True, force_ascii=False, date_format="iso").encode("utf-8"))
    else:
        frame.to_parquet(buf, index=False)
    return buf.getvalue()


def write(frame: pd.DataFrame, fmt: str, path: Path) -> Path:
    from core.atomic import atomic_path

    with atomic_path(Path(path)) as tmp:
        tmp.write_bytes(to_bytes(frame, fmt))
    return Path(path)
