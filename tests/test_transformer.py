"""Transformer layers against torch.nn with copied weights (1e-5), the model, decoding, schedule."""
import pytest
import torch
from torch import nn

from lmcourse import set_seed
from lmcourse.attention import causal_mask, padding_mask
from lmcourse.transformer import (
    DecoderLayer,
    EncoderLayer,
    Seq2SeqTransformer,
    TransformerConfig,
    beam_search,
    beam_search_batch,
    count_parameters,
    greedy_decode,
    layer_norm,
    teacher_forced_correct,
    teacher_forcing_loss,
    warmup_schedule,
)

TOL = 1e-5
D, H, FF = 16, 4, 32


def _copy_attention(dst: nn.MultiheadAttention, src) -> None:
    dst.in_proj_weight.copy_(torch.cat([src.q_proj.weight, src.k_proj.weight, src.v_proj.weight]))
    dst.in_proj_bias.copy_(torch.cat([src.q_proj.bias, src.k_proj.bias, src.v_proj.bias]))
    dst.out_proj.weight.copy_(src.out_proj.weight)
    dst.out_proj.bias.copy_(src.out_proj.bias)


def _copy_common(ref, ours, norms) -> None:
    _copy_attention(ref.self_attn, ours.self_attn)
    ref.linear1.load_state_dict(ours.ff.linear1.state_dict())
    ref.linear2.load_state_dict(ours.ff.linear2.state_dict())
    for name in norms:
        getattr(ref, name).load_state_dict(getattr(ours, name).state_dict())


def _lengths_mask(lengths, T):
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]     # (B, T) True = real token


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_encoder_layer_matches_torch(norm_first, masked):
    set_seed(0, num_threads=1)
    ours = EncoderLayer(D, H, FF, dropout=0.1, norm_first=norm_first).eval()
    ref = nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, batch_first=True, norm_first=norm_first).eval()
    with torch.no_grad():
        _copy_common(ref, ours, ["norm1", "norm2"])
    x = torch.randn(3, 6, D, requires_grad=True)        # requires_grad keeps torch off its fast path
    real = _lengths_mask([6, 4, 1], 6)
    mask = padding_mask(real.long()) if masked else None
    out, _ = ours(x, mask)
    ref_out = ref(x, src_key_padding_mask=~real if masked else None)
    assert torch.allclose(out, ref_out, atol=TOL), (out - ref_out).abs().max()


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    set_seed(0, num_threads=1)
    ours = DecoderLayer(D, H, FF, dropout=0.1, norm_first=norm_first).eval()
    ref = nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, batch_first=True, norm_first=norm_first).eval()
    with torch.no_grad():
        _copy_common(ref, ours, ["norm1", "norm2", "norm3"])
        _copy_attention(ref.multihead_attn, ours.cross_attn)
    y, memory = torch.randn(2, 5, D), torch.randn(2, 7, D)
    tgt_real, src_real = _lengths_mask([5, 3], 5), _lengths_mask([7, 4], 7)
    self_mask = padding_mask(tgt_real.long()) & causal_mask(5)
    out, w_self, w_cross = ours(y, memory, self_mask, padding_mask(src_real.long()), need_weights=True)
    ref_out = ref(y, memory, tgt_mask=~causal_mask(5), tgt_key_padding_mask=~tgt_real,
                  memory_key_padding_mask=~src_real)
    assert torch.allclose(out, ref_out, atol=TOL), (out - ref_out).abs().max()
    assert w_self.shape == (2, H, 5, 5) and w_cross.shape == (2, H, 5, 7)
    assert torch.all(w_cross[1, :, :, 4:] == 0) and torch.all(w_self[0].triu(1) == 0)


def _tiny_model(**kw):
    set_seed(0, num_threads=1)
    cfg = TransformerConfig(src_vocab_size=11, tgt_vocab_size=9, d_model=16, num_heads=2, d_ff=32,
                            dropout=0.0, max_len=12, **kw)
    return Seq2SeqTransformer(cfg).eval()


def test_model_shapes_and_causality():
    model = _tiny_model()
    src = torch.tensor([[4, 5, 6, 0], [7, 8, 9, 10]])
    tgt = torch.tensor([[2, 4, 5, 6, 3], [2, 7, 8, 3, 0]])
    logits = model(src, tgt)
    assert logits.shape == (2, 5, 9)
    changed = tgt.clone()
    changed[:, 3:] = 5                                      # change later target tokens
    assert torch.allclose(model(src, changed)[:, :3], logits[:, :3], atol=1e-6)
    leaky = _tiny_model(causal=False)
    assert not torch.allclose(leaky(src, changed)[:, :3], leaky(src, tgt)[:, :3])
    # padding in the source changes nothing for the real tokens
    padded = torch.cat([src, torch.zeros(2, 3, dtype=torch.long)], 1)
    assert torch.allclose(model(padded, tgt), logits, atol=1e-5)


