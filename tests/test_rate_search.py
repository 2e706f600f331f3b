"""lmcourse.rate_search: a learning-rate grid per arm, widened past the end where its best rate lies."""
import pytest

from lmcourse.rate_search import MAX_WIDENINGS, best_rate, search, widened


def test_a_grid_widens_past_the_end_where_its_best_rate_lies():
    assert widened([1e-5, 2e-5, 5e-5], 1e-5) == pytest.approx(5e-6)
    assert widened([1e-3, 1e-2, 3e-2], 3e-2) == pytest.approx(9e-2)
    assert widened([1e-3, 1e-2, 3e-2], 1e-2) is None
    assert widened([1e-2, 3e-2], 3e-2) == 0.09                       # rounded to 3 significant digits


def test_the_best_rate_is_the_smallest_on_a_tie():
    assert best_rate({1e-3: 0.5, 1e-2: 0.8, 1e-1: 0.8}) == 1e-2
    assert best_rate({1e-1: 0.8, 1e-2: 0.8}) == 1e-2                 # whatever the order given


def test_search_follows_a_peak_beyond_the_grid_and_stops_at_one_inside_it():
    peaks = {"a": 0.27, "b": 2.5e-3}                                     # each arm's score peaks at its own rate
    calls = []

    def score(jobs):
        calls.append(list(jobs))
        return [-abs(lr - peaks[arm]) / peaks[arm] for arm, lr in jobs]

    scores = search(score, {"a": [1e-2, 3e-2, 9e-2], "b": [1e-3, 3e-3, 1e-2]})
    assert list(scores["a"]) == sorted(scores["a"]) and best_rate(scores["a"]) == 0.27
    assert list(scores["a"]) == [1e-2, 3e-2, 9e-2, 0.27, 0.81]             # widened twice, then bracketed
    assert list(scores["b"]) == [1e-3, 3e-3, 1e-2]                      # bracketed from the start
    assert calls[1] == [("a", 0.27)] and calls[2] == [("a", 0.81)] and len(calls) == 3


def test_search_widens_at_most_max_widenings_times():
    scores = search(lambda jobs: [lr for _, lr in jobs], {"up": [1.0, 2.0]})   # the larger the better, forever
    assert len(scores["up"]) == 2 + MAX_WIDENINGS
    assert list(search(lambda jobs: [lr for _, lr in jobs], {"up": [1.0, 2.0]}, max_widenings=0)["up"]) == [1.0, 2.0]


@pytest.mark.parametrize(("args", "error", "argument"), [
    ((lambda jobs: [], {}), ValueError, "grids"),
    ((lambda jobs: [], {"a": [1e-2, 1e-3]}), ValueError, "grids"),
    ((lambda jobs: [], {"a": [1e-3]}), ValueError, "grids"),
    ((None, {"a": [1e-3, 1e-2]}), TypeError, "score"),
    ((lambda jobs: [0.5], {"a": [1e-3, 1e-2]}), ValueError, "score"),
])
def test_bad_arguments_are_rejected(args, error, argument):
    with pytest.raises(error, match=argument):
        search(*args)


def test_widened_checks_its_arguments():
    with pytest.raises(ValueError, match="rates"):
        widened([3e-2, 1e-2], 1e-2)
    with pytest.raises(ValueError, match="best"):
        widened([1e-2, 3e-2], 5e-2)
    with pytest.raises(ValueError, match="max_widenings"):
        search(lambda jobs: [0.0] * len(jobs), {"a": [1e-3, 1e-2]}, max_widenings=-1)
