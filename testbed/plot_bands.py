"""Recall by class-size band from the raw lines of simulated-annotator runs (``python -m
bench.plot_bands``)."""

from __future__ import annotations

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
