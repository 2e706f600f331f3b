"""Using word vectors: cosine similarity, nearest neighbours, analogies, and the standard benchmarks.

Benchmarks are scored only on the pairs (or questions) whose words all have vectors; how many were
covered is reported beside every score, because a small corpus misses many benchmark words. Scores
on a hundred pairs are noisy: :func:`bootstrap_spearman` resamples the pairs to put an interval on
them, and compares models on the same resampled pairs.
"""
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.stats import rankdata, spearmanr

from lmcourse.validate import check_int, check_nonempty, check_type


class WordVectors:
    """A table of word vectors (n, d) with its words, queried by cosine similarity."""

    def __init__(self, vectors, words: Sequence[str]):
        if isinstance(vectors, torch.Tensor):
            vectors = vectors.detach().cpu().numpy()
        vectors = np.asarray(vectors, dtype=np.float64)
        words = list(words)
        if vectors.ndim != 2 or vectors.shape[0] != len(words):
            raise ValueError(f"vectors must be (len(words), d) = ({len(words)}, d), got {vectors.shape}")
        check_nonempty(words, "words")
        if len(set(words)) != len(words):
            raise ValueError("words must be distinct")
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = vectors
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.unit = vectors / np.where(norms > 0, norms, 1.0)   # (n, d) rows of length 1 (or 0)

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self._id(word)]

    def _id(self, word: str) -> int:
        check_type(word, "word", str)
        if word not in self.index:
            raise KeyError(f"word {word!r} has no vector (not in the vocabulary of {len(self)} words)")
        return self.index[word]

    def similarity(self, word1: str, word2: str) -> float:
        """cos(v1, v2) = v1 . v2 / (|v1| |v2|)."""
        return float(self.unit[self._id(word1)] @ self.unit[self._id(word2)])

    def nearest(self, query, k: int = 10, exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` words most cosine-similar to ``query`` (a word, itself excluded, or a vector)."""
        check_int(k, "k", minimum=1)
        if isinstance(query, str):
            exclude = set(exclude) | {query}
            q = self.unit[self._id(query)]
        else:
            q = np.asarray(query, dtype=np.float64)
            if q.shape != (self.vectors.shape[1],):
                raise ValueError(f"query must be a word or a vector of length {self.vectors.shape[1]}")
            q = q / max(np.linalg.norm(q), 1e-12)
        scores = self.unit @ q                                      # (n, d) @ (d,) -> (n,)
        for w in exclude:
            if w in self.index:
                scores[self.index[w]] = -np.inf
        return self._best(scores, k)

    def _best(self, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` highest-scoring words (n,) with their scores, excluded (-inf) words left out."""
        top = np.argsort(-scores, kind="stable")[:k]
        return [(self.words[i], float(scores[i])) for i in top if np.isfinite(scores[i])]

    def analogy(self, a: str, b: str, c: str, k: int = 1, method: str = "add") -> list[tuple[str, float]]:
        """a : b :: c : ?  The ``k`` best answers (a, b, c excluded) with their scores, by
        :func:`analogy_scores` (``method`` "add" for 3CosAdd, "mul" for 3CosMul)."""
        check_int(k, "k", minimum=1)
        ids = np.array([[self._id(a), self._id(b), self._id(c)]])
        return self._best(analogy_scores(self.unit, ids, method)[0], k)             # scores (n,)


def analogy_scores(unit: np.ndarray, abc: np.ndarray, method: str = "add") -> np.ndarray:
    """Scores of every word as the answer d to a : b :: c : ?, for unit vectors ``unit`` (n, d) and
    word ids ``abc`` (Q, 3) -> (Q, n), with a, b and c themselves set to -inf.

    3CosAdd (Mikolov et al. 2013): cos(d, b - a + c) = (cos(d, b) - cos(d, a) + cos(d, c)) / |b - a + c|.
    3CosMul (Levy and Goldberg, CoNLL 2014, "Linguistic Regularities in Sparse and Explicit Word
    Representations"): cos'(d, b) cos'(d, c) / (cos'(d, a) + 1e-3) with
    cos' = (1 + cos) / 2 in [0, 1], so that no single large similarity dominates the sum.
    """
    if method not in ("add", "mul"):
        raise ValueError(f"method must be 'add' or 'mul', got {method!r}")
    if method == "add":
        query = unit[abc[:, 1]] - unit[abc[:, 0]] + unit[abc[:, 2]]                  # (Q, d)
        query /= np.maximum(np.linalg.norm(query, axis=1, keepdims=True), 1e-12)
        scores = query @ unit.T                                                      # (Q, d) @ (d, n) -> (Q, n)
    else:
        a, b, c = ((1 + unit[abc[:, i]] @ unit.T) / 2 for i in range(3))             # 3 x (Q, n) in [0, 1]
        scores = b * c / (a + 1e-3)
    scores[np.arange(len(abc))[:, None], abc] = -np.inf                              # never answer a, b or c
    return scores


@dataclass
class SimilarityScore:
    """Spearman correlation between model cosines and human scores on the covered pairs."""
    spearman: float
    covered: int
    total: int
    missing_words: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"Spearman {self.spearman:.3f} on {self.covered}/{self.total} pairs"


@dataclass
class AnalogyScore:
    """Accuracy of 3CosAdd or 3CosMul on the questions whose four words all have vectors."""
    total: int                                        # questions asked
    ranks: list[int] = field(default_factory=list)    # per covered question: 1 + words scored above d
    sections: list[str] = field(default_factory=list)  # per covered question: its section

    @property
    def covered(self) -> int:
        return len(self.ranks)

    @property
    def correct(self) -> int:
        return sum(rank == 1 for rank in self.ranks)

    @property
    def by_section(self) -> dict[str, tuple[int, int]]:
        """section -> (correct, covered), in the order the sections first occur."""
        counts: dict[str, list[int]] = {}
        for section, rank in zip(self.sections, self.ranks):
            c = counts.setdefault(section, [0, 0])
            c[0] += int(rank == 1)
            c[1] += 1
        return {section: (c[0], c[1]) for section, c in counts.items()}

    @property
    def accuracy(self) -> float:
        return self.correct / self.covered if self.covered else float("nan")

    @property
    def coverage(self) -> float:
        return self.covered / self.total

    def __str__(self) -> str:
        return (f"accuracy {self.accuracy:.3f} ({self.correct}/{self.covered} covered questions); "
                f"coverage {self.coverage:.1%} of {self.total}")


def evaluate_similarity(wv: WordVectors, pairs: Sequence[tuple[str, str, float]]) -> SimilarityScore:
    """Score ``(word1, word2, human score)`` pairs (e.g. WordSim-353); pairs with a word without a
    vector are skipped and counted, and their words listed in ``missing_words``."""
    check_type(wv, "wv", WordVectors)
    check_nonempty(pairs, "pairs")
    model, human, missing = [], [], set()
    for w1, w2, score in pairs:
        absent = [w for w in (w1, w2) if w not in wv]
        if absent:
            missing.update(absent)
            continue
        model.append(wv.similarity(w1, w2))
        human.append(score)
    # Spearman's rho is undefined for fewer than 2 pairs or a constant column
    defined = len(set(model)) > 1 and len(set(human)) > 1
    rho = float(spearmanr(model, human).statistic) if defined else float("nan")
    return SimilarityScore(rho, len(model), len(pairs), sorted(missing))


def evaluate_analogies(wv: WordVectors, questions: Sequence[tuple[str, str, str, str, str]],
                       method: str = "add", chunk: int = 512) -> AnalogyScore:
    """Score ``(section, a, b, c, d)`` questions: correct if d is the best answer to a : b :: c : ?
    (``method`` "add" = 3CosAdd, "mul" = 3CosMul, see :func:`analogy_scores`), and the rank of d.

    Questions with any word lacking a vector are skipped (and count against coverage only); they are
    scored ``chunk`` at a time to bound memory.
    """
    check_type(wv, "wv", WordVectors)
    check_nonempty(questions, "questions")
    check_int(chunk, "chunk", minimum=1)
    covered = [q for q in questions if all(w in wv for w in q[1:])]
    ranks: list[int] = []
    if covered:
        ids = np.array([[wv.index[w] for w in q[1:]] for q in covered])             # (Q, 4)
        for s in range(0, len(ids), chunk):
            block = ids[s:s + chunk]
            scores = analogy_scores(wv.unit, block[:, :3], method)                  # (q, n)
            right = scores[np.arange(len(block)), block[:, 3]]                       # (q,)
            ranks += (1 + (scores > right[:, None]).sum(1)).tolist()
    return AnalogyScore(len(questions), ranks, [q[0] for q in covered])


def bootstrap_spearman(models: dict[str, Sequence[WordVectors]], pairs: Sequence[tuple[str, str, float]],
                       draws: int = 2000, seed: int = 0) -> tuple[dict[str, float], dict[str, np.ndarray], int]:
    """Spearman's rho of every model on ``draws`` bootstrap resamples of the pairs that *all* models
    cover, the same resamples for every model, so that differences between models are paired.

    models: name -> one or more tables (e.g. one per training seed); a model's value on a resample is
    the mean of its tables' rho. Returns ({name: rho on the shared pairs themselves}, {name: (draws,)
    rho on the resamples}, number of shared pairs). The
    2.5th and 97.5th percentiles of a model's draws are its 95% interval; those of the difference
    of two models' draws, the interval of their difference on the same pairs.
    """
    check_nonempty(models, "models")
    check_nonempty(pairs, "pairs")
    check_int(draws, "draws", minimum=1)
    check_int(seed, "seed", minimum=0)
    for name, tables in models.items():
        check_nonempty(tables, f"models[{name!r}]")
        for wv in tables:
            check_type(wv, f"models[{name!r}]", WordVectors)
    shared = [(a, b, h) for a, b, h in pairs if all(a in wv and b in wv for ts in models.values() for wv in ts)]
    if len(shared) < 3:
        raise ValueError(f"pairs: the models share only {len(shared)} covered pairs, need at least 3")
    picks = np.random.default_rng(seed).integers(len(shared), size=(draws, len(shared)))   # (draws, P)
    human = rankdata(np.array([h for _, _, h in shared])[picks], axis=1)                    # (draws, P)
    human -= human.mean(1, keepdims=True)

    def rho(cosines: np.ndarray) -> np.ndarray:                         # (P,) -> (draws,)
        ranks = rankdata(cosines[picks], axis=1)
        ranks -= ranks.mean(1, keepdims=True)
        return (ranks * human).sum(1) / np.sqrt((ranks ** 2).sum(1) * (human ** 2).sum(1))

    cosines = {name: [np.array([wv.similarity(a, b) for a, b, _ in shared]) for wv in tables]
               for name, tables in models.items()}
    estimates = {name: float(np.mean([spearmanr(c, [h for _, _, h in shared]).statistic for c in cs]))
                 for name, cs in cosines.items()}
    return estimates, {name: np.mean([rho(c) for c in cs], axis=0) for name, cs in cosines.items()}, len(shared)
