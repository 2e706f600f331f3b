"""GloVe (Pennington et al. 2014): word vectors as a weighted factorisation of log co-occurrence counts.

    J = sum_{i,j: X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max)^alpha if x < x_max else 1

trained with AdaGrad (sparse updates: only the rows in a batch change) over the non-zero entries of X
(from :func:`lmcourse.cooccurrence.cooccurrence_matrix`).
The word vectors handed out are w + w~, as in the paper.
"""
import warnings

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from lmcourse.seed import DEFAULT_DEVICE, set_seed
from lmcourse.train import History, fit
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


def train_glove(counts: sp.spmatrix, dim: int = 100, epochs: int = 25, lr: float = 0.05,
                batch_size: int = 4096, x_max: float = 100.0, alpha: float = 0.75, seed: int = 0,
                device: str | torch.device = DEFAULT_DEVICE) -> tuple[GloVe, History]:
    """Fit GloVe to the non-zero entries of a co-occurrence matrix with AdaGrad (as in the paper)."""
    if not sp.issparse(counts):
        raise TypeError(f"counts must be a scipy sparse matrix, got {type(counts).__name__}")
    x = sp.coo_matrix(counts)
    if x.nnz == 0 or (x.data < 0).any():
        raise ValueError("counts must have non-zero entries and none negative")
    for name, value in (("dim", dim), ("epochs", epochs), ("batch_size", batch_size)):
        check_int(value, name, minimum=1)
    check_int(seed, "seed", minimum=0)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    keep = x.data > 0
    i = torch.from_numpy(x.row[keep].astype(np.int64))
    j = torch.from_numpy(x.col[keep].astype(np.int64))
    v = torch.from_numpy(x.data[keep].astype(np.float32))
    generator = torch.Generator().manual_seed(seed)

    def batches(epoch: int):
        order = torch.randperm(len(v), generator=generator)
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            yield i[idx], j[idx], v[idx]

    set_seed(seed)
    model = GloVe(x.shape[0], dim, x_max, alpha, device=device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=lr)
    with warnings.catch_warnings():   # torch notes once that it skips checks of sparse gradients
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        history = fit(model, lambda m, batch: m(*batch), batches, num_epochs=epochs, optimizer=optimizer,
                      seed=seed, device=device, desc="GloVe")
    return model, history
