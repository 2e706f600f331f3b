from collections import Counter

import numpy as np
import pytest
import torch

from lmcourse.exercises import check


def add_k(sentences, prev, word, k):
    pairs = Counter((a, b) for s in sentences for a, b in zip(s, s[1:]))
    context = Counter(a for s in sentences for a in s[:-1])
    vocab_size = len({w for s in sentences for w in s})
    return (pairs[(prev, word)] + k) / (context[prev] + k * vocab_size)


def test_add_k_reference_passes_and_wrong_fails():
    assert check("ch02-add-k", add_k) == "ch02-add-k: all 3 checks passed"
    forgot_k_in_denominator = lambda s, p, w, k: add_k(s, p, w, 0) if k == 0 else (
        add_k(s, p, w, 0) * 0 + (Counter((a, b) for x in s for a, b in zip(x, x[1:]))[(p, w)] + k)
        / Counter(a for x in s for a in x[:-1])[p])
    with pytest.raises(AssertionError, match="k="):
        check("ch02-add-k", forgot_k_in_denominator)


def test_cosine_reference_passes_and_wrong_fails():
    cosine = lambda u, v: float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
    assert check("ch03-cosine", cosine) == "ch03-cosine: all 3 checks passed"
    with pytest.raises(AssertionError, match="length must not matter"):
        check("ch03-cosine", lambda u, v: float(u @ v))
    with pytest.raises(ValueError, match="unknown"):
        check("ch03-sine", cosine)


def _nnlm_forward(weights, context, newest_first=False, tanh=torch.tanh):
    C, H, d, U, b, W = (weights[k] for k in "CHdUbW")
    x = C[context.flip(1) if newest_first else context].flatten(1)
    y = b + tanh(d + x @ H.T) @ U.T
    return y if W is None else y + x @ W.T


def test_nnlm_forward_reference_passes_and_plausible_mistakes_fail():
    assert check("ch02-nnlm-forward", _nnlm_forward) == "ch02-nnlm-forward: all 2 checks passed"
    newest_first = lambda weights, context: _nnlm_forward(weights, context, newest_first=True)
    no_tanh = lambda weights, context: _nnlm_forward(weights, context, tanh=lambda z: z)
    probabilities = lambda weights, context: torch.softmax(_nnlm_forward(weights, context), -1)
    for wrong in (newest_first, no_tanh, probabilities):
        with pytest.raises(AssertionError, match="logits differ"):
            check("ch02-nnlm-forward", wrong)


def test_nnlm_forward_refuses_torch_nn_layers():
    def with_layers(weights, context):                 # right numbers, but through torch.nn
        C, H, d, U, b, W = (weights[k] for k in "CHdUbW")
        x = torch.nn.functional.embedding(context, C).flatten(1)
        y = b + torch.tanh(torch.nn.functional.linear(x, H, d)) @ U.T
        return y if W is None else y + x @ W.T

    def with_module(weights, context):
        embedding = torch.nn.Embedding.from_pretrained(weights["C"])
        return _nnlm_forward({**weights, "C": embedding(torch.arange(len(weights["C"])))}, context)

    for wrong in (with_layers, with_module):
        with pytest.raises(AssertionError, match="without torch.nn layers"):
            check("ch02-nnlm-forward", wrong)
