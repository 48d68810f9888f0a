"""Recall against class size, from the raw lines of simulated-annotator runs (bench/results/annotator-*).

    python -m bench.plot_bands RUN [RUN ...] [--multiple 1.0] [--out bench/results/recall_by_size.png]

RUN: a run folder (or its lines.jsonl). One panel per run, one line per method: the mean recall at
``--multiple`` x class size of the classes of each size, over sizes.
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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.plot_bands", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--multiple", type=float, default=1.0)
    p.add_argument("--out", type=Path, default=Path("bench/results/recall_by_size.png"))
    a = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(a.runs), figsize=(5 * len(a.runs), 4), sharey=True, squeeze=False)
    key = f"recall@{a.multiple}x"
    for ax, run in zip(axes[0], a.runs):
        title, rows = read(run)
        by = defaultdict(lambda: defaultdict(list))
        for r in rows:
            if key in r:
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
