"""Positional encodings: how a Transformer learns where each token stands.

Self-attention treats its input as a set: permuting the tokens permutes the outputs and nothing
else. Adding a position-dependent vector to every token embedding breaks that symmetry. The
Transformer (Vaswani et al. 2017) used fixed sinusoids; BERT and GPT learn a table instead.
"""
import torch
from torch import nn

from lmcourse.validate import check_float, check_int


def sinusoidal_encoding(max_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The (max_len, d_model) table PE with, for position p and pair index i = 0 .. d_model/2 - 1,

    PE[p, 2i] = sin(p / base^(2i / d_model)),  PE[p, 2i + 1] = cos(p / base^(2i / d_model)).

    Sine and cosine alternate over the *dimensions* of one position's vector (correction 9); every
    pair of dimensions is a clock turning at its own frequency, from 1 radian per position down
    to base^(-(d_model - 2) / d_model) for the last pair (just above 1 / base).
    """
    check_int(max_len, "max_len", minimum=1)
    check_int(d_model, "d_model", minimum=2)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got {d_model}")
    check_float(base, "base", minimum=1.0, strict_minimum=True)
    position = torch.arange(max_len, dtype=torch.float64)[:, None]                   # (max_len, 1)
    frequency = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d_model/2,)
    angle = position * frequency                                                    # (max_len, d_model/2)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)                                                  # even dimensions
    pe[:, 1::2] = torch.cos(angle)                                                  # odd dimensions
    return pe.float()


def relative_rotation(offset: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The (d_model, d_model) matrix M with PE[p + offset] = M @ PE[p] for every position p.

    It is block diagonal: for each frequency w, the (sin, cos) pair turns by the angle w * offset,
        sin(w(p+k)) =  cos(wk) sin(wp) + sin(wk) cos(wp)
        cos(w(p+k)) = -sin(wk) sin(wp) + cos(wk) cos(wp),
    and it does not depend on p: a fixed offset is a fixed linear map (a rotation).
    """
    check_int(offset, "offset")
    check_int(d_model, "d_model", minimum=2)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got {d_model}")
    check_float(base, "base", minimum=1.0, strict_minimum=True)
    frequency = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    c, s = torch.cos(frequency * offset), torch.sin(frequency * offset)             # (d_model/2,)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)
    idx = torch.arange(0, d_model, 2)
    m[idx, idx], m[idx, idx + 1] = c, s
    m[idx + 1, idx], m[idx + 1, idx + 1] = -s, c
    return m.float()


class SinusoidalPositionalEncoding(nn.Module):
    """x + PE[:T], then dropout. No parameters. forward(x (B, T, d_model)) -> (B, T, d_model)."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0, base: float = 10000.0):
        super().__init__()
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model, base), persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.pe.shape)
        return self.dropout(x + self.pe[: x.size(1)])          # (B, T, C) + (T, C) -> (B, T, C)


class LearnedPositionalEncoding(nn.Module):
    """x + P[:T] with a trained table P (max_len, d_model), as in GPT and BERT; it cannot go
    beyond ``max_len``. forward(x (B, T, d_model)) -> (B, T, d_model)."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        check_int(d_model, "d_model", minimum=1)
        check_int(max_len, "max_len", minimum=1)
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.table.weight.shape)
        return self.dropout(x + self.table.weight[: x.size(1)])   # (B, T, C) + (T, C) -> (B, T, C)


def _check_input(x: torch.Tensor, table_shape) -> None:
    max_len, d_model = table_shape
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.size(-1) != d_model:
        raise ValueError(f"x must be a (batch, time, {d_model}) tensor, got "
                         f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
    if x.size(1) > max_len:
        raise ValueError(f"sequence length {x.size(1)} exceeds max_len {max_len}")
