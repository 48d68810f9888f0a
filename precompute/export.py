"""Export a saved group: python -m precompute.export --corpus NAME --group GROUP --format csv"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from core import paths
from core.corpus import load_corpus
from core.export import FORMATS, group_frame, to_bytes, write
from core.store import GroupNotFound, GroupStore
from precompute._cli import run_main

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.export", description=__doc__)
    p.add_argument("--corpus", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--version", type=int, default=None, help="default: the latest")
    p.add_argument("--format", choices=list(FORMATS), default="csv")
    p.add_argument("--out", type=Path, default=None, help="file to write (default: standard output)")
    a = p.parse_args(argv)
    corpus = load_corpus(a.corpus)
    try:
        group = GroupStore(paths.groups_db(a.corpus)).load(a.group, a.version)
    except GroupNotFound:
        raise ValueError(f"corpus {a.corpus!r} has no group {a.group!r}") from None
    frame = group_frame(corpus, group.included, group.excluded)
    if a.out:
        write(frame, a.format, a.out)
        log.info("wrote %d rows to %s", len(frame), a.out)
    else:
        sys.stdout.buffer.write(to_bytes(frame, a.format))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
