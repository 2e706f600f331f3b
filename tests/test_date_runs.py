import pytest
import torch

from lmcourse.date_runs import DateRuns, clocked
from lmcourse.toy_translation import date_pairs, date_vocabs, encode_pairs, exact_match, strip
from lmcourse.transformer import TransformerConfig, greedy_decode


@pytest.fixture(scope="module")
def task():
    train_pairs, test_pairs = date_pairs(num_train=2048, num_test=20, seed=0)
    src_vocab, tgt_vocab = date_vocabs()
    X, Y = encode_pairs(train_pairs, src_vocab, tgt_vocab)
    X_test, Y_test = encode_pairs(test_pairs, src_vocab, tgt_vocab)
    return DateRuns(X, Y, X_test, Y_test, src_vocab, tgt_vocab, [t for _, t in test_pairs])


def tiny_config(task):
    return TransformerConfig(src_vocab_size=len(task.src_vocab), tgt_vocab_size=len(task.tgt_vocab), d_model=16,
                             num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.0,
                             max_len=16)


def test_a_run_is_seeded_and_scored_every_eval_every_steps_with_the_probe_where_asked(task):
    model, history = task.train(tiny_config(task), seed=3, steps=4, cooldown_steps=2, eval_every=2, probe_steps=(4,))
    again, history_again = task.train(tiny_config(task), seed=3, steps=4, cooldown_steps=2, eval_every=2,
                                      probe_steps=(4,))
    assert history.steps == 4
    assert [s for s, _ in history.evals["exact_match"]] == [2, 4]
    assert [s for s, _ in history.evals["generated_exact_match"]] == [4]
    assert history.evals == history_again.evals
    for a, b in zip(model.parameters(), again.parameters()):
        assert torch.equal(a, b)
    assert history.eval_seconds > 0


def test_the_probe_scores_generation_as_greedy_decoding_does(task):
    model, _ = task.train(tiny_config(task), seed=0, steps=2, cooldown_steps=0, eval_every=2, probe_steps=())
    scores = task.held_out_scores(model)
    out = greedy_decode(model, task.X_test, task.bos, task.eos, max_len=task.Y_test.shape[1] - 1)
    assert scores["generated_exact_match"] == exact_match([strip(o, task.tgt_vocab) for o in out], task.references)
    assert 0 <= scores["token_accuracy_random_future"] <= 1 and scores["largest_logit_change"] >= 0
    assert set(task.held_out_scores(model, probe=False)) == {"exact_match", "token_accuracy"}


def test_the_gru_trains_on_the_same_batches_and_is_scored_by_generation(task):
    rnn, history = task.train_gru(seed=1, d_hidden=8, steps=25)
    assert [s for s, _ in history.evals["exact_match"]] == [25]
    assert history.last("exact_match") == task.gru_exact_match(rnn)["exact_match"]


def test_clocked_adds_the_time_of_each_call():
    clock = {"seconds": 0.0}
    fn = clocked(lambda x: x + 1, clock)
    assert fn(1) == 2 and fn(2) == 3 and clock["seconds"] > 0


def test_bad_inputs_are_named(task):
    with pytest.raises(ValueError, match="X must be a 2-D"):
        DateRuns(task.X[0], task.Y, task.X_test, task.Y_test, task.src_vocab, task.tgt_vocab, task.references)
    with pytest.raises(ValueError, match="X and Y"):
        DateRuns(task.X[:3], task.Y, task.X_test, task.Y_test, task.src_vocab, task.tgt_vocab, task.references)
    with pytest.raises(ValueError, match="references"):
        DateRuns(task.X, task.Y, task.X_test, task.Y_test, task.src_vocab, task.tgt_vocab, task.references[:1])
    with pytest.raises(TypeError, match="tgt_vocab"):
        DateRuns(task.X, task.Y, task.X_test, task.Y_test, task.src_vocab, None, task.references)
    with pytest.raises(ValueError, match="seed"):
        task.train(tiny_config(task), seed=-1)
    with pytest.raises(TypeError, match="config"):
        task.train({"d_model": 16}, seed=0)
    with pytest.raises(ValueError, match="steps"):
        task.train_gru(seed=0, steps=0)
