"""ELECTRA's replaced-token detection in miniature (Clark et al. 2020).

A generator fills some positions with plausible tokens; a discriminator reads the result and
says, for EVERY position, whether its token is original or replaced. Every position gives a
training signal, where a masked LM learns only from the 15% it masked.

Here the generator is a count-based cloze model (ELECTRA's is a small masked LM trained
jointly); the discriminator is a small Transformer encoder built from
:class:`lmcourse.attention.MultiHeadAttention`.
"""
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention
from lmcourse.data import random_windows
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.validate import check_float, check_int, check_probability, check_token_ids, check_type


class BigramClozeGenerator:
    """Fills a blank from its two neighbours: p(w | l _ r) ∝ p(w | l) p(r | w).

    Both factors are add-k smoothed bigram estimates from a token stream ``ids``; tokens in
    ``special_ids`` are never proposed.
    """

    def __init__(self, ids, vocab_size: int, k: float = 0.1, special_ids: tuple[int, ...] = ()):
        ids = torch.as_tensor(ids)
        check_int(vocab_size, "vocab_size", minimum=2)
        check_float(k, "k", minimum=0.0, strict_minimum=True)
        if ids.dim() != 1 or len(ids) < 2:
            raise ValueError(f"ids must be a 1-D stream of at least 2 tokens, got shape {tuple(ids.shape)}")
        check_token_ids(ids, vocab_size, "ids")
        counts = torch.zeros(vocab_size, vocab_size)
        counts.index_put_((ids[:-1], ids[1:]), torch.ones(len(ids) - 1), accumulate=True)
        # log p(b | a) = log (c(a, b) + k) / (c(a) + k V)
        self.log_next = ((counts + k) / (counts.sum(1, keepdim=True) + k * vocab_size)).log()  # (V, V)
        self.log_next_t = self.log_next.T.contiguous()     # row r: log p(r | w) for every w
        self.blocked = torch.zeros(vocab_size, dtype=torch.bool)
        self.blocked[list(special_ids)] = True
        self.vocab_size = vocab_size

    def logits(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        """(N,) left and right neighbour ids -> (N, V) unnormalised log p(w | l _ r)."""
        check_token_ids(left, self.vocab_size, "left")
        check_token_ids(right, self.vocab_size, "right")
        scores = self.log_next[left] + self.log_next_t[right]       # (N, V) + (N, V)
        return scores.masked_fill(self.blocked, float("-inf"))

    def sample(self, left: torch.Tensor, right: torch.Tensor, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """(N,) one sampled filler per blank."""
        probs = self.logits(left, right).softmax(dim=-1)            # (N, V)
        return torch.multinomial(probs, 1, generator=generator).squeeze(1)


def replace_tokens(input_ids: torch.Tensor, cloze: BigramClozeGenerator, mask_prob: float = 0.15,
                   special_ids: tuple[int, ...] = (), generator: torch.Generator | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt (batch, time) ids: pick ``mask_prob`` of the inner positions, let ``cloze`` refill them.

    Returns (corrupted ids, replaced) with replaced (batch, time) bool. As in ELECTRA, a position
    whose sampled token equals the original counts as original. The first and last position of a
    row are never picked (the generator needs both neighbours, read from the original text).
    """
    check_type(cloze, "cloze", BigramClozeGenerator)
    check_token_ids(input_ids, cloze.vocab_size, "input_ids")
    check_probability(mask_prob, "mask_prob")
    if input_ids.dim() != 2 or input_ids.size(1) < 3:
        raise ValueError(f"input_ids must be (batch, time >= 3), got shape {tuple(input_ids.shape)}")
    special = torch.zeros(cloze.vocab_size, dtype=torch.bool)
    special[list(special_ids)] = True
    chosen = torch.rand(input_ids.shape, generator=generator) < mask_prob     # (B, T)
    chosen &= ~special[input_ids]
    chosen[:, 0] = chosen[:, -1] = False
    rows, cols = chosen.nonzero(as_tuple=True)
    corrupted = input_ids.clone()
    corrupted[rows, cols] = cloze.sample(input_ids[rows, cols - 1], input_ids[rows, cols + 1], generator)
    return corrupted, corrupted != input_ids


def rtd_batches(stream, cloze: BigramClozeGenerator, num_batches: int, batch_size: int, seq_len: int,
                mask_prob: float = 0.15, special_ids: tuple[int, ...] = (),
                generator: torch.Generator | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``num_batches`` of (corrupted ids, replaced as float) from random windows of ``stream``."""
    check_int(num_batches, "num_batches", minimum=1)
    out = []
    for _ in range(num_batches):
        x, _ = random_windows(stream, batch_size, seq_len, generator)          # (B, T)
        corrupted, replaced = replace_tokens(x, cloze, mask_prob, special_ids, generator)
        out.append((corrupted, replaced.float()))
    return out


class _EncoderBlock(nn.Module):
    """Pre-LN Transformer layer: x + MHA(LN(x)), then x + FFN(LN(x)); (B, T, C) -> (B, T, C)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))[0]     # (B, T, C)
        return x + self.ffn(self.ln2(x))      # (B, T, C)


class TinyEncoder(nn.Module):
    """A small Transformer encoder: token + learned position embeddings, pre-LN layers, a final
    LayerNorm. :meth:`encode` maps ids (B, T) to vectors (B, T, d_model); subclasses add a head."""

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int | None = None, max_len: int = 128):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(d_model, "d_model", minimum=1)
        check_int(num_heads, "num_heads", minimum=1)
        check_int(num_layers, "num_layers", minimum=1)
        if d_ff is not None:
            check_int(d_ff, "d_ff", minimum=1)
        check_int(max_len, "max_len", minimum=1)
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(_EncoderBlock(d_model, num_heads, d_ff or 4 * d_model)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, T, d_model) contextual vectors."""
        check_token_ids(ids, self.tok.num_embeddings, "ids")
        if ids.dim() != 2 or ids.size(1) > self.pos.num_embeddings:
            raise ValueError(f"ids must be (batch, time <= {self.pos.num_embeddings}), got {tuple(ids.shape)}")
        positions = torch.arange(ids.size(1), device=ids.device)
        x = self.tok(ids) + self.pos(positions)         # (B, T, C) + (T, C) -> (B, T, C)
        for block in self.blocks:
            x = block(x)                                # (B, T, C)
        return self.norm(x)


class ReplacedTokenDetector(TinyEncoder):
    """ELECTRA's discriminator, small: a :class:`TinyEncoder` and one logit per token.
    forward(ids (B, T)) -> logits (B, T); a logit > 0 means "replaced", sigmoid(logit) = P(replaced)."""

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int | None = None, max_len: int = 128, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__(vocab_size, d_model, num_heads, num_layers, d_ff, max_len)
        self.head = nn.Linear(d_model, 1)
        self.to(device)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encode(ids)).squeeze(-1)     # (B, T, 1) -> (B, T)


def rtd_loss(model: ReplacedTokenDetector, batch) -> torch.Tensor:
    """Binary cross-entropy of "replaced?" averaged over every position of the batch."""
    corrupted, replaced = batch
    return F.binary_cross_entropy_with_logits(model(corrupted), replaced)


def detection_metrics(logits: torch.Tensor, replaced: torch.Tensor) -> dict[str, float]:
    """Accuracy of the detector, the all-"original" baseline, precision/recall on replaced, and the
    ROC AUC (0.5 = chance, 1 = every replaced token scores above every original one)."""
    check_type(logits, "logits", torch.Tensor)
    check_type(replaced, "replaced", torch.Tensor)
    if logits.shape != replaced.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and replaced {tuple(replaced.shape)} must match")
    predicted, truth = logits > 0, replaced.bool()
    hits = (predicted & truth).sum().item()
    # ROC AUC = P(a replaced token scores above an original one), from the ranks of the scores
    ranks = logits.flatten().argsort().argsort().double() + 1
    n_pos, n_neg = truth.sum().item(), (~truth).sum().item()
    auc = ((ranks[truth.flatten()].sum().item() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
           if n_pos and n_neg else float("nan"))
    return {
        "accuracy": (predicted == truth).float().mean().item(),
        "baseline accuracy": (~truth).float().mean().item(),
        "precision": hits / max(1, predicted.sum().item()),
        "recall": hits / max(1, truth.sum().item()),
        "AUC": auc,
    }
