import pytest
import torch

from lmcourse.dynamic_masking import coverage, distinct_masks, masks_per_epoch


def _ids():
    return torch.randint(5, 100, (64, 128), generator=torch.Generator().manual_seed(0))


def test_static_masks_repeat_every_num_copies_epochs():
    chosen = masks_per_epoch(_ids(), 40, 10, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(1))
    assert chosen.shape == (40, 64, 128)
    assert torch.equal(chosen[0], chosen[10]) and torch.equal(chosen[3], chosen[33])
    assert distinct_masks(chosen[:, 0]) == 10


def test_dynamic_masks_differ_every_epoch():
    chosen = masks_per_epoch(_ids(), 40, None, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(1))
    assert distinct_masks(chosen[:, 0]) == 40


@pytest.mark.parametrize("copies", [1, 10, None])
def test_coverage_matches_theory(copies):
    chosen = masks_per_epoch(_ids(), 40, copies, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(2))
    k = 40 if copies is None else copies
    expected = 1 - 0.85 ** k
    assert abs(coverage(chosen)[-1].item() - expected) < 0.01   # 8192 positions: sd < 0.005


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_copies"):
        masks_per_epoch(_ids(), 4, 0, mask_id=1, vocab_size=100)
    with pytest.raises(TypeError, match="input_ids"):
        masks_per_epoch([1, 2], 4, 1, mask_id=1, vocab_size=100)
    with pytest.raises(ValueError, match="chosen"):
        coverage(torch.zeros(4))
    with pytest.raises(ValueError, match="chosen"):
        distinct_masks(torch.zeros(4, 3, 2, dtype=torch.bool))


def test_masked_epochs_reuse_static_copies_and_match_masks_per_epoch():
    from lmcourse.dynamic_masking import masked_epochs
    epochs = masked_epochs(_ids(), 12, 3, mask_id=1, vocab_size=100, generator=torch.Generator().manual_seed(3))
    assert len(epochs) == 12 and epochs[0] is epochs[3] and epochs[1] is not epochs[2]
    chosen = masks_per_epoch(_ids(), 12, 3, mask_id=1, vocab_size=100, generator=torch.Generator().manual_seed(3))
    assert all(torch.equal(m.chosen, c) for m, c in zip(epochs, chosen))


def test_tiny_mlm_loss_counts_only_chosen_positions():
    from lmcourse.dynamic_masking import TinyMLM, mlm_loss
    from lmcourse.masking import mask_tokens
    torch.manual_seed(0)
    model = TinyMLM(100, d_model=16, num_heads=2, num_layers=1, max_len=128)
    batch = mask_tokens(_ids()[:4], 1, 100, generator=torch.Generator().manual_seed(4))
    logits = model(batch.input_ids)
    assert logits.shape == (4, 128, 100)
    chosen = batch.chosen
    expected = torch.nn.functional.cross_entropy(logits[chosen], batch.labels[chosen])
    assert torch.allclose(mlm_loss(model, batch), expected, atol=1e-6)
    with pytest.raises(TypeError, match="batch"):
        mlm_loss(model, (batch.input_ids, batch.labels))


def test_mlm_batches_are_windows_of_the_stream_masked_afresh():
    from lmcourse.dynamic_masking import mlm_batches
    stream = torch.arange(3, 203)
    batches = mlm_batches(stream, 3, batch_size=4, seq_len=8, mask_id=1, vocab_size=300,
                          special_ids=(0, 1), generator=torch.Generator().manual_seed(0))
    assert len(batches) == 3
    for b in batches:
        assert b.input_ids.shape == b.labels.shape == (4, 8)
        original = torch.where(b.chosen, b.labels, b.input_ids)
        assert (original.diff(dim=1) == 1).all()          # consecutive tokens of the stream
    assert not torch.equal(batches[0].chosen, batches[1].chosen)
    with pytest.raises(ValueError, match="num_batches"):
        mlm_batches(stream, 0, 4, 8, 1, 300)


# --- the recorded comparison (lmcourse.dynamic_masking.run and its record) ---------------------------
import json  # noqa: E402
import math  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lmcourse.dynamic_masking as dm  # noqa: E402
from lmcourse.masking import MaskedBatch, mask_tokens  # noqa: E402
from lmcourse.mlm_eval import unigram_loss  # noqa: E402

