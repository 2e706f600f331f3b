"""Does a decoder read the target tokens after the one it predicts? Replace them by random tokens
and compare its predictions: a decoder under a causal mask cannot see them, so nothing changes; a
decoder that reads them changes its predictions, and at inference those tokens do not exist.
"""
import torch
from torch import nn

from lmcourse.validate import check_int


@torch.no_grad()
def random_future_logits(model: nn.Module, src: torch.Tensor, tgt_in: torch.Tensor, low: int, high: int,
                         pad_id: int = 0, seed: int = 0) -> torch.Tensor:
    """Logits (B, T, V) whose row t is what ``model(src, x_t)`` predicts at position t, where x_t is
    tgt_in with every token after t replaced by a random id drawn uniformly from [low, high)
    (padding stays padding). src (B, S), tgt_in (B, T) ids starting with BOS; one pass per position.
    The random ids depend only on ``seed`` and the shape, so two models see the same noise.
    """
    if src.dim() != 2 or tgt_in.dim() != 2 or src.size(0) != tgt_in.size(0):
        raise ValueError(f"src and tgt_in must be (batch, time) with one batch size, got "
                         f"{tuple(src.shape)} and {tuple(tgt_in.shape)}")
    check_int(low, "low", minimum=0)
    check_int(high, "high", minimum=low + 1)
    check_int(seed, "seed", minimum=0)
    noise = torch.randint(low, high, tgt_in.shape, generator=torch.Generator().manual_seed(seed))
    noise = torch.where(tgt_in == pad_id, tgt_in, noise)            # (B, T): random ids, padding kept
    was_training = model.training
    model.eval()
    rows = []
    for t in range(tgt_in.size(1)):
        x = torch.cat([tgt_in[:, :t + 1], noise[:, t + 1:]], dim=1)    # the prefix up to t, noise after it
        rows.append(model(src, x)[:, t])                              # (B, V): position t's prediction
    model.train(was_training)
    return torch.stack(rows, dim=1)                                   # (B, T, V)
