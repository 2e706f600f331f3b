"""A corpus larger than memory: tokenized once, in parallel, into a file that training reads as a memory map.

Documents are text files (or, for small corpora, strings). Each is read in pieces of about 64 kB
(encoding one takes a worker tens of megabytes, not hundreds), cut only where no pre-token can
cross (before a newline that follows a non-space character), so that encoding piece by piece gives
the ids of encoding the whole document. Worker processes encode the pieces; the ids go to disk in
order, each document followed by ``<|endoftext|>``, as unsigned 16-bit integers when the vocabulary
has at most 65,536 ids. A header beside the file records the count, the type, the tokenizer's hash
and the file's SHA-256, which :class:`TokenFile` checks before training reads a window.
"""
import glob
import hashlib
import json
import mmap
import multiprocessing
import os
import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import torch

from lmcourse.bpe import END_OF_TEXT, BPETokenizer
from lmcourse.train import write_atomically
from lmcourse.validate import check_int, check_type

PIECE_CHARS = 1 << 16   # characters read at a time, about 64 kB of text
_CUT = re.compile(r"(?<=\S)\s")   # where a text may be cut: before a space that follows a non-space


def expand_sources(sources: Iterable[str | Path]) -> list[Path]:
    """Files named by ``sources``: each a file, a directory (every file below it that is not
    hidden) or a glob pattern (``**`` crosses directories). Sorted and without repeats."""
    files: set[Path] = set()
    for source in sources:
        path = Path(source)
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = [p for p in path.rglob("*") if p.is_file()
                     and not any(part.startswith(".") for part in p.relative_to(path).parts)]
        else:
            found = [Path(p) for p in glob.glob(str(source), recursive=True) if Path(p).is_file()]
        if not found:
            raise ValueError(f"text source {str(source)!r} is no file, names no files and matches no files")
        files.update(found)
    return sorted(files)


