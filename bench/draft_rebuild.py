"""How long an unsaved group takes to come back after its corpus was imported again (ui.drafts.on_this_import):
its labels replayed from the draft's label events by id (GroupStore.work_labels), then the ids looked up in the
new import's rows. Paid once, at the reload (or the next click) after a re-import.

    python -m bench.draft_rebuild --root data --name scale --labels 1000 10000 50000 --repeat 5

The draft is made as the app makes one (a Session's steps and journal, written by sync_draft with ids): one
keyword step bringing in N texts, then N/10 clicks excluding some of them, one at a time. Prints the median of
``--repeat`` runs per N; the store is a fresh SQLite file (the default store) in a temporary folder. Then the
autosave of a click whose one step changed N texts, and of its Undo (see ``autosave``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> None:
    from core.corpus import load_corpus
    from core.session import Session
    from core.store import GroupStore

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("data"))
    ap.add_argument("--name", default="scale")
    ap.add_argument("--labels", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)

    c = load_corpus(a.name, a.root)
    rng = np.random.default_rng(0)
    print(f"corpus {a.name}: {c.n:,} rows")
    for n in a.labels:
        with tempfile.TemporaryDirectory() as tmp:
            store = GroupStore(Path(tmp) / "groups.sqlite", corpus=a.name)
            s = Session()
            rows = rng.choice(c.n, size=n, replace=False)
            s.add_search("keyword", {"query": "x"}, rows.tolist())
            for row in rows[: n // 10]:
                s.toggle(int(row))
            entries = s.unsynced_journal()
            touched = sorted({row for e in entries for row, _, _ in e["changes"]})
            ids = dict(zip(touched, c.ids_of(touched)))
            journal = [{**e, "changes": [(ids[r], old, new) for r, old, new in e["changes"]]} for e in entries]
            t0 = time.perf_counter()
            store.sync_draft("tok", "local", browser="", writer="w", keep=0, steps=s.unsynced_steps(),
                             n_included=len(s.included), n_excluded=len(s.excluded), saved=False, journal=journal)
            write_s = time.perf_counter() - t0
            times = []
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                labels = store.work_labels("tok")
                got = c.id_index.get_indexer(list(labels))
                times.append(time.perf_counter() - t0)
            assert (got >= 0).all() and len(labels) == n
            assert sorted(int(r) for r, lab in zip(got, labels.values()) if lab == -1) == sorted(s.excluded.tolist())
            events = sum(len(e["changes"]) for e in journal)
            print(f"{n:>7,} texts, {len(journal):,} journal entries, {events:,} events (written in {write_s:.2f} s): "
                  f"rebuilt by id in {statistics.median(times) * 1000:.0f} ms (median of {a.repeat})", flush=True)
            autosave(store, c, n, a.repeat, rng)


def autosave(store, c, n: int, repeat: int, rng) -> None:
    """The autosave of one click whose step changed ``n`` texts (a keyword search with *Add at most* 0), and of its
    Undo (the journal's events, and the undone step kept for Redo), as the app does it now (core.session.step_dict;
    the undone step written) and did before 2026-12-01 (dataclasses.asdict, which copied every change; nothing kept
    for Redo)."""
    from dataclasses import asdict

    from core.session import Session, step_dict

    out: dict[str, list[float]] = {}
    for i in range(repeat):
        for how, as_dict, redo in (("before", asdict, False), ("now", step_dict, True)):
            token = f"{how}{i}"
            s = Session()
            s.add_search("keyword", {"query": "x"}, rng.choice(c.n, size=n, replace=False).tolist())
            for what in ("search", "undo"):
                if what == "undo":
                    s.undo()
                t0 = time.perf_counter()
                journal = [{**e, "changes": [(str(r), old, new) for r, old, new in e["changes"]]}
                           for e in s.unsynced_journal()]
                store.sync_draft(token, "local", browser="", writer="w", keep=s.synced,
                                 steps=[as_dict(x) for x in s.history[s.synced:]], n_included=len(s.included),
                                 n_excluded=0, saved=False, journal=journal, keep_undone=s.undone_synced,
                                 undone=[as_dict(x) for x in s.undone[s.undone_synced:]] if redo else [])
                out.setdefault(f"{what} {how}", []).append(time.perf_counter() - t0)
                s.synced, s.journal_synced, s.undone_synced = len(s.history), len(s.journal), len(s.undone)
    print(f"{n:>7,} texts in one step, its autosave (median of {repeat}, ms): " + ", ".join(
        f"{k} {statistics.median(v) * 1000:.0f}" for k, v in out.items()), flush=True)


if __name__ == "__main__":
    main()
