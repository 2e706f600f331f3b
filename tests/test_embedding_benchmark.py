"""Chapter 3's benchmark: every method over seeds, and the stored Wikipedia scores it made."""
import json

import numpy as np
import pytest

from lmcourse import embedding_benchmark as eb
from lmcourse.data import news_documents
from lmcourse.ngram import tokenized_sentences


@pytest.fixture(scope="module")
def small_run():
    sentences = tokenized_sentences(news_documents("train")[:15])
    vectors, seconds, vocabulary = eb.train_all(sentences, [0, 1])
    return sentences, vectors, seconds, vocabulary


def test_every_method_has_vectors_for_every_seed_over_one_vocabulary(small_run):
    sentences, vectors, seconds, vocabulary = small_run
    assert set(vectors) == {(m, s) for m in eb.METHODS for s in (0, 1)}
    for (method, _seed), wv in vectors.items():
        assert sorted(wv.words) == sorted(vocabulary), method
    assert vectors["PPMI+SVD", 0] is vectors["PPMI+SVD", 1]          # deterministic: computed once
    assert not np.allclose(vectors["skip-gram", 0].vectors, vectors["skip-gram", 1].vectors)
    assert set(seconds) == set(eb.METHODS) and all(s >= 0 for s in seconds.values())


def test_gensim_runs_are_deterministic_given_the_seed(small_run):
    sentences = small_run[0]
    a, b = eb.gensim_word2vec(sentences, "CBOW", 3), eb.gensim_word2vec(sentences, "CBOW", 3)
    assert np.array_equal(a.vectors, b.vectors)


def test_scores_hold_one_value_per_seed_and_coverage_is_counted(small_run):
    _, vectors, _, vocabulary = small_run
    scores, coverage = eb.score_all(vectors, vocabulary, [0, 1])
    assert set(scores) == set(eb.METHODS)
    assert all(len(values) == 2 for m in scores.values() for values in m.values())
    assert all(0 <= covered <= total for covered, total in coverage.values())
    assert coverage["analogies"][1] == 19544


def test_train_all_refuses_no_sentences():
    with pytest.raises(ValueError, match="sentences"):
        eb.train_all([], [0])


def test_the_stored_wikipedia_scores_match_the_current_settings():
    record = json.loads(eb.RESULTS.read_text(encoding="utf-8"))
    assert record["settings"] == json.loads(json.dumps(eb.settings())), \
        "settings changed since the scores were made: rerun python -m lmcourse.embedding_benchmark"
    assert record["seeds"] == [0, 1, 2, 3, 4]
    for method in eb.METHODS:
        assert set(record["scores"][method]) == set(eb.MEASURES)
        assert all(len(v) == 5 for v in record["scores"][method].values())
