"""lmcourse.sliding_window: windows over long passages, answer from the best window."""
import pytest
import torch

from lmcourse.sliding_window import answer_in_windows, window_starts
from lmcourse.tokenize import WordPieceTokenizer

_TOK = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "where", "?", "x", "y", "paris"])


def test_window_starts_cover_everything_with_overlap():
    assert window_starts(5, 8, 4) == [0]
    assert window_starts(20, 8, 4) == [0, 4, 8, 12]
    assert window_starts(21, 8, 4) == [0, 4, 8, 12, 13]
    for length in range(1, 40):
        starts = window_starts(length, 8, 3)
        covered = {t for s in starts for t in range(s, min(length, s + 8))}
        assert covered == set(range(length)) and starts[-1] + min(8, length) == length
    with pytest.raises(ValueError, match="stride"):
        window_starts(10, 4, 5)


def test_answer_in_windows_finds_an_answer_beyond_the_first_window():
    paris = _TOK.stoi["paris"]

    def model(ids, segments, mask):            # scores the piece 'paris' highest as start and end
        hit = (ids == paris).float() * 10
        return hit, hit

    passage = ["x"] * 30 + ["paris"] + ["y"] * 9
    i, j, score = answer_in_windows(model, _TOK, "where ?", passage, window=12, stride=6)
    assert (i, j) == (30, 30) and passage[i] == "paris" and score == 20.0
    torch.testing.assert_close(torch.tensor(score), torch.tensor(20.0))
