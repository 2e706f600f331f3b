import pytest
import torch
import torch.nn.functional as F

from lmcourse.exercises import check


def reference_mask(order):
    rank = {p: k for k, p in enumerate(order)}
    T = len(order)
    return torch.tensor([[rank[j] < rank[i] for j in range(T)] for i in range(T)])


def test_permutation_mask_reference_passes():
    assert check("ch10-permutation-mask", reference_mask) == "ch10-permutation-mask: all 5 checks passed"


@pytest.mark.parametrize("wrong", [
    lambda order: reference_mask(order) | torch.eye(len(order), dtype=torch.bool),   # content stream
    lambda order: torch.ones(len(order), len(order)).tril(-1).bool(),                 # ignores order
    lambda order: reference_mask(order).int(),                                        # not bool
])
def test_permutation_mask_wrong_fails(wrong):
    with pytest.raises(AssertionError, match="order"):
        check("ch10-permutation-mask", wrong)


def test_factorised_embedding():
    assert check("ch10-factorised-embedding", lambda v, h, e: v * e + e * h).endswith("all 4 checks passed")
    with pytest.raises(AssertionError, match="unfactorised"):
        check("ch10-factorised-embedding", lambda v, h, e: v * h)
    with pytest.raises(AssertionError, match="expected"):
        check("ch10-factorised-embedding", lambda v, h, e: v * e + e * h + h)


def test_infill_spans():
    def reference(tokens, noise):
        out = []
        for i, (t, n) in enumerate(zip(tokens, noise)):
            if not n:
                out.append(t)
            elif i == 0 or not noise[i - 1]:
                out.append("<mask>")
        return out

    assert check("ch10-infill-spans", reference) == "ch10-infill-spans: all 5 checks passed"
    with pytest.raises(AssertionError, match="per SPAN"):
        check("ch10-infill-spans", lambda tokens, noise: ["<mask>" if n else t for t, n in zip(tokens, noise)])


def test_rtd_loss():
    stable = lambda z, y: (y * F.softplus(-z) + (~y) * F.softplus(z)).mean()          # noqa: E731
    assert check("ch10-rtd-loss", stable) == "ch10-rtd-loss: all 4 checks passed"
    with pytest.raises(AssertionError, match="softplus"):                               # naive logs overflow
        check("ch10-rtd-loss", lambda z, y: -(y * torch.sigmoid(z).log() + (~y) * (1 - torch.sigmoid(z)).log()).mean())
    with pytest.raises(AssertionError, match="EVERY position"):                         # replaced positions only
        check("ch10-rtd-loss", lambda z, y: F.softplus(-z)[y].mean())
    with pytest.raises(AssertionError, match="0-d tensor"):
        check("ch10-rtd-loss", lambda z, y: (y * F.softplus(-z) + (~y) * F.softplus(z)).mean(1))
