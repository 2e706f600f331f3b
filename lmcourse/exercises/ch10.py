"""Checks for the exercises of chapter 10 (After BERT). While the reader's function runs, the code that
would answer an exercise for it refuses to run (``lmcourse.xlnet``'s masks and targets,
``lmcourse.span_corruption`` and ``lmcourse.bart_noise.text_infilling`` however they are reached;
torch's binary cross-entropy for ``rtd_loss`` when called through torch)."""
import itertools
from collections import Counter
from contextlib import ExitStack

import numpy as np
import torch
import torch.nn.functional as F

from lmcourse import bart_noise, span_corruption, xlnet
from lmcourse.electra import ReplacedTokenDetector, rtd_loss as reference_rtd_loss
from lmcourse.exercises._refusing import refusing, refusing_function
from lmcourse.xlnet import permutation_masks

__all__ = ["permutation_mask", "partial_prediction", "infill_spans", "rtd_loss", "random_span_mask"]


def _refusing_all(refused: list[tuple[object, str]], why: str) -> ExitStack:
    """One context for :func:`refusing` every ``(owner, attribute)`` of ``refused``."""
    stack = ExitStack()
    for owner, attribute in refused:
        stack.enter_context(refusing(owner, attribute, why))
    return stack


def permutation_mask(candidate) -> int:
    """``candidate(order)`` must return XLNet's query-stream mask, (T, T) bool, True = may attend."""
    orders = [[0, 1, 2], [2, 1, 3, 0], [4, 0, 3, 1, 2], [0], [5, 4, 3, 2, 1, 0]]
    for order in orders:
        with refusing_function(xlnet.permutation_masks), refusing_function(xlnet.order_ranks):
            got = torch.as_tensor(candidate(list(order)))
        expected = permutation_masks(order)[1]
        assert got.shape == expected.shape, \
            f"order {order}: expected shape {tuple(expected.shape)}, got {tuple(got.shape)}"
        assert got.dtype == torch.bool, f"order {order}: expected a bool mask, got {got.dtype}"
        assert not got.diagonal().any(), \
            f"order {order}: the query stream must not see its own token (diagonal must be False)"
        assert torch.equal(got, expected), (
            f"order {order}: row i must be True exactly at the positions predicted before position i;\n"
            f"expected\n{expected.int()}\ngot\n{got.int()}")
    return len(orders)


def partial_prediction(candidate) -> int:
    """``candidate(order, K)`` must return XLNet's prediction targets, (T,) bool: True at the positions
    in the last floor(T / K) steps of the factorisation ``order`` (at least one), as
    :func:`lmcourse.xlnet.prediction_targets` does."""
    cases = [([2, 1, 3, 0], 2.0), ([2, 1, 3, 0], 6.0), ([4, 0, 3, 1, 2, 5, 7, 6], 3.0), ([0, 1, 2], 1.0),
             (list(range(12))[::-1], 6.0), ([5, 3, 1, 0, 2, 4, 6], 2.5)]
    for order, K in cases:
        with refusing_function(xlnet.prediction_targets), refusing_function(xlnet.order_ranks):
            got = torch.as_tensor(candidate(list(order), K))
        expected = xlnet.prediction_targets(order, K)
        assert got.shape == expected.shape and got.dtype == torch.bool, \
            f"order {order}, K {K}: return a ({len(order)},) bool tensor, got {got.dtype} {tuple(got.shape)}"
        assert torch.equal(got, expected), (
            f"order {order}, K {K}: expected {expected.int().tolist()}, got {got.int().tolist()}; the targets are "
            "the positions predicted in the LAST floor(T / K) steps of the order (at least one), indexed by position")
    return len(cases)


def infill_spans(candidate) -> int:
    """``candidate(tokens, noise_mask)`` must return BART's text-infilling input: every maximal run
    of tokens whose ``noise_mask`` entry is True replaced by ONE ``"<mask>"``, the rest unchanged."""
    words = "the fire near goulburn pushed a huge bushfire towards the town".split()
    cases = [[False] * 11, [True] + [False] * 10, [False] * 4 + [True] * 3 + [False] * 4,
             [True, True, False, True, False, False, True, True, True, False, True], [True] * 11]
    for noise in cases:
        with refusing_function(span_corruption.span_corrupt), refusing_function(bart_noise.text_infilling):
            got = candidate(list(words), list(noise))
        expected = [w for noisy, run in itertools.groupby(zip(words, noise), key=lambda p: p[1])
                    for w in (["<mask>"] if noisy else [t for t, _ in run])]
        assert isinstance(got, list), f"noise {noise}: return a list of tokens, got {type(got).__name__}"
        assert got == expected, (f"noise {[int(n) for n in noise]}: expected {expected}, got {got}"
                                 + ("; one <mask> per SPAN, not per token"
                                    if got.count("<mask>") > expected.count("<mask>") else ""))
    return len(cases)


