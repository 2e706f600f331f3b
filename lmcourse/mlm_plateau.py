"""Chapter 9's plateau: a tiny BERT that sits at the unigram line, and a start that lets it leave.

At a [MASK]ed position the input says nothing about the answer, so whatever the model knows there
must come through attention from the neighbours. Our reading: a BERT whose learned position table
starts random (BERT's own recipe) must discover which positions are near each other before attention
can pick out the neighbours; until then it predicts the same frequent pieces at every [MASK], the
unigram distribution. The sinusoidal start differs from the random one in more than neighbourliness
(its rows are longer and share a common direction), and these runs compare the two starts as wholes,
not which difference matters. Here the first ``SETTINGS["steps"]`` steps of the course's BERT recipe
(:data:`lmcourse.pretrain.RECIPES`) run twice per seed, once with the recipe's sinusoidal start of
the position table and once with a random one, everything else equal, recording the held-out
masked-LM loss every 100 steps; the sinusoidal start with seed 0 is the shipped checkpoint's own
beginning, read from its manifest. The runs take a quarter of an hour of one core each, so they are
computed once, after the checkpoint::

    python -m lmcourse.mlm_plateau    # writes lmcourse/checkpoints/mlm_plateau.json

under the reference settings (numerics.env); :func:`recorded_runs` checks the file, and a test
reruns the first steps of one run.
"""
import argparse
from dataclasses import asdict, replace
from pathlib import Path

import torch

from lmcourse.cli import output_file
from lmcourse.parallel import parallel_map
from lmcourse.pretrain import (
    RECIPES,
    bert_pretraining_run,
    bert_token_streams,
    held_out_masked_windows,
    manifest as pretrain_manifest,
    unigram_loss,
)
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import save_record
from lmcourse.validate import check_float, check_int, load_record

SEEDS = (0, 1, 2)
#: position-table starts compared (the scale of the sinusoids; 0: BERT's random normal(0, 0.02))
SETTINGS = {"steps": 1200, "position_scales": [0.0, RECIPES["bert"].position_scale],
            "recipe": {k: v for k, v in asdict(RECIPES["bert"]).items() if k != "position_scale"}}
RESULTS = Path(__file__).parent / "checkpoints" / "mlm_plateau.json"


def run(seed: int, position_scale: float, steps: int | None = None) -> dict:
    """The first ``steps`` steps (default ``SETTINGS["steps"]``) of the BERT recipe with ``seed`` and
    its position table started at ``position_scale`` times sinusoids (0: random): the curve of
    :func:`lmcourse.pretrain.bert_pretraining_run` with the seed and the scale."""
    check_int(seed, "seed", minimum=0)
    check_float(position_scale, "position_scale", minimum=0.0)
    steps = SETTINGS["steps"] if steps is None else steps
    recipe = replace(RECIPES["bert"], position_scale=position_scale)
    tokenizer, train_ids, valid_ids = bert_token_streams(recipe)
    _, curve = bert_pretraining_run(recipe, tokenizer, train_ids, valid_ids, seed=seed, stop=steps)
    return {"seed": seed, "position_scale": position_scale, **curve}


def _run(job: tuple[int, float]) -> dict:
    return run(*job)


def unigram_line(tokenizer: WordPieceTokenizer, train_ids: torch.Tensor, valid_ids: torch.Tensor) -> float:
    """The held-out unigram loss (nats) at the positions the curves score, the plateau's level, from
    the recipe's tokenizer and streams (:func:`lmcourse.pretrain.bert_token_streams`)."""
    recipe = RECIPES["bert"]
    held_out = held_out_masked_windows(valid_ids, tokenizer, recipe.seq_len, batches=2)
    targets = torch.cat([b["mlm_labels"][b["mlm_labels"] >= 0] for b in held_out])
    return unigram_loss(train_ids, targets, len(tokenizer))


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def checkpoint_run() -> dict:
    """The sinusoidal start with seed 0 is the shipped checkpoint's own beginning (same recipe, seed
    and batches): its first ``SETTINGS["steps"]`` steps, read from the checkpoint's manifest."""
    entry = pretrain_manifest()["bert"]
    if entry["recipe"] != asdict(RECIPES["bert"]):
        raise ValueError("the BERT checkpoint was built with another recipe: rebuild it first "
                         "with `python -m lmcourse.pretrain bert`")
    curve = entry["measured"]["curve"]
    n = curve["step"].index(SETTINGS["steps"]) + 1
    return {"seed": 0, "position_scale": RECIPES["bert"].position_scale, **{k: v[:n] for k, v in curve.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.mlm_plateau", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    jobs = [(seed, scale) for scale in SETTINGS["position_scales"] for seed in SEEDS]
    shipped = (0, RECIPES["bert"].position_scale)
    trained = dict(zip([j for j in jobs if j != shipped], parallel_map(_run, [j for j in jobs if j != shipped],
                                                                       desc="runs")))
    runs = [trained[j] if j != shipped else checkpoint_run() for j in jobs]
    save_record(args.out, "python -m lmcourse.mlm_plateau", SETTINGS, runs)
    for r in runs:
        loss, step = r["valid_mlm_loss"], r["step"]
        print(f"seed {r['seed']}, position scale {r['position_scale']}: held-out loss "
              f"{loss[0]:.3f} at step {step[0]}, {loss[-1]:.3f} at step {step[-1]}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
