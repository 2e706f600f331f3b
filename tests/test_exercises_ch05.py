"""The chapter-5 exercise checks accept a right answer and reject typical wrong ones."""
import pytest
import torch

from lmcourse.elmo import reverse_padded
from lmcourse.exercises import check


def test_reverse_padded_check():
    def good(x, lengths):
        return reverse_padded(x, lengths)

    def whole_row(x, lengths):
        return x.flip(1)

    assert check("ch05-reverse-padded", good) == "ch05-reverse-padded: all 3 checks passed"
    with pytest.raises(AssertionError, match="padding"):
        check("ch05-reverse-padded", whole_row)


def test_nearest_centroid_check():
    def good(train_x, train_y, test_x):
        c = torch.stack([train_x[train_y == k].mean(0) for k in (0, 1)])
        return torch.cdist(test_x, c).argmin(1)

    def first_class(train_x, train_y, test_x):
        return torch.zeros(len(test_x), dtype=torch.long)

    assert check("ch05-nearest-centroid", good) == "ch05-nearest-centroid: all 2 checks passed"
    with pytest.raises(AssertionError):
        check("ch05-nearest-centroid", first_class)


def test_scalar_mix_norm_check():
    def good(layers, s, gamma):
        normed = torch.nn.functional.layer_norm(layers, layers.shape[-1:])
        return gamma * (torch.softmax(s, 0).view(-1, *[1] * (layers.dim() - 1)) * normed).sum(0)

    def no_norm(layers, s, gamma):
        return gamma * (torch.softmax(s, 0).view(-1, *[1] * (layers.dim() - 1)) * layers).sum(0)

    def whole_layer(layers, s, gamma):
        normed = torch.nn.functional.layer_norm(layers, layers.shape[1:])
        return gamma * (torch.softmax(s, 0).view(-1, *[1] * (layers.dim() - 1)) * normed).sum(0)

    assert check("ch05-scalar-mix-norm", good) == "ch05-scalar-mix-norm: all 3 checks passed"
    with pytest.raises(AssertionError, match="normalise each layer"):
        check("ch05-scalar-mix-norm", no_norm)
    with pytest.raises(AssertionError, match="last dimension only"):
        check("ch05-scalar-mix-norm", whole_layer)
