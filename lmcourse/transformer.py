"""The Transformer (Vaswani et al. 2017): encoder and decoder layers, an encoder-decoder model for
translation, teacher-forced training, greedy and beam decoding, and the warm-up schedule.

Layers come in two flavours. Post-LN (the paper): x = LayerNorm(x + Sublayer(x)). Pre-LN (GPT-2
and most models since): x = x + Sublayer(LayerNorm(x)), which keeps an unnormalised residual path
from input to output and trains stably with less or no warm-up (Xiong et al. 2020).
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention, causal_mask, padding_mask
from lmcourse.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from lmcourse.validate import check_float, check_int, check_token_ids, check_type


def layer_norm(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
               eps: float = 1e-5) -> torch.Tensor:
    """LN(x) = gamma * (x - mean) / sqrt(var + eps) + beta over the last dimension (Ba et al. 2016).

    x (..., d) -> (..., d); mean and the biased variance are taken over each vector's d features,
    so every token is normalised on its own (unlike BatchNorm, nothing is shared across the batch).
    """
    check_type(x, "x", torch.Tensor)
    check_float(eps, "eps", minimum=0.0, strict_minimum=True)
    mean = x.mean(-1, keepdim=True)                                  # (..., 1)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)                   # (..., 1) biased, as in the paper
    y = (x - mean) / torch.sqrt(var + eps)                           # (..., d) mean 0, variance ~1
    if weight is not None:
        y = y * weight                                               # gamma (d,)
    if bias is not None:
        y = y + bias                                                 # beta (d,)
    return y


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to every position on its own.

    forward(x (B, T, d_model)) -> (B, T, d_model); the hidden layer has width d_ff.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        check_int(d_model, "d_model", minimum=1)
        check_int(d_ff, "d_ff", minimum=1)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))   # (B, T, C) -> (B, T, d_ff) -> (B, T, C)


class EncoderLayer(nn.Module):
    """Self-attention then a feed-forward network, each wrapped in a residual connection and a
    LayerNorm (after the sum if ``norm_first=False``, before the sublayer if True).

    forward(x (B, T, d_model), mask bool broadcastable to (B, h, T, T), need_weights) ->
    (x (B, T, d_model), self-attention weights (B, h, T, T) or None).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, eps: float = 1e-5):
        super().__init__()
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        check_type(norm_first, "norm_first", bool)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model, eps=eps), nn.LayerNorm(d_model, eps=eps)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.norm_first:
            # Pre-LN: x + Sublayer(LayerNorm(x))
            a, w = self.self_attn(self.norm1(x), mask=mask, need_weights=need_weights)
            x = x + self.dropout1(a)
            x = x + self.dropout2(self.ff(self.norm2(x)))
        else:
            # Post-LN: LayerNorm(x + Sublayer(x))
            a, w = self.self_attn(x, mask=mask, need_weights=need_weights)
            x = self.norm1(x + self.dropout1(a))
            x = self.norm2(x + self.dropout2(self.ff(x)))
        return x, w


