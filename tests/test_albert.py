import pytest
import torch

from lmcourse.albert import PAPER_MILLIONS, PRESETS, EncoderConfig, encoder_parameters, ffn_fraction


def test_bert_base_exact_counts():
    # correction 14: 109,482,240 with biases and pooler; 108,808,704 without linear biases and pooler
    assert encoder_parameters(PRESETS["BERT-base"])["total"] == 109_482_240
    assert encoder_parameters(EncoderConfig(biases=False, pooler=False))["total"] == 108_808_704


def _hf_count(model_cls, config):
    with torch.device("meta"):   # no memory, no download: only the shapes are built
        model = model_cls(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", ["BERT-base", "BERT-large"])
def test_bert_matches_transformers(name):
    from transformers import BertConfig, BertModel
    c = PRESETS[name]
    hf = BertConfig(vocab_size=c.vocab_size, hidden_size=c.d_model, num_hidden_layers=c.num_layers,
                    num_attention_heads=c.d_model // 64, intermediate_size=c.d_ff)
    assert encoder_parameters(c)["total"] == _hf_count(BertModel, hf)   # exact: tolerance 0


@pytest.mark.parametrize("name", ["ALBERT-base", "ALBERT-large", "ALBERT-xlarge", "ALBERT-xxlarge"])
def test_albert_matches_transformers(name):
    from transformers import AlbertConfig, AlbertModel
    c = PRESETS[name]
    hf = AlbertConfig(vocab_size=c.vocab_size, embedding_size=c.d_embed, hidden_size=c.d_model,
                      num_hidden_layers=c.num_layers, num_attention_heads=c.d_model // 64,
                      intermediate_size=c.d_ff)
    assert encoder_parameters(c)["total"] == _hf_count(AlbertModel, hf)


def test_presets_close_to_paper_table():
    for name, millions in PAPER_MILLIONS.items():
        ours = encoder_parameters(PRESETS[name])["total"] / 1e6
        assert abs(ours - millions) / millions < 0.06, (name, ours, millions)


def test_sharing_and_factorisation():
    base = EncoderConfig(vocab_size=30000, d_embed=128)
    counts = {s: encoder_parameters(EncoderConfig(**{**base.__dict__, "sharing": s}))["total"]
              for s in ("none", "attention", "ffn", "all")}
    assert counts["all"] < counts["ffn"] < counts["attention"] < counts["none"]
    unfactorised = encoder_parameters(EncoderConfig(vocab_size=30000))
    factorised = encoder_parameters(base)
    assert unfactorised["token embeddings"] == 30000 * 768
    assert factorised["token embeddings"] + factorised["embedding projection"] == 30000 * 128 + 128 * 768 + 768


def test_ffn_holds_two_thirds():
    assert abs(ffn_fraction(EncoderConfig()) - 2 / 3) < 0.001


@pytest.mark.parametrize("kwargs, error", [
    ({"d_model": 0}, ValueError), ({"sharing": "some"}, ValueError), ({"d_embed": 1.5}, TypeError),
    ({"biases": 1}, TypeError),
])
def test_bad_config(kwargs, error):
    with pytest.raises(error):
        EncoderConfig(**kwargs)


def test_bad_argument():
    with pytest.raises(TypeError, match="config"):
        encoder_parameters({"d_model": 768})
