import pytest
import torch
import torch.nn.functional as F

from lmcourse.distillation import distillation_loss, soft_targets


def test_soft_targets_flatten_with_temperature():
    logits = torch.tensor([[4.0, 1.0, 0.0]])
    assert soft_targets(logits, 5.0)[0, 0] < soft_targets(logits, 1.0)[0, 0]
    torch.testing.assert_close(soft_targets(logits, 1.0), logits.softmax(-1))


def test_matches_torch_kl_div():
    s, t = torch.randn(6, 10), torch.randn(6, 10)
    T = 3.0
    reference = F.kl_div(F.log_softmax(s / T, -1), F.log_softmax(t / T, -1), log_target=True,
                         reduction="batchmean") * T * T
    torch.testing.assert_close(distillation_loss(s, t, T), reference, atol=1e-6, rtol=1e-6)
    labels = torch.randint(10, (6,))
    mixed = distillation_loss(s, t, T, labels, alpha=0.3)
    torch.testing.assert_close(mixed, 0.3 * reference + 0.7 * F.cross_entropy(s, labels),
                               atol=1e-6, rtol=1e-6)


def test_zero_when_student_equals_teacher_and_no_teacher_gradient():
    t = torch.randn(4, 5, requires_grad=True)
    loss = distillation_loss(t.detach().clone().requires_grad_(), t, 2.0)
    assert loss.abs() < 1e-6
    loss.backward()
    assert t.grad is None


def test_bad_inputs():
    with pytest.raises(ValueError, match="temperature"):
        soft_targets(torch.zeros(3), 0.0)
    with pytest.raises(ValueError, match="student_logits"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="alpha"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 3), alpha=2.0)


def test_teacher_with_impossible_classes():
    teacher = torch.tensor([[2.0, float("-inf"), 0.0]])
    assert distillation_loss(teacher, teacher, 2.0).abs() < 1e-6
    assert torch.isfinite(distillation_loss(torch.zeros(1, 3), teacher, 2.0))


# --- the recorded comparison (lmcourse.distillation.run and its record) ------------------------------
import json  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lmcourse.distillation as dl  # noqa: E402
from lmcourse.mlm_eval import unigram_loss  # noqa: E402

TINY = {**dl.SETTINGS, "student_tokens": 300, "batch_tokens": 100, "eval_every": 2, "budget_steps": 4,
        "patience_steps": 4, "max_steps": 12}


@pytest.fixture(scope="module")
def data():
    return dl.distillation_data()


