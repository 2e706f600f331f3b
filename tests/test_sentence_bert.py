"""lmcourse.sentence_bert and lmcourse.anisotropy: the tiny-BERT bi-encoder's pairs, loss and scores,
BERT-whitening and the frequency geometry, checked on small inputs and against independent code, and
the recorded experiment read back with its checks."""
import json
import math

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import NearestNeighbors

from lmcourse.anisotropy import Whitening, frequency_geometry, knn_distance, mean_pairwise_cosine, pairwise_cosines
from lmcourse.bert import BertConfig, BertModel
from lmcourse.sentence_bert import (
    ARMS,
    EXPLORER_ARMS,
    RESULTS,
    SETTINGS,
    embed,
    finetune,
    fit_words,
    held_out_pairs,
    pair_batches,
    paired_difference,
    random_scores,
    ranking_loss,
    recorded_results,
    retrieval_scores,
    similarity_explorer,
    summary,
)
from lmcourse.tokenize import train_wordpiece

pytestmark = pytest.mark.usefixtures("one_thread")

TEXTS = ["the cat sat on the mat", "a dog ran in the park", "rain fell on the town all day",
         "the river rose after the storm", "markets fell as rates rose", "the team won the final game"]


@pytest.fixture(scope="module")
def tok():
    return train_wordpiece(TEXTS, vocab_size=80, criterion="frequency")


@pytest.fixture(scope="module")
def articles():
    words = [t.split()[:2] for t in TEXTS]                     # every sentence distinct: (k, i) -> k, k + i + 1
    return [[" ".join(words[k] + words[(k + i + 1) % 6]) for i in range(3 + k % 3)] for k in range(6)]


def tiny_bert(tok, seed=0):
    torch.manual_seed(seed)
    return BertModel(BertConfig(vocab_size=len(tok), d_model=16, num_layers=1, num_heads=2, d_ff=32, max_len=12))


def test_fit_words_keeps_whole_words_within_the_piece_budget(tok):
    sentence = "the river rose after the storm"
    for budget in range(1, 12):
        cut = fit_words(tok, sentence, budget)
        assert sentence.startswith(cut) and len(tok.tokenize(cut)) <= budget
        longer = " ".join(sentence.split()[: len(cut.split()) + 1])
        assert longer == cut or len(tok.tokenize(longer)) > budget                  # the longest that fits
    with pytest.raises(ValueError, match="max_pieces"):
        fit_words(tok, sentence, 0)


