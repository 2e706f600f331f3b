"""word2vec (Mikolov et al. 2013): CBOW and skip-gram with negative sampling.

Both are log-linear: no non-linear hidden layer, just two embedding tables and dot products.
Skip-gram predicts each context word from the centre word; CBOW predicts the centre word from the
average of its context vectors (so it ignores word order, correction 3). Instead of a softmax over
the vocabulary, the first paper used a hierarchical softmax over a Huffman tree (:func:`huffman_tree`,
:func:`hierarchical_softmax_log_probs`, built here to be looked at); the second paper's negative
sampling, which the course trains with, asks a logistic classifier to tell the observed
(input, output) pair from ``negative`` pairs whose output word is drawn from the unigram
distribution to the 3/4.

Training follows the original recipe: frequent words are subsampled, the window is shrunk at
random for every centre word, and plain SGD runs with a learning rate that decays linearly to
almost zero. Batches of examples are processed at once by :func:`sgd_step`, which writes
word2vec.c's update out instead of asking autograd for it; with word2vec.c's unigram table for the
negatives this made training about 2.5 times as fast as the first version (the book's Performance
page has the timings).

A second engine, ``train_word2vec(..., engine="compiled")``, runs word2vec.c's own loop instead: one
(input, output) pair at a time, each update applied before the next pair is scored, in the plain
Python function :func:`word2vec_c_epoch`, which numba compiles to machine code on first use.
"""
import functools
import heapq
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.seed import DEFAULT_DEVICE, set_seed
from lmcourse.train import History, progress_enabled
from lmcourse.validate import check_float, check_int, check_nonempty, check_token_ids, check_type
from lmcourse.vocab import Vocab


