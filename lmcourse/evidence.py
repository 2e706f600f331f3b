"""Claims bound to evidence: each sentence about a result is checked by the code that measured it.

``claim("the LSTM remembers longer than the RNN", lstm_span > rnn_span, lstm=lstm_span, rnn=rnn_span)``
prints ``✔ the LSTM remembers longer than the RNN (lstm = 40, rnn = 8)``. When the claim does not
hold it prints ``✘ ...`` instead; under the tests (``LMCOURSE_CLAIMS=strict``, which conftest.py
sets for every notebook kernel) it also raises :class:`ClaimFailed`, so the notebook test fails.
"""
import math
import numbers
import os

import numpy as np
import torch

from lmcourse.validate import check_type

#: set to ``strict`` to turn a claim that does not hold into an error (the tests do)
STRICT_ENV = "LMCOURSE_CLAIMS"


class ClaimFailed(AssertionError):
    """A statement about a result that the measured values do not support."""


def format_value(value) -> str:
    """A measured value as the claim line shows it: floats to 4 significant digits."""
    if isinstance(value, (torch.Tensor, np.ndarray, np.generic)) and _size(value) == 1:
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return str(value) if not math.isfinite(value) else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def _size(array) -> int:
    return array.numel() if isinstance(array, torch.Tensor) else array.size


def _truth(holds) -> bool:
    if isinstance(holds, (torch.Tensor, np.ndarray)):
        if _size(holds) != 1:
            raise ValueError(f"holds must be a single truth value, got a tensor of shape "
                             f"{tuple(holds.shape)} (use .all() or .any())")
        holds = holds.item()
    if not isinstance(holds, (bool, np.bool_)):
        raise TypeError(f"holds must be a bool (the result of a comparison), got "
                        f"{type(holds).__name__}")
    return bool(holds)


def claim(statement: str, holds, **measured) -> None:
    """Print ``✔ statement (name = value, ...)`` if ``holds``, else ``✘ ...``.

    Under ``LMCOURSE_CLAIMS=strict`` a claim that does not hold raises :class:`ClaimFailed`.
    Returns nothing, so a cell that ends with a claim shows only its line.
    """
    check_type(statement, "statement", str)
    if not statement.strip():
        raise ValueError("statement must not be empty")
    ok = _truth(holds)
    values = ", ".join(f"{name} = {format_value(value)}" for name, value in measured.items())
    line = f"{'✔' if ok else '✘'} {statement}" + (f" ({values})" if values else "")
    print(line, flush=True)
    if not ok and os.environ.get(STRICT_ENV) == "strict":
        raise ClaimFailed(line)
