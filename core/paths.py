"""Every path the tool uses, built from one data root.

The root is ``$SEMANNO_DATA`` when set, otherwise ``data/`` beside the project.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# rows per block when a job walks a memory-mapped embedding matrix (~100 MB of 384-d float32)
ROWS_PER_BLOCK = 65536
# 2,400 English crisis-event tweets with dates (CrisisLex T26, MIT; demo/make_demo.py)
DEMO_FILE = PROJECT_ROOT / "demo" / "crisislex_demo.csv.gz"
DEMO_VECTORS = PROJECT_ROOT / "demo" / "crisislex_demo.vectors.npy"  # its texts' vectors by the packaged model
DEMO_NAME = "demo"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def data_root() -> Path:
    return Path(os.environ.get("SEMANNO_DATA", PROJECT_ROOT / "data")).expanduser()


def check_name(name: str) -> str:
    """A corpus name is a folder name: letters, digits, '_', '.', '-' (no path tricks)."""
    if not isinstance(name, str) or not _NAME_RE.match(name) or name in {".", ".."}:
        raise ValueError(
            f"invalid corpus name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def name_from_file(filename: str) -> str:
    """A valid corpus name made from a file's name: ``Tweets 2021 (výběr).csv`` -> ``Tweets-2021-vyber``."""
    path = Path(filename)
    path = Path(path.stem) if path.suffix.lower() == ".gz" else path  # tweets.csv.gz -> tweets
    stem = unicodedata.normalize("NFKD", path.stem).encode("ascii", "ignore").decode()  # výběr -> vyber
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-._")[:64]
    return name or "corpus"


def corpus_dir(name: str, root: Path | None = None) -> Path:
    return (root or data_root()) / check_name(name)


def manifest_file(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "manifest.json"


def groups_db(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "groups.sqlite"


def work_dir(name: str, root: Path | None = None) -> Path:
    """Checkpoints of an unfinished import; outside the corpus folder so they never load."""
    return (root or data_root()) / ".work" / check_name(name)


# --- what the browser may name on the server ------------------------------------------------
# A path typed into the app (a corpus file to import, a model folder) is read by the server
# process: on a shared box that would be an arbitrary file read. Such paths must resolve inside
# the folders the operator lists; the command line (the operator's own shell) is not confined.

class PathNotAllowed(ValueError):
    """A path typed in the app resolves outside the folders the operator allows."""


def _roots(var: str) -> list[Path]:
    listed = os.environ.get(var, "")
    roots = [Path(p).expanduser() for p in listed.split(os.pathsep) if p.strip()] if listed else [data_root()]
    return [r.resolve() for r in roots]


def import_roots() -> list[Path]:
    """Folders whose files the app may import: ``$SEMANNO_IMPORT_ROOTS`` (os.pathsep-separated),
    default the data root."""
    return _roots("SEMANNO_IMPORT_ROOTS")


def model_roots() -> list[Path]:
    """Folders the app may load models from: ``$SEMANNO_MODEL_ROOTS``, default the data root."""
    return _roots("SEMANNO_MODEL_ROOTS")


def confine(path: str | Path, roots: list[Path], what: str, setting: str) -> Path:
    """The resolved path when it lies inside one of ``roots``; PathNotAllowed otherwise.

    Resolution follows symbolic links and ``..`` first, so neither can lead outside. ``~`` is not
    expanded (it would name the server's home). The message never shows the server's folders.
    """
    text = str(path).strip()
    if not text:
        raise PathNotAllowed(f"give the {what}'s path")
    if text.startswith("~"):
        raise PathNotAllowed(f"{what} paths cannot start with '~'; give a path inside the allowed folders "
                             f"(the operator sets them with {setting})")
    p = Path(text)
    if not p.is_absolute():
        p = roots[0] / p if roots else p
    resolved = p.resolve()
    for root in roots:
        if resolved == root or root in resolved.parents:
            return resolved
    raise PathNotAllowed(f"the {what} {text!r} is outside the folders this server allows; ask the operator to "
                         f"add its folder to {setting}, or upload the file instead")
