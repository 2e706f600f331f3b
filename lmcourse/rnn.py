"""Recurrent networks from scratch: RNN, LSTM and GRU cells, multi-layer sequence models, and a
recurrent language model that samples text.

Every cell keeps its weights in ``torch.nn``'s layout (``weight_ih`` (G*H, I), ``weight_hh``
(G*H, H), ``bias_ih`` and ``bias_hh`` (G*H,), gates stacked in torch's order), so a cell and the
matching ``torch.nn`` module compute the same function once weights are copied (``tests/test_rnn.py``).
"""
import math

import torch
from torch import nn
from torch.func import functional_call

from lmcourse.sampling import sample_next
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.validate import check_float, check_int, check_token_ids, check_type

MODES = ("rnn", "lstm", "gru")
#: gate blocks stacked in weight_ih / weight_hh, in torch.nn's order
NUM_GATES = {"rnn": 1, "lstm": 4, "gru": 3}


class _Cell(nn.Module):
    """Shared weights and initialisation of the three cells: U(-1/sqrt(H), 1/sqrt(H)) like torch.nn."""

    num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, device=DEFAULT_DEVICE):
        super().__init__()
        check_int(input_size, "input_size", minimum=1)
        check_int(hidden_size, "hidden_size", minimum=1)
        self.input_size, self.hidden_size = input_size, hidden_size
        G, H = self.num_gates, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(G * H, input_size, device=device))
        self.weight_hh = nn.Parameter(torch.empty(G * H, H, device=device))
        self.bias_ih = nn.Parameter(torch.empty(G * H, device=device))
        self.bias_hh = nn.Parameter(torch.empty(G * H, device=device))
        bound = 1 / math.sqrt(hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 2 or x.size(1) != self.input_size:
            raise ValueError(f"x must be (batch, {self.input_size}), got {tuple(x.shape)}")

    def zero_state(self, batch_size: int, device=None):
        """The initial state: zeros of shape (batch_size, hidden_size) (a pair for the LSTM)."""
        return torch.zeros(batch_size, self.hidden_size, device=device or self.weight_hh.device)


class RNNCell(_Cell):
    """Elman's RNN cell: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh).

    forward(x (B, I), h (B, H)) -> h_t (B, H).
    """

    num_gates = 1

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        self._check_input(x)
        z = x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh  # (B, I) @ (I, H) + (B, H) @ (H, H) -> (B, H)
        return torch.tanh(z)                                                        # (B, H)


class LSTMCell(_Cell):
    """Long short-term memory cell (Hochreiter and Schmidhuber 1997; forget gate: Gers et al. 2000).

    forward(x (B, I), (h (B, H), c (B, H))) -> (h_t, c_t), each (B, H).
    """

    num_gates = 4

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
                ) -> tuple[torch.Tensor, torch.Tensor]:
        self._check_input(x)
        h, c = state
        gates = x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh  # (B, 4H)
        i, f, g, o = gates.chunk(4, dim=1)                                          # 4 x (B, H), torch's order
        # i, f, o = sigma(.)   (input, forget, output gates);   g = tanh(.)   (candidate cell)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        # c_t = f * c_{t-1} + i * g   (the additive cell-state path);   h_t = o * tanh(c_t)
        c = f * c + i * g                                                           # (B, H)
        h = o * torch.tanh(c)                                                       # (B, H)
        return h, c

    def zero_state(self, batch_size: int, device=None):
        h = super().zero_state(batch_size, device)
        return h, torch.zeros_like(h)


class GRUCell(_Cell):
    """Gated recurrent unit (Cho et al. 2014), in torch.nn's convention.

    forward(x (B, I), h (B, H)) -> h_t (B, H).
    """

    num_gates = 3

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        self._check_input(x)
        gi = x @ self.weight_ih.T + self.bias_ih                                    # (B, I) @ (I, 3H) -> (B, 3H)
        gh = h @ self.weight_hh.T + self.bias_hh                                    # (B, H) @ (H, 3H) -> (B, 3H)
        i_r, i_z, i_n = gi.chunk(3, dim=1)                                          # 3 x (B, H)
        h_r, h_z, h_n = gh.chunk(3, dim=1)                                          # 3 x (B, H)
        # r = sigma(.) reset gate, z = sigma(.) update gate, n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        r = torch.sigmoid(i_r + h_r)                                                # (B, H)
        z = torch.sigmoid(i_z + h_z)                                                # (B, H)
        n = torch.tanh(i_n + r * h_n)                                               # (B, H)
        # h_t = (1 - z) * n + z * h_{t-1}
        return (1 - z) * n + z * h                                                  # (B, H)


CELLS = {"rnn": RNNCell, "lstm": LSTMCell, "gru": GRUCell}
TORCH_MODULES = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


