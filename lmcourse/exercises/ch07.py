"""Checks for the exercises of chapter 7 (the Transformer)."""
import itertools
import math

import torch

from lmcourse.transformer import Seq2SeqTransformer, TransformerConfig

__all__ = ["sinusoidal_encoding", "kv_cache", "alibi", "beam_search"]


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


def _alibi_reference(num_heads: int, length: int, order=1, sign=-1, first=1, causal=True) -> torch.Tensor:
    """(num_heads, length, length) ALiBi bias (Press et al. 2022): sign * m_h * (i - j) with m_h = 2^(-8h/H) for
    heads h = first .. (``order`` -1 reverses them), -inf where j > i if ``causal``; the variants are the slips."""
    heads = torch.arange(first, first + num_heads, dtype=torch.float64)
    slopes = (2.0 ** (-8 * heads / num_heads)).flip(0) if order < 0 else 2.0 ** (-8 * heads / num_heads)
    offset = (torch.arange(length)[:, None] - torch.arange(length)[None, :]).double()     # (T, T): i - j
    bias = sign * slopes[:, None, None] * offset                                           # (H, T, T)
    return bias.masked_fill(offset < 0, float("-inf")) if causal else bias


def alibi(candidate) -> int:
    """``candidate(num_heads, length)`` -> the (num_heads, length, length) bias of ALiBi, -m_h (i - j) for j <= i
    with slopes m_h = 2^(-8h/H), h = 1 .. H, and -inf for j > i; checked for 4 heads at 6 positions and 8 at 10."""
    checks = 0
    for num_heads, length in ((4, 6), (8, 10)):
        got = candidate(num_heads, length)
        assert isinstance(got, torch.Tensor) and tuple(got.shape) == (num_heads, length, length), \
            f"expected a tensor of shape {(num_heads, length, length)}, got {getattr(got, 'shape', type(got))}"
        got = got.double()
        future = torch.ones(length, length, dtype=torch.bool).triu(1)                     # j > i: later keys
        assert torch.isneginf(got[:, future]).all(), \
            "later keys (j > i) must get -inf, so that the bias also applies the causal mask"
        seen = ~future
        got = got[:, seen]
        slips = {"the slopes are in reverse order: head 1 has the steepest slope, 2^(-8/H)": dict(order=-1),
                 "the sign is wrong: a key further back must lose score, -m_h (i - j)": dict(sign=1),
                 "count the heads from 1: the first slope is 2^(-8/H), not 1": dict(first=0)}
        for slip, variant in slips.items():
            assert not torch.allclose(got, _alibi_reference(num_heads, length, **variant)[:, seen], atol=1e-6), slip
        want = _alibi_reference(num_heads, length)[:, seen]
        assert torch.allclose(got, want, atol=1e-6), (
            f"{num_heads} heads: the bias differs from ALiBi's by {(got - want).abs().max():.2e}; check the slopes "
            "2^(-8h/H) and the offset i - j (query minus key)")
        checks += 1
    return checks


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
