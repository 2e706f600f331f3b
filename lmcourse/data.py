"""Corpora that ship offline, the course's toy corpora, and batching of token streams.

Two corpora of natural English ship inside the ``gensim`` wheel, and both are split by article
into train / valid / test after near-duplicate articles are removed (:func:`near_duplicates`):

- news: the Lee background corpus, 300 Australian Broadcasting Corporation articles (about 60k
  words); 11 of them repeat another one (7 byte for byte), leaving 289;
- wiki: a shortened dump of English Wikipedia (the kind of text BERT pretrained on), cleaned to
  article prose by :func:`wiki_text` (about 400k words in 96 articles).

The word-similarity benchmarks (WordSim-353, SimLex-999, the Google analogy set) and the polarity
sentences ship there too. Nothing here touches the network.
"""
import bz2
import functools
import re
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from lmcourse.validate import check_int, check_nonempty, check_type

SPLITS = ("train", "valid", "test")
HELD_OUT_FRACTION = 0.1  # of the articles in each of valid and test (rounded); the rest is train
WIKI_DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


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


def near_duplicates(texts: list[str], n: int = 5, threshold: float = 0.5) -> list[int]:
    """Indices of the texts that repeat an earlier text, exactly or nearly.

    Text ``j`` repeats text ``i < j`` when at least ``threshold`` of the word ``n``-grams of the
    shorter of the two (lowercased) also occur in the other: this catches copies, an article
    republished with a sentence added, and one that was appended to another.
    """
    check_nonempty(texts, "texts")
    check_int(n, "n", minimum=1)
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    shingles = []
    for text in texts:
        words = re.findall(r"\w+", text.lower())
        shingles.append({tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1))})
    repeats: list[int] = []
    kept: list[int] = []                   # an earlier repeat is represented by what it repeats
    for j, b in enumerate(shingles):
        if any(len(shingles[i] & b) >= threshold * min(len(shingles[i]), len(b)) for i in kept):
            repeats.append(j)
        else:
            kept.append(j)
    return repeats


def _distinct(articles: list[str]) -> tuple[str, ...]:
    repeats = set(near_duplicates(articles))
    return tuple(a for i, a in enumerate(articles) if i not in repeats)


def _split(unique: tuple[str, ...], split: str) -> list[str]:
    """``split`` of the distinct articles ``unique``: a shuffle with seed 0, then
    ``HELD_OUT_FRACTION`` of them each for test and valid, the rest for train ('all': every one)."""
    if split not in SPLITS + ("all",):
        raise ValueError(f"split must be one of {SPLITS + ('all',)}, got {split!r}")
    if split == "all":
        return list(unique)
    held_out = round(HELD_OUT_FRACTION * len(unique))
    order = np.random.default_rng(0).permutation(len(unique))
    chosen = {"test": order[:held_out], "valid": order[held_out:2 * held_out], "train": order[2 * held_out:]}
    return [unique[i] for i in sorted(chosen[split])]


@functools.cache
def _news_articles() -> tuple[str, ...]:
    return _distinct(_read_lines(gensim_data_path("lee_background.cor")))


def news_documents(split: str = "train") -> list[str]:
    """Articles of the news corpus for ``split`` in {'train', 'valid', 'test', 'all'}, one string each.

    The 289 distinct articles of the 300 (see :func:`near_duplicates`), split 231 / 29 / 29.
    """
    return _split(_news_articles(), split)


def wiki_text(wikitext: str) -> str:
    """The prose of one Wikipedia article's wikitext: paragraphs, one per line, case and punctuation
    kept; markup, templates, references, tables, lists, captions, headings and everything from the
    closing sections ("See also", "References", ...) on dropped."""
    from gensim.corpora.wikicorpus import filter_wiki  # gensim's markup filter (slow to import)
    check_type(wikitext, "wikitext", str)
    paragraphs = []
    for line in filter_wiki(_without_tables(wikitext)).splitlines():
        line = line.strip()
        if _CLOSING_SECTION.match(line):
            break
        if not line or line[0] in "=*#:;|!{}<[" or _MEDIA.match(line):  # headings, lists, tables
            continue
        line = line.replace("\xa0", " ").replace("'''", "").replace("''", "")    # bold, italics
        line = re.sub(r"\(\s*[,;:]?\s*\)", "", line)     # brackets emptied by a removed template
        line = re.sub(r"\s+([,.;:])", r"\1", line)
        line = re.sub(r"\s{2,}", " ", line).strip()
        if len(line.split()) >= 8 and not re.search(r"[|{}\[\]<>=]", line):  # no captions, no markup
            paragraphs.append(line)
    return "\n".join(paragraphs)


def _without_tables(wikitext: str) -> str:
    """``wikitext`` without its tables: the lines from ``{|`` to the matching ``|}``, nested ones too."""
    kept, depth = [], 0
    for line in wikitext.splitlines():
        stripped = line.strip()
        depth += stripped.startswith("{|")
        if depth == 0:
            kept.append(line)
        depth -= depth > 0 and stripped.startswith("|}")
    return "\n".join(kept)


_CLOSING_SECTION = re.compile(r"^=+\s*(see also|references|notes|further reading|external links|bibliography"
                              r"|sources|footnotes|citations|works cited|notes and references)\s*=+$", re.I)
_MEDIA = re.compile(r"(file|image|category):", re.I)


@functools.cache
def _wiki_articles() -> tuple[str, ...]:
    from gensim.corpora.wikicorpus import extract_pages
    articles = []
    with bz2.open(gensim_data_path(WIKI_DUMP)) as dump:
        for _title, wikitext, _page_id in extract_pages(dump, filter_namespaces=("0",)):
            if wikitext.lstrip().lower().startswith("#redirect"):
                continue
            text = wiki_text(wikitext)
            if len(text.split()) >= 100:  # stubs and disambiguation pages are left out
                articles.append(text)
    return _distinct(articles)


def wiki_articles(split: str = "train") -> list[str]:
    """Articles of the Wikipedia corpus for ``split`` in {'train', 'valid', 'test', 'all'}: each one
    string of paragraphs separated by newlines (:func:`wiki_text`), split by article like the news."""
    return _split(_wiki_articles(), split)


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


@functools.cache
def _news_word_streams(min_freq: int) -> tuple:
    from lmcourse.tokenize import word_tokenize
    from lmcourse.vocab import Vocab
    documents = {split: [word_tokenize(d) for d in news_documents(split)] for split in ("train", "valid", "test")}
    vocab = Vocab.from_texts(documents["train"], min_freq=min_freq, specials=NEWS_WORD_SPECIALS)
    streams = {split: torch.tensor([i for doc in docs for i in vocab.encode(doc)]) for split, docs in documents.items()}
    return vocab, streams


#: the special entries of :func:`news_word_streams`' vocabulary (ids 0, 1, 2)
NEWS_WORD_SPECIALS = ("<pad>", "<unk>", "[MASK]")


def news_word_streams(min_freq: int = 3):
    """(vocab, {"train", "valid", "test": (n,) int64 ids}): the news articles as word ids, each split
    one stream, with a vocabulary of the training words seen ``min_freq`` times or more and
    :data:`NEWS_WORD_SPECIALS` (chapter 10's corpus). Computed once per ``min_freq``; the streams
    are copies, so a caller may change them."""
    check_int(min_freq, "min_freq", minimum=1)
    vocab, streams = _news_word_streams(min_freq)
    return vocab, {split: ids.clone() for split, ids in streams.items()}
