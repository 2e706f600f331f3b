import json
import math
from dataclasses import asdict, replace

import pytest
import torch

from lmcourse.induction_heads import (
    RESULTS,
    SETTINGS,
    AttentionOnlyTransformer,
    InductionSetup,
    best_head,
    held_out_batch,
    induction_scores,
    measure,
    next_token_losses,
    occurrence_losses,
    previous_token_scores,
    recorded_runs,
    repeated_segment_batch,
    train_attention_only,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_segment_really_repeats_where_the_batch_says():
    ids, first, second = repeated_segment_batch(500, 24, 8, 32, torch.Generator().manual_seed(0))
    assert ids.shape == (500, 24) and first.shape == second.shape == (500,)
    assert ids.dtype == torch.int64 and 0 <= ids.min() and ids.max() < 32
    assert (first >= 1).all() and (second >= first + 8).all() and (second + 8 <= 24).all()
    for row, a, b in zip(ids, first, second):
        assert torch.equal(row[a:a + 8], row[b:b + 8])
    gaps = set((second - first - 8).tolist())
    assert gaps == set(range(8))                                  # every gap from adjacent to 7 apart occurs


def test_gaps_follow_the_documented_distribution():
    _, first, second = repeated_segment_batch(20000, 24, 8, 32, torch.Generator().manual_seed(5))
    share = torch.bincount(second - first - 8, minlength=8).float() / 20000
    s = 24 - 2 * 8
    expected = torch.tensor([1 / s] + [2 * (s - d) / s**2 for d in range(1, s)])
    assert torch.allclose(share, expected, atol=0.01)


def test_the_batch_is_seeded_by_its_generator():
    a = repeated_segment_batch(4, 20, 5, 10, torch.Generator().manual_seed(3))
    b = repeated_segment_batch(4, 20, 5, 10, torch.Generator().manual_seed(3))
    c = repeated_segment_batch(4, 20, 5, 10, torch.Generator().manual_seed(4))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a.ids, c.ids)


@pytest.mark.parametrize("kwargs, name", [
    (dict(batch_size=0), "batch_size"), (dict(segment_length=1), "segment_length"),
    (dict(length=16), "length"), (dict(vocab_size=1), "vocab_size")])
def test_bad_batch_sizes_raise_naming_the_argument(kwargs, name):
    args = dict(batch_size=2, length=24, segment_length=8, vocab_size=32) | kwargs
    with pytest.raises(ValueError, match=name):
        repeated_segment_batch(**args)


def test_model_shapes_weights_and_causality():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(vocab_size=20, context_size=12, d_model=16, num_layers=2, num_heads=2).eval()
    assert not any("mlp" in name.lower() for name, _ in model.named_modules())
    ids = torch.randint(20, (3, 12))
    logits, weights = model(ids, need_weights=True)
    assert logits.shape == (3, 12, 20) and weights.shape == (3, 2, 2, 12, 12)
    assert torch.allclose(model(ids), logits, atol=1e-6)               # the fast path computes the same
    assert weights.triu(1).abs().max() == 0                             # no weight on a future position
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 2, 12))
    changed = ids.clone()
    changed[:, 8] = (changed[:, 8] + 1) % 20
    after = model(changed)
    assert torch.allclose(after[:, :8], logits[:, :8], atol=1e-6)       # the past does not see the future
    assert (after[:, 8:] - logits[:, 8:]).abs().max() > 1e-3


