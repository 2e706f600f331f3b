"""Input checks shared by every public function: each raises a message naming the argument.

The file readers at the end turn a corrupt, truncated or foreign file into a ``ValueError`` that
names the file, instead of the reading library's own error.
"""
import hashlib
import json
import math
from collections.abc import Callable, Collection, Mapping, Sized
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file


def check_type(value, name: str, types) -> None:
    """Raise ``TypeError`` unless ``value`` is an instance of ``types``."""
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise TypeError(f"{name} must be {names}, got {type(value).__name__}")


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> None:
    """Raise unless ``value`` is an int (not a bool) in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")


def check_float(value, name: str, minimum: float | None = None, maximum: float | None = None,
                strict_minimum: bool = False) -> None:
    """Raise unless ``value`` is a finite real number in range (``strict_minimum``: ``> minimum``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None:
        if strict_minimum and value <= minimum:
            raise ValueError(f"{name} must be > {minimum}, got {value}")
        if not strict_minimum and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")


def check_probability(value, name: str) -> None:
    """Raise unless ``0 <= value <= 1``."""
    check_float(value, name, minimum=0.0, maximum=1.0)


def check_nonempty(value, name: str) -> None:
    """Raise unless ``value`` is a non-empty sized collection."""
    if not isinstance(value, Sized):
        raise TypeError(f"{name} must be a list or another sized collection, got {type(value).__name__}")
    if len(value) == 0:
        raise ValueError(f"{name} must not be empty")


def check_token_ids(ids, vocab_size: int, name: str) -> None:
    """Raise unless ``ids`` is an int64 tensor of ids in ``[0, vocab_size)``.

    One min/max pass over the tensor; the message names an offending id (the largest if any is too
    large, else the most negative).
    """
    check_type(ids, name, torch.Tensor)
    if ids.dtype != torch.int64:
        raise TypeError(f"{name} must hold token ids as int64, got {ids.dtype}")
    if ids.numel() == 0:
        return
    low, high = torch.stack(torch.aminmax(ids)).tolist()
    bad = high if high >= vocab_size else low if low < 0 else None
    if bad is not None:
        raise ValueError(f"{name} holds id {bad}, outside the vocabulary of size {vocab_size} "
                         f"(ids must lie in [0, {vocab_size}))")


def check_state_fits(expected: Mapping, found: Mapping, source: str, target: str,
                     optional: Collection[str] = ()) -> None:
    """Raise ``ValueError`` naming ``source`` unless ``found`` has exactly the tensors of ``expected``.

    Both map tensor names to tensors or shapes; names in ``optional`` may be absent from ``found``
    (tied weights stored once). The message lists the first 10 differences.
    """
    def shape(v):
        return tuple(v.shape) if isinstance(v, torch.Tensor) else tuple(v)

    problems = [f"{k}: checkpoint {shape(found[k])} vs model {shape(expected[k])}"
                for k in sorted(found.keys() & expected.keys()) if shape(found[k]) != shape(expected[k])]
    problems += [f"{k}: in the checkpoint but not in the model" for k in sorted(found.keys() - expected.keys())]
    problems += [f"{k}: in the model but not in the checkpoint"
                 for k in sorted(expected.keys() - found.keys() - set(optional))]
    if problems:
        more = [f"... and {len(problems) - 10} more"] if len(problems) > 10 else []
        raise ValueError(f"{source} does not fit {target}:\n  " + "\n  ".join(problems[:10] + more))


def _existing_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    return path


def _not_safetensors(path: Path, err: Exception) -> ValueError:
    return ValueError(f"{path} is not a readable safetensors file ({err}): it is empty, truncated, "
                      f"corrupt or in another format")


def safetensors_shapes(path) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape, from the header of the safetensors file at ``path`` (no data is read).

    ``FileNotFoundError`` if there is no file; ``ValueError`` naming ``path`` if it is empty,
    truncated, corrupt or not a safetensors file (a pickle, JSON, random bytes).
    """
    path = _existing_file(path)
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    except SafetensorError as err:
        raise _not_safetensors(path, err) from err


def load_safetensors(path) -> dict[str, torch.Tensor]:
    """Every tensor of the safetensors file at ``path``, with the errors of :func:`safetensors_shapes`."""
    path = _existing_file(path)
    try:
        return load_file(str(path))
    except SafetensorError as err:
        raise _not_safetensors(path, err) from err


def load_config(path, build: Callable[[dict], object]):
    """``build(fields)`` for the JSON object stored at ``path`` (a ``config.json``).

    ``FileNotFoundError`` if there is no file; ``ValueError`` naming ``path`` if it is not a JSON
    object, lacks a field ``build`` reads, or ``build`` rejects a value.
    """
    path = _existing_file(path)
    try:
        fields = json.loads(path.read_bytes())
    except ValueError as err:               # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"{path} is not valid JSON ({err})") from err
    if not isinstance(fields, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(fields).__name__}")
    try:
        return build(fields)
    except KeyError as err:
        raise ValueError(f"{path} lacks the field {err}") from err
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from err


def runs_digest(runs: list) -> str:
    """SHA-256 of a list of recorded runs, as a recorded-results file stores it."""
    return hashlib.sha256(json.dumps(runs, sort_keys=True).encode("utf-8")).hexdigest()


def load_record(path, settings: Mapping) -> dict:
    """The JSON record of computed-once results at ``path``, after checking that it was made with
    ``settings`` and that its ``runs`` match its ``sha256`` (``ValueError`` naming the command otherwise)."""
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    if record.get("settings") != settings:
        raise ValueError(f"{path} was made with other settings: rerun `{record.get('command')}`")
    if runs_digest(record["runs"]) != record.get("sha256"):
        raise ValueError(f"{path} does not match its recorded SHA-256: rerun `{record.get('command')}`")
    return record
