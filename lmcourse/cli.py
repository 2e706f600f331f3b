"""Argument types for the command lines (``python -m lmcourse.scale``, ``scripts/``, ``benchmarks/``).

Each turns a bad value into argparse's usage error (exit status 2, the flag named) before any work
starts, instead of a traceback from deep in the code::

    parser.add_argument("--steps", type=positive_int, default=480)
"""
import argparse
import math
from pathlib import Path


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


def existing_file(text: str) -> Path:
    """A file that exists."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path


def notebook_file(text: str) -> Path:
    """An existing ``.ipynb`` file."""
    path = existing_file(text)
    if path.suffix != ".ipynb":
        raise argparse.ArgumentTypeError(f"expected a notebook (.ipynb), got {text!r}")
    return path


def _creatable(path: Path, text: str) -> None:
    """Raise unless the nearest ancestor of ``path`` that exists is a directory (the rest can be made)."""
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise argparse.ArgumentTypeError(f"{str(parent)!r} is not a directory, so {text!r} cannot be made")
            return


def output_file(text: str) -> Path:
    """A file to write: not a directory, under directories (the command makes those missing)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; expected a file name")
    _creatable(path, text)
    return path


def output_directory(text: str) -> Path:
    """A directory to (re)create: not an existing file, under directories (those missing are made)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
    _creatable(path, text)
    return path


def device(text: str) -> str:
    """A torch device this machine has: ``cpu``, ``cuda``, ``cuda:N`` or ``mps``."""
    import torch

    try:
        parsed = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected cpu, cuda, cuda:N or mps, got {text!r}") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise argparse.ArgumentTypeError(f"{text!r}: this machine has no CUDA GPU (PyTorch sees none)")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise argparse.ArgumentTypeError(f"{text!r}: this machine has {torch.cuda.device_count()} CUDA GPU(s)")
    elif parsed.type == "mps":
        if not torch.backends.mps.is_available():
            raise argparse.ArgumentTypeError(f"{text!r}: Apple's MPS is not available here")
    elif parsed.type != "cpu":
        raise argparse.ArgumentTypeError(f"expected cpu, cuda, cuda:N or mps, got {text!r}")
    return text
