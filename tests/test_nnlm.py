import math

import pytest
import torch
import torch.nn.functional as F

from lmcourse import set_seed
from lmcourse.ngram import BOS, EOS, NGramLM, lm_vocab
from lmcourse.nnlm import NNLM, context_windows, fit_until_valid_rises, nnlm_perplexity

CORPUS = [s.split() for s in ["a b a c", "b a b", "c a a b c", "a c b"]]


def test_forward_equals_bengio_formula_with_one_hot_matrices():
    set_seed(0)
    model = NNLM(vocab_size=7, context_size=3, embed_dim=4, hidden_dim=5, direct=True)
    context = torch.tensor([[1, 2, 3], [6, 0, 6]])
    one_hot = F.one_hot(context, 7).double()                                      # (B, n-1, V)
    x = (one_hot @ model.C.weight.double()).flatten(1)                            # one-hot x C = row of C
    H, d = model.H.weight.double(), model.H.bias.double()
    U, W, b = model.U.weight.double(), model.W.weight.double(), model.b.double()
    y = b + x @ W.T + torch.tanh(d + x @ H.T) @ U.T
    torch.testing.assert_close(model(context).double(), y, atol=1e-6, rtol=1e-6)


def test_without_direct_connection():
    model = NNLM(7, 2, 3, 4, direct=False)
    assert model.W is None
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == 7 * 3 + (2 * 3 * 4 + 4) + 4 * 7 + 7


def test_context_windows_score_the_same_tokens_as_the_ngram_model():
    vocab = lm_vocab(CORPUS)
    x, y = context_windows(CORPUS, vocab, context_size=2)
    ngram = NGramLM(3).fit(CORPUS, vocab=vocab)
    assert len(y) == sum(ngram.sentence_logprob(s)[1] for s in CORPUS)
    assert x[0].tolist() == [vocab[BOS], vocab[BOS]] and y[0].item() == vocab["a"]
    assert y[3].item() == vocab["c"] and y[4].item() == vocab[EOS]


def test_untrained_perplexity_is_near_vocabulary_size_and_training_lowers_it():
    set_seed(0)
    vocab = lm_vocab(CORPUS)
    x, y = context_windows(CORPUS, vocab, 2)
    model = NNLM(len(vocab), 2, 8, 16)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    assert nnlm_perplexity(model, x, y) == pytest.approx(len(vocab))
    set_seed(0)
    model = NNLM(len(vocab), 2, 8, 16)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(100):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    assert nnlm_perplexity(model, x, y) < 2.5
    assert nnlm_perplexity(model, x, y, batch_size=3) == pytest.approx(
        math.exp(F.cross_entropy(model(x), y).item()), rel=1e-5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="context_size"):
        NNLM(10, 0)
    with pytest.raises(ValueError, match="vocab_size"):
        NNLM(1, 2)
    with pytest.raises(ValueError, match="dropout"):
        NNLM(10, 2, dropout=1.5)
    with pytest.raises(ValueError, match="context must be"):
        NNLM(10, 2)(torch.zeros(4, 3, dtype=torch.long))
    vocab = lm_vocab(CORPUS)
    with pytest.raises(ValueError, match="sentences must not be empty"):
        context_windows([], vocab, 2)
    with pytest.raises(TypeError, match="lists of tokens"):
        context_windows(["a b"], vocab, 2)
    with pytest.raises(ValueError, match="equal length"):
        nnlm_perplexity(NNLM(len(vocab), 2), torch.zeros(3, 2, dtype=torch.long), torch.zeros(2, dtype=torch.long))


HELD_OUT = [s.split() for s in ["b c a", "c b a a b", "a a c"]]


def _toy_data(vocab):
    return context_windows(CORPUS * 20, vocab, 2), context_windows(HELD_OUT, vocab, 2)


def test_fit_until_valid_rises_stops_at_the_first_worse_epoch_and_keeps_the_best_weights():
    vocab = lm_vocab(CORPUS)
    train, valid = _toy_data(vocab)
    set_seed(0)
    model = NNLM(len(vocab), 2, embed_dim=8, hidden_dim=16, direct=False)
    history = fit_until_valid_rises(model, train, valid, lr=0.05, batch_size=16, max_epochs=40, seed=0)
    losses = [v for _, v in history.evals["valid loss"]]
    assert len(losses) < 40 and losses[-1] >= min(losses)             # stopped because it did not improve
    assert all(b < a for a, b in zip(losses, losses[1:-1]))           # every epoch before the last improved
    assert history.steps == len(losses) * math.ceil(len(train[1]) / 16)
    assert math.isclose(math.log(nnlm_perplexity(model, *valid)), min(losses), rel_tol=1e-6)   # best weights back


def test_fit_until_valid_rises_is_seeded():
    vocab = lm_vocab(CORPUS)
    train, valid = _toy_data(vocab)
    runs = []
    for _ in range(2):
        set_seed(3)
        model = NNLM(len(vocab), 2, embed_dim=4, hidden_dim=8, direct=False, dropout=0.2)
        runs.append(fit_until_valid_rises(model, train, valid, max_epochs=3, seed=3).train_loss)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("kwargs, name", [({"lr": 0.0}, "lr"), ({"batch_size": 0}, "batch_size"),
                                          ({"max_epochs": 0}, "max_epochs"), ({"seed": -1}, "seed")])
def test_fit_until_valid_rises_checks_its_settings(kwargs, name):
    vocab = lm_vocab(CORPUS)
    train, valid = _toy_data(vocab)
    with pytest.raises(ValueError, match=name):
        fit_until_valid_rises(NNLM(len(vocab), 2, 4, 8), train, valid, **kwargs)
    with pytest.raises(ValueError, match="equal"):
        fit_until_valid_rises(NNLM(len(vocab), 2, 4, 8), train, (valid[0], valid[1][:-1]))
