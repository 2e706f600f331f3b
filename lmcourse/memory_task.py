"""A long-memory task: remember the first symbol of a sequence across ``gap`` distractors.

A sequence is ``[s, n_1, ..., n_gap, ?]``: a signal symbol s (one of ``num_classes``), ``gap``
noise symbols drawn at random, then a query symbol; the target is s. Nothing between the signal
and the query says anything about it, so a model must carry it ``gap + 1`` steps. Guessing gives
1 / num_classes. The classifiers are the course's RNN, LSTM and GRU, and Le et al.'s IRNN.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.gradients import scaled_orthogonal
from lmcourse.rnn import Recurrent, set_forget_bias
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.validate import check_float, check_int, check_token_ids, check_type


@dataclass(frozen=True)
class MemoryTask:
    """Sizes of the task: ids 0..num_classes-1 are signals, then noise ids, then the query id."""
    num_classes: int = 4   # signal symbols (chance accuracy = 1 / num_classes)
    num_noise: int = 8     # distractor symbols

    def __post_init__(self):
        check_int(self.num_classes, "num_classes", minimum=2)
        check_int(self.num_noise, "num_noise", minimum=1)

    @property
    def vocab_size(self) -> int:
        return self.num_classes + self.num_noise + 1

    @property
    def query_id(self) -> int:
        return self.num_classes + self.num_noise

    @property
    def chance(self) -> float:
        return 1 / self.num_classes

    def batch(self, batch_size: int, gap: int, generator: torch.Generator | None = None
              ) -> tuple[torch.Tensor, torch.Tensor]:
        """(x (B, gap + 2) ids, y (B,) signal ids)."""
        check_int(batch_size, "batch_size", minimum=1)
        check_int(gap, "gap", minimum=0)
        y = torch.randint(self.num_classes, (batch_size,), generator=generator)                # (B,)
        noise = self.num_classes + torch.randint(self.num_noise, (batch_size, gap), generator=generator)
        query = torch.full((batch_size, 1), self.query_id)
        return torch.cat([y[:, None], noise, query], dim=1), y                                 # (B, gap + 2)


class IRNN(nn.Module):
    """Le et al.'s (2015) IRNN: a ReLU RNN, h_t = relu(W_ih x_t + W_hh h_{t-1} + b), whose W_hh starts as
    the identity and whose biases start at zero, so at first it carries its state unchanged. Input
    weights start small (normal, sd ``input_std``). Runs torch's fused ReLU RNN.

    forward(x (B, T, I)) -> (outputs (B, T, H), h_T (1, B, H)).
    """

    def __init__(self, input_size: int, hidden_size: int, input_std: float = 1e-3, device=DEFAULT_DEVICE):
        super().__init__()
        check_int(input_size, "input_size", minimum=1)
        check_int(hidden_size, "hidden_size", minimum=1)
        check_float(input_std, "input_std", minimum=0.0)
        self.hidden_size = hidden_size
        self.rnn = nn.RNN(input_size, hidden_size, nonlinearity="relu", batch_first=True, device=device)
        with torch.no_grad():
            self.rnn.weight_hh_l0.copy_(torch.eye(hidden_size))
            self.rnn.weight_ih_l0.normal_(0.0, input_std)
            self.rnn.bias_ih_l0.zero_()
            self.rnn.bias_hh_l0.zero_()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.rnn(x)                         # (B, T, I) -> (B, T, H), (1, B, H)


CLASSIFIER_MODES = ("rnn", "lstm", "gru", "irnn")


class SequenceClassifier(nn.Module):
    """Embedding -> recurrent stack -> linear layer on the last hidden state.

    ``mode`` is a :class:`lmcourse.rnn.Recurrent` mode, or "irnn" for Le et al.'s :class:`IRNN`.
    An LSTM starts with its forget gates at sigmoid(forget_bias) (see :func:`lmcourse.rnn.set_forget_bias`).

    forward(ids (B, T)) -> logits (B, num_classes).
    """

    def __init__(self, vocab_size: int, num_classes: int, hidden_size: int = 32, mode: str = "lstm",
                 embed_dim: int = 16, forget_bias: float = 3.0, fast: bool = True, device=DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(num_classes, "num_classes", minimum=2)
        check_int(embed_dim, "embed_dim", minimum=1)
        if mode not in CLASSIFIER_MODES:
            raise ValueError(f"mode must be one of {CLASSIFIER_MODES}, got {mode!r}")
        self.embedding = nn.Embedding(vocab_size, embed_dim, device=device)
        self.rnn = (IRNN(embed_dim, hidden_size, device=device) if mode == "irnn"
                    else Recurrent(mode, embed_dim, hidden_size, fast=fast, device=device))
        if mode == "lstm":
            set_forget_bias(self.rnn, forget_bias)
        self.head = nn.Linear(hidden_size, num_classes, device=device)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        check_token_ids(ids, self.embedding.num_embeddings, "ids")
        h, _ = self.rnn(self.embedding(ids))       # (B, T) -> (B, T, E) -> (B, T, H)
        return self.head(h[:, -1])                 # (B, H) @ (H, C) -> (B, C)


@torch.no_grad()
def accuracy(model: nn.Module, batch) -> float:
    """Share of sequences whose signal the model names correctly."""
    x, y = batch
    was_training = model.training
    model.eval()
    acc = (model(x).argmax(dim=-1) == y).float().mean().item()
    model.train(was_training)
    return acc


INITS = ("default", "orthogonal")


def init_orthogonal_(model: "SequenceClassifier", generator: torch.Generator | None = None) -> "SequenceClassifier":
    """Set an RNN classifier's recurrent matrix to a random orthogonal one (radius = norm = 1).

    An orthogonal W_hh preserves the length of a gradient vector at every step (up to the tanh'
    factors): orthogonal initialisation, from Saxe et al. (2014).
    """
    check_type(model, "model", SequenceClassifier)
    if not isinstance(model.rnn, Recurrent) or model.rnn.mode != "rnn":
        raise ValueError(f"model must be a simple RNN classifier, got mode {getattr(model.rnn, 'mode', 'irnn')!r}")
    with torch.no_grad():
        for cell in model.rnn.cells:
            cell.weight_hh.copy_(scaled_orthogonal(cell.hidden_size, 1.0, generator))
    return model


def train_on_gap(mode: str, gap: int, task: MemoryTask = MemoryTask(), steps: int = 300,
                 batch_size: int = 64, hidden_size: int = 32, lr: float = 1e-2, forget_bias: float = 3.0,
                 seed: int = 0, init: str = "default", stop_at: float | None = None, check_every: int = 10,
                 device=DEFAULT_DEVICE) -> tuple[SequenceClassifier, float]:
    """Train a classifier of ``mode`` on sequences with ``gap`` distractors; return it and its
    accuracy on 1,000 fresh test sequences. AdamW, gradients clipped at norm 1.

    init="orthogonal" starts an RNN's W_hh orthogonal (:func:`init_orthogonal_`).
    stop_at: stop early once the accuracy on the last ``check_every`` training batches (each one
    fresh data, so an honest estimate) reaches this value. ``model.steps_trained`` records the steps.
    Seeds torch with ``seed`` but leaves the thread count to the caller (see ``lmcourse.set_seed``).
    """
    check_int(steps, "steps", minimum=1)
    check_int(check_every, "check_every", minimum=1)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if stop_at is not None:
        check_float(stop_at, "stop_at", minimum=0.0, maximum=1.0)
    torch.manual_seed(seed)
    model = SequenceClassifier(task.vocab_size, task.num_classes, hidden_size, mode,
                               forget_bias=forget_bias, device=device)
    generator = torch.Generator().manual_seed(seed)
    if init == "orthogonal":
        init_orthogonal_(model, generator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    correct = 0
    for step in range(1, steps + 1):
        x, y = (t.to(device) for t in task.batch(batch_size, gap, generator))
        logits = model(x)                                                     # (B, C)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        correct += int((logits.argmax(-1) == y).sum())
        if step % check_every == 0:
            if stop_at is not None and correct / (check_every * batch_size) >= stop_at:
                break
            correct = 0
    model.steps_trained = step
    test = task.batch(1000, gap, torch.Generator().manual_seed(seed + 12345))
    return model, accuracy(model, tuple(t.to(device) for t in test))


def matched_rnn_width(hidden_size: int, task: MemoryTask = MemoryTask(), embed_dim: int = 16) -> int:
    """The width of an RNN classifier whose parameter count is closest to an LSTM classifier's of
    width ``hidden_size`` (same embedding and task), so that the two can be compared fairly."""
    check_int(hidden_size, "hidden_size", minimum=1)

    def size(mode, h):
        # embedding + (G h (E + h + 2)) recurrent weights and biases + head (h C + C)
        g = 4 if mode == "lstm" else 1
        return task.vocab_size * embed_dim + g * h * (embed_dim + h + 2) + (h + 1) * task.num_classes

    target = size("lstm", hidden_size)
    return min(range(1, 4 * hidden_size + 1), key=lambda h: abs(size("rnn", h) - target))


def limit(accuracies: dict[int, list[float]], threshold: float = 0.9) -> int | None:
    """The largest gap solved by every seed (accuracy > threshold) with every shorter gap solved too;
    None if even the shortest gap fails. accuracies: gap -> one accuracy per seed (gaps not run:
    an empty list, counted as failed)."""
    check_float(threshold, "threshold", minimum=0.0, maximum=1.0)
    best = None
    for gap in sorted(accuracies):
        accs = accuracies[gap]
        if not accs or min(accs) <= threshold:
            break
        best = gap
    return best
