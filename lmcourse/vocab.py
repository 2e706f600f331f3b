"""Vocabularies: the two-way map between tokens and integer ids."""
from collections import Counter
from collections.abc import Iterable

import torch

from lmcourse.validate import check_int, check_nonempty, check_type

PAD, UNK = "<pad>", "<unk>"


class Vocab:
    """Token <-> id map, ordered by frequency (ties broken alphabetically, so it is deterministic).

    Special tokens come first: ``<pad>`` is id 0 and ``<unk>`` id 1 by default. Tokens seen fewer
    than ``min_freq`` times, and any beyond ``max_size``, map to ``<unk>``.
    """

    def __init__(self, tokens: Iterable[str], min_freq: int = 1, max_size: int | None = None,
                 specials: tuple[str, ...] = (PAD, UNK)):
        check_int(min_freq, "min_freq", minimum=1)
        if max_size is not None:
            check_int(max_size, "max_size", minimum=1)
        check_type(specials, "specials", tuple)
        if len(set(specials)) != len(specials):
            raise ValueError(f"specials must be distinct, got {specials}")
        self.counts = Counter(tokens)
        if not self.counts:
            raise ValueError("tokens must not be empty")
        kept = sorted((t for t, c in self.counts.items() if c >= min_freq and t not in specials),
                      key=lambda t: (-self.counts[t], t))
        if max_size is not None:
            kept = kept[:max_size]
        self.itos: list[str] = list(specials) + kept
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        self.specials = specials

    @classmethod
    def from_texts(cls, texts: Iterable[Iterable[str]], **kwargs) -> "Vocab":
        """Build from an iterable of token sequences (e.g. tokenized documents)."""
        return cls((tok for text in texts for tok in text), **kwargs)

    @classmethod
    def from_itos(cls, itos: list[str], specials: tuple[str, ...] = (PAD, UNK)) -> "Vocab":
        """The vocabulary whose id ``i`` is ``itos[i]`` (as saved: one token per line), specials first."""
        check_nonempty(itos, "itos")
        if tuple(itos[:len(specials)]) != tuple(specials) or len(set(itos)) != len(itos):
            raise ValueError(f"itos must be distinct tokens that start with the specials {specials}")
        vocab = cls(itos, specials=specials)   # then fix the order as given; the counts are unknown
        vocab.itos, vocab.stoi, vocab.counts = list(itos), {t: i for i, t in enumerate(itos)}, Counter()
        return vocab

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        if token in self.stoi:
            return self.stoi[token]
        return self.unk_id

    @property
    def pad_id(self) -> int:
        return self._special_id(PAD)

    @property
    def unk_id(self) -> int:
        return self._special_id(UNK)

    def _special_id(self, token: str) -> int:
        if token not in self.stoi:
            raise KeyError(f"this vocabulary has no {token} token (specials={self.specials})")
        return self.stoi[token]

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Tokens -> ids; unknown tokens become ``<unk>`` (an error if there is none)."""
        if isinstance(tokens, str):
            raise TypeError("tokens must be a sequence of tokens, not a str; tokenize it first")
        if UNK in self.stoi:
            unk = self.stoi[UNK]
            return [self.stoi.get(t, unk) for t in tokens]
        missing = [t for t in tokens if t not in self.stoi]
        if missing:
            raise KeyError(f"tokens not in the vocabulary and no {UNK} to map them to: {missing[:5]}")
        return [self.stoi[t] for t in tokens]

    def decode(self, ids: Iterable[int] | torch.Tensor) -> list[str]:
        """Ids -> tokens."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        out = []
        for i in ids:
            if not 0 <= i < len(self.itos):
                raise ValueError(f"ids must be in [0, {len(self.itos)}), got {i}")
            out.append(self.itos[i])
        return out

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, specials={self.specials})"


def char_vocab(texts: Iterable[str], **kwargs) -> Vocab:
    """A character vocabulary over raw strings (``<pad>``, ``<unk>``, then characters by frequency)."""
    texts = list(texts)
    check_nonempty(texts, "texts")
    return Vocab((ch for text in texts for ch in text), **kwargs)
