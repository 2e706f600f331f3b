import numpy as np
import pytest
import scipy.sparse as sp
import torch

from lmcourse.cooccurrence import cooccurrence_matrix, ppmi, svd_embeddings
from lmcourse.glove import GloVe, _compiled_epoch, glove_adagrad_epoch, glove_weight, train_glove

SENTENCES = [[0, 1, 2, 1], [2, 3], [4]]


def test_cooccurrence_counts_by_hand():
    x = cooccurrence_matrix(SENTENCES, 5, window=2).toarray()
    expected = np.zeros((5, 5))
    for a, b, w in [(0, 1, 1), (1, 2, 1), (2, 1, 1), (0, 2, 0.5), (1, 1, 0.5), (2, 3, 1)]:
        expected[a, b] += w
        expected[b, a] += w
    np.testing.assert_allclose(x, expected)
    assert cooccurrence_matrix(SENTENCES, 5, window=1, distance_weighting=False)[0, 2] == 0


def test_ppmi_matches_dense_formula():
    rng = np.random.default_rng(0)
    dense = rng.poisson(1.0, size=(6, 6)).astype(float)
    for alpha in (1.0, 0.75):
        p_wc = dense / dense.sum()
        p_w = p_wc.sum(1, keepdims=True)
        c = dense.sum(0) ** alpha
        p_c = c / c.sum()
        with np.errstate(divide="ignore"):
            expected = np.maximum(np.log(p_wc / (p_w * p_c)), 0)
        np.testing.assert_allclose(ppmi(sp.csr_matrix(dense), alpha).toarray(), expected, atol=1e-12)


def test_svd_embeddings_match_numpy_svd():
    m = sp.random(30, 30, density=0.3, random_state=1) + sp.eye(30)
    got = svd_embeddings(sp.csr_matrix(m), dim=4, power=0.5)
    u, s, _ = np.linalg.svd(m.toarray())
    expected = u[:, :4] * np.sqrt(s[:4])
    # singular vectors are defined up to sign
    np.testing.assert_allclose(np.abs(got), np.abs(expected), atol=1e-8)


def test_glove_loss_matches_formula():
    torch.manual_seed(0)
    model = GloVe(6, 3)
    i, j, x = torch.tensor([0, 1, 5]), torch.tensor([2, 2, 0]), torch.tensor([1.0, 50.0, 300.0])
    w, wc = model.w.weight.detach(), model.w_ctx.weight.detach()
    b, bc = model.b.weight.detach()[:, 0], model.b_ctx.weight.detach()[:, 0]
    f = torch.clamp((x / 100) ** 0.75, max=1)
    expected = (f * ((w[i] * wc[j]).sum(1) + b[i] + bc[j] - x.log()) ** 2).mean()
    assert model(i, j, x).item() == pytest.approx(expected.item(), rel=1e-6)
    torch.testing.assert_close(glove_weight(torch.tensor([100.0, 1000.0])), torch.ones(2))


def test_glove_training_fits_log_counts():
    counts = cooccurrence_matrix([[0, 1, 2, 3, 0, 1, 2, 3], [4, 5, 4, 5, 4]] * 5, 6, window=2)
    seen = []
    model, history = train_glove(counts, dim=8, epochs=200, lr=0.1, x_max=10.0, seed=0,
                                 on_epoch=lambda epoch, m: seen.append(epoch))
    assert history.train_loss[-1] < 0.05 * history.train_loss[0]
    assert model.vectors.shape == (6, 8) and seen == list(range(1, 201))
    again, _ = train_glove(counts, dim=8, epochs=200, lr=0.1, x_max=10.0, seed=0)
    assert torch.equal(model.vectors, again.vectors)                  # reproducible from the seed


def _glove_state(seed):
    torch.manual_seed(seed)
    model = GloVe(5, 3, x_max=10.0)
    for table in (model.w, model.w_ctx, model.b, model.b_ctx):
        torch.nn.init.normal_(table.weight, std=0.5)
    return model


