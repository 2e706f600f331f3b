"""Few labels, GPT-1's way: fine-tune the course's GPT checkpoint on a task it cannot do zero-shot.

The task: is a 20-word passage of running text from the news corpus (label 0) or from Wikipedia
(label 1)? The checkpoint was pretrained on the training articles of both corpora without labels, so
its likelihood has no label-free way to answer. Labelled passages come from the *validation*
articles and test passages from the *test* articles: the checkpoint has seen neither.

The arms of :func:`label_curve`, each trained on the same labelled draws:

- GPT-1 fine-tuning of the checkpoint: ``[start] passage [extract]``, a new linear head on the
  extract token's final state, every weight trained on ``L2 + lambda * L1`` (:func:`lmcourse.gpt.task_loss`)
  with lambda = 0 and 0.5;
- the same network from random weights, trained the same way;
- baselines: the majority class, Kneser-Ney (one trigram model per class, trained on the labelled
  passages; the class whose model gives the passage the higher likelihood wins) and a bag-of-words
  logistic regression.

Every network trains until it fits its labelled passages: epochs over them until the task loss on
them (lambda's LM term left out) is below ``tol``, so no arm is cut short.

With 4 labels, which passages are drawn moves every arm by more than the arms differ (Kneser-Ney
ranged from 0.405 to 0.645 over 5 draws), so the curve holds 20 label draws. Its 180 networks take
about five minutes on two cores, so the curve is computed once by::

    python -m lmcourse.gpt_finetune      # writes lmcourse/checkpoints/gpt_finetune.json

under the reference settings (numerics.env); :func:`recorded_curve` reads it after checking its
settings and SHA-256. The chapter reruns one label draw live (:func:`run_arm`) beside the record.
"""
import argparse
import copy
import math
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from lmcourse.bpe import END_OF_TEXT
from lmcourse.cli import output_file
from lmcourse.context_probe import mean_se
from lmcourse.data import news_documents, wiki_articles
from lmcourse.gpt import GPT, GPTForTask, TaskTokens, classification_input, task_batch, task_loss
from lmcourse.label_curve import bag_of_words_accuracy, draw_labels
from lmcourse.ngram import NGramLM, lm_vocab
from lmcourse.parallel import parallel_map
from lmcourse.pretrain import GPT_SPECIALS, load_pretrained
from lmcourse.seed import set_seed
from lmcourse.tokenize import word_tokenize
from lmcourse.train import fit, save_record
from lmcourse.validate import check_float, check_int, check_nonempty, check_type, load_record

PASSAGE_WORDS = 20                          # words per passage: 42 tokens of the checkpoint on average
ARMS = ("fine-tuned, lambda 0", "fine-tuned, lambda 0.5", "from scratch")
BASELINES = ("majority class", "Kneser-Ney", "bag of words")
#: the recorded curve's settings (the defaults of :func:`label_curve`)
SETTINGS = {"label_counts": [4, 16, 64], "seeds": list(range(20)), "test_per_class": 100, "lr": 1e-3, "tol": 0.05,
            "batch_size": 8, "max_steps": 400, "passage_words": PASSAGE_WORDS, "max_tokens": 64}
RESULTS = Path(__file__).parent / "checkpoints" / "gpt_finetune.json"


def corpus_passages(split: str, words: int = PASSAGE_WORDS) -> list[tuple[str, int]]:
    """``(passage, label)`` for every run of ``words`` consecutive words (not overlapping) of
    ``split``'s articles: label 0 for the news corpus, 1 for Wikipedia."""
    check_int(words, "words", minimum=1)

    def cut(docs):
        out = []
        for doc in docs:
            w = doc.split()
            out += [" ".join(w[i:i + words]) for i in range(0, len(w) - words + 1, words)]
        return out

    return [(p, 0) for p in cut(news_documents(split))] + [(p, 1) for p in cut(wiki_articles(split))]


