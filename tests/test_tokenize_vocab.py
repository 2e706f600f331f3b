"""Word and character tokenizers, vocabularies."""
import pytest
import torch

from lmcourse.tokenize import char_tokenize, word_tokenize
from lmcourse.vocab import PAD, UNK, Vocab, char_vocab


def test_word_tokenize():
    assert word_tokenize("The U.S. bank's rate, 4.5%!") == [
        "the", "u.s", ".", "bank's", "rate", ",", "4.5", "%", "!"]
    assert word_tokenize("Well-known", lowercase=False) == ["Well-known"]
    assert word_tokenize("") == []
    with pytest.raises(TypeError, match="text must be str"):
        word_tokenize(["a"])


def test_char_tokenize():
    assert char_tokenize("a b") == ["a", " ", "b"]


def test_vocab_orders_by_frequency_then_alphabet():
    v = Vocab("b a c a b a".split())
    assert v.itos == [PAD, UNK, "a", "b", "c"]
    assert v.pad_id == 0 and v.unk_id == 1
    assert v.encode(["a", "zzz"]) == [2, 1]
    assert v.decode(torch.tensor([2, 3])) == ["a", "b"]
    assert "a" in v and "zzz" not in v and len(v) == 5


def test_vocab_min_freq_and_max_size():
    tokens = "a a a b b c".split()
    assert Vocab(tokens, min_freq=2).itos == [PAD, UNK, "a", "b"]
    assert Vocab(tokens, max_size=1).itos == [PAD, UNK, "a"]


def test_vocab_bad_inputs():
    with pytest.raises(ValueError, match="tokens must not be empty"):
        Vocab([])
    with pytest.raises(ValueError, match="min_freq must be >= 1"):
        Vocab(["a"], min_freq=0)
    with pytest.raises(TypeError, match="not a str"):
        Vocab(["a"]).encode("a")
    with pytest.raises(ValueError, match="ids must be in"):
        Vocab(["a"]).decode([7])
    no_unk = Vocab(["a"], specials=(PAD,))
    assert no_unk["a"] == 1
    with pytest.raises(KeyError, match="no <unk>"):
        no_unk.encode(["b"])
    with pytest.raises(KeyError, match="no <unk>"):
        _ = no_unk.unk_id
    with pytest.raises(ValueError, match="specials must be distinct"):
        Vocab(["a"], specials=(PAD, PAD))


def test_vocab_from_texts_and_char_vocab():
    v = Vocab.from_texts([["x", "y"], ["y"]])
    assert v.itos[2:] == ["y", "x"]
    cv = char_vocab(["aab", "b "])
    assert set(cv.itos[2:]) == {"a", "b", " "}
    with pytest.raises(ValueError, match="texts must not be empty"):
        char_vocab([])
