"""Real or shuffled? A word-order task that the course's GPT checkpoint solves zero-shot (chapter 8).

Each pair holds a sentence of 8 to 14 words and a copy with its inner words shuffled (the first and
the last word stay in place, so capitals and the final full stop give nothing away). A model scores
both by their total log-probability (:func:`lmcourse.gpt.sequence_log_probs`) and picks the higher.
Labelled pairs come from the *validation* articles of both corpora and the 60 test pairs from the
*test* articles, so the checkpoint has seen neither.

Fine-tuning (:func:`fine_tune`) trains the whole network for ``steps`` steps of Adam on
``pairs_per_step`` labelled pairs each, with the cross-entropy of a softmax over the two scores (a
multiple-choice loss read from the language-model head). The arms of :func:`run_draws`, on the same
label draws: the checkpoint (``"fine-tuned pretrained"``), the same network from random weights
(``"from scratch"``), and GPT-1's layers-transferred ablation (``"0 blocks transferred"`` ...: the
embeddings and the first k blocks copied, the blocks above random), all with
``SETTINGS["transfer_labels"]`` labelled pairs. Its 45 short runs take about a minute of two cores,
so they are computed once::

    python -m lmcourse.word_order      # writes lmcourse/checkpoints/word_order.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the file after checking its
settings and SHA-256, and the chapter reruns one draw beside it (:func:`run_arm`).
"""
import argparse
import random
import re
from pathlib import Path

import torch
import torch.nn.functional as F

from lmcourse.bpe import END_OF_TEXT
from lmcourse.cli import output_file
from lmcourse.data import news_documents, wiki_articles
from lmcourse.gpt import GPT, sequence_log_probs, task_batch, transfer_layers
from lmcourse.parallel import parallel_map
from lmcourse.pretrain import load_pretrained
from lmcourse.seed import set_seed
from lmcourse.train import fit, save_record
from lmcourse.validate import check_int, check_type, load_record

SETTINGS = {"label_counts": [2, 8, 32], "seeds": [0, 1, 2, 3, 4], "test_pairs": 60, "steps": 8, "pairs_per_step": 4,
            "lr": 3e-4, "transfer_labels": 8, "transfer_blocks": [0, 1, 2]}
CURVE_ARMS = ("from scratch", "fine-tuned pretrained")
RESULTS = Path(__file__).parent / "checkpoints" / "word_order.json"


def sentences(docs: list[str], lo: int = 8, hi: int = 14) -> list[str]:
    """The sentences of ``lo`` to ``hi`` words in ``docs``, split after '.', '!' or '?'."""
    check_int(lo, "lo", minimum=3)
    check_int(hi, "hi", minimum=lo)
    return [s for doc in docs for s in re.split(r"(?<=[.!?])\s+", doc.replace("\n", " ")) if lo <= len(s.split()) <= hi]


def shuffle_inside(sentence: str, rng: random.Random) -> str:
    """``sentence`` with every word but the first and the last shuffled into a different order."""
    words = sentence.split()
    if len(set(words[1:-1])) < 2:
        raise ValueError(f"sentence needs two different inner words to shuffle, got {sentence!r}")
    inner = words[1:-1]
    while inner == words[1:-1]:
        rng.shuffle(inner)
    return " ".join([words[0], *inner, words[-1]])


def make_pairs(sents: list[str], seed: int) -> list[tuple[str, str]]:
    """``(real, shuffled)`` for each sentence, shuffled by a generator seeded with ``seed``."""
    rng = random.Random(seed)
    return [(s, shuffle_inside(s, rng)) for s in sents]


def label_pool() -> list[str]:
    """The validation sentences that labelled pairs are drawn from (news, then Wikipedia)."""
    return sentences(news_documents("valid") + wiki_articles("valid"))


def labelled_pairs(num_labelled: int, seed: int) -> list[tuple[str, str]]:
    """Draw ``num_labelled`` pairs from :func:`label_pool` (the draw and the shuffles seeded by ``seed``)."""
    check_int(num_labelled, "num_labelled", minimum=1)
    check_int(seed, "seed", minimum=0)
    return make_pairs(random.Random(100 + seed).sample(label_pool(), num_labelled), seed)


def held_out_pairs(count: int = 60) -> list[tuple[str, str]]:
    """``count`` pairs from the test articles' sentences (a fixed shuffle, then the first ``count``)."""
    check_int(count, "count", minimum=1)
    test_sentences = sentences(news_documents("test") + wiki_articles("test"))
    random.Random(0).shuffle(test_sentences)
    return make_pairs(test_sentences[:count], seed=1)


def pad_after_end_of_text(token_lists: list[list[int]], eot: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) ids, each list after ``eot`` (``<|endoftext|>``) and right-padded with it, and the (B,) lengths."""
    ids, last = task_batch([[[eot, *tokens]] for tokens in token_lists], eot)     # (B, 1, T), (B, 1)
    return ids[:, 0], last[:, 0] + 1


def encode_pairs(tokenizer, pairs: list[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(2 * pairs, T) ids in the order real, shuffled, real, ..., each after ``<|endoftext|>``; (2 * pairs,) lengths."""
    return pad_after_end_of_text([tokenizer.encode(text) for pair in pairs for text in pair],
                                 tokenizer.special_id(END_OF_TEXT))


