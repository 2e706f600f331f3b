"""Where a training step of the Performance page's GPU run goes (needs a CUDA GPU).

The page's run (``python -m lmcourse.scale --device cuda ... --bf16 --compile``) took about 31 ms a
step where the model's FLOPs need about 3.4 ms at the GPU's measured peak. This script times the
same model and batch apart, on the same token file::

    python -m benchmarks.gpu_step --work runs/gpt-384.work --out gpu_step.json

1. the step as :func:`lmcourse.train.fit` takes it (the scale command's loop: a batch drawn on the
   host from the memory-mapped token file, copied, one step, the loss read back every step);
2. drawing a batch of windows on the host alone;
3. the step with every batch already on the GPU and the loss read back once at the end, so the host
   can queue steps ahead of the GPU (the GPU's own time shows);
4. the same with a four times larger batch (more work per kernel launch);
5. both compiled with CUDA graphs (one launch replays a step's kernels) and a fused AdamW.

The profiler sums the kernels' own time in 3-5, against the step's wall time.

Each is timed with and without ``torch.compile`` under bf16 autocast, after warm-up steps.
"""
import argparse
import json
import time

import torch

from benchmarks.common import peak_matmul_flops
from lmcourse.gpt import GPT, GPTConfig, lm_loss, training_flops_per_token
from lmcourse.pretrain import warmup_cosine
from lmcourse.token_file import TokenFile
from lmcourse.train import fit

CONFIG = {"d_model": 384, "num_layers": 12, "num_heads": 6, "context_size": 256}
BATCH = 64


def new_model(vocab_size: int, compiled: bool, graphs: bool = False):
    """(model, what is trained, optimiser); ``graphs``: compiled with CUDA graphs (mode
    "reduce-overhead": each step's kernels replayed with one launch) and a fused AdamW."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=vocab_size, **CONFIG)).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.0, fused=graphs or None)
    trained = torch.compile(model, mode="reduce-overhead") if graphs else torch.compile(model) if compiled else model
    return model, trained, optimizer


def loss_fn(m, batch):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return lm_loss(m, batch)


def fit_ms(train: TokenFile, compiled: bool, warm: int, steps: int) -> float:
    """ms per step of :func:`fit` as the scale command runs it (batches drawn on the host)."""
    model, trained, optimizer = new_model(train.header["vocab_size"], compiled)
    g = torch.Generator().manual_seed(0)
    batches = lambda n: (lambda epoch: (train.windows(BATCH, CONFIG["context_size"], g) for _ in range(n)))  # noqa: E731
    schedule = warmup_cosine(warm + steps)
    fit(trained, loss_fn, batches(warm), optimizer=optimizer, clip_grad_norm=1.0, max_steps=warm, seed=None,
        device="cuda", progress=False, lr_schedule=schedule)
    torch.cuda.synchronize()
    start = time.perf_counter()
    fit(trained, loss_fn, batches(steps), optimizer=optimizer, clip_grad_norm=1.0, max_steps=steps, seed=None,
        device="cuda", progress=False, lr_schedule=schedule)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e3


def queued_ms(train: TokenFile, compiled: bool, batch: int, warm: int, steps: int, graphs: bool = False
              ) -> tuple[float, float, int]:
    """(ms per step, kernel ms per step, kernels per step) with batches pre-loaded on the GPU and one
    read-back at the end."""
    model, trained, optimizer = new_model(train.header["vocab_size"], compiled, graphs)
    g = torch.Generator().manual_seed(0)
    data = [tuple(t.cuda() for t in train.windows(batch, CONFIG["context_size"], g)) for _ in range(warm + steps)]

    def step(b):
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        loss = loss_fn(trained, b)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.detach().clone()

    for b in data[:warm]:
        step(b)
    torch.cuda.synchronize()
    start = time.perf_counter()
    losses = [step(b) for b in data[warm:]]
    torch.stack(losses).float().mean().item()
    wall = (time.perf_counter() - start) / steps * 1e3
    # the kernels' own time, summed by the profiler over 10 steps
    kernel_ms, kernels = float("nan"), -1
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for b in data[warm:warm + 10]:
                step(b)
            torch.cuda.synchronize()
        kernel_ms = sum(e.self_device_time_total for e in prof.key_averages()) / 1e3 / 10
        kernels = sum(e.count for e in prof.key_averages() if e.self_device_time_total > 0) // 10
    except Exception as err:      # the profiler is a bonus: report and go on
        print(f"profiler failed: {err!r}", flush=True)
    return wall, kernel_ms, kernels


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, help="the scale command's work directory (its train.tokens)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--steps", type=int, default=100, help="timed steps per measurement")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        parser.error("needs a CUDA GPU")
    train = TokenFile(f"{args.work}/train.tokens")
    peak = peak_matmul_flops(8192, device="cuda", dtype=torch.bfloat16) / 1e12   # TFLOP/s, best of 10
    with torch.device("meta"):                  # shapes only: the FLOP count needs no weights
        probe = GPT(GPTConfig(vocab_size=train.header["vocab_size"], **CONFIG))
    flops = training_flops_per_token(probe)
    g = torch.Generator().manual_seed(0)
    for _ in range(10):
        train.windows(BATCH, CONFIG["context_size"], g)
    start = time.perf_counter()
    for _ in range(args.steps):
        train.windows(BATCH, CONFIG["context_size"], g)
    sample_ms = (time.perf_counter() - start) / args.steps * 1e3
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "peak_tflops": peak,
           "training_flops_per_token": flops, "batch": BATCH, "config": CONFIG, "steps": args.steps,
           "host_windows_ms": sample_ms, "runs": []}
    for compiled in (False, True):
        out["runs"].append({"loop": "fit", "compiled": compiled, "batch": BATCH,
                            "ms_per_step": fit_ms(train, compiled, 20, args.steps)})
        for batch in (BATCH, 4 * BATCH):
            wall, kernel_ms, kernels = queued_ms(train, compiled, batch, 20, args.steps)
            out["runs"].append({"loop": "queued", "compiled": compiled, "batch": batch, "ms_per_step": wall,
                                "kernel_ms_per_step": kernel_ms, "kernels_per_step": kernels})
        torch._dynamo.reset()
    for batch in (BATCH, 4 * BATCH):
        try:
            wall, kernel_ms, kernels = queued_ms(train, True, batch, 20, args.steps, graphs=True)
            out["runs"].append({"loop": "queued, CUDA graphs", "compiled": True, "batch": batch, "ms_per_step": wall,
                                "kernel_ms_per_step": kernel_ms, "kernels_per_step": kernels})
        except Exception as err:
            print(f"CUDA graphs failed: {err!r}", flush=True)
        torch._dynamo.reset()
    tokens = lambda r: r["batch"] * CONFIG["context_size"]   # noqa: E731
    for r in out["runs"]:
        r["tokens_per_s"] = tokens(r) / r["ms_per_step"] * 1e3
        r["mfu"] = r["tokens_per_s"] * flops / (peak * 1e12)
        print(json.dumps(r), flush=True)
    print(f"peak {peak:.1f} TFLOP/s; host windows {sample_ms:.3f} ms per batch of {BATCH}")
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
