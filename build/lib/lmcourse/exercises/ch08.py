"""Checks for chapter 8 (GPT): ``check("ch08-gpt-parameters", fn)`` and ``check("ch08-merge-pair", fn)``."""
import torch

from lmcourse.bpe import merge_pair as _merge_pair
from lmcourse.gpt import GPT, GPTConfig

__all__ = ["gpt_parameters", "merge_pair"]


def gpt_parameters(candidate) -> int:
    """``candidate(vocab_size, context_size, d_model, num_layers) -> int``: the parameter count of
    a GPT-2-layout model with tied input/output embeddings and d_ff = 4 * d_model."""
    configs = [(10, 8, 4, 1), (100, 32, 16, 2), (1024, 128, 128, 4), (50257, 1024, 768, 12)]
    for passed, (vocab_size, context_size, d_model, num_layers) in enumerate(configs):
        with torch.device("meta"):   # shapes only: no memory is allocated
            model = GPT(GPTConfig(vocab_size=vocab_size, context_size=context_size, d_model=d_model,
                                  num_layers=num_layers, num_heads=1))
        expected = sum(p.numel() for p in model.parameters())
        got = candidate(vocab_size, context_size, d_model, num_layers)
        assert got == expected, (
            f"for vocab_size={vocab_size}, context_size={context_size}, d_model={d_model}, "
            f"num_layers={num_layers} you computed {got}, the model has {expected}. Did you count "
            "the biases, both LayerNorms per block plus the final one, and the tied output layer once?")
    return passed + 1


def merge_pair(candidate) -> int:
    """``candidate(ids, pair, new_id) -> list``: replace non-overlapping occurrences left to right."""
    cases = [([1, 2, 3, 1, 2], (1, 2), 9), ([5, 5, 5], (5, 5), 7), ([1, 2], (2, 1), 4),
             ([], (1, 2), 3), ([4, 1, 2, 1, 2, 1], (1, 2), 8)]
    for passed, (ids, pair, new_id) in enumerate(cases):
        expected = _merge_pair(list(ids), pair, new_id)
        got = candidate(list(ids), pair, new_id)
        assert list(got) == expected, (
            f"merging {pair} -> {new_id} in {ids} should give {expected}, got {list(got)}"
            + (" (occurrences may not overlap: scan left to right and skip past a merge)"
               if pair[0] == pair[1] else ""))
    return passed + 1