def rtd_loss(candidate) -> int:
    """``candidate(logits, replaced)`` must return ELECTRA's discriminator loss as a 0-d tensor: the
    binary cross-entropy -[y log D + (1 - y) log(1 - D)] with D = sigmoid(logit) = P(replaced) and
    y = 1 where the token was replaced, averaged over every position. logits (B, T) float, replaced
    (B, T) bool. Compared with ``lmcourse.electra.rtd_loss`` on a small detector, gradient included,
    and with torch's ``binary_cross_entropy_with_logits`` on logits up to +-60, where a naive
    log(sigmoid(.)) gives infinities."""
    torch.manual_seed(0)
    detector = ReplacedTokenDetector(vocab_size=11, d_model=8, num_heads=2, num_layers=1, max_len=6)
    ids, replaced = torch.randint(0, 11, (3, 6)), torch.rand(3, 6) < 0.3
    logits = detector(ids)
    with _no_torch_bce():
        got = candidate(logits, replaced.clone())
    expected = reference_rtd_loss(detector, (ids, replaced.float()))
    assert isinstance(got, torch.Tensor) and got.dim() == 0, \
        f"return a 0-d tensor (one number for the batch), got {type(got).__name__} {getattr(got, 'shape', '')}"
    assert torch.allclose(got, expected, atol=1e-5), (
        f"small detector: expected {expected.item():.5f}, got {got.item():.5f}; average over EVERY position, "
        "replaced or not, not over the replaced ones only")
    grad, = torch.autograd.grad(got, detector.head.weight)
    grad_expected, = torch.autograd.grad(expected, detector.head.weight)
    assert torch.allclose(grad, grad_expected, atol=1e-5), "the loss must stay differentiable in the logits"
    checks = 2
    for scale in (3.0, 60.0):
        z, y = torch.randn(4, 9, generator=torch.Generator().manual_seed(int(scale))) * scale, torch.rand(4, 9) < 0.5
        with _no_torch_bce():
            got = candidate(z, y)
        expected = F.binary_cross_entropy_with_logits(z, y.float())
        assert torch.isfinite(got), (f"logits up to {z.abs().max():.0f}: got {got.item()}; log(sigmoid(z)) overflows "
                                     "for large |z|: use log(sigmoid(z)) = -softplus(-z) (or logsigmoid)")
        assert torch.allclose(got, expected, rtol=1e-4, atol=1e-5), \
            f"logits of scale {scale}: expected {expected.item():.5f}, got {got.item():.5f}"
        checks += 1
    return checks


def _no_torch_bce() -> ExitStack:
    """torch's binary cross-entropy functions and modules refuse to run."""
    return _refusing_all([(F, "binary_cross_entropy"), (F, "binary_cross_entropy_with_logits"),
                          (torch, "binary_cross_entropy_with_logits"), (torch.nn.BCELoss, "forward"),
                          (torch.nn.BCEWithLogitsLoss, "forward"), (torch.ops.aten, "binary_cross_entropy"),
                          (torch.ops.aten, "binary_cross_entropy_with_logits")],
                         "your function called torch's binary cross-entropy: write the two logarithms yourself")


def _spans(mask: np.ndarray) -> list[int]:
    """The lengths of the maximal runs of True in ``mask``."""
    return [len(list(run)) for noisy, run in itertools.groupby(mask.tolist()) if noisy]


def random_span_mask(candidate) -> int:
    """``candidate(length, noise_density, mean_span_length, rng)`` must return T5's noise mask, a
    (length,) bool array: round(length * noise_density) noisy tokens in round(noisy / mean_span_length)
    spans, non-noise first, the noise and non-noise tokens each split at random into that many
    non-empty segments (``rng`` a numpy Generator). Its span lengths over many draws must be
    distributed as those of ``lmcourse.span_corruption.random_span_mask``."""
    cases = [(512, 0.15, 3.0), (100, 0.15, 3.0), (40, 0.5, 2.0), (20, 0.15, 1.0), (64, 0.3, 8.0)]
    checks = 0
    for length, density, mean in cases:
        num_noise = min(max(round(length * density), 1), length - 1)
        num_spans = min(max(round(num_noise / mean), 1), num_noise, length - num_noise)
        for seed in range(3):
            with refusing_function(span_corruption.random_span_mask):
                got = np.asarray(candidate(length, density, mean, np.random.default_rng(seed)))
            where = f"length {length}, noise_density {density}, mean_span_length {mean}"
            assert got.shape == (length,) and got.dtype == bool, \
                f"{where}: return a ({length},) bool array, got {got.dtype} {got.shape}"
            assert got.sum() == num_noise, f"{where}: expected round(length * noise_density) = {num_noise} noisy " \
                                           f"tokens, got {got.sum()}"
            spans = len(_spans(got))
            assert spans == num_spans, f"{where}: expected {num_spans} spans of noise, got {spans}"
            assert not got[0], f"{where}: T5's mask starts with a non-noise segment"
        checks += 1
    # the statistics: span lengths over 2,000 draws of T5's setting, against the package's own
    draws = 2000
    with refusing_function(span_corruption.random_span_mask):
        got = Counter(n for k in range(draws) for n in _spans(np.asarray(candidate(512, 0.15, 3.0,
                                                                                   np.random.default_rng(k)))))
    expected = Counter(n for k in range(draws) for n in _spans(span_corruption.random_span_mask(
        512, 0.15, 3.0, np.random.default_rng(10_000 + k))))
    total_got, total_expected = sum(got.values()), sum(expected.values())
    distance = sum(abs(got[n] / total_got - expected[n] / total_expected) for n in got | expected) / 2
    assert distance < 0.03, (f"span lengths over {draws} masks of 512 tokens: {distance:.3f} of the probability "
                             "is in the wrong place (total variation distance; at most 0.03). Split the noise "
                             "tokens into segments at random cut points, not into equal spans")
    assert max(got) > 10, "some spans must be much longer than the mean: cut the noise at random points"
    return checks + 1
