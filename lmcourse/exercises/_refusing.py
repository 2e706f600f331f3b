"""For exercises whose answer the package already holds: a guard that makes that package code refuse to
run while the reader's function runs, so that calling it does not pass the check."""
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
