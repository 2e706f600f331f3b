"""Checks for chapter 9 (BERT)."""
import math

import torch

from lmcourse.bert import BertConfig, BertForPreTraining
from lmcourse.sliding_window import window_starts

__all__ = ["mlm_head", "null_score", "window_examples", "whole_word_groups", "sop_pairs"]

def _mlm_variant(hidden, w, b, gamma, beta, embedding, bias, gelu="exact", norm=True, eps=1e-12, affine=True,
                 decoder_bias=True):
    """The MLM head's logits, and the usual slips as variants: (..., C) -> (..., V)."""
    x = hidden @ w.T + b                                                       # (..., C)
    if gelu == "exact":
        x = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    elif gelu == "tanh":
        x = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    else:
        x = x.clamp(min=0)
    if norm:
        x = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
        if affine:
            x = x * gamma + beta
    logits = x @ embedding.T                                                   # (..., C) @ (C, V)
    return logits + bias if decoder_bias else logits


_MLM_SLIPS = {
    "the GELU is the tanh approximation; BERT's checkpoints use the exact x * Phi(x), with erf": dict(gelu="tanh"),
    "the activation is ReLU; BERT's MLM transform uses GELU, x * Phi(x)": dict(gelu="relu"),
    "the LayerNorm after the GELU is missing": dict(norm=False),
    "the LayerNorm uses eps = 1e-5 (PyTorch's default); BERT's is 1e-12": dict(eps=1e-5),
    "the LayerNorm's own weight and bias (norm_weight, norm_bias) are not applied": dict(affine=False),
    "the decoder's bias (decoder_bias, one number per word piece) is not added": dict(decoder_bias=False),
}


def mlm_head(candidate) -> int:
    """``candidate(hidden, dense_weight, dense_bias, norm_weight, norm_bias, embedding, decoder_bias)`` ->
    logits (..., V): BERT's MLM head LN(GELU(h W^T + b)) E^T + b_vocab with the token-embedding matrix E (V, C)
    as the (tied) decoder, matched against :meth:`lmcourse.bert.BertForPreTraining.mlm_logits` with random
    weights, on ordinary hidden vectors and on nearly constant ones (where LayerNorm's eps matters)."""
    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, d_model=16, num_layers=1, num_heads=2, d_ff=32, max_len=8, dropout=0.0)
    model = BertForPreTraining(config, device="cpu").eval()
    with torch.no_grad():                         # random everywhere, so that no part is a no-op
        for p in (model.mlm_dense.weight, model.mlm_dense.bias, model.mlm_norm.bias, model.mlm_decoder.bias):
            p.copy_(torch.randn_like(p) * (2 / math.sqrt(16) if p.dim() == 2 else 0.5))
        model.mlm_norm.weight.copy_(1 + 0.5 * torch.randn(16))
        model.bert.embeddings.token.weight.copy_(torch.randn(50, 16))
    weights = [t.detach().clone() for t in (model.mlm_dense.weight, model.mlm_dense.bias, model.mlm_norm.weight,
                                            model.mlm_norm.bias, model.bert.embeddings.token.weight,
                                            model.mlm_decoder.bias)]
    g = torch.Generator().manual_seed(1)
    w, b = weights[:2]
    small = 1e-3 * torch.randn(4, 16, generator=g)              # dense outputs this small: eps decides the scale
    cases = {"hidden vectors of shape (2, 5, 16)": 2 * torch.randn(2, 5, 16, generator=g),
             "hidden vectors whose dense outputs are nearly 0, (4, 16)": torch.linalg.solve(w, (small - b).T).T}
    with torch.no_grad():
        for name, hidden in cases.items():
            want = model.mlm_logits(hidden)
            got = candidate(hidden.clone(), *(t.clone() for t in weights))
            assert isinstance(got, torch.Tensor) and got.shape == want.shape, (
                f"for {name} expected logits of shape {tuple(want.shape)} (..., vocab_size), got "
                f"{tuple(getattr(got, 'shape', ())) or type(got).__name__}; the decoder is the (V, C) embedding used "
                "transposed: h @ embedding.T")
            if torch.allclose(got, want, atol=1e-4, rtol=1e-4):
                continue
            for slip, variant in _MLM_SLIPS.items():
                if torch.allclose(got, _mlm_variant(hidden, *weights, **variant), atol=1e-4, rtol=1e-4):
                    raise AssertionError(f"for {name}: {slip}")
            other = weights[:4] + [weights[4] + torch.randn_like(weights[4]), weights[5]]
            if torch.allclose(candidate(hidden.clone(), *(t.clone() for t in other)), got, atol=1e-6):
                raise AssertionError("the logits do not change with `embedding`: the decoder must be the "
                                     "token-embedding matrix itself (tied), not a matrix of its own")
            raise AssertionError(f"for {name} the logits differ from BertForPreTraining.mlm_logits by up to "
                                 f"{(got - want).abs().max():.3g}: dense, exact GELU, LayerNorm (eps 1e-12, its weight "
                                 "and bias), then @ embedding.T + decoder_bias")
    return len(cases)


