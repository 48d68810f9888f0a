"""The DAC models trained for a corpus: ``data/NAME/dac/MODEL.pt`` (one file each, written atomically;
:mod:`.train` save / load). Models saved before the feature had one name lie in ``data/NAME/amortized/``:
they are listed and loaded from there as they are (reading never moves a file); a model saved again
goes to ``dac/``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from core import paths
from core.cluster.dac import train as tr
from core.embedsets import IMPORT

_MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_model_name(model: str) -> str:
    if not isinstance(model, str) or not _MODEL_RE.match(model) or model.endswith(".pt"):
        raise ValueError(f"invalid model name {model!r}: use 1-64 letters, digits, '_', '.' or '-' (no .pt)")
    return model


LEGACY_FOLDER = "amortized"


def folder(corpus: str, root: Path | None = None) -> Path:
    return paths.corpus_dir(corpus, root) / "dac"


def model_file(corpus: str, model: str, root: Path | None = None) -> Path:
    """Where a model is saved (always ``dac/``)."""
    return folder(corpus, root) / f"{check_model_name(model)}.pt"


def existing_file(corpus: str, model: str, root: Path | None = None) -> Path:
    """Where a model is read from: ``dac/``, else the older ``amortized/`` folder."""
    new = model_file(corpus, model, root)
    old = paths.corpus_dir(corpus, root) / LEGACY_FOLDER / new.name
    return old if not new.exists() and old.exists() else new


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
    found: dict[str, Path] = {}
    for d in (paths.corpus_dir(corpus, root) / LEGACY_FOLDER, folder(corpus, root)):  # dac/ wins a name
        found.update({p.stem: p for p in d.glob("*.pt") if _MODEL_RE.match(p.stem)} if d.is_dir() else {})
    out = [Listed(name, p, datetime.fromtimestamp(p.stat().st_mtime, timezone.utc).isoformat(timespec="seconds"))
           for name, p in found.items()]
    return sorted(out, key=lambda m: m.path.stat().st_mtime_ns, reverse=True)


def identity(corpus, embedding_set: str = IMPORT) -> dict:
    """What a model records of the corpus it is trained on (a loaded :class:`core.corpus.Corpus`) and of
    the vectors it read (the corpus's embedding set: the import's or an adapted one)."""
    return {"name": corpus.name, "generation": corpus.data_folder.name, "rows": int(corpus.n), "dim": int(corpus.dim),
            "embedding_set": embedding_set}


def learnt_set(trained: tr.Trained) -> str:
    """The embedding set whose vectors ``trained`` learnt (a model from before models recorded their set
    learnt the import's)."""
    return (trained.corpus or {}).get("embedding_set") or IMPORT


def other_vectors(trained: tr.Trained, embedding_set: str) -> str | None:
    """Why ``trained`` does not fit the vectors of ``embedding_set`` (it learnt another set's); None when
    it does. A model's bags and cuts are of the vectors it was trained on: on another set they mean
    nothing, though the sizes fit."""
    made = learnt_set(trained)
    if made == embedding_set:
        return None
    return (f"this model was trained on the embedding set {made!r} and the set in use is {embedding_set!r}: its "
            f"predictions would be about other vectors; use the set {made!r} (the sidebar's embedding set, or "
            "--embedding-set), or train a model on this one")


def mismatch(trained: tr.Trained, corpus, embedding_set: str = IMPORT) -> str | None:
    """Why ``trained`` does not belong to ``corpus`` (another corpus, another import of it, other
    vectors, another embedding set); None when it does. A model from before models recorded their corpus
    is taken on trust when its dimension fits."""
    card = trained.corpus or {}
    if trained.config.dim != corpus.dim:
        return (f"this model takes {trained.config.dim}-d vectors and corpus {corpus.name!r}'s embeddings are "
                f"{corpus.dim}-d: train a model for this corpus")
    if card.get("name") not in (None, corpus.name):
        return (f"this model was trained on corpus {card['name']!r}, not {corpus.name!r}: its predictions here "
                "would be about another corpus; train one for this corpus")
    if card.get("generation") not in (None, corpus.data_folder.name):
        return ("this model was trained on an earlier import of this corpus: its bags no longer match the texts; "
                "train it again")
    return other_vectors(trained, embedding_set)


def save(corpus, model: str, trained: tr.Trained, root: Path | None = None, embedding_set: str = IMPORT) -> Path:
    """Save a model trained on ``corpus`` (a loaded Corpus carrying ``embedding_set``'s vectors), recording
    which corpus, import and embedding set it is for."""
    return tr.save(trained, model_file(corpus.name, model, root or corpus.folder.parent),
                   corpus=identity(corpus, embedding_set))


def load(corpus: str, model: str, device: str = "cpu", root: Path | None = None) -> tr.Trained:
    return tr.load(existing_file(corpus, model, root), device)
