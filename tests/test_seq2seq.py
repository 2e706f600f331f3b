"""The RNN encoder-decoder with Bahdanau attention: shapes, masking, decoding, and that it learns."""
import pytest
import torch

from lmcourse import set_seed
from lmcourse.seq2seq import BahdanauSeq2Seq, LuongSeq2Seq, reversal_pairs, seq2seq_loss, sequence_correct


def _model():
    set_seed(0, num_threads=1)
    return BahdanauSeq2Seq(src_vocab_size=10, tgt_vocab_size=8, d_embed=8, d_hidden=12).eval()


def test_shapes_and_attention_ignores_padding():
    model = _model()
    src = torch.tensor([[4, 5, 6, 0, 0], [4, 5, 6, 7, 8]])
    tgt_in = torch.tensor([[2, 4, 5], [2, 6, 7]])
    logits, weights = model(src, tgt_in)
    assert logits.shape == (2, 3, 8) and weights.shape == (2, 3, 5)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3), atol=1e-6)
    assert torch.all(weights[0, :, 3:] == 0)
    # the padded sentence gives the same result as the unpadded one
    alone, _ = model(src[:1, :3], tgt_in[:1])
    assert torch.allclose(alone, logits[:1], atol=1e-5)


def test_greedy_decode_matches_teacher_forcing_on_its_own_output():
    model = _model()
    src = torch.tensor([[4, 5, 6, 7]])
    ys, weights = model.greedy_decode(src, bos_id=2, eos_id=3, max_len=5)
    assert ys[0, 0] == 2 and weights.shape == (1, ys.size(1) - 1, 4)
    logits, tf_weights = model(src, ys[:, :-1])
    assert torch.equal(logits.argmax(-1), ys[:, 1:])
    assert torch.allclose(tf_weights, weights, atol=1e-6)


@pytest.mark.parametrize("model_class", [BahdanauSeq2Seq, LuongSeq2Seq])
def test_learns_to_reverse(model_class):
    set_seed(0, num_threads=1)
    model = model_class(10, 10, d_embed=16, d_hidden=32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    for _ in range(120):
        x = torch.randint(4, 10, (32, 5), generator=g)
        tgt = torch.cat([torch.full((32, 1), 2), x.flip(1), torch.full((32, 1), 3)], 1)
        loss = seq2seq_loss(model, (x, tgt))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.3, loss.item()


def test_bad_inputs():
    with pytest.raises(ValueError, match="d_hidden"):
        BahdanauSeq2Seq(10, 10, d_hidden=0)
    with pytest.raises(TypeError, match="src must hold token ids"):
        _model()(torch.tensor([1.0, 2.0]), torch.tensor([[2]]))


def test_without_attention_the_decoder_sees_one_fixed_vector():
    set_seed(0, num_threads=1)
    model = BahdanauSeq2Seq(10, 8, d_embed=8, d_hidden=12, attention=False).eval()
    src = torch.tensor([[4, 5, 6, 0, 0], [4, 5, 6, 7, 8]])
    h, mask, _ = model.encode(src)
    assert h.shape == (2, 1, 24) and mask.shape == (2, 1, 1) and mask.all()
    logits, weights = model(src, torch.tensor([[2, 4, 5], [2, 6, 7]]))
    assert logits.shape == (2, 3, 8) and torch.all(weights == 1)
    # padding does not change the summary vector
    alone, _ = model(src[:1, :3], torch.tensor([[2, 4, 5]]))
    assert torch.allclose(alone, logits[:1], atol=1e-5)
    with pytest.raises(TypeError, match="attention"):
        BahdanauSeq2Seq(10, 10, attention=1)


def test_reversal_pairs_and_sequence_correct():
    src, tgt, length = reversal_pairs(6, [2, 3], seed=1)
    assert src.shape == (6, 3) and tgt.shape == (6, 5) and length.tolist() == [2, 3] * 3
    for s, t, n in zip(src, tgt, length):
        digits = s[:n].tolist()
        assert s[n:].eq(0).all() and min(digits) >= 3
        assert t[: n + 2].tolist() == [1] + digits[::-1] + [2] and t[n + 2:].eq(0).all()
    with pytest.raises(ValueError, match="lengths"):
        reversal_pairs(4, [0, 2])

    class Oracle(BahdanauSeq2Seq):
        @torch.no_grad()
        def greedy_decode(self, src, bos_id, eos_id, max_len=32):
            return tgt, None

    oracle = Oracle(13, 13, 4, 4)
    assert sequence_correct(oracle, src, tgt).all()
    wrong = tgt.clone()
    wrong[0, 1] = 3 if wrong[0, 1] != 3 else 4
    assert sequence_correct(oracle, src, wrong).tolist() == [False] + [True] * 5


def _luong():
    set_seed(0, num_threads=1)
    return LuongSeq2Seq(src_vocab_size=10, tgt_vocab_size=8, d_embed=8, d_hidden=12).eval()


def test_luong_shapes_padding_and_greedy_decoding():
    model = _luong()
    src = torch.tensor([[4, 5, 6, 0, 0], [4, 5, 6, 7, 8]])
    tgt_in = torch.tensor([[2, 4, 5], [2, 6, 7]])
    logits, weights = model(src, tgt_in)
    assert logits.shape == (2, 3, 8) and weights.shape == (2, 3, 5)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3), atol=1e-6) and torch.all(weights[0, :, 3:] == 0)
    alone, _ = model(src[:1, :3], tgt_in[:1])
    assert torch.allclose(alone, logits[:1], atol=1e-5)
    ys, w = model.greedy_decode(src[1:], bos_id=2, eos_id=3, max_len=5)
    tf_logits, tf_weights = model(src[1:], ys[:, :-1])
    assert torch.equal(tf_logits.argmax(-1), ys[:, 1:]) and torch.allclose(tf_weights, w, atol=1e-6)


