"""The chapter 8 exercise checks accept the reference answers and reject typical mistakes."""
from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from lmcourse.bpe import BPETokenizer, merge_pair, pretokenize
from lmcourse.exercises import check
from lmcourse.gpt import GPT, Block, GPTConfig, sliding_window_loss


def test_wrong_answers_are_rejected():
    with pytest.raises(AssertionError, match="expected"):     # the first merges, but one too many
        check("ch08-naive-bpe", lambda texts, n: naive_merges(texts, n + 1))
    with pytest.raises(AssertionError, match="expected"):     # non-overlapping windows whatever the stride
        check("ch08-sliding-window", lambda m, ids, stride: sliding_loss(m, ids, m.config.context_size))


@torch.no_grad()
def sliding_loss(model, ids, stride):
    """The mean next-token loss over the stream with windows every stride tokens (the reader's exercise)."""
    T = model.config.context_size
    last = len(ids) - 1 - T
    starts = sorted(set(range(0, last, stride)) | {last})
    total, scored_up_to = 0.0, 0
    for s in starts:
        nll = F.cross_entropy(model(ids[None, s:s + T])[0], ids[s + 1:s + T + 1], reduction="none")
        total += nll[torch.arange(s + 1, s + T + 1) > scored_up_to].sum().item()
        scored_up_to = s + T
    return total / (len(ids) - 1)


def naive_merges(texts, num_merges):
    """Byte-pair merges, counting every pair again after each merge (the reader's exercise)."""
    chunks = Counter(chunk for text in texts for chunk in pretokenize(text))
    words = {tuple(chunk.encode("utf-8")): count for chunk, count in chunks.items()}
    merges = []
    for new_id in range(256, 256 + num_merges):
        pairs = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        pair = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[pair] < 2:
            break
        merges.append(pair)
        words = {tuple(merge_pair(list(word), pair, new_id)): count for word, count in words.items()}
    return merges


def test_exercise_checkers_accept_right_answers():
    assert check("ch08-naive-bpe", naive_merges) == "ch08-naive-bpe: all 3 checks passed"
    assert check("ch08-sliding-window", sliding_loss) == "ch08-sliding-window: all 7 checks passed"

    @torch.no_grad()
    def without_the_last_window(model, ids, stride):   # windows every stride tokens, none ending the stream
        T = model.config.context_size
        total, scored_up_to, count = 0.0, 0, 0
        for s in range(0, len(ids) - 1 - T + 1, stride):
            nll = F.cross_entropy(model(ids[None, s:s + T])[0], ids[s + 1:s + T + 1], reduction="none")
            new = torch.arange(s + 1, s + T + 1) > scored_up_to
            total, count, scored_up_to = total + nll[new].sum().item(), count + int(new.sum()), s + T
        return total / count
    with pytest.raises(AssertionError, match="stride"):
        check("ch08-sliding-window", without_the_last_window)


def test_the_package_code_that_answers_an_exercise_is_refused():
    with pytest.raises(AssertionError, match="package's own"):
        check("ch08-naive-bpe", lambda texts, n: BPETokenizer.train(texts, vocab_size=256 + n + 1).merges)

    def captured(texts, n, _train=BPETokenizer.train):        # a reference taken before the check runs
        return _train(texts, vocab_size=256 + n + 1).merges
    with pytest.raises(AssertionError, match="package's own"):
        check("ch08-naive-bpe", captured)
    assert BPETokenizer.train(["aaaa abab"], vocab_size=258).merges                   # restored afterwards
    with pytest.raises(AssertionError, match="package's own"):
        check("ch08-sliding-window", sliding_window_loss)
    with pytest.raises(AssertionError, match="package's own"):      # however it is reached
        check("ch08-sliding-window", lambda m, ids, stride: sliding_window_loss(m, ids, stride))
    assert sliding_window_loss.__wrapped__.__code__.co_name == "sliding_window_loss"   # restored afterwards

    def by_blocks(vocab_size, context_size, d_model, num_layers):
        config = GPTConfig(vocab_size=vocab_size, context_size=context_size, d_model=d_model,
                           num_layers=num_layers, num_heads=1)
        return (vocab_size + context_size) * d_model + 2 * d_model + num_layers * sum(
            p.numel() for p in Block(config).parameters())
    with pytest.raises(AssertionError, match="built a model"):
        check("ch08-gpt-parameters", by_blocks)

    def by_transformers(vocab_size, context_size, d_model, num_layers):
        import transformers
        config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=context_size, n_embd=d_model,
                                         n_layer=num_layers, n_head=1)
        with torch.device("meta"):
            return sum(p.numel() for p in transformers.GPT2LMHeadModel(config).parameters())
    with pytest.raises(AssertionError, match="built a model"):
        check("ch08-gpt-parameters", by_transformers)

    def by_building(vocab_size, context_size, d_model, num_layers):
        config = GPTConfig(vocab_size=vocab_size, context_size=context_size, d_model=d_model,
                           num_layers=num_layers, num_heads=1)
        return sum(p.numel() for p in GPT(config).parameters())
    with pytest.raises(AssertionError, match="built a model"):
        check("ch08-gpt-parameters", by_building)


def test_the_expected_answer_cannot_be_read_from_the_check():
    import inspect
    peek = lambda *args: inspect.currentframe().f_back.f_locals["expected"]     # noqa: E731
    for exercise in ("ch08-gpt-parameters", "ch08-naive-bpe", "ch08-sliding-window"):
        with pytest.raises(KeyError, match="expected"):
            check(exercise, peek)
