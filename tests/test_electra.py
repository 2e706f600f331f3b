import math

import pytest
import torch

from lmcourse import set_seed
from lmcourse.electra import (
    BigramClozeGenerator,
    ReplacedTokenDetector,
    detection_metrics,
    replace_tokens,
    rtd_batches,
    rtd_loss,
)
from lmcourse.train import fit

# a stream with strong bigram structure: 2 3 4 5 6 2 3 4 5 6 ... (0 and 1 are special)
STREAM = torch.tensor([2, 3, 4, 5, 6] * 200)


def test_cloze_probabilities_match_counting():
    cloze = BigramClozeGenerator(STREAM, 7, k=0.1, special_ids=(0, 1))
    probs = cloze.logits(torch.tensor([3]), torch.tensor([5])).softmax(-1)[0]
    # by hand: p(w | 3) p(5 | w) with add-0.1 counts; w = 4 dominates
    c = torch.zeros(7, 7)
    for a, b in zip(STREAM[:-1].tolist(), STREAM[1:].tolist()):
        c[a, b] += 1
    p = (c + 0.1) / (c.sum(1, keepdim=True) + 0.7)
    expected = p[3] * p[:, 5]
    expected[[0, 1]] = 0
    torch.testing.assert_close(probs, expected / expected.sum(), atol=1e-6, rtol=1e-5)
    assert probs.argmax() == 4 and probs[0] == 0


def test_replace_tokens_labels_and_edges():
    cloze = BigramClozeGenerator(torch.randint(2, 50, (2000,), generator=torch.Generator().manual_seed(0)), 50)
    x = torch.randint(2, 50, (64, 20), generator=torch.Generator().manual_seed(1))
    corrupted, replaced = replace_tokens(x, cloze, 0.3, special_ids=(0,), generator=torch.Generator().manual_seed(2))
    assert torch.equal(replaced, corrupted != x)
    assert not replaced[:, [0, -1]].any()
    assert 0.15 < replaced.float().mean() < 0.35


def test_detector_shapes_and_learning():
    set_seed(0)
    cloze = BigramClozeGenerator(torch.randint(2, 30, (3000,), generator=torch.Generator().manual_seed(0)), 30)
    gen = torch.Generator().manual_seed(0)
    batches = rtd_batches(STREAM, cloze, 30, 16, 12, generator=gen)
    model = ReplacedTokenDetector(30, d_model=32, num_heads=2, num_layers=1)
    assert model(batches[0][0]).shape == (16, 12)
    history = fit(model, rtd_loss, batches, num_epochs=3, lr=3e-3, progress=False)
    # a periodic stream makes every replacement detectable: the loss must fall well below chance
    assert history.train_loss[-1] < 0.5 * math.log(2)


def test_detection_metrics():
    logits = torch.tensor([[2.0, -1.0, 3.0, -2.0]])
    replaced = torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    m = detection_metrics(logits, replaced)
    assert m == {"accuracy": 0.5, "baseline accuracy": 0.5, "precision": 0.5, "recall": 0.5, "AUC": 0.5}
    from sklearn.metrics import roc_auc_score
    scores, truth = torch.randn(200), torch.rand(200) < 0.3
    assert abs(detection_metrics(scores, truth.float())["AUC"] - roc_auc_score(truth.numpy(), scores.numpy())) < 1e-9


def test_bad_inputs():
    with pytest.raises(ValueError, match="ids"):
        BigramClozeGenerator(torch.tensor([1]), 5)
    with pytest.raises(ValueError, match="ids"):
        BigramClozeGenerator(torch.tensor([1, 9]), 5)
    cloze = BigramClozeGenerator(STREAM, 7)
    with pytest.raises(ValueError, match="input_ids"):
        replace_tokens(torch.tensor([[2, 3]]), cloze)
    with pytest.raises(TypeError, match="cloze"):
        replace_tokens(torch.tensor([[2, 3, 4]]), "bigram")
    with pytest.raises(ValueError, match="ids"):
        ReplacedTokenDetector(7, max_len=4)(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="logits"):
        detection_metrics(torch.zeros(2), torch.zeros(3))