TINY = {**dm.SETTINGS, "sequences": 16, "batch_size": 8, "eval_sequences": 8, "d_model": 16, "max_epochs": 6,
        "budget_epochs": 2, "patience": 2}


def test_unigram_loss_is_the_add_one_unigram_and_names_bad_arguments():
    train, targets = torch.tensor([0, 0, 1, 3]), torch.tensor([0, 2])
    expected = -(math.log(3 / 8) + math.log(1 / 8)) / 2            # counts + 1 = [3, 2, 1, 2] of 8
    assert abs(unigram_loss(train, targets, 4) - expected) < 1e-12
    assert abs(unigram_loss(train.view(2, 2), targets.view(1, 2), 4) - expected) < 1e-12
    with pytest.raises(ValueError, match="targets"):
        unigram_loss(train, torch.tensor([4]), 4)
    with pytest.raises(ValueError, match="train_ids"):
        unigram_loss(torch.tensor([-1, 0]), targets, 4)
    with pytest.raises(TypeError, match="targets"):
        unigram_loss(train, torch.tensor([0.0]), 4)
    with pytest.raises(ValueError, match="targets"):
        unigram_loss(train, torch.tensor([], dtype=torch.long), 4)
    with pytest.raises(ValueError, match="vocab_size"):
        unigram_loss(train, targets, 0)


def test_a_run_pairs_the_schemes_stops_early_and_names_bad_arguments(monkeypatch):
    monkeypatch.setattr(dm, "SETTINGS", TINY)
    data = dm.masking_data()
    assert data["train"].shape == (16, 32) and len(data["valid"]) == len(data["test"]) == 2
    lines = dm.unigram_lines(data)
    labels = torch.cat([b.labels[b.masked] for b in data["valid"]])
    assert lines["valid"] == unigram_loss(data["train"], labels, data["vocab_size"]) < math.log(data["vocab_size"])
    copier = dm.copy_lines(data)                      # over all chosen positions, copying beats the unigram
    assert copier["valid"] < copier["unigram_valid"] and 0.2 < copier["q"] < 0.8
    runs = {scheme: dm.run(scheme, 0, data) for scheme in dm.SCHEMES}
    assert len({r["valid_loss"][0] for r in runs.values()}) == 1          # the same first mask and weights
    ten, dynamic = runs["static, 10 masks (BERT)"], runs["dynamic (RoBERTa)"]
    n = min(ten["epochs"], dynamic["epochs"])
    assert ten["valid_loss"][:n] == dynamic["valid_loss"][:n]            # within 10 epochs: the same masks
    for r in runs.values():
        assert r["best_valid_loss"] == min(r["valid_loss"]) == r["valid_loss"][r["best_epoch"] - 1]
        assert r["epochs"] == 6 or (r["epochs"] >= 2 and r["epochs"] - r["best_epoch"] >= 2)
        assert r["budget_valid_loss"] == r["valid_loss"][1] and r["test_loss_at_best"] > 0
    assert dm.run("static, 1 mask", 0, data) == runs["static, 1 mask"]
    with pytest.raises(ValueError, match="scheme"):
        dm.run("static, 2 masks", 0, data)
    with pytest.raises(ValueError, match="seed"):
        dm.run("static, 1 mask", -1, data)
    with pytest.raises(ValueError, match="max_epochs"):
        dm.run("static, 1 mask", 0, data, max_epochs=7)


def test_masked_loss_scores_only_the_mask_positions():
    torch.manual_seed(0)
    model = dm.TinyMLM(100, d_model=16, num_heads=2, num_layers=1, max_len=128)
    batch = mask_tokens(_ids()[:4], 1, 100, generator=torch.Generator().manual_seed(5))
    assert batch.kept.any() and batch.randomized.any()
    logits = model(batch.input_ids)
    at_mask = torch.nn.functional.cross_entropy(logits[batch.masked], batch.labels[batch.masked]).item()
    assert abs(dm.masked_loss(model, [batch, batch]) - at_mask) < 1e-5
    hidden = torch.nn.functional.cross_entropy(logits[batch.chosen], batch.labels[batch.chosen]).item()
    assert abs(hidden - at_mask) > 1e-4               # the other chosen positions would change the score
    with pytest.raises(ValueError, match="batches"):
        dm.masked_loss(model, [])
    with pytest.raises(ValueError, match="MASK"):
        nothing = MaskedBatch(*(getattr(batch, f) for f in ("input_ids", "labels", "chosen")),
                              torch.zeros_like(batch.masked), batch.randomized, batch.kept)
        dm.masked_loss(model, [nothing])


