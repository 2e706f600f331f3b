"""Pretrain the course's GPT at any size, on any text, on a laptop, a GPU or many (``torchrun``).

The same recipe as the shipped checkpoint (:mod:`lmcourse.pretrain`: byte-level BPE, random
windows, Adam with warm-up and cosine decay, clipping at 1), with every size a flag::

    python -m lmcourse.scale --out runs/tiny                                  # CPU, shipped corpora
    python -m lmcourse.scale --device cuda --text corpus/ --out runs/gpt     # one GPU
    torchrun --standalone --nproc_per_node 8 -m lmcourse.scale --device cuda ...  # 8 GPUs

The text is tokenized once, in parallel, into token files (:mod:`lmcourse.token_file`) in the
work directory (``--work``, default ``OUT.work``), and training reads its windows from them as
memory maps, so a corpus need not fit in memory. Every ``--save-every`` steps the work directory
receives the training state (weights, optimiser, step, data generator, random state), from which
``--resume`` continues exactly as if the run had not stopped.

Under ``torchrun`` every process builds the same tokenizer and draws the same global batches;
:func:`lmcourse.train.fit` gives each rank its slice of every batch, so the trained weights are
those of one process on the whole batch. ``--batch-size`` is the global batch. Rank 0 writes a
Hugging Face directory that :meth:`lmcourse.gpt.GPT.from_pretrained` and ``transformers`` load,
with ``training_log.json``: the loss of every step, the validation losses and the speed.
"""
import argparse
import contextlib
import hashlib
import io
import json
import os
import time
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from lmcourse import cli, distributed
from lmcourse.bpe import BPETokenizer
from lmcourse.cli import nonnegative_int, output_directory, positive_float, positive_int
from lmcourse.gpt import GPT, GPTConfig, hf_state_dict, lm_loss, training_flops_per_token
from lmcourse.pretrain import GPT_SPECIALS, pretraining_text, unigram_loss, warmup_cosine, write_directory
from lmcourse.seed import set_seed
from lmcourse.token_file import TokenFile, document_pieces, expand_sources, write_token_file
from lmcourse.train import evaluate_loss, fit, write_atomically

#: the smallest vocabulary byte-level BPE can have: the 256 bytes and GPT's special tokens
MIN_VOCAB_SIZE = 256 + len(GPT_SPECIALS)
STATE = "state.json"   # in the work directory: names the latest training state and its SHA-256
VALID_WINDOWS = 64   # the validation loss: the mean over this many windows spread over the held-out text
#: flags that a resumed run must share with the run it continues
RUN_FLAGS = ("text", "documents", "bpe_documents", "tokenizer", "steps", "batch_size", "context", "d_model",
             "layers", "heads", "vocab_size", "lr", "seed")