def test_loss_is_teacher_forced_cross_entropy():
    model = _tiny_model()
    src, tgt = torch.tensor([[4, 5, 6]]), torch.tensor([[2, 4, 5, 3]])
    logits = model(src, tgt[:, :-1])
    expected = nn.functional.cross_entropy(logits[0], tgt[0, 1:])
    assert torch.allclose(teacher_forcing_loss(model, (src, tgt)), expected)


def test_greedy_and_beam_agree_and_beam_is_no_worse():
    model = _tiny_model(positional="learned")
    src = torch.tensor([[4, 5, 6, 7]])
    greedy = greedy_decode(model, src, bos_id=2, eos_id=3, max_len=6)[0].tolist()
    best1 = beam_search(model, src, 2, 3, beam_size=1, max_len=6)[0][0]
    assert best1 == greedy
    assert greedy[0] == 2

    def logprob(seq):
        logits = model(src, torch.tensor([seq[:-1]]))
        return logits.log_softmax(-1)[0, torch.arange(len(seq) - 1), torch.tensor(seq[1:])].sum().item()
    hyps = beam_search(model, src, 2, 3, beam_size=4, max_len=6)
    assert len(hyps) == 4 and hyps[0][1] >= hyps[-1][1]
    for seq, score in hyps:
        assert abs(logprob(seq) - score) < 1e-4
    if greedy[-1] == 3:                                     # greedy finished: beam is at least as good
        assert hyps[0][1] >= logprob(greedy) - 1e-5


def test_beam_search_batch_finds_what_beam_search_finds_sentence_by_sentence():
    model = _tiny_model(positional="learned")
    src = torch.tensor([[4, 5, 6, 7], [5, 4, 0, 0], [7, 7, 6, 0]])          # padded with 0
    batched = beam_search_batch(model, src, 2, 3, beam_size=3, max_len=6, length_penalty=0.5)
    assert len(batched) == 3
    for row, hyps in zip(src, batched):
        alone = beam_search(model, row[row != 0], 2, 3, beam_size=3, max_len=6, length_penalty=0.5)
        assert [seq for seq, _ in hyps] == [seq for seq, _ in alone]
        assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(hyps, alone))


def test_prenorm_and_no_positions_variants_run():
    for kw in ({"norm_first": True}, {"positional": "none"}):
        model = _tiny_model(**kw)
        assert model(torch.tensor([[4, 5]]), torch.tensor([[2, 4]])).shape == (1, 2, 9)
    assert count_parameters(_tiny_model(norm_first=True)) > count_parameters(_tiny_model())


def test_warmup_schedule_peaks_at_warmup():
    f = warmup_schedule(512, 4000)
    values = [f(s) for s in range(20000)]
    assert max(range(20000), key=values.__getitem__) == 3999
    assert abs(values[3999] - 512 ** -0.5 * 4000 ** -0.5) < 1e-12
    assert values[0] < values[100] and values[19999] < values[5000]


def test_bad_inputs():
    with pytest.raises(ValueError, match="positional"):
        _tiny_model(positional="rotary")
    with pytest.raises(TypeError, match="config"):
        Seq2SeqTransformer({"d_model": 16})
    with pytest.raises(TypeError, match="src must hold token ids"):
        _tiny_model()(torch.tensor([4.0, 5.0]), torch.tensor([[2]]))
    with pytest.raises(ValueError, match="one sentence"):
        beam_search(_tiny_model(), torch.tensor([[4], [5]]), 2, 3)
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(_tiny_model(), torch.tensor([4]), 2, 3, beam_size=0)
    with pytest.raises(ValueError, match="src must be"):
        beam_search_batch(_tiny_model(), torch.tensor([4, 5]), 2, 3)


def test_layer_norm_matches_torch():
    set_seed(0, num_threads=1)
    x = torch.randn(3, 4, 8) * 5 + 2
    ref = nn.LayerNorm(8)
    with torch.no_grad():
        ref.weight.uniform_(0.5, 1.5)
        ref.bias.uniform_(-1, 1)
    assert torch.allclose(layer_norm(x, ref.weight, ref.bias, ref.eps), ref(x), atol=TOL)
    plain = layer_norm(x)
    assert torch.allclose(plain.mean(-1), torch.zeros(3, 4), atol=1e-5)
    with pytest.raises(ValueError, match="eps"):
        layer_norm(x, eps=0.0)
    with pytest.raises(TypeError, match="x"):
        layer_norm([1.0, 2.0])


def test_label_smoothing_matches_torch_and_raises_the_loss_floor():
    model = _tiny_model()
    src, tgt = torch.tensor([[4, 5, 6]]), torch.tensor([[2, 4, 5, 3]])
    logits = model(src, tgt[:, :-1])
    expected = nn.functional.cross_entropy(logits[0], tgt[0, 1:], label_smoothing=0.1)
    assert torch.allclose(teacher_forcing_loss(model, (src, tgt), label_smoothing=0.1), expected)
    with pytest.raises(ValueError, match="label_smoothing"):
        teacher_forcing_loss(model, (src, tgt), label_smoothing=1.5)


