"""Tokenizers: words and characters here; subword tokenizers live beside them."""
import re

from lmcourse.validate import check_type

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
