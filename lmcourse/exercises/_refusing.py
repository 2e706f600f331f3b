"""For exercises whose answer the package already holds: guards that make that code refuse to run while
the reader's function runs, so that calling it does not pass the check."""
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import patch


@contextmanager
def refusing(owner, attribute: str, why: str) -> Iterator[None]:
    """Run the block with ``owner.attribute`` replaced by a function that raises ``AssertionError`` (why)."""
    def refuse(*args, **kwargs):
        raise AssertionError(why)

    with patch.object(owner, attribute, refuse):
        yield


def _refused(*args, **kwargs):
    raise AssertionError("your function called the package's own code for this exercise: write your own")


@contextmanager
def refusing_function(function) -> Iterator[None]:
    """Run the block with ``function``'s code (under any decorator that keeps ``__wrapped__``; of a method,
    its function's) replaced by code that raises ``AssertionError``: this catches every reference to it,
    however it was imported or captured."""
    inner = inspect.unwrap(getattr(function, "__func__", function))
    original = inner.__code__
    inner.__code__ = _refused.__code__
    try:
        yield
    finally:
        inner.__code__ = original