class Recurrent(nn.Module):
    """A stack of ``num_layers`` recurrent cells run over a sequence (batch first).

    forward(x (B, T, I), state=None) -> (outputs (B, T, H) of the top layer, final state), where the
    final state is h_n (L, B, H), or (h_n, c_n) for the LSTM, as ``torch.nn.RNN/LSTM/GRU`` return.

    ``fast=False`` runs the cells in a Python loop over time (the explicit path, good for reading
    and for inspecting every step). ``fast=True`` computes the same function with torch's fused
    kernel, fed with *these* parameters (``torch.func.functional_call`` on a weightless
    ``torch.nn`` twin), so gradients still reach this module; it is many times faster on CPU.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 fast: bool = False, device=DEFAULT_DEVICE):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        check_int(num_layers, "num_layers", minimum=1)
        check_type(fast, "fast", bool)
        self.mode, self.hidden_size, self.num_layers, self.fast = mode, hidden_size, num_layers, fast
        self.input_size = input_size
        self.cells = nn.ModuleList(
            CELLS[mode](input_size if k == 0 else hidden_size, hidden_size, device=device)
            for k in range(num_layers))
        # the twin holds no weights of its own (meta device); kept in a tuple so it is not a submodule
        self._twin = (TORCH_MODULES[mode](input_size, hidden_size, num_layers, batch_first=True,
                                          device="meta"),)

    def torch_parameters(self) -> dict[str, torch.Tensor]:
        """These parameters under torch.nn's names (``weight_ih_l0``, ...), for copying either way."""
        return {f"{name}_l{k}": getattr(cell, name) for k, cell in enumerate(self.cells)
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}

    @torch.no_grad()
    def load_from_torch(self, module: nn.Module) -> "Recurrent":
        """Copy the weights of a ``torch.nn.RNN/LSTM/GRU`` (batch_first, one direction) into this stack."""
        expected = TORCH_MODULES[self.mode]
        check_type(module, "module", expected)
        if (module.input_size, module.hidden_size, module.num_layers) != (
                self.input_size, self.hidden_size, self.num_layers) or module.bidirectional:
            raise ValueError(f"module must be a one-directional {expected.__name__}({self.input_size}, "
                             f"{self.hidden_size}, num_layers={self.num_layers}), got {module}")
        theirs = dict(module.named_parameters())
        for name, p in self.torch_parameters().items():
            p.copy_(theirs[name])
        return self

    def zero_state(self, batch_size: int):
        """Zeros in torch's layout: (L, B, H), or a pair of them for the LSTM."""
        h = torch.zeros(self.num_layers, batch_size, self.hidden_size, device=self.cells[0].weight_hh.device)
        return (h, torch.zeros_like(h)) if self.mode == "lstm" else h

    def forward(self, x: torch.Tensor, state=None):
        if x.dim() != 3 or x.size(2) != self.input_size:
            raise ValueError(f"x must be (batch, time, {self.input_size}), got {tuple(x.shape)}")
        if state is None:
            state = self.zero_state(x.size(0))
        if self.fast:
            return functional_call(self._twin[0], self.torch_parameters(), (x, state))
        finals = []
        for k, cell in enumerate(self.cells):
            s = (state[0][k], state[1][k]) if self.mode == "lstm" else state[k]   # (B, H) each
            outputs = []
            for t in range(x.size(1)):
                s = cell(x[:, t], s)                                                 # (B, H)
                outputs.append(s[0] if self.mode == "lstm" else s)
            x = torch.stack(outputs, dim=1)                                          # T x (B, H) -> (B, T, H)
            finals.append(s)
        if self.mode == "lstm":
            return x, (torch.stack([h for h, _ in finals]), torch.stack([c for _, c in finals]))
        return x, torch.stack(finals)                                                # (L, B, H)


@torch.no_grad()
def set_forget_bias(rnn: Recurrent, value: float) -> Recurrent:
    """Start every LSTM forget gate at sigmoid(value) (Gers et al. 2000; Jozefowicz et al. 2015 use 1).

    A bias of 3 gives f = 0.95 at the start of training: the cell state is carried almost unchanged,
    so gradients reach far back from the first step on. Sets b_ih[H:2H] = value and b_hh[H:2H] = 0.
    """
    check_type(rnn, "rnn", Recurrent)
    if rnn.mode != "lstm":
        raise ValueError(f"rnn must be an LSTM stack to have forget gates, got mode {rnn.mode!r}")
    check_float(value, "value")
    for cell in rnn.cells:
        H = cell.hidden_size
        cell.bias_ih[H:2 * H] = value                  # torch's gate order: i, f, g, o
        cell.bias_hh[H:2 * H] = 0.0
    return rnn


