"""Statistical n-gram language models: counting, add-k and Kneser-Ney smoothing, perplexity, sampling.

An n-gram model of order n conditions each word on the n - 1 words before it (Markov assumption):
a bigram (n = 2) looks at one previous word, a trigram at two (correction 1). Sentences are padded
with n - 1 ``<s>`` on the left and one ``</s>`` on the right, so the model also learns how sentences
start and end; ``</s>`` is predicted (and counted in perplexity), ``<s>`` never is.
"""
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from lmcourse.tokenize import word_tokenize
from lmcourse.validate import check_float, check_int, check_nonempty, check_type
from lmcourse.vocab import PAD, UNK, Vocab

BOS, EOS = "<s>", "</s>"
#: the special tokens of a language-model vocabulary, in id order
LM_SPECIALS = (PAD, UNK, BOS, EOS)
SMOOTHINGS = ("add-k", "kneser-ney")
_SENTENCE_END = {".", "!", "?"}


def tokenized_sentences(texts: Iterable[str]) -> list[list[str]]:
    """Word-tokenize texts and cut them into sentences after ``.``, ``!`` and ``?``."""
    texts = list(texts)
    check_nonempty(texts, "texts")
    out = []
    for text in texts:
        check_type(text, "texts[i]", str)
        sentence = []
        for token in word_tokenize(text):
            sentence.append(token)
            if token in _SENTENCE_END:
                out.append(sentence)
                sentence = []
        if sentence:
            out.append(sentence)
    return out


def lm_vocab(sentences: Sequence[Sequence[str]], min_freq: int = 1, max_size: int | None = None) -> Vocab:
    """A vocabulary for language modelling: ``<pad> <unk> <s> </s>``, then words seen ``min_freq`` times
    (at most the ``max_size`` most frequent of them)."""
    check_nonempty(sentences, "sentences")
    return Vocab.from_texts(sentences, min_freq=min_freq, max_size=max_size, specials=LM_SPECIALS)


