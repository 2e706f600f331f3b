"""lmcourse.electra_small: ELECTRA with a jointly trained generator against a masked LM of equal compute
(the recorded experiment of chapter 10, checked on tiny settings and against its record)."""
import copy
import json
import math

import pytest
import torch

from lmcourse.electra import TinyEncoder
from lmcourse.electra_small import (
    ARMS,
    RESULTS,
    SETTINGS,
    Electra,
    compute_budget,
    detection_report,
    electra_batches,
    electra_losses,
    encoder_forward_flops,
    equal_compute_steps,
    finetune,
    flagged_tokens,
    news_streams,
    paired_differences,
    pretrain,
    recorded,
    recorded_runs,
    run_seed,
    sample_replacements,
    sentence_end_baselines,
    sentence_end_data,
    shortcut_loss,
)
from lmcourse.masking import mask_tokens

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = {**SETTINGS, "d_model": 8, "num_heads": 2, "generator_d_model": 4, "seq_len": 12, "batch_size": 4,
        "electra_steps": 4, "valid_batches": 2, "flagged_window": [200, 212],
        "finetune": {"fit_windows": 8, "dev_windows": 8, "test_windows": 16, "batch_size": 4, "lrs": [1e-3, 3e-3],
                     "eval_every": 2, "max_steps": 8, "patience": 4}, "seeds": [0, 1]}


@pytest.fixture(scope="module")
def streams():
    return news_streams()


def test_the_flop_count_matches_the_encoders_own_weights():
    d, layers, T = 8, 3, 10
    encoder = TinyEncoder(50, d, num_heads=2, num_layers=layers, max_len=T)
    weights = sum(m.weight.numel() for m in encoder.blocks.modules() if isinstance(m, torch.nn.Linear))
    assert weights == layers * (4 * d * d + 2 * d * 4 * d)               # Q, K, V, out; two FFN layers
    attention = layers * 2 * 2 * T * T * d                               # QK^T and the weighted sum, 2 FLOPs each
    assert encoder_forward_flops(d, layers, T, 0, 1) == 2 * T * weights + attention
    assert encoder_forward_flops(d, layers, T, 1.5, 50) - encoder_forward_flops(d, layers, T, 0, 50) == 2 * 1.5 * d * 50
    with pytest.raises(ValueError, match="head_positions"):
        encoder_forward_flops(d, layers, T, T + 1, 50)
    with pytest.raises(ValueError, match="d_model"):
        encoder_forward_flops(0, layers, T, 1, 50)


def test_equal_compute_steps_equalise_the_totals():
    assert equal_compute_steps(300, 2.0, 3.0) == 200 and equal_compute_steps(10, 1.0, 4.0) == 2
    with pytest.raises(ValueError, match="other_flops_per_step"):
        equal_compute_steps(300, 2.0, 0.0)
    with pytest.raises(ValueError, match="steps"):
        equal_compute_steps(0, 2.0, 3.0)
    budget = compute_budget(SETTINGS, 2416)
    s = SETTINGS
    assert budget["ELECTRA step"] == pytest.approx(budget["generator step"] + budget["discriminator step"])
    assert budget["masked LM step"] == pytest.approx(3 * s["batch_size"] * encoder_forward_flops(
        s["d_model"], s["num_layers"], s["seq_len"], s["mask_prob"] * s["seq_len"], 2416))
    assert budget["masked LM steps"] == round(300 * budget["ELECTRA step"] / budget["masked LM step"])
    assert abs(budget["masked LM total"] / budget["ELECTRA total"] - 1) < 1 / budget["masked LM steps"]


def test_replacements_are_sampled_and_a_lucky_sample_counts_as_original():
    ids = torch.arange(3, 23).view(2, 10)
    batch = mask_tokens(ids, 0, 30, (0,), mask_prob=0.5, mask_fraction=1.0, random_fraction=0.0,
                        generator=torch.Generator().manual_seed(0))
    n = int(batch.chosen.sum())
    assert n > 0 and (batch.input_ids[batch.chosen] == 0).all()
    originals = ids[batch.chosen]
    exact = torch.full((n, 30), -1e9).scatter(1, originals[:, None], 0.0)    # all mass on the original
    corrupted, replaced = sample_replacements(exact, batch)
    assert torch.equal(corrupted, ids) and not replaced.any()
    other = torch.full((n, 30), -1e9)
    other[:, 1] = 0.0                                                        # all mass on token 1
    corrupted, replaced = sample_replacements(other.requires_grad_(), batch)
    assert torch.equal(replaced, batch.chosen) and (corrupted[replaced] == 1).all() and not corrupted.requires_grad
    assert torch.equal(corrupted[~replaced], ids[~replaced])
    with pytest.raises(ValueError, match="logits"):
        sample_replacements(other[:-1], batch)


def test_the_discriminator_loss_sends_no_gradient_into_the_generator(streams):
    torch.manual_seed(0)
    V = len(streams.vocab)
    model = Electra(V, 8, 2, 1, 4, 1, max_len=12)
    batch = electra_batches(streams.train, 1, 4, 12, streams.mask_id, V, streams.specials,
                            generator=torch.Generator().manual_seed(0))[0]
    assert not batch.randomized.any() and torch.equal(batch.masked, batch.chosen)      # x^masked: all [MASK]
    mlm, disc = electra_losses(model, batch)
    assert mlm.item() == pytest.approx(math.log(V), rel=0.1)                            # near uniform at the start
    generator_grads = torch.autograd.grad(disc, list(model.generator.parameters()), allow_unused=True)
    assert all(g is None for g in generator_grads)
    assert all(g is not None for g in torch.autograd.grad(mlm + disc, list(model.discriminator.parameters())[:3]))
    with pytest.raises(ValueError, match="generator_d_model"):
        Electra(V, 8, 2, 1, 16)


