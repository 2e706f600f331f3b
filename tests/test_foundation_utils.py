"""Seeding and input validation."""
import random

import numpy as np
import pytest
import torch

from lmcourse import set_seed
from lmcourse.validate import check_float, check_int, check_nonempty, check_probability, check_type


def test_set_seed_reproduces_every_source():
    set_seed(3)
    a = (random.random(), np.random.rand(), torch.rand(3))
    set_seed(3)
    b = (random.random(), np.random.rand(), torch.rand(3))
    assert a[0] == b[0] and a[1] == b[1] and torch.equal(a[2], b[2])


def test_set_seed_fixes_threads():
    set_seed(0, num_threads=2)
    assert torch.get_num_threads() == 2
    set_seed(0)
    assert torch.get_num_threads() == 1


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_set_seed_rejects_bad_seed(bad, err):
    with pytest.raises(err, match="seed"):
        set_seed(bad)


def test_set_seed_rejects_bad_threads():
    with pytest.raises(ValueError, match="num_threads"):
        set_seed(0, num_threads=0)


def test_check_helpers_name_the_argument():
    with pytest.raises(TypeError, match="width must be an int"):
        check_int("3", "width")
    with pytest.raises(ValueError, match="width must be >= 1"):
        check_int(0, "width", minimum=1)
    with pytest.raises(ValueError, match="width must be <= 4"):
        check_int(5, "width", maximum=4)
    with pytest.raises(ValueError, match="lr must be > 0"):
        check_float(0.0, "lr", minimum=0.0, strict_minimum=True)
    with pytest.raises(ValueError, match="lr must be finite"):
        check_float(float("nan"), "lr")
    with pytest.raises(ValueError, match="p must be <= 1"):
        check_probability(1.5, "p")
    with pytest.raises(ValueError, match="p must be >= 0"):
        check_probability(-0.1, "p")
    with pytest.raises(ValueError, match="docs must not be empty"):
        check_nonempty([], "docs")
    with pytest.raises(TypeError, match="docs must be a list"):
        check_nonempty(3, "docs")
    with pytest.raises(TypeError, match="name must be str, got int"):
        check_type(3, "name", str)
    check_int(2, "x", 1, 3)
    check_float(0.5, "x", 0, 1)
    check_probability(1, "p")
