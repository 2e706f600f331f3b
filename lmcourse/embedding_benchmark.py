"""Chapter 3's benchmark as one function: every static-embedding method, several seeds, three tests.

Each method (the course's skip-gram and CBOW, gensim's with the same settings, GloVe, PPMI + SVD and
random vectors) is trained on the same sentences with each seed and scored by Spearman's rho on
WordSim-353 and SimLex-999 and by accuracy on the Google analogies (3CosAdd and 3CosMul). The
chapter runs it live on the news corpus; the Wikipedia corpus is six times larger and takes minutes,
so its scores are computed once by::

    python -m lmcourse.embedding_benchmark      # writes lmcourse/checkpoints/word_vectors_wiki.json

and the chapter reads them from that file, which records the settings it was made with.
"""
import argparse
import json
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from gensim.models import Word2Vec as GensimWord2Vec

from lmcourse.cli import output_file, positive_int
from lmcourse.cooccurrence import cooccurrence_matrix, ppmi, svd_embeddings
from lmcourse.data import analogy_questions, simlex999, wiki_articles, wordsim353
from lmcourse.glove import train_glove
from lmcourse.ngram import tokenized_sentences
from lmcourse.similarity import WordVectors, evaluate_analogies, evaluate_similarity
from lmcourse.train import write_atomically
from lmcourse.validate import check_int, check_nonempty
from lmcourse.word2vec import encode_corpus, train_word2vec

MIN_COUNT = 3
#: settings every word2vec model shares, and each model's budget (chapter 3 explains the choice)
WORD2VEC_COMMON = dict(dim=50, negative=5, sample=1e-3)
WORD2VEC_BUDGETS = {"skip-gram": dict(sg=True, window=2, epochs=10, lr=0.1, batch_size=2048),
                    "CBOW": dict(sg=False, window=5, epochs=15, lr=0.1, batch_size=1024)}
GLOVE = dict(dim=50, epochs=100, lr=0.05, x_max=10.0)      # glove.c's per-cell AdaGrad (chapter 3)
COOCCURRENCE_WINDOW = 5
PPMI_DIM = 50
METHODS = ("skip-gram", "gensim skip-gram", "CBOW", "gensim CBOW", "GloVe", "PPMI+SVD", "random vectors")
MEASURES = ("WordSim-353", "SimLex-999", "3CosAdd", "3CosMul", "median rank")
RESULTS = Path(__file__).parent / "checkpoints" / "word_vectors_wiki.json"


def settings() -> dict:
    """Every setting the scores depend on (recorded beside them)."""
    return {"min_count": MIN_COUNT, "word2vec": WORD2VEC_COMMON, "budgets": WORD2VEC_BUDGETS, "glove": GLOVE,
            "cooccurrence_window": COOCCURRENCE_WINDOW, "ppmi_dim": PPMI_DIM}


def gensim_word2vec(sentences: list[list[str]], name: str, seed: int, epochs: int | None = None) -> WordVectors:
    """gensim's skip-gram or CBOW (``name``) with the course's settings: one worker, seeded, deterministic
    (``epochs`` replaces the budget's number of epochs)."""
    b = dict(WORD2VEC_BUDGETS[name])
    if epochs is not None:
        check_int(epochs, "epochs", minimum=1)
        b["epochs"] = epochs
    model = GensimWord2Vec(sentences, vector_size=WORD2VEC_COMMON["dim"], window=b["window"],
                           negative=WORD2VEC_COMMON["negative"], sample=WORD2VEC_COMMON["sample"],
                           min_count=MIN_COUNT, sg=int(b["sg"]), cbow_mean=1, epochs=b["epochs"], alpha=b["lr"],
                           min_alpha=b["lr"] * 1e-4, workers=1, seed=seed)
    return WordVectors(model.wv.vectors, model.wv.index_to_key)