class NGramLM:
    """An n-gram language model of any order estimated by counting.

    smoothing="add-k":  P(w | h) = (c(h, w) + k) / (c(h) + k |V|); k = 0 is the maximum-likelihood
    estimate, k = 1 is add-one (Laplace) smoothing. |V| counts every word the model can predict.
    smoothing="kneser-ney": interpolated Kneser-Ney with absolute ``discount`` (Chen and Goodman 1999).
    """

    def __init__(self, order: int, smoothing: str = "add-k", k: float = 1.0, discount: float = 0.75):
        check_int(order, "order", minimum=1)
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
        check_float(k, "k", minimum=0.0)
        check_float(discount, "discount", minimum=0.0, maximum=1.0)
        self.order, self.smoothing, self.k, self.discount = order, smoothing, float(k), float(discount)
        self.vocab: Vocab | None = None

    def fit(self, sentences: Sequence[Sequence[str]], vocab: Vocab | None = None,
            min_freq: int = 1) -> "NGramLM":
        """Count every m-gram (m = 1..order) of the padded ``sentences`` (lists of tokens).

        ``vocab`` defaults to :func:`lm_vocab` (``sentences``, ``min_freq``); words outside it
        are counted as ``<unk>``.
        """
        check_nonempty(sentences, "sentences")
        if any(isinstance(s, str) for s in sentences):
            raise TypeError("sentences must be lists of tokens, not strings; tokenize them first")
        self.vocab = lm_vocab(sentences, min_freq) if vocab is None else vocab
        check_type(self.vocab, "vocab", Vocab)
        for token in (UNK, BOS, EOS):
            if token not in self.vocab:
                raise ValueError(f"vocab must contain {token}; build it with lm_vocab()")
        # what the model can predict: every token except padding and the start symbol
        self.outcomes = [t for t in self.vocab.itos if t not in (PAD, BOS)]
        self.index = {t: i for i, t in enumerate(self.outcomes)}
        # counts[m][context of m - 1 tokens][word] = c(context, word)
        self.counts: list[dict[tuple, Counter]] = [defaultdict(Counter) for _ in range(self.order + 1)]
        for sentence in sentences:
            seq = self._pad(sentence)
            for i in range(self.order - 1, len(seq)):
                for m in range(1, self.order + 1):
                    self.counts[m][tuple(seq[i - m + 1:i])][seq[i]] += 1
        # Kneser-Ney's lower orders count distinct left neighbours: N1+(. h w)
        self.continuation: list[dict[tuple, Counter]] = [defaultdict(Counter) for _ in range(self.order)]
        for m in range(2, self.order + 1):
            for context, nexts in self.counts[m].items():
                for word in nexts:
                    self.continuation[m - 1][context[1:]][word] += 1
        self._base = None   # the order-1 Kneser-Ney distribution, the same for every context
        self._arrays: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        return self

    def _pad(self, sentence: Sequence[str]) -> list[str]:
        known = [t if t in self.vocab else UNK for t in sentence]
        return [BOS] * (self.order - 1) + known + [EOS]

    def _check_fitted(self) -> None:
        if self.vocab is None:
            raise RuntimeError("call fit(sentences) before using the model")

    def markov_context(self, context: Sequence[str]) -> tuple:
        """What the model conditions on: the last order - 1 tokens of ``context`` (left-padded
        with <s>, unknown words -> <unk>); empty for a unigram model."""
        if isinstance(context, str):
            raise TypeError("context must be a sequence of tokens, not a str")
        padded = [BOS] * (self.order - 1) + [t if t in self.vocab else UNK for t in context]
        return tuple(padded[len(padded) - (self.order - 1):]) if self.order > 1 else ()

    def count(self, *ngram: str) -> int:
        """c(w_1 ... w_m): how often the m-gram occurred (as a context followed by its last word)."""
        self._check_fitted()
        if not 1 <= len(ngram) <= self.order:
            raise ValueError(f"ngram must have 1 to {self.order} tokens, got {len(ngram)}")
        return self.counts[len(ngram)][tuple(ngram[:-1])][ngram[-1]]

    def distribution(self, context: Sequence[str] = ()) -> np.ndarray:
        """P(w | context) for every w in ``self.outcomes``: a vector that sums to 1.

        Under maximum likelihood (add-k with k = 0) an unseen context has no estimate: all zeros.
        """
        self._check_fitted()
        h = self.markov_context(context)
        if self.smoothing == "add-k":
            ids, counts = self._seen(self.order, h)
            p = np.full(len(self.outcomes), self.k)
            p[ids] += counts
            total = p.sum()
            return p / total if total > 0 else p
        return self._kneser_ney(h)

    def _seen(self, m: int, h: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The words seen after the m - 1 tokens ``h`` (ids into ``outcomes``) and their counts:
        c(h, w) at the model's order, continuation counts N1+(. h w) below it. Cached."""
        key = (m, h)
        if key not in self._arrays:
            table = self.counts[m] if m == self.order else self.continuation[m]
            nexts = table.get(h, Counter())
            self._arrays[key] = (np.array([self.index[w] for w in nexts], dtype=np.int64),
                                 np.array(list(nexts.values()), dtype=np.float64))
        return self._arrays[key]

    def _kneser_ney(self, h: tuple) -> np.ndarray:
        # P_0 is uniform; order m interpolates discounted counts with the order m - 1 estimate:
        # P_m(w|h) = max(c(h,w) - d, 0) / c(h) + d N1+(h .) / c(h) * P_{m-1}(w | h[1:])
        # using raw counts c at the top order and continuation counts N1+(. h w) below it.
        if self._base is None:
            self._base = self._interpolate(np.full(len(self.outcomes), 1.0 / len(self.outcomes)), 1, ())
        p = self._base
        for m in range(2, self.order + 1):
            p = self._interpolate(p, m, h[len(h) - (m - 1):])
        return p

    def _interpolate(self, lower: np.ndarray, m: int, h: tuple) -> np.ndarray:
        ids, counts = self._seen(m, h)               # the words w seen after h, c(h, w) (or N1+(. h w))
        total = counts.sum()                         # c(h)
        if total == 0:   # context never seen: back off entirely
            return lower
        d = self.discount
        p = lower * (d * len(ids) / total)           # d N1+(h .) / c(h) * P_{m-1}(w | h[1:])
        p[ids] += np.maximum(counts - d, 0.0) / total    # + max(c(h, w) - d, 0) / c(h)
        return p

    def count_of_counts(self, m: int | None = None) -> Counter:
        """n_r: how many distinct m-grams (default: the model's order) occurred exactly r times."""
        self._check_fitted()
        m = self.order if m is None else m
        check_int(m, "m", minimum=1, maximum=self.order)
        return Counter(c for nexts in self.counts[m].values() for c in nexts.values())

    def estimated_discount(self, m: int | None = None) -> float:
        """Ney, Essen and Kneser's (1994) estimate of the absolute discount, D = n1 / (n1 + 2 n2),
        from the numbers of m-grams seen once (n1) and twice (n2)."""
        n = self.count_of_counts(m)
        if n[1] + n[2] == 0:
            raise ValueError("no m-gram occurred once or twice: the estimate is undefined")
        return n[1] / (n[1] + 2 * n[2])

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """P(word | context); ``word`` outside the vocabulary is scored as ``<unk>``."""
        check_type(word, "word", str)
        self._check_fitted()
        if word in (PAD, BOS):
            raise ValueError(f"word must be a predictable token, not {word}")
        return float(self.distribution(context)[self.index[word if word in self.vocab else UNK]])

    def token_logprobs(self, sentence: Sequence[str]) -> list[float]:
        """log P(w_i | history) for each word of the sentence and its </s> (-inf where P = 0)."""
        self._check_fitted()
        if isinstance(sentence, str):
            raise TypeError("sentence must be a list of tokens, not a str; tokenize it first")
        seq = self._pad(sentence)
        out, cache = [], {}
        for i in range(self.order - 1, len(seq)):
            h = tuple(seq[i - self.order + 1:i])
            if h not in cache:
                cache[h] = self.distribution(h)
            p = cache[h][self.index[seq[i]]]
            out.append(math.log(p) if p > 0 else -math.inf)
        return out

    def sentence_logprob(self, sentence: Sequence[str]) -> tuple[float, int]:
        """(sum of log P over the sentence's words and its </s>, number of predicted tokens)."""
        logprobs = self.token_logprobs(sentence)
        return sum(logprobs), len(logprobs)

    def perplexity(self, sentences: Sequence[Sequence[str]]) -> float:
        """exp(-(1/N) sum log P(w_i | history)) over all N predicted tokens; inf if one has P = 0."""
        check_nonempty(sentences, "sentences")
        logprob, n = 0.0, 0
        for sentence in sentences:
            lp, m = self.sentence_logprob(sentence)
            logprob, n = logprob + lp, n + m
        return math.exp(-logprob / n) if math.isfinite(logprob) else math.inf

    def generate(self, max_len: int = 30, seed: int = 0, context: Sequence[str] = (), min_len: int = 1) -> list[str]:
        """Sample words one at a time from P(w | last order - 1 words) until </s> or ``max_len``.

        The first ``min_len`` words are drawn with </s> left out (the rest renormalised), so a
        sample is never empty: a unigram model, which ignores that nothing has been said yet,
        would otherwise end 1 sample in 25 before its first word.
        """
        check_int(max_len, "max_len", minimum=1)
        check_int(min_len, "min_len", minimum=0, maximum=max_len)
        check_int(seed, "seed", minimum=0)
        self._check_fitted()
        rng = np.random.default_rng(seed)
        out = list(context)
        for step in range(max_len):
            p = self.distribution(out)
            if step < min_len:
                p = p.copy()
                p[self.index[EOS]] = 0.0
            if p.sum() == 0:   # maximum likelihood and a context never seen: nothing to sample
                break
            word = self.outcomes[rng.choice(len(p), p=p / p.sum())]
            if word == EOS:
                break
            out.append(word)
        return out[len(context):]

    def __repr__(self) -> str:
        setting = f"k={self.k}" if self.smoothing == "add-k" else f"discount={self.discount}"
        return f"NGramLM(order={self.order}, smoothing={self.smoothing!r}, {setting})"
