"""ELECTRA in small, as the paper trains it (Clark et al. 2020), against a masked LM of equal compute.

The generator is a small masked LM, a quarter of the discriminator's width, trained JOINTLY with
the discriminator on L_MLM(generator) + 50 * L_Disc(discriminator). At the masked positions (15%,
each replaced by [MASK], the paper's x^masked) a token is SAMPLED from the generator's output
distribution, without any gradient through the sampling; a sample equal to the original counts as
original. Unlike the paper, the two networks share no embeddings (its generator shares the
discriminator's token table through a projection to its smaller width; ours has its own table).

Against it: the discriminator-sized encoder trained as a masked LM (BERT's 80/10/10 corruption)
for as many steps as make its training FLOPs equal ELECTRA's (generator and discriminator, forward
and backward; :func:`compute_budget`), and the same encoder untrained. All three are fine-tuned on
one downstream task, sentence-end restoration (:func:`lmcourse.sentence_ends.sentence_end_windows`:
the full stops are deleted and every token is labelled "a sentence ended after it"), from 64
labelled windows of the first half of the validation articles; the learning rate (of three) and the
step are chosen by the AUC on 200 windows of their second half (:func:`finetune`: an early stop), and
the chosen model is scored by ROC AUC on 500 windows of the test articles.
Pretraining uses chapter 10's news vocabulary and training articles (:func:`news_streams`).

Five seeds take several minutes of two cores, so they are computed once::

    python -m lmcourse.electra_small      # writes lmcourse/checkpoints/electra_small.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the file after checking
its settings and SHA-256, and a chapter reruns one seed live with :func:`run_seed`.
"""
import argparse
import copy
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.cli import output_file
from lmcourse.context_probe import mean_se
from lmcourse.data import news_documents, random_windows
from lmcourse.dynamic_masking import TinyMLM, mlm_batches, mlm_loss
from lmcourse.electra import ReplacedTokenDetector, TinyEncoder, detection_metrics
from lmcourse.masking import IGNORE_INDEX, MaskedBatch, mask_tokens
from lmcourse.parallel import parallel_map
from lmcourse.pretrain import unigram_loss
from lmcourse.seed import set_seed
from lmcourse.sentence_ends import sentence_end_windows
from lmcourse.tokenize import word_tokenize
from lmcourse.train import fit, save_record
from lmcourse.validate import check_float, check_int, check_probability, check_token_ids, check_type, load_record
from lmcourse.vocab import Vocab

#: the pretrained arms and the untrained one, in the order the record lists them
ARMS = ("ELECTRA", "masked LM", "scratch")
SETTINGS = {
    "d_model": 64, "num_heads": 4, "num_layers": 2,          # the discriminator and the masked LM
    "generator_d_model": 16, "generator_heads": 1,          # a quarter of the width, the same head size
    "seq_len": 32, "batch_size": 32, "electra_steps": 300, "lr": 3e-3, "mask_prob": 0.15, "disc_weight": 50.0,
    "valid_batches": 10, "flagged_window": [200, 224],      # the validation words of the sentence shown flagged
    "finetune": {"fit_windows": 64, "dev_windows": 200, "test_windows": 500, "batch_size": 16,
                 "lrs": [3e-4, 1e-3, 3e-3], "eval_every": 25, "max_steps": 1000, "patience": 200},
    "seeds": [0, 1, 2, 3, 4],
}
RESULTS = Path(__file__).parent / "checkpoints" / "electra_small.json"


@dataclass
class NewsStreams:
    """Chapter 10's data: the news vocabulary (words seen 3 times in the training articles, with
    ``<pad>``, ``<unk>`` and ``[MASK]``) and each split's articles as one stream of ids."""
    vocab: Vocab
    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor

    @property
    def mask_id(self) -> int:
        return self.vocab["[MASK]"]

    @property
    def specials(self) -> tuple[int, ...]:
        """Never chosen for masking or replacement (so ``<unk>`` is never replaced)."""
        return (self.vocab.pad_id, self.vocab.unk_id, self.mask_id)


