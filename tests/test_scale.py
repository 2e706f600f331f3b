"""The scale-up path: the Rust BPE encodes as the course's does, token files on disk equal the
in-memory stream, and a resumed run equals an uninterrupted one."""
import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from lmcourse import scale
from lmcourse.bpe import BPETokenizer
from lmcourse.data import news_documents, random_windows
from lmcourse.gpt import GPT
from lmcourse.pretrain import gpt_token_streams
from lmcourse.token_file import TokenFile, dtype_for, expand_sources, split_pieces, write_token_file

#: the characters where Python's and the Rust library's regular expressions could part ways
TRICKY = ["a_b __init__ x²+y½ Ⅻ 3.5% \x1c\x1d a\u00a0b \u2003x  \t\n  y 中文字 ١٢٣ é ̈a 🙂 '' 's 'S ǅ",
          " \x1c1 \x1c \x0b\x0c\x85 x", "It's 1,000,000 km² -- isn't it?\n\n  Indented\r\n\tline  "]
TINY = ["--steps", "6", "--batch-size", "4", "--context", "16", "--d-model", "16", "--layers", "1",
        "--heads", "2", "--vocab-size", "300", "--threads", "1", "--workers", "1"]


@pytest.fixture(scope="module")
def texts():
    return news_documents("train")[:40]


@pytest.fixture(scope="module")
def course_tokenizer(texts):
    return BPETokenizer.train(texts, vocab_size=600)


def test_the_rust_library_encodes_like_the_course_given_the_same_merges(texts, course_tokenizer):
    rust_learnt = BPETokenizer.train_fast(iter(texts), vocab_size=600)
    assert len(rust_learnt) == len(course_tokenizer) == 600
    held_out = news_documents("all") + TRICKY
    for tokenizer in (course_tokenizer, rust_learnt):
        rust = tokenizer.fast()
        for text in held_out:
            assert rust.encode(text).ids == tokenizer.encode(text)
        assert rust.decode(rust.encode(TRICKY[0]).ids) == TRICKY[0]
    # the merges learnt are the course's own where the two break no ties differently
    assert len(set(rust_learnt.merges) & set(course_tokenizer.merges)) > 0.8 * len(course_tokenizer.merges)


def test_pieces_are_cut_only_before_a_space_after_a_non_space(course_tokenizer):
    text = "One line.\nTwo  \n  three\n\nfour 4.5%  \t x'll y's\x1c z " * 50 + "".join(TRICKY)
    pieces = split_pieces(text, piece_chars=7)
    assert "".join(pieces) == text and len(pieces) > 100
    for before, piece in zip(pieces, pieces[1:]):
        assert piece[0].isspace() and not before[-1].isspace()
    assert [i for p in pieces for i in course_tokenizer.encode(p)] == course_tokenizer.encode(text)
    rust = course_tokenizer.fast()
    assert [i for p in pieces for i in rust.encode(p).ids] == rust.encode(text).ids
    assert split_pieces("x" * 50, piece_chars=7) == ["x" * 50]          # no place to cut: whole


@pytest.mark.parametrize("workers, fast", [(1, False), (2, False), (2, True)])
def test_a_token_file_holds_the_stream_and_draws_the_same_windows(tmp_path, texts, workers, fast):
    documents = [*texts[:20], "", *texts[20:]]                           # an empty file is <|endoftext|> alone
    tokenizer, stream, _ = gpt_token_streams(documents, texts[:1], vocab_size=400)
    files = []
    for i, text in enumerate(documents):
        files.append(tmp_path / f"{i:02d}.txt")
        files[-1].write_text(text, encoding="utf-8")
    header = write_token_file(files, tokenizer, tmp_path / "train.tokens", workers=workers, fast=fast,
                              piece_chars=300)
    tokens = TokenFile(tmp_path / "train.tokens", tokenizer)
    assert header["dtype"] == "uint16" and (tmp_path / "train.tokens").stat().st_size == 2 * len(stream)
    assert torch.equal(tokens.tensor(), stream)
    a = tokens.windows(6, 20, torch.Generator().manual_seed(3))
    b = random_windows(stream, 6, 20, torch.Generator().manual_seed(3))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_a_token_file_that_was_changed_is_refused(tmp_path, texts, course_tokenizer):
    path = tmp_path / "t.tokens"
    write_token_file(texts[:3], course_tokenizer, path)
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        TokenFile(path)
    path.write_bytes(bytes(data[:-2]))
    with pytest.raises(ValueError, match="truncated"):
        TokenFile(path)
    write_token_file(texts[:3], course_tokenizer, path)
    with pytest.raises(ValueError, match="another tokenizer"):
        TokenFile(path, BPETokenizer.train(texts, vocab_size=300))
    write_token_file([], course_tokenizer, path)                           # no documents: no tokens
    assert len(TokenFile(path)) == 0