def _null_rule(start, end, tau, max_answer_len, strict=True, tau_on_span=False, with_cls=False, ordered=True,
               length_slack=0):
    """SQuAD 2.0's rule (Devlin et al. 2019, section 4.3) by brute force; the keywords are the usual slips."""
    T = len(start)
    first = 0 if with_cls else 1
    spans = [(i, j) for i in range(first, T) for j in range(first, T)
             if (j >= i or not ordered) and (not ordered or j - i < max_answer_len + length_slack)]
    i, j = max(spans, key=lambda s: (start[s[0]] + end[s[1]], -s[0], -s[1]))
    best, null = start[i] + end[j], start[0] + end[0]
    answer = best + tau > null if tau_on_span else (best > null + tau if strict else best >= null + tau)
    return (i, j) if answer else None


_NULL_SLIPS = {
    "tau is on the wrong side: the paper answers only when s_hat > s_null + tau, so a larger tau means more "
    "'no answer'": dict(tau_on_span=True),
    "a tie is not an answer: the paper answers only when s_hat is strictly greater than s_null + tau":
        dict(strict=False),
    "the best non-null span must not start or end at [CLS] (position 0)": dict(with_cls=True),
    "the best span needs j >= i: taking the best start and the best end separately can give an end before the "
    "start": dict(ordered=False),
    "a span may hold at most max_answer_len positions, j - i + 1 <= max_answer_len": dict(length_slack=1),
}

_NULL_CASES = [  # (start logits, end logits, tau, max_answer_len); position 0 is [CLS]
    ([0.0, 1, 5, 0, 0], [0.0, 0, 1, 6, 0], 0.0, 5),        # a clear answer, (2, 3)
    ([4.0, 1, 2, 0, 0], [4.0, 0, 2, 1, 0], 0.0, 5),        # [CLS] wins: no answer
    ([1.0, 3, 0, 0, 0], [1.0, 0, 0, 2, 0], 2.0, 5),        # s_hat 5 > s_null 2 + tau 2: answer
    ([1.0, 3, 0, 0, 0], [1.0, 0, 0, 2, 0], 3.0, 5),        # s_hat 5 = s_null 2 + tau 3: a tie, no answer
    ([2.0, 0, 0, 0], [2.0, 0, 1, 1], -2.0, 4),             # s_hat 1 > 4 - 2: answer
    ([3.0, 1, 0, 0], [3.0, 0, 1, 0], -5.0, 4),             # [CLS] would give a better "span" (0, 0) or (0, 2)
    ([0.0, 0, 0, 6, 0], [0.0, 0, 5, 0, 1], 0.0, 5),        # best start after best end
    ([0.0, 5, 0, 0, 0], [0.0, 0, 0, 0, 5], 0.0, 3),        # the long span is too long
    ([0.0, 5, 0, 0, 0, 0], [0.0, 0.5, 0, 4, 0, 0], 0.0, 3),  # three positions: allowed
]


