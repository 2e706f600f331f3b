import numpy as np
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
    with pytest.raises(AssertionError, match="binary cross-entropy"):                   # torch's own loss refused
        check("ch10-rtd-loss", lambda z, y: F.binary_cross_entropy_with_logits(z, y.float()))


def test_permutation_mask_refuses_the_package():
    from lmcourse import xlnet
    with pytest.raises(AssertionError, match="package's own"):
        check("ch10-permutation-mask", lambda order: xlnet.permutation_masks(order)[1])
    from lmcourse.xlnet import permutation_masks
    with pytest.raises(AssertionError, match="package's own"):                         # however it is reached
        check("ch10-permutation-mask", lambda order: permutation_masks(order)[1])


def t5_mask(length, noise_density, mean_span_length, rng):
    """T5's random_spans_noise_mask, written again here."""
    num_noise = min(max(round(length * noise_density), 1), length - 1)
    num_spans = min(max(round(num_noise / mean_span_length), 1), num_noise, length - num_noise)

    def segments(total):
        cuts = np.sort(rng.choice(np.arange(1, total), num_spans - 1, replace=False))
        return np.diff(np.concatenate([[0], cuts, [total]]))

    mask, start = np.zeros(length, dtype=bool), 0
    for keep, noise in zip(segments(length - num_noise), segments(num_noise)):
        mask[start + keep:start + keep + noise] = True
        start += keep + noise
    return mask


def equal_spans(length, noise_density, mean_span_length, rng):
    """The right counts, but every span of (nearly) the same length and evenly spaced: wrong statistics."""
    num_noise = min(max(round(length * noise_density), 1), length - 1)
    num_spans = min(max(round(num_noise / mean_span_length), 1), num_noise, length - num_noise)
    noise = np.full(num_spans, num_noise // num_spans) + (np.arange(num_spans) < num_noise % num_spans)
    keep = np.full(num_spans, (length - num_noise) // num_spans)
    keep[0] += length - num_noise - keep.sum()
    mask, start = np.zeros(length, dtype=bool), 0
    for k, n in zip(keep, noise):
        mask[start + k:start + k + n] = True
        start += k + n
    return mask


def test_random_span_mask():
    from lmcourse import span_corruption
    assert check("ch10-random-span-mask", t5_mask) == "ch10-random-span-mask: all 6 checks passed"
    with pytest.raises(AssertionError, match="total variation"):
        check("ch10-random-span-mask", equal_spans)
    with pytest.raises(AssertionError, match="spans of noise"):                          # one span per noisy token
        check("ch10-random-span-mask", lambda n, d, m, rng: (np.arange(n) % 2 == 1) & (np.arange(n) < 2 * round(n * d)))
    with pytest.raises(AssertionError, match="package's own"):
        check("ch10-random-span-mask", lambda *args: span_corruption.random_span_mask(*args))
    with pytest.raises(AssertionError, match="package's own"):
        check("ch10-random-span-mask", span_corruption.random_span_mask)
    assert span_corruption.random_span_mask(20, 0.15, 3.0, np.random.default_rng(0)).sum() == 3   # restored


def test_partial_prediction():
    def targets(order, K):
        rank = torch.empty(len(order), dtype=torch.long)
        rank[torch.tensor(order)] = torch.arange(len(order))
        return rank >= len(order) - max(1, int(len(order) // K))
    assert check("ch10-partial-prediction", targets) == "ch10-partial-prediction: all 6 checks passed"
    def last_positions(order, K):                     # the last positions of the TEXT, not of the order
        return torch.arange(len(order)) >= len(order) - max(1, int(len(order) // K))
    with pytest.raises(AssertionError, match="LAST"):
        check("ch10-partial-prediction", last_positions)
    from lmcourse import xlnet
    with pytest.raises(AssertionError, match="package's own"):
        check("ch10-partial-prediction", xlnet.prediction_targets)


def test_infill_and_rtd_checks_refuse_the_code_that_answers_them():
    from lmcourse.span_corruption import SENTINELS, span_corrupt
    with pytest.raises(AssertionError, match="package's own"):
        check("ch10-infill-spans", lambda t, m: ["<mask>" if w in SENTINELS else w for w in span_corrupt(t, m)[0]])
    with pytest.raises(AssertionError, match="binary cross-entropy"):
        check("ch10-rtd-loss", lambda z, y: torch.ops.aten.binary_cross_entropy_with_logits(z, y.float()))


def test_the_numbers_the_span_mask_and_partial_prediction_solutions_state():
    """The solutions' printed statistics (chapter 10's exercises), computed here from the reference answers."""
    import itertools

    from lmcourse.xlnet import sample_order
    spans = [len(list(run)) for k in range(2000)
             for noisy, run in itertools.groupby(t5_mask(512, 0.15, 3.0, np.random.default_rng(k)).tolist()) if noisy]
    assert (len(spans) / 2000, round(float(np.mean(spans)), 2), round(spans.count(1) / len(spans), 2), max(spans)) \
        == (26.0, 2.96, 0.33, 27)
    order = sample_order(512, torch.Generator().manual_seed(0))
    rank = torch.empty(512, dtype=torch.long)
    rank[torch.as_tensor(order)] = torch.arange(512)
    targets = rank >= 512 - 512 // 6
    assert (int(targets.sum()), int(rank[targets].min()), float(rank[targets].float().mean())) == (85, 427, 469.0)


def test_the_numbers_the_embedding_width_solution_states():
    from lmcourse.albert import EncoderConfig, encoder_parameters
    large = lambda E, sharing: EncoderConfig(vocab_size=30000, d_model=1024, num_layers=24, d_ff=4096,  # noqa: E731
                                             d_embed=E, sharing=sharing)
    millions = {sharing: [round(encoder_parameters(large(E, sharing))["total"] / 1e6, 1) for E in (64, 128, 256, 1024)]
                for sharing in ("none", "all")}
    assert millions == {"none": [305.4, 307.4, 311.4, 334.6], "all": [15.7, 17.7, 21.7, 44.9]}