def test_model_rejects_bad_input():
    model = AttentionOnlyTransformer(vocab_size=20, context_size=12, d_model=16, num_layers=1, num_heads=2)
    with pytest.raises(ValueError, match="ids must be"):
        model(torch.zeros(2, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="ids"):
        model(torch.full((2, 4), 20))
    with pytest.raises(ValueError, match="d_model"):
        AttentionOnlyTransformer(vocab_size=20, context_size=12, d_model=15, num_layers=1, num_heads=2)


def test_losses_are_per_token_cross_entropy():
    torch.manual_seed(1)
    model = AttentionOnlyTransformer(vocab_size=10, context_size=8, d_model=16, num_layers=1, num_heads=2)
    ids = torch.randint(10, (2, 8))
    losses = next_token_losses(model, ids)
    assert losses.shape == (2, 8) and losses[:, 0].isnan().all()
    log_p = model(ids).log_softmax(-1)
    assert torch.isclose(losses[1, 5], -log_p[1, 4, ids[1, 5]])
    picked = occurrence_losses(losses, torch.tensor([1, 3]), 4)
    assert torch.equal(picked, torch.stack([losses[0, 1:5], losses[1, 3:7]]))
    with pytest.raises(ValueError, match="occurrence"):
        occurrence_losses(losses, torch.tensor([0, 3]), 4)


def _induction_pattern(first, second, segment_length, T):
    """(B, 1, T, T): every query attends to itself, except in the second occurrence, where it attends to
    the position right after its token's first occurrence."""
    w = torch.eye(T).repeat(len(first), 1, 1, 1)
    for b, (a, s) in enumerate(zip(first.tolist(), second.tolist())):
        for k in range(segment_length - 1):
            w[b, 0, s + k] = 0.0
            w[b, 0, s + k, a + k + 1] = 1.0
    return w


def test_scores_of_hand_built_patterns():
    T, L = 16, 4
    previous = torch.zeros(2, 1, T, T)
    previous[:, 0, 0, 0] = 1.0
    previous[:, 0, torch.arange(1, T), torch.arange(T - 1)] = 1.0        # always the previous token
    uniform = torch.ones(T, T).tril()
    uniform = (uniform / uniform.sum(-1, keepdim=True)).expand(2, 1, T, T)
    first, second = torch.tensor([1, 2]), torch.tensor([6, 10])
    induction = _induction_pattern(first, second, L, T)
    assert torch.allclose(previous_token_scores(previous), torch.ones(1))
    assert torch.allclose(induction_scores(induction, first, second, L), torch.ones(1))
    assert torch.allclose(induction_scores(previous, first, second, L), torch.zeros(1))
    assert previous_token_scores(induction) < 0.1
    expected = sum(1 / i for i in range(2, T + 1)) / (T - 1)               # 1 / (i + 1) at row i
    assert torch.isclose(previous_token_scores(uniform), torch.tensor([expected]))
    rows = previous_token_scores(uniform, by_position=True)                  # (heads, T - 1)
    assert torch.allclose(rows, 1 / torch.arange(2, T + 1).float()[None]) and abs(rows.mean().item() - expected) < 1e-6
    both = torch.stack([previous, induction], dim=1)                        # (B, layers = 2, heads = 1, T, T)
    assert best_head(previous_token_scores(both)) == (0, 0)
    assert best_head(induction_scores(both, first, second, L)) == (1, 0)


def test_score_inputs_are_checked():
    with pytest.raises(ValueError, match="weights"):
        previous_token_scores(torch.zeros(2, 4, 5))
    with pytest.raises(ValueError, match="second occurrence"):
        induction_scores(torch.zeros(1, 1, 10, 10), torch.tensor([3]), torch.tensor([5]), 4)
    with pytest.raises(ValueError, match="scores"):
        best_head(torch.zeros(3))


def test_two_layers_learn_to_predict_the_repeat():
    setup = replace(InductionSetup(), steps=300)
    model, history = train_attention_only(2, 0, setup)
    test = repeated_segment_batch(200, setup.length, setup.segment_length, setup.vocab_size,
                                  torch.Generator().manual_seed(1))
    result = measure(model, test, setup.segment_length)
    assert history.steps == 300
    assert abs(result["first_loss"] - math.log(setup.vocab_size)) < 0.2       # nothing predicts the first
    assert result["second_loss"] < 0.5 * result["first_loss"]                 # the repeat is predicted
    assert best_head(result["induction"])[0] == 1 and result["induction"].max() > 0.5
    assert best_head(result["previous_token"])[0] == 0


def test_with_a_fixed_gap_one_layer_scores_as_an_induction_head():
    """Chapter 8's exercise: when the occurrences are always adjacent (length 2 L + 1), a head that looks a fixed
    distance back sits exactly where an induction head would, so one layer predicts the repeat and scores high."""
    setup = InductionSetup(length=17)
    model, _ = train_attention_only(1, 0, setup)
    test = repeated_segment_batch(500, setup.length, setup.segment_length, setup.vocab_size,
                                  torch.Generator().manual_seed(10_000))
    result = measure(model, test, setup.segment_length)
    assert result["second_loss"] < 0.5 and result["induction"].max() > 0.9


def test_the_record_holds_every_run_measured_on_the_held_out_batch(tmp_path):
    runs = recorded_runs()
    assert SETTINGS["setup"] == asdict(InductionSetup()) and held_out_batch().ids.shape == (2000, 24)
    assert set(runs) == {(n, s) for n in (1, 2) for s in range(5)}
    for (n, _), (losses, measured) in runs.items():
        assert len(losses) == InductionSetup().steps
        assert measured["induction"].shape == measured["previous_token"].shape == (n, 2)
        assert measured["second_by_offset"].shape == (8,) and measured["second_by_gap"].shape == (8,)
        assert 0 < measured["second_loss"] < measured["first_loss"]
    tampered = tmp_path / "record.json"
    record = json.loads(RESULTS.read_text())
    record["runs"][0]["measured"]["second_loss"] += 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_runs(tampered)
    record["settings"]["seeds"] = [0]
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="other settings"):
        recorded_runs(tampered)