def test_tied_output_shares_the_target_embedding():
    tied, untied = _tiny_model(tie_output=True), _tiny_model()
    assert tied.out_proj.weight is tied.tgt_embed.weight
    assert count_parameters(untied) - count_parameters(tied) == 9 * 16
    with pytest.raises(TypeError, match="tie_output"):
        _tiny_model(tie_output=1)


def test_teacher_forced_correct_equals_greedy_exact_match():
    set_seed(0, num_threads=1)
    cfg = TransformerConfig(src_vocab_size=8, tgt_vocab_size=8, d_model=16, num_heads=2, d_ff=32,
                            dropout=0.0, max_len=8)
    model = Seq2SeqTransformer(cfg)
    src = torch.randint(4, 8, (64, 3))
    tgt = torch.cat([torch.full((64, 1), 2), src, torch.full((64, 1), 3)], 1)     # copy task
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(60):
        loss = teacher_forcing_loss(model, (src, tgt))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    forced = teacher_forced_correct(model, src, tgt)
    out = greedy_decode(model, src, 2, 3, max_len=tgt.size(1) - 1)
    out = nn.functional.pad(out, (0, tgt.size(1) - out.size(1)))
    greedy = (out == tgt).all(1)
    assert 0 < forced.sum() < 64 or forced.all()          # the check sees a partly trained model
    assert torch.equal(forced, greedy)
    assert model.training                                 # the mode is restored
    with pytest.raises(ValueError, match="src and tgt"):
        teacher_forced_correct(model, src, tgt[:3])


def test_cooldown_scales_the_last_steps_to_zero():
    plain, cooled = warmup_schedule(32, 100), warmup_schedule(32, 100, total_steps=500, cooldown_steps=150)
    assert all(plain(s) == cooled(s) for s in range(350))
    assert abs(cooled(425) - plain(425) * 0.5) < 1e-12 and cooled(500) == 0.0
    with pytest.raises(ValueError, match="total_steps"):
        warmup_schedule(32, 100, total_steps=100, cooldown_steps=150)
    with pytest.raises(TypeError, match="total_steps"):
        warmup_schedule(32, 100, cooldown_steps=150)


def test_beam_search_with_a_beam_as_wide_as_every_prefix_is_exhaustive():
    model = _tiny_model(positional="learned")
    src, bos, eos, max_len, V = torch.tensor([[4, 5, 6]]), 2, 3, 2, 9

    def logprob(seq):
        logits = model(src, torch.tensor([seq[:-1]]))
        return logits.log_softmax(-1)[0, torch.arange(len(seq) - 1), torch.tensor(seq[1:])].sum().item()
    # every hypothesis: one token that is EOS, or two tokens (the first not EOS)
    every = [[bos, eos]] + [[bos, a, b] for a in range(V) if a != eos for b in range(V)]
    best = sorted(every, key=logprob, reverse=True)[:5]
    hyps = beam_search(model, src, bos, eos, beam_size=V * V, max_len=max_len)
    assert [seq for seq, _ in hyps[:5]] == best
    assert all(abs(score - logprob(seq)) < 1e-4 for seq, score in hyps[:5])


def test_warmup_schedule_factor_scales_every_step():
    plain, half = warmup_schedule(32, 50, total_steps=300, cooldown_steps=100), \
        warmup_schedule(32, 50, total_steps=300, cooldown_steps=100, factor=0.5)
    assert all(abs(half(s) - 0.5 * plain(s)) < 1e-15 for s in range(300))
    with pytest.raises(ValueError, match="factor"):
        warmup_schedule(32, 50, factor=0.0)


def test_embed_init_std_rescales_only_the_token_embeddings():
    default, shrunk = _tiny_model(), _tiny_model(embed_init_std=0.25)
    theirs = shrunk.state_dict()
    for name, weight in default.state_dict().items():
        expected = weight * 0.25 if name in ("src_embed.weight", "tgt_embed.weight") else weight
        assert torch.equal(theirs[name], expected), name           # the same draws: every other weight equal
    assert torch.equal(shrunk.src_embed.weight[0], torch.zeros(16))  # padding stays zero
    # the sqrt(d_model) multiplication is kept: the first layer reads 0.25 * sqrt(16) = 1 times the raw draws
    src = torch.tensor([[4, 5, 6]])
    first_input = shrunk._embed(src, shrunk.src_embed, shrunk.src_pos, "src")          # (1, 3, 16)
    assert torch.allclose(first_input, default.src_embed(src) + shrunk.src_pos.pe[:3])
    assert torch.equal(_tiny_model(embed_init_std=1.0).src_embed.weight, default.src_embed.weight)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="embed_init_std"):
            _tiny_model(embed_init_std=bad)
    with pytest.raises(TypeError, match="embed_init_std"):
        _tiny_model(embed_init_std="small")