def train_all(sentences: list[list[str]], seeds) -> tuple[dict, dict, list[str]]:
    """({(method, seed): WordVectors}, {method: seconds over all seeds}, vocabulary) for every method."""
    check_nonempty(sentences, "sentences")
    seeds = list(seeds)
    vocab, ids = encode_corpus(sentences, min_count=MIN_COUNT)
    X = cooccurrence_matrix(ids, len(vocab), window=COOCCURRENCE_WINDOW)
    vectors, seconds = {}, dict.fromkeys(METHODS, 0.0)

    @contextmanager
    def timed(method):
        start = time.perf_counter()
        yield
        seconds[method] += time.perf_counter() - start

    for seed in seeds:
        for name in WORD2VEC_BUDGETS:
            with timed(name):
                vectors[name, seed] = WordVectors(train_word2vec(ids, len(vocab), seed=seed, **WORD2VEC_COMMON,
                                                                 **WORD2VEC_BUDGETS[name])[0].vectors, vocab.itos)
            with timed("gensim " + name):
                vectors["gensim " + name, seed] = gensim_word2vec(sentences, name, seed)
        with timed("GloVe"):
            vectors["GloVe", seed] = WordVectors(train_glove(X, seed=seed, **GLOVE)[0].vectors, vocab.itos)
        rng = np.random.default_rng(seed)
        with timed("random vectors"):
            vectors["random vectors", seed] = WordVectors(rng.normal(size=(len(vocab), PPMI_DIM)), vocab.itos)
    start = time.perf_counter()
    counted = WordVectors(svd_embeddings(ppmi(X), dim=PPMI_DIM), vocab.itos)   # no randomness: one for all seeds
    seconds["PPMI+SVD"] = time.perf_counter() - start
    for seed in seeds:
        vectors["PPMI+SVD", seed] = counted
    return vectors, seconds, list(vocab.itos)


def score_all(vectors: dict, vocabulary: list[str], seeds) -> tuple[dict, dict]:
    """({method: {measure: [one value per seed]}}, coverage) for vectors from :func:`train_all`.

    Analogy questions count only if all four words are in ``vocabulary`` (shared by every method).
    """
    known = set(vocabulary)
    ws, sl, questions = wordsim353(), simlex999(), analogy_questions()
    asked = [q for q in questions if all(w in known for w in q[1:])]
    scores = {m: {k: [] for k in MEASURES} for m in METHODS}
    for method in METHODS:
        for seed in seeds:
            wv = vectors[method, seed]
            a, b = evaluate_similarity(wv, ws), evaluate_similarity(wv, sl)
            add, mul = evaluate_analogies(wv, asked, "add"), evaluate_analogies(wv, asked, "mul")
            for measure, value in zip(MEASURES, (a.spearman, b.spearman, add.accuracy, mul.accuracy,
                                                 float(np.median(add.ranks)))):
                scores[method][measure].append(float(value))
    coverage = {"WordSim-353": [a.covered, a.total], "SimLex-999": [b.covered, b.total],
                "analogies": [len(asked), len(questions)]}
    return scores, coverage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.embedding_benchmark",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=positive_int, default=5, help="train every method with seeds 0..N-1")
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    sentences = tokenized_sentences(wiki_articles("train"))
    seeds = range(args.seeds)
    vectors, seconds, vocabulary = train_all(sentences, seeds)
    scores, coverage = score_all(vectors, vocabulary, seeds)
    known = set(vocabulary)
    record = {"command": "python -m lmcourse.embedding_benchmark", "corpus": "wiki_articles('train')",
              "sentences": len(sentences), "words": len(vocabulary),
              "tokens": sum(w in known for s in sentences for w in s),     # of words in the vocabulary
              "seeds": list(seeds), "settings": settings(), "coverage": coverage, "scores": scores,
              "seconds": {m: round(s, 1) for m, s in seconds.items()}}
    write_atomically(args.out, (json.dumps(record, indent=1) + "\n").encode("utf-8"))
    for method in METHODS:
        print(f"{method:17s}", "  ".join(f"{k} {np.mean(v):.3f}" for k, v in scores[method].items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
