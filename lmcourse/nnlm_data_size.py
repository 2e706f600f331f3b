"""Kneser-Ney against the NNLM as the training text grows: chapter 2's data-size experiment.

Each run fits a unigram baseline, a Kneser-Ney trigram (its discount estimated from the run's own
trigram counts by Ney et al.'s formula) and an NNLM (three words of context, trained until its
validation loss stops falling) to a share of one corpus's training articles, drawn with the run's
seed, and measures all three on that corpus's test articles, with one vocabulary per run for all
three models. The runs take several minutes on one core, so they are computed once by::

    python -m lmcourse.nnlm_data_size      # writes lmcourse/checkpoints/nnlm_data_size.json

under the reference settings (numerics.env); the file records the settings and a SHA-256 of the
results, and :func:`recorded_runs` checks it. The chapter reruns one run live and compares it with
the record, and a test reruns another.
"""
import argparse
from pathlib import Path

import numpy as np

from lmcourse.cli import output_file
from lmcourse.data import news_documents, wiki_articles
from lmcourse.ngram import NGramLM, lm_vocab, tokenized_sentences
from lmcourse.nnlm import NNLM, context_windows, fit_until_valid_rises, nnlm_perplexity
from lmcourse.parallel import parallel_map
from lmcourse.seed import set_seed
from lmcourse.train import save_record
from lmcourse.validate import check_float, check_int, check_nonempty, load_record

CORPORA = {"news": news_documents, "wikipedia": wiki_articles}
FRACTIONS = (0.25, 0.5, 1.0)
SEEDS = (0, 1, 2)
#: the vocabulary rule (words seen at least MIN_COUNT times, at most MAX_VOCAB of them) and the network
SETTINGS = {"min_count": 2, "max_vocab": 2000, "context_size": 3, "embed_dim": 30, "hidden_dim": 60,
            "dropout": 0.2, "lr": 1e-2, "batch_size": 512, "kneser_ney_order": 3,
            "kneser_ney_discount": "n1 / (n1 + 2 n2) of the run's trigram counts", "unigram_k": 0.01}
RESULTS = Path(__file__).parent / "checkpoints" / "nnlm_data_size.json"


def kneser_ney_vs_nnlm(train: list[list[str]], valid: list[list[str]], test: list[list[str]], *,
                       seed: int = 0) -> dict[str, float]:
    """Test perplexity of the unigram (add-k), the Kneser-Ney trigram and the NNLM fitted to the
    tokenized sentences ``train`` (the NNLM stopped early on ``valid``), all on one vocabulary:
    words seen at least ``SETTINGS["min_count"]`` times in ``train``, at most the ``max_vocab`` most
    frequent, the rest ``<unk>``. The Kneser-Ney discount is ``NGramLM.estimated_discount`` of the
    top order, from the counts of ``train``.

    Returns {"train tokens", "vocab", "test unk", "discount", "epochs", "unigram", "kneser-ney",
    "nnlm"}; ``test unk`` is the share of the predicted test tokens (words and sentence ends) that
    are ``<unk>``; ``epochs`` counts the NNLM's epochs including the last, which did not improve.
    """
    for name, sentences in (("train", train), ("valid", valid), ("test", test)):
        check_nonempty(sentences, name)
    check_int(seed, "seed", minimum=0)
    s = SETTINGS
    vocab = lm_vocab(train, min_freq=s["min_count"], max_size=s["max_vocab"])
    test_ids = [i for x in test for i in vocab.encode(list(x) + ["</s>"])]
    result = {"train tokens": sum(len(x) + 1 for x in train), "vocab": len(vocab),
              "test unk": test_ids.count(vocab.unk_id) / len(test_ids)}
    result["unigram"] = NGramLM(1, k=s["unigram_k"]).fit(train, vocab=vocab).perplexity(test)
    order = s["kneser_ney_order"]
    result["discount"] = NGramLM(order, "kneser-ney").fit(train, vocab=vocab).estimated_discount(order)
    kneser_ney = NGramLM(order, "kneser-ney", discount=result["discount"]).fit(train, vocab=vocab)
    result["kneser-ney"] = kneser_ney.perplexity(test)
    set_seed(seed)
    nnlm = NNLM(len(vocab), s["context_size"], embed_dim=s["embed_dim"], hidden_dim=s["hidden_dim"],
                direct=False, dropout=s["dropout"])
    history = fit_until_valid_rises(nnlm, context_windows(train, vocab, s["context_size"]),
                                    context_windows(valid, vocab, s["context_size"]),
                                    lr=s["lr"], batch_size=s["batch_size"], seed=seed)
    result["epochs"] = len(history.evals["valid loss"])
    result["nnlm"] = nnlm_perplexity(nnlm, *context_windows(test, vocab, s["context_size"]))
    return result


def run(corpus: str, fraction: float, seed: int) -> dict:
    """One run: a ``fraction`` of ``corpus``'s training articles, drawn with ``seed`` (all of them
    when ``fraction`` is 1, where the seed changes only the NNLM's start and batches)."""
    if corpus not in CORPORA:
        raise ValueError(f"corpus must be one of {sorted(CORPORA)}, got {corpus!r}")
    check_float(fraction, "fraction", minimum=0.0, maximum=1.0, strict_minimum=True)
    check_int(seed, "seed", minimum=0)
    articles = CORPORA[corpus]("train")
    chosen = np.sort(np.random.default_rng(seed).permutation(len(articles))[:round(fraction * len(articles))])
    splits = {split: tokenized_sentences(CORPORA[corpus](split)) for split in ("valid", "test")}
    result = kneser_ney_vs_nnlm(tokenized_sentences([articles[i] for i in chosen]), splits["valid"],
                                splits["test"], seed=seed)
    return {"corpus": corpus, "fraction": fraction, "seed": seed, "articles": len(chosen), **result}


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.nnlm_data_size",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    jobs = [(c, f, s) for c in reversed(CORPORA) for f in reversed(FRACTIONS) for s in SEEDS]   # largest first
    runs = parallel_map(lambda job: run(*job), jobs, desc="runs")
    runs = [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in runs]
    save_record(args.out, "python -m lmcourse.nnlm_data_size", SETTINGS, runs)
    for r in runs:
        print(f"{r['corpus']:9s} {r['fraction']:4} seed {r['seed']}: {r['train tokens']:7,} tokens, "
              f"unigram {r['unigram']:6.1f}, Kneser-Ney {r['kneser-ney']:6.1f}, NNLM {r['nnlm']:6.1f} "
              f"({r['epochs']} epochs)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
