"""Checks for chapter 8 (GPT): ``check("ch08-gpt-parameters", fn)``, ``check("ch08-naive-bpe", fn)`` and
``check("ch08-sliding-window", fn)``. While the reader's function runs, the package code that would answer
the exercise for it refuses to run (building any ``torch.nn.Module``; ``BPETokenizer.train`` and the package's
own ``sliding_window_loss``, however they are reached); each expected answer is computed only after the
reader's function has returned, so it cannot be read from the check."""
import torch

from lmcourse.bpe import BPETokenizer
from lmcourse.data import news_documents
from lmcourse.exercises._refusing import refusing, refusing_function
from lmcourse.gpt import GPT, GPTConfig, sliding_window_loss

__all__ = ["gpt_parameters", "naive_bpe", "sliding_window"]


def gpt_parameters(candidate) -> int:
    """``candidate(vocab_size, context_size, d_model, num_layers) -> int``: the parameter count of
    a GPT-2-layout model with tied input/output embeddings and d_ff = 4 * d_model."""
    configs = [(10, 8, 4, 1), (100, 32, 16, 2), (1024, 128, 128, 4), (50257, 1024, 768, 12)]
    for vocab_size, context_size, d_model, num_layers in configs:
        with refusing(torch.nn.Module, "__init__", "your function built a model to count its parameters: count "
                                                   "them from the shapes of the weights, block by block"):
            got = candidate(vocab_size, context_size, d_model, num_layers)
        with torch.device("meta"):   # shapes only: no memory is allocated
            model = GPT(GPTConfig(vocab_size=vocab_size, context_size=context_size, d_model=d_model,
                                  num_layers=num_layers, num_heads=1))
        expected = sum(p.numel() for p in model.parameters())   # after the call: the reader's code cannot peek
        assert got == expected, (
            f"for vocab_size={vocab_size}, context_size={context_size}, d_model={d_model}, "
            f"num_layers={num_layers} you computed {got}, the model has {expected}. Did you count "
            "the biases, both LayerNorms per block plus the final one, and the tied output layer once?")
    return len(configs)


def naive_bpe(candidate) -> int:
    """``candidate(texts: list[str], num_merges: int) -> list[(int, int)]``: byte-pair merges learned
    the naive way (all pairs counted again after every merge), equal to :meth:`BPETokenizer.train`'s."""
    cases = [(["low low low low low lower lower newest newest newest newest newest newest widest widest widest"], 10),
             (["aaaa abab", "baba aaab"], 6),
             (news_documents("train")[:3], 40)]
    for texts, num_merges in cases:
        with refusing_function(BPETokenizer.train):
            got = [tuple(pair) for pair in candidate(list(texts), num_merges)]
        expected = BPETokenizer.train(texts, vocab_size=256 + num_merges + 1).merges
        first_wrong = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), None)
        assert first_wrong is None and len(got) == len(expected), (
            f"on {len(texts)} text(s) starting {texts[0][:30]!r} with num_merges={num_merges}: "
            + (f"merge {first_wrong} is {got[first_wrong]}, expected {expected[first_wrong]}. "
               if first_wrong is not None else f"you return {len(got)} merges, expected {len(expected)}. ")
            + "Count pairs inside each pre-token (pretokenize), weighted by how often the pre-token occurs; "
            "take the most frequent pair, the smaller pair of ids on a tie; stop early when the best pair "
            "occurs fewer than 2 times; new ids are 256, 257, ...")
    return len(cases)


def sliding_window(candidate) -> int:
    """``candidate(model, ids (N,), stride) -> float``: the mean next-token loss over the stream, every
    token after the first predicted once, each window scoring only the targets no earlier window scored."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=40, context_size=8, d_model=16, num_layers=1, num_heads=2)).eval()
    cases = [(33, 8), (33, 4), (30, 3), (9, 1), (50, 1), (35, 4), (37, 3)]   # the last two need a final window
    for length, stride in cases:
        ids = torch.randint(0, 40, (length,))
        with torch.no_grad(), refusing_function(sliding_window_loss):
            got = float(candidate(model, ids, stride))
        expected = sliding_window_loss(model, ids, stride)
        assert abs(got - expected) < 1e-5, (
            f"for a stream of {length} tokens, context 8 and stride {stride} you return {got:.5f}, expected "
            f"{expected:.5f}. Windows start every stride tokens and the last one ends at the stream's end; each "
            "scores only targets that no earlier window scored; divide by the N - 1 targets.")
    return len(cases)
