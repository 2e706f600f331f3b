import numpy as np
import pytest

from lmcourse.span_corruption import random_span_mask, span_corrupt


def test_t5_paper_example():
    tokens = "Thank you for inviting me to your party last week .".split()
    mask = [t in ("for", "inviting", "last") for t in tokens]
    inputs, targets = span_corrupt(tokens, mask)
    assert " ".join(inputs) == "Thank you <X> me to your party <Y> week ."
    assert " ".join(targets) == "<X> for inviting <Y> last <Z>"


def test_inputs_and_targets_reconstruct_text():
    rng = np.random.default_rng(0)
    tokens = [f"w{i}" for i in range(40)]
    mask = random_span_mask(40, 0.15, 3.0, rng)
    inputs, targets = span_corrupt(tokens, mask)
    spans, current = {}, None
    for t in targets:
        if t.startswith("<"):
            current = t
            spans[current] = []
        else:
            spans[current].append(t)
    rebuilt = [w for t in inputs for w in (spans[t] if t in spans else [t])]
    assert rebuilt == tokens


def test_random_span_mask_statistics():
    rng = np.random.default_rng(1)
    masks = [random_span_mask(100, 0.15, 3.0, rng) for _ in range(200)]
    assert all(m.sum() == 15 for m in masks)
    starts = [int(m[0]) + int((m[1:] & ~m[:-1]).sum()) for m in masks]
    assert all(s == 5 for s in starts)     # 15 noise tokens / mean span 3 = 5 spans, never merged
    assert not any(m[0] for m in masks)    # non-noise comes first


def test_bad_inputs():
    with pytest.raises(ValueError, match="noise_mask"):
        span_corrupt(["a", "b"], [True])
    with pytest.raises(ValueError, match="tokens"):
        span_corrupt([], [])
    with pytest.raises(ValueError, match="length"):
        random_span_mask(1)
    with pytest.raises(ValueError, match="noise_density"):
        random_span_mask(10, noise_density=1.5)
