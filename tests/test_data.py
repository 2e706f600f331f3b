"""Offline corpora, benchmarks and batching."""
import pytest
import torch

from lmcourse.data import (analogy_questions, gensim_data_path, lm_batches, news_documents,
                           polarity_sentences, random_windows, simlex999, toy_corpus,
                           toy_corpus_names, train_test_split, wordsim353)


def test_news_split_is_fixed_disjoint_and_complete():
    splits = {s: news_documents(s) for s in ("train", "valid", "test")}
    assert [len(splits[s]) for s in ("train", "valid", "test")] == [239, 30, 30]
    everything = news_documents("all")
    assert len(everything) == 300
    assert set(sum(splits.values(), [])) < set(everything)
    assert news_documents("valid") == splits["valid"]  # deterministic


def test_news_split_rejects_unknown_split():
    with pytest.raises(ValueError, match="split must be one of"):
        news_documents("dev")


def test_polarity_sentences_are_balanced_and_decoded():
    data = polarity_sentences()
    assert len(data) == 200
    assert sum(label for _, label in data) == 100
    assert all(isinstance(t, str) and t for t, _ in data)
    assert any("—" in t for t, _ in data)  # Windows-1252 em dash decoded


def test_benchmarks_have_their_published_sizes():
    assert len(wordsim353()) == 353
    assert len(simlex999()) == 999
    questions = analogy_questions()
    assert len(questions) == 19544
    assert questions[0] == ("capital-common-countries", "athens", "greece", "baghdad", "iraq")
    assert all(w == w.lower() for pair in wordsim353() for w in pair[:2])


def test_gensim_data_path_reports_missing_files():
    with pytest.raises(FileNotFoundError, match="not in gensim"):
        gensim_data_path("no_such_file.txt")
    with pytest.raises(TypeError, match="name"):
        gensim_data_path(3)


def test_toy_corpus():
    assert "bank" in toy_corpus_names()
    bank = toy_corpus("bank")
    assert len(bank) == 6 and all("bank" in s for s in bank)
    with pytest.raises(ValueError, match="name must be one of"):
        toy_corpus("nope")


def test_lm_batches_shift_targets_and_continue_rows():
    ids = torch.arange(26)
    batches = lm_batches(ids, batch_size=2, seq_len=5)
    x0, y0 = batches[0]
    assert x0.tolist() == [[0, 1, 2, 3, 4], [13, 14, 15, 16, 17]]
    assert y0.tolist() == [[1, 2, 3, 4, 5], [14, 15, 16, 17, 18]]
    x1, _ = batches[1]
    assert x1[:, 0].tolist() == [5, 18]  # row b continues the same text
    assert all(torch.equal(x[:, 1:], y[:, :-1]) for x, y in batches)
    assert batches[-1][1][0, -1].item() == 12  # the last target of row 0 is its last token


def test_lm_batches_validation():
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        lm_batches(torch.arange(10), 0, 2)
    with pytest.raises(ValueError, match="too few"):
        lm_batches(torch.arange(3), 2, 2)
    with pytest.raises(ValueError, match="one-dimensional"):
        lm_batches(torch.zeros(2, 3, dtype=torch.long), 1, 2)


def test_random_windows():
    ids = torch.arange(100)
    x, y = random_windows(ids, 4, 8, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8)
    assert torch.equal(y, x + 1)
    with pytest.raises(ValueError, match="longer than seq_len"):
        random_windows(torch.arange(5), 1, 5)


def test_train_test_split():
    train, test = train_test_split(list(range(10)), 0.3, seed=1)
    assert len(test) == 3 and sorted(train + test) == list(range(10))
    assert train_test_split(list(range(10)), 0.3, seed=1) == (train, test)
    with pytest.raises(ValueError, match="test_fraction"):
        train_test_split([1, 2], 1.0)
    with pytest.raises(ValueError, match="items must not be empty"):
        train_test_split([], 0.5)
