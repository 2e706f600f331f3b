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


def test_one_batch_of_windows_equals_one_window_at_a_time():
    from lmcourse.finetune import best_span
    torch.manual_seed(0)
    table = torch.randn(len(_TOK), 2)

    def model(ids, segments, mask):            # a score pair per piece and segment
        out = table[ids] + segments[..., None].float()
        return out[..., 0], out[..., 1]

    passage = [["x", "y", "paris"][k] for k in torch.randint(3, (37,)).tolist()]
    q = _TOK.tokenize("where ?")
    best = (0, 0, float("-inf"))
    for w0 in window_starts(len(passage), 10, 4):                 # the loop the batch replaces
        enc = _TOK.encode_pieces(q, passage[w0:w0 + 10])
        ids = torch.tensor([enc.input_ids])
        allowed = torch.zeros_like(ids, dtype=torch.bool)
        allowed[0, len(q) + 2:len(q) + 2 + len(passage[w0:w0 + 10])] = True
        start, end = model(ids, torch.tensor([enc.token_type_ids]), torch.ones_like(ids))
        i, j = best_span(start, end, allowed)
        score = (start[0, i] + end[0, j]).item()
        if score > best[2]:
            best = (w0 + i.item() - len(q) - 2, w0 + j.item() - len(q) - 2, score)
    got = answer_in_windows(model, _TOK, "where ?", passage, window=10, stride=4)
    assert got[:2] == best[:2] and got[2] == pytest.approx(best[2])
    short = answer_in_windows(model, _TOK, "where ?", passage[:6], window=10, stride=4)   # one short window
    assert 0 <= short[0] <= short[1] < 6
