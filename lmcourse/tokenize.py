"""Tokenizers: words and characters here; subword tokenizers live beside them."""
import heapq
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import torch

from lmcourse.validate import check_int, check_nonempty, check_type

# A word is letters/digits, possibly joined by ' - or . (don't, well-known, 4.5, u.s);
# any other non-space character is a token of its own.
_WORD = re.compile(r"[^\W_]+(?:['\-.][^\W_]+)*|[^\w\s]|_", re.UNICODE)


def word_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split text into words and single punctuation marks.

    >>> word_tokenize("The U.S. bank's rate, 4.5%!")
    ['the', 'u.s', '.', "bank's", 'rate', ',', '4.5', '%', '!']
    """
    check_type(text, "text", str)
    return _WORD.findall(text.lower() if lowercase else text)


def char_tokenize(text: str) -> list[str]:
    """Split text into characters (spaces and newlines included)."""
    check_type(text, "text", str)
    return list(text)


# ---------------------------------------------------------------------------------------------
# WordPiece (Schuster and Nakajima 2012; Wu et al. 2016), as BERT uses it (Devlin et al. 2019)
# ---------------------------------------------------------------------------------------------
#: BERT's special tokens, in the order the course's own vocabularies put them first
BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
#: a regular expression for any of them (valid in JavaScript too, which the tokenizer playground uses)
SPECIAL_PATTERN = "|".join(map(re.escape, BERT_SPECIALS))
_SPECIAL_SPLIT = re.compile(f"({SPECIAL_PATTERN})")


def split_specials(text: str) -> list[str]:
    """``text`` cut around the special tokens written in it: odd items are the tokens, even ones the text
    between them (``"a [MASK] b"`` -> ``["a ", "[MASK]", " b"]``)."""
    return _SPECIAL_SPLIT.split(text) if "[" in text else [text]

# ASCII fast path: control characters other than \t \n \r are dropped, the rest is a word of
# letters/digits or a single punctuation mark (every other printable ASCII character).
_ASCII_DROP = {c: None for c in list(range(0, 9)) + [11, 12] + list(range(14, 32)) + [127]}
_ASCII_PIECES = re.compile(r"[a-z0-9]+|[^a-z0-9\s]")
_ASCII_PIECES_CASED = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")


@cache
def _char_kind(ch: str) -> str:
    """'drop' (NUL, U+FFFD, control), 'space', 'cjk', 'punct' or 'other', as BERT's cleanup sees it."""
    cp = ord(ch)
    if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
        return "space"
    if cp == 0 or cp == 0xFFFD or unicodedata.category(ch).startswith("C"):
        return "drop"
    if (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F):
        return "cjk"
    if (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
            or unicodedata.category(ch).startswith("P")):
        return "punct"
    return "other"


def _strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def bert_pre_tokenize(text: str, lowercase: bool = True, strip_accents: bool | None = None) -> list[str]:
    """BERT's "basic" tokenizer: clean up, split CJK characters and punctuation, lowercase.

    Control characters are dropped, whitespace splits, every CJK ideograph and punctuation mark
    becomes a word of its own; with ``lowercase`` accents are stripped too (unless
    ``strip_accents=False``).

    >>> bert_pre_tokenize("Héllo, 世界!")
    ['hello', ',', '世', '界', '!']
    """
    check_type(text, "text", str)
    strip = lowercase if strip_accents is None else strip_accents
    if text.isascii():
        text = text.translate(_ASCII_DROP)
        if lowercase:
            return _ASCII_PIECES.findall(text.lower())
        return _ASCII_PIECES_CASED.findall(text)
    chars = []
    for ch in text:
        kind = _char_kind(ch)
        if kind == "space":
            chars.append(" ")
        elif kind == "cjk":
            chars.append(f" {ch} ")
        elif kind != "drop":
            chars.append(ch)
    out = []
    for word in unicodedata.normalize("NFC", "".join(chars)).split():
        if lowercase:
            word = word.lower()
        if strip:
            word = _strip_accents(word)
        start = 0
        for i, ch in enumerate(word):
            if _char_kind(ch) == "punct":
                if i > start:
                    out.append(word[start:i])
                out.append(ch)
                start = i + 1
        if start < len(word):
            out.append(word[start:])
    return out


