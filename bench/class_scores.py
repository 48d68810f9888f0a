"""What the Topics page's comparison with a column of classes costs: NMI, ARI, accuracy and purity of a clustering
against the corpus's classes (core.cluster.evaluate.column_scores), whole and on the page's sample
(ui.resources.CLASS_SCORE_ROWS), with the classes as strings (a corpus column) on synthetic rows.

    python -m bench.class_scores [--rows 10000000] [--classes 26] [--clusters 4000] [--repeat 3] [--group-rows N]

Also the saved groups beside a clustering (the Topics page's IOU and a group's clusters), five groups.

Prints one line per measurement: median seconds of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

from core.cluster.evaluate import column_scores, group_in_clusters, group_iou, label_scores
from testbed.common import emit, run_folder

SAMPLE = 500_000  # ui.resources.CLASS_SCORE_ROWS (not imported: no Streamlit here)


def timed(fn, repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(round(time.perf_counter() - t, 3))
    return statistics.median(runs), runs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--classes", type=int, default=26)
    p.add_argument("--clusters", type=int, default=4000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--group-rows", type=int, default=500_000, help="rows of each of five saved groups")
    args = p.parse_args(argv)
    run_folder("class-scores", sys.argv[1:] if argv is None else argv)
    rng = np.random.default_rng(0)
    column = pd.Series(pd.array(rng.choice([f"event{i}" for i in range(args.classes)], args.rows), dtype="string"))
    clusters = rng.integers(0, args.clusters, args.rows)
    for label, rows, at_most in (("sample", args.rows, SAMPLE), (f"whole {SAMPLE:,}", SAMPLE, None),
                                 ("whole", args.rows, None)):
        col, cl = column.iloc[:rows], clusters[:rows]
        median, runs = timed(lambda: column_scores(col, cl, at_most=at_most), args.repeat)
        emit(op="class_scores", how=label, rows=rows, at_most=at_most, classes=args.classes, clusters=args.clusters,
             seconds=median, runs=runs)
    # before the classes were coded as integers: scikit-learn sorted the strings as Python objects
    strings = column.iloc[:SAMPLE].to_numpy()
    median, runs = timed(lambda: label_scores(strings, clusters[:SAMPLE]), args.repeat)
    emit(op="class_scores", how=f"as strings, whole {SAMPLE:,} (before)", rows=SAMPLE, at_most=None,
         classes=args.classes, clusters=args.clusters, seconds=median, runs=runs)
    # the saved groups beside the clustering (Topics): five groups of --group-rows rows, computed on a rerun
    # before they were cached per clustering file and state of the groups (ui.resources.saved_groups_in_clustering)
    groups = {f"g{i}": np.sort(rng.choice(args.rows, min(args.group_rows, args.rows), replace=False)) for i in range(5)}
    median, runs = timed(lambda: group_iou(groups, clusters), args.repeat)
    emit(op="group_iou", rows=args.rows, groups=5, group_rows=args.group_rows, clusters=args.clusters,
         seconds=median, runs=runs)
    median, runs = timed(lambda: group_in_clusters(groups["g0"], clusters), args.repeat)
    emit(op="group_in_clusters", rows=args.rows, group_rows=args.group_rows, clusters=args.clusters,
         seconds=median, runs=runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
