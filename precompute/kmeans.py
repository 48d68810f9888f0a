"""Moved: K-Means is one method of ``python -m precompute.cluster``. This alias keeps old commands
working:

    python -m precompute.kmeans --corpus NAME --k K [...]  =  python -m precompute.cluster --method kmeans ...
"""

from __future__ import annotations

import sys

from precompute._cli import run_main
from precompute.cluster import parser, run


def main(argv: list[str] | None = None) -> int:
    a = parser("python -m precompute.kmeans").parse_args(["--method", "kmeans", *(argv or [])])
    return run(a)


if __name__ == "__main__":
    sys.exit(run_main(main, sys.argv[1:]))
