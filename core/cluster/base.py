"""What every clustering method shares: the context it clusters, its result, its progress.

    fit(ctx, k, *, seed=0, device="cpu", progress=None, **params) -> Clustering

``k=None`` is for methods that find their own number of clusters; a method that needs ``k``
raises ``ValueError`` naming it. An unknown parameter is an error (``check_params``), never
silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from core.params import resolve
from core.progress import Progress  # noqa: F401  (methods import it from here: progress(step, total, info))



@dataclass(frozen=True)
class ClusterContext:
    """What a method may read: the corpus's vectors (N, D), and its texts for methods that need
    them. ``checkpoint`` is a folder where an iterative method keeps its state so that a killed
    run resumes (None: no checkpoints); ``folder`` the corpus's own (DAC reads its trained models there)."""

    vectors: np.ndarray
    texts: Sequence[str] | None = None
    checkpoint: Path | None = None
    folder: Path | None = None  # the corpus's folder, where a method finds models trained for it
    embedding_set: str = "import"  # whose vectors ``vectors`` are (core/embedsets.py): a DAC model must match
    # watch(units_done, embeddings): an encoder-adapting method shows the whole corpus's unit embeddings as each
    # epoch left them (a benchmark scores every epoch against its labels; None: nobody watches)
    watch: Callable[[int, np.ndarray], None] | None = None

    @property
    def n(self) -> int:
        return len(self.vectors)


@dataclass
class Clustering:
    labels: np.ndarray  # (N,) int32 in [0, k)
    centroids: np.ndarray | None  # (k, D) float32, or None for methods without centroids
    method: str
    k: int
    params: dict = field(default_factory=dict)  # every parameter the fit used, defaults included
    history: list[dict] = field(default_factory=list)  # per iteration: objective or loss, changed, seconds
    seconds: float = 0.0
    seed: int = 0
    device: str = "cpu"
    embeddings: np.ndarray | None = None  # (N, D') for a method that adapts the encoder
    model_dir: Path | None = None  # the adapted encoder (a sentence-transformers folder), for such a method

    @property
    def objective(self) -> float | None:
        """The last recorded objective (K-Means: sum of squared distances; deep methods: loss)."""
        for step in reversed(self.history):
            for key in ("objective", "loss"):
                if key in step:
                    return float(step[key])
        return None

    @property
    def objective_kind(self) -> str | None:
        """What :attr:`objective` measures, in words."""
        for step in reversed(self.history):
            if "objective" in step:
                return "sum of squared distances"
            if "loss" in step:
                return "loss"
        return None

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=self.k)


class FitFn(Protocol):
    def __call__(self, ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
                 progress: Progress | None = None, **params: Any) -> Clustering: ...


@dataclass(frozen=True)
class Method:
    name: str  # registry key = module name = the name in file names, e.g. "dec"
    label: str  # shown on the Topics page, e.g. "DEC"
    help: str
    fit: FitFn
    defaults: dict  # every parameter the method takes, with its default
    needs_k: bool = True
    needs_texts: bool = False
    limits: dict = field(default_factory=dict)  # name -> (lowest, highest) allowed value, where it matters

    def params(self, given: dict) -> dict:
        """The defaults updated by ``given`` (:func:`core.params.resolve`: an unknown parameter, or a value
        of the wrong kind or out of bounds, is a ValueError naming it)."""
        return resolve(self.label, self.defaults, self.limits, given)


def check_k(k: int | None, n: int, method: str) -> int:
    if k is None:
        raise ValueError(f"{method} needs the number of clusters k")
    if not 1 <= int(k) <= n:
        raise ValueError(f"k must be between 1 and the number of rows ({n}), got {k}")
    return int(k)


def as_vectors(x: np.ndarray) -> np.ndarray:
    """float32, C-contiguous and writeable (torch.from_numpy needs that; a memory-mapped corpus
    is read-only), with a clear error for anything that is not a finite (N, D) matrix."""
    x = np.asarray(x)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError(f"vectors must be a non-empty (N, D) matrix, got shape {x.shape}")
    if not x.flags.writeable or not x.flags.c_contiguous or x.dtype != np.float32:
        x = np.array(x, dtype=np.float32, order="C")
    return x


def torch_rows(x, device: str):
    """(N, D) rows as a float32 torch tensor on ``device``, for code that only reads them. A float32
    C-contiguous array (a memory-mapped corpus, the search index's read-only matrix) is shared on
    the CPU, not copied: copying a 300k-row corpus on every DAC search cost ~0.5 GB and its time."""
    import warnings

    import torch

    if isinstance(x, torch.Tensor):
        return x.to(device)
    a = np.asarray(x)
    if a.ndim == 2 and len(a) and a.dtype == np.float32 and a.flags.c_contiguous:
        with warnings.catch_warnings():  # torch warns that a read-only array could be written: we never do
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            return torch.from_numpy(a).to(device)
    return torch.from_numpy(as_vectors(a)).to(device)


class Checkpoint:
    """The state of an unfinished fit in ``folder/state.pt``, written atomically; a finished fit
    deletes it. ``key`` (the method, k, seed, parameters and data shape) must match for a
    checkpoint to be resumed, so a changed command starts afresh instead of resuming a different
    fit."""

    def __init__(self, folder: Path | None, key: dict):
        self.path = Path(folder) / "state.pt" if folder else None
        self.key = key

    def load(self) -> dict | None:
        """The saved state when it matches ``key``; None when there is none, it is damaged (it only
        costs the work it held) or it belongs to another fit. A file holding more than tensors and
        plain data is refused (:class:`core.safeload.UnsafeFileError`, naming it): never unpickled."""
        if self.path is None or not self.path.exists():
            return None
        import logging

        from core import safeload

        try:
            state = safeload.load(self.path, "checkpoint")
        except safeload.DamagedFileError as exc:
            logging.getLogger(__name__).warning("%s; starting afresh", exc)
            return None
        return state if isinstance(state, dict) and state.get("key") == safeload.plain(self.key) else None

    def save(self, state: dict) -> None:
        if self.path is None:
            return
        from core import safeload
        from core.atomic import atomic_path

        with atomic_path(self.path) as tmp:
            safeload.save({**state, "key": self.key}, tmp)

    def clear(self) -> None:
        if self.path is not None and self.path.exists():
            self.path.unlink()

    @staticmethod
    def random_state(gen, device: str = "cpu") -> dict:
        """What a resumed fit needs to draw the same numbers: ``gen``'s state (numpy), torch's CPU
        generator (dropout, shuffles) and, on CUDA, the GPU's. Merge it into the state saved."""
        import torch

        return {"rng": gen.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if device == "cuda" else None}

    @staticmethod
    def restore_random_state(state: dict, gen, device: str = "cpu") -> None:
        """Put back what :meth:`random_state` saved."""
        import torch

        gen.bit_generator.state = state["rng"]
        if state.get("torch_rng") is not None:
            torch.set_rng_state(state["torch_rng"])
        if device == "cuda" and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"])
