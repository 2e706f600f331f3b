"""A sense probe with context baselines (ELMo's Tables 5-6 in small): does a layer tell two senses
of one word apart better than its neighbouring words alone do?

Every occurrence of the word is one row. The occurrences are split into folds by *document*, so
that no article lends occurrences to both the training and the test side, and each fold is tested
once with a classifier trained on the other folds. The score is balanced accuracy (the mean of the
two classes' recalls), so a constant answer scores exactly 0.5 however unequal the classes are.

Two classifiers, each with no hyperparameters: nearest class mean for vectors (a layer, or the
mean static embedding of the context), and naive Bayes with add-one smoothing and equal priors for
discrete contexts (the previous word's identity, or the counts of the context words).
"""
from importlib import resources
from itertools import combinations_with_replacement

import torch

from lmcourse.validate import check_float, check_int, check_type


def group_folds(groups: torch.Tensor, labels: torch.Tensor, folds: int = 10, seed: int = 0) -> torch.Tensor:
    """Assign each item to one of ``folds`` folds, whole groups at a time: groups (N,) int (e.g. the
    document of each occurrence), labels (N,) in {0, 1}. Groups go, in a random order, to the fold
    holding the fewest of the rarer class so far (ties: the fewest items), so that every fold gets
    both classes. Returns fold indices (N,); raises ValueError if a fold would lack a class."""
    check_type(groups, "groups", torch.Tensor)
    check_type(labels, "labels", torch.Tensor)
    check_int(folds, "folds", minimum=2)
    if groups.dim() != 1 or labels.shape != groups.shape:
        raise ValueError(f"groups and labels must both be (N,), got {tuple(groups.shape)}, {tuple(labels.shape)}")
    labels = labels.long()
    rare = int(labels.sum() * 2 < len(labels))                   # the class with fewer items
    g = torch.Generator().manual_seed(seed)
    ids = groups.unique()
    ids = ids[torch.randperm(len(ids), generator=g)]
    counts = [[0, 0] for _ in range(folds)]                      # per fold: rarer-class items, all items
    out = torch.empty_like(groups)
    for gid in ids.tolist():
        members = groups == gid
        f = min(range(folds), key=lambda k: (counts[k][0], counts[k][1]))
        out[members] = f
        counts[f][0] += int((labels[members] == rare).sum())
        counts[f][1] += int(members.sum())
    for f in range(folds):
        if set(labels[out == f].unique().tolist()) != {0, 1}:
            raise ValueError(f"folds = {folds} is too many: fold {f} lacks a class (too few groups of the rarer class)")
    return out


def sense_labels(word: str) -> tuple[torch.Tensor, torch.Tensor, tuple[str, str]]:
    """Hand-labelled senses of ``word`` in the pretraining articles, from ``corpora/<word>_senses.txt``
    (one occurrence a line: article index in ``pretraining_text`` train, valid and test in that order,
    token index after ``word_tokenize(text, lowercase=False)``, sense). Returns (positions (N, 2) of
    (article, token), labels (N,) in {0, 1}, the two sense names, label 0 first)."""
    check_type(word, "word", str)
    path = resources.files("lmcourse") / "corpora" / f"{word}_senses.txt"
    if not path.is_file():
        raise ValueError(f"word = {word!r} has no labelled senses (no corpora/{word}_senses.txt)")
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    senses = tuple(sorted({sense for _, _, sense in rows}))
    if len(senses) != 2:
        raise ValueError(f"corpora/{word}_senses.txt must hold exactly two senses, got {senses}")
    positions = torch.tensor([[int(d), int(k)] for d, k, _ in rows])
    return positions, torch.tensor([senses.index(sense) for _, _, sense in rows]), senses


def balanced_accuracy(pred: torch.Tensor, labels: torch.Tensor) -> float:
    """Mean over the two classes of the share of that class predicted right: pred, labels (M,)."""
    labels = labels.long()
    return float(sum((pred[labels == c] == c).float().mean() for c in (0, 1)) / 2)


