"""Recall against class size, from the raw lines of simulated-annotator runs (bench/results/annotator-*).

    python -m bench.plot_bands RUN [RUN ...] [--multiple 1.0] [--out bench/results/recall_by_size.png]
    python -m bench.plot_bands RUN [RUN ...] --table

RUN: a run folder (or its lines.jsonl). One panel per run, one line per method: the mean recall at
``--multiple`` x class size of the classes of each size, over sizes. ``--table`` prints instead a
Markdown table of mean recall at 1x / 1.5x / 2x per dataset, keyword policy, class-size band and
method, pooling the runs given (e.g. several shrink seeds) and saying how many topics each cell has;
a mark that a run did not reach (its budget stopped before it) is left blank, and lines written
before issue 33 (recall counted per whole step, superseded) are marked "per step".
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def read(run: Path) -> tuple[str, list[dict]]:
    lines = run / "lines.jsonl" if run.is_dir() else run
    folder = lines.parent
    info = json.loads((folder / "run.json").read_text()) if (folder / "run.json").exists() else {}
    rows = [json.loads(l) for l in lines.read_text().splitlines() if l.strip()]
    rows = [r for r in rows if "cls" in r and "method" in r]
    policy = rows[0].get("keyword_policy", "fixed") if rows else ""
    title = f"{rows[0]['dataset'] if rows else folder.name}, keyword step {policy}"
    if "--seed-hits 10" in info.get("command", ""):
        title += " (10 hits: plain protocol)"
    return title, rows


BANDS = ["<=50", "51-150", "151-500", ">500"]


def cell(rows: list[dict], mark: float) -> str:
    """Mean recall at ``mark`` over the cell's runs; blank when a run did not reach the mark (a budget
    below it), never a 0 that was not measured."""
    key = f"recall@{mark}x"
    if not rows or any(r.get(key) is None for r in rows):
        return ""
    return f"{sum(r[key] for r in rows) / len(rows):.3f}"


def table(runs: list[Path]) -> str:
    cells = defaultdict(list)  # (dataset, policy, band, method) -> rows
    methods: list[str] = []
    measured: dict[tuple, set] = defaultdict(set)
    for run in runs:
        _, rows = read(run)
        for r in rows:
            policy = r.get("keyword_policy", "fixed")
            for band in (r.get("band"), "all"):
                cells[(r["dataset"], policy, band, r["method"])].append(r)
            # lines written before issue 33 counted whole steps only (superseded)
            measured[(r["dataset"], policy)].add(r.get("recall_measured", "per step"))
            if r["method"] not in methods:
                methods.append(r["method"])
    out = ["| dataset | keyword step | recall counted | band | topics | " + " | ".join(methods) + " |",
           "|---|---|---|---|---|" + "---|" * len(methods)]
    for dataset, policy in dict.fromkeys((k[0], k[1]) for k in cells):
        how = " + ".join(sorted(m.replace("_", " ") for m in measured[(dataset, policy)]))
        for band in BANDS + ["all"]:
            if not any((dataset, policy, band, m) in cells for m in methods):
                continue
            n = max(len(cells[(dataset, policy, band, m)]) for m in methods)
            vals = []
            for m in methods:
                rs = cells.get((dataset, policy, band, m), [])
                vals.append(" / ".join(cell(rs, x) for x in (1.0, 1.5, 2.0)) if rs else "-")
            out.append(f"| {dataset} | {policy} | {how} | {band} | {n} | " + " | ".join(vals) + " |")
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.plot_bands", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--multiple", type=float, default=1.0)
    p.add_argument("--out", type=Path, default=Path("bench/results/recall_by_size.png"))
    p.add_argument("--table", action="store_true", help="print a Markdown table of recall by band instead")
    a = p.parse_args(argv)
    if a.table:
        print(table(a.runs))
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(a.runs), figsize=(5 * len(a.runs), 4), sharey=True, squeeze=False)
    key = f"recall@{a.multiple}x"
    for ax, run in zip(axes[0], a.runs):
        title, rows = read(run)
        by = defaultdict(lambda: defaultdict(list))
        for r in rows:
            if r.get(key) is not None:
                by[r["method"]][r["size"]].append(r[key])
        for method, sizes in sorted(by.items()):
            xs = sorted(sizes)
            ax.plot(xs, [sum(sizes[x]) / len(sizes[x]) for x in xs], marker="o", label=method)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("class size (members)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"mean recall at {a.multiple}x class size reviewed")
    axes[0][0].legend()
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=100)
    print(a.out)


if __name__ == "__main__":
    main()