def null_score(candidate) -> int:
    """``candidate(start_logits, end_logits, tau, max_answer_len)`` -> ``None`` ("no answer") or ``(i, j)``: the
    SQuAD 2.0 rule of Devlin et al. (2019, section 4.3) on one (T,) pair of logit vectors whose position 0 is
    [CLS]: s_null = S_0 + E_0, s_hat the best S_i + E_j with 1 <= i <= j and j - i < max_answer_len; answer
    (i, j) when s_hat > s_null + tau, else None."""
    g = torch.Generator().manual_seed(0)
    cases = list(_NULL_CASES)
    for _ in range(40):                                      # random cases with a spread of margins
        T, tau = int(torch.randint(3, 9, (1,), generator=g)), round(float(torch.randn(1, generator=g) * 2), 1)
        s, e = (torch.randn(T, generator=g).mul(2).round().tolist() for _ in range(2))
        cases.append((s, e, tau, int(torch.randint(1, 5, (1,), generator=g))))

    def run(s, e, tau, n):
        got = candidate(torch.tensor(s), torch.tensor(e), tau, n)
        return None if got is None else tuple(int(x) for x in got)

    def right(case, got):                                    # any of several equally good spans will do
        s, e, tau, n = case
        want = _null_rule(*case)
        if want is None or got is None:
            return got == want
        i, j = got
        return 1 <= i <= j < min(len(s), i + n) and s[i] + e[j] == s[want[0]] + e[want[1]]

    answers = [run(*c) for c in cases]
    for case, got in zip(cases, answers):
        want = _null_rule(*case)
        if right(case, got):
            continue
        for slip, variant in _NULL_SLIPS.items():
            if all(a == _null_rule(*c, **variant) for c, a in zip(cases, answers)):
                raise AssertionError(slip)
        s, e, tau, n = case
        raise AssertionError(f"for start {s}, end {e}, tau = {tau}, max_answer_len = {n} expected {want}, got {got}")
    return len(cases)


def _window_variant(question, passage, a, b, window, stride, offset=2, partial=False, sep_segment=(0, 1),
                    cover=True):
    """[CLS] question [SEP] window [SEP] for every window, with the answer's positions or (0, 0); the keywords
    are the usual slips."""
    starts = window_starts(len(passage), window, stride) if cover else list(range(0, max(len(passage) - window, 0) + 1,
                                                                                 stride))
    out = []
    for w0 in starts:
        piece = passage[w0:w0 + window]
        tokens = ["[CLS]", *question, "[SEP]", *piece, "[SEP]"]
        segments = [0] * (len(question) + 1) + [sep_segment[0]] + [1] * len(piece) + [sep_segment[1]]
        inside = w0 <= a and b < w0 + len(piece)
        if partial and not inside and a < w0 + len(piece) and b >= w0:
            inside, a_, b_ = True, max(a, w0), min(b, w0 + len(piece) - 1)
        else:
            a_, b_ = a, b
        k = len(question) + offset - w0
        out.append((tokens, segments, *((a_ + k, b_ + k) if inside else (0, 0))))
    return out


_WINDOW_SLIPS = {
    "the positions must count [CLS], the question and its [SEP] before the window: the answer's first piece is at "
    "len(question) + 2 + (answer_start - window start)": [dict(offset=0), dict(offset=1), dict(offset=3)],
    "a window that holds only part of the answer cannot point at it: its target is [CLS], (0, 0), as for a window "
    "without the answer": [dict(partial=True)],
    "the [SEP] after the question belongs to segment 0 (sentence A), the final [SEP] to segment 1":
        [dict(sep_segment=s) for s in ((1, 1), (0, 0), (1, 0))],
    "the windows must cover the whole passage: use window_starts(len(passage), window, stride), whose last window "
    "ends at the passage's end": [dict(cover=False)],
}


