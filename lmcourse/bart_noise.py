"""BART's five noise functions (Lewis et al. 2020, section 2.2), on lists of word tokens.

BART corrupts a document and trains an encoder-decoder to write the original back. The paper
compares, one at a time: token masking (BERT's [MASK]), token deletion (the model must also find
WHERE a token is missing), text infilling (spans of Poisson(3) length, each replaced by ONE mask,
length-0 spans inserting a mask: the model must also guess how many tokens are missing),
sentence permutation and document rotation. Text infilling was the most consistently strong.
"""
import numpy as np

from lmcourse.sentence_order import split_sentences
from lmcourse.validate import check_float, check_nonempty, check_type

MASK = "<mask>"


def _checked(tokens: list[str], name: str = "tokens") -> list[str]:
    check_type(tokens, name, list)
    check_nonempty(tokens, name)
    return tokens


def _rng(rng: np.random.Generator | None) -> np.random.Generator:
    if rng is not None:
        check_type(rng, "rng", np.random.Generator)
    return rng if rng is not None else np.random.default_rng()


def token_masking(tokens: list[str], p: float = 0.15, rng: np.random.Generator | None = None) -> list[str]:
    """Each token becomes ``<mask>`` with probability ``p``; the length is unchanged."""
    _checked(tokens)
    check_float(p, "p", minimum=0.0, maximum=1.0)
    hit = _rng(rng).random(len(tokens)) < p
    return [MASK if h else t for t, h in zip(tokens, hit)]


def token_deletion(tokens: list[str], p: float = 0.15, rng: np.random.Generator | None = None) -> list[str]:
    """Each token is dropped with probability ``p``, leaving no trace of where."""
    _checked(tokens)
    check_float(p, "p", minimum=0.0, maximum=1.0)
    hit = _rng(rng).random(len(tokens)) < p
    return [t for t, h in zip(tokens, hit) if not h]


def text_infilling(tokens: list[str], p: float = 0.3, mean_span: float = 3.0,
                   rng: np.random.Generator | None = None) -> list[str]:
    """Replace spans with Poisson(``mean_span``) lengths by ONE ``<mask>`` each until about ``p``
    of the tokens are covered (BART: p = 0.3, lambda = 3). A length-0 span inserts a ``<mask>``."""
    _checked(tokens)
    check_float(p, "p", minimum=0.0, maximum=1.0)
    check_float(mean_span, "mean_span", minimum=0.0)
    rng = _rng(rng)
    budget = round(p * len(tokens))
    out, covered = list(tokens), 0
    spans = []                                                   # (start, length), non-overlapping
    for start in rng.permutation(len(tokens)).tolist():
        if covered >= budget:
            break
        length = min(int(rng.poisson(mean_span)), budget - covered)
        if any(s <= start < s + max(n, 1) or start <= s < start + max(length, 1) for s, n in spans):
            continue
        spans.append((start, length))
        covered += length
    for start, length in sorted(spans, reverse=True):            # right to left keeps indices valid
        out[start:start + length] = [MASK]
    return out


def sentence_permutation(tokens: list[str], rng: np.random.Generator | None = None,
                         end: str = ".") -> list[str]:
    """Split after every ``end`` token into sentences and shuffle their order."""
    sentences = split_sentences(_checked(tokens), end)
    order = _rng(rng).permutation(len(sentences))
    return [t for k in order for t in sentences[k]]


def document_rotation(tokens: list[str], rng: np.random.Generator | None = None) -> list[str]:
    """Rotate the document to start at a uniformly chosen token; the model must find the real start."""
    _checked(tokens)
    start = int(_rng(rng).integers(len(tokens)))
    return tokens[start:] + tokens[:start]


#: the five noise functions by the names of BART's Table 1
NOISES = {
    "token masking": token_masking,
    "token deletion": token_deletion,
    "text infilling": text_infilling,
    "sentence permutation": sentence_permutation,
    "document rotation": document_rotation,
}