def test_sources_are_files_directories_or_patterns(tmp_path):
    for name in ("a.txt", "b.txt", "sub/c.txt", "sub/.hidden"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    assert expand_sources([tmp_path]) == [tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "sub/c.txt"]
    assert expand_sources([str(tmp_path / "*.txt"), tmp_path / "a.txt"]) == [tmp_path / "a.txt", tmp_path / "b.txt"]
    assert expand_sources([str(tmp_path / "**/c.txt")]) == [tmp_path / "sub/c.txt"]
    with pytest.raises(ValueError, match="missing"):
        expand_sources([tmp_path / "missing*"])
    assert dtype_for(65536) == np.uint16 and dtype_for(65537) == np.uint32


def test_the_whole_path_on_a_small_corpus_of_files(tmp_path, texts):
    for i, text in enumerate(texts):
        (tmp_path / "corpus" / f"{i:02d}.txt").parent.mkdir(exist_ok=True)
        (tmp_path / "corpus" / f"{i:02d}.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    assert scale.main(["--out", str(out), "--text", str(tmp_path / "corpus"), "--tokenizer", "rust", *TINY]) == 0
    model, tokenizer = GPT.from_pretrained(out), BPETokenizer.from_pretrained(out)
    log = json.loads((out / "training_log.json").read_text())
    assert len(log["train_loss"]) == 6 and log["train_loss"][-1] < log["train_loss"][0]
    header = json.loads((tmp_path / "run.work" / "train.tokens.json").read_text())
    assert header["dtype"] == "uint16" and header["tokens"] > 10_000
    ids = torch.tensor([tokenizer.encode(texts[1])])[:, :16]
    assert model(ids).shape == (1, 16, len(tokenizer))


class Interrupted(Exception):
    pass


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    common = ["--documents", "4", *TINY, "--save-every", "2"]
    assert scale.main(["--out", str(tmp_path / "whole"), *common]) == 0

    saved = scale.save_state

    def save_then_stop(work, state):
        saved(work, state)
        if state["step"] == 4:
            raise Interrupted

    monkeypatch.setattr(scale, "save_state", save_then_stop)
    with pytest.raises(Interrupted):
        scale.main(["--out", str(tmp_path / "parts"), *common])
    monkeypatch.setattr(scale, "save_state", saved)
    with pytest.raises(SystemExit):      # the saved run is not overwritten by a fresh start
        scale.main(["--out", str(tmp_path / "parts"), *common])
    with pytest.raises(SystemExit):      # nor continued with other flags
        scale.main(["--out", str(tmp_path / "parts"), *common, "--lr", "1e-3", "--resume"])
    with pytest.raises(SystemExit):      # nor on other text
        scale.main(["--out", str(tmp_path / "parts"), *common[2:], "--documents", "5", "--resume"])
    with pytest.raises(SystemExit):      # the work directory cannot live in the output, which is replaced
        scale.main(["--out", str(tmp_path / "parts"), "--work", str(tmp_path / "parts" / "w"), *common])
    assert scale.main(["--out", str(tmp_path / "parts"), *common, "--resume"]) == 0

    whole, parts = (load_file(tmp_path / run / "model.safetensors") for run in ("whole", "parts"))
    assert all(torch.equal(whole[k], parts[k]) for k in whole)
    logs = [json.loads((tmp_path / d / "training_log.json").read_text()) for d in ("whole", "parts")]
    assert logs[0]["train_loss"] == logs[1]["train_loss"] and logs[0]["valid_loss"] == logs[1]["valid_loss"]
    # the comparison can fail: training changed the weights between the interruption and the end
    state = scale.load_state(tmp_path / "parts.work")
    assert state["step"] == 6 and logs[1]["train_loss"][3] != logs[1]["train_loss"][5]


def test_a_damaged_or_missing_training_state_is_refused(tmp_path):
    scale.save_state(tmp_path, {"step": 1, "x": torch.ones(3)})
    scale.save_state(tmp_path, {"step": 2, "x": torch.ones(3)})
    assert scale.load_state(tmp_path)["step"] == 2 and not (tmp_path / "state-1.pt").exists()
    data = bytearray((tmp_path / "state-2.pt").read_bytes())
    data[-30] ^= 1
    (tmp_path / "state-2.pt").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        scale.load_state(tmp_path)
    (tmp_path / "state-2.pt").unlink()
    with pytest.raises(ValueError, match="missing"):
        scale.load_state(tmp_path)