def test_a_student_starts_at_the_unigram_of_its_words_and_names_bad_arguments(data):
    words = dl.student_words(data, 2)[1:]
    student = dl.BigramStudent(len(data["teacher"]), words)
    before = dl.next_word_loss(student, data["valid"])
    assert abs(before - unigram_loss(words, data["valid"][1:], len(data["teacher"]))) < 0.01
    with pytest.raises(ValueError, match="seed"):
        dl.student_words(data, len(data["train"]) // dl.SETTINGS["student_tokens"])
    with pytest.raises(ValueError, match="train_ids"):
        dl.BigramStudent(10, torch.tensor([11]))
    with pytest.raises(ValueError, match="d_embed"):
        dl.BigramStudent(10, torch.tensor([1]), d_embed=0)
    with pytest.raises(ValueError, match="stream"):
        dl.next_word_loss(student, torch.tensor([1]))


def test_seeds_read_disjoint_slices_and_the_baselines_are_per_seed(data):
    n = dl.SETTINGS["student_tokens"]
    first, second = dl.student_words(data, 0), dl.student_words(data, 1)
    assert len(first) == n + 1 and torch.equal(first[-1:], second[:1])   # next-word pairs do not overlap
    assert torch.equal(second, data["train"][n: 2 * n + 1])
    lines = dl.baselines(data)
    seeds = len(dl.SETTINGS["seeds"])
    assert all(len(lines[name][split]) == seeds for name in ("unigram", "bigram") for split in ("valid", "test"))
    assert lines["unigram"]["valid"][1] == unigram_loss(second[1:], data["valid"][1:], len(data["teacher"]))
    weight = lines["bigram"]["weight"][1]
    table = dl.interpolated_bigram(second, len(data["teacher"]), weight)
    assert abs(dl.next_word_loss(table, data["valid"]) - lines["bigram"]["valid"][1]) < 1e-4
    assert torch.allclose(table.exp().sum(1), torch.ones(len(table)), atol=1e-4)
    for k in range(seeds):                           # the teacher and the counted bigram beat the unigram
        assert lines["teacher"]["valid"] < lines["bigram"]["valid"][k] < lines["unigram"]["valid"][k]
    with pytest.raises(ValueError, match="weight"):
        dl.interpolated_bigram(second, len(data["teacher"]), 1.5)
    with pytest.raises(ValueError, match="words"):
        dl.interpolated_bigram(second[:1], len(data["teacher"]), 0.5)


def test_a_run_pairs_the_arms_stops_early_and_names_bad_arguments(monkeypatch, data):
    monkeypatch.setattr(dl, "SETTINGS", TINY)
    tiny = {**data, "train": data["train"][:601], "valid": data["valid"][:500], "test": data["test"][:500]}
    runs = {arm: dl.run(arm, 0, tiny) for arm in dl.ARMS}
    assert len({r["valid_ce"][0] for r in runs.values()}) == 1            # the same initial student
    for r in runs.values():
        assert r["steps"][:3] == [0, 2, 4] and len(r["steps"]) == len(r["valid_ce"])
        assert r["best_valid_ce"] == min(r["valid_ce"]) == r["valid_ce"][r["steps"].index(r["best_step"])]
        assert r["steps"][-1] == 12 or r["steps"][-1] - r["best_step"] >= 4
        assert r["budget_valid_ce"] == r["valid_ce"][2]
    assert dl.run("hard labels", 0, tiny) == runs["hard labels"]
    other = dl.run("hard labels", 1, tiny, max_steps=2)          # another seed reads other words
    assert other["valid_ce"][0] != runs["hard labels"]["valid_ce"][0]
    with pytest.raises(ValueError, match="arm"):
        dl.run("labels", 0, tiny)
    with pytest.raises(ValueError, match="seed"):
        dl.run("hard labels", -1, tiny)
    with pytest.raises(ValueError, match="seed"):
        dl.run("hard labels", 2, tiny)
    with pytest.raises(ValueError, match="max_steps"):
        dl.run("hard labels", 0, tiny, max_steps=13)


def test_the_record_matches_its_settings_a_rerun_and_its_hash(tmp_path, data):
    runs = dl.recorded_runs()
    s = dl.SETTINGS
    assert sorted((r["arm"], r["seed"]) for r in runs) == sorted((arm, seed) for arm in dl.ARMS for seed in s["seeds"])
    for r in runs:
        assert r["best_valid_ce"] == min(r["valid_ce"])
        assert r["steps"][-1] == s["max_steps"] or r["steps"][-1] - r["best_step"] >= s["patience_steps"]
        assert r["budget_valid_ce"] == r["valid_ce"][r["steps"].index(s["budget_steps"])]
    recorded = next(r for r in runs if (r["arm"], r["seed"]) == ("soft targets, T = 2", 1))
    rerun = dl.run("soft targets, T = 2", 1, data, max_steps=10)
    assert max(abs(a - b) for a, b in zip(rerun["valid_ce"], recorded["valid_ce"][:3])) < 2e-3
    tampered = tmp_path / "record.json"
    record = json.loads(dl.RESULTS.read_text())
    record["runs"][0]["best_valid_ce"] -= 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        dl.recorded_runs(tampered)


def test_the_figure_draws_every_run_and_both_lines():
    runs = dl.recorded_runs()
    lines = {"teacher": {"valid": 5.3}, "unigram": {"valid": [5.8, 5.9]}, "bigram": {"valid": [5.5, 5.6]}}
    ax = dl.plot_distillation_runs(runs, lines)
    assert len(ax.lines) == 2 * len(runs) + 4
    legend = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "unigram" in legend and "teacher" in legend and "bigram of the same words (5.55)" in legend
    with pytest.raises(ValueError, match="hard labels"):
        dl.plot_distillation_runs([r for r in runs if r["arm"] != "hard labels"], lines)
    plt.close("all")