def test_the_record_matches_its_settings_a_rerun_and_its_hash(tmp_path):
    runs = dm.recorded_runs()
    s = dm.SETTINGS
    assert sorted((r["scheme"], r["seed"]) for r in runs) == sorted(
        (scheme, seed) for scheme in dm.SCHEMES for seed in s["seeds"])
    for r in runs:
        assert r["best_valid_loss"] == min(r["valid_loss"]) and len(r["valid_loss"]) == r["epochs"]
        assert r["epochs"] == s["max_epochs"] or r["epochs"] - r["best_epoch"] >= s["patience"]
        assert r["budget_valid_loss"] == r["valid_loss"][s["budget_epochs"] - 1]
    recorded = next(r for r in runs if (r["scheme"], r["seed"]) == ("static, 1 mask", 1))
    rerun = dm.run("static, 1 mask", 1, max_epochs=1)
    assert abs(rerun["valid_loss"][0] - recorded["valid_loss"][0]) < 2e-3
    gap, se = dm.paired_gaps(runs, "best_valid_loss", "static, 1 mask", "dynamic (RoBERTa)")
    values = dm.by_scheme(runs, "best_valid_loss")
    assert abs(gap - (values["static, 1 mask"] - values["dynamic (RoBERTa)"]).mean().item()) < 1e-12 and se > 0
    tampered = tmp_path / "record.json"
    record = json.loads(dm.RESULTS.read_text())
    record["runs"][0]["best_valid_loss"] -= 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        dm.recorded_runs(tampered)
    record = json.loads(dm.RESULTS.read_text())
    record["settings"]["lr"] = 1.0
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="other settings"):
        dm.recorded_runs(tampered)


def test_the_figure_draws_every_run_the_unigram_line_and_the_budget():
    runs = dm.recorded_runs()
    ax = dm.plot_masking_runs(runs, 5.5)
    assert len(ax.lines) == 2 * len(runs) + 2
    assert any("unigram" in t.get_text() for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="static, 1 mask"):
        dm.plot_masking_runs([r for r in runs if r["scheme"] != "static, 1 mask"], 5.5)
    with pytest.raises(ValueError, match="unigram"):
        dm.plot_masking_runs(runs, -1.0)
    with pytest.raises(ValueError, match="first"):
        dm.paired_gaps(runs, "best_valid_loss", "static", "dynamic (RoBERTa)")
    plt.close("all")


def test_the_numbers_the_memorise_solution_states():
    """Chapter 10's exercise "how much does the static model memorise?": its solution's losses, computed here
    exactly as the solution computes them (seed 0, 10 epochs, one static mask against dynamic masks)."""
    from lmcourse.dynamic_masking import TinyMLM, masked_epochs, masked_loss, masking_data, mlm_loss
    from lmcourse.masking import MaskedBatch
    from lmcourse.seed import set_seed
    from lmcourse.train import fit
    data = masking_data()
    losses = {}
    for scheme, copies in (("static", 1), ("dynamic", None)):
        shown = masked_epochs(data["train"], 10, copies, data["mask_id"], data["vocab_size"], (0, 2),
                              generator=torch.Generator().manual_seed(0))
        set_seed(0)
        model = TinyMLM(data["vocab_size"], 32, num_heads=2, num_layers=2, max_len=32)
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
        losses[scheme] = []
        for epoch in range(10):
            batches = [MaskedBatch(*(getattr(shown[epoch], f)[i:i + 32] for f in MaskedBatch.__dataclass_fields__))
                       for i in range(0, len(data["train"]), 32)]
            fit(model, mlm_loss, batches, optimizer=optimizer, seed=None, progress=False)
            own, valid = masked_loss(model, [shown[0]]), masked_loss(model, data["valid"])
            losses[scheme].append((round(own, 2), round(valid, 2)))
    assert losses["static"][0] == (5.65, 5.75) and losses["static"][-1] == (4.2, 7.07)
    assert all(5.65 <= own <= 5.72 for own, _ in losses["dynamic"]) and losses["dynamic"][-1][1] == 5.59
