"""Input checks shared by every public function: each raises a message naming the argument."""
import math
from collections.abc import Sized


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
