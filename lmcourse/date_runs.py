"""Chapter 7's training runs on the toy date translation (``lmcourse.toy_translation``), shared by its
two pages: the held-out scores, the Transformer's recipe and chapter 6's GRU trained beside it.

    task = DateRuns(X, Y, X_test, Y_test, src_vocab, tgt_vocab, references)
    model, history = task.train(config, seed=0)        # 300 steps, scores every 50
    gru, gru_history = task.train_gru(seed=0)          # 75 steps, exact match every 25
"""
import time
from dataclasses import dataclass

import torch

from lmcourse.leak_probe import random_future_logits
from lmcourse.seed import set_seed
from lmcourse.seq2seq import BahdanauSeq2Seq, seq2seq_loss
from lmcourse.toy_translation import BOS, EOS, batches, exact_match, strip
from lmcourse.train import fit
from lmcourse.transformer import (
    Seq2SeqTransformer,
    TransformerConfig,
    greedy_decode,
    teacher_forced_correct,
    teacher_forcing_loss,
    warmup_schedule,
)
from lmcourse.validate import check_int, check_type
from lmcourse.vocab import Vocab

#: the GRU's budget in the race with the Transformer (chapter 6's recipe reaches its plateau by then)
GRU_STEPS = 75


def clocked(eval_fn, clock: dict):
    """eval_fn, adding the wall time of every call to clock["seconds"] (to subtract it from a run's total)."""
    def clocked_fn(model):
        start = time.perf_counter()
        scores = eval_fn(model)
        clock["seconds"] += time.perf_counter() - start
        return scores
    return clocked_fn


@dataclass
class DateRuns:
    """The encoded training pairs X (N, S), Y (N, T) and held-out dates X_test (M, S), Y_test (M, T), padded
    with 0, each target row <bos> ... <eos>; ``references`` holds the M held-out targets as token lists."""

    X: torch.Tensor
    Y: torch.Tensor
    X_test: torch.Tensor
    Y_test: torch.Tensor
    src_vocab: Vocab
    tgt_vocab: Vocab
    references: list

    def __post_init__(self):
        for name in ("X", "Y", "X_test", "Y_test"):
            value = getattr(self, name)
            check_type(value, name, torch.Tensor)
            if value.dim() != 2:
                raise ValueError(f"{name} must be a 2-D tensor of token ids, got shape {tuple(value.shape)}")
        if len(self.X) != len(self.Y):
            raise ValueError(f"X and Y must hold the same number of pairs, got {len(self.X)} and {len(self.Y)}")
        if not len(self.X_test) == len(self.Y_test) == len(self.references):
            raise ValueError(f"X_test, Y_test and references must have the same length, got {len(self.X_test)}, "
                             f"{len(self.Y_test)} and {len(self.references)}")
        check_type(self.src_vocab, "src_vocab", Vocab)
        check_type(self.tgt_vocab, "tgt_vocab", Vocab)
        self.bos, self.eos = self.tgt_vocab[BOS], self.tgt_vocab[EOS]
        self.real = self.Y_test[:, 1:] != 0                     # (M, T-1): target positions that are not padding

    def held_out_scores(self, model, probe: bool = True) -> dict:
        """Exact match teacher-forced and token accuracy fed the reference; if probe, also the token accuracy with
        every later target token random, the largest logit change that makes, and exact match generating (greedy)."""
        X_test, Y_test, tgt_vocab = self.X_test, self.Y_test, self.tgt_vocab
        logits = model(X_test, Y_test[:, :-1])                                              # (M, T-1, V)

        def accuracy(scores):
            return (scores.argmax(-1) == Y_test[:, 1:])[self.real].float().mean().item()
        scores = {"exact_match": teacher_forced_correct(model, X_test, Y_test).float().mean().item(),
                  "token_accuracy": accuracy(logits)}
        if probe:
            noisy = random_future_logits(model, X_test, Y_test[:, :-1], low=tgt_vocab["-"], high=len(tgt_vocab))
            outputs = greedy_decode(model, X_test, self.bos, self.eos, max_len=Y_test.shape[1] - 1)
            generated = [strip(o, tgt_vocab) for o in outputs]
            scores.update(token_accuracy_random_future=accuracy(noisy),
                          largest_logit_change=(noisy - logits).abs().max().item(),
                          generated_exact_match=exact_match(generated, self.references))
        return scores

    def train(self, config: TransformerConfig, seed: int, steps: int = 300, warmup_steps: int = 50,
              cooldown_steps: int = 100, label_smoothing: float = 0.1, eval_every: int = 50,
              probe_steps=(150,)):
        """(model, History): held-out scores every eval_every steps, with the probe and generation at probe_steps."""
        check_type(config, "config", TransformerConfig)
        check_int(seed, "seed", minimum=0)
        check_int(steps, "steps", minimum=1)
        check_int(eval_every, "eval_every", minimum=1)
        set_seed(seed, num_threads=1)
        model = Seq2SeqTransformer(config)
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, foreach=True)
        clock, steps_evaluated = {"seconds": 0.0}, iter(range(eval_every, steps + 1, eval_every))
        history = fit(model, lambda m, batch: teacher_forcing_loss(m, batch, label_smoothing=label_smoothing),
                      batches(self.X, self.Y, batch_size=64, seed=seed), num_epochs=10, optimizer=optimizer,
                      lr_schedule=warmup_schedule(config.d_model, warmup_steps, steps, cooldown_steps, factor=0.5),
                      clip_grad_norm=1.0, max_steps=steps,
                      eval_fn=clocked(lambda m: self.held_out_scores(m, next(steps_evaluated) in probe_steps), clock),
                      eval_every=eval_every, seed=None)
        history.eval_seconds = clock["seconds"]
        return model, history

    def gru_exact_match(self, model) -> dict:
        """{"exact_match": share of held-out dates the GRU translates right, generating greedily}."""
        out, _ = model.greedy_decode(self.X_test, self.bos, self.eos, max_len=self.Y_test.shape[1] - 1)
        return {"exact_match": exact_match([strip(o, self.tgt_vocab) for o in out], self.references)}

    def train_gru(self, seed: int, d_hidden: int = 64, steps: int = GRU_STEPS):
        """(model, History): chapter 6's model and settings (Adam at a constant 0.01, clipping at 1), the same
        batches as train's; exact match every 25 steps."""
        check_int(seed, "seed", minimum=0)
        check_int(d_hidden, "d_hidden", minimum=1)
        check_int(steps, "steps", minimum=1)
        set_seed(seed, num_threads=1)
        rnn = BahdanauSeq2Seq(len(self.src_vocab), len(self.tgt_vocab), d_embed=16, d_hidden=d_hidden)
        clock = {"seconds": 0.0}
        history = fit(rnn, seq2seq_loss, batches(self.X, self.Y, batch_size=64, seed=seed), lr=1e-2,
                      clip_grad_norm=1.0, max_steps=steps, seed=None, eval_fn=clocked(self.gru_exact_match, clock),
                      eval_every=25)
        history.eval_seconds = clock["seconds"]
        return rnn, history
