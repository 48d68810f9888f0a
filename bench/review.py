"""The Review page with a large team topic: how long the adjudicator waits.

    python -m bench.review [--corpus scale] [--annotators 3] [--labels 20000] [--flip 0.1] [--repeat 3]

A fresh data root beside the corpus (its files linked, a new groups.sqlite) holds one topic whose
annotators each labelled ``--labels`` of the same texts (each keeps a text with probability .9, and
gives the other label than the truth with probability ``--flip``), every group submitted. The page
runs in Streamlit's AppTest as the topic's creator: the first run (the corpus loaded, the agreement
and the disagreements' table made), then medians of ``--repeat`` reruns, of a rerun after one decision
in the table, and of the click that takes the majority's label for every undecided text. One JSON line
per figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

import numpy as np

from core import paths
from testbed.common import emit, run_folder

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-review-0123456789"


def make_topic(root: Path, corpus: str, annotators: int, labels: int, flip: float, seed: int = 0) -> int:
    """The topic ``bench`` on ``corpus`` under ``root``; returns the number of disagreements."""
    from core.corpus import load_corpus
    from core.store import GroupStore
    from core.teams import agreement

    c = load_corpus(corpus, root=root)
    rng = np.random.default_rng(seed)
    ids = c.frame["id"].to_numpy()[rng.choice(c.n, size=labels, replace=False)]
    truth = rng.random(labels) < .4  # 40% of the texts belong to the topic
    store = GroupStore(root / corpus / "groups.sqlite")
    store.create_topic("bench", "A large topic.", "lead", blind=False)
    given = {}
    for a in range(annotators):
        keep = rng.random(labels) < .9
        label = np.where(truth ^ (rng.random(labels) < flip), 1, -1)
        who = f"annotator{a}"
        given[who] = {str(i): int(v) for i, v, k in zip(ids, label, keep) if k}
        store.save(store.assign("bench", who), [i for i, v in given[who].items() if v == 1],
                   [i for i, v in given[who].items() if v == -1], annotator=who, topic="bench")
        store.submit("bench", who)
    return len(agreement(given).disagreements)


def timed(at, action=None) -> float:
    t = time.perf_counter()
    (action() if action else at).run()
    assert not at.exception, at.exception
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="scale")
    p.add_argument("--annotators", type=int, default=3)
    p.add_argument("--labels", type=int, default=20_000)
    p.add_argument("--flip", type=float, default=0.1)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    run_folder("review", argv or [])
    from streamlit.testing.v1 import AppTest

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src = paths.corpus_dir(args.corpus)
        (root / args.corpus).mkdir()
        for f in src.iterdir():  # the corpus's files and generations, not its groups
            if not f.name.startswith("groups.sqlite"):
                (root / args.corpus / f.name).symlink_to(f.resolve())
        t = time.perf_counter()
        n_dis = make_topic(root, args.corpus, args.annotators, args.labels, args.flip)
        emit(step="setup", annotators=args.annotators, labels=args.labels, disagreements=n_dis,
             seconds=round(time.perf_counter() - t, 2))
        from streamlit.runtime.context import StreamlitHeaders

        import ui.access

        # the page is run as the lead, signed in through the proxy; put back after the run (a test calls main())
        with patch.dict(os.environ, SEMANNO_DATA=str(root), SEMANNO_PROXY_USER_HEADER="X-Remote-User",
                        SEMANNO_PROXY_SECRET=SECRET), \
                patch.object(ui.access, "request_headers", lambda: StreamlitHeaders(
                    [("X-Remote-User", "lead"), ("X-Semanno-Proxy-Secret", SECRET)])):
            measure(AppTest.from_file(str(ROOT / "pages/8_Review.py"), default_timeout=600), args)


def measure(at, args) -> None:
    """The Review page's timings, on an AppTest of it."""
    at.query_params["corpus"] = args.corpus
    emit(step="first run", seconds=round(timed(at), 3))
    rows = len(at.get("data_editor")[0].value)
    reruns = [timed(at) for _ in range(args.repeat)]
    emit(step="rerun", rows=rows, median_s=round(statistics.median(reruns), 3), runs=[round(x, 3) for x in reruns])
    edits = []
    for r in range(args.repeat):
        at.session_state[at.session_state["rv_editor"]] = {
            "edited_rows": {r: {"gold": "excluded"}}, "added_rows": [], "deleted_rows": []}
        edits.append(timed(at))
    emit(step="one decision in the table", median_s=round(statistics.median(edits), 3),
         runs=[round(x, 3) for x in edits])
    bulk = []
    for _ in range(args.repeat):
        bulk.append(timed(at, at.button(key="rv_majority").click))
        decided = at.button(key="rv_save").label
        at.button(key="rv_majority_undo").click().run()
    emit(step="the majority's label at one click", median_s=round(statistics.median(bulk), 3),
         runs=[round(x, 3) for x in bulk], save_button=decided)


if __name__ == "__main__":
    main()
