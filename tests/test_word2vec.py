import numpy as np
import pytest
import torch
from gensim.models import Word2Vec as GensimWord2Vec

from lmcourse.word2vec import (Word2Vec, encode_corpus, hierarchical_softmax_log_probs, huffman_tree,
                               keep_probabilities, noise_distribution, noise_table, sgd_step, train_word2vec,
                               window_examples)

SENTENCES = [("the cat sat on the mat " * 3).split(), ("the dog sat on the log " * 3).split(),
             "a cat and a dog".split()]


def gensim_model(sentences, **kwargs):
    return GensimWord2Vec(sentences, vector_size=8, min_count=1, workers=1, seed=0, epochs=1, **kwargs)


def test_subsampling_matches_gensim():
    vocab, ids = encode_corpus(SENTENCES, min_count=1)
    counts = torch.tensor([vocab.counts[w] for w in vocab.itos])
    g = gensim_model(SENTENCES, sample=0.05)
    ours = keep_probabilities(counts, sample=0.05)
    theirs = torch.tensor([g.wv.get_vecattr(w, "sample_int") / (2**32 - 1) for w in vocab.itos], dtype=torch.float64)
    torch.testing.assert_close(ours, theirs, atol=1e-8, rtol=0)
    assert ours[vocab.stoi["the"]] < 1 and ours[vocab.stoi["mat"]] == 1
    assert (keep_probabilities(counts, sample=0.0) == 1).all()


def test_noise_distribution_matches_gensim_cumulative_table():
    vocab, _ = encode_corpus(SENTENCES, min_count=1)
    counts = torch.tensor([vocab.counts[w] for w in vocab.itos])
    g = gensim_model(SENTENCES)
    cum = torch.tensor(g.cum_table.astype(np.float64))
    per_word = torch.diff(cum, prepend=torch.zeros(1)) / (2**31 - 1)     # in gensim's word order
    theirs = per_word[[g.wv.key_to_index[w] for w in vocab.itos]]
    torch.testing.assert_close(noise_distribution(counts), theirs, atol=1e-8, rtol=0)


def test_loss_equals_negative_sampling_formula():
    torch.manual_seed(0)
    model = Word2Vec(10, 4)
    with torch.no_grad():
        model.out_embed.weight.normal_()
    inputs = torch.tensor([[1, 2, 3], [4, 0, 0]])
    mask = torch.tensor([[True, True, True], [True, False, False]])
    targets = torch.tensor([[5, 6, 7], [8, 9, 1]])
    vin, vout = model.in_embed.weight.detach().double(), model.out_embed.weight.detach().double()
    losses = []
    for b in range(2):
        h = vin[inputs[b][mask[b]]].mean(0)                       # CBOW: mean of the context
        s = vout[targets[b]] @ h
        sig = torch.sigmoid
        losses.append(-torch.log(sig(s[0])) - torch.log(sig(-s[1:])).sum())
    assert model(inputs, mask, targets).item() == pytest.approx(torch.stack(losses).mean().item(), rel=1e-5)


def test_window_examples_stay_inside_sentences():
    ids = torch.arange(7)
    sent = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    g = torch.Generator().manual_seed(0)
    inputs, mask, outputs = window_examples(ids, sent, window=1, cbow=False, generator=g)
    pairs = {(i.item(), o.item()) for i, o in zip(inputs[:, 0], outputs)}
    assert pairs == {(0, 1), (1, 0), (1, 2), (2, 1), (3, 4), (4, 3), (5, 6), (6, 5)}
    inputs, mask, outputs = window_examples(ids, sent, window=2, cbow=True, generator=g)
    assert len(outputs) == 7 and mask.shape == (7, 4)
    for ctx, m, centre in zip(inputs, mask, outputs):
        assert all(sent[c] == sent[centre] and c != centre for c in ctx[m])
    inputs, mask, outputs = window_examples(ids, torch.zeros(7, dtype=torch.long), window=2, cbow=False,
                                            generator=None)                 # the full window, no shrinking
    assert len(outputs) == 2 * (2 + 2 + 2 + 2 + 2) + 2 * 2 + 2 * 1 - 4      # 7 words, window 2: 22 pairs
    with pytest.raises(ValueError, match="window must be"):
        window_examples(ids, sent, window=0, cbow=True, generator=None)


