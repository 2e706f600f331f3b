"""Chapter 9's plateau runs: the record is checked by hash, covers both position-table starts and
every seed, and its first steps reproduce; the sinusoidal start with seed 0 is the shipped
checkpoint's own beginning."""
import pytest

from lmcourse import mlm_plateau
from lmcourse.pretrain import CURVE_EVERY


def test_record_covers_every_start_and_seed():
    runs = mlm_plateau.recorded_runs()
    settings = mlm_plateau.SETTINGS
    assert [(r["position_scale"], r["seed"]) for r in runs] == [
        (scale, seed) for scale in settings["position_scales"] for seed in mlm_plateau.SEEDS]
    steps = list(range(CURVE_EVERY, settings["steps"] + 1, CURVE_EVERY))
    for r in runs:
        assert r["step"] == steps
        assert len(r["train_mlm_loss"]) == len(r["valid_mlm_loss"]) == len(steps)


def test_the_sinusoidal_seed_0_run_is_the_start_of_the_shipped_checkpoint():
    """Same recipe, seed and batches: its curve is the first points of the checkpoint's curve."""
    run = next(r for r in mlm_plateau.recorded_runs() if r["seed"] == 0 and r["position_scale"] > 0)
    assert run == mlm_plateau.checkpoint_run()


def test_the_first_steps_of_a_recorded_run_reproduce():
    recorded = next(r for r in mlm_plateau.recorded_runs() if r["seed"] == 1 and r["position_scale"] == 0)
    rerun = mlm_plateau.run(1, 0.0, steps=CURVE_EVERY)
    assert rerun["step"] == recorded["step"][:1]
    assert rerun["valid_mlm_loss"] == pytest.approx(recorded["valid_mlm_loss"][:1], abs=1e-3)
    assert rerun["train_mlm_loss"] == pytest.approx(recorded["train_mlm_loss"][:1], abs=1e-3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="seed"):
        mlm_plateau.run(-1, 0.0)
    with pytest.raises(ValueError, match="position_scale"):
        mlm_plateau.run(0, -0.1)
    with pytest.raises(ValueError, match="stop"):
        mlm_plateau.run(0, 0.0, steps=0)


def test_the_unigram_line_is_where_the_random_start_begins():
    """Before attention finds the neighbours a BERT can only learn the piece frequencies: the first
    point of every curve lies near the unigram loss of the same held-out positions."""
    from lmcourse.pretrain import RECIPES, bert_token_streams
    line = mlm_plateau.unigram_line(*bert_token_streams(RECIPES["bert"]))
    for r in mlm_plateau.recorded_runs():
        assert abs(r["valid_mlm_loss"][0] - line) < 0.3
