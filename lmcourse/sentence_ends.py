"""Sentence-end restoration: a downstream task for probing small encoders.

Take running text, delete its full stops, and ask for every remaining token whether a sentence
ended right after it (the task of segmenting unpunctuated text such as speech transcripts). A
token's identity helps ("year" ends sentences more often than "the"), but the strongest evidence
is its neighbours, so the task rewards an encoder whose vectors carry context. A logistic
regression on frozen token vectors (a probe) scores an encoder without fine-tuning it.
"""
import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from lmcourse.validate import check_int, check_type


def sentence_end_windows(ids, end_id: int, num_windows: int, seq_len: int,
                         generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows of a token stream with every ``end_id`` removed.

    Returns (windows, ends), both (num_windows, seq_len): the token ids, and True where a
    sentence ended (an ``end_id`` followed) right after that token in the original stream.
    """
    ids = torch.as_tensor(ids, dtype=torch.long)
    check_int(end_id, "end_id", minimum=0)
    check_int(num_windows, "num_windows", minimum=1)
    check_int(seq_len, "seq_len", minimum=1)
    if ids.dim() != 1:
        raise ValueError(f"ids must be a 1-D token stream, got shape {tuple(ids.shape)}")
    kept = ids != end_id
    followed = torch.zeros_like(kept)
    followed[:-1] = ids[1:] == end_id
    text, ends = ids[kept], followed[kept]
    if len(text) <= seq_len:
        raise ValueError(f"ids must hold more than seq_len={seq_len} tokens besides end_id, got {len(text)}")
    starts = torch.randint(len(text) - seq_len, (num_windows,), generator=generator)
    rows = starts[:, None] + torch.arange(seq_len)        # (N, T)
    return text[rows], ends[rows]


def probe_auc(train_x, train_y, test_x, test_y) -> float:
    """ROC AUC on (test_x, test_y) of a logistic regression (L2, C=1) fitted on (train_x, train_y).

    x: (N, C) features; y: (N,) binary labels. 0.5 is chance, 1 a perfect ranking.
    """
    for name, value in (("train_x", train_x), ("train_y", train_y), ("test_x", test_x), ("test_y", test_y)):
        check_type(value, name, (np.ndarray, torch.Tensor))
    train_x, train_y, test_x, test_y = (np.asarray(v) for v in (train_x, train_y, test_x, test_y))
    if train_x.ndim != 2 or test_x.ndim != 2 or train_x.shape[1] != test_x.shape[1]:
        raise ValueError(f"train_x and test_x must be (N, C) with the same C, got {train_x.shape} and {test_x.shape}")
    if len(train_y) != len(train_x) or len(test_y) != len(test_x):
        raise ValueError("train_y and test_y must have one label per row of train_x and test_x")
    if len(np.unique(train_y)) != 2 or len(np.unique(test_y)) != 2:
        raise ValueError("train_y and test_y must each hold both classes")
    clf = LogisticRegression(max_iter=3000).fit(train_x, train_y)
    return float(roc_auc_score(test_y, clf.decision_function(test_x)))
