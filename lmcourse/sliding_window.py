"""Question answering over passages longer than the model's window: overlapping windows.

BERT reads at most ``max_len`` positions (512). Google's SQuAD code cuts a long passage into windows
of pieces that overlap (``doc_stride``), puts ``[CLS] question [SEP] window [SEP]`` through the model
for each, and answers with the span that scores best over all windows.
"""
import torch

from lmcourse.finetune import best_span
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.validate import check_int, check_nonempty, check_type


def window_starts(length: int, window: int, stride: int) -> list[int]:
    """Starts of windows of ``window`` pieces, ``stride`` apart, covering ``length`` pieces; the last
    window ends at ``length`` (so it may overlap the one before by more than ``window - stride``)."""
    check_int(length, "length", minimum=1)
    check_int(window, "window", minimum=1)
    check_int(stride, "stride", minimum=1, maximum=window)
    if length <= window:
        return [0]
    starts = list(range(0, length - window, stride))
    return starts + [length - window]


@torch.no_grad()
def answer_in_windows(model, tokenizer: WordPieceTokenizer, question: str, passage: list[str],
                      window: int, stride: int, max_answer_len: int = 10) -> tuple[int, int, float]:
    """The best answer span over all windows of the passage pieces ``passage`` (the windows go
    through ``model`` as one batch):
    ``(first piece, last piece, score)`` with piece positions in ``passage`` and score
    start_i + end_j. ``model(input_ids, token_type_ids, attention_mask) -> (start (W, T), end (W, T))`` for W windows."""
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    check_nonempty(passage, "passage")
    q = tokenizer.tokenize(question)
    starts = window_starts(len(passage), window, stride)
    encs = [tokenizer.encode_pieces(q, passage[w0:w0 + window]) for w0 in starts]   # all of one length
    ids = torch.tensor([e.input_ids for e in encs])                              # (W, T): one batch
    offset = len(q) + 2                                                          # [CLS] question [SEP]
    allowed = torch.zeros_like(ids, dtype=torch.bool)
    allowed[:, offset:offset + min(window, len(passage))] = True
    start, end = model(ids, torch.tensor([e.token_type_ids for e in encs]), torch.ones_like(ids))   # (W, T) each
    i, j = best_span(start, end, allowed, max_answer_len)                        # (W,), (W,)
    scores = start.gather(1, i[:, None])[:, 0] + end.gather(1, j[:, None])[:, 0]  # (W,)
    w = int(scores.argmax())                                                     # the first best window
    return starts[w] + i[w].item() - offset, starts[w] + j[w].item() - offset, scores[w].item()
