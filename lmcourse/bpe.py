"""Byte-pair encoding (Sennrich et al. 2016), byte-level as in GPT-2 (Radford et al. 2019).

Training starts from the 256 possible bytes and repeatedly merges the most frequent adjacent pair
of symbols into a new symbol, until the vocabulary has the requested size. Encoding replays the
merges in the order they were learned. Because the base alphabet is every byte, no text is ever
out of vocabulary: a character never seen in training (an accent, a Chinese character, an emoji)
falls back to its UTF-8 bytes, one token each. That is the byte fallback; there is no ``<unk>``.

Merges never cross the boundaries of a pre-tokenizer that splits text into words with their
leading space, numbers, punctuation runs and whitespace (GPT-2's rule, written for Python's ``re``:
it agrees with GPT-2's pattern on text whose letters and digits are ASCII or accented Latin).

For corpora of gigabytes, :meth:`BPETokenizer.train_fast` learns the merges with the Rust
``tokenizers`` library and :meth:`BPETokenizer.fast` encodes with it: the same pre-tokenizer
(:data:`FAST_PRETOKENIZE`) and the same merges give the same ids as :meth:`BPETokenizer.encode`.
"""
import heapq
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from lmcourse.validate import check_int, check_nonempty, check_type

#: GPT-2's pre-tokenizer: contractions, words with one leading space, numbers, other symbols,
#: and whitespace (a run of spaces before a word leaves its last space to the word).
PRETOKENIZE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")

#: PRETOKENIZE for the Rust ``tokenizers`` library's regular expressions: Python's ``\\w`` is a letter or
#: any number, ``\\d`` a decimal digit, and ``\\s`` includes the separators U+001C-U+001F. Both split
#: every character that Python's Unicode tables know identically (tested).
FAST_PRETOKENIZE = (r"""'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}\p{Nl}\p{No}]+| ?\p{Nd}+| ?[^\s\x1c-\x1f\p{L}\p{N}]+"""
                    r"""|[\s\x1c-\x1f]+(?![^\s\x1c-\x1f])|[\s\x1c-\x1f]+""")

