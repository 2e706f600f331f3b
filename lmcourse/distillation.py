"""Knowledge distillation (Hinton et al. 2015), the recipe behind DistilBERT and MiniLM.

A small student is trained to match a large teacher's softened distribution
p_i = softmax(z_i / T): at temperature T > 1 the teacher's "wrong" answers keep visible mass, and
how the teacher ranks them is the knowledge the hard label lacks.

    loss = alpha * T^2 * KL(p_teacher^T || p_student^T) + (1 - alpha) * CE(student, label)

The T^2 keeps the soft term's gradients on the scale of the hard term's as T changes.

The experiment (:func:`run`, :data:`SETTINGS`): the teacher is the counting bigram model of
:class:`lmcourse.electra.BigramClozeGenerator`, p(next word | word) estimated on the whole news
training text. A student (:class:`BigramStudent`) sees only 3,000 next-word pairs of the training
text, its seed's own slice (:func:`student_words`: seed k reads words 3,000 k to 3,000 (k + 1), so
the seeds' slices do not overlap), and starts from their unigram distribution; it trains on the hard
labels (the next word) or on the distillation loss, with the same initial weights and batches for
both losses within a seed, scored on the validation articles every few steps, until its validation
cross-entropy has not fallen for ``patience_steps`` (after at least the equal budget of
``budget_steps``); the best step's weights are scored once on the test articles. Two count models of
each slice mark the levels (:func:`baselines`): its unigram, and a bigram interpolated with that
unigram (:func:`interpolated_bigram`, the weight tuned on validation). The runs are computed once::

    python -m lmcourse.distillation    # writes lmcourse/checkpoints/distillation.json

under the reference settings (numerics.env); :func:`recorded_runs` checks the file's settings and
SHA-256, and :func:`plot_distillation_runs` draws it.
"""
import argparse
import copy
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.cli import output_file
from lmcourse.context_probe import mean_se
from lmcourse.data import news_word_streams
from lmcourse.electra import BigramClozeGenerator
from lmcourse.mlm_eval import unigram_loss
from lmcourse.parallel import parallel_map
from lmcourse.seed import set_seed
from lmcourse.train import fit, runs_by, save_record
from lmcourse.validate import check_float, check_int, check_probability, check_token_ids, check_type, load_record


