"""Does pretraining pay with few labels? Fine-tune the course's tiny BERT and the same architecture
from scratch on an in-domain task, for several numbers of labels and several label draws.

The task: is a sentence from the news corpus (label 0) or from Wikipedia (label 1)? Training labels
come from the held-out *validation* articles and the test sentences from the *test* articles, so
the pretrained checkpoint has seen neither. Baselines: the majority class, a bag-of-words logistic
regression and a logistic regression on the frozen encoder's mean-pooled vectors.
"""
import copy
import random

import numpy as np
import torch
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from lmcourse.bert import BertModel, split_sentences
from lmcourse.data import news_documents, wiki_articles
from lmcourse.finetune import BertForTask, task_accuracy, task_batches, task_loss
from lmcourse.seed import set_seed
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import fit
from lmcourse.validate import check_int, check_nonempty, check_type

SOURCES = ("news", "wikipedia")


def corpus_sentences(split: str, min_words: int = 8, max_words: int = 40) -> list[tuple[str, int]]:
    """``(sentence, label)`` for every sentence of ``split``'s articles with ``min_words`` to
    ``max_words`` words: label 0 for the news corpus, 1 for Wikipedia."""
    check_int(min_words, "min_words", minimum=1)
    check_int(max_words, "max_words", minimum=min_words)
    keep = lambda docs: [s for d in docs for s in split_sentences(d)            # noqa: E731
                         if min_words <= len(s.split()) <= max_words]
    return [(s, 0) for s in keep(news_documents(split))] + [(s, 1) for s in keep(wiki_articles(split))]


def draw_labels(items: list[tuple[str, int]], per_class: int, seed: int) -> list[tuple[str, int]]:
    """``per_class`` examples of each label drawn from ``items`` without replacement (seeded)."""
    check_nonempty(items, "items")
    check_int(per_class, "per_class", minimum=1)
    rng = random.Random(seed)
    out = []
    for label in sorted({y for _, y in items}):
        pool = [x for x in items if x[1] == label]
        if len(pool) < per_class:
            raise ValueError(f"per_class={per_class} exceeds the {len(pool)} examples of label {label}")
        out += rng.sample(pool, per_class)
    return out


def finetune_accuracy(encoder: BertModel, tokenizer: WordPieceTokenizer, train: list[tuple[str, int]],
                      test_batches: list[dict], steps: int, lr: float, seed: int,
                      max_length: int = 32) -> float:
    """Test accuracy after fine-tuning a copy of ``encoder`` with a mean-pooling head for ``steps``
    batches of 16 of ``train``; ``encoder`` itself is left untouched."""
    check_type(encoder, "encoder", BertModel)
    check_int(steps, "steps", minimum=1)
    set_seed(seed, num_threads=torch.get_num_threads())
    model = BertForTask(copy.deepcopy(encoder), "single", num_labels=2, pooling="mean")
    epochs = task_batches(tokenizer, "single", train, batch_size=16, max_length=max_length)
    batches, epoch = [], 0
    while len(batches) < steps:
        batches += epochs(seed * 1000 + epoch)
        epoch += 1
    fit(model, task_loss, batches[:steps], lr=lr, seed=None, progress=False)
    return task_accuracy(model, test_batches)


@torch.no_grad()
def mean_vectors(encoder: BertModel, tokenizer: WordPieceTokenizer, texts: list[str],
                 max_length: int = 32, text_pairs: list[str] | None = None) -> np.ndarray:
    """The mean of the last hidden states over the real pieces of each text (with ``text_pairs``, of
    each ``[CLS] text [SEP] pair [SEP]``): (len(texts), d_model)."""
    check_type(encoder, "encoder", BertModel)
    check_nonempty(texts, "texts")
    was_training = encoder.training
    encoder.eval()
    b = tokenizer.batch_encode(texts, text_pairs, max_length=max_length)
    h = encoder(**b).last_hidden_state                                   # (B, T, C)
    m = b["attention_mask"][..., None].float()                           # (B, T, 1)
    encoder.train(was_training)
    return ((h * m).sum(1) / m.sum(1)).numpy()                           # (B, C)


def probe_accuracy(train_x: np.ndarray, train_y, test_x: np.ndarray, test_y) -> float:
    """Accuracy of a logistic regression (L2, C=1) fitted on ``train_x`` and scored on ``test_x``."""
    clf = LogisticRegression(max_iter=2000).fit(train_x, train_y)
    return float((clf.predict(test_x) == np.asarray(test_y)).mean())


def bag_of_words_accuracy(train: list[tuple[str, int]], test: list[tuple[str, int]]) -> float:
    """The bag-of-words baseline: a logistic regression on lowercased word counts."""
    check_nonempty(train, "train")
    check_nonempty(test, "test")
    vec = CountVectorizer(lowercase=True)
    x = vec.fit_transform([s for s, _ in train])
    return probe_accuracy(x, [y for _, y in train], vec.transform([s for s, _ in test]), [y for _, y in test])
