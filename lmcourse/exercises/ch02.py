"""Checks for the exercises of chapter 2 (language models)."""
import math
from collections import Counter

import torch

from lmcourse.data import toy_corpus
from lmcourse.exercises._no_autograd import assert_gradients_match, refusing_autograd
from lmcourse.ngram import EOS, NGramLM
from lmcourse.nnlm import NNLM

__all__ = ["add_k", "kneser_ney_bigram", "perplexity", "nnlm_backward"]

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
    never = candidate(_ENGLISH, "zebra", "cat", 0.75)
    want = NGramLM(2, "kneser-ney").fit(_ENGLISH).prob("cat", ["zebra"])
    assert math.isclose(never, want, rel_tol=1e-9), (
        f"'zebra' never occurs in training: with c(zebra) = 0 the bigram term is empty and all the mass goes to the "
        f"lower order, P(cat | zebra) = P_1(cat) = {want:.6f}, got {never}")
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


def nnlm_backward(candidate) -> int:
    """candidate(weights, context, target) -> {"C", "H", "d", "U", "b"}: the gradients of the mean
    cross-entropy of Bengio et al.'s network without a direct connection, y = b + U tanh(d + H x), with x the
    concatenated rows C[w] of the context words, oldest first. ``weights`` holds plain tensors shaped as in
    :class:`lmcourse.nnlm.NNLM`: C (V, m), H (h, (n-1) m), d (h,), U (V, h), b (V,); context (B, n-1) and
    target (B,) int64. Checked against autograd on ``NNLM`` with copied weights, on contexts where a word
    occurs twice (its two gradients must add up); autograd is refused while the candidate runs."""
    for vocab_size, context_size, m, h in ((11, 3, 4, 5), (13, 2, 3, 6)):
        torch.manual_seed(0)
        model = NNLM(vocab_size, context_size, embed_dim=m, hidden_dim=h, direct=False).eval()
        with torch.no_grad():
            model.b.normal_()                         # the package starts b at zero; make it count
            model.H.bias.normal_()
        context = torch.randint(0, vocab_size, (7, context_size))
        context[0] = 2                                # the same word at every position of one context
        target = torch.randint(0, vocab_size, (7,))
        torch.nn.functional.cross_entropy(model(context), target).backward()
        params = {"C": model.C.weight, "H": model.H.weight, "d": model.H.bias, "U": model.U.weight, "b": model.b}
        plain = {k: v.detach().clone() for k, v in params.items()}
        with refusing_autograd("nnlm_backward"):           # no graph can be built while the candidate runs
            got = candidate(plain, context.clone(), target.clone())
        assert_gradients_match(
            got, params, f"(context size {context_size})",
            "The loss is the mean over the batch; softmax minus one-hot is d loss / d y per example; "
            "tanh'(z) = 1 - tanh(z)^2; a word that occurs twice in a context gets both gradients added to its row of C")
    return 2