def soft_targets(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(logits / T) over the last dimension."""
    check_type(logits, "logits", torch.Tensor)
    check_float(temperature, "temperature", minimum=0.0, strict_minimum=True)
    return (logits / temperature).softmax(dim=-1)


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                      temperature: float = 2.0, labels: torch.Tensor | None = None,
                      alpha: float = 0.5) -> torch.Tensor:
    """Soft-target KL at ``temperature`` (scaled by T^2), mixed with hard-label cross-entropy.

    logits: (N, V); labels: (N,) class ids or None (then the loss is the soft term alone).
    """
    check_type(student_logits, "student_logits", torch.Tensor)
    check_type(teacher_logits, "teacher_logits", torch.Tensor)
    if student_logits.shape != teacher_logits.shape or student_logits.dim() != 2:
        raise ValueError(f"student_logits and teacher_logits must both be (N, V), got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    check_float(temperature, "temperature", minimum=0.0, strict_minimum=True)
    check_probability(alpha, "alpha")
    T = temperature
    log_p_student = F.log_softmax(student_logits / T, dim=-1)             # (N, V)
    log_p_teacher = F.log_softmax(teacher_logits / T, dim=-1).detach()     # (N, V)
    # KL(p_t || p_s) = sum_i p_t,i (log p_t,i - log p_s,i), averaged over the N rows
    p_teacher = log_p_teacher.exp()
    # terms with p_t,i = 0 contribute 0 (also when a logit is -inf)
    kl = torch.where(p_teacher > 0, p_teacher * (log_p_teacher - log_p_student), 0.0).sum(-1).mean()
    if labels is None:
        return T * T * kl
    return alpha * T * T * kl + (1 - alpha) * F.cross_entropy(student_logits, labels)


#: the students' two losses
ARMS = ("hard labels", "soft targets, T = 2")
SETTINGS = {"student_tokens": 3000, "batch_tokens": 750, "d_embed": 32, "lr": 1e-2, "temperature": 2.0,
            "alpha": 0.9, "teacher_k": 0.1, "eval_every": 5, "budget_steps": 40, "patience_steps": 60,
            "max_steps": 400, "seeds": [0, 1, 2, 3, 4], "arms": list(ARMS), "slices": "disjoint, one per seed"}
#: the bigram baseline's interpolation weights tried on validation
BIGRAM_WEIGHTS = [k / 20 for k in range(1, 20)]
RESULTS = Path(__file__).parent / "checkpoints" / "distillation.json"


class BigramStudent(nn.Module):
    """A small neural bigram model: an embedding of the current word (width ``d_embed``, started at
    normal(0, 0.02)) and a linear layer to the next word's logits, whose bias starts at the add-one
    log unigram of ``train_ids``: before training it predicts the unigram of its own training words.
    forward(ids (N,)) -> logits (N, vocab_size)."""

    def __init__(self, vocab_size: int, train_ids: torch.Tensor, d_embed: int = 32):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(d_embed, "d_embed", minimum=1)
        check_token_ids(train_ids, vocab_size, "train_ids")
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.out = nn.Linear(d_embed, vocab_size)
        counts = torch.bincount(train_ids.flatten(), minlength=vocab_size).double() + 1
        with torch.no_grad():
            self.embed.weight.normal_(0.0, 0.02)
            self.out.bias.copy_((counts / counts.sum()).log())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.embed(ids))                  # (N,) -> (N, d_embed) -> (N, V)


def distillation_data() -> dict:
    """The experiment's data: ``teacher`` (V, V) log p(next | word) from all training text,
    ``train`` (n,) all the training text (each student reads a slice, :func:`student_words`),
    ``valid`` and ``test`` (n,) streams."""
    _, streams = news_word_streams()
    vocab_size = int(max(ids.max() for ids in streams.values())) + 1
    teacher = BigramClozeGenerator(streams["train"], vocab_size, k=SETTINGS["teacher_k"]).log_next
    return {"teacher": teacher, "train": streams["train"], "valid": streams["valid"], "test": streams["test"]}


def student_words(data: dict, seed: int) -> torch.Tensor:
    """(student_tokens + 1,) the words the students of ``seed`` read: training words
    seed * student_tokens to (seed + 1) * student_tokens, so the seeds' next-word pairs do not overlap."""
    check_type(data, "data", dict)
    check_int(seed, "seed", minimum=0)
    n = SETTINGS["student_tokens"]
    if (seed + 1) * n + 1 > len(data["train"]):
        raise ValueError(f"seed must be below {(len(data['train']) - 1) // n}: the training text holds "
                         f"{len(data['train'])} words, {n} a seed; got {seed}")
    return data["train"][seed * n: (seed + 1) * n + 1]


def _bigram_parts(words: torch.Tensor, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(V, V) relative bigram frequencies of ``words`` (n,) (a word never seen before another gets
    the unigram's row) and (V,) the add-one unigram of ``words[1:]``, both float64."""
    counts = torch.zeros(vocab_size, vocab_size, dtype=torch.float64)
    counts.index_put_((words[:-1], words[1:]), torch.ones(len(words) - 1, dtype=torch.float64), accumulate=True)
    unigram = torch.bincount(words[1:], minlength=vocab_size).double() + 1
    unigram = unigram / unigram.sum()                                             # (V,)
    seen = counts.sum(1, keepdim=True)                                            # (V, 1)
    return torch.where(seen > 0, counts / seen.clamp(min=1), unigram), unigram


def interpolated_bigram(words: torch.Tensor, vocab_size: int, weight: float) -> torch.Tensor:
    """(V, V) log p(next | word) counted on ``words`` (n,): ``weight`` times the bigram's relative
    frequency plus 1 - weight times the add-one unigram of the next words (the unigram alone after a
    word never seen in ``words[:-1]``). A count model of the students' own words."""
    check_int(vocab_size, "vocab_size", minimum=2)
    check_token_ids(words, vocab_size, "words")
    if words.dim() != 1 or len(words) < 2:
        raise ValueError(f"words must be 1-d with at least 2 ids, got shape {tuple(words.shape)}")
    check_probability(weight, "weight")
    relative, unigram = _bigram_parts(words, vocab_size)
    return (weight * relative + (1 - weight) * unigram).log().float()


def next_word_loss(log_probs_or_model, stream: torch.Tensor) -> float:
    """Mean next-word cross-entropy (nats) over ``stream`` (n,) of a model (ids -> logits) or of a
    (V, V) table of log p(next | word)."""
    check_type(stream, "stream", torch.Tensor)
    if stream.dim() != 1 or len(stream) < 2:
        raise ValueError(f"stream must be 1-d with at least 2 ids, got shape {tuple(stream.shape)}")
    if isinstance(log_probs_or_model, torch.Tensor):
        logits = log_probs_or_model[stream[:-1]]
    else:
        check_type(log_probs_or_model, "log_probs_or_model", nn.Module)
        with torch.no_grad():
            logits = log_probs_or_model(stream[:-1])
    return F.cross_entropy(logits, stream[1:]).item()


def baselines(data: dict | None = None) -> dict[str, dict[str, float | list[float]]]:
    """The levels, as next-word cross-entropies (nats): ``teacher`` -> {"valid", "test"};
    ``unigram`` -> {"valid", "test"}: lists, one per seed of :data:`SETTINGS`, for an add-one unigram
    of that seed's next words (the no-context level); ``bigram`` -> {"valid", "test", "weight"}:
    lists for :func:`interpolated_bigram` of that seed's words, the weight the best of
    :data:`BIGRAM_WEIGHTS` on validation."""
    data = distillation_data() if data is None else data
    vocab_size = len(data["teacher"])
    lines = {"teacher": {split: next_word_loss(data["teacher"], data[split]) for split in ("valid", "test")},
             "unigram": {"valid": [], "test": []}, "bigram": {"valid": [], "test": [], "weight": []}}
    for seed in SETTINGS["seeds"]:
        words = student_words(data, seed)
        for split in ("valid", "test"):
            lines["unigram"][split].append(unigram_loss(words[1:], data[split][1:], vocab_size))
        relative, unigram = _bigram_parts(words, vocab_size)
        weights = torch.tensor(BIGRAM_WEIGHTS, dtype=torch.float64)[:, None]                  # (W, 1)
        losses = {}                         # split -> (W,) mean -log p(next | word) at each weight
        for split in ("valid", "test"):
            stream = data[split]
            bigram, no_context = relative[stream[:-1], stream[1:]], unigram[stream[1:]]   # (n-1,) each
            losses[split] = -(weights * bigram + (1 - weights) * no_context).log().mean(dim=1)
        best = losses["valid"].argmin()
        for split in ("valid", "test"):
            lines["bigram"][split].append(losses[split][best].item())
        lines["bigram"]["weight"].append(BIGRAM_WEIGHTS[best])
    return lines


def run(arm: str, seed: int, data: dict | None = None, max_steps: int | None = None) -> dict:
    """One student trained on ``arm`` (a key of :data:`ARMS`) with ``seed`` (its initial weights and
    its words, :func:`student_words`, cut in order into the same batches for both arms), scored on
    validation every ``eval_every`` steps (and before training); early stopping as in the module's
    docstring. ``max_steps`` (default the settings') cuts the run short.

    Returns ``{arm, seed, steps, valid_ce, best_step, best_valid_ce, test_ce_at_best, budget_valid_ce}``."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    check_int(seed, "seed", minimum=0)
    s = SETTINGS
    max_steps = s["max_steps"] if max_steps is None else max_steps
    check_int(max_steps, "max_steps", minimum=1, maximum=s["max_steps"])
    data = distillation_data() if data is None else data
    teacher, words = data["teacher"], student_words(data, seed)
    prev, nxt = words[:-1], words[1:]
    size = s["batch_tokens"]
    batches = [(prev[i:i + size], nxt[i:i + size]) for i in range(0, len(prev), size)]

    def loss_fn(model, batch):
        if arm == "hard labels":
            return F.cross_entropy(model(batch[0]), batch[1])
        return distillation_loss(model(batch[0]), teacher[batch[0]], s["temperature"], labels=batch[1],
                                 alpha=s["alpha"])

    set_seed(seed)                                        # the same initial student for both losses
    model = BigramStudent(len(teacher), nxt, s["d_embed"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=0.0)
    steps, curve = [0], [round(next_word_loss(model, data["valid"]), 5)]
    best, best_step, best_state = curve[0], 0, copy.deepcopy(model.state_dict())
    while steps[-1] < max_steps:
        chunk = [batches[(steps[-1] + i) % len(batches)] for i in range(min(s["eval_every"], max_steps - steps[-1]))]
        fit(model, loss_fn, chunk, optimizer=optimizer, seed=None, progress=False)
        model.eval()
        steps.append(steps[-1] + len(chunk))
        curve.append(round(next_word_loss(model, data["valid"]), 5))
        model.train()
        if curve[-1] < best:
            best, best_step, best_state = curve[-1], steps[-1], copy.deepcopy(model.state_dict())
        if steps[-1] >= s["budget_steps"] and steps[-1] - best_step >= s["patience_steps"]:
            break
    model.load_state_dict(best_state)
    model.eval()
    budget = dict(zip(steps, curve)).get(s["budget_steps"])
    return {"arm": arm, "seed": seed, "steps": steps, "valid_ce": curve, "best_step": best_step,
            "best_valid_ce": best, "test_ce_at_best": round(next_word_loss(model, data["test"]), 5),
            "budget_valid_ce": budget}


def experiment(processes: int | None = None) -> list[dict]:
    """Both arms with every seed of :data:`SETTINGS`, side by side."""
    data = distillation_data()
    jobs = [(arm, seed) for arm in ARMS for seed in SETTINGS["seeds"]]
    return parallel_map(lambda job: run(*job, data=data), jobs, processes=processes, desc="students")


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def by_arm(runs: list[dict], key: str) -> dict[str, torch.Tensor]:
    """arm -> (seeds,) the runs' ``key`` (e.g. ``"best_valid_ce"``), in seed order."""
    return runs_by(runs, "arm", ARMS, key)


def plot_distillation_runs(runs: list[dict], lines: dict[str, dict[str, float]], ax=None):
    """Validation cross-entropy per step of every student (one colour per arm, one line per seed),
    each run's best step marked, with the teacher's line and the mean over seeds of the unigram's
    and the interpolated bigram's (``lines`` as :func:`baselines` gives them) and the equal budget;
    returns the axes."""
    import matplotlib.pyplot as plt
    check_type(runs, "runs", list)
    check_type(lines, "lines", dict)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for k, arm in enumerate(ARMS):
        chosen = [r for r in runs if r["arm"] == arm]
        if not chosen:
            raise ValueError(f"runs holds no run of {arm!r}")
        for i, r in enumerate(chosen):
            ax.plot(r["steps"], r["valid_ce"], color=f"C{k}", alpha=0.7, lw=1.2,
                    label=f"student, {arm} ({len(chosen)} seeds)" if i == 0 else None)
            ax.plot(r["best_step"], r["best_valid_ce"], "o", color=f"C{k}", ms=4)
    teacher = lines["teacher"]["valid"]
    unigram, bigram = (sum(lines[name]["valid"]) / len(lines[name]["valid"]) for name in ("unigram", "bigram"))
    ax.axhline(unigram, color="0.3", ls="--", lw=1,
               label=f"unigram of each student's {SETTINGS['student_tokens']:,} words ({unigram:.2f})")
    ax.axhline(bigram, color="C3", ls=":", lw=1.2, label=f"counted bigram of the same words ({bigram:.2f})")
    ax.axhline(teacher, color="C2", ls="-.", lw=1, label=f"teacher, all training text ({teacher:.2f})")
    ax.axvline(SETTINGS["budget_steps"], color="0.5", ls=":", lw=1, label="equal budget")
    low = min(min(min(r["valid_ce"]) for r in runs), teacher)
    ax.set(xlabel=f"step ({SETTINGS['batch_tokens']} words each)", ylabel="validation cross-entropy (nats)",
           ylim=(low - 0.1, unigram + 0.6), title="Bigram students on 3,000 words: hard labels against distillation")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.distillation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    runs = experiment()
    save_record(args.out, "python -m lmcourse.distillation", SETTINGS, runs)
    lines = baselines()
    print("teacher: validation {valid:.3f}, test {test:.3f}".format(**lines["teacher"]))
    for name in ("unigram", "bigram"):
        for split in ("valid", "test"):
            mean, se = mean_se(torch.tensor(lines[name][split], dtype=torch.float64))
            print(f"{name} of each seed's words, {split}: {mean:.3f} +- {se:.3f}")
    print("bigram weights:", lines["bigram"]["weight"])
    for key in ("best_valid_ce", "test_ce_at_best", "budget_valid_ce", "best_step"):
        for arm, values in by_arm(runs, key).items():
            mean, se = mean_se(values)
            print(f"{key:16s} {arm:20s} {mean:.3f} +- {se:.3f}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