def nearest_mean_predict(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor) -> torch.Tensor:
    """Nearest class mean (Euclidean): train_x (N, D), train_y (N,) in {0, 1}, test_x (M, D) -> (M,)."""
    centroids = torch.stack([train_x[train_y == c].mean(0) for c in (0, 1)])      # (2, D)
    return torch.cdist(test_x, centroids).argmin(dim=1)                          # ties go to class 0


def naive_bayes_predict(train_t: torch.Tensor, train_y: torch.Tensor, test_t: torch.Tensor,
                        num_tokens: int) -> torch.Tensor:
    """Multinomial naive Bayes on token ids, add-one smoothing, equal class priors: train_t (N, K),
    test_t (M, K) ids in [0, num_tokens) (K = 1: one word's identity; K > 1: a bag of words) -> (M,)."""
    log_p = []
    for c in (0, 1):
        counts = torch.bincount(train_t[train_y == c].flatten(), minlength=num_tokens).double() + 1
        log_p.append((counts / counts.sum()).log())                             # (num_tokens,)
    scores = torch.stack([lp[test_t].sum(dim=1) for lp in log_p], dim=1)         # (M, 2)
    return scores.argmax(dim=1)                                                  # ties go to class 0


def probe_folds(features: dict, labels: torch.Tensor, fold: torch.Tensor, num_tokens: int | None = None
                ) -> dict[str, torch.Tensor]:
    """Balanced accuracy of every feature set on every fold: each fold is tested once by a classifier
    trained on the other folds. features: name -> float (N, D) (nearest class mean) or integer (N, K)
    token ids (naive Bayes over ``num_tokens`` ids); labels (N,) in {0, 1}; fold (N,) from
    :func:`group_folds`. Returns name -> accuracies (folds,), paired by fold across names."""
    check_type(features, "features", dict)
    labels = labels.long()
    if fold.shape != labels.shape:
        raise ValueError(f"fold and labels must both be (N,), got {tuple(fold.shape)}, {tuple(labels.shape)}")
    out = {}
    for name, x in features.items():
        if x.dim() != 2 or x.size(0) != len(labels):
            raise ValueError(f"features[{name!r}] must be (N, D) with N = {len(labels)}, got {tuple(x.shape)}")
        discrete = not torch.is_floating_point(x)
        if discrete and num_tokens is None:
            raise ValueError(f"features[{name!r}] holds token ids, so num_tokens must be given")
        accs = []
        for f in fold.unique().tolist():
            test = fold == f
            if discrete:
                pred = naive_bayes_predict(x[~test], labels[~test], x[test], num_tokens)
            else:
                pred = nearest_mean_predict(x[~test], labels[~test], x[test])
            accs.append(balanced_accuracy(pred, labels[test]))
        out[name] = torch.tensor(accs)
    return out


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error of the mean of values (n,): accuracies over folds or seeds, or paired differences."""
    t = torch.as_tensor(values, dtype=torch.float64)
    if t.dim() != 1 or len(t) < 2:
        raise ValueError(f"values must be one-dimensional with at least 2 entries, got shape {tuple(t.shape)}")
    return t.mean().item(), (t.std() / len(t) ** 0.5).item()


def paired_p_value(mean: float, se: float, n: int) -> float:
    """Two-sided p-value of a paired t-test on n folds or seeds whose differences have mean ``mean`` and
    standard error ``se`` (as `mean_se` gives them): the t statistic mean / se on n - 1 degrees of freedom."""
    from scipy.stats import t as student_t
    check_int(n, "n", minimum=2)
    check_float(float(se), "se", minimum=0.0, strict_minimum=True)
    return float(2 * student_t.sf(abs(mean / se), n - 1))


def fold_moves(labels: torch.Tensor, fold: torch.Tensor) -> torch.Tensor:
    """(F,) the most one occurrence changing sides can move each fold's balanced accuracy, for labels (N,)
    in {0, 1} and fold (N,) in [0, F): 1 / (2 n), n the fold's count of its rarer class."""
    folds = fold.unique()
    rarer = torch.tensor([min(int((labels[fold == f] == 1).sum()), int((labels[fold == f] != 1).sum())) for f in folds])
    if (rarer == 0).any():
        raise ValueError("labels must hold both classes in every fold")
    return 1 / (2 * rarer.double())


