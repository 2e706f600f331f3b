"""The chapter 9 exercise checks accept a right answer and reject the usual wrong ones with their hints."""
import random

import pytest
import torch
import torch.nn.functional as F

from lmcourse.exercises import check
from lmcourse.sliding_window import window_starts


def _sop_reference(sentences, seed):
    rng = random.Random(seed)
    out = []
    for a, b in zip(sentences, sentences[1:]):
        out.append((a, b, 1) if rng.random() < 0.5 else (b, a, 0))
    return out


def test_sop_pairs_accepts_a_right_answer():
    assert check("ch09-sop-pairs", _sop_reference).endswith("4 checks passed")


@pytest.mark.parametrize("wrong, message", [
    (lambda s, seed: [(a, b, 1) for a, b in zip(s, s[1:])], "swapped"),                  # never swaps
    (lambda s, seed: [(b, a, 1) for a, b in zip(s, s[1:])], "pair 0"),                    # swaps, wrong label
    (lambda s, seed: _sop_reference(s, random.random()), "same seed"),                    # ignores the seed
    (lambda s, seed: _sop_reference(s, seed)[:-1], "consecutive pairs"),                  # drops a pair
])
def test_sop_pairs_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch09-sop-pairs", wrong)


def _mlm_head(hidden, w, b, gamma, beta, embedding, bias, act=F.gelu, eps=1e-12, norm=True, use_bias=True):
    x = act(hidden @ w.T + b)
    if norm:
        x = F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
    return x @ embedding.T + (bias if use_bias else 0)


def test_mlm_head_accepts_a_right_answer():
    assert check("ch09-mlm-head", _mlm_head).endswith("2 checks passed")


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: _mlm_head(*a, act=lambda x: F.gelu(x, approximate="tanh")), "tanh approximation"),
    (lambda *a: _mlm_head(*a, act=F.relu), "ReLU"),
    (lambda *a: _mlm_head(*a, norm=False), "LayerNorm after the GELU is missing"),
    (lambda *a: _mlm_head(*a, eps=1e-5), "eps"),
    (lambda h, w, b, g, be, e, bias: _mlm_head(h, w, b, torch.ones_like(g), torch.zeros_like(be), e, bias),
     "weight and bias"),
    (lambda *a: _mlm_head(*a, use_bias=False), "decoder's bias"),
    (lambda h, w, b, g, be, e, bias: _mlm_head(h, w, b, g, be, torch.ones_like(e), bias), "tied"),
    (lambda h, w, b, g, be, e, bias: _mlm_head(h, w, b, g, be, e, bias)[..., :-1], "shape"),
    (lambda *a: 1.01 * _mlm_head(*a), "differ"),
])
def test_mlm_head_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch09-mlm-head", wrong)


def _null(start, end, tau, max_answer_len, strict=True, tau_on_span=False, first=1, ordered=True, slack=0):
    T = len(start)
    best, span = None, None
    for i in range(first, T):
        for j in range(first, T):
            if ordered and not 0 <= j - i < max_answer_len + slack:
                continue
            score = float(start[i] + end[j])
            if best is None or score > best:
                best, span = score, (i, j)
    null = float(start[0] + end[0])
    if tau_on_span:
        return span if best + tau > null else None
    return span if (best > null + tau if strict else best >= null + tau) else None


def test_null_score_accepts_a_right_answer():
    assert check("ch09-null-score", _null).endswith("49 checks passed")


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: _null(*a, tau_on_span=True), "wrong side"),
    (lambda *a: _null(*a, strict=False), "tie"),
    (lambda *a: _null(*a, first=0), r"\[CLS\]"),
    (lambda *a: _null(*a, ordered=False), "j >= i"),
    (lambda *a: _null(*a, slack=1), "at most max_answer_len"),
    (lambda s, e, tau, n: None, "expected"),
])
def test_null_score_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch09-null-score", wrong)


def _windows(question, passage, a, b, window, stride, offset=2, partial=False, seps=(0, 1), starts=None):
    out = []
    for w0 in starts(len(passage), window, stride) if starts else window_starts(len(passage), window, stride):
        piece = passage[w0:w0 + window]
        tokens = ["[CLS]", *question, "[SEP]", *piece, "[SEP]"]
        segments = [0] * (len(question) + 1) + [seps[0]] + [1] * len(piece) + [seps[1]]
        k = len(question) + offset - w0
        if w0 <= a and b < w0 + len(piece):
            out.append((tokens, segments, a + k, b + k))
        elif partial and a < w0 + len(piece) and b >= w0:
            out.append((tokens, segments, max(a, w0) + k, min(b, w0 + len(piece) - 1) + k))
        else:
            out.append((tokens, segments, 0, 0))
    return out


def test_window_examples_accepts_a_right_answer():
    assert check("ch09-window-examples", _windows).endswith("6 checks passed")


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: _windows(*a, offset=0), r"count \[CLS\], the question"),
    (lambda *a: _windows(*a, offset=1), r"count \[CLS\], the question"),
    (lambda *a: _windows(*a, partial=True), "part of the answer"),
    (lambda *a: _windows(*a, seps=(1, 1)), "segment 0"),
    (lambda *a: _windows(*a, starts=lambda n, w, s: list(range(0, max(n - w, 0) + 1, s))), "cover the whole"),
    (lambda *a: _windows(*a)[1:], "windows, got"),
    (lambda *a: [(t, s, j, i) for t, s, i, j in _windows(*a)], "window 0: expected"),
])
def test_window_examples_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch09-window-examples", wrong)