def test_held_out_pairs_are_disjoint_neighbours(articles):
    a, b, where = held_out_pairs(articles, per_article=1)
    assert len(a) == len(articles) and where.tolist() == list(range(len(articles)))
    a, b, where = held_out_pairs(articles, per_article=5)
    for x, y, k in zip(a, b, where):
        i = articles[k].index(x)
        assert articles[k][i + 1] == y and i % 2 == 0                               # (s0, s1), (s2, s3), ...
    assert len(a) == sum(len(s) // 2 for s in articles)
    with pytest.raises(ValueError, match="per_article"):
        held_out_pairs(articles, per_article=0)


def test_pair_batches_draw_neighbours_from_distinct_articles(tok, articles):
    batches = pair_batches(articles, tok, steps=3, batch_size=4, seed=1, max_length=12)
    assert len(batches) == 3
    where = {tuple(tok.encode(x, max_length=12).input_ids): (k, i) for k, a in enumerate(articles)
             for i, x in enumerate(a)}
    for batch in batches:
        assert batch["a"]["input_ids"].shape[0] == 4 and batch["a"]["input_ids"].shape[1] <= 12
        found = set()
        for side_a, side_b, mask_a, mask_b in zip(batch["a"]["input_ids"], batch["b"]["input_ids"],
                                                  batch["a"]["attention_mask"], batch["b"]["attention_mask"]):
            k, i = where[tuple(side_a[mask_a.bool()].tolist())]
            k2, i2 = where[tuple(side_b[mask_b.bool()].tolist())]
            assert k == k2 and i2 == i + 1                                          # b follows a in its article
            found.add(k)
        assert len(found) == 4                                                      # four different articles
    again = pair_batches(articles, tok, steps=3, batch_size=4, seed=1, max_length=12)
    assert all(torch.equal(x["a"]["input_ids"], y["a"]["input_ids"]) for x, y in zip(batches, again))
    with pytest.raises(ValueError, match="batch_size"):
        pair_batches(articles, tok, steps=1, batch_size=7, seed=0)


def test_ranking_loss_is_softmax_over_scaled_cosines(tok, articles):
    model = tiny_bert(tok).eval()
    batch = pair_batches(articles, tok, steps=1, batch_size=3, seed=0, max_length=12)[0]
    u, v = (torch.tensor(embed(model, tok, [tok.decode(ids) for ids in batch[side]["input_ids"]], max_length=12))
            for side in "ab")
    expected = 0.0
    for i in range(3):                       # -log softmax_i of 20 cos(u_i, v_j), written out
        logits = [20 * float(u[i] @ v[j] / (u[i].norm() * v[j].norm())) for j in range(3)]
        expected -= logits[i] - math.log(sum(math.exp(x) for x in logits))
    assert ranking_loss(model, batch).item() == pytest.approx(expected / 3, abs=1e-4)


def test_finetuning_lowers_the_ranking_loss_on_its_batches(tok, articles):
    raw = tiny_bert(tok)
    batches = pair_batches(articles, tok, steps=20, batch_size=4, seed=0, max_length=12)
    before = np.mean([ranking_loss(raw.eval(), b).item() for b in batches])
    tuned, history = finetune(raw, batches, lr=3e-3, seed=0)
    after = np.mean([ranking_loss(tuned, b).item() for b in batches])
    assert after < before - 0.2 and not tuned.training
    assert all(torch.equal(p, q) for p, q in zip(raw.state_dict().values(), tiny_bert(tok).state_dict().values()))


def test_retrieval_scores_against_hand_ranks_and_sklearn_auc():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(9, 5)), rng.normal(size=(9, 5))
    articles = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3])
    s = retrieval_scores(q, k, articles)
    cos = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (k / np.linalg.norm(k, axis=1, keepdims=True)).T
    pos, neg, rr = [], [], []
    for i in range(9):
        others = [cos[i, j] for j in range(9) if articles[j] != articles[i]]
        rr.append(1 / (1 + sum(c > cos[i, i] for c in others)))
        pos.append(cos[i, i])
        neg += others
    assert s["mrr"] == pytest.approx(np.mean(rr)) and s["top1"] == pytest.approx(np.mean(np.array(rr) == 1))
    assert s["auc"] == pytest.approx(roc_auc_score([1] * len(pos) + [0] * len(neg), pos + neg))
    with pytest.raises(ValueError, match="articles"):
        retrieval_scores(q, k, np.zeros(9))


def test_random_scores_match_random_vectors():
    articles = np.repeat(np.arange(6), 3)
    rng = np.random.default_rng(1)
    draws = [retrieval_scores(rng.normal(size=(18, 4)), rng.normal(size=(18, 4)), articles) for _ in range(400)]
    expected = random_scores(articles)
    assert np.mean([d["mrr"] for d in draws]) == pytest.approx(expected["mrr"], abs=0.01)
    assert np.mean([d["top1"] for d in draws]) == pytest.approx(expected["top1"], abs=0.01)


def test_whitening_gives_identity_covariance_and_removes_the_cone():
    rng = np.random.default_rng(0)
    cone = rng.normal(size=(500, 6)) * [3, 1, 1, 0.5, 0.2, 0.1] + 4.0          # a shared offset: a narrow cone
    assert mean_pairwise_cosine(cone) > 0.8
    white = Whitening.fit(cone)
    w = white(cone)
    np.testing.assert_allclose(np.cov(w, rowvar=False), np.eye(6), atol=1e-8)
    assert abs(mean_pairwise_cosine(white(rng.normal(size=(300, 6)) * [3, 1, 1, 0.5, 0.2, 0.1] + 4.0))) < 0.02
    assert Whitening.fit(cone, k=2)(cone).shape == (500, 2)
    assert pairwise_cosines(np.eye(3)).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="k"):
        Whitening.fit(cone, k=7)
    with pytest.raises(ValueError, match="vectors"):
        white(np.ones((2, 5)))


def test_knn_distance_matches_sklearn_across_chunks():
    v = np.random.default_rng(2).normal(size=(1100, 3))
    dist, _ = NearestNeighbors(n_neighbors=4).fit(v).kneighbors(v)
    np.testing.assert_allclose(knn_distance(v, k=3), dist[:, 1:].mean(1), atol=1e-6)