#: the end-of-text marker GPT-2 puts between documents
END_OF_TEXT = "<|endoftext|>"


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into the chunks that merges never cross.

    >>> pretokenize("The bank's rate rose 4.5%.")
    ['The', ' bank', "'s", ' rate', ' rose', ' 4', '.', '5', '%.']
    """
    check_type(text, "text", str)
    return PRETOKENIZE.findall(text)


def byte_symbols() -> list[str]:
    """GPT-2's printable stand-in for every byte (its ``bytes_to_unicode``): the printable Latin-1
    bytes stand for themselves, the other 68 for the characters from U+0100 on, in byte order."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(ord("¡"), ord("¬") + 1)) | set(range(ord("®"), 256))
    symbols, shifted = [], 0
    for b in range(256):
        symbols.append(chr(b) if b in printable else chr(256 + shifted))
        shifted += b not in printable
    return symbols


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every non-overlapping occurrence of ``pair`` in ``ids`` (left to right) by ``new_id``."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class BPETokenizer:
    """Byte-level BPE: ids 0-255 are the bytes, then one id per merge, then the special tokens.

    ``merges[i] = (a, b)`` creates id ``256 + i`` from ids ``a`` and ``b``. Special tokens (such as
    ``<|endoftext|>`` or GPT-1's start/delimiter/extract tokens) are never produced by
    :meth:`encode`; get their ids with :meth:`special_id` and insert them yourself.
    """

    def __init__(self, merges: list[tuple[int, int]], specials: tuple[str, ...] = (END_OF_TEXT,)):
        check_type(merges, "merges", list)
        check_type(specials, "specials", tuple)
        if len(set(specials)) != len(specials):
            raise ValueError(f"specials must be distinct, got {specials}")
        self.merges = [tuple(m) for m in merges]
        self.token_bytes: list[bytes] = [bytes([b]) for b in range(256)]
        for i, (a, b) in enumerate(self.merges):
            if not (0 <= a < 256 + i and 0 <= b < 256 + i):
                raise ValueError(f"merges[{i}] = {(a, b)} refers to an id not defined before it")
            self.token_bytes.append(self.token_bytes[a] + self.token_bytes[b])
        self.ranks = {pair: i for i, pair in enumerate(self.merges)}
        self.specials = specials
        self._special_ids = {s: len(self.token_bytes) + i for i, s in enumerate(specials)}
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, specials: tuple[str, ...] = (END_OF_TEXT,),
              min_frequency: int = 2) -> "BPETokenizer":
        """Learn merges on ``texts`` until ``vocab_size`` (bytes + merges + specials) is reached.

        Stops early when no pair occurs ``min_frequency`` times. Ties between equally frequent
        pairs go to the smaller pair of ids, so training is deterministic.
        """
        texts = list(texts)
        check_nonempty(texts, "texts")
        check_int(vocab_size, "vocab_size", minimum=256 + len(specials))
        check_int(min_frequency, "min_frequency", minimum=1)
        chunk_counts = Counter(chunk for text in texts for chunk in pretokenize(text))
        words = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
        counts = list(chunk_counts.values())
        # count every adjacent pair once per occurrence, and remember which words contain it
        pair_counts: Counter = Counter()
        where: dict[tuple[int, int], set[int]] = {}
        for w, (word, count) in enumerate(zip(words, counts)):
            for pair in zip(word, word[1:]):
                pair_counts[pair] += count
                where.setdefault(pair, set()).add(w)
        heap = [(-c, pair) for pair, c in pair_counts.items()]
        heapq.heapify(heap)
        merges: list[tuple[int, int]] = []
        while 256 + len(merges) + len(specials) < vocab_size and heap:
            neg, pair = heapq.heappop(heap)
            count = pair_counts.get(pair, 0)
            if count != -neg:
                # a merge lowered this pair's count after it was pushed: re-queue the true count
                if count > 0:
                    heapq.heappush(heap, (-count, pair))
                continue
            if count < min_frequency:
                break
            new_id = 256 + len(merges)
            merges.append(pair)
            # a merge can only lower the counts of old pairs; the only new pairs contain new_id
            created = set()
            for w in where.pop(pair):
                word = words[w]
                merged = merge_pair(word, pair, new_id)
                if len(merged) == len(word):              # the pair was merged away earlier
                    continue
                for old in zip(word, word[1:]):
                    pair_counts[old] -= counts[w]
                for new in zip(merged, merged[1:]):
                    pair_counts[new] += counts[w]
                    if new_id in new:
                        where.setdefault(new, set()).add(w)
                        created.add(new)
                words[w] = merged
            for p in created:
                heapq.heappush(heap, (-pair_counts[p], p))
        return cls(merges, specials)

    def vocab_files(self) -> dict[str, str]:
        """GPT-2's tokenizer files: ``vocab.json`` (token -> id) and ``merges.txt`` (one merge per
        line, in the order learned), with every byte written as its :func:`byte_symbols` character."""
        symbols = byte_symbols()
        names = ["".join(symbols[b] for b in token) for token in self.token_bytes] + list(self.specials)
        if len(set(names)) != len(names):
            raise ValueError("two merges make the same byte string: GPT-2's vocab.json cannot hold both")
        merges = [f"{names[a]} {names[b]}" for a, b in self.merges]
        return {"vocab.json": json.dumps({n: i for i, n in enumerate(names)}, ensure_ascii=False, indent=0),
                "merges.txt": "\n".join(["#version: 0.2"] + merges) + "\n"}

    @classmethod
    def from_pretrained(cls, directory: str | Path) -> "BPETokenizer":
        """Read GPT-2's tokenizer files (``vocab.json``, ``merges.txt``) from ``directory``; the
        tokens after the last merge are the special tokens. ``ValueError`` naming a file that does
        not fit."""
        vocab_file, merges_file = Path(directory) / "vocab.json", Path(directory) / "merges.txt"
        for path in (vocab_file, merges_file):
            if not path.is_file():
                raise ValueError(f"{path} is missing; expected GPT-2 tokenizer files")
        try:
            vocab = json.loads(vocab_file.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ValueError(f"{vocab_file} is not valid JSON ({err})") from err
        pairs = [tuple(line.split(" ")) for line in merges_file.read_text(encoding="utf-8").splitlines()[1:]]
        merges, ids = _merges_of_symbols(pairs, str(merges_file))
        if any(vocab.get(name) != i for name, i in ids.items()):
            raise ValueError(f"{vocab_file} does not give the ids that {merges_file} implies")
        specials = tuple(sorted((n for n, i in vocab.items() if i >= len(ids)), key=vocab.get))
        if sorted(vocab.values()) != list(range(len(vocab))):
            raise ValueError(f"{vocab_file} must number its tokens 0 .. {len(vocab) - 1}")
        return cls(merges, specials)

    @classmethod
    def train_fast(cls, texts: Iterable[str], vocab_size: int, specials: tuple[str, ...] = (END_OF_TEXT,),
                   min_frequency: int = 2) -> "BPETokenizer":
        """Learn merges as :meth:`train` does, with the Rust ``tokenizers`` library: for corpora of
        gigabytes (``texts`` may be a generator). Its ties between equally frequent pairs are broken
        differently, so the merges can differ from :meth:`train`'s; encoding with them is the same."""
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        check_int(vocab_size, "vocab_size", minimum=256 + len(specials))
        check_int(min_frequency, "min_frequency", minimum=1)
        learner = Tokenizer(models.BPE())
        learner.pre_tokenizer = _fast_pretokenizer()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(specials), min_frequency=min_frequency,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        learner.train_from_iterator(texts, trainer)
        learned = json.loads(learner.to_str())["model"]["merges"]
        pairs = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned]
        merges, _ = _merges_of_symbols(pairs, "the learned merges")
        return cls(merges, specials)

    def fast(self):
        """The same tokenizer in the Rust ``tokenizers`` library: its ``encode(text).ids`` equals
        :meth:`encode` (special tokens included by name are not recognised, as in ``encode``)."""
        from tokenizers import Tokenizer, decoders, models

        files = self.vocab_files()
        merges = [tuple(line.split(" ")) for line in files["merges.txt"].splitlines()[1:]]
        rust = Tokenizer(models.BPE(json.loads(files["vocab.json"]), merges))
        rust.pre_tokenizer = _fast_pretokenizer()
        rust.decoder = decoders.ByteLevel()
        return rust

    def __len__(self) -> int:
        return len(self.token_bytes) + len(self.specials)

    @property
    def vocab_size(self) -> int:
        """Number of ids: 256 bytes + merges + special tokens."""
        return len(self)

    def special_id(self, token: str) -> int:
        """The id of a special token given at construction."""
        if token not in self._special_ids:
            raise KeyError(f"{token!r} is not a special token of this tokenizer; it has {self.specials}")
        return self._special_ids[token]

    def _encode_chunk(self, chunk: str) -> list[int]:
        if chunk in self._cache:
            return self._cache[chunk]
        ids = list(chunk.encode("utf-8"))
        while len(ids) > 1:
            # apply the earliest-learned merge present, exactly as training did
            pair = min(zip(ids, ids[1:]), key=lambda p: self.ranks.get(p, len(self.ranks)))
            if pair not in self.ranks:
                break
            ids = merge_pair(ids, pair, 256 + self.ranks[pair])
        self._cache[chunk] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Text -> token ids (never fails: unseen characters become their UTF-8 bytes)."""
        check_type(text, "text", str)
        return [i for chunk in pretokenize(text) for i in self._encode_chunk(chunk)]

    def _bytes_of(self, i: int) -> bytes:
        if not isinstance(i, int) or not 0 <= i < len(self):
            raise ValueError(f"ids must be ints in [0, {len(self)}), got {i!r}")
        if i < len(self.token_bytes):
            return self.token_bytes[i]
        return self.specials[i - len(self.token_bytes)].encode("utf-8")

    def decode(self, ids) -> str:
        """Token ids -> text. Bytes that do not form valid UTF-8 (a character cut in the middle)
        become U+FFFD; special tokens are written out by name."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        return b"".join(self._bytes_of(i) for i in ids).decode("utf-8", errors="replace")

    def token_str(self, i: int) -> str:
        """A printable form of one token: its text, with a partial UTF-8 character shown as \\xNN."""
        return self._bytes_of(i).decode("utf-8", errors="backslashreplace")

    def tokens(self, text: str) -> list[str]:
        """The printable tokens that :meth:`encode` turns ``text`` into."""
        return [self.token_str(i) for i in self.encode(text)]

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={len(self)}, merges={len(self.merges)}, specials={self.specials})"


def _fast_pretokenizer():
    """The Rust library's pre-tokenizer equal to :func:`pretokenize`, then GPT-2's byte symbols."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(FAST_PRETOKENIZE), behavior="isolated"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def _merges_of_symbols(pairs: list[tuple[str, ...]], source: str) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """Merges written in :func:`byte_symbols` (GPT-2's ``merges.txt``) -> (merges as id pairs, symbol -> id).
    ``ValueError`` naming ``source`` for a merge of unknown tokens or one that remakes a known token."""
    ids = {symbol: b for b, symbol in enumerate(byte_symbols())}
    merges = []
    for pair in pairs:
        if len(pair) != 2 or pair[0] not in ids or pair[1] not in ids:
            raise ValueError(f"{source}: {' '.join(pair)!r} is not a merge of two known tokens")
        if pair[0] + pair[1] in ids:
            raise ValueError(f"{source}: {' '.join(pair)!r} makes a token an earlier merge made")
        merges.append((ids[pair[0]], ids[pair[1]]))
        ids[pair[0] + pair[1]] = 255 + len(merges)
    return merges, ids
