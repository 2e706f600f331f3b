"""Checks for chapter 9 (BERT)."""
from lmcourse.bert import BertConfig, count_parameters

__all__ = ["wordpiece_split", "bert_parameters", "whole_word_groups", "sop_pairs"]

_VOCAB = {"un", "##aff", "##able", "play", "##ing", "##s", "p", "##l", "##a", "##y", "a", "##ff",
          "##b", "##le", "plays", "bank", "##er", "##ers"}


def wordpiece_split(candidate) -> int:
    """``candidate(word, vocab) -> list of pieces``: greedy longest-match-first, ``[UNK]`` if stuck."""
    cases = [("unaffable", ["un", "##aff", "##able"]),
             ("playing", ["play", "##ing"]),
             ("plays", ["plays"]),             # the longest match, not play + ##s
             ("bankers", ["bank", "##ers"]),
             ("play", ["play"]),
             ("xyz", ["[UNK]"]),               # no piece starts the word
             ("playz", ["[UNK]"])]             # stuck half-way: the whole word is unknown
    for word, expected in cases:
        got = candidate(word, set(_VOCAB))
        assert list(got) == expected, (f"for {word!r} expected {expected}, got {got}"
                                       + (" (a word that cannot be covered becomes ['[UNK]'] as a whole)"
                                          if expected == ["[UNK]"] else ""))
    return len(cases)


def bert_parameters(candidate) -> int:
    """``candidate(V, H, L, d_ff, P, S) -> int``: all parameters of a BertModel with biases and pooler."""
    configs = [BertConfig(), BertConfig(d_model=1024, num_layers=24, num_heads=16, d_ff=4096),
               BertConfig(vocab_size=1000, d_model=64, num_layers=2, num_heads=4, d_ff=256, max_len=128)]
    for c in configs:
        expected = count_parameters(c)["bert_model"]
        got = candidate(c.vocab_size, c.d_model, c.num_layers, c.d_ff, c.max_len, c.num_segments)
        hint = ""
        if got == count_parameters(c)["without_biases"]:
            hint = " (you left out the linear biases and the pooler)"
        assert got == expected, (f"for V={c.vocab_size}, H={c.d_model}, L={c.num_layers}, "
                                 f"d_ff={c.d_ff} expected {expected:,}, got {got:,}{hint}")
    return len(configs)


def whole_word_groups(candidate) -> int:
    """``candidate(pieces) -> list of word numbers``: a ``##`` piece belongs to the word before it,
    special tokens (``[CLS]``, ``[SEP]``, ``[PAD]``) to no word (-1); words are numbered from 0."""
    cases = [(["play", "##ing"], [0, 0]),
             (["[CLS]", "the", "una", "##ffa", "##ble", "bankers", "[SEP]"], [-1, 0, 1, 1, 1, 2, -1]),
             (["[CLS]", "new", "york", "[SEP]", "city", "[SEP]", "[PAD]"], [-1, 0, 1, -1, 2, -1, -1]),
             (["[CLS]", "[MASK]", "##s", "are", "fun"], [-1, 0, 0, 1, 2])]   # [MASK] stands for a piece
    for pieces, expected in cases:
        got = candidate(list(pieces))
        assert list(got) == expected, (f"for {pieces} expected {expected}, got {got}"
                                       + (" ([MASK] replaces a word piece, so it starts or continues a word)"
                                          if "[MASK]" in pieces else ""))
    return len(cases)


def sop_pairs(candidate) -> int:
    """``candidate(sentences, seed) -> [(A, B, label)]``: one pair for every two consecutive sentences,
    in document order; label 1 keeps their order (A is the earlier one), label 0 swaps them; each
    order with probability 1/2, drawn from ``seed``."""
    doc = [f"sentence {i} ." for i in range(201)]
    for sentences in (doc[:3], doc):
        got = list(candidate(list(sentences), 0))
        assert len(got) == len(sentences) - 1, (f"{len(sentences)} sentences have {len(sentences) - 1} "
                                                f"consecutive pairs, got {len(got)} pairs")
        for i, (a, b, label) in enumerate(got):
            first, second = sentences[i], sentences[i + 1]
            expected = (first, second) if label == 1 else (second, first)
            assert label in (0, 1) and (a, b) == expected, (
                f"pair {i} should be ({first!r}, {second!r}) with label 1 or ({second!r}, {first!r}) with "
                f"label 0, got ({a!r}, {b!r}, {label!r})")
    swapped = sum(label == 0 for *_, label in candidate(list(doc), 0)) / (len(doc) - 1)
    assert 0.35 < swapped < 0.65, f"about half of the pairs should be swapped, got a share of {swapped:.2f}"
    assert list(candidate(list(doc), 1)) == list(candidate(list(doc), 1)), "the same seed must give the same pairs"
    assert list(candidate(["one sentence ."], 0)) == [], "a one-sentence document has no pairs"
    return 4
