import numpy as np
import pytest
from gensim.models import KeyedVectors
from scipy.stats import spearmanr

from lmcourse.data import analogy_questions, gensim_data_path, wordsim353
from lmcourse.similarity import WordVectors, bootstrap_spearman, evaluate_analogies, evaluate_similarity


def random_vectors(words, dim=20, seed=0):
    return np.random.default_rng(seed).normal(size=(len(words), dim))


def gensim_vectors(words, vectors):
    kv = KeyedVectors(vectors.shape[1])
    kv.add_vectors(words, vectors.astype(np.float32))
    return kv


def test_cosine_and_one_hot():
    wv = WordVectors(np.eye(3), ["time", "flies", "banana"])
    assert wv.similarity("time", "banana") == 0.0      # one-hot vectors are all orthogonal
    wv = WordVectors(np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.0]]), ["a", "b", "c"])
    assert wv.similarity("a", "b") == pytest.approx(1 / np.sqrt(2))
    assert [w for w, _ in wv.nearest("a", 2)] == ["b", "c"]


def test_nearest_and_analogy_match_gensim():
    words = [f"w{i}" for i in range(300)]
    vectors = random_vectors(words)
    ours, kv = WordVectors(vectors, words), gensim_vectors(words, vectors)
    for w in ("w0", "w17", "w299"):
        expected = kv.most_similar(w, topn=5)
        got = ours.nearest(w, 5)
        assert [a for a, _ in got] == [a for a, _ in expected]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)
    expected = kv.most_similar(positive=["w2", "w3"], negative=["w1"], topn=3)
    assert [a for a, _ in ours.analogy("w1", "w2", "w3", 3)] == [a for a, _ in expected]


def benchmark_vocabulary():
    pairs = wordsim353()
    words = sorted({w for p in pairs[::2] for w in p[:2]})     # covers only part of the benchmark
    questions = analogy_questions()
    words += sorted({w for q in questions[::40] for w in q[1:]} - set(words))
    return words


def test_wordsim_spearman_and_coverage_match_gensim():
    words = benchmark_vocabulary()
    vectors = random_vectors(words, seed=1)
    ours = evaluate_similarity(WordVectors(vectors, words), wordsim353())
    _, (rho, _), oov_percent = gensim_vectors(words, vectors).evaluate_word_pairs(gensim_data_path("wordsim353.tsv"))
    assert ours.spearman == pytest.approx(rho, abs=1e-6)
    assert ours.total == 353 and ours.covered < ours.total
    assert 100 * (1 - ours.covered / ours.total) == pytest.approx(oov_percent, abs=1e-6)
    assert ours.missing_words and all(w not in words for w in ours.missing_words)


def test_analogy_accuracy_and_coverage_match_gensim():
    words = benchmark_vocabulary()
    vectors = random_vectors(words, seed=2)
    vectors[:, 0] += 3.0    # a shared direction makes some analogies come out right
    ours = evaluate_analogies(WordVectors(vectors, words), analogy_questions())
    score, sections = gensim_vectors(words, vectors).evaluate_word_analogies(gensim_data_path("questions-words.txt"))
    total = sections[-1]
    assert ours.correct == len(total["correct"])
    assert ours.covered == len(total["correct"]) + len(total["incorrect"])
    assert ours.accuracy == pytest.approx(score)
    assert ours.total == 19544 and 0 < ours.coverage < 1


def test_unknown_words_are_counted_not_fatal():
    wv = WordVectors(np.eye(3), ["a", "b", "c"])
    score = evaluate_similarity(wv, [("a", "b", 1.0), ("a", "zzz", 2.0), ("c", "b", 3.0), ("q", "r", 1.0)])
    assert (score.covered, score.total, score.missing_words) == (2, 4, ["q", "r", "zzz"])
    none = evaluate_analogies(wv, [("s", "a", "b", "zzz", "c")])
    assert none.covered == 0 and np.isnan(none.accuracy) and none.coverage == 0
    with pytest.raises(KeyError, match="zzz"):
        wv.similarity("a", "zzz")