def robust_verdict(diffs: torch.Tensor, moves: torch.Tensor, flips: int = 2) -> tuple[str, float]:
    """The verdict on paired per-fold differences diffs (F,) that no `flips` occurrences changing sides can
    overturn, each moving one fold's difference by up to moves[f] (F,) either way.

    Every such change is tried, the mean and standard error recomputed: 'ahead' ('behind') if the mean stays
    above (below) zero by more than twice its standard error in all of them, 'within' if it stays inside twice
    its standard error in all, else 'unresolved'. Also returns the worst case: for a verdict, the smallest
    distance from twice the standard error over the changes (how far it still is from the line); for
    'unresolved', the unchanged |mean| - 2 SE."""
    d, moves = torch.as_tensor(diffs, dtype=torch.float64), torch.as_tensor(moves, dtype=torch.float64)
    if d.dim() != 1 or len(d) < 2 or moves.shape != d.shape:
        raise ValueError(f"diffs must be (F,) with F >= 2 and moves of the same shape, got {tuple(d.shape)} "
                         f"and {tuple(moves.shape)}")
    check_int(flips, "flips", minimum=0)
    steps = torch.cat([torch.diag(moves), -torch.diag(moves)])                   # (2F, F): one occurrence each
    changed = [d]
    for k in range(1, flips + 1):
        changed += [d + steps[list(c)].sum(0) for c in combinations_with_replacement(range(len(steps)), k)]
    x = torch.stack(changed)                                                      # (changes, F)
    mean, two_se = x.mean(1), 2 * x.std(1) / len(d) ** 0.5
    if (mean - two_se > 0).all():
        return "ahead", (mean - two_se).min().item()
    if (-mean - two_se > 0).all():
        return "behind", (-mean - two_se).min().item()
    if (two_se - mean.abs() > 0).all():
        return "within", (two_se - mean.abs()).min().item()
    return "unresolved", (d.mean().abs() - 2 * d.std() / len(d) ** 0.5).item()


@torch.no_grad()
def encoder_word_vectors(model, tokenizer, windows: list[list[str]], position: int,
                         batch_size: int = 64) -> torch.Tensor:
    """Every layer's vector of one word in each window, from a BERT-style encoder (e.g. MiniLM).

    model: a :class:`lmcourse.bert.BertModel`; tokenizer: its :class:`lmcourse.tokenize.WordPieceTokenizer`;
    windows: N lists of words, the word of interest at index ``position`` in each. Each window is read
    as [CLS] pieces [SEP] (an uncased tokenizer lowercases them); a word split into several pieces
    is represented by its first piece.
    Returns (num_layers + 1, N, d_model), the embedding layer first.
    """
    check_type(windows, "windows", list)
    if not windows or any(not 0 <= position < len(w) for w in windows):
        raise ValueError(f"windows must be non-empty and position = {position} inside every window")
    rows, where = [], []
    for words in windows:
        pieces = [tokenizer.tokenize(w) for w in words]                     # the tokenizer lowercases
        where.append(1 + sum(len(p) for p in pieces[:position]))           # after [CLS]
        rows.append([tokenizer.cls_id] + tokenizer.convert_tokens_to_ids([p for ps in pieces for p in ps])
                    + [tokenizer.sep_id])
    out = []
    for start in range(0, len(rows), batch_size):
        batch = rows[start:start + batch_size]
        T = max(len(r) for r in batch)
        ids = torch.tensor([r + [tokenizer.pad_id] * (T - len(r)) for r in batch])               # (B, T)
        mask = torch.tensor([[1] * len(r) + [0] * (T - len(r)) for r in batch])                  # (B, T)
        hidden = torch.stack(model(ids, attention_mask=mask, output_hidden_states=True).hidden_states)
        idx = torch.tensor(where[start:start + batch_size])
        out.append(hidden[:, torch.arange(len(batch)), idx])                                     # (L+1, B, d)
    return torch.cat(out, dim=1)