class DecoderLayer(nn.Module):
    """Masked self-attention over the target so far, cross-attention whose queries come from the
    decoder and whose keys and values are the encoder's output ("memory"), then a feed-forward
    network; residuals and LayerNorms as in :class:`EncoderLayer`.

    forward(y (B, T, d_model), memory (B, S, d_model), self_mask (.., T, T), memory_mask (.., T or 1, S),
    need_weights) -> (y (B, T, d_model), self weights (B, h, T, T), cross weights (B, h, T, S)).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, eps: float = 1e-5):
        super().__init__()
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        check_type(norm_first, "norm_first", bool)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model, eps=eps) for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = (nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, y: torch.Tensor, memory: torch.Tensor, self_mask: torch.Tensor | None = None,
                memory_mask: torch.Tensor | None = None, need_weights: bool = False):
        if self.norm_first:
            a, w_self = self.self_attn(self.norm1(y), mask=self_mask, need_weights=need_weights)
            y = y + self.dropout1(a)
            a, w_cross = self.cross_attn(self.norm2(y), memory, memory, mask=memory_mask,
                                         need_weights=need_weights)
            y = y + self.dropout2(a)
            y = y + self.dropout3(self.ff(self.norm3(y)))
        else:
            a, w_self = self.self_attn(y, mask=self_mask, need_weights=need_weights)
            y = self.norm1(y + self.dropout1(a))
            # cross-attention: Q from the decoder, K and V projected from the encoder output
            a, w_cross = self.cross_attn(y, memory, memory, mask=memory_mask, need_weights=need_weights)
            y = self.norm2(y + self.dropout2(a))
            y = self.norm3(y + self.dropout3(self.ff(y)))
        return y, w_self, w_cross


@dataclass
class TransformerConfig:
    """Sizes of a :class:`Seq2SeqTransformer` (the paper's base model: 512, 8, 6, 6, 2048)."""
    src_vocab_size: int        # source tokens, specials included
    tgt_vocab_size: int        # target tokens, specials included
    d_model: int = 64          # width of every token vector
    num_heads: int = 4         # attention heads per layer (d_model / num_heads each)
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    d_ff: int = 128            # hidden width of the feed-forward networks
    dropout: float = 0.1
    max_len: int = 64          # longest source or target sequence
    norm_first: bool = False   # False: post-LN as in the paper; True: pre-LN
    positional: str = "sinusoidal"   # "sinusoidal", "learned" or "none"
    causal: bool = True        # decoder self-attention masks the future (False only to show the leak)
    tie_output: bool = False   # share the target embedding with the output projection (the paper does)
    pad_id: int = 0            # padding id, the same in source and target vocabularies
    embed_init_std: float = 1.0   # sd of the token embeddings at initialisation (nn.Embedding's 1); the model
                                  # multiplies them by sqrt(d_model) whatever it is, so only the start changes

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "num_encoder_layers",
                     "num_decoder_layers", "d_ff", "max_len"):
            check_int(getattr(self, name), name, minimum=1)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        check_float(self.dropout, "dropout", minimum=0.0, maximum=1.0)
        check_type(self.norm_first, "norm_first", bool)
        if self.positional not in ("sinusoidal", "learned", "none"):
            raise ValueError(f"positional must be 'sinusoidal', 'learned' or 'none', got {self.positional!r}")
        check_type(self.causal, "causal", bool)
        check_type(self.tie_output, "tie_output", bool)
        check_int(self.pad_id, "pad_id", minimum=0, maximum=min(self.src_vocab_size, self.tgt_vocab_size) - 1)
        check_float(self.embed_init_std, "embed_init_std", minimum=0.0, strict_minimum=True)


