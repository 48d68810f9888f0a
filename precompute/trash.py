"""List, purge, or recover from what older versions of the import left behind.

Imports before corpus generations (see core/corpus.py) moved a replaced corpus to a hidden
``.trash-NAME-TIME`` folder under the data root, with its ``groups.sqlite``, and built new ones in
``.staging-NAME``; a killed re-import could leave a corpus's saved groups only there.

    python -m precompute.trash                      # list, with the saved groups each holds
    python -m precompute.trash --restore-groups .trash-kw-1700000000
    python -m precompute.trash --purge              # delete them all (asks for --yes)
"""

from __future__ import annotations

import argparse
import logging
import re
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from core import paths
from core.backup import count_groups
from core.store import GroupStore
from precompute._cli import run_main

log = logging.getLogger(__name__)
_LEFTOVER = re.compile(r"^\.(trash|staging)-(?P<name>.+?)(-(?P<time>\d+))?$")


@dataclass(frozen=True)
class Leftover:
    folder: Path
    corpus: str
    groups: int | None  # saved groups in its groups.sqlite; None when it has none or it is unreadable
    bytes: int


def leftovers(root: Path | None = None) -> list[Leftover]:
    root = root or paths.data_root()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.iterdir()):
        m = _LEFTOVER.match(p.name)
        if p.is_dir() and m:
            size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            out.append(Leftover(p, m.group("name"), count_groups(p / "groups.sqlite"), size))
    return out


def restore_groups(folder: Path, root: Path | None = None) -> int:
    """Copy a leftover's saved groups into its live corpus, which must have none; returns the count.

    Never overwrites: a live corpus that already has saved groups is left alone (an error says so).
    """
    root = root or paths.data_root()
    folder = folder if folder.is_absolute() else root / folder
    m = _LEFTOVER.match(folder.name)
    if not m or folder.parent.resolve() != root.resolve():
        raise ValueError(f"{folder.name}: not a .trash-/.staging- folder of the data root")
    n = count_groups(folder / "groups.sqlite")
    if not n:
        raise ValueError(f"{folder.name}: holds no readable saved groups")
    target = paths.groups_db(m.group("name"), root)
    live = count_groups(target)
    if live:
        raise ValueError(f"corpus {m.group('name')!r} already has {live} saved groups; not overwriting them "
                         f"(open {folder / 'groups.sqlite'} with the sqlite3 shell to merge by hand)")
    target.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(folder / "groups.sqlite"), sqlite3.connect(target)
    try:
        src.backup(dst)  # a consistent copy, write-ahead log included
    finally:
        src.close()
        dst.close()
    GroupStore(target)  # opens it in WAL mode, as the app does
    return n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.trash", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--purge", action="store_true", help="delete every leftover folder")
    p.add_argument("--yes", action="store_true", help="confirm --purge")
    p.add_argument("--restore-groups", type=Path, metavar="FOLDER",
                   help="copy a leftover's saved groups into its corpus (only when that has none)")
    a = p.parse_args(argv)
    if a.restore_groups:
        n = restore_groups(a.restore_groups)
        log.info("restored %d saved groups from %s", n, a.restore_groups)
        return 0
    found = leftovers()
    if not found:
        log.info("no leftover folders under %s", paths.data_root())
        return 0
    for f in found:
        groups = "no saved groups" if not f.groups else f"{f.groups} saved groups"
        print(f"{f.folder.name}\tcorpus {f.corpus}\t{groups}\t{f.bytes / 1e6:.1f} MB")
    if a.purge:
        if not a.yes:
            log.error("--purge deletes these folders for good: add --yes to confirm")
            return 2
        for f in found:
            shutil.rmtree(f.folder)
        log.info("deleted %d leftover folders", len(found))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
