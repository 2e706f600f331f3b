"""Checks for the exercises of chapter 2 (language models)."""
import math
from collections import Counter

from lmcourse.data import toy_corpus
from lmcourse.ngram import EOS, NGramLM

__all__ = ["add_k", "kneser_ney_bigram", "perplexity"]

_ENGLISH = [s.split() for s in ["the cat sat", "the dog sat", "a cat ran", "the cat ran home", "a dog sat"]]


def _reference(sentences, prev, word, k):
    pairs = Counter((a, b) for s in sentences for a, b in zip(s, s[1:]))
    context = Counter(a for s in sentences for a in s[:-1])
    vocab_size = len({w for s in sentences for w in s})
    return (pairs[(prev, word)] + k) / (context[prev] + k * vocab_size)


def add_k(candidate) -> int:
    """candidate(sentences, prev, word, k) -> add-k estimate of P(word | prev) from adjacent pairs
    inside the sentences, with |V| = number of distinct words of the corpus."""
    chinese = [line.split() for line in toy_corpus("chinese_bigram")]
    got = candidate(chinese, "的", "词性", 0)
    assert math.isclose(got, 2 / 3), f"with k=0, P(词性 | 的) must be 2/3 (count 2 / count 3), got {got}"
    english = [s.split() for s in ["the cat sat", "the dog sat", "a cat ran"]]
    for prev, word, k in (("the", "cat", 1), ("the", "ran", 1), ("cat", "sat", 0.5), ("sat", "the", 0.1)):
        want, got = _reference(english, prev, word, k), candidate(english, prev, word, k)
        assert math.isclose(got, want, rel_tol=1e-9), (
            f"P({word} | {prev}) with k={k}: expected {want:.4f}, got {got}. Numerator: count(prev, word) + k; "
            f"denominator: count(prev followed by any word) + k * |V|")
    words = sorted({w for s in english for w in s})
    total = sum(candidate(english, "the", w, 1) for w in words)
    assert math.isclose(total, 1.0), f"P(. | the) over the {len(words)} words must sum to 1, got {total}"
    return 3


def kneser_ney_bigram(candidate) -> int:
    """candidate(sentences, prev, word, d) -> interpolated Kneser-Ney P(word | prev) of a bigram
    model fitted to ``sentences`` (lists of words; pad each as <s> ... </s>), equal to
    ``NGramLM(2, "kneser-ney", discount=d)``."""
    chinese = [line.split() for line in toy_corpus("chinese_bigram")]
    for sentences, name in ((chinese, "the four Chinese sentences"), (_ENGLISH, "the English toy sentences")):
        words = sorted({w for s in sentences for w in s}) + [EOS]
        for d in (0.75, 0.3):
            model = NGramLM(2, "kneser-ney", discount=d).fit(sentences)
            for prev in (words[0], words[2], "<s>"):
                for word in words:
                    want, got = model.prob(word, [prev]), candidate(sentences, prev, word, d)
                    assert math.isclose(got, want, rel_tol=1e-9), (
                        f"{name}, d={d}: P({word} | {prev}) should be {want:.6f}, got {got}. Check the "
                        f"continuation counts N1+(. w) (distinct words before w, <s> included) and the "
                        f"uniform 1/|V| with |V| = the distinct words + </s> + <unk>")
    unseen = candidate(_ENGLISH, "home", "cat", 0.75)
    want = NGramLM(2, "kneser-ney").fit(_ENGLISH).prob("cat", ["home"])
    assert math.isclose(unseen, want, rel_tol=1e-9), (
        f"'home' is only ever followed by </s>: P(cat | home) = d * 1 / 1 * P_1(cat) = {want:.6f}, got {unseen}")
    return 3


def perplexity(candidate) -> int:
    """candidate(model, sentences) -> perplexity of an :class:`NGramLM` on ``sentences``, computed
    from ``model.prob(word, history)``: every word and each sentence's </s> is predicted."""
    held_out = [s.split() for s in ["the dog ran", "a cat sat home"]]
    for model in (NGramLM(2, k=1.0).fit(_ENGLISH), NGramLM(3, "kneser-ney").fit(_ENGLISH),
                  NGramLM(1, k=0.5).fit(_ENGLISH)):
        want, got = model.perplexity(held_out), candidate(model, held_out)
        assert math.isclose(got, want, rel_tol=1e-9), (
            f"{model}: perplexity should be {want:.4f}, got {got}. Average -log P over every word AND the "
            f"</s> of each sentence (N = {sum(len(s) + 1 for s in held_out)} tokens here), then exponentiate")
    unseen = candidate(NGramLM(2, k=0.0).fit(_ENGLISH), [["dog", "cat"]])
    assert unseen == math.inf, f"maximum likelihood gives P(cat | dog) = 0, so the perplexity is inf, got {unseen}"
    return 3
