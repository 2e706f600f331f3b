"""Chapter 4's character LSTM trained for many passes, until it overtakes the Kneser-Ney character 4-gram.

The chapter trains a small character LSTM live for two passes over the news articles, which leaves
it well behind a character 4-gram with Kneser-Ney smoothing. Here a wider LSTM (the same
``RecurrentLM``, stateful truncated BPTT) reads the same stream for ``SETTINGS["passes"]`` passes,
three seeds, recording after every pass the training and validation bits per character and a
sample, and keeping each seed's weights from its best validation pass. The runs take a few minutes
on one core each, so they are computed once by::

    python -m lmcourse.long_char_lm    # writes lmcourse/checkpoints/long_char_lm.json and .safetensors

under the reference settings (numerics.env). The JSON file records the settings, the runs, their
SHA-256 and that of seed 0's best weights (the ``.safetensors`` file); :func:`recorded_runs` and
:func:`load_best_model` check them. The chapter recomputes seed 0's best loss from the weights, and a
test reruns the first passes of a seed.
"""
import argparse
import copy
import hashlib
import math
from pathlib import Path

import torch

from lmcourse.cli import output_file
from lmcourse.data import lm_batches, news_documents
from lmcourse.parallel import parallel_map
from lmcourse.rnn import RecurrentLM, StatefulLMLoss, stream_loss
from lmcourse.seed import set_seed
from lmcourse.tokenize import char_tokenize
from lmcourse.train import fit, load_checkpoint, save_checkpoint, save_record
from lmcourse.validate import check_int, load_record
from lmcourse.vocab import Vocab, char_vocab

SEEDS = (0, 1, 2)
#: the network and its training; validation reads the held-out stream as the chapter does (128 rows of 16)
SETTINGS = {"embed_dim": 32, "hidden_size": 256, "window": 64, "batch_size": 32, "lr": 3e-3, "clip_grad_norm": 1.0,
            "passes": 20, "valid_batch_size": 128, "valid_window": 16, "prompt": "The government",
            "sample_length": 80, "temperature": 0.8}
RESULTS = Path(__file__).parent / "checkpoints" / "long_char_lm.json"


def news_characters() -> tuple[Vocab, torch.Tensor, torch.Tensor]:
    """(vocabulary of the training characters, training ids (N,), validation ids (M,)): the news articles
    of each split joined by newlines, one id per character."""
    train_text, valid_text = ("\n".join(news_documents(split)) for split in ("train", "valid"))
    vocab = char_vocab([train_text])
    return vocab, *(torch.tensor(vocab.encode(char_tokenize(text))) for text in (train_text, valid_text))


def new_model(vocab_size: int) -> RecurrentLM:
    """The untrained network of the recorded runs."""
    return RecurrentLM(vocab_size, SETTINGS["embed_dim"], SETTINGS["hidden_size"])


def sample(model: RecurrentLM, vocab: Vocab) -> str:
    """The continuation of ``SETTINGS["prompt"]``, sampled with a fixed generator (prompt included)."""
    ids = model.generate(vocab.encode(char_tokenize(SETTINGS["prompt"])), SETTINGS["sample_length"],
                         temperature=SETTINGS["temperature"], generator=torch.Generator().manual_seed(1))
    return "".join(vocab.decode(ids))


def valid_bits(model: RecurrentLM, valid_ids: torch.Tensor) -> float:
    """Bits per character on the validation stream, read with the state carried from window to window."""
    stream = lm_batches(valid_ids, SETTINGS["valid_batch_size"], SETTINGS["valid_window"])
    return stream_loss(model, stream, carry_state=True) / math.log(2)


def run(seed: int, passes: int | None = None) -> tuple[dict, RecurrentLM]:
    """Train one seed for ``passes`` passes (default ``SETTINGS["passes"]``) and return its record and
    the model with its best pass's weights. The record holds, per pass, the mean training and the
    validation bits per character, and a sample before training and after every pass."""
    check_int(seed, "seed", minimum=0)
    if passes is None:
        passes = SETTINGS["passes"]
    check_int(passes, "passes", minimum=1)
    vocab, train_ids, valid_ids = news_characters()
    stream = lm_batches(train_ids, SETTINGS["batch_size"], SETTINGS["window"])
    set_seed(seed)
    model = new_model(len(vocab))
    record = {"seed": seed, "valid bits": [], "samples": [sample(model, vocab)]}
    best = {"bits": math.inf}

    def after_pass(model):
        bits = valid_bits(model, valid_ids)
        record["valid bits"].append(bits)
        record["samples"].append(sample(model, vocab))
        if bits < best["bits"]:
            best.update(bits=bits, weights=copy.deepcopy(model.state_dict()))
        return {"valid bits": bits}

    history = fit(model, StatefulLMLoss(len(stream)), stream, num_epochs=passes, lr=SETTINGS["lr"],
                  clip_grad_norm=SETTINGS["clip_grad_norm"], seed=None, eval_fn=after_pass, eval_every=len(stream),
                  desc=f"seed {seed}")
    losses = torch.tensor(history.train_loss).view(passes, len(stream)) / math.log(2)
    record["train bits"] = losses.mean(1).tolist()
    record["best pass"] = record["valid bits"].index(best["bits"]) + 1
    model.load_state_dict(best["weights"])
    return record, model


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def load_best_model(path: str | Path = RESULTS) -> RecurrentLM:
    """Seed 0's best weights (the ``.safetensors`` file beside ``path``) in a new model, after checking
    the file's SHA-256 against the record (``ValueError`` naming the file otherwise)."""
    record = load_record(path, SETTINGS)
    weights = Path(path).with_suffix(".safetensors")
    if _file_digest(weights) != record["weights sha256"]:
        raise ValueError(f"{weights} does not match the SHA-256 recorded in {path}: rerun `{record['command']}`")
    vocab, _, _ = news_characters()
    return load_checkpoint(new_model(len(vocab)), weights)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.long_char_lm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write (weights beside it)")
    args = parser.parse_args(argv)
    results = parallel_map(run, SEEDS, desc="seeds")
    runs = [{k: [round(x, 4) for x in v] if k.endswith("bits") else v for k, v in r.items()} for r, _ in results]
    weights = save_checkpoint(results[0][1], args.out.with_suffix(".safetensors"))
    save_record(args.out, "python -m lmcourse.long_char_lm", SETTINGS, runs,
                **{"weights sha256": _file_digest(weights)})
    for r in runs:
        print(f"seed {r['seed']}: best {min(r['valid bits']):.3f} bits per character at pass {r['best pass']}, "
              f"last {r['valid bits'][-1]:.3f}")
    print(f"wrote {args.out} and {weights}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
