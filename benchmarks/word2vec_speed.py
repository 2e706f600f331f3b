"""word2vec: the course's skip-gram with negative sampling vs gensim's Word2Vec (C code).

Both train on the same tokens of the news corpus with chapter 3's settings (50 dimensions, window
5, 5 negatives, subsampling 1e-3, words seen at least 3 times, 30 epochs); gensim on 2 worker
threads, the course on one (``train_word2vec`` seeds and pins one thread: its small tensor
operations run slower on two, 8.0 s against 5.1 s for 10 epochs on the 2-core AMD machine). Each
side builds its vocabulary and trains five times (seeds 0 to 4), interleaved; the figure is the
ratio of the best words/s, and the check compares the mean WordSim-353 Spearman correlation of the
five runs (one seed alone moves gensim's by about 0.05 on a corpus this small).
"""
import time

import numpy as np
from gensim.models import Word2Vec as GensimWord2Vec

from benchmarks.common import THREADS, Result, check, main, versions
from lmcourse.data import news_documents, wordsim353
from lmcourse.ngram import tokenized_sentences
from lmcourse.similarity import WordVectors, evaluate_similarity
from lmcourse.word2vec import encode_corpus, train_word2vec

SETTINGS = dict(dim=50, window=5, negative=5, sample=1e-3)
MIN_COUNT = 3


def run(smoke: bool) -> Result:
    sentences = tokenized_sentences(news_documents("all"))
    if smoke:
        sentences = sentences[:300]
    epochs, seeds = (1, [0]) if smoke else (30, [0, 1, 2, 3, 4])
    vocab, ids = encode_corpus(sentences, min_count=MIN_COUNT)
    words = sum(map(len, ids)) * epochs      # in-vocabulary words read, the same count for both

    def ours(seed):   # the vocabulary is built inside the timing, as gensim's constructor does
        vocab, ids = encode_corpus(sentences, min_count=MIN_COUNT)
        model, _ = train_word2vec(ids, len(vocab), sg=True, epochs=epochs, batch_size=4096, seed=seed,
                                  **SETTINGS)
        return WordVectors(model.vectors, vocab.itos)

    def gensim(seed):
        model = GensimWord2Vec(sentences, vector_size=SETTINGS["dim"], window=SETTINGS["window"],
                               negative=SETTINGS["negative"], sample=SETTINGS["sample"], min_count=MIN_COUNT,
                               sg=1, epochs=epochs, workers=THREADS, seed=seed)
        return WordVectors(model.wv.vectors, model.wv.index_to_key)

    pairs = wordsim353()
    best = {"lmcourse": float("inf"), "gensim": float("inf")}
    rho = {"lmcourse": [], "gensim": []}
    for seed in seeds:
        for name, train in (("lmcourse", ours), ("gensim", gensim)):
            start = time.perf_counter()
            vectors = train(seed)
            best[name] = min(best[name], time.perf_counter() - start)
            rho[name].append(evaluate_similarity(vectors, pairs).spearman)
    mean_rho = {k: float(np.mean(v)) for k, v in rho.items()}
    gap = abs(mean_rho["lmcourse"] - mean_rho["gensim"])
    return Result(
        name="word2vec", figure=best["gensim"] / best["lmcourse"], target=1.0,
        unit="x gensim's words/s", smoke=smoke,
        details={"corpus": f"{len(sentences)} sentences, {sum(map(len, ids)):,} in-vocabulary words, "
                           f"vocabulary {len(vocab):,}, {epochs} epochs, seeds {seeds}",
                 "words/s": {k: round(words / v) for k, v in best.items()},
                 "best seconds": {k: round(v, 3) for k, v in best.items()},
                 "WordSim-353 Spearman per seed": {k: [round(r, 3) for r in v] for k, v in rho.items()},
                 "WordSim-353 Spearman mean": {k: round(v, 3) for k, v in mean_rho.items()},
                 "versions": versions("gensim", "torch")},
        checks={} if smoke else {"WordSim-353 gap": check(gap, 0.05, at_most=True)})


if __name__ == "__main__":
    main(run)