@pytest.mark.parametrize("sg", [True, False])
def test_training_pulls_shared_contexts_together(sg):
    sentences = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "the", "mat"],
                 ["a", "bird", "flew", "over", "a", "tree"]] * 30
    vocab, ids = encode_corpus(sentences, min_count=1)
    model, history = train_word2vec(ids, len(vocab), sg=sg, dim=16, window=2, negative=3, sample=0,
                                    epochs=40, batch_size=64, seed=0)
    v = torch.nn.functional.normalize(model.vectors, dim=1)
    cos = lambda a, b: (v[vocab.stoi[a]] @ v[vocab.stoi[b]]).item()
    assert cos("cat", "dog") > cos("cat", "bird") + 0.2
    assert np.mean(history.train_loss[-20:]) < np.mean(history.train_loss[:20])
    again, _ = train_word2vec(ids, len(vocab), sg=sg, dim=16, window=2, negative=3, sample=0,
                              epochs=2, batch_size=64, seed=0)
    same, _ = train_word2vec(ids, len(vocab), sg=sg, dim=16, window=2, negative=3, sample=0,
                             epochs=2, batch_size=64, seed=0)
    torch.testing.assert_close(again.vectors, same.vectors)      # seeded: bit-for-bit repeatable


def test_encode_corpus_drops_rare_words():
    vocab, ids = encode_corpus(SENTENCES, min_count=2)
    assert "mat" in vocab and "and" not in vocab
    assert ids[2] == [vocab.stoi[w] for w in ["a", "cat", "a", "dog"]]


def test_bad_inputs():
    counts = torch.tensor([5, 3, 1])
    with pytest.raises(ValueError, match="sample must be"):
        keep_probabilities(counts, sample=-1e-3)
    with pytest.raises(ValueError, match="positive"):
        keep_probabilities(torch.tensor([3, 0]))
    with pytest.raises(ValueError, match="not all zero"):
        noise_distribution(torch.zeros(3))
    with pytest.raises(ValueError, match="sentences must not be empty"):
        encode_corpus([])
    with pytest.raises(TypeError, match="lists of tokens"):
        encode_corpus(["the cat sat"])
    with pytest.raises(ValueError, match="fewer than 2 words"):
        encode_corpus([["a", "b"]], min_count=5)
    with pytest.raises(ValueError, match="window must be"):
        train_word2vec([[0, 1, 2]], 3, window=0)
    with pytest.raises(ValueError, match="sentences holds id 7"):
        train_word2vec([[0, 1, 7]], 3)
    with pytest.raises(ValueError, match="lr must be"):
        train_word2vec([[0, 1, 2]], 3, lr=-0.1)
    with pytest.raises(ValueError, match="expected inputs"):
        Word2Vec(5, 2)(torch.zeros(2, 1, dtype=torch.long), torch.ones(2, 2, dtype=torch.bool),
                       torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="expected inputs"):
        sgd_step(Word2Vec(5, 2), torch.zeros(2, 1, dtype=torch.long), torch.ones(2, 1, dtype=torch.bool),
                 torch.zeros(3, 3, dtype=torch.long), 0.1)
    with pytest.raises(TypeError, match="model must be"):
        sgd_step(torch.nn.Linear(2, 2), torch.zeros(2, 1, dtype=torch.long), torch.ones(2, 1, dtype=torch.bool),
                 torch.zeros(2, 3, dtype=torch.long), 0.1)


