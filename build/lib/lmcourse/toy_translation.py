"""A toy translation task: dates written the way people write them -> ISO 8601.

    "22 november 1987"    -> "1 9 8 7 - 1 1 - 2 2"
    "november 22 , 1987"  -> "1 9 8 7 - 1 1 - 2 2"
    "22 nov 1987"         -> "1 9 8 7 - 1 1 - 2 2"

Like real translation it changes the vocabulary (month names become digits), the word order (the
year moves to the front) and the length, yet it is exactly learnable and checkable: a model that
gets it right has learned a real function, and a held-out set of unseen dates measures that.
"""
import datetime
import random

import torch

from lmcourse.validate import check_int, check_nonempty
from lmcourse.vocab import PAD, UNK, Vocab

BOS, EOS = "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
FORMATS = ("day month year", "month day , year", "day mon year")
FIRST_DAY, LAST_DAY = datetime.date(1900, 1, 1), datetime.date(2099, 12, 31)


def format_date(date: datetime.date, style: str) -> tuple[list[str], list[str]]:
    """(source tokens in ``style``, target tokens YYYY-MM-DD); digits are single tokens."""
    if style not in FORMATS:
        raise ValueError(f"style must be one of {FORMATS}, got {style!r}")
    day, year = list(str(date.day)), list(str(date.year))
    month = MONTHS[date.month - 1]
    src = {"day month year": day + [month] + year,
           "month day , year": [month] + day + [","] + year,
           "day mon year": day + [month[:3]] + year}[style]
    tgt = year + ["-"] + list(f"{date.month:02d}") + ["-"] + list(f"{date.day:02d}")
    return src, tgt


def date_pairs(num_train: int = 20000, num_test: int = 500, seed: int = 0):
    """Disjoint random dates from 1900-2099, each in a random style: (train pairs, test pairs).

    No test date occurs in the training set in any style, so test accuracy measures generalisation.
    """
    check_int(num_train, "num_train", minimum=1)
    check_int(num_test, "num_test", minimum=1)
    total = (LAST_DAY - FIRST_DAY).days + 1
    if num_train + num_test > total:
        raise ValueError(f"num_train + num_test must be <= {total} distinct dates")
    rng = random.Random(seed)
    days = rng.sample(range(total), num_train + num_test)
    pairs = [format_date(FIRST_DAY + datetime.timedelta(days=d), rng.choice(FORMATS)) for d in days]
    return pairs[:num_train], pairs[num_train:]


def date_vocabs() -> tuple[Vocab, Vocab]:
    """(source vocab, target vocab); both start with <pad>=0, <unk>=1, <bos>=2, <eos>=3."""
    digits = [str(d) for d in range(10)]
    src = Vocab(digits + MONTHS + [m[:3] for m in MONTHS] + [","], specials=SPECIALS)
    tgt = Vocab(digits + ["-"], specials=SPECIALS)
    return src, tgt


def encode_pairs(pairs, src_vocab: Vocab, tgt_vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Pairs of token lists -> (src (N, S), tgt (N, T)) padded with 0; tgt is BOS y EOS."""
    check_nonempty(pairs, "pairs")
    srcs = [src_vocab.encode(s) for s, _ in pairs]
    tgts = [[tgt_vocab[BOS]] + tgt_vocab.encode(t) + [tgt_vocab[EOS]] for _, t in pairs]
    return _pad(srcs, src_vocab.pad_id), _pad(tgts, tgt_vocab.pad_id)


def _pad(rows: list[list[int]], pad_id: int) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), pad_id, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def batches(src: torch.Tensor, tgt: torch.Tensor, batch_size: int, seed: int = 0):
    """A function epoch -> list of (src, tgt) minibatches, reshuffled every epoch (for ``fit``)."""
    check_int(batch_size, "batch_size", minimum=1)
    if src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt must have the same number of rows, got {src.size(0)} and {tgt.size(0)}")

    def epoch_batches(epoch: int):
        order = torch.randperm(src.size(0), generator=torch.Generator().manual_seed(seed + epoch))
        return [(src[idx], tgt[idx]) for idx in order.split(batch_size)]
    return epoch_batches


def strip(ids, tgt_vocab: Vocab) -> list[str]:
    """Decoded ids -> tokens between BOS and the first EOS (specials removed)."""
    out = []
    for tok in tgt_vocab.decode(ids):
        if tok == EOS:
            break
        if tok not in SPECIALS:
            out.append(tok)
    return out


def exact_match(predicted: list[list[str]], reference: list[list[str]]) -> float:
    """Fraction of predictions equal to their reference, token for token."""
    check_nonempty(reference, "reference")
    if len(predicted) != len(reference):
        raise ValueError(f"predicted and reference must have the same length, got "
                         f"{len(predicted)} and {len(reference)}")
    return sum(p == r for p, r in zip(predicted, reference)) / len(reference)
