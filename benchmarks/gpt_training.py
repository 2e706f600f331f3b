"""GPT training: the course's GPT vs transformers' GPT2LMHeadModel, forward + backward + AdamW step.

Both models have the same configuration (4 layers, 4 heads, width 128, context 128, chapter 8's
BPE vocabulary of 512 tokens, no dropout) and the same weights: transformers' model is created
with a seed, saved, and loaded into the course's with ``GPT.from_pretrained``; their logits must
agree to 1e-5 before timing starts. Both train on the same batches, 16 windows of 128 bytes of the
news corpus (the values of the tokens do not change the cost), with the same loss and optimiser
(cross-entropy, AdamW). The figure is the ratio of tokens/s (target at least 1.1 on every kind of
CPU).

The check is the course's model FLOP/s utilisation (MFU): training FLOPs per token (6 per weight
of every matrix product, lm_head included, plus 12 L T d for attention scores and mixing, as in
the PaLM paper's appendix B) times tokens/s, over the peak FLOP/s this process measures on a
2048 x 2048 float32 matrix product (:func:`benchmarks.common.peak_matmul_flops`, the peak that also
sets the course's time budget in ``course_runtime``). The verdict line names that peak.

The details also time causal attention alone (forward and backward, 4 heads of width 32, 2048
tokens per batch) both ways that :func:`lmcourse.attention.causal_attention` chooses between:
batched matrix products, and PyTorch's fused kernel. They show where on this machine the one
overtakes the other, against the course's fixed switch at ``BATCHED_CAUSAL_MAX_POSITIONS``.
"""
import tempfile

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

from benchmarks.common import Result, check, interleaved_best, main, peak_matmul_flops, versions
from lmcourse.attention import BATCHED_CAUSAL_MAX_POSITIONS, batched_causal_attention
from lmcourse.data import news_documents, random_windows
from lmcourse.gpt import GPT, training_flops_per_token


def attention_milliseconds(lengths: tuple[int, ...], tokens: int, repeats: int) -> dict[str, dict[int, float]]:
    """Best ms of one forward + backward of causal attention at each length, batched products vs fused kernel."""
    h, d = 4, 32
    times = {"batched products": {}, "fused kernel": {}}
    for T in lengths:
        q, k, v = (torch.randn(max(1, tokens // T), h, T, d, requires_grad=True) for _ in range(3))
        grad = torch.randn_like(q)
        ways = {"batched products": lambda q=q, k=k, v=v, grad=grad: batched_causal_attention(q, k, v).backward(grad),
                "fused kernel": lambda q=q, k=k, v=v, grad=grad:
                    F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)}
        for way, seconds in interleaved_best(ways, repeats=repeats, warmup=2).items():
            times[way][T] = round(1000 * seconds, 2)
    return times


def run(smoke: bool) -> Result:
    L, H, d, T, B, V = (2, 2, 32, 32, 4, 512) if smoke else (4, 4, 128, 128, 16, 512)
    steps, repeats = (2, 1) if smoke else (10, 5)
    torch.manual_seed(0)
    hf_config = GPT2Config(vocab_size=V, n_positions=T, n_embd=d, n_layer=L, n_head=H,
                           activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0,
                           attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    theirs = GPT2LMHeadModel(hf_config)
    with tempfile.TemporaryDirectory() as tmp:
        theirs.save_pretrained(tmp)
        ours = GPT.from_pretrained(tmp)
    stream = torch.tensor(list(" ".join(news_documents("train")).encode()))   # bytes: ids < 256 < V
    g = torch.Generator().manual_seed(0)
    batches = [random_windows(stream, B, T, generator=g) for _ in range(steps)]
    ours.eval(), theirs.eval()
    with torch.no_grad():
        x = batches[0][0]
        parity = (ours(x) - theirs(input_ids=x).logits).abs().max().item()
    if parity > 1e-5:
        raise AssertionError(f"the two models disagree before training: max |logit difference| {parity:.2e}")
    ours.train(), theirs.train()

    def trainer(model, logits_of):
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0)

        def train_steps():
            for x, y in batches:
                loss = F.cross_entropy(logits_of(model, x).reshape(-1, V), y.reshape(-1))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
        return train_steps

    best = interleaved_best({"lmcourse": trainer(ours, lambda m, x: m(x)),
                             "transformers": trainer(theirs, lambda m, x: m(input_ids=x).logits)},
                            repeats=repeats)
    tokens = steps * B * T
    tok_s = {k: tokens / v for k, v in best.items()}
    peak = peak_matmul_flops(512 if smoke else 2048)
    flops = training_flops_per_token(ours)
    mfu = {k: v * flops / peak for k, v in tok_s.items()}
    attention = attention_milliseconds((16, 32) if smoke else (64, 128, 256, 512), tokens=B * T,
                                       repeats=1 if smoke else 10)
    return Result(
        name="gpt_training", figure=tok_s["lmcourse"] / tok_s["transformers"], target=1.1,
        unit="x transformers' tokens/s", smoke=smoke, note=f"peak matmul {peak / 1e9:.0f} GFLOP/s",
        details={"config": f"{L} layers, {H} heads, width {d}, context {T}, batch {B}, vocabulary {V}",
                 "parameters": sum(p.numel() for p in ours.parameters()),
                 "max |logit difference| before training": f"{parity:.1e}",
                 "tokens/s": {k: round(v) for k, v in tok_s.items()},
                 "training GFLOP per token": round(flops / 1e9, 5),
                 "peak matmul GFLOP/s": round(peak / 1e9, 1),
                 "model FLOP/s utilisation": {k: round(v, 3) for k, v in mfu.items()},
                 "causal attention ms (forward + backward) by length": attention,
                 "course's switch to the fused kernel": f"above {BATCHED_CAUSAL_MAX_POSITIONS} positions",
                 "versions": versions("torch", "transformers")},
        checks={"MFU": check(mfu["lmcourse"], 0.35, speed=True)})


if __name__ == "__main__":
    main(run)
