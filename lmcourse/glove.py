"""GloVe (Pennington et al. 2014): word vectors as a weighted factorisation of log co-occurrence counts.

    J = sum_{i,j: X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max)^alpha if x < x_max else 1

trained as the reference code glove.c trains it: AdaGrad over the non-zero entries of X (from
:func:`lmcourse.cooccurrence.cooccurrence_matrix`), one cell at a time in a shuffled order, each
cell's four rows updated before the next cell is scored (:func:`glove_adagrad_epoch`, compiled by
numba on first use). The word vectors handed out are w + w~, as in the paper.
"""
import functools
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from lmcourse.seed import DEFAULT_DEVICE, set_seed
from lmcourse.train import History
from lmcourse.validate import check_float, check_int, check_token_ids


def glove_weight(x: torch.Tensor, x_max: float = 100.0, alpha: float = 0.75) -> torch.Tensor:
    """f(x) = min(1, (x / x_max)^alpha): rare pairs count less, frequent ones are capped."""
    check_float(x_max, "x_max", minimum=0.0, strict_minimum=True)
    check_float(alpha, "alpha", minimum=0.0)
    return (x / x_max).pow(alpha).clamp(max=1.0)


class GloVe(nn.Module):
    """Word and context vectors with biases.

    forward(i (B,) word ids, j (B,) context ids, x (B,) co-occurrence counts > 0) -> mean weighted
    squared error f(x) (w_i . w~_j + b_i + b~_j - log x)^2.
    """

    def __init__(self, vocab_size: int, dim: int = 100, x_max: float = 100.0, alpha: float = 0.75,
                 device: str | torch.device = DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(dim, "dim", minimum=1)
        glove_weight(torch.ones(1), x_max, alpha)   # validates x_max and alpha
        self.x_max, self.alpha = x_max, alpha
        self.w = nn.Embedding(vocab_size, dim, sparse=True, device=device)       # (V, d) word vectors
        self.w_ctx = nn.Embedding(vocab_size, dim, sparse=True, device=device)   # (V, d) context vectors
        self.b = nn.Embedding(vocab_size, 1, sparse=True, device=device)         # (V, 1)
        self.b_ctx = nn.Embedding(vocab_size, 1, sparse=True, device=device)     # (V, 1)
        with torch.no_grad():   # the reference code's initialisation: uniform in +-0.5 / d
            for table in (self.w, self.w_ctx, self.b, self.b_ctx):
                table.weight.uniform_(-0.5 / dim, 0.5 / dim)

    def forward(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        check_token_ids(i, self.w.num_embeddings, "i")
        check_token_ids(j, self.w_ctx.num_embeddings, "j")
        if not (i.shape == j.shape == x.shape) or i.dim() != 1:
            raise ValueError(f"i, j and x must be 1-D of equal length, got {tuple(i.shape)}, "
                             f"{tuple(j.shape)}, {tuple(x.shape)}")
        # w_i . w~_j + b_i + b~_j - log X_ij
        pred = (self.w(i) * self.w_ctx(j)).sum(-1) + self.b(i).squeeze(-1) + self.b_ctx(j).squeeze(-1)  # (B,)
        err = pred - x.log()                                                                          # (B,)
        return (glove_weight(x, self.x_max, self.alpha) * err.pow(2)).mean()

    @property
    def vectors(self) -> torch.Tensor:
        """(V, d) w + w~, the embeddings the paper uses."""
        return (self.w.weight + self.w_ctx.weight).detach()


def glove_adagrad_epoch(rows, cols, counts, order, w, w_ctx, b, b_ctx, g_w, g_ctx, g_b, g_b_ctx, x_max, alpha,
                        lr):
    """One epoch of glove.c's loop over the cells ``order`` (n,) int64, updating everything in place.

    rows, cols (nnz,) int64 and counts (nnz,) float32: the non-zero cells X_ij; w, w_ctx (V, d) and
    b, b_ctx (V,) float32 the parameters; g_* their AdaGrad sums of squared steps (start at 1, as
    in glove.c). For each cell, with e = w_i . w~_j + b_i + b~_j - log X_ij and g = lr f(X_ij) e
    (the gradient of lr J / 2): w_i -= g w~_j / sqrt(g_w_i), w~_j -= g w_i / sqrt(g_ctx_j),
    b_i -= g / sqrt(g_b_i), b~_j -= g / sqrt(g_b_ctx_j), each accumulator then adding its step
    before division squared (glove.c's form of AdaGrad). Returns the epoch's mean f(X_ij) e^2
    (each cell scored just before its update). float32 operations in a fixed order: no fastmath.
    """
    d = w.shape[1]
    step_w = np.empty(d, np.float32)
    step_ctx = np.empty(d, np.float32)
    total = 0.0
    for n in range(order.shape[0]):
        k = order[n]
        i, j, x = rows[k], cols[k], counts[k]
        err = b[i] + b_ctx[j] - np.log(x)                              # e = w_i . w~_j + b_i + b~_j - log X_ij
        for c in range(d):
            err += w[i, c] * w_ctx[j, c]
        weighted = err if x >= x_max else (x / x_max) ** alpha * err   # f(X_ij) e
        total += weighted * err
        g = lr * weighted
        for c in range(d):
            grad_w, grad_ctx = g * w_ctx[j, c], g * w[i, c]             # lr dJ/2 / dw_i, lr dJ/2 / dw~_j
            step_w[c], step_ctx[c] = grad_w / np.sqrt(g_w[i, c]), grad_ctx / np.sqrt(g_ctx[j, c])
            g_w[i, c] += grad_w * grad_w
            g_ctx[j, c] += grad_ctx * grad_ctx
        for c in range(d):
            w[i, c] -= step_w[c]
            w_ctx[j, c] -= step_ctx[c]
        b[i] -= g / np.sqrt(g_b[i])
        b_ctx[j] -= g / np.sqrt(g_b_ctx[j])
        g_b[i] += g * g
        g_b_ctx[j] += g * g
    return total / max(order.shape[0], 1)


@functools.cache
def _compiled_epoch():
    """:func:`glove_adagrad_epoch` compiled by numba on first use (cached on disk where it can be)."""
    import numba
    try:
        return numba.njit(cache=True, nogil=True)(glove_adagrad_epoch)
    except RuntimeError:        # numba found no writable folder for its cache: compile in every process
        return numba.njit(nogil=True)(glove_adagrad_epoch)


def train_glove(counts: sp.spmatrix, dim: int = 50, epochs: int = 50, lr: float = 0.05, x_max: float = 100.0,
                alpha: float = 0.75, seed: int = 0,
                on_epoch: Callable[[int, "GloVe"], None] | None = None) -> tuple[GloVe, History]:
    """Fit GloVe to the non-zero entries of a co-occurrence matrix (V, V) as glove.c does: per-cell
    AdaGrad (:func:`glove_adagrad_epoch`) with learning rate ``lr`` (glove.c's default 0.05), the
    cells shuffled anew every epoch. ``on_epoch(epoch, model)`` is called after every epoch (1-based).
    The history records each epoch's mean weighted squared error, as :class:`GloVe` computes it.
    """
    if not sp.issparse(counts):
        raise TypeError(f"counts must be a scipy sparse matrix, got {type(counts).__name__}")
    x = sp.coo_matrix(counts)
    if x.nnz == 0 or (x.data < 0).any():
        raise ValueError("counts must have non-zero entries and none negative")
    for name, value in (("dim", dim), ("epochs", epochs)):
        check_int(value, name, minimum=1)
    check_int(seed, "seed", minimum=0)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    keep = x.data > 0
    rows, cols = x.row[keep].astype(np.int64), x.col[keep].astype(np.int64)
    values = x.data[keep].astype(np.float32)
    generator = torch.Generator().manual_seed(seed)
    set_seed(seed)
    model = GloVe(x.shape[0], dim, x_max, alpha)                         # on the CPU: the loop runs there
    w, w_ctx = model.w.weight.data.numpy(), model.w_ctx.weight.data.numpy()          # (V, d) views
    b, b_ctx = model.b.weight.data.numpy()[:, 0], model.b_ctx.weight.data.numpy()[:, 0]   # (V,) views
    sums = [np.ones_like(t) for t in (w, w_ctx, b, b_ctx)]
    epoch_fn, history = _compiled_epoch(), History()
    for epoch in range(1, epochs + 1):
        order = torch.randperm(len(values), generator=generator).numpy()
        history.train_loss.append(float(epoch_fn(rows, cols, values, order, w, w_ctx, b, b_ctx, *sums,
                                                 np.float32(x_max), np.float32(alpha), np.float32(lr))))
        if on_epoch is not None:
            on_epoch(epoch, model)
    return model, history
