"""The biLM, the scalar mix and the tagging task."""
import pytest
import torch

from lmcourse.elmo import (
    BiLM,
    ScalarMix,
    TokenTagger,
    bilm_loss,
    capitalisation_task,
    cosine,
    reverse_padded,
    tagging_loss,
    tagging_scores,
    untrained_bilm,
)
from lmcourse.vocab import Vocab


def small_bilm(fast=True):
    torch.manual_seed(0)
    return BiLM(vocab_size=20, d_model=6, num_layers=2, fast=fast)


def test_reverse_padded_keeps_padding_at_the_end():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 6, 7]])
    out = reverse_padded(x, torch.tensor([3, 4]))
    assert out.tolist() == [[3, 2, 1, 0], [7, 6, 5, 4]]
    assert torch.equal(reverse_padded(out, torch.tensor([3, 4])), x)
    with pytest.raises(ValueError, match="lengths"):
        reverse_padded(x, torch.tensor([5, 1]))


def test_layers_shape_and_static_layer():
    model = small_bilm()
    ids = torch.randint(20, (3, 7))
    layers = model.layers(ids)
    assert layers.shape == (3, 3, 7, 12)
    emb = model.embedding(ids)
    torch.testing.assert_close(layers[0], torch.cat([emb, emb], -1))
    fwd, bwd = model(ids)
    assert fwd.shape == bwd.shape == (3, 7, 20)


def test_directions_see_only_their_side():
    model = small_bilm()
    a = torch.tensor([[1, 2, 3, 4, 5, 6]])
    b = a.clone()
    b[0, 5] = 9                                  # change the last token only
    la, lb = model.layers(a), model.layers(b)
    d = model.d_model
    # forward states before position 5 ignore the change; backward states see it everywhere
    torch.testing.assert_close(la[1:, 0, :5, :d], lb[1:, 0, :5, :d])
    assert not torch.allclose(la[2, 0, 0, d:], lb[2, 0, 0, d:])
    c = a.clone()
    c[0, 0] = 9                                  # change the first token only
    lc = model.layers(c)
    torch.testing.assert_close(la[1:, 0, 1:, d:], lc[1:, 0, 1:, d:])


def test_padding_does_not_change_real_positions():
    model = small_bilm()
    ids = torch.tensor([[3, 4, 5, 6]])
    padded = torch.tensor([[3, 4, 5, 6, 0, 0], [1, 2, 3, 4, 5, 6]])
    single = model.layers(ids)
    batch = model.layers(padded, torch.tensor([4, 6]))
    torch.testing.assert_close(batch[:, 0, :4], single[:, 0], rtol=1e-5, atol=1e-6)


def test_fast_and_explicit_bilm_agree_and_loss_is_average_of_directions():
    fast, slow = small_bilm(True), small_bilm(False)
    slow.load_state_dict(fast.state_dict())
    ids = torch.randint(20, (2, 5))
    torch.testing.assert_close(fast.layers(ids), slow.layers(ids), rtol=1e-5, atol=1e-6)
    fwd, bwd = fast(ids)
    f = (torch.nn.functional.cross_entropy(fwd[0, :-1], ids[0, 1:])
         + torch.nn.functional.cross_entropy(bwd[1, 1:], ids[1, :-1]))
    loss = bilm_loss(fast, ids)
    assert loss.ndim == 0 and 0 < loss.item() < 10 and f.item() > 0
    with pytest.raises(ValueError, match="time >= 2"):
        bilm_loss(fast, torch.zeros(2, 1, dtype=torch.long))


def test_scalar_mix_formula_and_gradients():
    mix = ScalarMix(3)
    layers = torch.randn(3, 2, 4, 5)
    torch.testing.assert_close(mix(layers), layers.mean(0))     # s = 0, gamma = 1: the mean
    with torch.no_grad():
        mix.scalars.copy_(torch.tensor([1.0, 0.0, -1.0]))
        mix.gamma.fill_(2.0)
    w = torch.softmax(torch.tensor([1.0, 0.0, -1.0]), 0)
    torch.testing.assert_close(mix(layers), 2.0 * (w[:, None, None, None] * layers).sum(0))
    assert mix.weights().sum().item() == pytest.approx(1.0)
    mix(layers).sum().backward()
    assert mix.scalars.grad is not None and mix.gamma.grad is not None
    normed = ScalarMix(3, layer_norm=True)(layers * 100)
    assert normed.abs().max() < 10
    with pytest.raises(ValueError, match="stack 3 layers"):
        mix(torch.randn(2, 4))


def test_capitalisation_task_labels():
    vocab = Vocab("the bank of england said . mr smith".split())
    ids, labels, lengths = capitalisation_task(["The Bank of England said. Mr Smith said the bank"], vocab, chunk=5)
    assert lengths.tolist() == [5, 5, 1]
    flat = labels[labels != -100].tolist()
    # The(start) Bank England said . Mr(after '.') Smith said the bank
    assert flat == [0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0]
    assert ids[2, 1].item() == vocab.pad_id