def labelled_passages(num_labelled: int, seed: int, words: int = PASSAGE_WORDS) -> list[tuple[str, int]]:
    """One label draw: ``num_labelled`` passages of the validation articles, half of each class,
    drawn with ``seed``."""
    check_int(num_labelled, "num_labelled", minimum=2)
    if num_labelled % 2:
        raise ValueError(f"num_labelled must be even (half news, half Wikipedia), got {num_labelled}")
    return draw_labels(corpus_passages("valid", words), num_labelled // 2, seed)


def held_out_passages(per_class: int = 100, words: int = PASSAGE_WORDS) -> list[tuple[str, int]]:
    """The test set: ``per_class`` passages of each class from the test articles (always drawn with
    seed 0, so that every label draw is scored on the same passages)."""
    check_int(per_class, "per_class", minimum=1)
    return draw_labels(corpus_passages("test", words), per_class, seed=0)


def task_tokens(tokenizer) -> TaskTokens:
    """GPT-1's start, delimiter and extract tokens as the checkpoint's tokenizer reserves them."""
    _, start, delim, extract = GPT_SPECIALS
    return TaskTokens(start=tokenizer.special_id(start), delim=tokenizer.special_id(delim),
                      extract=tokenizer.special_id(extract))


def encode_passages(tokenizer, items: list[tuple[str, int]], max_tokens: int = 64
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """GPT-1's classification input ``[start] passage [extract]`` for each ``(passage, label)``.

    Passages longer than ``max_tokens`` tokens are cut to their first ``max_tokens``. Returns ids
    (B, 1, T) padded with ``<|endoftext|>``, ``last`` (B, 1) the extract token's position, labels (B,).
    """
    check_nonempty(items, "items")
    check_int(max_tokens, "max_tokens", minimum=1)
    tokens = task_tokens(tokenizer)
    examples = [classification_input(tokenizer.encode(text)[:max_tokens], tokens) for text, _ in items]
    ids, last = task_batch(examples, tokenizer.special_id(END_OF_TEXT))
    return ids, last, torch.tensor([label for _, label in items], dtype=torch.long)


def majority_accuracy(train: list[tuple[str, int]], test: list[tuple[str, int]]) -> float:
    """Accuracy of always answering ``train``'s most frequent label (the smaller label on a tie)."""
    check_nonempty(train, "train")
    check_nonempty(test, "test")
    counts = Counter(label for _, label in train)
    majority = min(counts, key=lambda label: (-counts[label], label))
    return sum(label == majority for _, label in test) / len(test)


def kneser_ney_predict(train: list[tuple[str, int]], texts: list[str], order: int = 3) -> list[int]:
    """Label of each text by likelihood: one interpolated Kneser-Ney model of ``order`` per label,
    trained on that label's ``train`` texts (lowercased words) over one shared vocabulary;
    a text gets the label maximising log P(label) + log P(text | label)."""
    check_nonempty(train, "train")
    check_nonempty(texts, "texts")
    check_int(order, "order", minimum=1)
    by_label: dict[int, list[list[str]]] = {}
    for text, label in train:
        by_label.setdefault(label, []).append(word_tokenize(text))
    vocab = lm_vocab([s for sentences in by_label.values() for s in sentences])
    models = {label: NGramLM(order, smoothing="kneser-ney").fit(sentences, vocab=vocab)
              for label, sentences in by_label.items()}
    prior = {label: math.log(len(sentences) / len(train)) for label, sentences in by_label.items()}
    labels = sorted(models)
    predictions = []
    for text in texts:
        words = word_tokenize(text)
        scores = [prior[label] + models[label].sentence_logprob(words)[0] for label in labels]
        predictions.append(labels[max(range(len(labels)), key=scores.__getitem__)])
    return predictions


def kneser_ney_accuracy(train: list[tuple[str, int]], test: list[tuple[str, int]], order: int = 3) -> float:
    """Test accuracy of :func:`kneser_ney_predict`."""
    check_nonempty(test, "test")
    predicted = kneser_ney_predict(train, [text for text, _ in test], order)
    return sum(p == label for p, (_, label) in zip(predicted, test)) / len(test)


@dataclass
class Run:
    """One trained network: test accuracy, optimiser steps taken, task loss on its labelled set at the end."""
    accuracy: float
    steps: int
    train_loss: float


@torch.no_grad()
def task_logits(model: GPTForTask, ids: torch.Tensor, last: torch.Tensor, chunk: int = 100) -> torch.Tensor:
    """The classification head's logits (B, num_classes) for ids (B, 1, T) and ``last`` (B, 1), in
    chunks of ``chunk`` passages. The same numbers as ``model(ids, last)[0]``, without the LM logits
    (B, 1, T, vocab_size) that the forward pass also makes, the costliest part of a small model."""
    check_type(model, "model", GPTForTask)
    model.eval()
    out = []
    for i in range(0, len(ids), chunk):
        h = model.gpt.hidden_states(ids[i:i + chunk, 0])                               # (b, T, C)
        out.append(model.head(h[torch.arange(len(h)), last[i:i + chunk, 0]]))          # (b, C) -> (b, classes)
    return torch.cat(out)


def _subset(batch, index: list[int]):
    """The passages ``index`` of an encoded batch (ids, last, labels), cut to their longest."""
    ids, last, labels = (t[index] for t in batch)
    return ids[..., :int(last.max()) + 1], last, labels


def _loss_and_accuracy(model: GPTForTask, batch) -> tuple[float, float]:
    """Mean task cross-entropy (no LM term) and accuracy on an encoded batch (ids, last, labels)."""
    ids, last, labels = batch
    logits = task_logits(model, ids, last)
    return F.cross_entropy(logits, labels).item(), (logits.argmax(-1) == labels).float().mean().item()


def train_classifier(gpt: GPT, tokenizer, train: list[tuple[str, int]], test_batch, lm_weight: float,
                     lr: float, seed: int, batch_size: int = 8, tol: float = 0.05,
                     max_steps: int = 400) -> Run:
    """Fine-tune a copy of ``gpt`` (``gpt`` itself is left untouched) with GPT-1's classification
    head on ``train`` and score it on ``test_batch`` (from :func:`encode_passages`).

    Epochs of shuffled batches of ``batch_size`` passages, Adam at ``lr``, loss L2 + ``lm_weight`` L1,
    until the task loss L2 on ``train`` falls below ``tol`` (it fits every labelled passage) or
    ``max_steps`` steps are spent. Seeded by ``seed``: the head, the batches, everything.
    """
    check_type(gpt, "gpt", GPT)
    check_nonempty(train, "train")
    check_float(lm_weight, "lm_weight", minimum=0.0)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    check_int(batch_size, "batch_size", minimum=1)
    check_float(tol, "tol", minimum=0.0, strict_minimum=True)
    check_int(max_steps, "max_steps", minimum=1)
    set_seed(seed, num_threads=torch.get_num_threads())
    model = GPTForTask(copy.deepcopy(gpt), "classification")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    train_batch = encode_passages(tokenizer, train)
    order, steps, loss = random.Random(seed), 0, math.inf
    while steps < max_steps and loss >= tol:
        shuffled = order.sample(range(len(train)), len(train))
        batches = [_subset(train_batch, shuffled[i:i + batch_size])
                   for i in range(0, len(train), batch_size)][:max_steps - steps]
        fit(model, lambda m, b: task_loss(m, b, lm_weight), batches, optimizer=optimizer, seed=None, progress=False)
        steps += len(batches)
        loss, _ = _loss_and_accuracy(model, train_batch)
    return Run(_loss_and_accuracy(model, test_batch)[1], steps, loss)


def run_arm(gpt: GPT, tokenizer, num_labelled: int, seed: int, name: str, test: list[tuple[str, int]],
            test_batch, lr: float = 1e-3, tol: float = 0.05) -> "Run | dict[str, float]":
    """One label draw (``num_labelled`` passages, ``seed``) for one arm ``name`` of :data:`ARMS`, a
    :class:`Run`, or for ``"baselines"``, ``{baseline: test accuracy}``; scored on ``test`` (its
    encoded ``test_batch`` from :func:`encode_passages`)."""
    if name not in (*ARMS, "baselines"):
        raise ValueError(f"name must be one of {(*ARMS, 'baselines')}, got {name!r}")
    labelled = labelled_passages(num_labelled, seed)
    if name == "baselines":
        return {"majority class": majority_accuracy(labelled, test),
                "Kneser-Ney": kneser_ney_accuracy(labelled, test),
                "bag of words": bag_of_words_accuracy(labelled, test)}
    start = gpt
    if name == "from scratch":
        set_seed(seed, num_threads=torch.get_num_threads())
        start = GPT(gpt.config)
    lm_weight = 0.5 if name == "fine-tuned, lambda 0.5" else 0.0
    return train_classifier(start, tokenizer, labelled, test_batch, lm_weight, lr, seed, tol=tol)


@dataclass
class LabelCurve:
    """Test accuracies of every arm and baseline: ``accuracy[name][n]`` lists one value per seed (label
    draw) for ``n`` labelled passages; ``steps`` and ``train_loss`` describe the networks' training."""
    label_counts: tuple[int, ...]
    seeds: tuple[int, ...]
    test_size: int
    accuracy: dict[str, dict[int, list[float]]]
    steps: dict[str, dict[int, list[int]]]
    train_loss: dict[str, dict[int, list[float]]]

    def mean_se(self, name: str, n: int) -> tuple[float, float]:
        """Mean test accuracy of ``name`` with ``n`` labels over the seeds, and its standard error."""
        return mean_se(self.accuracy[name][n])

    def paired(self, name: str, other: str, n: int) -> tuple[float, float]:
        """Mean and standard error of ``name`` minus ``other``, seed by seed (the same label draws)."""
        return mean_se([a - b for a, b in zip(self.accuracy[name][n], self.accuracy[other][n])])


def label_curve(gpt: GPT, tokenizer, label_counts=(4, 16, 64), seeds=range(20), test_per_class: int = 100,
                lr: float = 1e-3, tol: float = 0.05, processes: int | None = None) -> LabelCurve:
    """Every arm (:data:`ARMS`) and baseline (:data:`BASELINES`) on the same label draws, side by side.

    For each ``n`` in ``label_counts`` and each seed, :func:`labelled_passages` draws ``n`` labelled
    passages; the pretrained ``gpt`` is fine-tuned on them (lambda 0 and 0.5), the same network from
    random weights (seeded by the seed) is trained the same way (:func:`train_classifier`, Adam at
    ``lr`` until the task loss is below ``tol``), and the baselines are fitted. Everything is scored
    on the same ``2 * test_per_class`` test passages (:func:`held_out_passages`). The runs go side by
    side through :func:`lmcourse.parallel.parallel_map`.
    """
    check_type(gpt, "gpt", GPT)
    label_counts, seeds = tuple(label_counts), tuple(seeds)
    check_nonempty(label_counts, "label_counts")
    check_nonempty(seeds, "seeds")
    if len(seeds) < 2:
        raise ValueError(f"seeds must hold at least 2 seeds for a standard error, got {len(seeds)}")
    for n in label_counts:
        check_int(n, "label_counts[i]", minimum=2)
    for seed in seeds:
        check_int(seed, "seeds[i]", minimum=0)
    test = held_out_passages(test_per_class)
    test_batch = encode_passages(tokenizer, test)
    run = lambda job: run_arm(gpt, tokenizer, *job, test, test_batch, lr, tol)   # noqa: E731

    # the most labels first, so that the longest runs do not finish last on one core
    jobs = [(n, seed, name) for n in sorted(label_counts, reverse=True) for seed in seeds
            for name in (*ARMS, "baselines")]
    results = parallel_map(run, jobs, processes=processes, desc="label draws")
    runs = []
    for (n, seed, name), result in zip(jobs, results):
        if name == "baselines":
            runs += [{"name": baseline, "labels": n, "seed": seed, "accuracy": accuracy}
                     for baseline, accuracy in result.items()]
        else:
            runs.append({"name": name, "labels": n, "seed": seed, "accuracy": result.accuracy,
                         "steps": result.steps, "train loss": result.train_loss})
    return _assemble(label_counts, seeds, len(test), runs)


def _assemble(label_counts: tuple[int, ...], seeds: tuple[int, ...], test_size: int, runs: list[dict]) -> LabelCurve:
    """A :class:`LabelCurve` from run records (``name``, ``labels``, ``seed``, ``accuracy``, and for the
    networks ``steps`` and ``train loss``), each list ordered by seed."""
    table = lambda names: {name: {n: [] for n in label_counts} for name in names}    # noqa: E731
    curve = LabelCurve(label_counts, seeds, test_size, table(ARMS + BASELINES), table(ARMS), table(ARMS))
    for run in sorted(runs, key=lambda r: r["seed"]):
        curve.accuracy[run["name"]][run["labels"]].append(run["accuracy"])
        if run["name"] in ARMS:
            curve.steps[run["name"]][run["labels"]].append(run["steps"])
            curve.train_loss[run["name"]][run["labels"]].append(run["train loss"])
    return curve


def curve_runs(curve: LabelCurve) -> list[dict]:
    """The curve as records, one per arm or baseline, label count and seed (accuracies to 4 decimals)."""
    runs = []
    for name, by_n in curve.accuracy.items():
        for n, accuracies in by_n.items():
            for k, (seed, accuracy) in enumerate(zip(curve.seeds, accuracies)):
                run = {"name": name, "labels": n, "seed": seed, "accuracy": round(accuracy, 4)}
                if name in ARMS:
                    run |= {"steps": curve.steps[name][n][k], "train loss": round(curve.train_loss[name][n][k], 4)}
                runs.append(run)
    return runs


def recorded_curve(path: str | Path = RESULTS) -> LabelCurve:
    """The recorded curve, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    runs = load_record(path, SETTINGS)["runs"]
    return _assemble(tuple(SETTINGS["label_counts"]), tuple(SETTINGS["seeds"]), 2 * SETTINGS["test_per_class"], runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.gpt_finetune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    gpt, tokenizer = load_pretrained("gpt")
    curve = label_curve(gpt, tokenizer, SETTINGS["label_counts"], SETTINGS["seeds"], SETTINGS["test_per_class"],
                        SETTINGS["lr"], SETTINGS["tol"])
    save_record(args.out, "python -m lmcourse.gpt_finetune", SETTINGS, curve_runs(curve))
    for name in curve.accuracy:
        print(f"{name:24s}" + "".join(f"{curve.mean_se(name, n)[0]:8.3f} +- {curve.mean_se(name, n)[1]:.3f}"
                                     for n in curve.label_counts))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
