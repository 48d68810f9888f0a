"""How long the import takes to read and check a file in each format it reads, and how long the home page's form
takes to read a file's first rows (it does so on every rerun while a file is picked): real tweets (the scale corpus's
id, text, date, author), ``--sizes`` rows each, written once per format in a temporary folder; median of
``--repeat``. "csv (other names)" is the same CSV with a Twitter export's headings (tweet_id, full_text, created_at,
username): what finding each column by its name costs; "json array" the rows as one JSON array (a scraper's .json);
"twarc2 pages" the rows as Twitter API v2 responses of 100 tweets with their authors in ``includes``, as ``twarc2
search`` saves them.

    python -m bench.read_files [--sizes 10000 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from core.export import to_bytes
from core.ingest import read_head, read_table, validate
from testbed.common import SCALE, emit, run_folder

OTHER_NAMES = {"id": "tweet_id", "text": "full_text", "date": "created_at", "author": "username"}


def write_files(n: int, folder: Path) -> dict[str, Path]:
    raw = pd.read_csv(SCALE, nrows=n, dtype=str, keep_default_na=False, usecols=["id", "text", "date", "author"])
    files = {"csv": folder / "t.csv", "csv (other names)": folder / "other.csv", "parquet": folder / "t.parquet",
             "jsonl": folder / "t.jsonl", "json array": folder / "t.json", "twarc2 pages": folder / "pages.jsonl",
             "xlsx": folder / "t.xlsx"}
    raw.to_csv(files["csv"], index=False)
    raw.rename(columns=OTHER_NAMES).to_csv(files["csv (other names)"], index=False)
    raw.to_parquet(files["parquet"], index=False)
    raw.to_json(files["jsonl"], orient="records", lines=True, force_ascii=False)
    raw.to_json(files["json array"], orient="records", force_ascii=False)
    files["twarc2 pages"].write_text("\n".join(json.dumps(page, ensure_ascii=False) for page in pages(raw)))
    dated = raw.assign(date=pd.to_datetime(raw["date"], format="mixed"))  # as the Groups page's export writes dates
    files["xlsx"].write_bytes(to_bytes(dated, "xlsx"))
    return files


def pages(raw: pd.DataFrame, size: int = 100):
    """The rows as API v2 responses: each ``size`` tweets in ``data``, their authors in ``includes.users``."""
    for start in range(0, len(raw), size):
        part = raw.iloc[start:start + size]
        users = {a: f"u{abs(hash(a)) % 10**9}" for a in part["author"].unique()}
        yield {"data": [{"id": r.id, "text": r.text, "created_at": r.date, "author_id": users[r.author]}
                        for r in part.itertuples()],
               "includes": {"users": [{"id": u, "username": a, "name": a} for a, u in users.items()]},
               "meta": {"result_count": len(part)}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("read-files", sys.argv)
    for n in a.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            for fmt, path in write_files(n, Path(tmp)).items():
                whole, head = [], []
                for _ in range(a.repeat):
                    t = time.perf_counter()
                    frame, report = validate(read_table(path), path.name)
                    whole.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    with open(path, "rb") as fh:
                        read_head(fh, path.name)
                    head.append(time.perf_counter() - t)
                assert len(frame) == n and "date" in frame.columns and "author" in frame.columns, (fmt, report.notes)
                emit(rows=n, format=fmt, mb=round(path.stat().st_size / 1e6, 2),
                     read_and_check_s=round(statistics.median(whole), 3),
                     first_rows_ms=round(1000 * statistics.median(head), 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
