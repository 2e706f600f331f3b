"""Course-made pretrained checkpoints: the recipe that makes each one, and the loader that checks it.

A chapter trains its model live for a minute so that a reader sees pretraining happen; the
experiments that need a well-trained model load one of these instead. Each is pretrained on the
training articles of both shipped corpora, Wikipedia (what BERT pretrained on, with books) and
news (:mod:`lmcourse.data`), under the reference numerics settings, on one thread, seeded, so that
the command below rebuilds the shipped files byte for byte::

    python -m lmcourse.pretrain gpt bert elmo electra     # or: make pretrain
    python -m lmcourse.pretrain --smoke --out /tmp/ckpt   # a minute: the same code, tiny settings

Every checkpoint is a directory in Hugging Face layout (``config.json``, ``model.safetensors`` in
float16, tokenizer files); GPT and BERT use the exact names of ``GPT2LMHeadModel`` and
``BertForPreTraining``, so ``transformers`` loads them too. ``checkpoints/manifest.json`` records
each file's SHA-256, the command, the training settings and the held-out losses measured at the end.
:func:`load_pretrained` refuses files whose hash differs.
"""
import argparse
import fcntl
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load as safetensors_load, save as safetensors_bytes

from lmcourse.bert import (
    BertConfig,
    BertForPreTraining,
    hf_state_dict as bert_hf_state,
    pretraining_losses,
    sinusoidal_positions,
)
from lmcourse.bpe import END_OF_TEXT, BPETokenizer
from lmcourse.cli import output_directory
from lmcourse.data import lm_batches, news_documents, random_windows, wiki_articles
from lmcourse.electra import BigramClozeGenerator, ReplacedTokenDetector, detection_metrics, rtd_batches, rtd_loss
from lmcourse.elmo import BiLM, bilm_loss
from lmcourse.gpt import GPT, GPTConfig, hf_state_dict as gpt_hf_state, lm_loss
from lmcourse.masking import mask_tokens
from lmcourse.mlm_eval import unigram_loss
from lmcourse.seed import set_seed
from lmcourse.tokenize import WordPieceTokenizer, train_wordpiece, word_tokenize
from lmcourse.train import evaluate_loss, fit, write_atomically
from lmcourse.validate import check_int, check_type, load_safetensors
from lmcourse.vocab import Vocab

NAMES = ("gpt", "bert", "elmo", "electra")
CHECKPOINTS = Path(__file__).parent / "checkpoints"
MANIFEST = CHECKPOINTS / "manifest.json"
#: GPT-1's fine-tuning tokens (Radford et al. 2018), reserved now and learned when fine-tuning
GPT_SPECIALS = (END_OF_TEXT, "<|start|>", "<|delim|>", "<|extract|>")


@dataclass(frozen=True)
class Recipe:
    """How long one checkpoint trains and how large its model and vocabulary are."""
    vocab_size: int
    d_model: int
    num_layers: int
    seq_len: int        # tokens per training window
    batch_size: int
    steps: int
    lr: float
    documents: int | None = None   # train on the first ``documents`` articles of each corpus (None: all)
    position_scale: float = 0.0    # BERT: > 0 starts the learned position table as this times sinusoids


RECIPES = {
    "gpt": Recipe(vocab_size=2048, d_model=96, num_layers=3, seq_len=128, batch_size=32, steps=960, lr=3e-3),
    "bert": Recipe(vocab_size=2048, d_model=96, num_layers=3, seq_len=32, batch_size=128, steps=2400, lr=1e-3,
                   position_scale=0.1),
    "elmo": Recipe(vocab_size=4000, d_model=96, num_layers=2, seq_len=32, batch_size=32, steps=5000, lr=1e-2),
    "electra": Recipe(vocab_size=4000, d_model=96, num_layers=3, seq_len=64, batch_size=32, steps=1800, lr=3e-3),
}
SMOKE = {name: Recipe(vocab_size={"gpt": 300, "bert": 600}.get(name, 200), d_model=16, num_layers=1,
                      seq_len=16, batch_size=4, steps=3, lr=1e-3, documents=4,
                      **({"position_scale": 0.1} if name == "bert" else {}))
         for name in NAMES}
#: BERT's curve: the masked-LM loss on held-out windows, every ``CURVE_EVERY`` steps
CURVE_EVERY = 100