class Word2Vec(nn.Module):
    """Two embedding tables: ``in_embed`` (the word vectors) and ``out_embed`` (output vectors).

    forward(inputs (B, L) ids, input_mask (B, L) bool, targets (B, 1 + K) ids) -> mean loss, where
    h = mean of the masked input vectors (L = 1 for skip-gram, the context words for CBOW), target 0
    is the observed word and targets 1..K are negative samples:
        loss = -log sigma(u_{t_0} . h) - sum_k log sigma(-u_{t_k} . h)
    """

    def __init__(self, vocab_size: int, dim: int = 100, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(dim, "dim", minimum=1)
        self.in_embed = nn.Embedding(vocab_size, dim, sparse=True, device=device)    # (V, d)
        self.out_embed = nn.Embedding(vocab_size, dim, sparse=True, device=device)   # (V, d)
        with torch.no_grad():   # the original's initialisation: small uniform inputs, zero outputs
            self.in_embed.weight.uniform_(-0.5 / dim, 0.5 / dim)
            self.out_embed.weight.zero_()

    def forward(self, inputs: torch.Tensor, input_mask: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        _check_batch(self, inputs, input_mask, targets)
        mask = input_mask.unsqueeze(-1).to(self.in_embed.weight.dtype)              # (B, L, 1)
        h = (self.in_embed(inputs) * mask).sum(1) / mask.sum(1).clamp(min=1)         # (B, L, d) -> (B, d)
        u = self.out_embed(targets)                                                 # (B, 1+K, d)
        scores = (u @ h.unsqueeze(-1)).squeeze(-1)                                  # (B, 1+K, d) @ (B, d, 1) -> (B, 1+K)
        # -log sigma(s_0) - sum_k log sigma(-s_k)
        sign = torch.ones_like(scores)
        sign[:, 1:] = -1.0
        return -F.logsigmoid(sign * scores).sum(1).mean()

    @property
    def vectors(self) -> torch.Tensor:
        """(V, d) the input vectors, the ones word2vec hands out as word embeddings."""
        return self.in_embed.weight.detach()


@torch.no_grad()
def sgd_step(model: Word2Vec, inputs: torch.Tensor, input_mask: torch.Tensor, targets: torch.Tensor,
             lr: float) -> torch.Tensor:
    """One SGD step on a batch for :meth:`Word2Vec.forward`'s loss, each example moved by its own
    word2vec.c update, in place. Returns the batch's mean loss before the step.

    inputs (B, L) ids with input_mask (B, L) bool (L = 1 for skip-gram, the context words for CBOW);
    targets (B, 1 + K) ids, the observed word first, then the K negatives; lr the step size.
    For CBOW every context word receives the whole update of their mean h (``neu1e``), as in
    word2vec.c and gensim with ``cbow_mean=1``, not 1/n of it. Repeated words in a batch add their
    updates, as summed per-example SGD steps would.
    """
    check_type(model, "model", Word2Vec)
    _check_batch(model, inputs, input_mask, targets)
    check_float(lr, "lr", minimum=0.0)
    W_in, W_out = model.in_embed.weight, model.out_embed.weight                      # (V, d)
    (B, L), d = inputs.shape, W_in.size(1)
    skip_gram = L == 1 and bool(input_mask.all())
    if skip_gram:                                                                    # one input word: h = v
        h = W_in.index_select(0, inputs[:, 0])                                       # (B, d)
    else:
        x = W_in.index_select(0, inputs.reshape(-1)).view(B, L, d)                   # (B, L, d)
        m = input_mask.unsqueeze(-1).to(W_in.dtype)                                  # (B, L, 1): 1 or 0
        h = (x * m).sum(1) / m.sum(1).clamp(min=1)                                   # mean of the inputs: (B, d)
    u = W_out.index_select(0, targets.reshape(-1)).view(B, -1, d)                    # (B, 1+K, d)
    scores = torch.bmm(u, h.unsqueeze(-1)).squeeze(-1)                              # (B, 1+K, d) @ (B, d, 1) -> (B, 1+K)
    labels = torch.zeros_like(scores)
    labels[:, 0] = 1.0
    g = lr * (labels - torch.sigmoid(scores))                                        # (B, 1+K)
    neu1e = (g.unsqueeze(-1) * u).sum(1)                                             # sum_j g_j u_j: (B, d)
    # scatter-adds (index_put_ with accumulate: faster than index_add_ on CPU; the Performance page times both)
    W_out.index_put_((targets.reshape(-1),), (g.unsqueeze(-1) * h.unsqueeze(1)).view(-1, d), accumulate=True)
    if skip_gram:
        W_in.index_put_((inputs[:, 0],), neu1e, accumulate=True)
    else:                                                                            # full neu1e to every input
        W_in.index_put_((inputs[input_mask],), neu1e.repeat_interleave(input_mask.sum(1), dim=0), accumulate=True)
    return -F.logsigmoid((2 * labels - 1) * scores).sum(1).mean()


def _check_batch(model: Word2Vec, inputs: torch.Tensor, input_mask: torch.Tensor, targets: torch.Tensor) -> None:
    check_token_ids(inputs, model.in_embed.num_embeddings, "inputs")
    check_token_ids(targets, model.out_embed.num_embeddings, "targets")
    if inputs.dim() != 2 or input_mask.shape != inputs.shape or targets.dim() != 2 \
            or targets.size(0) != inputs.size(0):
        raise ValueError(f"expected inputs (B, L), input_mask (B, L), targets (B, 1+K); got "
                         f"{tuple(inputs.shape)}, {tuple(input_mask.shape)}, {tuple(targets.shape)}")


def keep_probabilities(counts: torch.Tensor, sample: float = 1e-3) -> torch.Tensor:
    """Probability of keeping each occurrence of a word with these corpus counts (word2vec.c's formula).

    With f = count / total: P(keep) = (sqrt(f / sample) + 1) * sample / f, capped at 1. Words rarer
    than about ``sample`` are always kept; "the" loses most of its occurrences. ``sample=0`` keeps all.
    """
    check_type(counts, "counts", torch.Tensor)
    check_float(sample, "sample", minimum=0.0)
    if counts.numel() == 0 or (counts <= 0).any():
        raise ValueError("counts must be non-empty and positive")
    if sample == 0:
        return torch.ones_like(counts, dtype=torch.float64)
    f = counts.double() / counts.sum()
    return (((f / sample).sqrt() + 1) * sample / f).clamp(max=1.0)


def noise_distribution(counts: torch.Tensor, power: float = 0.75) -> torch.Tensor:
    """The negative-sampling distribution: counts ** power, normalised (power 3/4 as in the paper)."""
    check_type(counts, "counts", torch.Tensor)
    check_float(power, "power", minimum=0.0)
    if counts.numel() == 0 or (counts < 0).any() or counts.sum() == 0:
        raise ValueError("counts must be non-empty, non-negative and not all zero")
    p = counts.double() ** power
    return p / p.sum()


def noise_table(probs: torch.Tensor, size: int = 10**6) -> torch.Tensor:
    """word2vec.c's unigram table: ``size`` word ids, word i filling about ``probs[i] * size`` slots,
    so that one uniform index into it draws a negative (much faster than a search of the CDF).

    probs (V,) -> (size,) int64. Words with ``probs[i] * size`` below about 0.5 may get no slot.
    word2vec.c's table has 10^8 slots; 10^6 is plenty for the course's vocabularies of a few thousand.
    """
    check_type(probs, "probs", torch.Tensor)
    check_int(size, "size", minimum=1)
    if probs.dim() != 1 or probs.numel() == 0 or (probs < 0).any() or probs.sum() <= 0:
        raise ValueError("probs must be a non-empty 1-D tensor of non-negative probabilities")
    ends = (probs.double().cumsum(0) / probs.sum() * size).round().long()           # (V,) last slot + 1
    return torch.repeat_interleave(torch.arange(len(probs)), torch.diff(ends, prepend=ends.new_zeros(1)))


def encode_corpus(sentences: Sequence[Sequence[str]], min_count: int = 5) -> tuple[Vocab, list[list[int]]]:
    """A vocabulary of words seen ``min_count`` times (no special tokens), and the sentences as ids
    with rarer words dropped, as word2vec does."""
    check_nonempty(sentences, "sentences")
    check_int(min_count, "min_count", minimum=1)
    if any(isinstance(s, str) for s in sentences):
        raise TypeError("sentences must be lists of tokens, not strings; tokenize them first")
    vocab = Vocab.from_texts(sentences, min_freq=min_count, specials=())
    if len(vocab) < 2:
        raise ValueError(f"fewer than 2 words occur min_count={min_count} times")
    return vocab, [[vocab.stoi[t] for t in s if t in vocab.stoi] for s in sentences]


def window_examples(ids: torch.Tensor, sent: torch.Tensor, window: int, cbow: bool,
                    generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Training examples of one epoch from a subsampled stream ``ids`` (N,) with sentence numbers ``sent``.

    Every centre word draws its own window size b in 1..window (nearer words are used more often), as
    word2vec.c does; ``generator=None`` uses the full window for every centre word instead.
    skip-gram: one example per (centre, context) pair -> inputs (P, 1), mask (P, 1), outputs (P,).
    CBOW: one example per centre -> inputs (N', 2 window) context ids, mask (N', 2 window), outputs (N',).
    """
    check_int(window, "window", minimum=1)
    if ids.shape != sent.shape or ids.dim() != 1:
        raise ValueError(f"ids and sent must be 1-D of equal length, got {tuple(ids.shape)}, {tuple(sent.shape)}")
    n = len(ids)
    b = (torch.full((n,), window) if generator is None                               # (N,) window size per centre
         else torch.randint(1, window + 1, (n,), generator=generator))
    positions = torch.arange(n)
    offsets = [o for o in range(-window, window + 1) if o != 0]
    cols, valid = [], []
    for o in offsets:
        j = (positions + o).clamp(0, n - 1)                                          # (N,)
        ok = (positions + o >= 0) & (positions + o < n) & (sent[j] == sent) & (abs(o) <= b)
        cols.append(ids[j])
        valid.append(ok)
    context = torch.stack(cols, 1)                                                   # (N, 2w)
    mask = torch.stack(valid, 1)                                                     # (N, 2w)
    if cbow:
        has = mask.any(1)
        return context[has], mask[has], ids[has]
    centre = ids.unsqueeze(1).expand_as(context)                                    # (N, 2w)
    return centre[mask].unsqueeze(1), torch.ones(int(mask.sum()), 1, dtype=torch.bool), context[mask]


#: the two training engines of :func:`train_word2vec`
ENGINES = ("tensor", "compiled")
# word2vec.c's sigmoid table: EXP_TABLE_SIZE values of sigma(x) for x in [-MAX_EXP, MAX_EXP)
EXP_TABLE_SIZE, MAX_EXP = 1000, 6
# word2vec.c's random numbers: a 64-bit linear congruential generator (wraps around mod 2^64)
LCG_MUL, LCG_ADD = np.uint64(25214903917), np.uint64(11)
_U16, _MASK16 = np.uint64(16), np.uint64(0xFFFF)
#: with several workers, each trains a block of about this many words at a time (gensim's job size)
BLOCK_WORDS = 10_000
# the unigram table's size (noise_table's default), a constant when compiled: "% size" becomes a multiplication
TABLE_SIZE = 10**6
_TABLE_SIZE = np.uint64(TABLE_SIZE)
# float32 constants, so that compiled and plain Python code both compute in float32 as word2vec.c does
_ZERO, _ONE, _MAX_EXP = np.float32(0.0), np.float32(1.0), np.float32(MAX_EXP)
_SLOTS = np.float32(EXP_TABLE_SIZE // MAX_EXP // 2)   # word2vec.c's integer 1000 / 6 / 2 = 83 slots per unit of x


def sigmoid_tables() -> tuple[np.ndarray, np.ndarray]:
    """word2vec.c's ``expTable`` (EXP_TABLE_SIZE,) float32: entry i = sigma(x_i), x_i = (2 i / 1000 - 1) 6,
    and gensim's table of log sigma(x_i) (float64) for the loss.

    Computed with the C library's ``exp`` and ``log`` one value at a time, not with a vectorised
    version whose last bits may depend on the CPU.
    """
    x = [(2 * i / EXP_TABLE_SIZE - 1) * MAX_EXP for i in range(EXP_TABLE_SIZE)]
    sigmoid = np.array([1.0 / (1.0 + math.exp(-v)) for v in x], dtype=np.float32)
    return sigmoid, np.array([math.log(p) for p in sigmoid.tolist()])


def word2vec_c_epoch(ids, starts, keep, table, sigmoid, log_sigmoid, W_in, W_out, sg, window, negative, lr,
                     min_lr_fraction, words_before, total_words, next_random, batch_size, records):
    """One epoch of word2vec.c's training loop, updating W_in and W_out (V, d) float32 in place.

    ids (N,) int64: the corpus, sentence s being ids[starts[s]:starts[s + 1]] (starts (S + 1,));
    keep (V,) float64 keep probabilities; table (TABLE_SIZE,) the unigram table; sigmoid, log_sigmoid (1000,)
    from :func:`sigmoid_tables`. One example at a time, updated before the next is scored: skip-gram's
    input is one context word and its output the centre word (as in word2vec.c); CBOW's input is the
    mean h of the context vectors. The learning rate decays linearly with the words read
    (``words_before`` of ``total_words`` before this epoch). Writes the mean loss of every
    ``batch_size`` examples (the epoch's last maybe fewer) to ``records``; returns (next_random,
    number of records written). Every float operation is float32 in a fixed order: no fastmath.
    """
    if table.size != TABLE_SIZE:
        raise ValueError("table must have TABLE_SIZE slots")
    d = W_in.shape[1]
    h = np.empty(d, np.float32)                    # the input vector (CBOW: the mean of the context)
    neu1e = np.empty(d, np.float32)                # word2vec.c's neu1e: the accumulated update of the input
    targets = np.empty(negative + 1, np.int64)     # the output words of one example
    sentence = np.empty(np.diff(starts).max(), np.int64)   # the current sentence after subsampling
    window_u = np.uint64(window)
    loss_sum, examples, n_records = 0.0, 0, 0
    for s in range(starts.size - 1):
        alpha = np.float32(lr * max(min_lr_fraction, 1.0 - (words_before + starts[s]) / total_words))
        n = 0
        for i in range(starts[s], starts[s + 1]):                  # subsample: keep with probability keep[w]
            next_random = next_random * LCG_MUL + LCG_ADD
            if keep[ids[i]] >= (next_random & _MASK16) / 65536.0:
                sentence[n] = ids[i]
                n += 1
        for pos in range(n):
            next_random = next_random * LCG_MUL + LCG_ADD
            b = int(next_random % window_u)                        # the window shrinks to window - b
            lo, hi = max(0, pos - window + b), min(n, pos + window - b + 1)
            word = sentence[pos]
            for e in range(hi - lo - 1 if sg else 1):              # skip-gram: an example per context word
                first = lo + e + (lo + e >= pos) if sg else lo       # its input words: sentence[first:last],
                last = first + 1 if sg else hi                       # leaving out the centre word
                inputs = last - first - (first <= pos < last)
                if inputs == 0:                                      # CBOW in a one-word sentence
                    continue
                h[:] = _ZERO                                         # h = the mean of the input vectors
                for c in range(first, last):
                    if c != pos:
                        for k in range(d):
                            h[k] += W_in[sentence[c], k]
                if inputs > 1:
                    for k in range(d):
                        h[k] /= np.float32(inputs)
                targets[0] = word                                  # the observed word, then the negatives,
                for j in range(1, negative + 1):                   # all drawn first (word2vec.c's draws, in
                    next_random = next_random * LCG_MUL + LCG_ADD  # its order, fetched from memory sooner)
                    targets[j] = table[int((next_random >> _U16) % _TABLE_SIZE)]
                neu1e[:] = _ZERO
                loss = 0.0
                for j in range(negative + 1):
                    target = targets[j]
                    if j > 0 and target == word:                   # a negative that is the observed word
                        continue
                    label = _ONE if j == 0 else _ZERO
                    # the score f = u_target . h, as four interleaved partial sums (a fixed order)
                    f0 = f1 = f2 = f3 = _ZERO
                    for k in range(0, d - 3, 4):
                        f0 += h[k] * W_out[target, k]
                        f1 += h[k + 1] * W_out[target, k + 1]
                        f2 += h[k + 2] * W_out[target, k + 2]
                        f3 += h[k + 3] * W_out[target, k + 3]
                    for k in range(d - d % 4, d):
                        f0 += h[k] * W_out[target, k]
                    f = (f0 + f1) + (f2 + f3)
                    if f > _MAX_EXP:                               # sigma(f) from the table, 0 or 1 outside it
                        p = _ONE
                    elif f < -_MAX_EXP:
                        p = _ZERO
                    else:
                        p = sigmoid[int((f + _MAX_EXP) * _SLOTS)]
                    g = (label - p) * alpha                        # lr (y - sigma(f))
                    for k in range(d):
                        neu1e[k] += g * W_out[target, k]
                        W_out[target, k] += g * h[k]
                    x = f if j == 0 else -f                        # loss -log sigma(x), from the table too
                    if abs(x) <= _MAX_EXP:
                        loss -= log_sigmoid[int((x + _MAX_EXP) * _SLOTS)]
                    elif x < _ZERO:                                # outside: -log sigma(x) is about -x, or 0
                        loss -= float(x)
                for c in range(first, last):                       # the whole neu1e to every input word
                    if c != pos:
                        for k in range(d):
                            W_in[sentence[c], k] += neu1e[k]
                loss_sum += loss
                examples += 1
                if examples == batch_size:
                    records[n_records] = loss_sum / examples
                    n_records += 1
                    loss_sum, examples = 0.0, 0
    if examples > 0:
        records[n_records] = loss_sum / examples
        n_records += 1
    return next_random, n_records


@functools.cache
def _compiled_epoch():
    """:func:`word2vec_c_epoch` compiled by numba on first use, and kept in numba's on-disk cache
    (next to this file, or in the user's cache folder) so that later processes load it in a second."""
    import numba
    try:
        return numba.njit(cache=True, nogil=True)(word2vec_c_epoch)
    except RuntimeError:        # numba found no writable folder for its cache: compile in every process
        return numba.njit(nogil=True)(word2vec_c_epoch)


def train_word2vec(sentences: Sequence[Sequence[int]], vocab_size: int, *, sg: bool = True,
                   dim: int = 100, window: int = 5, negative: int = 5, sample: float = 1e-3,
                   epochs: int = 5, lr: float | None = None, min_lr_fraction: float = 1e-4,
                   batch_size: int = 1024, seed: int = 0, engine: str = "tensor", workers: int = 1,
                   device: str | torch.device = DEFAULT_DEVICE,
                   on_epoch: Callable[[int, Word2Vec], None] | None = None) -> tuple[Word2Vec, History]:
    """Train skip-gram (``sg=True``) or CBOW with negative sampling on sentences of word ids.

    lr: the per-example SGD step of the original (default 0.025 for skip-gram, 0.05 for CBOW),
    decayed linearly to ``min_lr_fraction * lr``.
    engine="tensor": every epoch's examples are shuffled and a batch of ``batch_size`` moves at once,
    each example by its own step (:func:`sgd_step`); the history records each batch's mean loss.
    engine="compiled": word2vec.c's loop (:func:`word2vec_c_epoch`, compiled by numba), one example
    at a time in corpus order, each updated before the next is scored, on the CPU, reproducible bit
    for bit from ``seed``; the history records the mean loss of every ``batch_size`` examples.
    ``workers`` > 1 (compiled engine only) trains blocks of about 10,000 words side by side in
    threads, each on its own copy of the tables, and adds up their updates after every block: as
    reproducible (for the same ``workers``), but no longer word2vec.c's single sequence of updates.
    ``on_epoch(epoch, model)``, if given, is called after every epoch (1-based), e.g. to record snapshots.
    Returns the model (``model.vectors`` are the embeddings) and the training history.
    """
    check_nonempty(sentences, "sentences")
    check_int(vocab_size, "vocab_size", minimum=2)
    for name, value, low in (("dim", dim, 1), ("window", window, 1), ("negative", negative, 1),
                             ("epochs", epochs, 1), ("batch_size", batch_size, 1), ("seed", seed, 0)):
        check_int(value, name, minimum=low)
    lr = (0.025 if sg else 0.05) if lr is None else lr
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    check_float(min_lr_fraction, "min_lr_fraction", minimum=0.0, maximum=1.0)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    check_int(workers, "workers", minimum=1)
    if workers > 1 and engine != "compiled":
        raise ValueError(f"workers > 1 needs engine='compiled', got engine={engine!r}")
    if on_epoch is not None and not callable(on_epoch):
        raise TypeError(f"on_epoch must be callable, got {type(on_epoch).__name__}")
    ids = torch.tensor([i for s in sentences for i in s], dtype=torch.long)           # (N,)
    if len(ids) < 2:
        raise ValueError("sentences must hold at least 2 words in total")
    check_token_ids(ids, vocab_size, "sentences")
    counts = torch.bincount(ids, minlength=vocab_size).clamp(min=1)
    keep = keep_probabilities(counts, sample)                                         # (V,)
    table = noise_table(noise_distribution(counts), TABLE_SIZE)                       # (10^6,)
    if engine == "compiled":
        return _train_compiled(sentences, ids, keep, table, vocab_size, sg=sg, dim=dim, window=window,
                               negative=negative, epochs=epochs, lr=lr, min_lr_fraction=min_lr_fraction,
                               batch_size=batch_size, seed=seed, workers=workers, device=device,
                               on_epoch=on_epoch)
    sent = torch.repeat_interleave(torch.arange(len(sentences)), torch.tensor([len(s) for s in sentences]))  # (N,)
    generator = torch.Generator().manual_seed(seed)

    # the number of steps is known only roughly in advance (subsampling is random): estimate it
    per_epoch = float((keep[ids].sum()) * (1 if not sg else (window + 1))) / batch_size
    total_steps = max(1.0, per_epoch * epochs)
    set_seed(seed)
    model = Word2Vec(vocab_size, dim, device=device)
    history = History()
    bar = None
    if progress_enabled():
        from tqdm.auto import tqdm
        bar = tqdm(total=round(total_steps), desc="word2vec")
    for epoch in range(1, epochs + 1):
        kept = torch.rand(len(ids), generator=generator, dtype=torch.float64) < keep[ids]
        inputs, mask, outputs = window_examples(ids[kept], sent[kept], window, not sg, generator)
        order = torch.randperm(len(outputs), generator=generator)                    # shuffle once
        negatives = table[torch.randint(len(table), (len(order), negative), generator=generator)]  # (P, K)
        targets = torch.cat([outputs[order, None], negatives], 1).to(device)         # (P, 1+K)
        inputs, mask = inputs[order].to(device), mask[order].to(device)
        for i in range(0, len(order), batch_size):
            step_lr = lr * max(min_lr_fraction, 1.0 - history.steps / total_steps)
            loss = sgd_step(model, inputs[i:i + batch_size], mask[i:i + batch_size],
                            targets[i:i + batch_size], step_lr)
            history.train_loss.append(loss.item())
            if bar is not None:
                bar.update(1)
        if on_epoch is not None:
            on_epoch(epoch, model)
    if bar is not None:
        bar.close()
    return model, history


def _train_compiled(sentences, ids: torch.Tensor, keep: torch.Tensor, table: torch.Tensor, vocab_size: int, *,
                    sg: bool, dim: int, window: int, negative: int, epochs: int, lr: float,
                    min_lr_fraction: float, batch_size: int, seed: int, workers: int,
                    device: str | torch.device, on_epoch=None) -> tuple[Word2Vec, History]:
    """``train_word2vec(engine="compiled")``: the same initial model, then :func:`word2vec_c_epoch` over
    the corpus every epoch; with ``workers`` > 1, over blocks of sentences, ``workers`` blocks at a time."""
    epoch_fn = _compiled_epoch()
    set_seed(seed)
    model = Word2Vec(vocab_size, dim)                           # on the CPU, initialised as the tensor engine's
    W_in, W_out = model.in_embed.weight.detach().numpy(), model.out_embed.weight.detach().numpy()  # (V, d) views
    corpus = ids.numpy()                                                             # (N,)
    starts = np.cumsum([0] + [len(s) for s in sentences], dtype=np.int64)            # (S + 1,)
    keep, (sigmoid, log_sigmoid) = keep.numpy(), sigmoid_tables()
    # the same table, in the smallest integer type that holds the ids: it is read at random, so the
    # less cache it takes the faster (10^6 int64 slots are 8 MB; as int16, 2 MB)
    table = table.numpy().astype(np.int16 if vocab_size <= 2**15 else np.int32)
    per_epoch = len(corpus) * (2 * window if sg else 1)          # at most this many examples an epoch
    records = [np.empty(per_epoch // batch_size + 2, dtype=np.float64) for _ in range(workers)]
    # word2vec.c seeds each thread's generator by its number; here by seed and number
    next_random = [np.uint64(seed * workers + w) for w in range(workers)]
    blocks = [(0, len(sentences))]                               # one worker: the whole corpus in one call
    if workers > 1:                                              # sentences [a, b) of about BLOCK_WORDS words
        cut = np.searchsorted(starts, np.arange(BLOCK_WORDS, len(corpus), BLOCK_WORDS))
        edges = np.unique(np.concatenate([[0], cut, [len(sentences)]]))
        blocks = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
        copies = [(W_in.copy(), W_out.copy()) for _ in range(workers)]
    history = History()
    epoch_range = range(epochs)
    if progress_enabled():
        from tqdm.auto import tqdm
        epoch_range = tqdm(epoch_range, desc="word2vec (compiled)")

    def train(epoch, w, block, tables):                           # worker w trains its block on tables
        a, b = block
        next_random[w], n = epoch_fn(corpus, starts[a:b + 1], keep, table, sigmoid, log_sigmoid, *tables, sg,
                                     window, negative, lr, min_lr_fraction, epoch * len(corpus),
                                     epochs * len(corpus), np.uint64(next_random[w]), batch_size, records[w])
        return records[w][:n].tolist()                            # numba hands next_random back as an int

    with ThreadPoolExecutor(workers) as pool:
        for epoch in epoch_range:
            if workers == 1:
                history.train_loss.extend(train(epoch, 0, blocks[0], (W_in, W_out)))
                if on_epoch is not None:
                    on_epoch(epoch + 1, model)
                continue
            for i in range(0, len(blocks), workers):             # a round: one block per worker
                round_blocks = blocks[i:i + workers]
                round_copies = copies[:len(round_blocks)]
                for A_in, A_out in round_copies:                  # every worker starts from the same tables
                    np.copyto(A_in, W_in)
                    np.copyto(A_out, W_out)
                for loss in pool.map(functools.partial(train, epoch), range(len(round_blocks)), round_blocks,
                                     round_copies):
                    history.train_loss.extend(loss)
                for A_in, A_out in round_copies:                  # what each worker changed,
                    A_in -= W_in
                    A_out -= W_out
                for A_in, A_out in round_copies:                  # added up in worker order
                    W_in += A_in
                    W_out += A_out
            if on_epoch is not None:
                on_epoch(epoch + 1, model)
    return model.to(device), history


def huffman_tree(counts: torch.Tensor) -> tuple[list[list[int]], list[list[int]]]:
    """The Huffman tree of the hierarchical softmax, built as word2vec.c builds it.

    The two least frequent nodes are merged again and again; the V - 1 inner nodes are numbered
    0..V-2 (the root is V - 2). Returns, per word, ``codes`` (the 0/1 turns from the root down to the
    word) and ``points`` (the inner nodes passed on the way, root first). Frequent words get short codes.
    """
    check_type(counts, "counts", torch.Tensor)
    if counts.dim() != 1 or len(counts) < 2 or (counts <= 0).any():
        raise ValueError("counts must be a 1-D tensor of at least 2 positive counts")
    v = len(counts)
    heap = [(float(c), i) for i, c in enumerate(counts.tolist())]         # (count, node); leaves 0..V-1
    heapq.heapify(heap)
    parent, bit = [0] * (2 * v - 1), [0] * (2 * v - 1)
    for inner in range(v, 2 * v - 1):                                    # node V + k is inner node k
        (c1, n1), (c2, n2) = heapq.heappop(heap), heapq.heappop(heap)
        parent[n1], parent[n2], bit[n2] = inner, inner, 1                # the larger child is the 1-branch
        heapq.heappush(heap, (c1 + c2, inner))
    codes, points = [], []
    for word in range(v):
        code, point, node = [], [], word
        while node != 2 * v - 2:                                         # climb to the root
            code.append(bit[node])
            node = parent[node]
            point.append(node - v)
        codes.append(code[::-1])
        points.append(point[::-1])
    return codes, points


def hierarchical_softmax_log_probs(h: torch.Tensor, node_vectors: torch.Tensor, codes: list[list[int]],
                                   points: list[list[int]]) -> torch.Tensor:
    """log P(w | h) for every word w under the hierarchical softmax: h (B, d), node_vectors (V-1, d) -> (B, V).

    Each inner node n of w's path makes a binary decision; with word2vec.c's convention the turn
    with code 0 has probability sigma(u_n . h), so
        log P(w | h) = sum_j log sigma((1 - 2 code_j) u_{n_j} . h),
    about log2 V terms instead of a softmax over V words. The V probabilities sum to 1.
    """
    check_type(h, "h", torch.Tensor)
    check_type(node_vectors, "node_vectors", torch.Tensor)
    if h.dim() != 2 or node_vectors.dim() != 2 or h.size(1) != node_vectors.size(1) \
            or len(codes) != len(points) or len(codes) != node_vectors.size(0) + 1:
        raise ValueError(f"expected h (B, d), node_vectors (V-1, d) and V codes and points; got "
                         f"{tuple(h.shape)}, {tuple(node_vectors.shape)}, {len(codes)}, {len(points)}")
    depth = max(map(len, codes))
    pad = lambda rows: torch.tensor([r + [0] * (depth - len(r)) for r in rows])               # (V, depth)
    code, point = pad(codes).to(h.device), pad(points).to(h.device)
    on_path = pad([[1] * len(c) for c in codes]).to(h.device, h.dtype)                         # (V, depth)
    scores = torch.einsum("bd,vkd->bvk", h, node_vectors[point])                              # (B, V, depth)
    sign = 1.0 - 2.0 * code.to(h.dtype)                                                       # (V, depth): +1 or -1
    return (F.logsigmoid(sign * scores) * on_path).sum(-1)                                    # (B, V)