def pair_scores(model: GPT, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """(pairs, 2): the total log-probability of the real and of the shuffled sentence of each pair."""
    return sequence_log_probs(model, *batch).view(-1, 2)


@torch.no_grad()
def pair_accuracy(model: GPT, batch: tuple[torch.Tensor, torch.Tensor]) -> float:
    """The share of the pairs in ``batch`` (:func:`encode_pairs`) whose real sentence scores higher."""
    model.eval()
    return (pair_scores(model, batch).argmax(-1) == 0).float().mean().item()


def fine_tune(model: GPT, tokenizer, pairs: list[tuple[str, str]], seed: int, test_batch) -> float:
    """Train ``model`` in place on ``pairs`` (``SETTINGS["steps"]`` steps of Adam, each on
    ``SETTINGS["pairs_per_step"]`` pairs drawn with ``seed``) and return its accuracy on ``test_batch``."""
    check_type(model, "model", GPT)
    s, rng = SETTINGS, random.Random(seed)
    batches = [encode_pairs(tokenizer, rng.sample(pairs, min(s["pairs_per_step"], len(pairs))))
               for _ in range(s["steps"])]
    choice_loss = lambda m, b: F.cross_entropy(pair_scores(m, b), torch.zeros(len(b[1]) // 2, dtype=torch.long))  # noqa: E731
    fit(model, choice_loss, batches, lr=s["lr"], seed=seed, num_threads=torch.get_num_threads(), desc="fine-tuning")
    return pair_accuracy(model, test_batch)


def run_arm(gpt: GPT, tokenizer, num_labelled: int, seed: int, arm: str, test_batch) -> float:
    """Test accuracy of one arm (``"from scratch"``, ``"fine-tuned pretrained"`` or ``"k blocks
    transferred"``) fine-tuned on the draw of ``num_labelled`` pairs with ``seed``."""
    check_type(gpt, "gpt", GPT)
    transferred = {f"{k} blocks transferred": k for k in range(gpt.config.num_layers)}
    if arm not in (*CURVE_ARMS, *transferred):
        raise ValueError(f"arm must be one of {(*CURVE_ARMS, *transferred)}, got {arm!r}")
    set_seed(seed, num_threads=torch.get_num_threads())
    if arm == "from scratch":
        model = GPT(gpt.config)
    else:
        model = transfer_layers(gpt, transferred.get(arm, gpt.config.num_layers))
    return fine_tune(model, tokenizer, labelled_pairs(num_labelled, seed), seed, test_batch)


def run_draws(gpt: GPT, tokenizer, processes: int | None = None) -> list[dict]:
    """Every run of :data:`SETTINGS` side by side: both :data:`CURVE_ARMS` at every label count and
    the transferred blocks at ``transfer_labels``, each seed; ``[{"arm", "labels", "seed", "accuracy"}]``."""
    s = SETTINGS
    test_batch = encode_pairs(tokenizer, held_out_pairs(s["test_pairs"]))
    jobs = [(n, seed, arm) for n in s["label_counts"] for seed in s["seeds"] for arm in CURVE_ARMS]
    jobs += [(s["transfer_labels"], seed, f"{k} blocks transferred")
             for k in s["transfer_blocks"] for seed in s["seeds"]]
    accuracies = parallel_map(lambda job: run_arm(gpt, tokenizer, *job, test_batch), jobs, processes=processes,
                              desc="label draws")
    return [{"arm": arm, "labels": n, "seed": seed, "accuracy": round(accuracy, 4)}
            for (n, seed, arm), accuracy in zip(jobs, accuracies)]


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs of :func:`run_draws`, after checking the file's settings and SHA-256."""
    return load_record(path, SETTINGS)["runs"]


def accuracies(runs: list[dict], arm: str, num_labelled: int) -> list[float]:
    """The accuracies of ``arm`` with ``num_labelled`` labelled pairs in ``runs``, in the order of the seeds."""
    found = sorted((r["seed"], r["accuracy"]) for r in runs if r["arm"] == arm and r["labels"] == num_labelled)
    if not found:
        raise ValueError(f"no run of arm {arm!r} with {num_labelled} labelled pairs")
    return [accuracy for _seed, accuracy in found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.word_order", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    gpt, tokenizer = load_pretrained("gpt")
    runs = run_draws(gpt, tokenizer)
    save_record(args.out, "python -m lmcourse.word_order", SETTINGS, runs)
    for arm in sorted({r["arm"] for r in runs}):
        for n in sorted({r["labels"] for r in runs if r["arm"] == arm}):
            print(f"{arm:24s} {n:3d} pairs: {accuracies(runs, arm, n)}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
