"""Choosing the next token from a language model's logits: temperature, top-k and top-p (nucleus).

Used by every generating model of the course (character RNN, GPT).
"""
import torch

from lmcourse.validate import check_float, check_int, check_type


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> torch.Tensor:
    """Rescale and truncate next-token logits (..., vocab); removed tokens get -inf.

    temperature: logits / temperature (< 1 sharpens, > 1 flattens); must be > 0.
    top_k: keep the k most probable tokens.  top_p: keep the smallest set of most probable tokens
    whose probabilities sum to at least p (Holtzman et al. 2020), in (0, 1].
    """
    check_type(logits, "logits", torch.Tensor)
    check_float(temperature, "temperature", minimum=0.0, strict_minimum=True)
    logits = logits / temperature
    if top_k is not None:
        check_int(top_k, "top_k", minimum=1)
        k = min(top_k, logits.size(-1))
        kth = logits.topk(k, dim=-1).values[..., -1:]                  # (..., 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        check_float(top_p, "top_p", minimum=0.0, maximum=1.0, strict_minimum=True)
        sorted_logits, order = logits.sort(dim=-1, descending=True)     # (..., V)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        # drop a token if the tokens before it already reach top_p (the first is always kept)
        drop_sorted = (cumulative - sorted_logits.softmax(dim=-1)) >= top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)              # back to vocabulary order
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample one token id per row from logits (batch, vocab) -> (batch,).

    ``temperature=0`` is not allowed (division by zero); use :func:`greedy_next` for argmax decoding.
    """
    if logits.dim() != 2:
        raise ValueError(f"logits must be (batch, vocab), got shape {tuple(logits.shape)}")
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def greedy_next(logits: torch.Tensor) -> torch.Tensor:
    """The most probable token id per row: (batch, vocab) -> (batch,)."""
    if logits.dim() != 2:
        raise ValueError(f"logits must be (batch, vocab), got shape {tuple(logits.shape)}")
    return logits.argmax(dim=-1)
