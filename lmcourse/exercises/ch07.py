"""Checks for the exercises of chapter 7 (the Transformer)."""
import itertools
import math
from unittest.mock import patch

import torch

from lmcourse.attention import MultiHeadAttention, causal_mask, padding_mask
from lmcourse.transformer import DecoderLayer, Seq2SeqTransformer, TransformerConfig

__all__ = ["sinusoidal_encoding", "kv_cache", "decoder_layer", "beam_search"]


def sinusoidal_encoding(candidate) -> int:
    """``candidate(max_len, d_model)`` -> the (max_len, d_model) table of Vaswani et al. (2017)."""
    pe = candidate(20, 8)
    assert isinstance(pe, torch.Tensor) and tuple(pe.shape) == (20, 8), \
        f"expected a tensor of shape (20, 8), got {getattr(pe, 'shape', type(pe))}"
    pe = pe.double()
    assert torch.allclose(pe[0], torch.tensor([0.0, 1, 0, 1, 0, 1, 0, 1], dtype=torch.float64), atol=1e-6), \
        "position 0 must be (sin 0, cos 0, ...) = (0, 1, 0, 1, ...): sin on even dimensions, cos on odd ones"
    assert abs(pe[3, 0].item() - math.sin(3)) < 1e-5 and abs(pe[3, 1].item() - math.cos(3)) < 1e-5, \
        "dimensions 0 and 1 must be sin(p) and cos(p) (frequency 1)"
    angle = 5 / 10000 ** (4 / 8)
    assert abs(pe[5, 4].item() - math.sin(angle)) < 1e-5 and abs(pe[5, 5].item() - math.cos(angle)) < 1e-5, \
        "dimension 2i must be sin(p / 10000^(2i/d_model)) and 2i+1 its cosine; check the exponent"
    assert torch.allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(20, 4, dtype=torch.float64), atol=1e-5), \
        "each (sin, cos) pair must share one angle"
    return 4


KV_TOLERANCE = 1e-5


def kv_cache(candidate) -> int:
    """``candidate(model, token (B,), position, memory, src_mask, cache)`` -> (logits (B, V), cache): one step
    of incremental decoding for a post-LN :class:`Seq2SeqTransformer` in eval mode. ``cache`` is None at
    position 0 and afterwards what the previous call returned: one (K, V) pair per decoder layer, each
    (B, h, position + 1, d_head) after the call. The logits must equal the full recompute's at every step."""
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=12, tgt_vocab_size=10, d_model=16, num_heads=4, num_encoder_layers=1,
                               num_decoder_layers=2, d_ff=32, dropout=0.0, max_len=16)
    model = Seq2SeqTransformer(config).eval()
    g = torch.Generator().manual_seed(11)
    src = torch.randint(1, 12, (3, 7), generator=g)
    src[2, 5:] = 0                                                    # one padded source
    tgt = torch.randint(1, 10, (3, 8), generator=g)                   # BOS and what was written, no padding
    with torch.no_grad():
        memory, src_mask, _ = model.encode(src)
        full = model.decode(tgt, memory, src_mask)[0]                 # (3, 8, V): position t sees tokens <= t
        cache = None
        for t in range(tgt.size(1)):
            got = candidate(model, tgt[:, t], t, memory, src_mask, cache)
            assert isinstance(got, tuple) and len(got) == 2, "return (logits, cache)"
            logits, cache = got
            assert isinstance(logits, torch.Tensor) and tuple(logits.shape) == (3, config.tgt_vocab_size), \
                f"logits must be (B, V) = (3, {config.tgt_vocab_size}), got {getattr(logits, 'shape', type(logits))}"
            assert isinstance(cache, (list, tuple)) and len(cache) == config.num_decoder_layers, \
                f"the cache must hold one (K, V) pair per decoder layer ({config.num_decoder_layers})"
            assert all(isinstance(pair, (tuple, list)) and len(pair) == 2 and
                       all(isinstance(x, torch.Tensor) for x in pair) for pair in cache), \
                "each entry of the cache must be a (K, V) pair of tensors: the keys and values, not the token ids"
            for k, v in cache:
                assert tuple(k.shape) == tuple(v.shape) == (3, 4, t + 1, 4), (
                    f"after step {t} every cached K and V must be (B, h, {t + 1}, d_head) = (3, 4, {t + 1}, 4), got "
                    f"{tuple(k.shape)} and {tuple(v.shape)}: append the new position's key and value to the cache")
            assert torch.allclose(logits, full[:, t], atol=KV_TOLERANCE), (
                f"step {t}: the logits differ from the full recompute by {(logits - full[:, t]).abs().max():.2e}; "
                "add the positional encoding of this position, let the new query attend to every cached key "
                "(no mask is needed: the cache holds only the past), and keep each layer's residuals and LayerNorms")
    return 2


