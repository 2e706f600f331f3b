"""Next-sentence prediction (BERT) and sentence-order prediction (ALBERT, Lan et al. 2020) as data.

Both classify a pair of text segments (A, B). NSP's negatives put a segment from ANOTHER document
after A, so they can often be recognised by topic alone; SOP's negatives are the same two
consecutive segments swapped, so topic cannot tell them apart and only coherence can.
"""
import numpy as np

from lmcourse.validate import check_nonempty, check_type


def split_sentences(tokens: list[str], end: str = ".") -> list[list[str]]:
    """Cut a token list after every ``end`` token; a trailing piece without ``end`` is kept."""
    check_type(tokens, "tokens", list)
    sentences, current = [], []
    for t in tokens:
        current.append(t)
        if t == end:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def _documents(documents: list[list[list[str]]]) -> list[list[list[str]]]:
    check_type(documents, "documents", list)
    check_nonempty(documents, "documents")
    if sum(len(d) - 1 for d in documents if len(d) > 1) < 1:
        raise ValueError("documents must hold at least one document with two or more sentences")
    return documents


def sop_pairs(documents: list[list[list[str]]], rng: np.random.Generator | None = None
              ) -> list[tuple[list[str], list[str], int]]:
    """(A, B, label) for every two consecutive sentences of every document (each a list of
    sentences): label 1 = in order, 0 = swapped, each with probability 1/2."""
    rng = rng if rng is not None else np.random.default_rng()
    out = []
    for doc in _documents(documents):
        for a, b in zip(doc, doc[1:]):
            out.append((a, b, 1) if rng.random() < 0.5 else (b, a, 0))
    return out


def nsp_pairs(documents: list[list[list[str]]], rng: np.random.Generator | None = None
              ) -> list[tuple[list[str], list[str], int]]:
    """(A, B, label): label 1 = B follows A in its document; 0 = B is a random sentence of another
    document (BERT's NSP), each with probability 1/2."""
    documents = _documents(documents)
    if len(documents) < 2:
        raise ValueError("nsp_pairs needs at least two documents to draw negatives from")
    rng = rng if rng is not None else np.random.default_rng()
    out = []
    for d, doc in enumerate(documents):
        for a, b in zip(doc, doc[1:]):
            if rng.random() < 0.5:
                out.append((a, b, 1))
            else:
                other = (d + 1 + int(rng.integers(len(documents) - 1))) % len(documents)
                out.append((a, documents[other][int(rng.integers(len(documents[other])))], 0))
    return out


def word_overlap(a: list[str], b: list[str]) -> float:
    """Jaccard overlap of the two segments' word sets: |A ∩ B| / |A ∪ B|."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / max(1, len(sa | sb))
