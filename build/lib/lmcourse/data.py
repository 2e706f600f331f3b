"""Corpora that ship offline, the course's toy corpora, and batching of token streams.

The news corpus is the Lee background corpus (300 Australian news articles, about 60k words) that
ships inside the ``gensim`` wheel; the benchmarks (WordSim-353, SimLex-999, the Google analogy set)
and the polarity sentences ship there too. Nothing here touches the network.
"""
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from lmcourse.validate import check_int, check_nonempty, check_type

SPLITS = ("train", "valid", "test")
#: articles of the news corpus per split: a fixed, seeded shuffle of the 300 articles. The last
#: article of the shuffle belongs to no split (kept so that every chapter's numbers stay as printed).
NEWS_SPLIT_SIZES = {"train": 239, "valid": 30, "test": 30}


def gensim_data_path(name: str) -> Path:
    """Path of a file under ``gensim/test/test_data`` (without importing gensim's models)."""
    check_type(name, "name", str)
    spec = resources.files("gensim") / "test" / "test_data" / name
    path = Path(str(spec))
    if not path.exists():
        raise FileNotFoundError(f"{name} is not in gensim's test data ({path.parent})")
    return path


def _read_lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # the polarity sentences are Windows-1252
        text = raw.decode("cp1252")
    return [line.strip() for line in text.splitlines() if line.strip()]


def news_documents(split: str = "train") -> list[str]:
    """Articles of the news corpus for ``split`` in {'train', 'valid', 'test', 'all'}.

    The split is fixed: a shuffle of the 300 articles with seed 0, then 239 / 30 / 30 ('all' has 300).
    """
    docs = _read_lines(gensim_data_path("lee_background.cor"))
    if split == "all":
        return docs
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS + ('all',)}, got {split!r}")
    order = np.random.default_rng(0).permutation(len(docs))
    start = 0
    for name in SPLITS:
        stop = start + NEWS_SPLIT_SIZES[name]
        if name == split:
            return [docs[i] for i in sorted(order[start:stop])]
        start = stop
    raise AssertionError("unreachable")


def polarity_sentences() -> list[tuple[str, int]]:
    """The 200 labelled movie-review sentences: ``(text, label)`` with 1 = positive, 0 = negative."""
    out = []
    for line in _read_lines(gensim_data_path("pang_lee_polarity.cor")):
        label, text = line.split(" ", 1)
        out.append((text, {"__label__pos": 1, "__label__neg": 0}[label]))
    return out


def _similarity_pairs(name: str) -> list[tuple[str, str, float]]:
    pairs = []
    for line in _read_lines(gensim_data_path(name)):
        if line.startswith("#"):
            continue
        w1, w2, score = line.split("\t")[:3]
        pairs.append((w1.lower(), w2.lower(), float(score)))
    return pairs


def wordsim353() -> list[tuple[str, str, float]]:
    """WordSim-353 (Finkelstein et al. 2002): ``(word1, word2, human score 0-10)``, lowercased."""
    return _similarity_pairs("wordsim353.tsv")


def simlex999() -> list[tuple[str, str, float]]:
    """SimLex-999 (Hill et al. 2015): ``(word1, word2, human similarity 0-10)``, lowercased."""
    return _similarity_pairs("simlex999.txt")


def analogy_questions() -> list[tuple[str, str, str, str, str]]:
    """The Google analogy set (Mikolov et al. 2013): ``(section, a, b, c, d)`` meaning a:b :: c:d."""
    out, section = [], None
    for line in _read_lines(gensim_data_path("questions-words.txt")):
        if line.startswith(":"):
            section = line[1:].strip()
            continue
        a, b, c, d = line.lower().split()
        out.append((section, a, b, c, d))
    return out


def toy_corpus(name: str) -> list[str]:
    """A small corpus written for the course (``lmcourse/corpora/<name>.txt``), one text per line."""
    check_type(name, "name", str)
    available = toy_corpus_names()
    if name not in available:
        raise ValueError(f"name must be one of {available}, got {name!r}")
    text = (resources.files("lmcourse") / "corpora" / f"{name}.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def toy_corpus_names() -> list[str]:
    """Names accepted by :func:`toy_corpus`."""
    folder = resources.files("lmcourse") / "corpora"
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def lm_batches(ids, batch_size: int, seq_len: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Cut one token stream into contiguous language-model batches.

    The stream is trimmed to a multiple of ``batch_size`` and laid out as ``batch_size`` parallel
    rows; each batch is ``(x, y)`` of shape (batch_size, <= seq_len) with ``y`` = ``x`` shifted one
    step left, so row ``b`` of consecutive batches continues the same text (as truncated BPTT needs).
    """
    ids = torch.as_tensor(ids, dtype=torch.long)
    if ids.dim() != 1:
        raise ValueError(f"ids must be one-dimensional, got shape {tuple(ids.shape)}")
    check_int(batch_size, "batch_size", minimum=1)
    check_int(seq_len, "seq_len", minimum=1)
    per_row = len(ids) // batch_size
    if per_row < 2:
        raise ValueError(f"ids has {len(ids)} tokens, too few for batch_size={batch_size}")
    rows = ids[: per_row * batch_size].view(batch_size, per_row)  # (B, N)
    batches = []
    for i in range(0, per_row - 1, seq_len):
        length = min(seq_len, per_row - 1 - i)
        batches.append((rows[:, i:i + length], rows[:, i + 1:i + 1 + length]))
    return batches


def random_windows(ids, batch_size: int, seq_len: int, generator: torch.Generator | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch of random windows from a token stream: ``(x, y)``, each (batch_size, seq_len)."""
    ids = torch.as_tensor(ids, dtype=torch.long)
    check_int(batch_size, "batch_size", minimum=1)
    check_int(seq_len, "seq_len", minimum=1)
    if ids.dim() != 1 or len(ids) <= seq_len:
        raise ValueError(f"ids must be a 1-D stream longer than seq_len={seq_len}, got shape {tuple(ids.shape)}")
    starts = torch.randint(len(ids) - seq_len, (batch_size,), generator=generator)
    offsets = torch.arange(seq_len)
    x = ids[starts[:, None] + offsets]       # (B, T)
    y = ids[starts[:, None] + offsets + 1]   # (B, T)
    return x, y


def train_test_split(items: list, test_fraction: float, seed: int = 0) -> tuple[list, list]:
    """Shuffle ``items`` with ``seed`` and split off ``test_fraction`` of them (at least one each)."""
    check_nonempty(items, "items")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if len(items) < 2:
        raise ValueError("items must hold at least 2 elements to split")
    order = np.random.default_rng(seed).permutation(len(items))
    n_test = min(max(1, round(len(items) * test_fraction)), len(items) - 1)
    return [items[i] for i in order[n_test:]], [items[i] for i in order[:n_test]]