def news_streams() -> NewsStreams:
    """The vocabulary and the train, valid and test streams of the news corpus (chapter 10's)."""
    train_tokens = [word_tokenize(d) for d in news_documents("train")]
    vocab = Vocab.from_texts(train_tokens, min_freq=3, specials=("<pad>", "<unk>", "[MASK]"))
    stream = lambda docs: torch.tensor([i for d in docs for i in vocab.encode(d)])      # noqa: E731
    return NewsStreams(vocab, stream(train_tokens), stream([word_tokenize(d) for d in news_documents("valid")]),
                       stream([word_tokenize(d) for d in news_documents("test")]))


class Electra(nn.Module):
    """ELECTRA's two networks: ``generator``, a :class:`~lmcourse.dynamic_masking.TinyMLM` of width
    ``generator_d_model``, and ``discriminator``, a :class:`~lmcourse.electra.ReplacedTokenDetector`
    of width ``d_model``; the same number of layers, no shared weights."""

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 generator_d_model: int = 16, generator_heads: int = 1, max_len: int = 128):
        super().__init__()
        check_int(generator_d_model, "generator_d_model", minimum=1, maximum=d_model)
        self.generator = TinyMLM(vocab_size, generator_d_model, generator_heads, num_layers, max_len=max_len)
        self.discriminator = ReplacedTokenDetector(vocab_size, d_model, num_heads, num_layers, max_len=max_len)


def electra_batches(stream, num_batches: int, batch_size: int, seq_len: int, mask_id: int, vocab_size: int,
                    special_ids: tuple[int, ...] = (), mask_prob: float = 0.15,
                    generator: torch.Generator | None = None) -> list[MaskedBatch]:
    """``num_batches`` random windows (batch_size, seq_len) of ``stream`` with ``mask_prob`` of the
    positions (never ``special_ids``) replaced by [MASK]: ELECTRA's x^masked (no 80/10/10)."""
    check_int(num_batches, "num_batches", minimum=1)
    return [mask_tokens(random_windows(stream, batch_size, seq_len, generator)[0], mask_id, vocab_size,
                        special_ids, mask_prob, mask_fraction=1.0, random_fraction=0.0, generator=generator)
            for _ in range(num_batches)]


