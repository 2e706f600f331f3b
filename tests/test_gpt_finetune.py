"""lmcourse.gpt_finetune: the few-label experiment of chapter 8, on its data and on tiny models."""
import json

import pytest
import torch

from lmcourse.data import news_documents, wiki_articles
from lmcourse.gpt import GPT, GPTConfig, GPTForTask
from lmcourse.gpt_finetune import (
    ARMS,
    BASELINES,
    RESULTS,
    corpus_passages,
    encode_passages,
    held_out_passages,
    kneser_ney_accuracy,
    kneser_ney_predict,
    label_curve,
    labelled_passages,
    majority_accuracy,
    recorded_curve,
    run_arm,
    task_logits,
    task_tokens,
    train_classifier,
)
from lmcourse.pretrain import load_pretrained

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tokenizer():
    return load_pretrained("gpt")[1]


def tiny_gpt(tokenizer, seed=0):
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=len(tokenizer), context_size=72, d_model=16, num_layers=1, num_heads=2))


def running_text(split):
    """Each article of ``split`` with its whitespace made single spaces, as passages are cut from it."""
    return [" ".join(doc.split()) for doc in news_documents(split) + wiki_articles(split)]


def test_corpus_passages_have_both_labels_and_the_asked_length():
    items = corpus_passages("valid", words=12)
    assert {label for _, label in items} == {0, 1}
    assert all(len(text.split()) == 12 for text, _ in items)
    with pytest.raises(ValueError, match="split"):
        corpus_passages("dev")
    with pytest.raises(ValueError, match="words"):
        corpus_passages("valid", words=0)


def test_label_draws_are_balanced_seeded_and_apart_from_the_test_set():
    labelled = labelled_passages(16, seed=3)
    assert sorted(label for _, label in labelled) == [0] * 8 + [1] * 8
    assert labelled == labelled_passages(16, seed=3) and labelled != labelled_passages(16, seed=4)
    test = held_out_passages(per_class=40)
    assert sorted(label for _, label in test) == [0] * 40 + [1] * 40
    assert test == held_out_passages(per_class=40)
    valid_text, test_text = running_text("valid"), running_text("test")
    # every labelled passage is from a validation article, every test passage from a test article only
    assert all(any(p in doc for doc in valid_text) for p, _ in labelled)
    assert all(any(p in doc for doc in test_text) and not any(p in doc for doc in valid_text) for p, _ in test)
    assert not {p for p, _ in labelled} & {p for p, _ in test}


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_labelled"):
        labelled_passages(5, seed=0)
    with pytest.raises(ValueError, match="num_labelled"):
        labelled_passages(0, seed=0)
    with pytest.raises(ValueError, match="per_class"):
        held_out_passages(per_class=0)
    with pytest.raises(ValueError, match="items"):
        encode_passages(None, [])
    with pytest.raises(ValueError, match="train"):
        kneser_ney_predict([], ["a text"])
    with pytest.raises(ValueError, match="seeds"):
        label_curve(GPT(GPTConfig(vocab_size=8, context_size=8, d_model=8, num_layers=1, num_heads=2)), None,
                    seeds=[0])


def test_encode_passages_is_gpt1_classification_input(tokenizer):
    tokens = task_tokens(tokenizer)
    ids, last, labels = encode_passages(tokenizer, [("The cat sat.", 0), ("A much longer passage of words.", 1)])
    first = tokenizer.encode("The cat sat.")
    assert ids.shape[:2] == (2, 1) and labels.tolist() == [0, 1]
    assert ids[0, 0, :len(first) + 2].tolist() == [tokens.start, *first, tokens.extract]
    assert last[0, 0] == len(first) + 1 and ids[1, 0, last[1, 0]] == tokens.extract
    ids, last, _ = encode_passages(tokenizer, [("word " * 100, 0)], max_tokens=10)
    assert ids.shape == (1, 1, 12) and last.item() == 11


def test_kneser_ney_classifies_a_toy_case_by_class_likelihood():
    train = [("the cat purrs on the mat", 0), ("a cat sleeps all day", 0),
             ("the dog barks at the post", 1), ("a dog runs in the park", 1)]
    assert kneser_ney_predict(train, ["the cat sleeps", "a dog barks", "the cat purrs"]) == [0, 1, 0]
    assert kneser_ney_accuracy(train, [("a cat purrs", 0), ("the dog runs", 1)]) == 1.0
    # any labels, not only 0 and 1; unseen words ("zebra") are scored as <unk> by every class model
    birds = train + [("the bird sings in the tree", 7), ("a bird flies", 7)]
    assert kneser_ney_predict(birds, ["a bird sings", "the zebra barks"]) == [7, 1]


