"""Byte-level BPE: training, encoding, the byte fallback, and parity with GPT-2's tokenizer."""
import json
from collections import Counter

import pytest

from lmcourse.bpe import END_OF_TEXT, PRETOKENIZE, BPETokenizer, merge_pair, pretokenize

CORPUS = ["the cat sat on the mat", "the cat ate the rat", "a fat cat, a flat mat!",
          "That's the cat's 22 hats;  they'll   fit."]


def naive_train(texts, num_merges):
    """Textbook BPE: recount every pair after every merge (slow, obviously right)."""
    words = Counter(tuple(chunk.encode("utf-8")) for t in texts for chunk in pretokenize(t))
    merges = []
    for i in range(num_merges):
        pairs = Counter()
        for word, c in words.items():
            for p in zip(word, word[1:]):
                pairs[p] += c
        if not pairs or max(pairs.values()) < 2:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        words = Counter({tuple(merge_pair(list(w), best, 256 + i)): c for w, c in words.items()})
    return merges


def test_pretokenize_keeps_leading_spaces_and_splits_symbols():
    assert pretokenize("The bank's rate rose 4.5%.") == [
        "The", " bank", "'s", " rate", " rose", " 4", ".", "5", "%."]
    assert "".join(pretokenize("a  b\n\nc ")) == "a  b\n\nc "


def test_pretokenize_matches_gpt2_pattern():
    regex = pytest.importorskip("regex")
    gpt2 = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    for text in CORPUS + ["Café naïve x_y__z  42nd\tstreet's   end ", "He said: 'we'll see'..."]:
        assert PRETOKENIZE.findall(text) == gpt2.findall(text)


def test_merge_pair_is_left_to_right_and_non_overlapping():
    assert merge_pair([5, 5, 5], (5, 5), 9) == [9, 5]
    assert merge_pair([1, 2, 3, 1, 2], (1, 2), 7) == [7, 3, 7]


def test_training_matches_naive_recount():
    tok = BPETokenizer.train(CORPUS, vocab_size=256 + 30 + 1)
    assert tok.merges == naive_train(CORPUS, 30)[:len(tok.merges)]
    assert len(tok.merges) == len(naive_train(CORPUS, 30))


def test_training_on_news_is_deterministic_and_sized():
    from lmcourse.data import news_documents
    docs = news_documents("valid")
    a = BPETokenizer.train(docs, vocab_size=400)
    b = BPETokenizer.train(docs, vocab_size=400)
    assert a.merges == b.merges and len(a) == 400
    assert a.token_str(256) in (" t", "th", " the", "he", "e ", "in")


def test_round_trip_and_byte_fallback():
    tok = BPETokenizer.train(CORPUS, vocab_size=300)
    for text in CORPUS + ["naïve 北京 🙂 café", ""]:
        assert tok.decode(tok.encode(text)) == text
    ids = tok.encode("北")                         # never seen: three UTF-8 bytes, one token each
    assert ids == list("北".encode())
    assert tok.token_str(ids[0]) == "\\xe5"
    assert tok.decode(ids[:1]) == "\ufffd"         # half a character decodes to U+FFFD
    assert len(tok.encode("the cat")) < len("the cat")


def test_special_tokens():
    tok = BPETokenizer.train(CORPUS, vocab_size=280, specials=(END_OF_TEXT, "<start>"))
    assert tok.special_id("<start>") == len(tok) - 1
    assert tok.decode([tok.special_id(END_OF_TEXT)]) == END_OF_TEXT
    assert tok.special_id(END_OF_TEXT) not in tok.encode("<|endoftext|>")   # text is never special
    with pytest.raises(KeyError, match="not a special token"):
        tok.special_id("<mask>")


def test_bad_inputs():
    with pytest.raises(ValueError, match="vocab_size must be >= 257"):
        BPETokenizer.train(CORPUS, vocab_size=100)
    with pytest.raises(ValueError, match="texts must not be empty"):
        BPETokenizer.train([], vocab_size=300)
    with pytest.raises(ValueError, match="refers to an id"):
        BPETokenizer([(300, 1)])
    with pytest.raises(ValueError, match="specials must be distinct"):
        BPETokenizer([], specials=("a", "a"))
    tok = BPETokenizer([])
    with pytest.raises(TypeError, match="text must be str"):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match=r"ids must be ints in \[0, 257\)"):
        tok.decode([257])


def _bytes_to_unicode():
    """GPT-2's printable stand-in for each byte (in its vocab.json and merges.txt files)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def test_encoding_matches_transformers_gpt2_tokenizer(tmp_path):
    """Our merges written in GPT-2's file format give the same ids in transformers' GPT2Tokenizer."""
    transformers = pytest.importorskip("transformers")
    from lmcourse.data import news_documents
    docs = news_documents("valid")
    tok = BPETokenizer.train(docs, vocab_size=600)
    b2u = _bytes_to_unicode()
    show = [("".join(b2u[b] for b in t)) for t in tok.token_bytes]
    (tmp_path / "vocab.json").write_text(json.dumps({s: i for i, s in enumerate(show)}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n" + "".join(
        f"{show[a]} {show[b]}\n" for a, b in tok.merges))
    hf = transformers.GPT2Tokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    for text in docs[:5] + ["Unseen: naïve café, 北京!"]:
        assert tok.encode(text) == hf.encode(text)
