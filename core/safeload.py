"""Files from disk are untrusted: models and checkpoints are loaded without running code.

``torch.load`` unpickles; a pickle can call any function (``os.system``) while it loads. Every
model and checkpoint file of the project is therefore read with ``weights_only=True``, which
accepts tensors, numbers, strings, lists, tuples and dicts and nothing else; a file that needs more
is refused with :class:`UnsafeFileError` naming it. :func:`save` writes only such values (numpy
arrays become tensors, numpy scalars Python numbers), so everything the project writes loads back.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import numpy as np


class UnsafeFileError(ValueError):
    """A model or checkpoint file holds more than tensors and plain data (a pickled object, which
    could run code): it is refused, never loaded."""


class DamagedFileError(ValueError):
    """A model or checkpoint file cannot be read (truncated, not a torch file)."""


def plain(obj: Any) -> Any:
    """``obj`` made of tensors, Python numbers, strings, lists, tuples and dicts only."""
    import torch

    if isinstance(obj, np.generic):  # before float: numpy's float64 is a float subclass that pickles as numpy
        return obj.item()
    if isinstance(obj, torch.Tensor) or obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj))  # a copy: never shares a memory-mapped file
    if isinstance(obj, dict):
        return {plain(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        out = [plain(v) for v in obj]
        return tuple(out) if isinstance(obj, tuple) else out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    raise TypeError(f"cannot store a {type(obj).__name__} in a model or checkpoint file")


def save(obj: Any, path: Path) -> None:
    """``torch.save`` of :func:`plain` ``(obj)`` to ``path`` (the caller makes it atomic)."""
    import torch

    torch.save(plain(obj), path)


def load(path: Path, what: str, map_location: str = "cpu") -> Any:
    """The file's content, loaded with ``weights_only=True``. UnsafeFileError when it holds anything
    else (nothing in it ran), DamagedFileError when it cannot be read; both name the file."""
    import torch

    path = Path(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        import zipfile

        if not zipfile.is_zipfile(path):  # torch.save writes an archive: any other file (text, a copy cut short)
            raise DamagedFileError(f"the {what} {path.name} is not a file this tool wrote (no torch archive): "
                                   "delete it, or train it again") from None
        if "weights only" in str(exc).lower():
            raise UnsafeFileError(
                f"refused to load the {what} {path.name}: it holds objects other than tensors and plain data, "
                "which could run code when loaded. Only files this tool wrote can be loaded; delete it, or "
                "train it again") from None
        raise DamagedFileError(f"the {what} {path.name} is damaged ({exc.__class__.__name__})") from None
    except (RuntimeError, EOFError, OSError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise DamagedFileError(f"the {what} {path.name} is damaged or not a model file "
                               f"({exc.__class__.__name__}: {str(exc)[:120]})") from None


def tensor_to_numpy(v: Any) -> Any:
    """A tensor read back from a checkpoint as the numpy array it was saved from."""
    import torch

    return v.numpy() if isinstance(v, torch.Tensor) else v


NPY_MAGIC = b"\x93NUMPY"


def is_npy(path: Path) -> bool:
    """Whether ``path`` starts as numpy.save writes a file. numpy reads any other file as pickled data, which it
    never loads here, and its message then suggests loading the file unsafely: a user is told what the file is not."""
    with open(path, "rb") as f:
        return f.read(len(NPY_MAGIC)) == NPY_MAGIC


def load_npy(path: Path, mmap_mode: str | None = None) -> np.ndarray:
    """``numpy.load`` of a .npy file the project or a user wrote, with every way it cannot be read a ValueError (or
    an OSError), as the callers catch: a file that numpy.save did not write (numpy took it for pickled data and
    advised loading it "unsafely"), and an empty one (numpy's EOFError, "No data left in file", which got past every
    ``except (OSError, ValueError)``: an empty sketch stopped the Scatter page)."""
    if Path(path).stat().st_size and not is_npy(path):
        raise ValueError("it does not start as numpy.save writes one")
    try:
        return np.load(path, mmap_mode=mmap_mode)
    except EOFError as exc:
        raise ValueError(str(exc)) from None