def test_skipgram_matches_gensim_on_the_news_corpus():
    """The chapter's parity experiment: same tokens, same settings, WordSim-353 Spearman compared.

    Tolerance: on this 57k-word corpus only 99 WordSim-353 pairs are covered, and gensim itself moves
    by about 0.06 between seeds 0 and 1 (0.267 vs 0.211), so 0.1 is the honest bound; the chapter
    reports the actual difference.
    """
    from lmcourse.data import news_documents, wordsim353
    from lmcourse.ngram import tokenized_sentences
    from lmcourse.similarity import WordVectors, evaluate_similarity
    sentences = tokenized_sentences(news_documents("all"))
    vocab, ids = encode_corpus(sentences, min_count=3)
    ours, _ = train_word2vec(ids, len(vocab), sg=True, dim=50, window=5, negative=5, sample=1e-3,
                             epochs=30, batch_size=4096, seed=0)
    theirs = GensimWord2Vec(sentences, vector_size=50, window=5, negative=5, sample=1e-3, min_count=3,
                            sg=1, epochs=30, workers=1, seed=0)
    a = evaluate_similarity(WordVectors(ours.vectors, vocab.itos), wordsim353())
    b = evaluate_similarity(WordVectors(theirs.wv.vectors, theirs.wv.index_to_key), wordsim353())
    assert a.covered == b.covered == 99
    assert b.spearman > 0.15, "gensim itself should find some signal on this corpus"
    assert abs(a.spearman - b.spearman) <= 0.1, f"lmcourse {a.spearman:.3f} vs gensim {b.spearman:.3f}"


@pytest.mark.parametrize("cbow", [False, True])
def test_sgd_step_is_word2vec_c_update(cbow):
    """The written-out update, checked example by example against autograd on Word2Vec.forward's loss.

    Skip-gram: exactly per-example SGD. CBOW: word2vec.c (and gensim, cbow_mean=1) add the full error
    neu1e = -lr dL/dh to every context word, which is n times the exact gradient step of each of the
    n averaged vectors; outputs move by the exact gradient step. Repeated words add their updates.
    """
    torch.manual_seed(0)
    model = Word2Vec(7, 5)
    torch.nn.init.normal_(model.out_embed.weight, std=0.3)
    B, L, K, lr = 6, (3 if cbow else 1), 4, 0.1
    inputs = torch.randint(0, 7, (B, L))
    mask = torch.rand(B, L) < 0.7 if cbow else torch.ones(B, 1, dtype=torch.bool)
    mask[:, 0] = True
    targets = torch.randint(0, 7, (B, 1 + K))              # with 7 words, repeats are certain
    expected_in, expected_out = model.in_embed.weight.detach().clone(), model.out_embed.weight.detach().clone()
    for b in range(B):
        reference = Word2Vec(7, 5)
        reference.load_state_dict(model.state_dict())
        reference(inputs[b:b + 1], mask[b:b + 1], targets[b:b + 1]).backward()
        n = int(mask[b].sum())                             # 1 for skip-gram
        expected_in -= lr * n * reference.in_embed.weight.grad.to_dense()
        expected_out -= lr * reference.out_embed.weight.grad.to_dense()
    loss = model(inputs, mask, targets).detach()
    returned = sgd_step(model, inputs, mask, targets, lr)
    torch.testing.assert_close(returned, loss)
    torch.testing.assert_close(model.in_embed.weight.detach(), expected_in, atol=1e-6, rtol=0)
    torch.testing.assert_close(model.out_embed.weight.detach(), expected_out, atol=1e-6, rtol=0)