def sample_replacements(logits: torch.Tensor, batch: MaskedBatch, generator: torch.Generator | None = None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """x^corrupt: the originals with a token sampled from softmax(``logits``) at every chosen position.

    logits: (N, V), one row per chosen position of ``batch`` in row-major order. Returns (corrupted
    ids, replaced), both (B, T); replaced is False where the sample equals the original (the paper's
    rule). No gradient flows through the sampling."""
    check_type(logits, "logits", torch.Tensor)
    check_type(batch, "batch", MaskedBatch)
    chosen = batch.labels != IGNORE_INDEX                                           # (B, T)
    if logits.dim() != 2 or logits.size(0) != int(chosen.sum()):
        raise ValueError(f"logits must be (chosen positions = {int(chosen.sum())}, vocab), got {tuple(logits.shape)}")
    original = torch.where(chosen, batch.labels, batch.input_ids)                 # (B, T)
    corrupted = original.clone()
    with torch.no_grad():
        corrupted[chosen] = torch.multinomial(logits.softmax(dim=-1), 1, generator=generator).squeeze(1)  # (N,)
    return corrupted, corrupted != original


def electra_losses(model: Electra, batch: MaskedBatch, generator: torch.Generator | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """(L_MLM of the generator, mean over the masked positions; L_Disc of the discriminator, binary
    cross-entropy of "replaced?" averaged over every position of the corrupted batch)."""
    check_type(model, "model", Electra)
    check_type(batch, "batch", MaskedBatch)
    gen = model.generator
    chosen = batch.labels != IGNORE_INDEX                                           # (B, T)
    logits = gen.head(gen.encode(batch.input_ids)[chosen])                          # (N, Cg) -> (N, V)
    mlm = F.cross_entropy(logits, batch.labels[chosen])
    corrupted, replaced = sample_replacements(logits.detach(), batch, generator)
    disc = F.binary_cross_entropy_with_logits(model.discriminator(corrupted), replaced.float())  # (B, T)
    return mlm, disc


def electra_loss(model: Electra, batch: MaskedBatch, disc_weight: float = SETTINGS["disc_weight"]) -> torch.Tensor:
    """L = L_MLM(generator) + disc_weight * L_Disc(discriminator), the paper's lambda = 50."""
    check_float(disc_weight, "disc_weight", minimum=0.0)
    mlm, disc = electra_losses(model, batch)
    return mlm + disc_weight * disc


# ------------------------------------------------------------------------------------------------
# Equal compute
# ------------------------------------------------------------------------------------------------
def encoder_forward_flops(d_model: int, num_layers: int, seq_len: int, head_positions: float, head_outputs: int,
                          d_ff: int | None = None) -> float:
    """Forward FLOPs (2 per multiply-add) of one sequence through a :class:`~lmcourse.electra.TinyEncoder`
    and a linear head applied at ``head_positions`` of its positions: per layer 4 d^2 (Q, K, V, output
    projections) + 2 d d_ff (feed-forward) per token, and 2 T d per token for QK^T and the weighted sum
    of V. Embedding look-ups, LayerNorms, softmax and biases are left out."""
    for value, name in ((d_model, "d_model"), (num_layers, "num_layers"), (seq_len, "seq_len"),
                        (head_outputs, "head_outputs")):
        check_int(value, name, minimum=1)
    check_float(float(head_positions), "head_positions", minimum=0.0, maximum=float(seq_len))
    d_ff = d_ff or 4 * d_model
    per_layer = seq_len * (4 * d_model ** 2 + 2 * d_model * d_ff) + 2 * seq_len ** 2 * d_model
    return 2.0 * (num_layers * per_layer + head_positions * d_model * head_outputs)


def compute_budget(settings: dict, vocab_size: int) -> dict[str, float | int]:
    """Training FLOPs per step (backward = twice the forward, so 3x the forward) of ELECTRA (generator
    and discriminator) and of the discriminator-sized masked LM, and the masked LM's steps that make
    the totals equal. The output layers over the vocabulary run at the expected masked positions
    (``mask_prob`` of the tokens); the discriminator's one-logit head at every position."""
    check_int(vocab_size, "vocab_size", minimum=2)
    s = settings
    tokens = s["batch_size"] * s["seq_len"]
    masked = s["mask_prob"] * s["seq_len"]                                      # per sequence
    generator = encoder_forward_flops(s["generator_d_model"], s["num_layers"], s["seq_len"], masked, vocab_size)
    discriminator = encoder_forward_flops(s["d_model"], s["num_layers"], s["seq_len"], s["seq_len"], 1)
    masked_lm = encoder_forward_flops(s["d_model"], s["num_layers"], s["seq_len"], masked, vocab_size)
    electra_step = 3 * s["batch_size"] * (generator + discriminator)
    mlm_step = 3 * s["batch_size"] * masked_lm
    mlm_steps = equal_compute_steps(s["electra_steps"], electra_step, mlm_step)
    return {"tokens per step": tokens, "generator step": 3 * s["batch_size"] * generator,
            "discriminator step": 3 * s["batch_size"] * discriminator, "ELECTRA step": electra_step,
            "masked LM step": mlm_step, "ELECTRA steps": s["electra_steps"], "masked LM steps": mlm_steps,
            "ELECTRA total": electra_step * s["electra_steps"], "masked LM total": mlm_step * mlm_steps}


def equal_compute_steps(steps: int, flops_per_step: float, other_flops_per_step: float) -> int:
    """How many steps of ``other_flops_per_step`` cost what ``steps`` of ``flops_per_step`` cost (rounded)."""
    check_int(steps, "steps", minimum=1)
    check_float(float(flops_per_step), "flops_per_step", minimum=0.0, strict_minimum=True)
    check_float(float(other_flops_per_step), "other_flops_per_step", minimum=0.0, strict_minimum=True)
    return max(1, round(steps * flops_per_step / other_flops_per_step))


# ------------------------------------------------------------------------------------------------
# Detection, with its shortcuts accounted for
# ------------------------------------------------------------------------------------------------
def _entropy(q: float) -> float:
    return 0.0 if q <= 0 or q >= 1 else -(q * math.log(q) + (1 - q) * math.log(1 - q))


def shortcut_loss(replaced: torch.Tensor, never: torch.Tensor) -> float:
    """Binary cross-entropy (nats per position) of a detector that knows only which positions can never
    be replaced (``never``: row ends, ``<unk>``, ...) and the share replaced among the others: it says
    P = 0 on the first and that share on the rest. replaced, never: bool tensors of one shape."""
    check_type(replaced, "replaced", torch.Tensor)
    check_type(never, "never", torch.Tensor)
    if replaced.shape != never.shape:
        raise ValueError(f"replaced {tuple(replaced.shape)} and never {tuple(never.shape)} must match")
    replaced, never = replaced.bool(), never.bool()
    if (replaced & never).any():
        raise ValueError("never marks a position that was replaced")
    eligible = ~never
    if not eligible.any():
        return 0.0
    return _entropy(replaced[eligible].float().mean().item()) * eligible.float().mean().item()


def detection_report(logits: torch.Tensor, replaced: torch.Tensor, never: torch.Tensor) -> dict[str, float]:
    """The detector's validation loss and AUC beside the shortcut baselines: the base rate alone,
    and the base rate plus the positions that are never replaced (:func:`shortcut_loss`); then the
    loss, the base-rate loss and the AUC on the replaceable positions alone. All (N, T)."""
    check_type(logits, "logits", torch.Tensor)
    if logits.shape != replaced.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and replaced {tuple(replaced.shape)} must match")
    target = replaced.float()
    eligible = ~never.bool()
    return {"share replaced": target.mean().item(), "share never replaced": never.float().mean().item(),
            "loss": F.binary_cross_entropy_with_logits(logits, target).item(),
            "base-rate loss": _entropy(target.mean().item()),
            "shortcut loss": shortcut_loss(replaced, never),
            "AUC": detection_metrics(logits, target)["AUC"],
            "replaceable loss": F.binary_cross_entropy_with_logits(logits[eligible], target[eligible]).item(),
            "replaceable base-rate loss": _entropy(target[eligible].mean().item()),
            "replaceable AUC": detection_metrics(logits[eligible], target[eligible])["AUC"]}


@torch.no_grad()
def detect(model: Electra, batches: list[MaskedBatch], special_ids: tuple[int, ...], seed: int = 0
           ) -> dict[str, float]:
    """:func:`detection_report` of ``model``'s discriminator on ``batches`` corrupted by its own
    generator (samples drawn with ``seed``); ``never``: the positions whose original is a special id."""
    check_type(model, "model", Electra)
    was_training = model.training
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    logits, replaced, never = [], [], []
    for b in batches:
        g = model.generator
        corrupted, rep = sample_replacements(g.head(g.encode(b.input_ids)[b.labels != IGNORE_INDEX]), b, gen)
        logits.append(model.discriminator(corrupted))
        replaced.append(rep)
        original = torch.where(b.chosen, b.labels, b.input_ids)                    # (B, T)
        never.append(torch.isin(original, torch.tensor(special_ids)))
    model.train(was_training)
    return detection_report(torch.cat(logits), torch.cat(replaced), torch.cat(never))


@torch.no_grad()
def flagged_tokens(model: Electra, ids: torch.Tensor, vocab: Vocab, mask_prob: float = 0.15,
                   seed: int = 0) -> list[dict]:
    """One sentence through ELECTRA: ``ids`` (T,) masked (``[MASK]`` at ``mask_prob`` of the ordinary
    positions, drawn with ``seed``), refilled by the generator, read by the discriminator. One dict per
    position: ``original`` and ``shown`` word, ``replaced`` (the generator changed it) and ``p_replaced``
    (the discriminator's sigmoid)."""
    check_type(model, "model", Electra)
    check_type(vocab, "vocab", Vocab)
    check_probability(mask_prob, "mask_prob")
    check_token_ids(ids, len(vocab), "ids")
    if ids.dim() != 1:
        raise ValueError(f"ids must be one sentence (T,), got shape {tuple(ids.shape)}")
    was_training = model.training
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    specials = (vocab.pad_id, vocab.unk_id, vocab["[MASK]"])
    batch = mask_tokens(ids[None], vocab["[MASK]"], len(vocab), specials, mask_prob, 1.0, 0.0, generator=gen)
    g = model.generator
    corrupted, replaced = sample_replacements(g.head(g.encode(batch.input_ids)[batch.chosen]), batch, gen)
    p = torch.sigmoid(model.discriminator(corrupted))[0]                          # (T,)
    model.train(was_training)
    return [{"original": o, "shown": s, "replaced": bool(r), "p_replaced": round(float(q), 4)}
            for o, s, r, q in zip(vocab.decode(ids), vocab.decode(corrupted[0]), replaced[0], p)]


# ------------------------------------------------------------------------------------------------
# Fine-tuning on sentence-end restoration
# ------------------------------------------------------------------------------------------------
class TokenTagger(nn.Module):
    """A pretrained (or fresh) :class:`~lmcourse.electra.TinyEncoder` and one logit per token:
    forward(ids (B, T)) -> (B, T), > 0 meaning "a sentence ended after this token"."""

    def __init__(self, encoder: TinyEncoder):
        super().__init__()
        check_type(encoder, "encoder", TinyEncoder)
        self.encoder = encoder
        self.head = nn.Linear(encoder.norm.normalized_shape[0], 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder.encode(ids)).squeeze(-1)                   # (B, T, C) -> (B, T)


def tagging_loss(model: TokenTagger, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Binary cross-entropy of the tags (B, T) over every position."""
    ids, ends = batch
    return F.binary_cross_entropy_with_logits(model(ids), ends.float())


def sentence_end_data(streams: NewsStreams, settings: dict = SETTINGS) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """``fit``: windows of the first half of the validation articles (the labels to learn from), ``dev``:
    of their second half (to choose the learning rate and the step), ``test``: of the test articles; each
    (windows (N, T), ends (N, T) bool), full stops deleted. The same for every seed."""
    check_type(streams, "streams", NewsStreams)
    f, T = settings["finetune"], settings["seq_len"]
    gen = torch.Generator().manual_seed(3)
    full_stop, half = streams.vocab["."], len(streams.valid) // 2
    return {"fit": sentence_end_windows(streams.valid[:half], full_stop, f["fit_windows"], T, gen),
            "dev": sentence_end_windows(streams.valid[half:], full_stop, f["dev_windows"], T, gen),
            "test": sentence_end_windows(streams.test, full_stop, f["test_windows"], T, gen)}


@torch.no_grad()
def tagging_auc(model: TokenTagger, windows: tuple[torch.Tensor, torch.Tensor]) -> float:
    """ROC AUC of ``model``'s scores for "a sentence ended after this token" on ``windows`` (ids, ends)."""
    was_training = model.training
    model.eval()
    auc = detection_metrics(model(windows[0]), windows[1].float())["AUC"]
    model.train(was_training)
    return auc


def finetune(encoder: TinyEncoder, data: dict, seed: int, settings: dict = SETTINGS) -> dict[str, float]:
    """Fine-tune copies of ``encoder`` (every weight, a fresh tagging head) on the ``fit`` windows of
    ``data`` (:func:`sentence_end_data`), once per learning rate of ``settings["finetune"]["lrs"]``:
    Adam on batches drawn with ``seed``, the ``dev`` AUC measured every ``eval_every`` steps, stopping
    when it has not risen for ``patience`` steps (or at ``max_steps``). The learning rate and step with
    the best dev AUC win; returns their ``{"AUC": test AUC, "dev AUC", "lr", "fine-tuning steps"}``. ``encoder`` is
    left untouched."""
    check_type(encoder, "encoder", TinyEncoder)
    check_int(seed, "seed", minimum=0)
    f = settings["finetune"]
    ids, ends = data["fit"]
    best, best_dev = {}, -math.inf
    for lr in f["lrs"]:
        set_seed(seed, num_threads=torch.get_num_threads())
        model = TokenTagger(copy.deepcopy(encoder))
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
        gen = torch.Generator().manual_seed(seed)
        lr_best, lr_best_step = -math.inf, 0
        for step in range(f["eval_every"], f["max_steps"] + 1, f["eval_every"]):
            rows = torch.randint(len(ids), (f["eval_every"], f["batch_size"]), generator=gen)
            fit(model, tagging_loss, [(ids[r], ends[r]) for r in rows], optimizer=optimizer, seed=None, progress=False)
            dev = tagging_auc(model, data["dev"])
            if dev > lr_best:
                lr_best, lr_best_step = dev, step
                if dev > best_dev:
                    best_dev, best = dev, {"AUC": round(tagging_auc(model, data["test"]), 4),
                                           "dev AUC": round(dev, 4), "lr": lr, "fine-tuning steps": step}
            elif step - lr_best_step >= f["patience"]:
                break
    return best


def sentence_end_baselines(data: dict, vocab_size: int) -> dict[str, float]:
    """Trivial baselines on the test windows: the majority class ("no sentence ends here": accuracy
    1 - share of ends, AUC 0.5) and the token's identity (the share of ends after each word in the
    fit windows, add-one smoothed towards the overall share, as a score: its AUC)."""
    ids, ends = data["fit"]
    test_ids, test_ends = data["test"]
    rate = ends.float().mean()
    hits = torch.bincount(ids.flatten(), ends.flatten().float(), minlength=vocab_size)
    counts = torch.bincount(ids.flatten(), minlength=vocab_size).float()
    score = (hits + rate) / (counts + 1)                                          # (V,)
    return {"share of ends": test_ends.float().mean().item(),
            "majority accuracy": 1 - test_ends.float().mean().item(), "majority AUC": 0.5,
            "word identity AUC": detection_metrics(score[test_ids], test_ends.float())["AUC"]}


# ------------------------------------------------------------------------------------------------
# The experiment
# ------------------------------------------------------------------------------------------------
def valid_batches(streams: NewsStreams, settings: dict = SETTINGS) -> list[MaskedBatch]:
    """The held-out masked windows every model is scored on (all [MASK]; the same for every seed)."""
    s = settings
    return electra_batches(streams.valid, s["valid_batches"], s["batch_size"], s["seq_len"], streams.mask_id,
                           len(streams.vocab), streams.specials, s["mask_prob"], torch.Generator().manual_seed(1))


def pretrain(arm: str, seed: int, streams: NewsStreams, settings: dict = SETTINGS) -> tuple[nn.Module, int]:
    """(model, steps) of one arm: ``"ELECTRA"`` (an :class:`Electra`, ``electra_steps``), ``"masked LM"``
    (a :class:`~lmcourse.dynamic_masking.TinyMLM` of the discriminator's size, fresh 80/10/10 masks,
    the steps of :func:`compute_budget`) or ``"scratch"`` (that encoder's initial weights, 0 steps).
    The discriminator and the masked LM start from different draws of the same seed's generator."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    check_int(seed, "seed", minimum=0)
    check_type(streams, "streams", NewsStreams)
    s, V = settings, len(streams.vocab)
    set_seed(seed, num_threads=torch.get_num_threads())
    gen = torch.Generator().manual_seed(2 + seed)
    if arm == "ELECTRA":
        model = Electra(V, s["d_model"], s["num_heads"], s["num_layers"], s["generator_d_model"],
                        s["generator_heads"], max_len=s["seq_len"])
        steps, loss = s["electra_steps"], electra_loss
        batches = lambda epoch: electra_batches(streams.train, 100, s["batch_size"], s["seq_len"],   # noqa: E731
                                                streams.mask_id, V, streams.specials, s["mask_prob"], gen)
    else:
        model = TinyMLM(V, s["d_model"], s["num_heads"], s["num_layers"], max_len=s["seq_len"])
        if arm == "scratch":
            return model, 0
        steps, loss = compute_budget(s, V)["masked LM steps"], mlm_loss
        batches = lambda epoch: mlm_batches(streams.train, 100, s["batch_size"], s["seq_len"],       # noqa: E731
                                            streams.mask_id, V, streams.specials, s["mask_prob"], gen)
    fit(model, loss, batches, num_epochs=math.ceil(steps / 100), max_steps=steps, lr=s["lr"], seed=seed,
        num_threads=torch.get_num_threads(), progress=False)
    return model, steps


@torch.no_grad()
def masked_lm_loss(model: TinyMLM, batches: list[MaskedBatch]) -> float:
    """Mean cross-entropy (nats) at the masked positions of ``batches``."""
    check_type(model, "model", TinyMLM)
    was_training = model.training
    model.eval()
    loss = sum(mlm_loss(model, b).item() for b in batches) / len(batches)
    model.train(was_training)
    return loss


def run_seed(seed: int, streams: NewsStreams, arms: tuple[str, ...] = ARMS, settings: dict = SETTINGS
             ) -> tuple[dict, dict[str, nn.Module]]:
    """One seed of ``arms``: (its record, the pretrained models by arm). The record: ``seed``, per arm
    the pretraining ``steps`` and what :func:`finetune` returns (the test ``AUC`` first); the generator's
    and the masked LM's held-out ``mlm_loss``; ELECTRA's ``detection`` (:func:`detect`) and the words of
    the validation window ``flagged_window`` as it reads them (``flagged``, :func:`flagged_tokens`)."""
    check_int(seed, "seed", minimum=0)
    for arm in arms:
        if arm not in ARMS:
            raise ValueError(f"arms must be taken from {ARMS}, got {arm!r}")
    s = settings
    held_out = valid_batches(streams, s)
    data = sentence_end_data(streams, s)
    record, models = {"seed": seed}, {}
    for arm in arms:
        model, steps = pretrain(arm, seed, streams, s)
        models[arm] = model
        encoder = model.discriminator if arm == "ELECTRA" else model
        out = {"steps": steps, **finetune(encoder, data, seed, s)}
        if arm == "ELECTRA":
            out["mlm_loss"] = round(masked_lm_loss(model.generator, held_out), 4)
            out["detection"] = {k: round(v, 4) for k, v in detect(model, held_out, streams.specials, seed).items()}
            out["flagged"] = flagged_tokens(model, streams.valid[slice(*s["flagged_window"])], streams.vocab,
                                            s["mask_prob"], seed)
        elif arm == "masked LM":
            out["mlm_loss"] = round(masked_lm_loss(model, held_out), 4)
        record[arm] = out
    return record, models


def experiment(streams: NewsStreams, settings: dict = SETTINGS, processes: int | None = None) -> list[dict]:
    """Every seed of ``settings``, one per process."""
    return parallel_map(lambda seed: run_seed(seed, streams, ARMS, settings)[0], settings["seeds"],
                        processes=processes, desc="seeds")


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded seeds, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def recorded(path: str | Path = RESULTS) -> dict:
    """The whole checked record: ``runs``, ``budget`` (:func:`compute_budget`), ``baselines``
    (:func:`sentence_end_baselines`, the held-out masked-LM ``unigram loss``)."""
    return load_record(path, SETTINGS)


def paired_differences(runs: list[dict]) -> dict[str, dict[str, float]]:
    """Fine-tuned AUC per arm (mean, standard error over seeds) and the paired differences between
    arms (ELECTRA - masked LM, ELECTRA - scratch, masked LM - scratch), each with its per-seed values."""
    auc = {arm: np.array([r[arm]["AUC"] for r in runs]) for arm in ARMS}
    pairs = {arm: auc[arm] for arm in ARMS}
    pairs.update({f"{a} - {b}": auc[a] - auc[b] for a, b in (("ELECTRA", "masked LM"), ("ELECTRA", "scratch"),
                                                               ("masked LM", "scratch"))})
    out = {}
    for name, values in pairs.items():
        mean, se = mean_se(values)
        out[name] = {"mean": mean, "se": se, "seeds": values.round(4).tolist()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.electra_small", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    streams = news_streams()
    V = len(streams.vocab)
    budget = compute_budget(SETTINGS, V)
    for name, value in budget.items():
        print(f"{name:20s} {value:,.0f}" + (" FLOPs" if name.endswith(("step", "total")) and "tokens" not in name
                                              else ""))
    baselines = sentence_end_baselines(sentence_end_data(streams), V)
    targets = torch.cat([b.labels[b.chosen] for b in valid_batches(streams)])
    baselines["unigram loss"] = unigram_loss(streams.train, targets, V)
    runs = experiment(streams)
    save_record(args.out, "python -m lmcourse.electra_small", SETTINGS, runs,
                budget=budget, baselines={k: round(v, 4) for k, v in baselines.items()})
    for name, d in paired_differences(runs).items():
        print(f"{name:22s} {d['mean']:+.4f} ± {d['se']:.4f}  seeds {d['seeds']}")
    print("baselines:", {k: round(v, 4) for k, v in baselines.items()})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
