"""Pretrain the course's GPT at any size, on any text, on a laptop, a GPU or many (``torchrun``).

The same recipe as the shipped checkpoint (:mod:`lmcourse.pretrain`: byte-level BPE, random
windows, Adam with warm-up and cosine decay, clipping at 1), with every size a flag::

    python -m lmcourse.scale --out runs/tiny                                  # CPU, shipped corpora
    python -m lmcourse.scale --device cuda --text corpus/*.txt --out runs/gpt  # one GPU
    torchrun --standalone --nproc_per_node 8 -m lmcourse.scale --device cuda ...  # 8 GPUs

Under ``torchrun`` every process builds the same tokenizer and draws the same global batches;
:func:`lmcourse.train.fit` gives each rank its slice of every batch, so the trained weights are
those of one process on the whole batch. ``--batch-size`` is the global batch. Rank 0 writes a
Hugging Face directory that :meth:`lmcourse.gpt.GPT.from_pretrained` and ``transformers`` load.
"""
import argparse
import json
import time
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from lmcourse import cli, distributed
from lmcourse.cli import existing_file, nonnegative_int, output_directory, positive_float, positive_int
from lmcourse.data import lm_batches, random_windows
from lmcourse.gpt import GPT, GPTConfig, hf_state_dict, lm_loss
from lmcourse.pretrain import GPT_SPECIALS, gpt_token_streams, pretraining_text, warmup_cosine, write_directory
from lmcourse.seed import set_seed
from lmcourse.train import evaluate_loss, fit

#: the smallest vocabulary byte-level BPE can have: the 256 bytes and GPT's special tokens
MIN_VOCAB_SIZE = 256 + len(GPT_SPECIALS)
VALID_ROWS = 8  # the held-out stream is cut into this many rows for the validation loss


def read_documents(paths: list[Path]) -> tuple[list[str], list[str]]:
    """(train, valid) documents from text files, one document per file; every 20th file is held out."""
    if len(paths) < 2:
        raise ValueError(f"--text needs at least 2 files (one is held out for validation), got {len(paths)}")
    texts = [Path(p).read_text(encoding="utf-8") for p in sorted(paths)]
    valid = texts[::20]
    train = [t for i, t in enumerate(texts) if i % 20]
    return train, valid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_directory, required=True,
                        help="directory for the trained model (rank 0 writes it)")
    parser.add_argument("--text", type=existing_file, nargs="+", help="UTF-8 files, one document each, at least 2 "
                        "(default: the training articles of the shipped corpora)")
    parser.add_argument("--documents", type=positive_int, default=None,
                        help="with the shipped corpora: the first N articles of each")
    parser.add_argument("--bpe-documents", type=positive_int, default=2000,
                        help="learn the BPE merges on the first N training documents (pure Python: keep it small)")
    parser.add_argument("--device", type=cli.device, default="cpu",
                        help="cpu or cuda (under torchrun: one GPU per process)")
    parser.add_argument("--steps", type=positive_int, default=480)
    parser.add_argument("--batch-size", type=positive_int, default=32, help="windows per step, over all processes")
    parser.add_argument("--context", type=positive_int, default=128, help="tokens per window")
    parser.add_argument("--d-model", type=positive_int, default=96)
    parser.add_argument("--layers", type=positive_int, default=3)
    parser.add_argument("--heads", type=positive_int, default=3)
    parser.add_argument("--vocab-size", type=positive_int, default=2048,
                        help=f"at least {MIN_VOCAB_SIZE}: the 256 bytes and the {len(GPT_SPECIALS)} special tokens")
    parser.add_argument("--lr", type=positive_float, default=3e-3)
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="CPU threads per process (default: torch's)")
    args = parser.parse_args(argv)
    if args.d_model % args.heads:
        parser.error(f"--d-model {args.d_model} must be divisible by --heads {args.heads}")
    if args.vocab_size < MIN_VOCAB_SIZE:
        parser.error(f"--vocab-size must be at least {MIN_VOCAB_SIZE} (256 bytes and {len(GPT_SPECIALS)} special "
                     f"tokens), got {args.vocab_size}")
    if args.text is not None and len(args.text) < 2:
        parser.error(f"--text needs at least 2 files (one is held out for validation), got {len(args.text)}")
    if args.text is not None and args.documents is not None:
        parser.error("--documents picks articles of the shipped corpora: leave it out with --text")

    device = distributed.setup(args.device)
    rank, world_size = distributed.world()
    if args.batch_size % world_size:
        parser.error(f"--batch-size {args.batch_size} must be divisible by the {world_size} processes")
    set_seed(args.seed, num_threads=args.threads)
    if args.text:
        try:
            train, valid = read_documents(args.text)
        except UnicodeDecodeError as err:
            parser.error(f"--text: a file is not UTF-8 text ({err})")
    else:
        train, valid = pretraining_text("train", args.documents), pretraining_text("valid", args.documents)
    tokenizer, train_ids, valid_ids = gpt_token_streams(train, valid, args.vocab_size, args.bpe_documents)
    if len(train_ids) <= args.context:
        parser.error(f"--context {args.context} needs a training text longer than that; it has {len(train_ids)} "
                     "tokens (give --text more text)")
    if len(valid_ids) < 2 * VALID_ROWS:
        parser.error(f"--text: the held-out text (every 20th file, the first included) has {len(valid_ids)} tokens; "
                     f"the validation loss needs at least {2 * VALID_ROWS}")
    config = GPTConfig(vocab_size=len(tokenizer), context_size=args.context, d_model=args.d_model,
                       num_layers=args.layers, num_heads=args.heads)
    model = GPT(config)

    def batches(epoch: int):
        """The same global batches on every rank (fit hands each rank its slice)."""
        g = torch.Generator().manual_seed(args.seed)
        return (random_windows(train_ids, args.batch_size, args.context, g) for _ in range(args.steps))

    start = time.perf_counter()
    history = fit(model, lm_loss, batches, lr=args.lr, lr_schedule=warmup_cosine(args.steps), clip_grad_norm=1.0,
                  max_steps=args.steps, seed=None, device=device, desc="pretraining GPT")
    seconds = time.perf_counter() - start
    if rank == 0:
        valid_loss = evaluate_loss(model, lm_loss, lm_batches(valid_ids.to(device), VALID_ROWS, args.context),
                                   device=device)
        weights = {k: v.detach().float().cpu().contiguous() for k, v in hf_state_dict(model).items()}
        files = {"config.json": (json.dumps(config.to_hf(), indent=2, sort_keys=True) + "\n").encode(),
                 "model.safetensors": safetensors_bytes(weights),
                 **{n: c.encode("utf-8") for n, c in tokenizer.vocab_files().items()}}
        write_directory(args.out, files)
        tokens = args.steps * args.batch_size * args.context
        print(f"{sum(p.numel() for p in model.parameters()):,} parameters; {args.steps} steps on {world_size} "
              f"process(es) ({device.type}) in {seconds:.1f} s: {tokens / seconds:,.0f} tokens/s; "
              f"train loss {history.train_loss[-1]:.3f}, valid loss {valid_loss:.3f} nats/token; saved in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