@dataclass
class Encoding:
    """One encoded input: ``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``, all lists of equal length."""
    tokens: list[str]
    input_ids: list[int]
    token_type_ids: list[int]   # 0 for [CLS], A and its [SEP]; 1 for B and its [SEP]
    attention_mask: list[int] = field(default_factory=list)

    def __post_init__(self):
        if not self.attention_mask:
            self.attention_mask = [1] * len(self.input_ids)


class WordPieceTokenizer:
    """BERT's tokenizer: :func:`bert_pre_tokenize`, then greedy longest-match-first word pieces.

    A word is cut into the longest vocabulary entry that starts it, then the longest ``##``
    continuation, and so on; a word that cannot be covered (or is longer than
    ``max_chars_per_word``) becomes ``[UNK]`` as a whole. Words are cached, so running text costs
    about one dictionary lookup per word.
    """

    def __init__(self, vocab: list[str], lowercase: bool = True, strip_accents: bool | None = None,
                 max_chars_per_word: int = 100, unk_token: str = "[UNK]"):
        check_nonempty(vocab, "vocab")
        check_int(max_chars_per_word, "max_chars_per_word", minimum=1)
        self.itos: list[str] = list(vocab)
        self.stoi: dict[str, int] = {}
        for i, tok in enumerate(self.itos):
            self.stoi.setdefault(tok, i)
        for tok in (unk_token, "[CLS]", "[SEP]", "[PAD]", "[MASK]"):
            if tok not in self.stoi:
                raise ValueError(f"vocab must contain the special token {tok}")
        self.lowercase, self.strip_accents = lowercase, strip_accents
        self.max_chars_per_word, self.unk_token = max_chars_per_word, unk_token
        self.specials = tuple(t for t in self.itos if t.startswith("[") and t.endswith("]") and len(t) > 2
                              and t[1:-1].isupper())
        self._cache: dict[str, tuple[str, ...]] = {}

    @classmethod
    def from_vocab_file(cls, path: str | Path, **kwargs) -> "WordPieceTokenizer":
        """Read a BERT ``vocab.txt`` (one token per line; the line number is the id)."""
        path = Path(path)
        if path.is_dir():
            path = path / "vocab.txt"
        if not path.exists():
            raise FileNotFoundError(f"no vocabulary file at {path}")
        vocab = path.read_text(encoding="utf-8").split("\n")
        if vocab and vocab[-1] == "":
            vocab.pop()
        return cls([t.rstrip("\r") for t in vocab], **kwargs)

    def save(self, path: str | Path) -> Path:
        """Write the vocabulary as ``vocab.txt`` (readable by :meth:`from_vocab_file` and transformers)."""
        path = Path(path)
        path.write_text("\n".join(self.itos) + "\n", encoding="utf-8")
        return path

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(vocab_size={len(self)}, lowercase={self.lowercase})"

    @property
    def pad_id(self) -> int:
        return self.stoi["[PAD]"]

    @property
    def unk_id(self) -> int:
        return self.stoi[self.unk_token]

    @property
    def cls_id(self) -> int:
        return self.stoi["[CLS]"]

    @property
    def sep_id(self) -> int:
        return self.stoi["[SEP]"]

    @property
    def mask_id(self) -> int:
        return self.stoi["[MASK]"]

    @property
    def special_ids(self) -> tuple[int, ...]:
        """Ids of [PAD], [UNK], [CLS], [SEP], [MASK] (never masked or used as random replacements)."""
        return tuple(self.stoi[t] for t in BERT_SPECIALS if t in self.stoi)

    def word_pieces(self, word: str) -> tuple[str, ...]:
        """Greedy longest-match-first pieces of one pre-tokenized word ('unaffable' -> un ##aff ##able)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        pieces, start, n, vocab = [], 0, len(word), self.stoi
        if n > self.max_chars_per_word:
            pieces = [self.unk_token]
        while start < n and pieces != [self.unk_token]:
            end = n
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    break
                end -= 1
            if end == start:        # nothing matches: the whole word is unknown
                pieces = [self.unk_token]
                break
            pieces.append(piece)
            start = end
        result = tuple(pieces)
        self._cache[word] = result
        return result

    def tokenize(self, text: str) -> list[str]:
        """Text -> word pieces (special tokens such as ``[MASK]`` written in the text are kept whole)."""
        check_type(text, "text", str)
        out = []
        for k, part in enumerate(split_specials(text)):
            if k % 2:
                out.append(part)
                continue
            for word in bert_pre_tokenize(part, self.lowercase, self.strip_accents):
                out.extend(self.word_pieces(word))
        return out

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        """Word pieces -> ids (unknown pieces -> the [UNK] id)."""
        unk = self.unk_id
        return [self.stoi.get(t, unk) for t in tokens]

    def decode(self, ids, skip_special: bool = True) -> str:
        """Ids -> text, gluing ``##`` pieces to the piece before them."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        words = []
        for i in ids:
            if not 0 <= i < len(self.itos):
                raise ValueError(f"ids must be in [0, {len(self.itos)}), got {i}")
            tok = self.itos[i]
            if skip_special and tok in BERT_SPECIALS:
                continue
            if tok.startswith("##") and words:
                words[-1] += tok[2:]
            else:
                words.append(tok)
        return " ".join(words)

    def encode(self, text: str, text_pair: str | None = None, max_length: int | None = None) -> Encoding:
        """``[CLS] A [SEP] (B [SEP])`` with segment ids; ``max_length`` trims the longer text first."""
        a = self.tokenize(text)
        b = self.tokenize(text_pair) if text_pair is not None else None
        return self.encode_pieces(a, b, max_length)

    def encode_pieces(self, a: list[str], b: list[str] | None = None,
                      max_length: int | None = None) -> Encoding:
        """Like :meth:`encode` for texts already cut into word pieces."""
        specials = 3 if b is not None else 2
        if max_length is not None:
            check_int(max_length, "max_length", minimum=specials)
            a, b = list(a), (list(b) if b is not None else None)
            while len(a) + (len(b) if b else 0) + specials > max_length:
                if b and len(b) > len(a):
                    b.pop()
                else:
                    a.pop()
        tokens = ["[CLS]", *a, "[SEP]"]
        types = [0] * len(tokens)
        if b is not None:
            tokens += [*b, "[SEP]"]
            types += [1] * (len(b) + 1)
        return Encoding(tokens, self.convert_tokens_to_ids(tokens), types)

    def batch_encode(self, texts: list[str], text_pairs: list[str] | None = None,
                     max_length: int | None = None) -> dict[str, torch.Tensor]:
        """Encode and right-pad a batch: ``{'input_ids', 'token_type_ids', 'attention_mask'}``, each (B, T)."""
        check_nonempty(texts, "texts")
        if text_pairs is not None and len(text_pairs) != len(texts):
            raise ValueError(f"text_pairs must have len(texts) = {len(texts)} entries, got {len(text_pairs)}")
        encs = [self.encode(t, text_pairs[i] if text_pairs is not None else None, max_length)
                for i, t in enumerate(texts)]
        return pad_encodings(encs, self.pad_id)


