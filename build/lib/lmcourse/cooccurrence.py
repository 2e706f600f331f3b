"""Counting co-occurrences, and the count-based embeddings built from them: PPMI + truncated SVD.

Levy and Goldberg (2014) showed that skip-gram with negative sampling implicitly factorises a
shifted PMI matrix; factorising the positive PMI matrix explicitly with an SVD is its count-based
cousin, and GloVe (``lmcourse.glove``) fits the logarithm of the same counts.
"""
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from lmcourse.validate import check_float, check_int, check_nonempty


def cooccurrence_matrix(sentences: Sequence[Sequence[int]], vocab_size: int, window: int = 5,
                        distance_weighting: bool = True) -> sp.csr_matrix:
    """Symmetric (V, V) counts X[i, j] of word j within ``window`` words of word i, in the same sentence.

    distance_weighting: a pair d words apart adds 1/d (as GloVe does) instead of 1.
    """
    check_nonempty(sentences, "sentences")
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(window, "window", minimum=1)
    ids = np.array([i for s in sentences for i in s], dtype=np.int64)                  # (N,)
    if len(ids) == 0:
        raise ValueError("sentences must contain at least one word")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"word ids must lie in [0, {vocab_size})")
    sent = np.repeat(np.arange(len(sentences)), [len(s) for s in sentences])           # (N,)
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        same = sent[d:] == sent[:-d]                                                   # pairs d apart
        left, right = ids[:-d][same], ids[d:][same]
        w = np.full(len(left), 1.0 / d if distance_weighting else 1.0)
        rows += [left, right]
        cols += [right, left]
        vals += [w, w]
    x = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(vocab_size, vocab_size))
    return x.tocsr()   # duplicates are summed


def ppmi(counts: sp.spmatrix, alpha: float = 0.75) -> sp.csr_matrix:
    """Positive pointwise mutual information, max(0, log P(w, c) / (P(w) P_alpha(c))).

    alpha smooths the context distribution, P_alpha(c) = #(c)^alpha / sum #(c')^alpha
    (Levy, Goldberg and Dagan 2015); alpha = 1 is plain PPMI.
    """
    if not sp.issparse(counts):
        raise TypeError(f"counts must be a scipy sparse matrix, got {type(counts).__name__}")
    check_float(alpha, "alpha", minimum=0.0, maximum=1.0)
    x = sp.coo_matrix(counts)
    if x.nnz == 0:
        raise ValueError("counts must have at least one non-zero entry")
    total = x.sum()
    p_w = np.asarray(x.sum(axis=1)).ravel() / total                                     # (V,)
    c = np.asarray(x.sum(axis=0)).ravel() ** alpha
    p_c = c / c.sum()                                                                  # (V,)
    pmi = np.log(x.data / total) - np.log(p_w[x.row]) - np.log(p_c[x.col])
    keep = pmi > 0
    return sp.csr_matrix((pmi[keep], (x.row[keep], x.col[keep])), shape=x.shape)


def svd_embeddings(matrix: sp.spmatrix, dim: int = 100, power: float = 0.5) -> np.ndarray:
    """Word vectors U_d S_d^power from the top ``dim`` singular triplets of ``matrix`` (V, V) -> (V, dim).

    power = 0.5 splits the singular values evenly between words and contexts (Levy et al. 2015).
    The starting vector is fixed, so the result is deterministic.
    """
    if not sp.issparse(matrix):
        raise TypeError(f"matrix must be a scipy sparse matrix, got {type(matrix).__name__}")
    check_int(dim, "dim", minimum=1, maximum=min(matrix.shape) - 1)
    check_float(power, "power", minimum=0.0, maximum=1.0)
    u, s, _ = svds(matrix.astype(np.float64), k=dim, v0=np.ones(min(matrix.shape)))
    order = np.argsort(-s)                                                             # largest first
    return u[:, order] * s[order] ** power