def test_the_shortcut_baseline_knows_the_never_replaced_positions():
    replaced = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 0]], dtype=torch.bool)
    never = torch.tensor([[1, 0, 0, 0], [0, 0, 0, 1]], dtype=torch.bool)
    q = 2 / 6                                                              # replaced among the 6 replaceable
    assert shortcut_loss(replaced, never) == pytest.approx(-(q * math.log(q) + (1 - q) * math.log(1 - q)) * 6 / 8)
    assert shortcut_loss(replaced, torch.zeros_like(never)) > shortcut_loss(replaced, never)
    with pytest.raises(ValueError, match="never"):
        shortcut_loss(replaced, replaced)
    with pytest.raises(ValueError, match="must match"):
        shortcut_loss(replaced, never[:, :3])
    perfect = detection_report(replaced.float() * 20 - 10, replaced, never)
    assert perfect["replaceable AUC"] == 1 and perfect["loss"] < 1e-3 < perfect["shortcut loss"]


def test_a_tiny_seed_is_reproducible_and_names_bad_arguments(streams):
    record, models = run_seed(0, streams, ARMS, TINY)
    assert record["ELECTRA"] == run_seed(0, streams, ("ELECTRA",), TINY)[0]["ELECTRA"]
    assert set(record) == {"seed", *ARMS} and record["scratch"]["steps"] == 0
    assert record["masked LM"]["steps"] == compute_budget(TINY, len(streams.vocab))["masked LM steps"]
    assert all(0 <= record[arm]["AUC"] <= 1 and record[arm]["lr"] in TINY["finetune"]["lrs"] for arm in ARMS)
    assert all(record[arm]["fine-tuning steps"] in (2, 4, 6, 8) for arm in ARMS)
    assert 0 < record["ELECTRA"]["detection"]["share replaced"] < TINY["mask_prob"]
    assert len(record["ELECTRA"]["flagged"]) == 12 and "flagged" not in record["masked LM"]
    rows = flagged_tokens(models["ELECTRA"], streams.valid[200:212], streams.vocab, seed=5)
    assert len(rows) == 12 and all(0 <= r["p_replaced"] <= 1 for r in rows)
    assert all(r["replaced"] == (r["shown"] != r["original"]) for r in rows)
    with pytest.raises(ValueError, match="ids"):
        flagged_tokens(models["ELECTRA"], streams.valid[:24].view(2, 12), streams.vocab)
    with pytest.raises(ValueError, match="arm"):
        pretrain("GAN", 0, streams, TINY)
    with pytest.raises(ValueError, match="arms"):
        run_seed(0, streams, ("GAN",), TINY)


def test_the_record_matches_its_settings_its_data_and_its_hash(streams, tmp_path):
    record = recorded()
    runs = record["runs"]
    V = len(streams.vocab)
    assert [r["seed"] for r in runs] == SETTINGS["seeds"]
    assert record["budget"] == pytest.approx(compute_budget(SETTINGS, V))
    assert all(r["masked LM"]["steps"] == record["budget"]["masked LM steps"] for r in runs)
    data = sentence_end_data(streams)
    baselines = sentence_end_baselines(data, V)
    assert all(record["baselines"][k] == pytest.approx(v, abs=1e-4) for k, v in baselines.items())
    diffs = paired_differences(runs)
    assert diffs["ELECTRA - masked LM"]["mean"] == pytest.approx(diffs["ELECTRA"]["mean"] - diffs["masked LM"]["mean"])
    tampered = tmp_path / "record.json"
    changed = json.loads(RESULTS.read_text())
    changed["runs"][0]["ELECTRA"]["AUC"] += 0.01
    tampered.write_text(json.dumps(changed))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_runs(tampered)
    other = copy.deepcopy(json.loads(RESULTS.read_text()))
    other["settings"]["electra_steps"] = 301
    tampered.write_text(json.dumps(other))
    with pytest.raises(ValueError, match="other settings"):
        recorded_runs(tampered)


def test_fine_tuning_picks_the_rate_and_step_on_dev_windows_apart_from_the_others(streams):
    data = sentence_end_data(streams, TINY)
    assert [len(data[k][0]) for k in ("fit", "dev", "test")] == [8, 8, 16]
    full_stop, half = streams.vocab["."], len(streams.valid) // 2
    without_stops = lambda ids: [t for t in ids.tolist() if t != full_stop]          # noqa: E731
    first, second = without_stops(streams.valid[:half]), without_stops(streams.valid[half:])
    inside = lambda row, ids: any(ids[i:i + len(row)] == row for i in range(len(ids) - len(row) + 1))  # noqa: E731
    assert all(inside(row.tolist(), first) and not inside(row.tolist(), second) for row in data["fit"][0])
    assert all(inside(row.tolist(), second) and not inside(row.tolist(), first) for row in data["dev"][0])
    encoder = TinyEncoder(len(streams.vocab), 8, num_heads=2, num_layers=1, max_len=12)
    before = copy.deepcopy(encoder.state_dict())
    result = finetune(encoder, data, 0, TINY)
    assert set(result) == {"AUC", "dev AUC", "lr", "fine-tuning steps"} and result == finetune(encoder, data, 0, TINY)
    assert result["lr"] in TINY["finetune"]["lrs"] and result["fine-tuning steps"] in (2, 4, 6, 8)
    assert all(torch.equal(before[k], v) for k, v in encoder.state_dict().items())