def pretraining_text(split: str, documents: int | None = None) -> list[str]:
    """The articles the checkpoints learn from: Wikipedia's, then the news corpus's, of ``split``."""
    wiki, news = wiki_articles(split), news_documents(split)
    return wiki[:documents] + news[:documents]


def warmup_cosine(steps: int, warmup_fraction: float = 0.05):
    """Learning-rate multiplier ``step -> [0, 1]``: linear warm-up, then cosine decay to 0."""
    warmup = max(1, round(warmup_fraction * steps))
    return lambda step: min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(step, steps) / steps))


# ---------------------------------------------------------------------------------------------
# The four recipes: each returns (files, record), files = {name: bytes}, record = what it measured
# ---------------------------------------------------------------------------------------------
def gpt_token_streams(train: list[str], valid: list[str], vocab_size: int, bpe_documents: int | None = None
                      ) -> tuple[BPETokenizer, torch.Tensor, torch.Tensor]:
    """(tokenizer, train ids, valid ids) for the GPT recipe: byte-level BPE learnt on the first
    ``bpe_documents`` training documents (None: all), every document ended by ``<|endoftext|>``."""
    tokenizer = BPETokenizer.train(train[:bpe_documents], vocab_size=vocab_size, specials=GPT_SPECIALS)
    eot = tokenizer.special_id(END_OF_TEXT)
    stream = lambda docs: torch.tensor([i for d in docs for i in tokenizer.encode(d) + [eot]])  # noqa: E731
    return tokenizer, stream(train), stream(valid)


