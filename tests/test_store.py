"""Saved groups: round trip, versions, concurrency, crash safety, soft delete, export."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from core.store import GroupExists, GroupNotFound, GroupStore
from tests.conftest import ROOT


def test_round_trip_and_versions(tmp_path):
    s = GroupStore(tmp_path / "g.sqlite")
    assert s.save("vaccines", ["a", "b"], ["c"], annotator="eva", notes="first", session_json='{"x": 1}') == 1
    g = s.load("vaccines")
    assert (g.included, g.excluded, g.number, g.annotator, g.notes) == (["a", "b"], ["c"], 1, "eva", "first")
    assert g.session_json == '{"x": 1}'
    with pytest.raises(GroupExists, match="overwrite"):
        s.save("vaccines", ["a"], [])
    assert s.save("vaccines", ["a", "d"], ["b"], annotator="jan", overwrite=True) == 2
    assert s.load("vaccines").included == ["a", "d"]
    assert s.load("vaccines", version=1).included == ["a", "b"], "earlier versions are never lost"
    info = s.list()[0]
    assert (info.name, info.versions, info.n_included, info.n_excluded) == ("vaccines", 2, 2, 1)
    assert [v[0] for v in s.versions("vaccines")] == [1, 2]
    with pytest.raises(ValueError, match="both included and excluded"):
        s.save("bad", ["a"], ["a"])
    with pytest.raises(ValueError, match="needs a name"):
        s.save("  ", ["a"], [])
    with pytest.raises(GroupNotFound):
        s.load("nope")
    assert sqlite3.connect(tmp_path / "g.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_soft_delete_and_restore(tmp_path):
    s = GroupStore(tmp_path / "g.sqlite")
    s.save("a", ["1"], [])
    s.delete("a")
    assert s.names() == [] and [g.name for g in s.list(include_deleted=True)] == ["a"]
    assert s.load("a").included == ["1"]  # still there
    s.restore("a")
    assert s.names() == ["a"]
    with pytest.raises(GroupNotFound):
        s.restore("a")


WRITER = """
import sys
from core.store import GroupStore
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = GroupStore(path)
for i in range(n):
    s.save(f"{tag}-{i}", [f"{tag}{i}-{j}" for j in range(20)], [f"x{i}"])
    s.save("shared", [f"{tag}{i}"], [], overwrite=True)
