import numpy as np
import pytest
import torch

from lmcourse.sentence_ends import probe_auc, sentence_end_windows


def test_windows_drop_full_stops_and_mark_the_token_before_them():
    # "a b . c d . e f g" with "." = 9
    ids = torch.tensor([1, 2, 9, 3, 4, 9, 5, 6, 7])
    windows, ends = sentence_end_windows(ids, end_id=9, num_windows=20, seq_len=3,
                                         generator=torch.Generator().manual_seed(0))
    text = [1, 2, 3, 4, 5, 6, 7]
    is_end = {2: True, 4: True}
    assert windows.shape == ends.shape == (20, 3)
    assert not (windows == 9).any()
    for row, flags in zip(windows.tolist(), ends.tolist()):
        start = text.index(row[0])
        assert row == text[start:start + 3]
        assert flags == [is_end.get(t, False) for t in row]


def test_windows_check_their_inputs():
    with pytest.raises(ValueError, match="seq_len"):
        sentence_end_windows(torch.tensor([1, 9, 2]), end_id=9, num_windows=1, seq_len=2)
    with pytest.raises(ValueError, match="1-D"):
        sentence_end_windows(torch.zeros(2, 5, dtype=torch.long), end_id=9, num_windows=1, seq_len=2)
    with pytest.raises((TypeError, ValueError), match="num_windows"):
        sentence_end_windows(torch.arange(10), end_id=9, num_windows=0, seq_len=2)


def test_probe_auc_ranks_separable_data_perfectly_and_noise_near_chance():
    rng = np.random.default_rng(0)
    y = np.arange(400) % 2
    x = rng.normal(size=(400, 4)) + 3.0 * y[:, None]
    assert probe_auc(x[:200], y[:200], x[200:], y[200:]) == 1.0
    noise = rng.normal(size=(400, 4))
    assert abs(probe_auc(noise[:200], y[:200], noise[200:], y[200:]) - 0.5) < 0.1


def test_probe_auc_checks_its_inputs():
    x, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="same C"):
        probe_auc(x, y, np.zeros((4, 3)), y)
    with pytest.raises(ValueError, match="both classes"):
        probe_auc(x, np.zeros(4), x, y)
    with pytest.raises(TypeError, match="train_x"):
        probe_auc([[0.0]], y, x, y)
