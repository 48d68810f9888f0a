"""Recall against class size, from the raw lines of simulated-annotator runs (results/annotator-*).

    python -m bench.plot_bands RUN [RUN ...] [--multiple 1.0] [--out results/recall_by_size.png]
    python -m bench.plot_bands RUN [RUN ...] --table

RUN: a run folder (or its lines.jsonl). One panel per run, one line per method: the mean recall at
``--multiple`` x class size of the classes of each size, over sizes. ``--table`` prints instead a
Markdown table of mean recall at 1x / 1.5x / 2x per dataset, keyword policy, class-size band and
method, pooling the runs given (e.g. several shrink seeds) and saying how many topics each cell has;
a mark that a run did not reach (its budget stopped before it) is left blank, and lines written
before issue 33 (recall counted per whole step, superseded) are marked "per step".

The logic lives in testbed/plot_bands.py (shared with the tests); this is the command line."""

from __future__ import annotations
import argparse
from collections import defaultdict
from pathlib import Path

from testbed.plot_bands import read, table


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.plot_bands", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--multiple", type=float, default=1.0)
    p.add_argument("--out", type=Path, default=Path("results/recall_by_size.png"))
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
