"""Word vectors as a pretrained first layer (chapter 3): a sentence classifier that averages the
vectors of its words and applies one linear layer, its embedding table random or copied from
pretrained word vectors, then frozen or fine-tuned with the task.

Every table is given the same scale (rows of length 1), and words a pretrained table lacks get the
random table's rows, so that two first layers differ only where pretraining supplied a vector.
"""
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.seed import set_seed
from lmcourse.similarity import WordVectors
from lmcourse.validate import check_float, check_int, check_nonempty, check_type

STRATEGIES = ("frozen", "fine-tuned")


def random_table(vocab_size: int, dim: int, seed: int) -> torch.Tensor:
    """(vocab_size, dim) rows drawn from a normal distribution and scaled to length 1."""
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(dim, "dim", minimum=1)
    check_int(seed, "seed", minimum=0)
    rows = torch.randn(vocab_size, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (rows / rows.norm(dim=1, keepdim=True)).float()


def pretrained_table(words: Sequence[str], vectors: WordVectors, fallback: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The first layer for ``words`` (V,): row i is the unit vector of words[i] in ``vectors`` where it
    has one, else ``fallback[i]`` (V, d). Returns ((V, d) table, share of the words covered)."""
    check_nonempty(words, "words")
    check_type(vectors, "vectors", WordVectors)
    if fallback.shape != (len(words), vectors.vectors.shape[1]):
        raise ValueError(f"fallback must be (len(words), d) = ({len(words)}, {vectors.vectors.shape[1]}), "
                         f"got {tuple(fallback.shape)}")
    table = fallback.clone()
    known = [i for i, w in enumerate(words) if w in vectors]
    if known:
        table[known] = torch.tensor(vectors.unit[[vectors.index[words[i]] for i in known]], dtype=table.dtype)
    return table, len(known) / len(words)


def encode(sentences: Sequence[Sequence[str]], words: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Sentences of words -> (ids (N, L) padded with 0, mask (N, L) bool); every word must be in ``words``."""
    check_nonempty(sentences, "sentences")
    index = {w: i for i, w in enumerate(words)}
    missing = sorted({w for s in sentences for w in s if w not in index})
    if missing:
        raise ValueError(f"sentences use words missing from words: {missing[:5]}")
    if any(len(s) == 0 for s in sentences):
        raise ValueError("sentences must not be empty")
    length = max(len(s) for s in sentences)
    ids = torch.zeros(len(sentences), length, dtype=torch.long)
    mask = torch.zeros(len(sentences), length, dtype=torch.bool)
    for n, s in enumerate(sentences):
        ids[n, :len(s)] = torch.tensor([index[w] for w in s])
        mask[n, :len(s)] = True
    return ids, mask


class MeanEmbeddingClassifier(nn.Module):
    """forward(ids (B, L), mask (B, L) bool) -> logits (B, classes): the mean of the masked words'
    rows of ``table`` (V, d), then a linear layer. ``freeze`` keeps the table fixed."""

    def __init__(self, table: torch.Tensor, classes: int = 2, freeze: bool = False):
        super().__init__()
        if table.dim() != 2:
            raise ValueError(f"table must be (V, d), got shape {tuple(table.shape)}")
        check_int(classes, "classes", minimum=2)
        check_type(freeze, "freeze", bool)
        self.embed = nn.Embedding.from_pretrained(table.clone(), freeze=freeze)
        self.linear = nn.Linear(table.shape[1], classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1).float()                                      # (B, L, 1)
        mean = (self.embed(ids) * m).sum(1) / m.sum(1).clamp(min=1)         # (B, L, d) -> (B, d)
        return self.linear(mean)                                            # (B, classes)


def train_and_score(table: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor,
                    train: torch.Tensor, test: torch.Tensor, *, strategy: str, epochs: int = 300,
                    lr: float = 0.05, weight_decay: float = 1e-3, seed: int = 0) -> tuple[float, list[float]]:
    """Train a :class:`MeanEmbeddingClassifier` on the rows ``train`` (full batch, Adam, ``epochs``
    steps) and return (accuracy on the rows ``test``, training loss of every step)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    check_int(epochs, "epochs", minimum=1)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    check_float(weight_decay, "weight_decay", minimum=0.0)
    check_int(seed, "seed", minimum=0)
    if not (ids.shape == mask.shape and ids.shape[0] == labels.shape[0]):
        raise ValueError(f"ids, mask and labels must agree: {tuple(ids.shape)}, {tuple(mask.shape)}, "
                         f"{tuple(labels.shape)}")
    set_seed(seed)
    model = MeanEmbeddingClassifier(table, int(labels.max()) + 1, freeze=strategy == "frozen")
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr,
                                 weight_decay=weight_decay)
    losses = []
    for _ in range(epochs):
        loss = F.cross_entropy(model(ids[train], mask[train]), labels[train])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        predicted = model(ids[test], mask[test]).argmax(-1)
    return float((predicted == labels[test]).float().mean()), losses


def stratified_split(labels: torch.Tensor, test_share: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(train indices, test indices): ``test_share`` of every class to the test side, drawn by ``seed``."""
    check_float(test_share, "test_share", minimum=0.0, maximum=1.0, strict_minimum=True)
    check_int(seed, "seed", minimum=0)
    generator = torch.Generator().manual_seed(seed)
    train, test = [], []
    for c in labels.unique().tolist():
        rows = torch.nonzero(labels == c).flatten()
        rows = rows[torch.randperm(len(rows), generator=generator)]
        k = max(1, round(test_share * len(rows)))
        test.append(rows[:k])
        train.append(rows[k:])
    return torch.cat(train).sort().values, torch.cat(test).sort().values


def bag_of_words_accuracy(sentences: Sequence[Sequence[str]], labels: Sequence[int], train, test) -> float:
    """The baseline: logistic regression on word counts (scikit-learn, default regularisation)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    texts = [" ".join(s) for s in sentences]
    vectorizer = CountVectorizer(token_pattern=r"\S+", lowercase=False)
    x = vectorizer.fit_transform([texts[i] for i in train])
    y = np.asarray(labels)
    model = LogisticRegression(max_iter=1000).fit(x, y[np.asarray(train)])
    return float((model.predict(vectorizer.transform([texts[i] for i in test])) == y[np.asarray(test)]).mean())