def _gpt(r: Recipe):
    train, valid = pretraining_text("train", r.documents), pretraining_text("valid", r.documents)
    tokenizer, train_ids, valid_ids = gpt_token_streams(train, valid, r.vocab_size)
    config = GPTConfig(vocab_size=len(tokenizer), context_size=r.seq_len, d_model=r.d_model,
                       num_layers=r.num_layers, num_heads=max(1, r.d_model // 32))
    set_seed(0)
    model = GPT(config)
    g = torch.Generator().manual_seed(0)
    batches = [random_windows(train_ids, r.batch_size, r.seq_len, g) for _ in range(r.steps)]
    fit(model, lm_loss, batches, lr=r.lr, lr_schedule=warmup_cosine(r.steps), clip_grad_norm=1.0,
        seed=None, desc="pretraining GPT")
    model.eval()
    with torch.no_grad():
        valid_loss = evaluate_loss(model, lm_loss, lm_batches(valid_ids, 8, r.seq_len))
    files = {"config.json": _json(config.to_hf()), "model.safetensors": _weights(gpt_hf_state(model)),
             **{n: c.encode("utf-8") for n, c in tokenizer.vocab_files().items()}}
    return files, {"tokens_seen": r.steps * r.batch_size * r.seq_len, "train_tokens": len(train_ids),
                   "valid_loss": valid_loss, "valid_unigram_loss": unigram_loss(train_ids, valid_ids, len(tokenizer))}


def _bert(r: Recipe):
    """Masked-LM pretraining on windows of running text, RoBERTa's recipe (Liu et al. 2019): no
    next-sentence task (the NSP head stays as initialised) and fresh masks for every batch. One
    departure from BERT's own recipe lets so small a model leave the unigram plateau within minutes
    (chapter 9 measures it): the position table starts as scaled sinusoids instead of random."""
    tokenizer, train_ids, valid_ids = bert_token_streams(r)
    model, curve = bert_pretraining_run(r, tokenizer, train_ids, valid_ids, seed=0)
    held_out = held_out_masked_windows(valid_ids, tokenizer, r.seq_len)
    metrics = masked_metrics(model, held_out)
    targets = torch.cat([b["mlm_labels"][b["mlm_labels"] >= 0] for b in held_out])
    most_frequent = torch.bincount(train_ids, minlength=len(tokenizer)).argmax()
    config = model.config
    files = {"config.json": _json({**config.to_hf(), "architectures": ["BertForPreTraining"]}),
             "model.safetensors": _weights(bert_hf_state(model)),
             "vocab.txt": ("\n".join(tokenizer.itos) + "\n").encode("utf-8")}
    return files, {"tokens_seen": r.steps * r.batch_size * r.seq_len, "train_tokens": len(train_ids),
                   "valid_mlm_loss": metrics["loss"], "valid_mlm_accuracy": metrics["accuracy"],
                   "valid_mlm_distinct_predictions": metrics["distinct predictions"],
                   "valid_mlm_unigram_loss": unigram_loss(train_ids, targets, len(tokenizer)),
                   "valid_mlm_most_frequent_accuracy": (targets == most_frequent).double().mean().item(),
                   "curve": curve}


def bert_token_streams(r: Recipe) -> tuple[WordPieceTokenizer, torch.Tensor, torch.Tensor]:
    """(WordPiece tokenizer learnt on the training articles, train ids, valid ids): each article's
    pieces followed by [SEP]."""
    train, valid = pretraining_text("train", r.documents), pretraining_text("valid", r.documents)
    tokenizer = train_wordpiece(train, vocab_size=r.vocab_size, criterion="frequency")
    stream = lambda docs: torch.tensor([i for d in docs for i in tokenizer.encode(d).input_ids[1:]])  # noqa: E731
    return tokenizer, stream(train), stream(valid)


def bert_pretraining_run(r: Recipe, tokenizer: WordPieceTokenizer, train_ids: torch.Tensor, valid_ids: torch.Tensor,
                         seed: int = 0, stop: int | None = None) -> tuple[BertForPreTraining, dict[str, list]]:
    """Train a BERT under recipe ``r`` with ``seed``, for its first ``stop`` steps (None: all):
    (model, curve). The curve holds, every ``CURVE_EVERY`` steps, the step, the mean training loss
    since the last point (over the chosen positions, 80/10/10) and the held-out masked-LM loss, every
    chosen position [MASK]ed."""
    check_int(seed, "seed", minimum=0)
    stop = r.steps if stop is None else stop
    check_int(stop, "stop", minimum=1, maximum=r.steps)
    config = BertConfig(vocab_size=len(tokenizer), d_model=r.d_model, num_layers=r.num_layers,
                        num_heads=max(1, r.d_model // 32), d_ff=4 * r.d_model, max_len=r.seq_len)
    set_seed(seed)
    model = BertForPreTraining(config)
    if r.position_scale:
        sinusoidal_positions(model.bert, r.position_scale)
    g = torch.Generator().manual_seed(seed)
    batches = [_masked_windows(train_ids, tokenizer, r.batch_size, r.seq_len, g) for _ in range(stop)]
    held_out = held_out_masked_windows(valid_ids, tokenizer, r.seq_len, batches=2)
    every = min(CURVE_EVERY, stop)
    history = fit(model, masked_lm_loss, batches, lr=r.lr, lr_schedule=warmup_cosine(r.steps), clip_grad_norm=1.0,
                  seed=None, eval_fn=lambda m: {"loss": masked_metrics(m, held_out)["loss"]}, eval_every=every,
                  desc=f"pretraining BERT (seed {seed})")
    steps = [s for s, _ in history.evals["loss"]]
    train = [sum(history.train_loss[a:b]) / (b - a) for a, b in zip([0] + steps[:-1], steps)]
    curve = {"step": steps, "train_mlm_loss": [round(x, 4) for x in train],
             "valid_mlm_loss": [round(v, 4) for _, v in history.evals["loss"]]}
    return model.eval(), curve


def held_out_masked_windows(valid_ids: torch.Tensor, tokenizer: WordPieceTokenizer, seq_len: int,
                            batches: int = 4) -> list[dict[str, torch.Tensor]]:
    """Fixed held-out batches of 64 windows of ``seq_len`` pieces with every chosen position (15%)
    replaced by [MASK]: what a masked-LM is scored on, with no visible copy of the answer."""
    g = torch.Generator().manual_seed(1)
    return [_masked_windows(valid_ids, tokenizer, 64, seq_len, g, mask_fraction=1.0, random_fraction=0.0)
            for _ in range(batches)]


def masked_metrics(model: BertForPreTraining, batches: list[dict]) -> dict[str, float]:
    """Masked-LM loss (nats), top-1 accuracy and number of distinct top-1 predictions over the chosen
    positions of ``batches`` (call in eval mode)."""
    logits, targets = [], []
    with torch.no_grad():
        for b in batches:
            chosen = b["mlm_labels"] >= 0
            out = model.bert(b["input_ids"], b["token_type_ids"], b["attention_mask"])
            logits.append(model.mlm_logits(out.last_hidden_state[chosen]))     # (N, V)
            targets.append(b["mlm_labels"][chosen])
    logits, targets = torch.cat(logits), torch.cat(targets)
    top = logits.argmax(-1)
    return {"loss": F.cross_entropy(logits, targets).item(), "accuracy": (top == targets).double().mean().item(),
            "distinct predictions": top.unique().numel()}


def _masked_windows(ids: torch.Tensor, tokenizer: WordPieceTokenizer, batch_size: int, seq_len: int,
                    generator: torch.Generator, mask_fraction: float = 0.8,
                    random_fraction: float = 0.1) -> dict[str, torch.Tensor]:
    """One masked-LM batch: random windows of ``ids`` after [CLS], 15% of the pieces chosen and
    corrupted ``mask_fraction`` / ``random_fraction`` / the rest kept (80/10/10)."""
    x, _ = random_windows(ids, batch_size, seq_len - 1, generator)                  # (B, T - 1)
    x = torch.cat([torch.full((batch_size, 1), tokenizer.cls_id), x], dim=1)         # (B, T)
    m = mask_tokens(x, tokenizer.mask_id, len(tokenizer), special_ids=tokenizer.special_ids,
                    mask_fraction=mask_fraction, random_fraction=random_fraction, generator=generator)
    return {"input_ids": m.input_ids, "token_type_ids": torch.zeros_like(x), "attention_mask": torch.ones_like(x),
            "mlm_labels": m.labels, "nsp_labels": torch.zeros(batch_size, dtype=torch.long)}


def masked_lm_loss(model: BertForPreTraining, batch: dict) -> torch.Tensor:
    """The masked-LM half of :func:`~lmcourse.bert.pretraining_losses` (no next-sentence loss)."""
    return pretraining_losses(model, batch)[0]


def _word_streams(r: Recipe) -> tuple[Vocab, torch.Tensor, torch.Tensor]:
    train, valid = pretraining_text("train", r.documents), pretraining_text("valid", r.documents)
    train_words, valid_words = [word_tokenize(d) for d in train], [word_tokenize(d) for d in valid]
    vocab = Vocab.from_texts(train_words, min_freq=2, max_size=r.vocab_size - 2)
    stream = lambda docs: torch.tensor([i for d in docs for i in vocab.encode(d)])  # noqa: E731
    return vocab, stream(train_words), stream(valid_words)


def _elmo(r: Recipe):
    vocab, train_ids, valid_ids = _word_streams(r)
    set_seed(0)
    model = BiLM(len(vocab), d_model=r.d_model, num_layers=r.num_layers)
    g = torch.Generator().manual_seed(0)
    batches = [random_windows(train_ids, r.batch_size, r.seq_len, g)[0] for _ in range(r.steps)]
    fit(model, bilm_loss, batches, lr=r.lr, lr_schedule=warmup_cosine(r.steps), clip_grad_norm=1.0,
        seed=None, desc="pretraining ELMo biLM")
    n = len(valid_ids) // r.seq_len
    model.eval()
    with torch.no_grad():
        valid_loss = evaluate_loss(model, bilm_loss, list(valid_ids[:n * r.seq_len].view(n, r.seq_len).split(64)))
    config = {"model_type": "lmcourse-bilm", "vocab_size": len(vocab), "d_model": r.d_model,
              "num_layers": r.num_layers, "specials": list(vocab.specials)}
    return _course_files(config, model, vocab), {"tokens_seen": r.steps * r.batch_size * r.seq_len,
                                                 "train_tokens": len(train_ids), "valid_loss": valid_loss,
                                                 "valid_unigram_loss": unigram_loss(train_ids, valid_ids, len(vocab))}


def _electra(r: Recipe):
    vocab, train_ids, valid_ids = _word_streams(r)
    specials = (vocab.pad_id, vocab.unk_id)
    cloze = BigramClozeGenerator(train_ids, len(vocab), k=0.1, special_ids=specials)
    set_seed(0)
    model = ReplacedTokenDetector(len(vocab), d_model=r.d_model, num_heads=max(1, r.d_model // 32),
                                  num_layers=r.num_layers, max_len=r.seq_len)
    g = torch.Generator().manual_seed(0)
    batches = rtd_batches(train_ids, cloze, r.steps, r.batch_size, r.seq_len, special_ids=specials, generator=g)
    fit(model, rtd_loss, batches, lr=r.lr, lr_schedule=warmup_cosine(r.steps), clip_grad_norm=1.0,
        seed=None, desc="pretraining ELECTRA")
    valid = rtd_batches(valid_ids, cloze, 8, 64, r.seq_len, special_ids=specials,
                        generator=torch.Generator().manual_seed(1))
    model.eval()
    with torch.no_grad():
        metrics = detection_metrics(torch.cat([model(x) for x, _ in valid]), torch.cat([y for _, y in valid]))
    config = {"model_type": "lmcourse-electra-discriminator", "vocab_size": len(vocab), "d_model": r.d_model,
              "num_heads": max(1, r.d_model // 32), "num_layers": r.num_layers, "max_len": r.seq_len,
              "specials": list(vocab.specials), "generator": "bigram cloze, k=0.1, mask_prob=0.15"}
    return _course_files(config, model, vocab), {"tokens_seen": r.steps * r.batch_size * r.seq_len,
                                                 **{f"valid_{k.replace(' ', '_')}": v for k, v in metrics.items()}}


RECIPE_FUNCTIONS = {"gpt": _gpt, "bert": _bert, "elmo": _elmo, "electra": _electra}


# ---------------------------------------------------------------------------------------------
# Files: deterministic bytes, written atomically
# ---------------------------------------------------------------------------------------------
def _json(fields: dict) -> bytes:
    return (json.dumps(fields, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _weights(state: dict[str, torch.Tensor]) -> bytes:
    """float16 safetensors bytes (half the size; the loaders widen them back to float32)."""
    return safetensors_bytes({k: v.detach().to(torch.float16).contiguous() for k, v in state.items()})


def _course_files(config: dict, model: torch.nn.Module, vocab: Vocab) -> dict[str, bytes]:
    return {"config.json": _json(config), "model.safetensors": _weights(model.state_dict()),
            "vocab.txt": ("\n".join(vocab.itos) + "\n").encode("utf-8")}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_directory(directory: Path, files: dict[str, bytes]) -> None:
    """Replace ``directory`` by one holding exactly ``files``: written beside it first, then swapped
    in by renames, so an interrupted run leaves the previous checkpoint whole."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}."))
    staging.chmod(0o755)                       # mkdtemp makes it private
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        old = directory.with_name(f".{directory.name}.old")
        if directory.exists():
            os.replace(directory, old)
        os.replace(staging, directory)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def build(name: str, smoke: bool = False) -> tuple[dict[str, bytes], dict]:
    """Train checkpoint ``name`` from scratch: (files, manifest entry). Deterministic under the
    reference settings (numerics.env) on one thread."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    recipe = (SMOKE if smoke else RECIPES)[name]
    set_seed(0, num_threads=1)
    files, measured = RECIPE_FUNCTIONS[name](recipe)
    n_params = sum(t.numel() for t in safetensors_load(files["model.safetensors"]).values())
    entry = {"command": f"python -m lmcourse.pretrain {name}" + (" --smoke" if smoke else ""),
             "recipe": asdict(recipe), "stored_parameters": n_params,
             "measured": {k: round(v, 4) if isinstance(v, float) else v for k, v in measured.items()},
             "sha256": {file: sha256(data) for file, data in sorted(files.items())}}
    return files, entry


# ---------------------------------------------------------------------------------------------
# Loading, with the hashes checked
# ---------------------------------------------------------------------------------------------
def manifest() -> dict:
    """The shipped checkpoints' records (``checkpoints/manifest.json``)."""
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def checkpoint_dir(name: str, directory: str | Path | None = None) -> Path:
    """The directory of checkpoint ``name`` after checking every file against its recorded SHA-256.

    ``ValueError`` naming the file if one is missing or differs (a partial or edited checkpoint).
    """
    records = manifest()
    if name not in records:
        raise ValueError(f"name must be one of {sorted(records)}, got {name!r}")
    directory = Path(directory) if directory is not None else CHECKPOINTS / name
    for file, expected in records[name]["sha256"].items():
        path = directory / file
        if not path.is_file():
            raise ValueError(f"{path} is missing: rebuild it with `{records[name]['command']}`")
        if sha256(path.read_bytes()) != expected:
            raise ValueError(f"{path} does not match its recorded SHA-256 in {MANIFEST.name}: "
                             f"rebuild it with `{records[name]['command']}`")
    return directory


def load_pretrained(name: str, directory: str | Path | None = None, check_hashes: bool = True):
    """(model in eval mode, tokenizer) of a course checkpoint, its files checked against the
    manifest first (``check_hashes=False`` reads another build of it, e.g. a smoke one, unchecked):

    - ``"gpt"``: (:class:`~lmcourse.gpt.GPT`, :class:`~lmcourse.bpe.BPETokenizer`)
    - ``"bert"``: (:class:`~lmcourse.bert.BertForPreTraining`, :class:`~lmcourse.tokenize.WordPieceTokenizer`)
    - ``"elmo"``: (:class:`~lmcourse.elmo.BiLM`, :class:`~lmcourse.vocab.Vocab`) of lowercased words
    - ``"electra"``: (:class:`~lmcourse.electra.ReplacedTokenDetector`, :class:`~lmcourse.vocab.Vocab`)
    """
    check_type(name, "name", str)
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    path = checkpoint_dir(name, directory) if check_hashes else Path(directory or CHECKPOINTS / name)
    if name == "gpt":
        return GPT.from_pretrained(path).eval(), BPETokenizer.from_pretrained(path)
    if name == "bert":
        return BertForPreTraining.from_pretrained(path), WordPieceTokenizer.from_vocab_file(path / "vocab.txt")
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    vocab = Vocab.from_itos((path / "vocab.txt").read_text(encoding="utf-8").splitlines(),
                            specials=tuple(config["specials"]))
    if name == "elmo":
        model = BiLM(config["vocab_size"], d_model=config["d_model"], num_layers=config["num_layers"])
    else:
        model = ReplacedTokenDetector(config["vocab_size"], d_model=config["d_model"], num_heads=config["num_heads"],
                                      num_layers=config["num_layers"], max_len=config["max_len"])
    state = {k: v.float() for k, v in load_safetensors(path / "model.safetensors").items()}
    model.load_state_dict(state, strict=True)
    return model.eval(), vocab


def _record(name: str, entry: dict) -> None:
    """Put ``entry`` into the manifest under ``name``, atomically (builds may run in parallel)."""
    with open(CHECKPOINTS / ".manifest.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = manifest() if MANIFEST.exists() else {}
        records[name] = entry
        write_atomically(MANIFEST, (json.dumps(records, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.pretrain", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"checkpoints to build, of {', '.join(NAMES)} (default: all)")
    parser.add_argument("--smoke", action="store_true", help="tiny settings: checks the code in about a minute")
    parser.add_argument("--out", type=output_directory, default=None,
                        help="write here instead of the package (required with --smoke)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild and compare with the shipped files' recorded hashes; write nothing")
    args = parser.parse_args(argv)
    if args.smoke and (args.out is None or args.check):
        parser.error("--smoke needs --out (smoke checkpoints never replace the shipped ones) and no --check")
    if args.check and args.out is not None:
        parser.error("--check writes nothing: leave out --out")
    unknown = set(args.names) - set(NAMES)
    if unknown:
        parser.error(f"argument NAME: unknown checkpoint {', '.join(map(repr, sorted(unknown)))}; "
                     f"choose from {', '.join(NAMES)}")
    records = manifest() if args.check else {}
    status = 0
    for name in args.names or NAMES:
        start, cpu_start = time.perf_counter(), time.process_time()
        files, entry = build(name, smoke=args.smoke)
        seconds = f"{time.perf_counter() - start:.0f} s ({time.process_time() - cpu_start:.0f} s of CPU)"
        if args.check:
            same = records.get(name, {}).get("sha256") == entry["sha256"]
            print(f"{name}: rebuilt in {seconds}; {'identical to' if same else 'DIFFERENT from'} the shipped files")
            status |= not same
            continue
        out = (args.out or CHECKPOINTS) / name
        write_directory(out, files)
        print(f"{name}: {entry['stored_parameters']:,} parameters, {sum(map(len, files.values())) / 1e6:.1f} MB "
              f"in {out}, {seconds}; {entry['measured']}")
        if args.out is None:
            _record(name, entry)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
