"""Choosing a learning rate on development data: each arm runs a grid of rates, and a grid whose best
rate lies at one end grows past that end (the optimum may lie beyond it) until the best rate has a
smaller and a larger one beside it, or :data:`MAX_WIDENINGS` times.

The runs themselves are the caller's: :func:`search` hands it every round's ``(arm, rate)`` jobs at
once, so it can run them in parallel.
"""
from collections.abc import Callable, Hashable, Mapping, Sequence

from lmcourse.validate import check_int, check_nonempty

#: how many times a grid may grow past its best rate before the best so far is taken
MAX_WIDENINGS = 3


def widened(rates: Sequence[float], best: float) -> float | None:
    """The next rate past the end of ``rates`` (ascending) where ``best`` lies, at the ratio of the
    two rates at that end, to 3 significant digits; None if ``best`` has a smaller and a larger rate
    beside it."""
    check_nonempty(rates, "rates")
    if len(rates) < 2 or list(rates) != sorted(rates):
        raise ValueError(f"rates must be at least two rates in ascending order, got {list(rates)}")
    if best not in rates:
        raise ValueError(f"best must be one of rates {list(rates)}, got {best}")
    if best == rates[0]:
        return float(f"{rates[0] * rates[0] / rates[1]:.3g}")
    if best == rates[-1]:
        return float(f"{rates[-1] * rates[-1] / rates[-2]:.3g}")
    return None


def best_rate(scores: Mapping[float, float]) -> float:
    """The rate with the highest score (``scores``: rate -> development score); the smallest on a tie."""
    check_nonempty(scores, "scores")
    return max(sorted(scores), key=lambda lr: scores[lr])


def search(score: Callable[[list[tuple[Hashable, float]]], Sequence[float]],
           grids: Mapping[Hashable, Sequence[float]], max_widenings: int = MAX_WIDENINGS
           ) -> dict[Hashable, dict[float, float]]:
    """Each arm's development score at every rate tried, rates ascending: ``grids`` (arm -> rates),
    then, round by round, one rate past the end (:func:`widened`) for every arm whose best rate lies at
    an end, at most ``max_widenings`` rounds. ``score(jobs)`` returns the score of each ``(arm, rate)``
    job (higher is better); pick the rate with :func:`best_rate`."""
    check_nonempty(grids, "grids")
    check_int(max_widenings, "max_widenings", minimum=0)
    if not callable(score):
        raise TypeError(f"score must be callable (jobs -> scores), got {type(score).__name__}")
    for arm, rates in grids.items():
        if len(rates) < 2 or list(rates) != sorted(set(rates)):
            raise ValueError(f"grids[{arm!r}] must hold at least two distinct rates in ascending order, got {rates}")
    scores: dict[Hashable, dict[float, float]] = {arm: {} for arm in grids}
    jobs = [(arm, float(lr)) for arm, rates in grids.items() for lr in rates]
    for round_ in range(max_widenings + 1):
        results = list(score(jobs))
        if len(results) != len(jobs):
            raise ValueError(f"score returned {len(results)} scores for {len(jobs)} jobs")
        for (arm, lr), s in zip(jobs, results):
            scores[arm][lr] = float(s)
        if round_ == max_widenings:
            break
        jobs = [(arm, lr) for arm, by_rate in scores.items()
                if (lr := widened(sorted(by_rate), best_rate(by_rate))) is not None]
        if not jobs:
            break
    return {arm: dict(sorted(by_rate.items())) for arm, by_rate in scores.items()}