def test_frequency_geometry_finds_a_planted_trend():
    rng = np.random.default_rng(3)
    counts = np.r_[0, rng.integers(1, 1000, size=300)]
    e = rng.normal(size=(301, 8)) / np.sqrt(8) * (0.1 + counts / 100)[:, None]     # frequent: far out
    g = frequency_geometry(e, counts, k=3, buckets=(0, 100))
    assert len(g["count"]) == 300 and g["count"][0] == counts.max()                   # count 0 left out
    assert g["spearman_norm"] > 0.5 and g["spearman_knn"] > 0.5
    assert [b["tokens"] for b in g["buckets"]] == [100, 200]
    assert g["buckets"][0]["mean_norm"] > g["buckets"][1]["mean_norm"]
    with pytest.raises(ValueError, match="counts"):
        frequency_geometry(e, counts[:10])


def test_frequency_geometry_sees_rare_tokens_pointing_one_way():
    rng = np.random.default_rng(4)
    counts = np.arange(200, 0, -1)
    e = rng.normal(size=(200, 8))
    e[100:] = 3.0 + 0.1 * e[100:]                        # the 100 rarest: far out, close together, one direction
    g = frequency_geometry(e, counts, k=3, buckets=(0, 100))
    frequent, rare = g["buckets"]
    assert rare["mean_cosine"] > 0.95 and abs(frequent["mean_cosine"]) < 0.1
    assert rare["mean_norm"] > frequent["mean_norm"] and rare["mean_knn"] < frequent["mean_knn"]
    assert g["spearman_knn"] > 0.5                       # the frequent ones are the sparse ones here


# ---------------------------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results():
    return recorded_results()


def test_the_record_is_checked_on_load(tmp_path):
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    record["runs"]["arms"][0]["mrr"] += 0.1
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_results(edited)
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    record["settings"] = {**record["settings"], "steps": 1}
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="settings"):
        recorded_results(edited)


def test_the_record_holds_every_arm_and_seed(results):
    stats = summary(results)
    assert list(stats) == list(ARMS)
    assert stats["fine-tuned mean"]["seeds"] == len(SETTINGS["seeds"])
    assert results["lr"] in [float(r) for r in results["dev_grid"]]
    assert all(r["lr"] == results["lr"] for r in results["runs"])
    n = results["data"]["test_pairs"]
    assert all(len(a["reciprocal_ranks"]) == n for a in results["arms"])
    tuned = [a for a in results["arms"] if a["arm"] == "fine-tuned mean"]
    mean, se = stats["fine-tuned mean"]["mrr"]
    assert mean == pytest.approx(np.mean([a["mrr"] for a in tuned])) and se > 0
    assert all(a["mrr"] == pytest.approx(np.mean(a["reciprocal_ranks"]), abs=1e-3) for a in results["arms"])


def test_paired_difference_reads_the_per_seed_and_per_query_numbers(results):
    d = paired_difference(results, "fine-tuned mean", "tiny BERT mean")
    tuned = [a["mrr"] for a in results["arms"] if a["arm"] == "fine-tuned mean"]
    raw = next(a["mrr"] for a in results["arms"] if a["arm"] == "tiny BERT mean")
    assert d["seed_mean"] == pytest.approx(np.mean(tuned) - raw)
    assert d["queries"] == results["data"]["test_pairs"] and d["query_se"] > 0
    with pytest.raises(ValueError, match="no arm"):
        paired_difference(results, "fine-tuned mean", "bogus")


def test_the_explorer_has_one_labelled_frame_per_encoder(results):
    html = similarity_explorer(results).data
    assert html.count('aria-label="encoder"') == 2                                   # the group and the range
    data = json.loads(html.split('<script type="application/json">')[1].split("</script>")[0].replace("<\\/", "</"))
    assert data["values"] == list(EXPLORER_ARMS) and len(data["frames"]) == len(EXPLORER_ARMS)
    assert all("within a pair" in alt for alt in data["alts"])
    for arm in EXPLORER_ARMS:
        m = np.array(results["explorer"]["matrices"][arm])
        assert m.shape == (len(results["explorer"]["sentences"]),) * 2 and np.allclose(np.diag(m), 1, atol=1e-3)