"""


def test_two_processes_saving_at_once_lose_nothing(tmp_path):
    path = tmp_path / "g.sqlite"
    GroupStore(path)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "40"], cwd=ROOT)
             for tag in ("p", "q")]
    for p in procs:
        assert p.wait(120) == 0
    s = GroupStore(path)
    names = set(s.names())
    assert {f"{t}-{i}" for t in "pq" for i in range(40)} <= names
    assert all(len(s.load(f"p-{i}").included) == 20 for i in range(40))
    assert len(s.versions("shared")) == 80


KILLER = """
import sys
from core.store import GroupStore
s = GroupStore(sys.argv[1])
print("saving", flush=True)
s.save("g", [f"id{i}" for i in range(3_000_000)], [], overwrite=True)
print("done", flush=True)
"""


def test_killed_save_leaves_previous_version_intact(tmp_path):
    path = tmp_path / "g.sqlite"
    GroupStore(path).save("g", ["keep1", "keep2"], ["drop"])
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "saving"
    wal = Path(f"{path}-wal")
    deadline = time.monotonic() + 60
    while not (wal.exists() and wal.stat().st_size > 1 << 20):  # the save is writing: kill it then
        assert proc.poll() is None and time.monotonic() < deadline, "the big save ended before it could be killed"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    s = GroupStore(path)
    g = s.load("g")
    assert (g.number, g.included, g.excluded) == (1, ["keep1", "keep2"], ["drop"])
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 3
    assert s.save("g", ["new"], [], overwrite=True) == 2


def test_export_cli_formats(tmp_path, so_corpus):
    import os
    import shutil

    root = tmp_path / "d"
    shutil.copytree(so_corpus.folder, root / "so")
    ids = so_corpus.frame["id"].tolist()
    GroupStore(root / "so" / "groups.sqlite").save("g", ids[:3], ids[3:5])
    env = {**os.environ, "SEMANNO_DATA": str(root)}
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"g.{fmt}"
        r = subprocess.run([sys.executable, "-m", "precompute.export", "--corpus", "so", "--group", "g",
                            "--format", fmt, "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        frame = {"csv": lambda p: pd.read_csv(p, dtype=str), "parquet": pd.read_parquet,
                 "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False)}[fmt](out)
        assert sorted(frame["id"].astype(str)) == sorted(ids[:5])
        assert (frame["label"] == "included").sum() == 3 and (frame["label"] == "excluded").sum() == 2
        texts = dict(zip(so_corpus.frame["id"], so_corpus.frame["text"]))
        assert all(texts[str(i)] == t for i, t in zip(frame["id"], frame["text"]))
    r = subprocess.run([sys.executable, "-m", "precompute.export", "--corpus", "so", "--group", "nope"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "has no group 'nope'" in r.stderr

    def export(*args):
        return subprocess.run([sys.executable, "-m", "precompute.export", "--corpus", "so", "--group", "g", *args],
                              cwd=ROOT, env=env, capture_output=True, text=True)

    # the format a file's ending names, without --format (a CSV was written into g.xlsx)
    assert export("--out", str(tmp_path / "g.xlsx")).returncode == 0
    assert sorted(pd.read_excel(tmp_path / "g.xlsx", dtype=str, engine="calamine")["id"]) == sorted(ids[:5])
    for args, says in ((["--out", str(tmp_path / "g.csv"), "--format", "xlsx"],
                        "names a .csv file but --format is xlsx"),
                       (["--out", str(tmp_path)], "a folder; name a file in it"),  # was a traceback
                       (["--out", str(tmp_path / "none" / "g.csv")], "does not exist"),
                       (["--version", "2"], "group 'g' of corpus 'so' has no version 2 (it has version 1)"),
                       (["--version", "0"], "--version: must be at least 1")):  # 0 exported the latest
        r = export(*args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_every_group_exported_side_by_side_once_a_text(tmp_path, so_corpus):
    """``precompute.export --all``: each text labelled in any group once, a column per group (latest versions, the
    deleted group left out), an id the corpus no longer holds kept without a text."""
    import os
    import shutil

    root = tmp_path / "d"
    shutil.copytree(so_corpus.folder, root / "so")
    ids = so_corpus.frame["id"].tolist()
    store = GroupStore(root / "so" / "groups.sqlite")
    store.save("a", ids[:3], ids[3:5])
    store.save("a", ids[:4], [ids[4]], overwrite=True)  # the latest version is exported
    store.save("b", [ids[2], "gone"], [ids[0]])
    store.save("c", [ids[9]], [])
    store.delete("c")
    env = {**os.environ, "SEMANNO_DATA": str(root)}

    def export(*args):
        return subprocess.run([sys.executable, "-m", "precompute.export", "--corpus", "so", *args], cwd=ROOT,
                              env=env, capture_output=True, text=True)

    r = export("--all", "--out", str(tmp_path / "all.xlsx"))
    assert r.returncode == 0 and "wrote 6 rows of 2 groups" in r.stderr, r.stderr
    frame = pd.read_excel(tmp_path / "all.xlsx", dtype=str, engine="calamine").fillna("")
    assert frame.columns.tolist()[:4] == ["id", "text", "group: a", "group: b"]
    got = {i: (a, b) for i, a, b in zip(frame["id"], frame["group: a"], frame["group: b"])}
    assert got == {ids[0]: ("included", "excluded"), ids[1]: ("included", ""), ids[2]: ("included", "included"),
                   ids[3]: ("included", ""), ids[4]: ("excluded", ""), "gone": ("", "included")}
    texts = dict(zip(so_corpus.frame["id"], so_corpus.frame["text"]))
    assert all(texts[i] == t for i, t in zip(frame["id"], frame["text"]) if i != "gone")
    assert frame["id"].tolist()[-1] == "gone" and frame["text"].tolist()[-1] == ""
    r = export("--all", "--version", "1")
    assert r.returncode == 2 and "--version: only with --group" in r.stderr
    r = export("--all", "--group", "a")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


def test_group_names_are_limited_to_a_sensible_length_and_visible_characters(tmp_path):
    store = GroupStore(tmp_path / "g.sqlite")
    for bad, says in (("x" * 1_000_000, "at most 120 characters; this one has 1,000,000"),
                      ("\u200b", "at least one visible character"), ("\u200b \u2060", "visible character"),
                      ("a\x00b", "control characters"), ("   ", "needs a name")):
        with pytest.raises(ValueError, match=says):
            store.save(bad, ["1"], [])
    assert store.names() == []
    assert store.save("  Očkování 2021 ✓ ", ["1"], []) == 1 and store.names() == ["Očkování 2021 ✓"]


def test_csv_export_cannot_run_formulas_in_a_spreadsheet():
    import pandas as pd

    from core.export import to_bytes

    frame = pd.DataFrame({"id": ["=1+1", "2", "@3"], "text": ["=HYPERLINK(\"http://x\")", "-2+3", "plain = fine"],
                          "label": ["included"] * 3})
    csv = pd.read_csv(__import__("io").BytesIO(to_bytes(frame, "csv")), dtype=str)
    assert csv["id"].tolist() == ["'=1+1", "2", "'@3"]
    assert csv["text"].tolist() == ["'=HYPERLINK(\"http://x\")", "'-2+3", "plain = fine"]
    # Excel reads a CSV without a byte-order mark in the Windows code page: Czech letters garbled
    czech = to_bytes(pd.DataFrame({"id": ["1"], "text": ["Příliš žluťoučký kůň"]}), "csv")
    assert czech.startswith("\ufeff".encode()) and czech.decode("utf-8-sig").splitlines()[1] == "1,Příliš žluťoučký kůň"
    # the other formats are data, not spreadsheets: unchanged
    assert b'"id":"=1+1"' in to_bytes(frame, "jsonl")


def test_an_exported_text_holding_line_breaks_of_any_kind_stays_one_row_in_every_format():
    """A text with a lone carriage return (an old Mac's line end) was written unquoted into the CSV, and every
    spreadsheet (and pandas, and Python's csv) read it as two rows: the text cut, a row of its end with no id. CSV rows
    now end in CRLF (RFC 4180), so any field holding CR or LF is quoted. Random mixes of control characters,
    separators, quotes and formula starts came back from CSV, Excel, JSON Lines and Parquet as they went in."""
    import csv
    import io

    import pandas as pd

    from core.export import to_bytes
    from tests.conftest import xlsx_cells

    texts = ["a\rb", "c\r\nd", "e\nf", "g\r", "\rh", "tab\tand \"quote\", comma", "\x0b\x0c\x1f x"]
    frame = pd.DataFrame({"id": [str(i) for i in range(len(texts))], "text": texts, "label": ["included"] * len(texts)})
    data = to_bytes(frame, "csv").decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(data, newline="")))
    in_csv = [("'" + t) if t.startswith("\r") else t for t in texts]  # a formula's start (a CR too) neutralised
    assert [r[1] for r in rows[1:]] == in_csv and [r[0] for r in rows[1:]] == frame["id"].tolist()
    assert pd.read_csv(io.StringIO(data), dtype=str)["text"].tolist() == in_csv
    cells = xlsx_cells(to_bytes(frame, "xlsx"))
    unescaped = [re.sub(r"_x([0-9A-F]{4})_", lambda m: chr(int(m[1], 16)), cells[f"B{i + 2}"][1])
                 for i in range(len(texts))]
    assert unescaped == texts  # Excel's own escapes (_x000D_) for what XML would change or refuse
    assert pd.read_json(io.BytesIO(to_bytes(frame, "jsonl")), lines=True, dtype=False)["text"].tolist() == texts
    assert pd.read_parquet(io.BytesIO(to_bytes(frame, "parquet")))["text"].tolist() == texts


def test_an_export_keeps_a_files_own_label_column_beside_the_groups_label():
    """A labelled benchmark's file has a column called label: exported as 'label (file)', the group's own label
    beside it; a category column comes out as its text; an id the corpus no longer holds keeps its label."""
    from types import SimpleNamespace

    import pandas as pd

    from core.export import group_frame

    frame = pd.DataFrame({"id": ["1", "2"], "text": ["a", "b"], "label": ["7", "8"],
                          "source": pd.Categorical(["web", "app"])})
    out = group_frame(SimpleNamespace(frame=frame, timezone="UTC"), ["1"], ["2", "9"])
    assert out.columns.tolist() == ["id", "text", "label", "label (file)", "source"]
    assert out["label"].tolist() == ["included", "excluded", "excluded"]
    assert out["label (file)"].tolist()[:2] == ["7", "8"] and out["source"].tolist()[:2] == ["web", "app"]
    assert out["source"].dtype == object or pd.api.types.is_string_dtype(out["source"])


def test_an_excel_export_keeps_texts_as_text_and_dates_as_dates():
    import pandas as pd

    from core.export import XLSX_CELL, to_bytes
    from tests.conftest import xlsx_cells

    frame = pd.DataFrame({"id": ["=1+1", "2", "3"], "text": ["=HYPERLINK(\"http://x\")", "Příliš žluťoučký 0042",
                                                                "x" * 40_000],
                          "label": ["included", "included", "excluded"],
                          "date": pd.to_datetime(["2021-01-02 12:00", None, "2021-03-04 00:00"]),
                          "author": ["a", None, "c"]})
    rows = xlsx_cells(to_bytes(frame, "xlsx"))
    assert [rows[f"{col}1"][1] for col in "ABCDE"] == ["id", "text", "label", "date", "author"]
    # a text that starts with '=' is text, not a formula; a text of digits stays text
    assert rows["A2"] == ("text", "=1+1") and rows["B2"] == ("text", '=HYPERLINK("http://x")')
    assert rows["B3"] == ("text", "Příliš žluťoučký 0042") and "D3" not in rows and "E3" not in rows
    assert rows["D2"][0] == "value" and abs(float(rows["D2"][1]) - 44198.5) < 1e-6  # 2 January 2021, noon
    assert len(rows["B4"][1]) == XLSX_CELL and rows["B4"][1].endswith("…") and rows["C4"] == ("text", "excluded")