def test_tagger_freezing_and_training_step():
    model = small_bilm()
    frozen = TokenTagger(model, 2, hidden_size=None)
    assert all(not p.requires_grad for p in model.parameters())
    assert sum(p.numel() for p in frozen.parameters() if p.requires_grad) == 3 + 1 + 12 * 2 + 2
    mlp = TokenTagger(model, 2, hidden_size=5)
    assert sum(p.numel() for p in mlp.parameters() if p.requires_grad) == 3 + 1 + 12 * 5 + 5 + 5 * 2 + 2
    ids = torch.randint(20, (4, 6))
    labels = torch.randint(2, (4, 6))
    lengths = torch.tensor([6, 6, 5, 3])
    labels[2, 5:] = -100
    labels[3, 3:] = -100
    loss = tagging_loss(frozen, (ids, labels, lengths))
    loss.backward()
    assert frozen.mix.scalars.grad is not None
    layers = model.layers(ids, lengths).detach()
    torch.testing.assert_close(frozen(ids, lengths, layers), frozen(ids, lengths))
    scores = tagging_scores(frozen, (ids, labels, lengths))
    assert set(scores) == {"accuracy", "precision", "recall", "f1"} and 0 <= scores["accuracy"] <= 1
    tuned = TokenTagger(small_bilm(), 2, freeze=False)
    with pytest.raises(ValueError, match="frozen"):
        tuned(ids, lengths, layers)
    with pytest.raises(ValueError, match="layer"):
        TokenTagger(small_bilm(), 2, layer=3)


def test_cosine_and_bad_inputs():
    assert cosine(torch.tensor([1.0, 0.0]), torch.tensor([2.0, 0.0])) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        cosine(torch.zeros(2), torch.ones(2))
    with pytest.raises(ValueError, match="ids must be"):
        small_bilm().layers(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="d_model"):
        BiLM(10, d_model=0)


def test_exercise_check():
    from lmcourse.exercises import check

    def good(layers, s, gamma):
        return gamma * (torch.softmax(s, 0).view(-1, *[1] * (layers.dim() - 1)) * layers).sum(0)

    def no_softmax(layers, s, gamma):
        return gamma * (s.view(-1, *[1] * (layers.dim() - 1)) * layers).sum(0)

    assert check("ch05-scalar-mix", good) == "ch05-scalar-mix: all 3 checks passed"
    with pytest.raises(AssertionError, match="softmax"):
        check("ch05-scalar-mix", no_softmax)


def test_tagger_layer_norm_and_token_layer():
    model = small_bilm()
    ids = torch.randint(20, (2, 5))
    layers = model.layers(ids).detach() * 50
    both = TokenTagger(model, 2, layer_norm=True, with_token_layer=True, hidden_size=None)
    assert both.head.in_features == 4 * model.d_model
    assert both(ids, None, layers).shape == (2, 5, 2)
    single = TokenTagger(model, 2, layer=1, layer_norm=True, hidden_size=None)
    with torch.no_grad():
        single.head.weight.fill_(1.0)
        single.head.bias.zero_()
    torch.testing.assert_close(single(ids, None, layers), single(ids, None, layers / 50), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="with_token_layer"):
        TokenTagger(model, 2, layer=0, with_token_layer=True)


def test_occurrences_keep_the_word_in_the_middle():
    from lmcourse.elmo import occurrence_positions, occurrences
    vocab = Vocab("a b c us told the . said".split())
    docs = [["a", "b", "told", "us", "c", "a", "."], ["a", "the", "US", "said", "b", "c"], ["US", "a", "b"],
            [".", "Us", "b", "c", "a"]]
    ids, capital, windows = occurrences(docs, "us", vocab, half_width=2)
    assert ids.shape == (2, 5) and capital.tolist() == [False, True]
    assert [w[2] for w in windows] == ["us", "US"]              # the word sits in the middle
    assert ids[1, 2].item() == vocab["us"]
    assert occurrence_positions(docs, "us", half_width=2) == [(0, 3), (1, 2)]   # (document, token), same order
    with pytest.raises(ValueError, match="does not occur"):
        occurrences(docs, "zebra", vocab)
    with pytest.raises(TypeError, match="tokenize"):
        occurrences(["a us b"], "us", vocab)


def test_char_cnn_gives_every_string_a_vector():
    from lmcourse.elmo import CharCNN
    torch.manual_seed(0)
    cnn = CharCNN(out_dim=8, max_chars=10)
    ids = cnn.encode(["bank", "bnak", "überlongwordthatgetscut"])
    assert ids.shape == (3, 10) and ids[0, 4:].eq(0).all() and ids[2].ne(0).all()
    out = cnn(ids)
    assert out.shape == (3, 8) and torch.isfinite(out).all()
    out.sum().backward()
    assert cnn.chars.weight.grad is not None
    with pytest.raises(ValueError, match="words"):
        cnn.encode([])


def test_untrained_bilm_keeps_the_word_table_and_redraws_the_rest():
    bilm = small_bilm()
    fresh, again = untrained_bilm(bilm, seed=3), untrained_bilm(bilm, seed=3)
    assert (fresh.vocab_size, fresh.d_model, fresh.num_layers) == (20, 6, 2)
    assert torch.equal(fresh.embedding.weight, bilm.embedding.weight)
    assert fresh.embedding.weight.data_ptr() != bilm.embedding.weight.data_ptr()      # a copy, not shared
    assert not torch.equal(fresh.softmax.weight, bilm.softmax.weight)
    for name, p in fresh.state_dict().items():                                         # the seed fixes the draw
        assert torch.equal(p, again.state_dict()[name]), name
    other = untrained_bilm(bilm, seed=4)
    assert not torch.equal(other.forward_lstm[0].state_dict()["cells.0.weight_ih"],
                           fresh.forward_lstm[0].state_dict()["cells.0.weight_ih"])
    with pytest.raises(TypeError, match="bilm"):
        untrained_bilm(torch.nn.Linear(2, 2), seed=0)
    with pytest.raises(ValueError, match="seed"):
        untrained_bilm(bilm, seed=-1)