def test_cbow_update_matches_a_loop_like_word2vec_c():
    """One CBOW example by word2vec.c's loop (neu1 = mean, neu1e accumulated, then added in full)."""
    torch.manual_seed(1)
    model = Word2Vec(9, 4)
    torch.nn.init.normal_(model.out_embed.weight, std=0.5)
    syn0, syn1neg = model.in_embed.weight.detach().clone(), model.out_embed.weight.detach().clone()
    context, targets, alpha = [1, 2, 3, 4], [5, 6, 7], 0.05
    neu1 = syn0[context].mean(0)
    neu1e = torch.zeros(4)
    for d, t in enumerate(targets):
        label = 1.0 if d == 0 else 0.0
        g = (label - torch.sigmoid(neu1 @ syn1neg[t])) * alpha
        neu1e += g * syn1neg[t]
        syn1neg[t] += g * neu1
    syn0[context] += neu1e
    sgd_step(model, torch.tensor([context]), torch.ones(1, 4, dtype=torch.bool), torch.tensor([targets]), alpha)
    torch.testing.assert_close(model.in_embed.weight.detach(), syn0)
    torch.testing.assert_close(model.out_embed.weight.detach(), syn1neg)


@pytest.mark.parametrize("counts", [[100, 40, 21, 13, 8, 6, 3, 1], [50, 20, 12, 10, 7, 5, 5, 3, 1]])
def test_huffman_tree_equals_gensims(counts):
    tokens = [f"w{i}" for i, c in enumerate(counts) for _ in range(c)]
    g = GensimWord2Vec([tokens], vector_size=4, min_count=1, hs=1, negative=0, epochs=1, workers=1, seed=0)
    words = g.wv.index_to_key                                # gensim's order
    freq = [g.wv.get_vecattr(w, "count") for w in words]
    codes, points = huffman_tree(torch.tensor(freq))
    theirs = [g.wv.get_vecattr(w, "code").tolist() for w in words]
    # both are optimal codes: the same expected code length (ties may be broken differently)
    assert sum(f * len(c) for f, c in zip(freq, codes)) == sum(f * len(c) for f, c in zip(freq, theirs))
    if len(set(counts)) == len(counts) and counts[0] == 100:   # no ties anywhere: the very same tree
        assert codes == theirs
        assert points == [g.wv.get_vecattr(w, "point").tolist() for w in words]
    assert len(codes[words.index("w0")]) < len(codes[words.index(f"w{len(counts) - 1}")])
    with pytest.raises(ValueError, match="counts must be"):
        huffman_tree(torch.tensor([3]))


def test_hierarchical_softmax_is_a_distribution():
    torch.manual_seed(0)
    counts = torch.tensor([40, 30, 9, 9, 5, 4, 2, 1])
    codes, points = huffman_tree(counts)
    h, nodes = torch.randn(3, 6, dtype=torch.float64), torch.randn(7, 6, dtype=torch.float64)
    log_p = hierarchical_softmax_log_probs(h, nodes, codes, points)           # (3, 8)
    torch.testing.assert_close(log_p.exp().sum(1), torch.ones(3, dtype=torch.float64))
    word = 5                                                                 # one word, by hand
    by_hand = sum(torch.log(torch.sigmoid((1 - 2 * c) * (nodes[p] @ h[0]))) for c, p in zip(codes[word], points[word]))
    torch.testing.assert_close(log_p[0, word], by_hand)
    with pytest.raises(ValueError, match="expected h"):
        hierarchical_softmax_log_probs(h, nodes[:5], codes, points)


def test_noise_table_follows_the_noise_distribution():
    probs = noise_distribution(torch.tensor([1000, 300, 50, 7, 1]))
    table = noise_table(probs, size=10_000)
    assert table.shape == (10_000,) and table.dtype == torch.long
    shares = torch.bincount(table, minlength=5).double() / len(table)
    torch.testing.assert_close(shares, probs, atol=1e-4, rtol=0)     # slots are rounded to 1/size
    assert (table[1:] >= table[:-1]).all()                            # word ids in order, each in one run
    with pytest.raises(ValueError, match="probs must be"):
        noise_table(torch.tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="size must be"):
        noise_table(probs, size=0)
