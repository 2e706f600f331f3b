import pytest
import torch

from lmcourse.context_probe import (
    balanced_accuracy,
    fold_moves,
    group_folds,
    mean_se,
    naive_bayes_predict,
    paired_p_value,
    probe_folds,
    robust_verdict,
    sense_labels,
)


def test_group_folds_keep_groups_whole_and_give_every_fold_both_classes():
    groups = torch.arange(40) // 2                               # 20 groups of 2
    labels = (torch.arange(40) % 8 < 2).long()                   # a rarer class 1
    fold = group_folds(groups, labels, folds=4, seed=0)
    for g in groups.unique():
        assert fold[groups == g].unique().numel() == 1           # a group never straddles two folds
    for f in range(4):
        assert set(labels[fold == f].tolist()) == {0, 1}
    with pytest.raises(ValueError, match="too many"):
        group_folds(groups, labels, folds=20)
    with pytest.raises(ValueError, match="groups and labels"):
        group_folds(groups, labels[:5])


def test_balanced_accuracy_gives_a_constant_answer_one_half():
    labels = torch.tensor([0] * 9 + [1])
    assert balanced_accuracy(torch.zeros(10, dtype=torch.long), labels) == 0.5
    assert balanced_accuracy(labels, labels) == 1.0


def test_probe_folds_separates_separable_vectors_and_reads_discrete_words():
    g = torch.Generator().manual_seed(0)
    labels = torch.cat([torch.zeros(30), torch.ones(12)]).long()
    groups = torch.arange(42)
    fold = group_folds(groups, labels, folds=3, seed=0)
    words = torch.where(labels.bool(), 5, 7)[:, None]           # the 'previous word' gives the label away
    acc = probe_folds({"static": torch.ones(42, 4), "contextual": torch.randn(42, 4, generator=g) + 3 * labels[:, None],
                       "previous word": words}, labels, fold, num_tokens=10)
    assert acc["static"].shape == (3,) and torch.allclose(acc["static"], torch.full((3,), 0.5))
    assert acc["contextual"].mean() > 0.9 and acc["previous word"].mean() == 1.0
    with pytest.raises(ValueError, match="num_tokens"):
        probe_folds({"previous word": words}, labels, fold)
    with pytest.raises(ValueError, match="features"):
        probe_folds({"short": torch.ones(5, 2)}, labels, fold)


def test_naive_bayes_uses_equal_priors():
    train = torch.tensor([[1]] * 9 + [[2]])                      # class 0 common, class 1 rare
    labels = torch.tensor([0] * 9 + [1])
    assert naive_bayes_predict(train, labels, torch.tensor([[2], [1]]), num_tokens=3).tolist() == [1, 0]


def test_mean_se():
    m, se = mean_se([1.0, 2.0, 3.0])
    assert m == 2.0 and se == pytest.approx(1 / 3 ** 0.5)
    with pytest.raises(ValueError, match="values"):
        mean_se([1.0])


def test_paired_p_value_matches_scipys_paired_t_test():
    from scipy.stats import ttest_rel
    a, b = [0.71, 0.69, 0.74, 0.70, 0.72], [0.66, 0.67, 0.70, 0.63, 0.69]
    m, se = mean_se([x - y for x, y in zip(a, b)])
    assert paired_p_value(m, se, n=5) == pytest.approx(ttest_rel(a, b).pvalue, rel=1e-9)
    assert paired_p_value(2.0, 1.0, n=5) == pytest.approx(0.1161, abs=1e-4)       # t = 2 on 4 degrees of freedom
    assert paired_p_value(-2.0, 1.0, n=5) == paired_p_value(2.0, 1.0, n=5)   # two-sided
    with pytest.raises(ValueError, match="se"):
        paired_p_value(0.1, 0.0, n=5)
    with pytest.raises(ValueError, match="n"):
        paired_p_value(0.1, 0.05, n=1)


