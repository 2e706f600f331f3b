"""Chapter 2's models against independent implementations: interpolated Kneser-Ney written
straight from Chen and Goodman's formula, and the NNLM as a composition of torch.nn layers."""
from collections import Counter

import pytest
import torch

from lmcourse import set_seed
from lmcourse.data import news_documents
from lmcourse.ngram import BOS, EOS, NGramLM, tokenized_sentences
from lmcourse.nnlm import NNLM
from lmcourse.vocab import UNK

TOY = [s.split() for s in ["a b a c", "b a b", "c a a b c", "a c b", "b b c a"]]


def kneser_ney_reference(sentences, order, d):
    """Interpolated Kneser-Ney (Chen and Goodman 1999, eq. 17), written out level by level.

    Top order: P(w|h) = max(c(hw) - d, 0)/c(h) + d N1+(h.)/c(h) P(w|h'); lower orders use the
    continuation count N1+(.h'w) in place of c; below order 1 sits the uniform distribution.
    Every training word is in the vocabulary (<unk> is predicted but never seen).
    """
    words = sorted({w for s in sentences for w in s} | {EOS, UNK})
    grams = Counter()
    for s in sentences:
        seq = [BOS] * (order - 1) + s + [EOS]
        for i in range(order - 1, len(seq)):
            for m in range(1, order + 1):
                grams[tuple(seq[i - m + 1:i + 1])] += 1
    left = {}   # continuation counts: the number of distinct words seen before an m-gram
    for g in grams:
        if len(g) >= 2:
            left.setdefault(g[1:], set()).add(g[0])

    def p(w, h):
        if h is None:
            return 1 / len(words)
        m = len(h) + 1
        count = (lambda g: grams[g]) if m == order else (lambda g: len(left.get(g, ())))
        seen = {x: count(h + (x,)) for x in words if count(h + (x,)) > 0}
        total = sum(seen.values())
        shorter = h[1:] if h else None
        if total == 0:
            return p(w, shorter)
        return max(seen.get(w, 0) - d, 0) / total + d * len(seen) / total * p(w, shorter)

    return words, p


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("d", [0.5, 0.75])
def test_kneser_ney_equals_reference_on_toy_corpus(order, d):
    words, reference = kneser_ney_reference(TOY, order, d)
    model = NGramLM(order, "kneser-ney", discount=d).fit(TOY)
    for context in ([], ["a"], ["b", "a"], ["c", "c"], ["a", "b"]):
        h = model.markov_context(context)
        for w in words:
            assert model.prob(w, context) == pytest.approx(reference(w, h), rel=1e-12)


def test_kneser_ney_equals_reference_on_news_sentences():
    sentences = tokenized_sentences(news_documents("train")[:3])
    assert len(sentences) >= 10
    words, reference = kneser_ney_reference(sentences, 3, 0.75)
    model = NGramLM(3, "kneser-ney").fit(sentences)
    for s in sentences[:4]:
        seq = [BOS, BOS] + s + [EOS]
        for i in range(2, len(seq)):
            h = tuple(seq[i - 2:i])
            assert model.prob(seq[i], list(h)) == pytest.approx(reference(seq[i], h), rel=1e-10)
    h = (s[0], s[1])   # a seen context: the whole distribution agrees and sums to 1
    p = model.distribution(list(h))
    assert p.sum() == pytest.approx(1.0)
    assert [model.prob(w, list(h)) for w in words] == pytest.approx([reference(w, h) for w in words], rel=1e-10)


@pytest.mark.parametrize("direct", [True, False])
def test_nnlm_forward_equals_torch_nn_composition(direct):
    """y = b + W x + U tanh(d + H x), built from torch.nn.Embedding, torch.nn.Linear and torch.tanh."""
    set_seed(0)
    V, n, m, h = 11, 3, 4, 6
    model = NNLM(V, n, m, h, direct=direct)
    with torch.no_grad():
        model.b.normal_()   # b starts at zero: make it count
    embedding = torch.nn.Embedding(V, m)
    hidden = torch.nn.Linear(n * m, h)
    output = torch.nn.Linear(h, V)            # U with bias b
    embedding.weight.data.copy_(model.C.weight)
    hidden.weight.data.copy_(model.H.weight)
    hidden.bias.data.copy_(model.H.bias)
    output.weight.data.copy_(model.U.weight)
    output.bias.data.copy_(model.b)
    context = torch.randint(0, V, (5, n))
    x = embedding(context).reshape(5, n * m)
    y = output(torch.tanh(hidden(x)))
    if direct:
        direct_layer = torch.nn.Linear(n * m, V, bias=False)
        direct_layer.weight.data.copy_(model.W.weight)
        y = y + direct_layer(x)
    model.eval()
    torch.testing.assert_close(model(context), y, atol=1e-6, rtol=1e-6)