class RecurrentLM(nn.Module):
    """A recurrent language model: embedding -> Recurrent stack -> linear layer to the vocabulary.

    forward(ids (B, T), state=None) -> (logits (B, T, vocab_size), final state).
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_layers: int = 1,
                 mode: str = "lstm", fast: bool = True, device=DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(embed_dim, "embed_dim", minimum=1)
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, embed_dim, device=device)
        self.rnn = Recurrent(mode, embed_dim, hidden_size, num_layers, fast=fast, device=device)
        self.head = nn.Linear(hidden_size, vocab_size, device=device)

    def forward(self, ids: torch.Tensor, state=None):
        check_token_ids(ids, self.vocab_size, "ids")
        if ids.dim() != 2:
            raise ValueError(f"ids must be (batch, time), got shape {tuple(ids.shape)}")
        x = self.embedding(ids)                        # (B, T) -> (B, T, E)
        h, state = self.rnn(x, state)                  # (B, T, E) -> (B, T, H)
        return self.head(h), state                     # (B, T, H) @ (H, V) -> (B, T, V)

    @torch.no_grad()
    def generate(self, prompt_ids: list[int], max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None,
                 generator: torch.Generator | None = None) -> list[int]:
        """Continue ``prompt_ids`` by ``max_new_tokens`` sampled ids (prompt included in the result).

        The prompt is read once; then each new token is fed with the carried state, so a step costs
        one cell update, whatever the length so far.
        """
        check_int(max_new_tokens, "max_new_tokens", minimum=0)
        if len(prompt_ids) == 0:
            raise ValueError("prompt_ids must hold at least one id")
        was_training = self.training
        self.eval()
        device = self.head.weight.device
        out = list(prompt_ids)
        logits, state = self(torch.tensor([out], device=device))          # (1, T, V)
        for _ in range(max_new_tokens):
            nxt = sample_next(logits[:, -1], temperature, top_k, top_p, generator)   # (1,)
            out.append(int(nxt))
            logits, state = self(nxt[:, None], state)                      # (1, 1) -> (1, 1, V)
        self.train(was_training)
        return out


def lm_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Mean next-token cross-entropy of a model returning ``(logits, state)``; batch = (x, y), (B, T) each."""
    x, y = batch
    logits, _ = model(x)                                                   # (B, T, V)
    return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


def detach_state(state):
    """The same state values, cut from the graph: gradients stop here (truncated BPTT).

    state: h (L, B, H), or a pair (h, c) for the LSTM; None passes through.
    """
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(s.detach() for s in state)
    check_type(state, "state", torch.Tensor)
    return state.detach()


class StatefulLMLoss:
    """``lm_loss`` for truncated BPTT on contiguous batches (``lmcourse.data.lm_batches``).

    Each call starts the model from the final state of the previous window, detached, so the
    model reads the stream without a break while gradients flow back at most one window. The state
    is reset to zeros every ``windows_per_pass`` calls (the start of a new pass over the stream).
    Use it as ``fit(model, StatefulLMLoss(len(batches)), batches, ...)``.
    """

    def __init__(self, windows_per_pass: int):
        check_int(windows_per_pass, "windows_per_pass", minimum=1)
        self.windows_per_pass, self.calls, self.state = windows_per_pass, 0, None

    def __call__(self, model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x, y = batch                                                       # (B, T) each
        if self.calls % self.windows_per_pass == 0:
            self.state = None                                              # a new pass: zero state
        logits, state = model(x, self.state)                               # (B, T, V)
        self.state = detach_state(state)                                   # carry the values, cut the graph
        self.calls += 1
        return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


@torch.no_grad()
def stream_loss(model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]], carry_state: bool = True
                ) -> float:
    """Mean next-token cross-entropy (nats per token) over contiguous batches (``lm_batches``).

    carry_state=True reads the stream as one text (each window starts from the previous window's
    final state); False starts every window from zeros, as training on random windows does.
    """
    check_type(carry_state, "carry_state", bool)
    if not batches:
        raise ValueError("batches must hold at least one (x, y) pair")
    was_training = model.training
    model.eval()
    state, total, count = None, 0.0, 0
    for x, y in batches:
        logits, final = model(x, state if carry_state else None)           # (B, T, V)
        total += float(nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                                   reduction="sum"))
        count += y.numel()
        state = final
    model.train(was_training)
    return total / count


@torch.no_grad()
def lstm_gate_trace(model: "RecurrentLM", ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gates of a one-layer LSTM language model as it reads one sequence ``ids`` (T,).

    Recomputes each step with the model's own weights (the same arithmetic as ``LSTMCell``) and
    returns {"input", "forget", "output", "cell"}: (T, H) each (gate values in (0, 1); cell = c_t).
    """
    check_type(model, "model", RecurrentLM)
    if model.rnn.mode != "lstm" or model.rnn.num_layers != 1:
        raise ValueError(f"model must be a one-layer LSTM language model, got {model.rnn.mode!r} "
                         f"with {model.rnn.num_layers} layers")
    check_token_ids(ids, model.vocab_size, "ids")
    if ids.dim() != 1:
        raise ValueError(f"ids must be one sequence (T,), got shape {tuple(ids.shape)}")
    cell = model.rnn.cells[0]
    x = model.embedding(ids[None])                                         # (1, T, E)
    h, c = cell.zero_state(1)
    trace = {"input": [], "forget": [], "output": [], "cell": []}
    for t in range(ids.size(0)):
        gates = x[:, t] @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh   # (1, 4H)
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        for name, value in (("input", i), ("forget", f), ("output", o), ("cell", c)):
            trace[name].append(value[0])
    return {name: torch.stack(values) for name, values in trace.items()}   # (T, H) each


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars in ``module``."""
    check_type(module, "module", nn.Module)
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