def test_one_adagrad_step_matches_autograd():
    """glove.c's per-cell update against autograd's gradient of f(X) e^2 / 2 and AdaGrad written out."""
    model = _glove_state(0)
    params = [t.weight.detach().double().requires_grad_() for t in (model.w, model.w_ctx, model.b, model.b_ctx)]
    w, w_ctx, b, b_ctx = params
    i, j, x, lr, x_max = 1, 3, 4.0, 0.05, 10.0
    err = w[i] @ w_ctx[j] + b[i, 0] + b_ctx[j, 0] - np.log(x)
    (0.5 * (x / x_max) ** 0.75 * err ** 2).backward()
    sums = [torch.full_like(p, 2.0) for p in params]                  # AdaGrad sums part-way through training
    expected = [p.detach() - lr * p.grad / s.sqrt() for p, s in zip(params, sums)]
    expected_sums = [s + (lr * p.grad) ** 2 for p, s in zip(params, sums)]
    for epoch_fn in (glove_adagrad_epoch, _compiled_epoch()):
        arrays = [t.weight.data.numpy().copy() for t in (model.w, model.w_ctx)]
        arrays += [t.weight.data.numpy()[:, 0].copy() for t in (model.b, model.b_ctx)]
        acc = [np.full_like(a, 2.0) for a in arrays]
        loss = epoch_fn(np.array([i]), np.array([j]), np.array([x], np.float32), np.array([0]), *arrays, *acc,
                        np.float32(x_max), np.float32(0.75), np.float32(lr))
        assert float(loss) == pytest.approx(((x / x_max) ** 0.75 * err ** 2).item(), rel=1e-5)
        for got, want in zip(arrays + acc, expected + expected_sums):
            np.testing.assert_allclose(got, want.numpy().reshape(got.shape), rtol=1e-5, atol=1e-6)


def test_compiled_epoch_matches_the_python_loop():
    counts = sp.coo_matrix(cooccurrence_matrix([[0, 1, 2, 3, 4, 0, 2, 4, 1, 3]] * 3, 5, window=3))
    order = np.random.default_rng(0).permutation(counts.nnz)
    runs = []
    for epoch_fn in (glove_adagrad_epoch, _compiled_epoch()):
        model = _glove_state(1)
        arrays = [t.weight.data.numpy().copy() for t in (model.w, model.w_ctx)]
        arrays += [t.weight.data.numpy()[:, 0].copy() for t in (model.b, model.b_ctx)]
        acc = [np.ones_like(a) for a in arrays]
        for _ in range(3):
            epoch_fn(counts.row.astype(np.int64), counts.col.astype(np.int64), counts.data.astype(np.float32),
                     order, *arrays, *acc, np.float32(10.0), np.float32(0.75), np.float32(0.05))
        runs.append(arrays + acc)
    for python, compiled in zip(*runs):     # the last bits of float32 pow and log may differ
        np.testing.assert_allclose(python, compiled, rtol=1e-5, atol=1e-7)


def test_bad_inputs():
    with pytest.raises(ValueError, match="sentences must not be empty"):
        cooccurrence_matrix([], 3)
    with pytest.raises(ValueError, match="at least one word"):
        cooccurrence_matrix([[]], 3)
    with pytest.raises(ValueError, match="word ids"):
        cooccurrence_matrix([[0, 9]], 3)
    with pytest.raises(ValueError, match="window must be"):
        cooccurrence_matrix([[0, 1]], 3, window=0)
    with pytest.raises(TypeError, match="sparse"):
        ppmi(np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-zero"):
        ppmi(sp.csr_matrix((3, 3)))
    with pytest.raises(ValueError, match="dim must be"):
        svd_embeddings(sp.eye(5, format="csr"), dim=5)
    with pytest.raises(ValueError, match="x_max must be"):
        GloVe(5, 2, x_max=0.0)
    with pytest.raises(ValueError, match="non-zero entries"):
        train_glove(sp.csr_matrix((3, 3)))
    with pytest.raises(ValueError, match="equal length"):
        GloVe(5, 2)(torch.tensor([0, 1]), torch.tensor([0]), torch.tensor([1.0]))
