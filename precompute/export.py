"""Export a saved group, or every saved group of a corpus side by side (each text labelled in any once, a column
per group saying included or excluded; the latest versions, deleted groups left out):

    python -m precompute.export --corpus NAME (--group GROUP [--version N] | --all) [--format csv] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from core.corpus import load_corpus
from core.export import FORMATS, group_frame, saved_groups_frame, to_bytes, write
from core.store import GroupNotFound, open_store
from precompute._cli import run_main, whole

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.export", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--group")
    which.add_argument("--all", action="store_true", help="every saved group, a column each (their latest versions)")
    p.add_argument("--version", type=whole(1), default=None, help="default: the latest")
    p.add_argument("--format", choices=list(FORMATS), default=None,
                   help="default: the --out file's ending where it names one of these, else csv")
    p.add_argument("--out", type=Path, default=None, help="file to write (default: standard output)")
    a = p.parse_args(argv)
    if a.all and a.version is not None:
        p.error("--version: only with --group (--all exports each group's latest version)")
    fmt = out_format(a.out, a.format)
    corpus = load_corpus(a.corpus)
    groups = open_store(a.corpus)  # PostgreSQL where SEMANNO_DB names it (a team's groups)
    if a.all:
        names = groups.names()
        if not names:
            raise ValueError(f"corpus {a.corpus!r} has no saved groups to export")
        return _write(saved_groups_frame(corpus, groups, names), fmt, a.out, f"{len(names)} groups")
    try:
        group = groups.load(a.group, a.version)
    except GroupNotFound:
        numbers = [v[0] for v in groups.versions(a.group)]
        if a.version is not None and numbers:
            has = f"versions {numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else f"version {numbers[0]}"
            raise ValueError(f"group {a.group!r} of corpus {a.corpus!r} has no version {a.version} (it has {has})")
        raise ValueError(f"corpus {a.corpus!r} has no group {a.group!r}") from None
    return _write(group_frame(corpus, group.included, group.excluded), fmt, a.out, f"group {a.group!r}")


def _write(frame, fmt: str, out: Path | None, what: str) -> int:
    if out:
        write(frame, fmt, out)
        log.info("wrote %d rows of %s to %s (%s)", len(frame), what, out, fmt)
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