def test_luong_matches_its_equations_written_out():
    """An independent decoder loop, straight from Luong et al.'s equations, with the module's weights."""
    model = _luong()
    src, tgt_in = torch.tensor([[4, 5, 6, 7], [8, 9, 4, 0]]), torch.tensor([[2, 4, 5, 6], [2, 7, 7, 5]])
    logits, weights = model(src, tgt_in)
    h, mask, (s, _) = model.encode(src)                                   # the encoder is the Bahdanau model's
    a = torch.zeros_like(s)
    cell, W_a, W_c, W_s = model.cell, model.score.W, model.combine.weight, model.out
    for t in range(tgt_in.size(1)):
        x = torch.cat([model.tgt_embed(tgt_in[:, t]), a], -1)
        r = torch.sigmoid(x @ cell.weight_ih[:12].T + cell.bias_ih[:12] + s @ cell.weight_hh[:12].T + cell.bias_hh[:12])
        z = torch.sigmoid(x @ cell.weight_ih[12:24].T + cell.bias_ih[12:24]
                          + s @ cell.weight_hh[12:24].T + cell.bias_hh[12:24])
        n = torch.tanh(x @ cell.weight_ih[24:].T + cell.bias_ih[24:]
                       + r * (s @ cell.weight_hh[24:].T + cell.bias_hh[24:]))
        s = (1 - z) * n + z * s                                           # GRU step: s_t
        e = torch.einsum("bh,hk,bsk->bs", s, W_a, h).masked_fill(~mask[:, 0], float("-inf"))   # s_t^T W_a h_j
        alpha = e.softmax(-1)
        c = torch.einsum("bs,bsk->bk", alpha, h)
        a = torch.tanh(torch.cat([c, s], -1) @ W_c.T)                       # attentional vector
        assert torch.allclose(alpha, weights[:, t], atol=1e-5)
        assert torch.allclose(W_s(a), logits[:, t], atol=1e-5)


def test_only_luong_attends_with_the_state_after_reading_the_input():
    src = torch.tensor([[4, 5, 6, 7]])
    for model, changes in ((_model(), False), (_luong(), True)):
        _, first = model(src, torch.tensor([[2, 4]]))
        _, second = model(src, torch.tensor([[5, 4]]))
        assert (not torch.allclose(first[:, 0], second[:, 0])) == changes