def test_bad_inputs():
    with pytest.raises(ValueError, match="vectors must be"):
        WordVectors(np.zeros((2, 3)), ["a"])
    with pytest.raises(ValueError, match="distinct"):
        WordVectors(np.zeros((2, 3)), ["a", "a"])
    wv = WordVectors(np.eye(3), ["a", "b", "c"])
    with pytest.raises(ValueError, match="k must be"):
        wv.nearest("a", 0)
    with pytest.raises(ValueError, match="query must be"):
        wv.nearest(np.ones(5))
    with pytest.raises(ValueError, match="pairs must not be empty"):
        evaluate_similarity(wv, [])
    with pytest.raises(TypeError, match="wv must be"):
        evaluate_analogies("not vectors", [("s", "a", "b", "c", "d")])


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`:DeprecationWarning")   # inside gensim's cosmul
def test_three_cos_mul_matches_gensim_and_ranks_count_words_above_the_answer():
    words = [f"w{i}" for i in range(300)]
    vectors = random_vectors(words, seed=4)
    ours, kv = WordVectors(vectors, words), gensim_vectors(words, vectors)
    for a, b, c in (("w1", "w2", "w3"), ("w10", "w40", "w77"), ("w5", "w250", "w299")):
        expected = kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=3)   # epsilon 1e-6 there
        assert [w for w, _ in ours.analogy(a, b, c, 3, method="mul")] == [w for w, _ in expected]
        add = ours.analogy(a, b, c, 3)
        assert [w for w, _ in add] == [w for w, _ in kv.most_similar(positive=[b, c], negative=[a], topn=3)]
    questions = [("s1", "w1", "w2", "w3", ours.analogy("w1", "w2", "w3", 2)[1][0]),   # the second-best answer
                 ("s2", "w4", "w5", "w6", ours.analogy("w4", "w5", "w6", 1)[0][0]),   # the best answer
                 ("s2", "w4", "w5", "w6", "nope")]
    score = evaluate_analogies(ours, questions, chunk=1)
    assert score.ranks == [2, 1] and score.sections == ["s1", "s2"]
    assert score.by_section == {"s1": (0, 1), "s2": (1, 1)} and score.covered == 2 and score.total == 3
    with pytest.raises(ValueError, match="method must be"):
        evaluate_analogies(ours, questions, method="sub")


def test_bootstrap_spearman_resamples_the_shared_pairs():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    a = WordVectors(rng.normal(size=(30, 4)), words)
    b = WordVectors(rng.normal(size=(29, 4)), words[:29])               # lacks w29
    pairs = [(words[i], words[j], float(rng.random())) for i, j in rng.integers(30, size=(60, 2)) if i != j]
    estimates, draws, n = bootstrap_spearman({"a": [a], "b": [b, a]}, pairs, draws=50, seed=1)
    shared = [p for p in pairs if "w29" not in p[:2]]
    assert n == len(shared) and draws["a"].shape == (50,)
    # one draw, recomputed with scipy: the resample of the first draw
    picks = np.random.default_rng(1).integers(n, size=(50, n))[0]
    cos = [a.similarity(shared[k][0], shared[k][1]) for k in picks]
    expected = spearmanr(cos, [shared[k][2] for k in picks]).statistic
    assert draws["a"][0] == pytest.approx(expected, abs=1e-12)
    assert np.allclose(draws["b"], (draws["a"] + bootstrap_spearman({"b": [b]}, shared, draws=50, seed=1)[1]["b"]) / 2)
    assert estimates["a"] == pytest.approx(evaluate_similarity(a, shared).spearman)
    with pytest.raises(ValueError, match="models"):
        bootstrap_spearman({}, pairs)
    with pytest.raises(ValueError, match="pairs"):
        bootstrap_spearman({"a": [a]}, pairs[:1])
