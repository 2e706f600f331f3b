"""Claims: a printed line per claim; a failing claim is visible, and an error under the tests."""
import numpy as np
import pytest
import torch

from lmcourse.evidence import STRICT_ENV, ClaimFailed, claim, format_value


def test_a_claim_that_holds_prints_a_tick_and_the_measured_values(capsys, monkeypatch):
    monkeypatch.setenv(STRICT_ENV, "strict")
    assert claim("the LSTM beats the RNN", 0.91 > 0.5, lstm=0.912345, rnn=torch.tensor(0.5), n=3) is None
    assert capsys.readouterr().out == "✔ the LSTM beats the RNN (lstm = 0.9123, rnn = 0.5, n = 3)\n"


def test_a_claim_that_fails_prints_a_cross_for_readers_and_raises_under_the_tests(capsys, monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    claim("every date is right", np.float64(0.964) == 1.0, exact=0.964)
    assert capsys.readouterr().out == "✘ every date is right (exact = 0.964)\n"
    monkeypatch.setenv(STRICT_ENV, "strict")
    with pytest.raises(ClaimFailed, match="✘ every date is right"):
        claim("every date is right", bool(np.float64(0.964) == 1.0), exact=0.964)


def test_claims_accept_numpy_and_torch_truth_values(capsys):
    claim("numpy", np.array([1, 2]).sum() == 3)
    claim("torch", torch.tensor(2) > 1)
    assert capsys.readouterr().out == "✔ numpy\n✔ torch\n"


@pytest.mark.parametrize("holds, error", [(1, TypeError), ("yes", TypeError), (None, TypeError),
                                          (torch.tensor([True, False]), ValueError)])
def test_holds_must_be_one_truth_value(holds, error):
    with pytest.raises(error, match="holds"):
        claim("x", holds)


def test_the_statement_must_be_text():
    with pytest.raises(TypeError, match="statement"):
        claim(3, True)
    with pytest.raises(ValueError, match="statement"):
        claim("  ", True)


def test_values_are_shown_to_four_significant_digits():
    assert [format_value(v) for v in (1234567.0, 0.000123456, float("nan"), [0.5, 2], True,
                                      np.int64(7), "LSTM")] == [
        "1.235e+06", "0.0001235", "nan", "[0.5, 2]", "True", "7", "LSTM"]
