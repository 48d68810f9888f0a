"""Every path the tool uses, built from one data root.

The root is ``$SEMANNO_DATA`` when set, otherwise ``data/`` beside the project.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
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


def corpus_dir(name: str, root: Path | None = None) -> Path:
    return (root or data_root()) / check_name(name)


def corpus_file(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "corpus.parquet"


def embeddings_file(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "embeddings.npy"


def manifest_file(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "manifest.json"


def groups_db(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "groups.sqlite"


def kmeans_dir(name: str, root: Path | None = None) -> Path:
    return corpus_dir(name, root) / "kmeans"


def work_dir(name: str, root: Path | None = None) -> Path:
    """Checkpoints of an unfinished import; outside the corpus folder so they never load."""
    return (root or data_root()) / ".work" / check_name(name)
