"""The anchored-filtering models trained for a corpus: ``data/NAME/amortized/MODEL.pt`` (one file each,
written atomically; :mod:`.train` save / load)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from core import paths
from core.cluster.amortized import train as tr

_MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_model_name(model: str) -> str:
    if not isinstance(model, str) or not _MODEL_RE.match(model) or model.endswith(".pt"):
        raise ValueError(f"invalid model name {model!r}: use 1-64 letters, digits, '_', '.' or '-' (no .pt)")
    return model


def folder(corpus: str, root: Path | None = None) -> Path:
    return paths.corpus_dir(corpus, root) / "amortized"


def model_file(corpus: str, model: str, root: Path | None = None) -> Path:
    return folder(corpus, root) / f"{check_model_name(model)}.pt"


@dataclass(frozen=True)
class Listed:
    name: str
    path: Path
    modified: str  # ISO time, UTC

    @property
    def stamp(self) -> tuple[int, int]:
        st = self.path.stat()
        return st.st_mtime_ns, st.st_size


def listing(corpus: str, root: Path | None = None) -> list[Listed]:
    """The corpus's models, newest first."""
    d = folder(corpus, root)
    if not d.is_dir():
        return []
    out = [Listed(p.stem, p, datetime.fromtimestamp(p.stat().st_mtime, timezone.utc).isoformat(timespec="seconds"))
           for p in d.glob("*.pt") if _MODEL_RE.match(p.stem)]
    return sorted(out, key=lambda m: m.path.stat().st_mtime_ns, reverse=True)


def save(corpus: str, model: str, trained: tr.Trained, root: Path | None = None) -> Path:
    return tr.save(trained, model_file(corpus, model, root))


def load(corpus: str, model: str, device: str = "cpu", root: Path | None = None) -> tr.Trained:
    return tr.load(model_file(corpus, model, root), device)