def split_documents(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(train, valid) files, one document per file: every 20th file (the first included) is held out."""
    if len(paths) < 2:
        raise ValueError(f"--text needs at least 2 files (one is held out for validation), got {len(paths)}")
    return [p for i, p in enumerate(paths) if i % 20], paths[::20]


def learn_tokenizer(train: list, args) -> BPETokenizer:
    """Byte-level BPE learnt on the first ``--bpe-documents`` training documents (strings or files)."""
    texts = (piece for document in train[:args.bpe_documents] for piece in document_pieces(document))
    if args.tokenizer == "rust":
        return BPETokenizer.train_fast(texts, args.vocab_size, specials=GPT_SPECIALS)
    return BPETokenizer.train(texts, args.vocab_size, specials=GPT_SPECIALS)


def token_recipe(train: list, valid: list, args) -> dict:
    """What the token files depend on: the documents (paths and sizes, or hashes of strings) and the
    tokenizer's flags. Equal recipes reuse the files."""
    documents = train + valid
    return {"sources": [str(d) if isinstance(d, Path) else hashlib.sha256(d.encode()).hexdigest() for d in documents],
            "bytes": [d.stat().st_size if isinstance(d, Path) else len(d.encode()) for d in documents],
            "tokenizer": args.tokenizer, "vocab_size": args.vocab_size, "bpe_documents": args.bpe_documents}


def prepare_tokens(work: Path, recipe: dict, train: list, valid: list, args
                   ) -> tuple[BPETokenizer, TokenFile, TokenFile]:
    """The tokenizer and the two token files in ``work``, made once and reused while ``recipe`` holds.

    Under ``torchrun`` the process of global rank 0 makes them, before any process group exists (so
    no collective times out however long it takes), and the others wait for ``work/tokens.json``:
    on several machines ``work`` must be a folder that all of them see.
    """
    recipe_file = work / "tokens.json"
    made = lambda: recipe_file.is_file() and json.loads(recipe_file.read_text()) == recipe  # noqa: E731
    if int(os.environ.get("RANK", "0")) == 0 and not made():
        recipe_file.unlink(missing_ok=True)
        start = time.perf_counter()
        tokenizer = learn_tokenizer(train, args)
        learnt = time.perf_counter()
        write_directory(work / "tokenizer", {n: c.encode("utf-8") for n, c in tokenizer.vocab_files().items()})
        fast, workers = args.tokenizer == "rust", args.workers
        header = write_token_file(train, tokenizer, work / "train.tokens", workers=workers, fast=fast)
        write_token_file(valid, tokenizer, work / "valid.tokens", workers=workers, fast=fast)
        seconds = time.perf_counter() - learnt
        print(f"tokenizer learnt in {learnt - start:.1f} s; {header['tokens']:,} training tokens written in "
              f"{seconds:.1f} s by {workers} process(es)", flush=True)
        write_atomically(recipe_file, (json.dumps(recipe) + "\n").encode())
    while not made():          # another rank is making them (torchrun ends every rank if it fails)
        time.sleep(1)
    tokenizer = BPETokenizer.from_pretrained(work / "tokenizer")
    return tokenizer, TokenFile(work / "train.tokens", tokenizer), TokenFile(work / "valid.tokens", tokenizer)


def save_state(work: Path, state: dict) -> None:
    """Write the training state to ``work/state-STEP.pt``, then replace the manifest ``work/state.json``
    (its name and SHA-256) in one rename, then remove older states: an interruption at any moment
    leaves a manifest that names a whole file."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data = buffer.getvalue()
    name = f"state-{state['step']}.pt"
    manifest = {"file": name, "sha256": hashlib.sha256(data).hexdigest(), "step": state["step"]}
    write_atomically(work / name, data)
    write_atomically(work / STATE, (json.dumps(manifest) + "\n").encode())
    for old in work.glob("state-*.pt"):
        if old.name != name:
            old.unlink()


def load_state(work: Path) -> dict:
    """The training state that ``work/state.json`` names; ``ValueError`` if that file is damaged."""
    manifest = json.loads((work / STATE).read_text())
    path = work / manifest["file"]
    data = path.read_bytes() if path.is_file() else b""
    if hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise ValueError(f"{path} does not match the SHA-256 in {STATE}: it is missing or damaged")
    return torch.load(io.BytesIO(data), weights_only=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_directory, required=True,
                        help="directory for the trained model (rank 0 writes it)")
    parser.add_argument("--work", type=output_directory, default=None,
                        help="directory for the token files and the training state (default: OUT.work)")
    parser.add_argument("--text", nargs="+", help="UTF-8 files, directories or glob patterns, one document per "
                        "file, at least 2 files (default: the training articles of the shipped corpora)")
    parser.add_argument("--documents", type=positive_int, default=None,
                        help="with the shipped corpora: the first N articles of each")
    parser.add_argument("--tokenizer", choices=("course", "rust"), default="course",
                        help="learn and apply the BPE with the course's Python code or the Rust tokenizers "
                             "library (same ids for the same merges; rust for corpora of gigabytes)")
    parser.add_argument("--bpe-documents", type=positive_int, default=2000,
                        help="learn the BPE merges on the first N training documents")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count(),
                        help="processes that tokenize the text (default: one per CPU)")
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
    parser.add_argument("--bf16", action="store_true", help="compute in bfloat16 under autocast (GPUs)")
    parser.add_argument("--compile", action="store_true", help="compile the model with torch.compile")
    parser.add_argument("--save-every", type=positive_int, default=1000,
                        help="save the training state and measure the validation loss every N steps")
    parser.add_argument("--resume", action="store_true", help="continue the run saved in the work directory")
    args = parser.parse_args(argv)
    if args.d_model % args.heads:
        parser.error(f"--d-model {args.d_model} must be divisible by --heads {args.heads}")
    if args.vocab_size < MIN_VOCAB_SIZE:
        parser.error(f"--vocab-size must be at least {MIN_VOCAB_SIZE} (256 bytes and {len(GPT_SPECIALS)} special "
                     f"tokens), got {args.vocab_size}")
    if args.text is not None and args.documents is not None:
        parser.error("--documents picks articles of the shipped corpora: leave it out with --text")
    out = args.out.resolve()
    work = (args.work or out.with_name(out.name + ".work")).resolve()
    if work == out or out in work.parents or work in out.parents:
        parser.error(f"--work {work} and --out {out} must not contain each other (--out is replaced at the end)")
    if (work / STATE).exists() and not args.resume:
        parser.error(f"--work {work} holds a saved run: add --resume to continue it, or choose another --out or --work")
    if args.resume and not (work / STATE).exists():
        parser.error(f"--resume: {work} holds no saved run")
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if args.batch_size % world_size:
        parser.error(f"--batch-size {args.batch_size} must be divisible by the {world_size} processes")
    if args.text:
        try:
            train, valid = split_documents(expand_sources(args.text))
        except ValueError as err:
            parser.error(f"--text: {err}")
    else:
        train, valid = pretraining_text("train", args.documents), pretraining_text("valid", args.documents)

    recipe = token_recipe(train, valid, args)
    most_tokens = sum(recipe["bytes"][:len(train)]) + len(train)   # a token is at least a byte, plus one per document
    if most_tokens <= args.context:   # known too short before tokenizing
        parser.error(f"--context {args.context} needs a training text longer than that; it has at most "
                     f"{most_tokens} tokens (give --text more text)")
    state = load_state(work) if args.resume else None
    if state is not None and state["tokens"]["recipe"] != recipe:
        parser.error("--resume: the text or the tokenizer's flags differ from the saved run's (files added or "
                     "changed under --text?); they must be the same")
    try:
        tokenizer, train_ids, valid_ids = prepare_tokens(work, recipe, train, valid, args)
    except UnicodeDecodeError as err:
        parser.error(f"--text: a file is not UTF-8 text ({err})")
    tokens = {"recipe": recipe, "train_sha256": train_ids.header["sha256"], "valid_sha256": valid_ids.header["sha256"]}
    if state is not None and state["tokens"] != tokens:
        parser.error(f"--resume: the token files in {work} are not those the saved run read")
    if len(train_ids) <= args.context:
        parser.error(f"--context {args.context} needs a training text longer than that; it has {len(train_ids)} "
                     "tokens (give --text more text)")
    if len(valid_ids) <= args.context:
        parser.error(f"--text: the held-out text (every 20th file, the first included) has {len(valid_ids)} tokens; "
                     f"the validation loss needs more than --context {args.context}")

    device = distributed.setup(args.device)     # after tokenizing: no collective waits on it
    rank = distributed.world()[0]
    set_seed(args.seed, num_threads=args.threads)
    config = GPTConfig(vocab_size=len(tokenizer), context_size=args.context, d_model=args.d_model,
                       num_layers=args.layers, num_heads=args.heads)
    model = GPT(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    data_generator = torch.Generator().manual_seed(args.seed)
    run = {flag: getattr(args, flag) for flag in RUN_FLAGS}
    log = {"run": run, "train_loss": [], "valid_loss": [], "segments": []}
    if state is not None:
        changed = [f"--{k.replace('_', '-')}" for k in RUN_FLAGS if state["run"].get(k) != run[k]]
        if changed:
            parser.error(f"--resume: {' '.join(changed)} differ from the saved run's; they must be the same")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        data_generator.set_state(state["data_generator"])
        torch.set_rng_state(state["torch_rng"])
        log = json.loads(state["log"])
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    trained = torch.compile(model) if args.compile else model
    autocast = (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if args.bf16 else contextlib.nullcontext
    schedule = warmup_cosine(args.steps)

    def loss_fn(m, batch):
        with autocast():
            return lm_loss(m, batch)

    def validation_loss() -> float:
        g = torch.Generator().manual_seed(args.seed)
        batches = [valid_ids.windows(8, args.context, g) for _ in range(VALID_WINDOWS // 8)]
        return evaluate_loss(trained, loss_fn, batches, device=device)

    step, first_segment = len(log["train_loss"]), True
    while step < args.steps:
        n = min(args.save_every, args.steps - step)
        start = time.perf_counter()
        history = fit(trained, loss_fn, lambda epoch, n=n: (train_ids.windows(args.batch_size, args.context,
                                                                              data_generator) for _ in range(n)),
                      optimizer=optimizer, lr_schedule=lambda s, first=step: schedule(s + first), clip_grad_norm=1.0,
                      max_steps=n, seed=None, device=device, desc=f"steps {step + 1}-{step + n} of {args.steps}")
        if device.type == "cuda":
            torch.cuda.synchronize()
        log["segments"].append({"steps": n, "seconds": time.perf_counter() - start, "device": device_name,
                                "warm_up": first_segment})    # a start's first segment compiles and warms up
        first_segment = False
        log["train_loss"] += history.train_loss
        step += n
        if rank == 0:
            log["valid_loss"].append([step, validation_loss()])
            save_state(work, {"step": step, "run": run, "tokens": tokens, "model": model.state_dict(),
                                    "optimizer": optimizer.state_dict(), "data_generator": data_generator.get_state(),
                                    "torch_rng": torch.get_rng_state(), "log": json.dumps(log)})
            print(f"step {step}: train loss {log['train_loss'][-1]:.3f}, valid loss {log['valid_loss'][-1][1]:.3f}",
                  flush=True)
        if world_size > 1:
            torch.distributed.barrier()

    if rank == 0:
        timed = ([s for s in log["segments"] if not s["warm_up"] and s["device"] == device_name]
                 or log["segments"][-1:])
        seconds = sum(s["seconds"] for s in timed)
        tokens_per_s = sum(s["steps"] for s in timed) * args.batch_size * args.context / seconds
        flops = training_flops_per_token(model)
        valid_sample = valid_ids.tensor(1 << 20)
        log.update(device=device_name,
                   processes=world_size, parameters=sum(p.numel() for p in model.parameters()),
                   tokens_per_s=tokens_per_s, training_flops_per_token=flops,
                   unigram_loss=unigram_loss(train_ids.tensor(1 << 24), valid_sample, len(tokenizer)))
        weights = {k: v.detach().float().cpu().contiguous() for k, v in hf_state_dict(model).items()}
        files = {"config.json": (json.dumps(config.to_hf(), indent=2, sort_keys=True) + "\n").encode(),
                 "model.safetensors": safetensors_bytes(weights), "training_log.json": json.dumps(log).encode(),
                 **{n: c.encode("utf-8") for n, c in tokenizer.vocab_files().items()}}
        write_directory(args.out, files)
        print(f"{log['parameters']:,} parameters; {args.steps} steps on {world_size} process(es) ({log['device']}): "
              f"{tokens_per_s:,.0f} tokens/s, {tokens_per_s * flops / 1e12:.2f} model TFLOP/s; train loss "
              f"{log['train_loss'][-1]:.3f}, valid loss {log['valid_loss'][-1][1]:.3f} nats/token (unigram "
              f"{log['unigram_loss']:.3f}); saved in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
