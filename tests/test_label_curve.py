"""lmcourse.label_curve: the few-label experiment of chapter 9 on tiny inputs."""
import pytest
import torch

from lmcourse.bert import BertConfig, BertModel
from lmcourse.finetune import task_batches
from lmcourse.label_curve import (
    bag_of_words_accuracy,
    corpus_sentences,
    draw_labels,
    finetune_accuracy,
    mean_vectors,
    probe_accuracy,
)
from lmcourse.tokenize import WordPieceTokenizer

_TOK = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog", "sat", "ran",
                           "stock", "fell", "rose", "market", "."])


def test_corpus_sentences_labels_and_lengths():
    items = corpus_sentences("valid", min_words=8, max_words=40)
    assert {y for _, y in items} == {0, 1}
    assert all(8 <= len(s.split()) <= 40 for s, _ in items)


def test_draw_labels_balanced_and_seeded():
    items = [(f"s{i}", i % 2) for i in range(20)]
    a = draw_labels(items, 3, seed=1)
    assert sorted(y for _, y in a) == [0, 0, 0, 1, 1, 1]
    assert a == draw_labels(items, 3, seed=1) and a != draw_labels(items, 3, seed=2)
    with pytest.raises(ValueError, match="per_class"):
        draw_labels(items, 11, seed=0)


def test_finetune_leaves_encoder_untouched_and_probes_work():
    train = [("the cat sat .", 0), ("the dog ran .", 0), ("the stock fell .", 1), ("the market rose .", 1)] * 2
    torch.manual_seed(0)
    enc = BertModel(BertConfig(vocab_size=len(_TOK), d_model=16, num_layers=1, num_heads=2, d_ff=32, max_len=16))
    before = {k: v.clone() for k, v in enc.state_dict().items()}
    test_b = task_batches(_TOK, "single", train, batch_size=8, max_length=16, shuffle=False)(0)
    acc = finetune_accuracy(enc, _TOK, train, test_b, steps=30, lr=1e-2, seed=0, max_length=16)
    assert acc == 1.0
    assert all(torch.equal(before[k], v) for k, v in enc.state_dict().items())
    x = mean_vectors(enc, _TOK, [s for s, _ in train], max_length=16)
    assert x.shape == (8, 16)
    assert 0.0 <= probe_accuracy(x, [y for _, y in train], x, [y for _, y in train]) <= 1.0
    assert bag_of_words_accuracy(train, train) == 1.0