def split_pieces(text: str, piece_chars: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into pieces of about ``piece_chars`` characters, each cut just before a space
    (any whitespace) that follows a non-space character. No pre-token of
    :func:`lmcourse.bpe.pretokenize` crosses such a place, nor looks ahead across it: the pieces'
    ids, joined, are the text's ids. A text without such a place stays whole."""
    check_int(piece_chars, "piece_chars", minimum=1)
    pieces, start = [], 0
    while len(text) - start > piece_chars:
        cut = _CUT.search(text, start + piece_chars)
        if cut is None:
            break
        pieces.append(text[start:cut.start()])
        start = cut.start()
    pieces.append(text[start:])
    return pieces


def document_pieces(document: str | Path, piece_chars: int = PIECE_CHARS) -> Iterator[str]:
    """The pieces of one document (a string, or a UTF-8 file read a piece at a time): see :func:`split_pieces`."""
    if isinstance(document, str):
        yield from split_pieces(document, piece_chars)
        return
    with open(document, encoding="utf-8") as f:
        rest = ""
        while block := f.read(piece_chars):
            *done, rest = split_pieces(rest + block, piece_chars)
            yield from done
        if rest:
            yield rest


def dtype_for(vocab_size: int) -> np.dtype:
    """The smallest unsigned integer type holding ids below ``vocab_size``: uint16 up to 65,536 ids."""
    check_int(vocab_size, "vocab_size", minimum=1)
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def tokenizer_hash(tokenizer: BPETokenizer) -> str:
    """SHA-256 of the tokenizer's files: a token file is only read with the tokenizer that wrote it."""
    check_type(tokenizer, "tokenizer", BPETokenizer)
    files = tokenizer.vocab_files()
    return hashlib.sha256((files["vocab.json"] + files["merges.txt"]).encode("utf-8")).hexdigest()


_worker = None   # in each encoding process: (encode, end-of-text id, dtype)


def _start_worker(tokenizer: BPETokenizer, fast: bool, dtype: np.dtype) -> None:
    global _worker
    if fast:   # the processes are the parallelism (a forked child must not start the library's threads)
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        rust = tokenizer.fast()
        encode = lambda text: rust.encode(text).ids  # noqa: E731
    else:
        encode = tokenizer.encode
    _worker = (encode, tokenizer.special_id(END_OF_TEXT), dtype)


def _encode_piece(item: tuple[str, bool]) -> bytes:
    """The ids of one piece as bytes, with ``<|endoftext|>`` after a document's last piece."""
    text, last = item
    encode, eot, dtype = _worker
    ids = encode(text) + ([eot] if last else [])
    return np.asarray(ids, dtype=dtype).tobytes()


def _pieces_of(documents: Iterable[str | Path], piece_chars: int) -> Iterator[tuple[str, bool]]:
    """(piece, is the document's last piece) for every piece of every document, in order."""
    for document in documents:
        previous = None
        for piece in document_pieces(document, piece_chars):
            if previous is not None:
                yield previous, False
            previous = piece
        yield (previous if previous is not None else ""), True


def write_token_file(documents: Iterable[str | Path], tokenizer: BPETokenizer, path: str | Path, *,
                     workers: int = 1, fast: bool = False, piece_chars: int = PIECE_CHARS) -> dict:
    """Encode ``documents`` (strings or UTF-8 files), each followed by ``<|endoftext|>``, into the
    token file ``path`` and its header ``path.json``; returns the header. ``workers`` processes
    encode in parallel, with the Rust library if ``fast``. Written under temporary names and renamed
    into place, so an interrupted run leaves no half file behind."""
    check_type(tokenizer, "tokenizer", BPETokenizer)
    check_int(workers, "workers", minimum=1)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dtype = dtype_for(len(tokenizer))
    tmp = path.with_name(f".{path.name}.tmp")
    digest, count = hashlib.sha256(), 0
    pieces = _pieces_of(documents, piece_chars)
    pool = None
    if fast:
        import tokenizers  # noqa: F401  (a worker that cannot import it would be restarted forever)
    if workers > 1:   # forked workers start at once (Linux); spawned ones import the package first
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        pool = context.Pool(workers, _start_worker, (tokenizer, fast, dtype))
        encoded = _in_order(pool, pieces, ahead=2 * workers)
    else:
        _start_worker(tokenizer, fast, dtype)
        encoded = map(_encode_piece, pieces)
    try:
        with open(tmp, "wb") as out:
            for data in encoded:
                out.write(data)
                digest.update(data)
                count += len(data) // dtype.itemsize
            out.flush()
            os.fsync(out.fileno())
        header = {"tokens": count, "dtype": dtype.name, "vocab_size": len(tokenizer),
                  "tokenizer_sha256": tokenizer_hash(tokenizer), "sha256": digest.hexdigest()}
        header_path = path.with_name(path.name + ".json")
        header_path.unlink(missing_ok=True)            # no old header may vouch for the new file
        os.replace(tmp, path)
        write_atomically(header_path, (json.dumps(header, indent=1) + "\n").encode())
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if tmp.exists():
            tmp.unlink()
    return header


def _in_order(pool, pieces: Iterator, ahead: int) -> Iterator[bytes]:
    """``_encode_piece`` of every piece by ``pool``, in order, with at most ``ahead`` pieces in
    flight (``Pool.imap`` would read the whole corpus into its queue)."""
    pending: deque = deque()
    for piece in pieces:
        pending.append(pool.apply_async(_encode_piece, (piece,)))
        if len(pending) >= ahead:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


class TokenFile:
    """A token file written by :func:`write_token_file`, read as a memory map: only the windows
    drawn are read from disk. Opening checks the header: size, type, tokenizer and SHA-256."""

    def __init__(self, path: str | Path, tokenizer: BPETokenizer | None = None, verify: bool = True):
        self.path = Path(path)
        header_path = self.path.with_name(self.path.name + ".json")
        if not self.path.is_file() or not header_path.is_file():
            raise ValueError(f"{self.path} and its header {header_path.name} must both exist")
        self.header = json.loads(header_path.read_text())
        missing = {"tokens", "dtype", "vocab_size", "tokenizer_sha256", "sha256"} - set(self.header)
        if missing:
            raise ValueError(f"{header_path} lacks {sorted(missing)}: it is not a token file's header")
        dtype = np.dtype(self.header["dtype"])
        if self.path.stat().st_size != self.header["tokens"] * dtype.itemsize:
            raise ValueError(f"{self.path} has {self.path.stat().st_size} bytes; its header says "
                             f"{self.header['tokens']} tokens of {dtype.name}: the file is truncated or not this one")
        if tokenizer is not None and tokenizer_hash(tokenizer) != self.header["tokenizer_sha256"]:
            raise ValueError(f"{self.path} was written by another tokenizer")
        if verify and _file_sha256(self.path) != self.header["sha256"]:
            raise ValueError(f"{self.path} does not match the SHA-256 in its header: it is corrupt")
        self.ids = np.zeros(0, dtype)
        if self.header["tokens"]:
            with open(self.path, "rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(mapped, "madvise"):   # windows are drawn at random: read no further than asked
                mapped.madvise(mmap.MADV_RANDOM)
            self.ids = np.frombuffer(mapped, dtype=dtype)

    def __len__(self) -> int:
        return len(self.ids)

    def windows(self, batch_size: int, seq_len: int, generator: torch.Generator | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch of random windows ``(x, y)``, each (batch_size, seq_len) int64: the same draw
        as :func:`lmcourse.data.random_windows` on the whole stream, read from disk."""
        check_int(batch_size, "batch_size", minimum=1)
        check_int(seq_len, "seq_len", minimum=1)
        if len(self) <= seq_len:
            raise ValueError(f"{self.path} has {len(self)} tokens; windows of seq_len={seq_len} need more")
        starts = torch.randint(len(self) - seq_len, (batch_size,), generator=generator)
        rows = torch.from_numpy(np.stack([self.ids[s:s + seq_len + 1] for s in starts.tolist()]).astype(np.int64))
        return rows[:, :-1], rows[:, 1:]                                      # (B, T) and (B, T)

    def tensor(self, max_tokens: int | None = None) -> torch.Tensor:
        """The first ``max_tokens`` ids (None: all) as an int64 tensor in memory."""
        return torch.from_numpy(np.asarray(self.ids[:max_tokens], dtype=np.int64))


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()
