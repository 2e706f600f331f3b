"""Word vectors as a first layer: tables, encoding, the mean-of-vectors classifier, splits, baselines."""
import numpy as np
import pytest
import torch

from lmcourse.embedding_transfer import (
    MeanEmbeddingClassifier,
    bag_of_words_accuracy,
    encode,
    pretrained_table,
    random_table,
    stratified_split,
    train_and_score,
)
from lmcourse.similarity import WordVectors

WORDS = ["good", "great", "bad", "awful", "film", "the"]
SENTENCES = [["good", "film"], ["great", "film"], ["the", "good", "film"], ["bad", "film"], ["awful", "film"],
             ["the", "bad", "film"]] * 4
LABELS = torch.tensor([1, 1, 1, 0, 0, 0] * 4)


def test_pretrained_rows_are_unit_vectors_and_the_rest_falls_back():
    fallback = random_table(len(WORDS), 3, seed=0)
    torch.testing.assert_close(fallback.norm(dim=1), torch.ones(len(WORDS)))
    vectors = WordVectors(np.array([[3.0, 0, 0], [0, 2.0, 0]]), ["good", "film"])
    table, coverage = pretrained_table(WORDS, vectors, fallback)
    assert coverage == pytest.approx(2 / 6)
    torch.testing.assert_close(table[0], torch.tensor([1.0, 0, 0]))
    torch.testing.assert_close(table[4], torch.tensor([0, 1.0, 0]))
    torch.testing.assert_close(table[[1, 2, 3, 5]], fallback[[1, 2, 3, 5]])
    with pytest.raises(ValueError, match="fallback"):
        pretrained_table(WORDS, vectors, fallback[:3])


def test_encode_pads_and_masks():
    ids, mask = encode([["good", "film"], ["the"]], WORDS)
    assert ids.tolist() == [[0, 4], [5, 0]] and mask.tolist() == [[True, True], [True, False]]
    with pytest.raises(ValueError, match="missing"):
        encode([["boring"]], WORDS)
    with pytest.raises(ValueError, match="sentences"):
        encode([], WORDS)


def test_classifier_averages_the_masked_rows():
    table = torch.arange(12.0).view(6, 2)
    model = MeanEmbeddingClassifier(table)
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(2))
        model.linear.bias.zero_()
    ids, mask = encode([["good", "film"], ["the"]], WORDS)
    torch.testing.assert_close(model(ids, mask), torch.stack([(table[0] + table[4]) / 2, table[5]]))
    with pytest.raises(ValueError, match="table"):
        MeanEmbeddingClassifier(torch.zeros(3))


@pytest.mark.parametrize("strategy", ["frozen", "fine-tuned"])
def test_training_learns_a_separable_task(strategy):
    ids, mask = encode(SENTENCES, WORDS)
    table = random_table(len(WORDS), 4, seed=1)
    train, test = stratified_split(LABELS, 0.25, seed=0)
    accuracy, losses = train_and_score(table, ids, mask, LABELS, train, test, strategy=strategy, epochs=200,
                                       weight_decay=0.0)
    assert accuracy == 1.0 and losses[-1] < losses[0]
    with pytest.raises(ValueError, match="strategy"):
        train_and_score(table, ids, mask, LABELS, train, test, strategy="scratch")


def test_frozen_keeps_the_table_and_fine_tuning_changes_it():
    table = random_table(len(WORDS), 4, seed=2)
    frozen = MeanEmbeddingClassifier(table, freeze=True)
    tuned = MeanEmbeddingClassifier(table, freeze=False)
    assert not frozen.embed.weight.requires_grad and tuned.embed.weight.requires_grad


def test_stratified_split_keeps_the_classes_balanced_and_disjoint():
    train, test = stratified_split(LABELS, 0.25, seed=3)
    assert len(set(train.tolist()) & set(test.tolist())) == 0 and len(train) + len(test) == len(LABELS)
    assert LABELS[test].sum().item() == len(test) / 2
    with pytest.raises(ValueError, match="test_share"):
        stratified_split(LABELS, 0.0, seed=0)


def test_bag_of_words_learns_the_toy_task():
    train, test = stratified_split(LABELS, 0.25, seed=0)
    assert bag_of_words_accuracy(SENTENCES, LABELS.tolist(), train.tolist(), test.tolist()) == 1.0
