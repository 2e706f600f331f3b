"""A toy in-context learning task: look a key up in a table that exists only in the prompt.

Every sequence holds ``num_pairs`` (key, value) pairs drawn afresh, then a query key; the answer is
the value paired with that key IN THIS SEQUENCE. No weight can store the table, so a model that
answers well above chance 1/num_values has learned to find the matching key in its context and
copy what comes with it: the match-and-copy step of an induction head (Olsson et al. 2022).

To make one attention layer enough, each pair is ONE token, id ``key * num_values + value`` (as if
"France:Paris" were one token); the query is token ``num_keys * num_values + key``.
"""
import torch
import torch.nn.functional as F

from lmcourse.validate import check_int, check_type


def key_value_batch(batch_size: int, num_keys: int = 8, num_values: int = 8, num_pairs: int = 6,
                    generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids (B, num_pairs + 1), answers (B,)): distinct keys with random values, then a query key.

    ids < num_keys * num_values are pair tokens; the last id is the query. Vocabulary size:
    ``num_keys * num_values + num_keys``. answers are value ids in 0..num_values-1.
    """
    check_int(batch_size, "batch_size", minimum=1)
    check_int(num_keys, "num_keys", minimum=2)
    check_int(num_values, "num_values", minimum=2)
    check_int(num_pairs, "num_pairs", minimum=1, maximum=num_keys)
    keys = torch.rand(batch_size, num_keys, generator=generator).argsort(dim=1)[:, :num_pairs]   # (B, P) distinct
    values = torch.randint(num_values, (batch_size, num_pairs), generator=generator)             # (B, P)
    asked = torch.randint(num_pairs, (batch_size,), generator=generator)                          # (B,)
    rows = torch.arange(batch_size)
    query = num_keys * num_values + keys[rows, asked]                                            # (B,)
    ids = torch.cat([keys * num_values + values, query[:, None]], dim=1)                         # (B, P + 1)
    return ids, values[rows, asked]


def answer_logits(model: torch.nn.Module, ids: torch.Tensor, num_values: int) -> torch.Tensor:
    """(B, num_values): a causal LM's scores for the answer, read at the query (last) position.

    Only the first ``num_values`` output ids are used as the answer vocabulary."""
    check_type(ids, "ids", torch.Tensor)
    check_int(num_values, "num_values", minimum=2)
    return model(ids)[:, -1, :num_values]                 # (B, T, V) -> (B, num_values)


def lookup_loss(model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor], num_values: int) -> torch.Tensor:
    """Cross-entropy of the answer at the query position."""
    ids, answers = batch
    return F.cross_entropy(answer_logits(model, ids, num_values), answers)