class Seq2SeqTransformer(nn.Module):
    """Encoder-decoder Transformer for translation.

    forward(src (B, S) ids, tgt_in (B, T) ids starting with BOS) -> logits (B, T, tgt_vocab_size):
    position t predicts target token t + 1 having seen tokens <= t (teacher forcing).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        check_type(config, "config", TransformerConfig)
        c = config
        self.config = c
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        with torch.no_grad():   # the same N(0, 1) draws rescaled: no other weight changes with embed_init_std
            self.src_embed.weight.mul_(c.embed_init_std)
            self.tgt_embed.weight.mul_(c.embed_init_std)
        if c.positional == "sinusoidal":
            self.src_pos = SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
            self.tgt_pos = SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
        elif c.positional == "learned":
            self.src_pos = LearnedPositionalEncoding(c.d_model, c.max_len, c.dropout)
            self.tgt_pos = LearnedPositionalEncoding(c.d_model, c.max_len, c.dropout)
        else:
            self.src_pos = self.tgt_pos = nn.Dropout(c.dropout)
        layer = dict(d_model=c.d_model, num_heads=c.num_heads, d_ff=c.d_ff, dropout=c.dropout,
                     norm_first=c.norm_first)
        self.encoder_layers = nn.ModuleList(EncoderLayer(**layer) for _ in range(c.num_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(**layer) for _ in range(c.num_decoder_layers))
        # pre-LN leaves the residual stream unnormalised, so it ends with one more LayerNorm
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size)        # (B, T, d_model) -> (B, T, V)
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight                # one (V, d_model) matrix, two uses

    def _embed(self, ids, embed, pos, name):
        check_token_ids(ids, embed.num_embeddings, name)
        if ids.dim() != 2:
            raise ValueError(f"{name} must be (batch, time) token ids, got shape {tuple(ids.shape)}")
        return pos(embed(ids) * math.sqrt(self.config.d_model))   # (B, T) -> (B, T, d_model)

    def encode(self, src: torch.Tensor, need_weights: bool = False):
        """src (B, S) -> (memory (B, S, d_model), key mask (B, 1, 1, S), per-layer self weights)."""
        x = self._embed(src, self.src_embed, self.src_pos, "src")
        src_mask = padding_mask(src != self.config.pad_id)         # (B, 1, 1, S): padding is never a key
        weights = []
        for layer in self.encoder_layers:
            x, w = layer(x, src_mask, need_weights)
            weights.append(w)
        return self.encoder_norm(x), src_mask, weights

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor,
               need_weights: bool = False):
        """tgt_in (B, T) -> (logits (B, T, V), per-layer self weights, per-layer cross weights)."""
        y = self._embed(tgt_in, self.tgt_embed, self.tgt_pos, "tgt_in")
        self_mask = padding_mask(tgt_in != self.config.pad_id)     # (B, 1, 1, T)
        if self.config.causal:
            self_mask = self_mask & causal_mask(tgt_in.size(1), device=tgt_in.device)   # (B, 1, T, T)
        self_weights, cross_weights = [], []
        for layer in self.decoder_layers:
            y, ws, wc = layer(y, memory, self_mask, src_mask, need_weights)
            self_weights.append(ws)
            cross_weights.append(wc)
        return self.out_proj(self.decoder_norm(y)), self_weights, cross_weights   # (B, T, V)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        memory, src_mask, _ = self.encode(src)
        return self.decode(tgt_in, memory, src_mask)[0]


def teacher_forcing_loss(model: nn.Module, batch, pad_id: int = 0, label_smoothing: float = 0.0) -> torch.Tensor:
    """Cross-entropy of predicting tgt[:, 1:] from tgt[:, :-1] (all positions in parallel).

    batch = (src (B, S), tgt (B, T)) with tgt = BOS y_1 .. y_n EOS, padded with ``pad_id``.
    label_smoothing = eps trains towards (1 - eps) on the right token plus eps spread evenly over
    the whole vocabulary (the paper used 0.1), instead of a one-hot target.
    """
    check_float(label_smoothing, "label_smoothing", minimum=0.0, maximum=1.0)
    src, tgt = batch
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]                       # shift: input BOS..y_n, target y_1..EOS
    logits = model(src, tgt_in)                                     # (B, T-1, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=pad_id,
                           label_smoothing=label_smoothing)


@torch.no_grad()
def teacher_forced_correct(model: Seq2SeqTransformer, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """src (B, S), tgt (B, T) = BOS y EOS padded -> bool (B,): True where the argmax at every
    teacher-forced position is the reference token (EOS included).

    This is exactly "greedy decoding reproduces the reference": if every step's argmax is right
    given the right prefix, greedy decoding walks that same prefix; and the first wrong argmax
    is where greedy decoding goes wrong. One parallel pass instead of T sequential ones.
    """
    if src.dim() != 2 or tgt.dim() != 2 or src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt must be (batch, time) with one batch size, got "
                         f"{tuple(src.shape)} and {tuple(tgt.shape)}")
    was_training = model.training
    model.eval()
    predicted = model(src, tgt[:, :-1]).argmax(-1)                  # (B, T-1)
    model.train(was_training)
    target = tgt[:, 1:]
    return ((predicted == target) | (target == model.config.pad_id)).all(1)


@torch.no_grad()
def greedy_decode(model: Seq2SeqTransformer, src: torch.Tensor, bos_id: int, eos_id: int,
                  max_len: int = 32) -> torch.Tensor:
    """Start every sequence from BOS, append the most probable next token, stop at EOS.

    src (B, S) -> (B, <= max_len + 1) ids beginning with BOS; finished rows are padded.
    """
    check_int(max_len, "max_len", minimum=1)
    was_training = model.training
    model.eval()
    memory, src_mask, _ = model.encode(src)
    pad = model.config.pad_id
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)   # (B, 1)
    done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src_mask)[0][:, -1]                          # (B, V)
        nxt = logits.argmax(-1).masked_fill(done, pad)                                 # (B,)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys


def beam_search(model: Seq2SeqTransformer, src: torch.Tensor, bos_id: int, eos_id: int,
                beam_size: int = 4, max_len: int = 32, length_penalty: float = 0.0
                ) -> list[tuple[list[int], float]]:
    """Keep the ``beam_size`` most probable prefixes at every step, for one source sentence.

    src (S,) or (1, S) -> up to ``beam_size`` pairs (ids from BOS to EOS, score), best first; the
    score is the total log-probability divided by length**length_penalty.
    """
    if src.dim() == 1:
        src = src[None]
    if src.dim() != 2 or src.size(0) != 1:
        raise ValueError(f"src must be one sentence, (S,) or (1, S), got {tuple(src.shape)}")
    return beam_search_batch(model, src, bos_id, eos_id, beam_size, max_len, length_penalty)[0]


@torch.no_grad()
def beam_search_batch(model: Seq2SeqTransformer, src: torch.Tensor, bos_id: int, eos_id: int,
                      beam_size: int = 4, max_len: int = 32, length_penalty: float = 0.0
                      ) -> list[list[tuple[list[int], float]]]:
    """``beam_search`` for every sentence of src (B, S) at once: each step decodes the live prefixes of
    all the sentences in one batch. -> B lists of up to ``beam_size`` (ids, score), best first."""
    check_int(beam_size, "beam_size", minimum=1)
    check_int(max_len, "max_len", minimum=1)
    check_float(length_penalty, "length_penalty", minimum=0.0)
    if src.dim() != 2 or src.size(0) < 1:
        raise ValueError(f"src must be (B, S) with B >= 1, got {tuple(src.shape)}")
    was_training = model.training
    model.eval()
    memory, src_mask, _ = model.encode(src)                        # (B, S, d_model), encoded once
    beams = [[([bos_id], 0.0)] for _ in range(len(src))]           # per sentence: live prefixes, total log-probs
    finished = [[] for _ in range(len(src))]
    for _ in range(max_len):
        live = [b for b, prefixes in enumerate(beams) if prefixes]
        if not live:
            break
        owner = torch.tensor([b for b in live for _ in beams[b]], device=src.device)      # (k,): each row's sentence
        prefixes = torch.tensor([seq for b in live for seq, _ in beams[b]], device=src.device)   # (k, t)
        logits = model.decode(prefixes, memory[owner], src_mask[owner])[0]
        log_probs = iter(logits[:, -1].log_softmax(-1).tolist())                       # k rows of V
        for b in live:
            # every live prefix extended by every token; keep the beam_size most probable
            candidates = [(seq + [token], total + lp) for seq, total in beams[b]
                          for token, lp in enumerate(next(log_probs))]
            candidates = sorted(candidates, key=lambda c: -c[1])[:beam_size]
            finished[b] += [c for c in candidates if c[0][-1] == eos_id]              # ended with EOS
            beams[b] = [c for c in candidates if c[0][-1] != eos_id]                  # the rest go on
    model.train(was_training)
    return [sorted([(seq, total / (len(seq) - 1) ** length_penalty) for seq, total in done + going],
                   key=lambda h: -h[1])[:beam_size] for done, going in zip(finished, beams)]


def warmup_schedule(d_model: int, warmup_steps: int = 4000, total_steps: int | None = None,
                    cooldown_steps: int = 0, factor: float = 1.0):
    """The paper's learning rate as a multiplier of a base lr of 1 (step counts from 0):

    lr(s) = factor * d_model^-0.5 * min(s^-0.5, s * warmup_steps^-1.5) with s = step + 1
    (the paper: factor 1):
    a linear rise for ``warmup_steps`` steps, then decay as 1 / sqrt(s). With ``cooldown_steps``
    (and ``total_steps``), the last ``cooldown_steps`` steps are also scaled down linearly to 0,
    so that a short run ends with small steps instead of wandering at a still-large rate.
    """
    check_int(d_model, "d_model", minimum=1)
    check_int(warmup_steps, "warmup_steps", minimum=1)
    check_int(cooldown_steps, "cooldown_steps", minimum=0)
    check_float(factor, "factor", minimum=0.0, strict_minimum=True)
    if cooldown_steps:
        check_int(total_steps, "total_steps", minimum=cooldown_steps)

    def multiplier(step: int) -> float:
        s = step + 1
        rate = factor * d_model ** -0.5 * min(s ** -0.5, s * warmup_steps ** -1.5)
        if cooldown_steps:
            rate *= min(1.0, max(0.0, (total_steps - step) / cooldown_steps))
        return rate
    return multiplier


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    check_type(model, "model", nn.Module)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