def test_majority_class():
    train = [("a", 1), ("b", 1), ("c", 0)]
    assert majority_accuracy(train, [("x", 0), ("y", 1)]) == 0.5
    assert majority_accuracy(train, [("x", 1)]) == 1.0
    assert majority_accuracy([("a", 1), ("b", 0)], [("x", 0)]) == 1.0      # a tie goes to the smaller label


def test_training_learns_a_learnable_task_and_leaves_the_start_untouched(tokenizer):
    cats = [f"the cat {w} and the cat {w} again" for w in ("sat", "ran", "ate", "slept", "purred", "hid")]
    dogs = [f"the dog {w} and the dog {w} again" for w in ("sat", "ran", "ate", "slept", "barked", "dug")]
    train = [(t, 0) for t in cats[:4]] + [(t, 1) for t in dogs[:4]]
    held_out = [(t, 0) for t in cats[4:]] + [(t, 1) for t in dogs[4:]]
    start = tiny_gpt(tokenizer)
    before = {k: v.clone() for k, v in start.state_dict().items()}
    test_batch = encode_passages(tokenizer, held_out)
    run = train_classifier(start, tokenizer, train, test_batch, lm_weight=0.5, lr=3e-3, seed=0)
    assert run.train_loss < 0.05 and run.steps < 400          # it fitted its labelled passages
    assert run.accuracy == 1.0                                 # and the rule carries over to new ones
    assert all(torch.equal(before[k], v) for k, v in start.state_dict().items())
    assert train_classifier(start, tokenizer, train, test_batch, lm_weight=0.5, lr=3e-3, seed=0) == run
    with pytest.raises(ValueError, match="lr"):
        train_classifier(start, tokenizer, train, test_batch, lm_weight=0.0, lr=0.0, seed=0)


def test_task_logits_match_the_forward_pass(tokenizer):
    model = GPTForTask(tiny_gpt(tokenizer), "classification").eval()
    ids, last, _ = encode_passages(tokenizer, [("one two three", 0), ("four five", 1), ("six", 0)])
    with torch.no_grad():
        expected = model(ids, last)[0]
    assert torch.allclose(task_logits(model, ids, last, chunk=2), expected, atol=1e-6)


def test_label_curve_runs_every_arm_on_shared_draws(tokenizer):
    curve = label_curve(tiny_gpt(tokenizer), tokenizer, label_counts=(4,), seeds=(0, 1), test_per_class=5,
                        processes=1)
    assert set(curve.accuracy) == set(ARMS + BASELINES) and curve.test_size == 10
    assert all(len(curve.accuracy[name][4]) == 2 for name in curve.accuracy)
    assert curve.accuracy["majority class"][4] == [0.5, 0.5]
    assert all(loss < 0.05 for name in ARMS for loss in curve.train_loss[name][4])
    mean, se = curve.paired("fine-tuned, lambda 0", "Kneser-Ney", 4)
    a, b = curve.accuracy["fine-tuned, lambda 0"][4], curve.accuracy["Kneser-Ney"][4]
    assert mean == pytest.approx((a[0] - b[0] + a[1] - b[1]) / 2) and se >= 0


def test_the_record_reads_back_and_its_baselines_rerun_exactly(tokenizer, tmp_path):
    curve = recorded_curve()
    assert curve.label_counts == (4, 16, 64) and curve.seeds == tuple(range(20)) and curve.test_size == 200
    assert all(len(curve.accuracy[name][n]) == 20 for name in ARMS + BASELINES for n in curve.label_counts)
    test = held_out_passages()
    rerun = run_arm(None, tokenizer, 16, 3, "baselines", test, None)
    for name in BASELINES:
        assert round(rerun[name], 4) == curve.accuracy[name][16][3], name
    tampered = tmp_path / "record.json"
    record = json.loads(RESULTS.read_text())
    record["runs"][0]["accuracy"] += 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_curve(tampered)
    with pytest.raises(ValueError, match="name must be one of"):
        run_arm(None, tokenizer, 4, 0, "frozen probe", test, None)