def decoder_layer(candidate) -> int:
    """``candidate(y (B, T, d), memory (B, S, d), src_keep (B, S) bool, layer)`` -> the output of a package
    :class:`DecoderLayer` in eval mode, ``layer(y, memory, causal_mask(T), padding_mask(src_keep))[0]``,
    post-LN and pre-LN, computed without the layer's attention modules (their projections may be called),
    to 1e-5. A wrong answer is named by what it matches: no causal mask, no padding mask, the other
    LayerNorm placement."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(7)
    checks = 0
    for norm_first in (False, True):
        layer = DecoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first).eval()
        with torch.no_grad():
            for norm in (layer.norm1, layer.norm2, layer.norm3):        # non-trivial gamma and beta
                norm.weight.uniform_(0.5, 1.5)
                norm.bias.uniform_(-0.5, 0.5)
        y = torch.randn(3, 6, 16, generator=g) * 2 + 1                   # (B, T, d): the decoder's input
        memory = torch.randn(3, 5, 16, generator=g) * 2                 # (B, S, d): the encoder's output
        src_keep = torch.ones(3, 5, dtype=torch.bool)
        src_keep[1, 3:], src_keep[2, 1:] = False, False                  # two padded sources
        causal, keys = causal_mask(6), padding_mask(src_keep)
        with torch.no_grad():
            want = layer(y, memory, causal, keys)[0]
            slips = {"the self-attention sees later positions: apply the causal mask (position t reads keys <= t) "
                     "before the softmax": layer(y, memory, None, keys)[0],
                     "the cross-attention reads padded source positions: set their scores to -inf before the "
                     "softmax": layer(y, memory, causal, None)[0]}
            layer.norm_first = not norm_first
            slips["the LayerNorms sit on the wrong side of the residual: post-LN is LN(x + F(x)), pre-LN "
                  "x + F(LN(x))"] = layer(y, memory, causal, keys)[0]
            layer.norm_first = norm_first
            with patch.object(MultiHeadAttention, "forward", _refuse_attention), \
                    patch.object(DecoderLayer, "forward", _refuse_attention):
                got = candidate(y.clone(), memory.clone(), src_keep.clone(), layer)
        assert isinstance(got, torch.Tensor) and got.shape == want.shape, \
            f"return a tensor of shape {tuple(want.shape)}, got {getattr(got, 'shape', type(got))}"
        name = "pre-LN (norm_first=True)" if norm_first else "post-LN (norm_first=False)"
        for slip, wrong in slips.items():
            assert not torch.allclose(got, wrong, atol=1e-5), f"{name}: {slip}"
        assert torch.allclose(got, want, atol=1e-5), (
            f"{name}: output differs from the package's by {(got - want).abs().max():.2e}; check that the "
            "cross-attention takes its queries from the decoder and its keys and values from the memory, the "
            "scaling by sqrt(d_head) and that each sublayer's input is added back (the residual)")
        checks += 1
    return checks


def _refuse_attention(*args, **kwargs):
    raise AssertionError("compute the attention yourself, from layer.self_attn.q_proj, k_proj, v_proj and "
                         "out_proj (and cross_attn's): calling the layer or its attention modules is not allowed")


BOS, EOS = 0, 1


def _bigram_model(table: torch.Tensor):
    """A toy decoder: next-token log-probs (k, V) for k prefixes, from the last token of each;
    BOS is never predicted."""
    log_probs = table.index_fill(1, torch.tensor([BOS]), float("-inf")).log_softmax(-1)
    return lambda prefixes: log_probs[[prefix[-1] for prefix in prefixes]]


def _all_hypotheses(step, max_len: int, vocab: int) -> list[tuple[list[int], float]]:
    """Every sequence the search may return (ended by EOS, or max_len tokens long), with its total
    log-probability: the exhaustive search that beam search approximates."""
    out = []
    for length in range(1, max_len + 1):
        for tokens in itertools.product(range(1, vocab), repeat=length):
            if EOS in tokens[:-1] or (length < max_len and tokens[-1] != EOS):
                continue
            seq = [BOS, *tokens]
            out.append((seq, sum(step([seq[:i]])[0, seq[i]].item() for i in range(1, len(seq)))))
    return out


def beam_search(candidate) -> int:
    """``candidate(step, bos, eos, beam_size, max_len)`` -> up to beam_size (ids from BOS on, total
    log-probability), best first, where ``step(prefixes)`` gives (k, V) next-token log-probs for k
    prefixes; a hypothesis ends at EOS or after max_len tokens. Checked on toy bigram decoders."""
    checks = 0
    # a garden path: "a" is likelier first (0.6), but after it nothing is likely; "b EOS" wins (0.36 > 0.24)
    path = torch.tensor([[0.0, 1e-9, 0.6, 0.4],      # after BOS: a 0.6, b 0.4
                         [0.0, 1.0, 1e-9, 1e-9],     # after EOS (never used)
                         [0.0, 0.4, 0.3, 0.3],       # after a: EOS 0.4
                         [0.0, 0.9, 0.05, 0.05]]).log()   # after b: EOS 0.9
    step = _bigram_model(path)
    greedy = candidate(step, BOS, EOS, 1, 3)
    assert greedy and greedy[0][0] == [BOS, 2, EOS], \
        f"with beam_size 1 the search is greedy and must return [0, 2, 1] (a, then EOS), got {greedy[:1]}"
    checks += 1
    best = candidate(step, BOS, EOS, 2, 3)
    assert best[0][0] == [BOS, 3, EOS] and abs(best[0][1] - math.log(0.36)) < 1e-4, (
        f"with beam_size 2 the search must keep 'b' alive and return [0, 3, 1] with log-probability "
        f"log 0.36 = {math.log(0.36):.4f} first, got {best[0]}")
    checks += 1
    g, vocab, max_len = torch.Generator().manual_seed(3), 5, 3
    for _ in range(3):                                             # three random toy decoders
        step = _bigram_model(torch.randn(vocab, vocab, generator=g) * 2)
        truth = sorted(_all_hypotheses(step, max_len, vocab), key=lambda h: -h[1])
        got = candidate(step, BOS, EOS, 100, max_len)            # wider than every candidate: exact
        assert [seq for seq, _ in got[:5]] == [seq for seq, _ in truth[:5]], (
            f"with a beam wider than the number of hypotheses the search is exhaustive; the best five "
            f"should be {[seq for seq, _ in truth[:5]]}, got {[seq for seq, _ in got[:5]]}")
        assert all(abs(a[1] - b[1]) < 1e-4 for a, b in zip(got[:5], truth[:5])), \
            "scores must be total log-probabilities (the sum over the tokens after BOS)"
        narrow = candidate(step, BOS, EOS, 2, max_len)
        assert len(narrow) <= 2 and narrow[0][1] <= truth[0][1] + 1e-6 and \
            [h[1] for h in narrow] == sorted((h[1] for h in narrow), reverse=True), \
            "return at most beam_size hypotheses, best first, none better than the exhaustive best"
        checks += 1
    return checks
