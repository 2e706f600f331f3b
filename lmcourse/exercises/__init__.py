"""Checks for the book's "implement it" exercises: one call tells a reader whether their code works.

>>> from lmcourse.exercises import check
>>> check("ch01-count-parameters", my_count_parameters)   # doctest: +SKIP
'ch01-count-parameters: all 3 checks passed'

An exercise id ``chNN-some-name`` runs ``some_name(candidate)`` from ``lmcourse/exercises/chNN.py``;
each check raises ``AssertionError`` explaining the first thing that is wrong.
"""
import importlib
import re

from lmcourse.validate import check_type

_ID = re.compile(r"^(ch\d\d)-([a-z0-9-]+)$")


def check(exercise_id: str, candidate) -> str:
    """Run the checks of exercise ``exercise_id`` on the reader's ``candidate`` (usually a function)."""
    check_type(exercise_id, "exercise_id", str)
    match = _ID.match(exercise_id)
    if not match:
        raise ValueError(f"exercise_id must look like 'ch01-count-parameters', got {exercise_id!r}")
    chapter, name = match.groups()
    try:
        module = importlib.import_module(f"lmcourse.exercises.{chapter}")
    except ModuleNotFoundError:
        raise ValueError(f"exercise_id {exercise_id!r}: chapter {chapter} has no exercise checks") from None
    checker = getattr(module, name.replace("-", "_"), None)
    if checker is None:
        known = sorted(f"{chapter}-{n.replace('_', '-')}" for n in getattr(module, "__all__", []))
        raise ValueError(f"exercise_id {exercise_id!r} is unknown; {chapter} has {known}")
    if not callable(candidate):
        raise TypeError(f"pass your function itself, e.g. check({exercise_id!r}, my_function), "
                        f"got {type(candidate).__name__}")
    passed = checker(candidate)
    return f"{exercise_id}: all {passed} checks passed"
