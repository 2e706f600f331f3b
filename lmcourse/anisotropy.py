"""Anisotropy of sentence vectors, BERT-whitening, and the word-frequency account of anisotropy.

Raw BERT vectors of unrelated sentences share a large common direction, so their cosine is far above
0: the vectors fill a narrow cone (Ethayarajh 2019). :func:`mean_pairwise_cosine` measures it.

BERT-whitening (Su et al. 2021) fits the mean mu and covariance Sigma = U diag(lambda) U^T of the
vectors of training sentences and maps every vector x to (x - mu) U diag(lambda)^(-1/2): the training
vectors then have mean 0 and covariance I, so the mean cosine of new sentences from the same
distribution is near 0 *by construction*. It is not evidence that whitened vectors compare sentences
better; only a task score can say that.

Li et al. (2020, BERT-flow) explained the anisotropy by word frequency: the embeddings of frequent words
lie close to the origin and close to each other (dense), those of rare words far out and far apart
(sparse), leaving "holes" in the space. :func:`frequency_geometry` measures both halves of that claim
on a model's token-embedding table against the words' counts in its training text.
"""
import numpy as np
import torch
from scipy.stats import spearmanr

from lmcourse.validate import check_int, check_type


def _matrix(vectors, name: str) -> np.ndarray:
    if isinstance(vectors, torch.Tensor):
        vectors = vectors.detach().cpu().numpy()
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] < 2:
        raise ValueError(f"{name} must be (n, C) with n >= 2, got shape {v.shape}")
    return v


def pairwise_cosines(vectors) -> np.ndarray:
    """Cosines of the n(n-1)/2 pairs of distinct rows of ``vectors`` (n, C), row-major upper triangle."""
    v = _matrix(vectors, "vectors")
    unit = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)   # (n, C)
    cos = unit @ unit.T                                                        # (n, C) @ (C, n) -> (n, n)
    return cos[np.triu_indices(len(v), k=1)]


def mean_pairwise_cosine(vectors) -> float:
    """Mean cosine of two distinct rows of ``vectors`` (n, C): about 0 for isotropic vectors, near 1
    for vectors in a narrow cone."""
    return float(pairwise_cosines(vectors).mean())


class Whitening:
    """BERT-whitening: x -> (x - mu) W, W = U diag(lambda)^(-1/2) from Sigma = U diag(lambda) U^T.

    Fitted on (n, C) training vectors (:meth:`fit`); calling it maps (m, C) -> (m, k), keeping the
    ``k`` directions of largest variance (all C by default; Su et al. also cut to k < C).
    """

    def __init__(self, mean: np.ndarray, transform: np.ndarray):
        self.mean, self.transform = mean, transform          # (C,), (C, k)

    @classmethod
    def fit(cls, vectors, k: int | None = None) -> "Whitening":
        v = _matrix(vectors, "vectors")
        k = v.shape[1] if k is None else k
        check_int(k, "k", minimum=1, maximum=v.shape[1])
        mu = v.mean(axis=0)                                                    # (C,)
        sigma = np.cov(v - mu, rowvar=False)                                   # (C, C)
        u, lam, _ = np.linalg.svd(sigma)                                       # Sigma = U diag(lam) U^T
        return cls(mu, u[:, :k] / np.sqrt(np.maximum(lam[:k], 1e-12)))       # (C, k)

    def __call__(self, vectors) -> np.ndarray:
        v = np.asarray(vectors.detach().cpu() if isinstance(vectors, torch.Tensor) else vectors, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != len(self.mean):
            raise ValueError(f"vectors must be (m, {len(self.mean)}), got shape {v.shape}")
        return (v - self.mean) @ self.transform                                # (m, C) @ (C, k) -> (m, k)


def knn_distance(vectors, k: int = 3) -> np.ndarray:
    """Mean Euclidean distance of every row of ``vectors`` (n, C) to its ``k`` nearest other rows (n,):
    small where the rows are dense, large where they are sparse."""
    v = _matrix(vectors, "vectors")
    check_int(k, "k", minimum=1, maximum=len(v) - 1)
    sq = (v ** 2).sum(1)
    out = np.empty(len(v))
    for s in range(0, len(v), 1024):                                           # 1024 rows at a time
        d2 = np.maximum(sq[s:s + 1024, None] + sq[None, :] - 2 * v[s:s + 1024] @ v.T, 0.0)  # (b, n) squared
        d2[np.arange(len(d2)), np.arange(s, s + len(d2))] = np.inf           # not itself
        out[s:s + 1024] = np.sqrt(np.partition(d2, k - 1, axis=1)[:, :k]).mean(1)
    return out


def frequency_geometry(embeddings, counts, k: int = 3, buckets=(0, 100, 500, 1000)) -> dict:
    """Where frequent and rare tokens lie in an embedding table.

    embeddings (V, C): e.g. BERT's input token embeddings; counts (V,): each token's count in the
    model's training text. Tokens with count 0 (never seen, e.g. the special tokens) are left out.
    Returns per-token arrays ``count``, ``norm`` (|e_w|) and ``knn`` (:func:`knn_distance` among the
    kept tokens), Spearman's rho of each against the count, and per frequency-rank bucket
    (``buckets``: the first rank of each, 0 = most frequent) the mean norm, kNN distance and cosine
    between two of its tokens (near 1: they point one way).
    """
    e = _matrix(embeddings, "embeddings")
    c = np.asarray(counts.cpu() if isinstance(counts, torch.Tensor) else counts, dtype=np.float64)
    if c.shape != (len(e),):
        raise ValueError(f"counts must be ({len(e)},) like the rows of embeddings, got shape {c.shape}")
    check_type(buckets, "buckets", tuple)
    kept = np.flatnonzero(c > 0)
    order = kept[np.argsort(-c[kept], kind="stable")]                          # most frequent first
    e, c = e[order], c[order]
    norm, knn = np.linalg.norm(e, axis=1), knn_distance(e, k)
    edges = [b for b in buckets if b < len(c)] + [len(c)]
    rows = [{"ranks": f"{lo + 1}-{hi}", "tokens": hi - lo, "median_count": float(np.median(c[lo:hi])),
             "mean_norm": float(norm[lo:hi].mean()), "mean_knn": float(knn[lo:hi].mean()),
             "mean_cosine": mean_pairwise_cosine(e[lo:hi]) if hi - lo > 1 else float("nan")}
            for lo, hi in zip(edges[:-1], edges[1:])]
    return {"count": c, "norm": norm, "knn": knn, "k": k,
            "spearman_norm": float(spearmanr(c, norm).statistic),
            "spearman_knn": float(spearmanr(c, knn).statistic), "buckets": rows}