def window_examples(candidate) -> int:
    """``candidate(question, passage, answer_start, answer_end, window, stride)`` -> one ``(tokens, segment_ids,
    start, end)`` per window of :func:`lmcourse.sliding_window.window_starts`: tokens ``[CLS] question [SEP]
    window [SEP]``, segment ids 0 up to the first [SEP] and 1 after it, and the answer's positions in ``tokens``
    if the window holds the whole answer (pieces answer_start..answer_end of the passage), else (0, 0), [CLS]."""
    question = ["who", "won", "?"]
    passage = [f"p{k}" for k in range(23)]
    cases = [(2, 3, 8, 4), (6, 8, 8, 4), (21, 22, 8, 4), (9, 9, 10, 5), (0, 1, 30, 10), (14, 17, 6, 3)]
    for a, b, window, stride in cases:
        want = _window_variant(question, passage, a, b, window, stride)
        got = candidate(list(question), list(passage), a, b, window, stride)
        got = [(list(t), [int(x) for x in s], int(i), int(j)) for t, s, i, j in got]
        if got == [(list(t), s, i, j) for t, s, i, j in want]:
            continue
        for slip, variants in _WINDOW_SLIPS.items():
            for variant in variants:
                if got == [(list(t), s, i, j) for t, s, i, j in _window_variant(question, passage, a, b, window,
                                                                                stride, **variant)]:
                    raise AssertionError(f"answer at passage pieces {a}..{b}, window {window}, stride {stride}: {slip}")
        detail = (f"{len(want)} windows, got {len(got)}" if len(got) != len(want) else
                  next(f"window {w}: expected {x}, got {y}" for w, (x, y) in enumerate(zip(want, got))
                       if (list(x[0]), *x[1:]) != y))
        raise AssertionError(f"answer at passage pieces {a}..{b} of 23, window {window}, stride {stride}: expected "
                             f"{detail}")
    return len(cases)


def whole_word_groups(candidate) -> int:
    """``candidate(pieces) -> list of word numbers``: a ``##`` piece belongs to the word before it,
    special tokens (``[CLS]``, ``[SEP]``, ``[PAD]``) to no word (-1); words are numbered from 0."""
    cases = [(["play", "##ing"], [0, 0]),
             (["[CLS]", "the", "una", "##ffa", "##ble", "bankers", "[SEP]"], [-1, 0, 1, 1, 1, 2, -1]),
             (["[CLS]", "new", "york", "[SEP]", "city", "[SEP]", "[PAD]"], [-1, 0, 1, -1, 2, -1, -1]),
             (["[CLS]", "[MASK]", "##s", "are", "fun"], [-1, 0, 0, 1, 2])]   # [MASK] stands for a piece
    for pieces, expected in cases:
        got = candidate(list(pieces))
        assert list(got) == expected, (f"for {pieces} expected {expected}, got {got}"
                                       + (" ([MASK] replaces a word piece, so it starts or continues a word)"
                                          if "[MASK]" in pieces else ""))
    return len(cases)


def sop_pairs(candidate) -> int:
    """``candidate(sentences, seed) -> [(A, B, label)]``: one pair for every two consecutive sentences,
    in document order; label 1 keeps their order (A is the earlier one), label 0 swaps them; each
    order with probability 1/2, drawn from ``seed``."""
    doc = [f"sentence {i} ." for i in range(201)]
    for sentences in (doc[:3], doc):
        got = list(candidate(list(sentences), 0))
        assert len(got) == len(sentences) - 1, (f"{len(sentences)} sentences have {len(sentences) - 1} "
                                                f"consecutive pairs, got {len(got)} pairs")
        for i, (a, b, label) in enumerate(got):
            first, second = sentences[i], sentences[i + 1]
            expected = (first, second) if label == 1 else (second, first)
            assert label in (0, 1) and (a, b) == expected, (
                f"pair {i} should be ({first!r}, {second!r}) with label 1 or ({second!r}, {first!r}) with "
                f"label 0, got ({a!r}, {b!r}, {label!r})")
    swapped = sum(label == 0 for *_, label in candidate(list(doc), 0)) / (len(doc) - 1)
    assert 0.35 < swapped < 0.65, f"about half of the pairs should be swapped, got a share of {swapped:.2f}"
    assert list(candidate(list(doc), 1)) == list(candidate(list(doc), 1)), "the same seed must give the same pairs"
    assert list(candidate(["one sentence ."], 0)) == [], "a one-sentence document has no pairs"
    return 4
