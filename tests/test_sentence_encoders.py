import numpy as np
import pytest
import torch
from sklearn.metrics.pairwise import cosine_similarity

from lmcourse.sentence_encoders import cosine_matrix, cross_encode, encode, mean_pool, pair_costs


def test_pair_costs_sbert_numbers():
    # Reimers and Gurevych: 10,000 sentences need n(n-1)/2 = 49,995,000 cross-encoder passes
    costs = pair_costs(10_000)
    assert costs["cross-encoder forward passes"] == 49_995_000
    assert costs["bi-encoder forward passes"] == 10_000


def test_mean_pool_ignores_padding():
    hidden = torch.arange(24, dtype=torch.float).view(2, 3, 4)
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    pooled = mean_pool(hidden, mask)
    expected = np.stack([hidden[0, :2].numpy().mean(0), hidden[1].numpy().mean(0)])
    np.testing.assert_allclose(pooled.numpy(), expected, atol=1e-6)


def test_cosine_matrix_matches_sklearn():
    a, b = torch.randn(5, 8), torch.randn(3, 8)
    np.testing.assert_allclose(cosine_matrix(a, b).numpy(), cosine_similarity(a.numpy(), b.numpy()),
                               atol=1e-6)


class _ToyModel(torch.nn.Module):
    """Stands in for a Hugging Face encoder: embeds ids, returns .last_hidden_state."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 4)

    def forward(self, input_ids, attention_mask, **_):
        return type("Out", (), {"last_hidden_state": self.emb(input_ids)})()


def _toy_tokenizer(a, b=None, padding=True, truncation=True, return_tensors="pt"):
    texts = a if b is None else [x + " " + y for x, y in zip(a, b)]
    ids = [[len(w) for w in t.split()] for t in texts]
    T = max(map(len, ids))
    return {"input_ids": torch.tensor([r + [0] * (T - len(r)) for r in ids]),
            "attention_mask": torch.tensor([[1] * len(r) + [0] * (T - len(r)) for r in ids])}


def test_encode_batches_equal_one_by_one():
    model = _ToyModel()
    sentences = ["a bb ccc", "dddd", "ee f gg hhh iiii"]
    together = encode(model, _toy_tokenizer, sentences, batch_size=2)
    alone = torch.cat([encode(model, _toy_tokenizer, [s]) for s in sentences])
    torch.testing.assert_close(together, alone, atol=1e-6, rtol=1e-6)
    assert cross_encode(model, _toy_tokenizer, [("a", "bb"), ("ccc", "d")]).shape == (2, 4)


def test_bad_inputs():
    with pytest.raises(ValueError, match="n"):
        pair_costs(0)
    with pytest.raises(ValueError, match="attention_mask"):
        mean_pool(torch.zeros(2, 3, 4), torch.ones(2, 4))
    with pytest.raises(ValueError, match="a and b"):
        cosine_matrix(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(TypeError, match="sentences"):
        encode(_ToyModel(), _toy_tokenizer, "one sentence")


def test_cls_and_max_pooling_ignore_padding():
    model = _ToyModel()
    sentences = ["a bb ccc", "dddd"]
    hidden = model.emb(torch.tensor([[1, 2, 3]]))[0]                     # the first sentence, unpadded
    cls = encode(model, _toy_tokenizer, sentences, pooling="cls")
    biggest = encode(model, _toy_tokenizer, sentences, pooling="max")
    torch.testing.assert_close(cls[0], hidden[0])
    torch.testing.assert_close(biggest[0], hidden.amax(dim=0))
    torch.testing.assert_close(biggest[1], model.emb(torch.tensor([4]))[0])   # padding never wins
    with pytest.raises(ValueError, match="pooling"):
        encode(model, _toy_tokenizer, sentences, pooling="sum")
