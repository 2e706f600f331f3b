"""The neural probabilistic language model of Bengio et al. (2003).

The previous n - 1 words are looked up in a shared embedding matrix C, concatenated, passed through
one tanh hidden layer, and scored against every word of the vocabulary:

    y = b + W x + U tanh(d + H x),    x = [C(w_{t-n+1}); ...; C(w_{t-1})],    P(w_t | ...) = softmax(y)

W is the optional "direct connection" from the embeddings to the output.
"""
import copy
import math
from collections.abc import Sequence

import torch
from torch import nn

from lmcourse.ngram import BOS, EOS
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.train import History, fit
from lmcourse.validate import check_float, check_int, check_nonempty, check_token_ids, check_type
from lmcourse.vocab import Vocab


class NNLM(nn.Module):
    """Bengio et al.'s feed-forward language model.

    forward(context (B, n-1) int64 word ids, oldest first) -> logits (B, vocab_size).

    C starts small, N(0, 0.1^2), not at PyTorch's N(0, 1): with unit-size random rows, a few epochs
    barely move the vector of a word seen a handful of times, and its nearest neighbours stay
    those of its random start.
    """

    def __init__(self, vocab_size: int, context_size: int, embed_dim: int = 60, hidden_dim: int = 100,
                 direct: bool = True, dropout: float = 0.0, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(context_size, "context_size", minimum=1)
        check_int(embed_dim, "embed_dim", minimum=1)
        check_int(hidden_dim, "hidden_dim", minimum=1)
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        self.vocab_size, self.context_size = vocab_size, context_size
        self.C = nn.Embedding(vocab_size, embed_dim, device=device)                       # (V, m)
        nn.init.normal_(self.C.weight, std=0.1)
        self.H = nn.Linear(context_size * embed_dim, hidden_dim, device=device)          # H and bias d
        self.U = nn.Linear(hidden_dim, vocab_size, bias=False, device=device)
        self.W = nn.Linear(context_size * embed_dim, vocab_size, bias=False, device=device) if direct else None
        self.b = nn.Parameter(torch.zeros(vocab_size, device=device))
        self.drop = nn.Dropout(dropout)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        check_token_ids(context, self.vocab_size, "context")
        if context.dim() != 2 or context.size(1) != self.context_size:
            raise ValueError(f"context must be (batch, {self.context_size}) word ids, got {tuple(context.shape)}")
        x = self.C(context).flatten(1)                        # (B, n-1) -> (B, n-1, m) -> (B, (n-1) m)
        x = self.drop(x)
        # y = b + W x + U tanh(d + H x)
        y = self.b + self.U(torch.tanh(self.H(x)))            # (B, h) @ (h, V) -> (B, V)
        if self.W is not None:
            y = y + self.W(x)                                 # (B, (n-1) m) @ ((n-1) m, V) -> (B, V)
        return y


def context_windows(sentences: Sequence[Sequence[str]], vocab: Vocab, context_size: int
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (previous ``context_size`` words, next word) pair of the padded sentences.

    Sentences are padded exactly as :class:`lmcourse.ngram.NGramLM` pads them (``<s>`` on the left,
    ``</s>`` predicted at the end), so both models are scored on the same tokens.
    Returns contexts (N, context_size) and targets (N,), int64.
    """
    check_nonempty(sentences, "sentences")
    check_type(vocab, "vocab", Vocab)
    check_int(context_size, "context_size", minimum=1)
    for token in (BOS, EOS):
        if token not in vocab:
            raise ValueError(f"vocab must contain {token}; build it with lmcourse.ngram.lm_vocab()")
    contexts, targets = [], []
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError("sentences must be lists of tokens, not strings; tokenize them first")
        ids = vocab.encode([BOS] * context_size + list(sentence) + [EOS])
        for i in range(context_size, len(ids)):
            contexts.append(ids[i - context_size:i])
            targets.append(ids[i])
    return torch.tensor(contexts, dtype=torch.long), torch.tensor(targets, dtype=torch.long)


def nnlm_token_logprobs(model: NNLM, contexts: torch.Tensor, targets: torch.Tensor, batch_size: int = 4096,
                        device: str | torch.device = DEFAULT_DEVICE) -> torch.Tensor:
    """log P(target | context) under ``model`` (in eval mode) for each example: (N,) float64."""
    check_type(model, "model", NNLM)
    check_int(batch_size, "batch_size", minimum=1)
    if len(contexts) != len(targets) or len(targets) == 0:
        raise ValueError(f"contexts and targets must be non-empty and of equal length, "
                         f"got {len(contexts)} and {len(targets)}")
    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(targets), batch_size):
            logits = model(contexts[i:i + batch_size].to(device))                     # (B, V)
            y = targets[i:i + batch_size].to(device)
            out.append(logits.log_softmax(-1).gather(1, y[:, None]).squeeze(1).double().cpu())
    model.train(was_training)
    return torch.cat(out)


def nnlm_perplexity(model: NNLM, contexts: torch.Tensor, targets: torch.Tensor, batch_size: int = 4096,
                    device: str | torch.device = DEFAULT_DEVICE) -> float:
    """exp of the mean negative log-likelihood of ``targets`` given ``contexts`` (every token weighs the same)."""
    logprobs = nnlm_token_logprobs(model, contexts, targets, batch_size, device)
    return math.exp(-logprobs.mean().item())


def fit_until_valid_rises(model: NNLM, train: tuple[torch.Tensor, torch.Tensor],
                          valid: tuple[torch.Tensor, torch.Tensor], *, lr: float = 1e-2, batch_size: int = 512,
                          max_epochs: int = 30, seed: int = 0) -> History:
    """Train ``model`` on ``train`` = (contexts (N, n-1), targets (N,)) with AdamW, one shuffled epoch
    at a time, until the validation loss on ``valid`` stops falling (early stopping); the weights of
    the best epoch are restored.

    Returns the :class:`~lmcourse.train.History` of every step, with ``evals["valid loss"]`` (mean nats
    per token) after each epoch; the best epoch is the one with the lowest of these.
    """
    check_type(model, "model", NNLM)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    check_int(batch_size, "batch_size", minimum=1)
    check_int(max_epochs, "max_epochs", minimum=1)
    check_int(seed, "seed", minimum=0)
    (x, y), (x_valid, y_valid) = train, valid
    if len(x) != len(y) or len(x_valid) != len(y_valid) or not len(y) or not len(y_valid):
        raise ValueError("train and valid must each be (contexts, targets) of equal, non-zero length")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    history, best, best_state = History(), math.inf, None
    for epoch in range(max_epochs):
        order = torch.randperm(len(y), generator=torch.Generator().manual_seed(1000 * seed + epoch))
        batches = [(x[order[i:i + batch_size]], y[order[i:i + batch_size]]) for i in range(0, len(y), batch_size)]
        run = fit(model, lambda m, batch: nn.functional.cross_entropy(m(batch[0]), batch[1]), batches,
                  optimizer=optimizer, seed=seed if epoch == 0 else None, progress=False)
        history.train_loss += run.train_loss
        loss = math.log(nnlm_perplexity(model, x_valid, y_valid))
        history.evals.setdefault("valid loss", []).append((history.steps, loss))
        if loss >= best:
            break
        best, best_state = loss, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return history

