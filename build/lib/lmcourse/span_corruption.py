"""T5's span corruption, the denoising objective that won T5's study of objectives (Raffel et al. 2020).

About 15% of the tokens are dropped in spans of mean length 3; each dropped span is replaced in
the input by one sentinel token, and the target lists the sentinels, each followed by the tokens it
stands for, and a final sentinel:

    input:  Thank you <X> me to your party <Y> week .
    target: <X> for inviting <Y> last <Z>
"""
import numpy as np

from lmcourse.validate import check_float, check_nonempty, check_type

#: the paper writes <X>, <Y>, <Z>; released T5 vocabularies call them <extra_id_0>, <extra_id_1>, ...
SENTINELS = tuple(f"<{c}>" for c in "XYZABCDEFGHIJKLMNOPQRSTUVW")


def random_span_mask(length: int, noise_density: float = 0.15, mean_span_length: float = 3.0,
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """(length,) bool: round(length * noise_density) noisy tokens in about n / mean_span_length spans.

    As in T5: the noise and non-noise tokens are each split at random into the same number of
    non-empty segments, which then alternate, starting with non-noise.
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise ValueError(f"length must be an int >= 2, got {length!r}")
    check_float(noise_density, "noise_density", minimum=0.0, maximum=1.0)
    check_float(mean_span_length, "mean_span_length", minimum=1.0)
    rng = rng if rng is not None else np.random.default_rng()
    num_noise = min(max(round(length * noise_density), 1), length - 1)
    num_spans = max(round(num_noise / mean_span_length), 1)
    num_spans = min(num_spans, num_noise, length - num_noise)

    def segment_lengths(total: int) -> np.ndarray:
        # choose num_spans - 1 distinct cut points among the total - 1 gaps
        cuts = np.sort(rng.choice(np.arange(1, total), num_spans - 1, replace=False))
        return np.diff(np.concatenate([[0], cuts, [total]]))

    noise, keep = segment_lengths(num_noise), segment_lengths(length - num_noise)
    mask = np.zeros(length, dtype=bool)
    start = 0
    for k, n in zip(keep, noise):
        start += k
        mask[start:start + n] = True
        start += n
    return mask


def span_corrupt(tokens: list[str], noise_mask) -> tuple[list[str], list[str]]:
    """Input and target of span corruption for ``tokens`` and a bool ``noise_mask`` of equal length."""
    check_nonempty(tokens, "tokens")
    check_type(tokens, "tokens", list)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    if noise_mask.shape != (len(tokens),):
        raise ValueError(f"noise_mask must have shape ({len(tokens)},), got {noise_mask.shape}")
    inputs, targets, sentinel = [], [], 0
    for i, (token, noisy) in enumerate(zip(tokens, noise_mask)):
        starts_span = noisy and (i == 0 or not noise_mask[i - 1])
        if starts_span:
            if sentinel >= len(SENTINELS) - 1:
                raise ValueError(f"noise_mask has more than {len(SENTINELS) - 1} spans")
            inputs.append(SENTINELS[sentinel])
            targets.append(SENTINELS[sentinel])
            sentinel += 1
        (targets if noisy else inputs).append(token)
    targets.append(SENTINELS[sentinel])
    return inputs, targets