def test_encoder_word_vectors_pick_the_first_piece_of_the_word_and_ignore_padding():
    from lmcourse.bert import BertConfig, BertModel
    from lmcourse.context_probe import encoder_word_vectors
    from lmcourse.tokenize import WordPieceTokenizer
    tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "us", "##s", "may"])
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(tok), d_model=8, num_layers=2, num_heads=2, d_ff=16, max_len=16,
                                 dropout=0.0)).eval()
    windows = [["a", "US", "b"], ["bs", "us", "a"]]                # 'bs' is two pieces: the word sits at piece 3
    out = encoder_word_vectors(model, tok, windows, position=1, batch_size=1)
    assert out.shape == (3, 2, 8)
    for k, pieces in enumerate([["a", "us", "b"], ["b", "##s", "us", "a"]]):
        ids = torch.tensor([[tok.cls_id] + tok.convert_tokens_to_ids(pieces) + [tok.sep_id]])
        alone = torch.stack(model(ids, output_hidden_states=True).hidden_states)[:, 0, 1 + pieces.index("us")]
        assert torch.allclose(out[:, k], alone, atol=1e-5)       # batched with padding = run alone
    assert torch.allclose(encoder_word_vectors(model, tok, windows, position=1), out, atol=1e-5)
    with pytest.raises(ValueError, match="position"):
        encoder_word_vectors(model, tok, windows, position=3)


def test_sense_labels_still_point_at_their_word():
    from lmcourse.pretrain import pretraining_text
    from lmcourse.tokenize import word_tokenize

    positions, labels, senses = sense_labels("power")
    assert senses == ("authority", "electricity") and set(labels.tolist()) == {0, 1}
    docs = [text for split in ("train", "valid", "test") for text in pretraining_text(split)]
    tokens = {d: word_tokenize(docs[d], lowercase=False) for d in positions[:, 0].unique().tolist()}
    assert all(tokens[d][k].lower() == "power" for d, k in positions.tolist())
    assert len(set(map(tuple, positions.tolist()))) == len(positions)          # no occurrence labelled twice
    with pytest.raises(ValueError, match="word"):
        sense_labels("no-such-word")


def test_fold_moves_are_half_over_the_rarer_class_count():
    labels = torch.tensor([1, 0, 0, 1, 1, 0, 0, 0])
    fold = torch.tensor([0, 0, 0, 1, 1, 1, 1, 1])
    assert fold_moves(labels, fold).tolist() == [0.5, 0.25]                   # rarer counts 1 and 2
    with pytest.raises(ValueError, match="both classes"):
        fold_moves(torch.tensor([1, 1, 0, 0]), torch.tensor([0, 0, 1, 1]))


def test_robust_verdict_keeps_only_what_every_change_of_two_occurrences_keeps():
    clear = torch.tensor([0.30, 0.31, 0.29, 0.30, 0.32])
    assert robust_verdict(clear, torch.full((5,), 0.001))[0] == "ahead"
    assert robust_verdict(-clear, torch.full((5,), 0.001))[0] == "behind"
    assert robust_verdict(clear, torch.full((5,), 0.3))[0] == "unresolved"    # two big moves can overturn it
    noise = torch.tensor([0.01, -0.02, 0.015, -0.01, 0.0])
    verdict, worst = robust_verdict(noise, torch.full((5,), 0.001))
    assert verdict == "within" and worst > 0
    near = torch.tensor([0.10, 0.02, 0.06, 0.03, 0.09])                        # just past twice its SE
    m, two_se = near.mean().item(), 2 * near.std().item() / 5 ** 0.5
    assert m - two_se > 0 and robust_verdict(near, torch.zeros(5), flips=0)[0] == "ahead"
    assert robust_verdict(near, torch.full((5,), 0.03))[0] == "unresolved"
    assert robust_verdict(near, torch.full((5,), 0.03))[1] == pytest.approx(m - two_se)
    with pytest.raises(ValueError, match="diffs"):
        robust_verdict(clear, torch.ones(4))
    with pytest.raises(ValueError, match="flips"):
        robust_verdict(clear, torch.ones(5), flips=-1)
