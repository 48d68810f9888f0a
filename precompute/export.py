"""Export a saved group: python -m precompute.export --corpus NAME --group GROUP --format csv"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from core.corpus import load_corpus
from core.export import FORMATS, group_frame, to_bytes, write
from core.store import GroupNotFound, open_store
from precompute._cli import run_main, whole

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.export", description=__doc__)
    p.add_argument("--corpus", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--version", type=whole(1), default=None, help="default: the latest")
    p.add_argument("--format", choices=list(FORMATS), default=None,
                   help="default: the --out file's ending where it names one of these, else csv")
    p.add_argument("--out", type=Path, default=None, help="file to write (default: standard output)")
    a = p.parse_args(argv)
    fmt = out_format(a.out, a.format)
    corpus = load_corpus(a.corpus)
    groups = open_store(a.corpus)  # PostgreSQL where SEMANNO_DB names it (a team's groups)
    try:
        group = groups.load(a.group, a.version)
    except GroupNotFound:
        numbers = [v[0] for v in groups.versions(a.group)]
        if a.version is not None and numbers:
            has = f"versions {numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else f"version {numbers[0]}"
            raise ValueError(f"group {a.group!r} of corpus {a.corpus!r} has no version {a.version} (it has {has})")
        raise ValueError(f"corpus {a.corpus!r} has no group {a.group!r}") from None
    frame = group_frame(corpus, group.included, group.excluded)
    if a.out:
        write(frame, fmt, a.out)
        log.info("wrote %d rows to %s (%s)", len(frame), a.out, fmt)
    else:
        sys.stdout.buffer.write(to_bytes(frame, fmt))
    return 0


def out_format(out: Path | None, fmt: str | None) -> str:
    """The format to write: ``fmt``, else the one ``out``'s ending names, else CSV; a ValueError, before any work,
    where ``out`` is a folder or in none, or its ending names another format than ``fmt`` (Excel refused a
    workbook written as x.csv, and a CSV written as x.xlsx)."""
    if out is None:
        return fmt or "csv"
    if out.is_dir():
        raise ValueError(f"--out {out}: a folder; name a file in it (e.g. {out / 'group.csv'})")
    if not out.parent.is_dir():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    named = out.suffix.lower().lstrip(".")
    if fmt and named in FORMATS and named != fmt:
        raise ValueError(f"--out {out} names a .{named} file but --format is {fmt}: write one of them to match")
    return fmt or (named if named in FORMATS else "csv")


if __name__ == "__main__":
    sys.exit(run_main(main))
