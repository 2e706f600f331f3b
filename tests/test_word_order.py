"""lmcourse.word_order: chapter 8's real-or-shuffled task, its pairs, its fine-tuning and its record."""
import json
import random

import pytest

from lmcourse.gpt import GPTConfig
from lmcourse.pretrain import load_pretrained
from lmcourse.word_order import (
    CURVE_ARMS,
    RESULTS,
    SETTINGS,
    accuracies,
    encode_pairs,
    held_out_pairs,
    label_pool,
    labelled_pairs,
    make_pairs,
    pad_after_end_of_text,
    pair_accuracy,
    recorded_runs,
    run_arm,
    sentences,
    shuffle_inside,
)

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def checkpoint():
    return load_pretrained("gpt")


def test_sentences_and_shuffles_keep_the_ends_and_the_words():
    docs = ["Short one. This sentence has exactly eight words in it. Is this one here long enough to count, then?"]
    assert sentences(docs) == ["This sentence has exactly eight words in it.",
                               "Is this one here long enough to count, then?"]
    real = "The group still own three small chunks of land."
    shuffled = shuffle_inside(real, random.Random(0))
    assert shuffled != real and sorted(shuffled.split()) == sorted(real.split())
    assert shuffled.split()[0] == "The" and shuffled.split()[-1] == "land."
    assert make_pairs([real], seed=5) == make_pairs([real], seed=5)
    with pytest.raises(ValueError, match="sentence"):
        shuffle_inside("a b b c", random.Random(0))
    with pytest.raises(ValueError, match="hi"):
        sentences(docs, lo=8, hi=4)


def test_labelled_pairs_come_from_validation_and_test_pairs_from_test_articles():
    pool = set(label_pool())
    labelled = labelled_pairs(8, seed=2)
    assert labelled == labelled_pairs(8, seed=2) != labelled_pairs(8, seed=3)
    assert all(real in pool for real, _ in labelled)
    test = held_out_pairs(60)
    assert len(test) == 60 and not {real for real, _ in test} & pool
    with pytest.raises(ValueError, match="num_labelled"):
        labelled_pairs(0, seed=0)


def test_pairs_are_encoded_after_end_of_text_and_scored_in_order(checkpoint):
    gpt, tokenizer = checkpoint
    ids, lengths = pad_after_end_of_text([[5, 6, 7], [8]], eot=1)
    assert ids.tolist() == [[1, 5, 6, 7], [1, 8, 1, 1]] and lengths.tolist() == [4, 2]
    pairs = [("The cat sat on the mat today.", "The mat sat on the cat today.")]
    ids, lengths = encode_pairs(tokenizer, pairs)
    assert ids.shape[0] == 2 and lengths[0] == len(tokenizer.encode(pairs[0][0])) + 1
    swapped = encode_pairs(tokenizer, [pairs[0][::-1]])
    assert pair_accuracy(gpt, (ids, lengths)) + pair_accuracy(gpt, swapped) == 1.0


def test_the_record_reads_back_and_a_draw_reruns_exactly(checkpoint, tmp_path):
    gpt, tokenizer = checkpoint
    runs = recorded_runs()
    assert len(runs) == len(SETTINGS["seeds"]) * (2 * len(SETTINGS["label_counts"]) + len(SETTINGS["transfer_blocks"]))
    test_batch = encode_pairs(tokenizer, held_out_pairs(SETTINGS["test_pairs"]))
    for arm in CURVE_ARMS:
        assert round(run_arm(gpt, tokenizer, 2, 1, arm, test_batch), 4) == accuracies(runs, arm, 2)[1], arm
    tampered = tmp_path / "record.json"
    record = json.loads(RESULTS.read_text())
    record["runs"][0]["accuracy"] += 0.1
    tampered.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_runs(tampered)
    with pytest.raises(ValueError, match="arm must be one of"):
        run_arm(gpt, tokenizer, 2, 0, "3 blocks transferred", test_batch)
    with pytest.raises(ValueError, match="no run"):
        accuracies(runs, "from scratch", 5)
    with pytest.raises(TypeError, match="gpt"):
        run_arm(GPTConfig(vocab_size=8, context_size=8, d_model=8, num_layers=1, num_heads=2), tokenizer, 2, 0,
                "from scratch", test_batch)