def pad_encodings(encodings: list[Encoding], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad encodings to the longest: ``{'input_ids', 'token_type_ids', 'attention_mask'}`` (B, T)."""
    check_nonempty(encodings, "encodings")
    T = max(len(e.input_ids) for e in encodings)
    out = {"input_ids": torch.full((len(encodings), T), pad_id, dtype=torch.long),
           "token_type_ids": torch.zeros(len(encodings), T, dtype=torch.long),
           "attention_mask": torch.zeros(len(encodings), T, dtype=torch.long)}
    for i, e in enumerate(encodings):
        n = len(e.input_ids)
        out["input_ids"][i, :n] = torch.tensor(e.input_ids)
        out["token_type_ids"][i, :n] = torch.tensor(e.token_type_ids)
        out["attention_mask"][i, :n] = 1
    return out


def train_wordpiece(texts: list[str], vocab_size: int, min_frequency: int = 2,
                    criterion: str = "likelihood", lowercase: bool = True) -> WordPieceTokenizer:
    """Learn a WordPiece vocabulary from ``texts``.

    Start from single characters (a word-initial one plain, the others as ``##c``); repeatedly
    merge the adjacent pair (a, b) with the highest score, until the vocabulary has ``vocab_size``
    entries or no pair occurs ``min_frequency`` times:

    - ``criterion='likelihood'``: the gain in the unigram log-likelihood of the corpus,
      approximately $\\mathrm{count}(ab)\\log\\frac{N\\,\\mathrm{count}(ab)}{\\mathrm{count}(a)\\,\\mathrm{count}(b)}$
      with $N$ the current number of pieces (Schuster and Nakajima's rule);
    - ``criterion='pmi'``: the ratio $\\mathrm{count}(ab) / (\\mathrm{count}(a)\\,\\mathrm{count}(b))$, the
      pointwise mutual information up to a constant (how Hugging Face describes WordPiece); it
      favours pairs of rare pieces that seldom occur apart;
    - ``criterion='frequency'``: BPE's rule, the most frequent pair.

    Ties go to the alphabetically first pair, so training is deterministic.
    """
    check_nonempty(texts, "texts")
    check_int(vocab_size, "vocab_size", minimum=len(BERT_SPECIALS) + 1)
    check_int(min_frequency, "min_frequency", minimum=1)
    if criterion not in ("likelihood", "pmi", "frequency"):
        raise ValueError(f"criterion must be 'likelihood', 'pmi' or 'frequency', got {criterion!r}")
    word_freq = Counter(w for t in texts for w in bert_pre_tokenize(t, lowercase))
    if not word_freq:
        raise ValueError("texts must contain at least one word")
    words = list(word_freq)
    freqs = [word_freq[w] for w in words]
    splits = [[w[0]] + ["##" + c for c in w[1:]] for w in words]
    vocab = list(BERT_SPECIALS) + sorted({p for s in splits for p in s})
    if len(vocab) > vocab_size:
        raise ValueError(f"vocab_size={vocab_size} is smaller than the {len(vocab)} specials and "
                         f"single characters of the corpus")
    tok_count: Counter = Counter()
    pair_count: Counter = Counter()
    pair_words: dict[tuple[str, str], set[int]] = {}
    tok_pairs: dict[str, set[tuple[str, str]]] = {}
    for i, (s, f) in enumerate(zip(splits, freqs)):
        for t in s:
            tok_count[t] += f
        for p in zip(s, s[1:]):
            pair_count[p] += f
            pair_words.setdefault(p, set()).add(i)
            tok_pairs.setdefault(p[0], set()).add(p)
            tok_pairs.setdefault(p[1], set()).add(p)

    total = sum(tok_count.values())      # N, the number of pieces in the corpus

    def score(p):
        if criterion == "frequency":
            return float(pair_count[p])
        if criterion == "pmi":
            return pair_count[p] / (tok_count[p[0]] * tok_count[p[1]])
        return pair_count[p] * math.log(total * pair_count[p] / (tok_count[p[0]] * tok_count[p[1]]))

    heap = [(-score(p), p) for p in pair_count]
    heapq.heapify(heap)
    seen = set(vocab)
    while len(vocab) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) < min_frequency:
            continue
        current = score(pair)
        if -neg != current:
            if criterion == "likelihood" and -neg > current:
                heapq.heappush(heap, (-current, pair))   # N fell since the push: scores only fall, re-queue
            continue   # stale entry: its counts changed since it was pushed (a fresh one exists)
        a, b = pair
        new = a + b[2:]
        if criterion == "likelihood" and new in seen:
            continue   # a duplicate entry of a pair merged already
        vocab.append(new)
        seen.add(new)
        touched = {pair}
        if criterion != "frequency":   # count(a), count(b) change: so do the scores of their pairs
            touched |= tok_pairs.get(a, set()) | tok_pairs.get(b, set())
        for i in list(pair_words.pop(pair, ())):
            s, f = splits[i], freqs[i]
            for p in zip(s, s[1:]):
                pair_count[p] -= f
                pair_words.get(p, set()).discard(i)
            for t in s:
                tok_count[t] -= f
            merged, j = [], 0
            while j < len(s):
                if j + 1 < len(s) and s[j] == a and s[j + 1] == b:
                    merged.append(new)
                    j += 2
                else:
                    merged.append(s[j])
                    j += 1
            splits[i] = merged
            total -= (len(s) - len(merged)) * f
            for t in merged:
                tok_count[t] += f
            for p in zip(merged, merged[1:]):
                pair_count[p] += f
                pair_words.setdefault(p, set()).add(i)
                tok_pairs.setdefault(p[0], set()).add(p)
                tok_pairs.setdefault(p[1], set()).add(p)
                touched.add(p)
        for p in touched:
            if pair_count.get(p, 0) >= min_frequency and tok_count[p[0]] and tok_count[p[1]]:
                heapq.heappush(heap, (-score(p), p))
    return WordPieceTokenizer(vocab, lowercase=lowercase)
