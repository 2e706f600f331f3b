"""Bad input, nothing lost: out-of-vocabulary ids, sizes below 1, and broken checkpoint files are
rejected with a message naming the id and vocabulary, the field, or the file."""
import json
import os
import pickle
import re

import pytest
import torch
from torch import nn

from lmcourse.albert import EncoderConfig
from lmcourse.attention import AdditiveScore, ConcatScore, GeneralScore, MultiHeadAttention
from lmcourse.bert import BertConfig, BertForPreTraining, BertModel
from lmcourse.electra import BigramClozeGenerator, ReplacedTokenDetector, replace_tokens
from lmcourse.elmo import BiLM, ScalarMix, TokenTagger
from lmcourse.finetune import BertForTask
from lmcourse.glove import GloVe
from lmcourse.gpt import GPT, GPTConfig, GPTForTask
from lmcourse.memory_task import MemoryTask, SequenceClassifier
from lmcourse.nnlm import NNLM
from lmcourse.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from lmcourse.rnn import Recurrent, RecurrentLM
from lmcourse.seq2seq import BahdanauSeq2Seq
from lmcourse.train import load_checkpoint, save_checkpoint
from lmcourse.transfer import DigitsCNN
from lmcourse.transformer import FeedForward, Seq2SeqTransformer, TransformerConfig, beam_search, greedy_decode
from lmcourse.validate import check_token_ids, load_config, load_safetensors, safetensors_shapes
from lmcourse.word2vec import Word2Vec, sgd_step

pytestmark = pytest.mark.usefixtures("one_thread")

V, V_TGT = 30, 20      # every tiny model's vocabulary; the target side of the translation models
IDS = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])


# ---------------------------------------------------------------------------------------------
# 1. Token ids outside the vocabulary
# ---------------------------------------------------------------------------------------------
def _gpt():
    return GPT(GPTConfig(vocab_size=V, context_size=8, d_model=8, num_layers=1, num_heads=2))


def _bert_config():
    return BertConfig(vocab_size=V, d_model=8, num_layers=1, num_heads=2, d_ff=16, max_len=8, dropout=0.0)


def _bilm():
    return BiLM(V, d_model=4, num_layers=1)


def _transformer():
    return Seq2SeqTransformer(TransformerConfig(V, V_TGT, d_model=8, num_heads=2, num_encoder_layers=1,
                                                num_decoder_layers=1, d_ff=16, max_len=8))


def _w2v_batch(inputs=None, targets=None):
    return (IDS[:, :1] if inputs is None else inputs, torch.ones(2, 1, dtype=torch.bool),
            IDS[:, 1:] if targets is None else targets)


def _cloze():
    return BigramClozeGenerator(torch.arange(V), V)


# (vocabulary size, argument name, function feeding (2, 4) ids to that argument)
MODELS = {
    "NNLM": (V, "context", lambda ids: NNLM(V, context_size=4, embed_dim=4, hidden_dim=4)(ids)),
    "RecurrentLM": (V, "ids", lambda ids: RecurrentLM(V, 4, 4)(ids)),
    "BiLM": (V, "ids", lambda ids: _bilm()(ids)),
    "BiLM.layers": (V, "ids", lambda ids: _bilm().layers(ids)),
    "TokenTagger": (V, "ids", lambda ids: TokenTagger(_bilm(), num_classes=2)(ids)),
    "SequenceClassifier": (V, "ids", lambda ids: SequenceClassifier(V, 2, hidden_size=4, embed_dim=4)(ids)),
    "Seq2SeqTransformer src": (V, "src", lambda ids: _transformer()(ids, IDS[:, :3] % V_TGT)),
    "Seq2SeqTransformer tgt_in": (V_TGT, "tgt_in", lambda ids: _transformer()(IDS, ids)),
    "greedy_decode": (V, "src", lambda ids: greedy_decode(_transformer(), ids, 1, 2, max_len=2)),
    "beam_search": (V, "src", lambda ids: beam_search(_transformer(), ids[1], 1, 2, max_len=2)),
    "BahdanauSeq2Seq src": (V, "src", lambda ids: BahdanauSeq2Seq(V, V_TGT, 4, 4)(ids, IDS % V_TGT)),
    "BahdanauSeq2Seq tgt_in": (V_TGT, "tgt_in", lambda ids: BahdanauSeq2Seq(V, V_TGT, 4, 4)(IDS, ids)),
    "BahdanauSeq2Seq.greedy_decode": (V, "src", lambda ids: BahdanauSeq2Seq(V, V_TGT, 4, 4).greedy_decode(ids, 1, 2)),
    "GPT": (V, "ids", lambda ids: _gpt()(ids)),
    "GPT.generate": (V, "ids", lambda ids: _gpt().generate(ids, 2)),
    "GPTForTask": (V, "ids", lambda ids: GPTForTask(_gpt(), "classification")(ids[:, None], torch.tensor([[3], [3]]))),
    "BertModel": (V, "input_ids", lambda ids: BertModel(_bert_config())(ids)),
    "BertModel token_type_ids": (2, "token_type_ids", lambda ids: BertModel(_bert_config())(IDS, ids)),
    "BertForPreTraining": (V, "input_ids", lambda ids: BertForPreTraining(_bert_config())(ids)),
    "BertForTask": (V, "input_ids", lambda ids: BertForTask(BertModel(_bert_config()), "single")(ids)),
    "ReplacedTokenDetector": (V, "ids", lambda ids: ReplacedTokenDetector(V, 8, 2, 1, max_len=8)(ids)),
    "BigramClozeGenerator": (V, "ids", lambda ids: BigramClozeGenerator(ids.flatten(), V)),
    "BigramClozeGenerator.logits left": (V, "left", lambda ids: _cloze().logits(ids.flatten(), IDS.flatten())),
    "BigramClozeGenerator.sample right": (V, "right", lambda ids: _cloze().sample(IDS.flatten(), ids.flatten())),
    "replace_tokens": (V, "input_ids", lambda ids: replace_tokens(ids, _cloze())),
    "Word2Vec inputs": (V, "inputs", lambda ids: Word2Vec(V, 4)(*_w2v_batch(inputs=ids[:, 2:3]))),
    "Word2Vec targets": (V, "targets", lambda ids: Word2Vec(V, 4)(*_w2v_batch(targets=ids))),
    "sgd_step inputs": (V, "inputs", lambda ids: sgd_step(Word2Vec(V, 4), *_w2v_batch(inputs=ids[:, 2:3]), 0.1)),
    "sgd_step targets": (V, "targets", lambda ids: sgd_step(Word2Vec(V, 4), *_w2v_batch(targets=ids), 0.1)),
    "GloVe i": (V, "i", lambda ids: GloVe(V, 4)(ids.flatten(), IDS.flatten(), torch.ones(8))),
    "GloVe j": (V, "j", lambda ids: GloVe(V, 4)(IDS.flatten(), ids.flatten(), torch.ones(8))),
}


BAD_IDS = {"first past the end": lambda size: size, "far past the end": lambda size: 100 * size,
           "negative": lambda size: -1}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_models_name_the_id_outside_the_vocabulary(model, bad_id):
    vocab_size, name, run = MODELS[model]
    bad = BAD_IDS[bad_id](vocab_size)
    ids = IDS % vocab_size
    ids[1, 2] = bad                                  # one bad id among good ones, in the row that is used
    expected = (f"{name} holds id {bad}, outside the vocabulary of size {vocab_size} "
                f"(ids must lie in [0, {vocab_size}))")
    with pytest.raises(ValueError, match=re.escape(expected)):
        run(ids)


@pytest.mark.parametrize("model", MODELS)
def test_models_reject_ids_that_are_not_int64(model):
    _, name, run = MODELS[model]
    for dtype in (torch.float32, torch.int32, torch.bool):
        with pytest.raises(TypeError, match=re.escape(f"{name} must hold token ids as int64, got {dtype}")):
            run((IDS % 2).to(dtype))


@pytest.mark.parametrize("model", MODELS)
def test_models_accept_ids_inside_the_vocabulary(model):
    vocab_size, _, run = MODELS[model]
    ids = IDS % vocab_size
    ids[1, 2] = vocab_size - 1
    with torch.no_grad():
        run(ids)


def test_a_prompt_given_as_a_list_is_checked_too():
    with pytest.raises(ValueError, match=re.escape(f"ids holds id {V}, outside the vocabulary of size {V}")):
        RecurrentLM(V, 4, 4).generate([1, V, 2], 2)


def test_check_token_ids():
    check_token_ids(torch.zeros(0, dtype=torch.long), 1, "ids")        # nothing to check
    with pytest.raises(ValueError, match="ids holds id -3, outside"):
        check_token_ids(torch.tensor([0, -3, -1]), 5, "ids")
    with pytest.raises(ValueError, match="ids holds id 9, outside"):  # the largest is named first
        check_token_ids(torch.tensor([-3, 9, 7]), 5, "ids")
    with pytest.raises(TypeError, match="ids must be Tensor, got list"):
        check_token_ids([1, 2], 5, "ids")
    with pytest.raises(TypeError, match="ids must hold token ids as int64, got torch.uint8"):
        check_token_ids(torch.tensor([1], dtype=torch.uint8), 5, "ids")


# ---------------------------------------------------------------------------------------------
# 2. Sizes below 1 (or below the smallest that makes sense)
# ---------------------------------------------------------------------------------------------
TINY_TRANSFORMER = dict(src_vocab_size=10, tgt_vocab_size=10, d_model=8, num_heads=2, d_ff=16, max_len=8)

# (name, function of keyword arguments, the field, its smallest allowed value)
SIZES = [
    *[("GPTConfig", GPTConfig, f, 1) for f in ("vocab_size", "context_size", "d_model", "num_layers",
                                                 "num_heads", "d_ff")],
    *[("BertConfig", BertConfig, f, 1) for f in ("vocab_size", "d_model", "num_layers", "num_heads", "d_ff",
                                                   "max_len", "num_segments")],
    *[("TransformerConfig", lambda **kw: TransformerConfig(**{**TINY_TRANSFORMER, **kw}), f, 1)
      for f in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "num_encoder_layers",
                "num_decoder_layers", "d_ff", "max_len")],
    *[("EncoderConfig", EncoderConfig, f, 1) for f in ("vocab_size", "d_model", "num_layers", "d_ff",
                                                         "max_positions", "d_embed")],
    ("MemoryTask", MemoryTask, "num_classes", 2),
    ("MemoryTask", MemoryTask, "num_noise", 1),
    ("NNLM", lambda **kw: NNLM(**{"vocab_size": 10, "context_size": 2, **kw}), "vocab_size", 2),
    *[("NNLM", lambda **kw: NNLM(**{"vocab_size": 10, "context_size": 2, **kw}), f, 1)
      for f in ("context_size", "embed_dim", "hidden_dim")],
    ("RecurrentLM", lambda **kw: RecurrentLM(**{"vocab_size": 10, "embed_dim": 4, "hidden_size": 4, **kw}),
     "vocab_size", 2),
    *[("RecurrentLM", lambda **kw: RecurrentLM(**{"vocab_size": 10, "embed_dim": 4, "hidden_size": 4, **kw}), f, 1)
      for f in ("embed_dim", "hidden_size", "num_layers")],
    *[("Recurrent", lambda **kw: Recurrent(**{"mode": "gru", "input_size": 3, "hidden_size": 4, **kw}), f, 1)
      for f in ("input_size", "hidden_size", "num_layers")],
    ("BiLM", lambda **kw: BiLM(**{"vocab_size": 10, **kw}), "vocab_size", 2),
    *[("BiLM", lambda **kw: BiLM(**{"vocab_size": 10, **kw}), f, 1) for f in ("d_model", "num_layers")],
    ("ScalarMix", ScalarMix, "num_layers", 1),
    ("TokenTagger", lambda **kw: TokenTagger(**{"bilm": BiLM(10, 4, 1), "num_classes": 2, **kw}), "num_classes", 2),
    ("TokenTagger", lambda **kw: TokenTagger(**{"bilm": BiLM(10, 4, 1), "num_classes": 2, **kw}), "hidden_size", 1),
    *[("MultiHeadAttention", lambda **kw: MultiHeadAttention(**{"d_model": 8, "num_heads": 2, **kw}), f, 1)
      for f in ("d_model", "num_heads")],
    *[("FeedForward", lambda **kw: FeedForward(**{"d_model": 8, "d_ff": 16, **kw}), f, 1) for f in ("d_model", "d_ff")],
    *[("GeneralScore", lambda **kw: GeneralScore(**{"d_query": 4, "d_key": 4, **kw}), f, 1)
      for f in ("d_query", "d_key")],
    *[(cls.__name__, lambda cls=cls, **kw: cls(**{"d_query": 4, "d_key": 4, "d_hidden": 4, **kw}), f, 1)
      for cls in (ConcatScore, AdditiveScore) for f in ("d_query", "d_key", "d_hidden")],
    ("SinusoidalPositionalEncoding", lambda **kw: SinusoidalPositionalEncoding(**{"d_model": 8, **kw}), "max_len", 1),
    ("SinusoidalPositionalEncoding", lambda **kw: SinusoidalPositionalEncoding(**{"d_model": 8, **kw}), "d_model", 2),
    *[("LearnedPositionalEncoding", lambda **kw: LearnedPositionalEncoding(**{"d_model": 8, **kw}), f, 1)
      for f in ("d_model", "max_len")],
    *[("BahdanauSeq2Seq", lambda **kw: BahdanauSeq2Seq(**{"src_vocab_size": 10, "tgt_vocab_size": 10, **kw}), f, 1)
      for f in ("src_vocab_size", "tgt_vocab_size", "d_embed", "d_hidden")],
    ("ReplacedTokenDetector", lambda **kw: ReplacedTokenDetector(**{"vocab_size": 10, **kw}), "vocab_size", 2),
    *[("ReplacedTokenDetector", lambda **kw: ReplacedTokenDetector(**{"vocab_size": 10, **kw}), f, 1)
      for f in ("d_model", "num_heads", "num_layers", "d_ff", "max_len")],
    *[("SequenceClassifier", lambda **kw: SequenceClassifier(**{"vocab_size": 10, "num_classes": 2, **kw}), f, m)
      for f, m in (("vocab_size", 2), ("num_classes", 2), ("hidden_size", 1), ("embed_dim", 1))],
    *[(cls.__name__, lambda cls=cls, **kw: cls(**{"vocab_size": 10, **kw}), f, m)
      for cls in (Word2Vec, GloVe) for f, m in (("vocab_size", 2), ("dim", 1))],
    *[("DigitsCNN", lambda **kw: DigitsCNN(**{"num_classes": 3, **kw}), f, m)
      for f, m in (("num_classes", 2), ("hidden", 1))],
    ("BigramClozeGenerator", lambda **kw: BigramClozeGenerator(torch.arange(4), **kw), "vocab_size", 2),
    ("GPTForTask", lambda **kw: GPTForTask(_gpt(), "classification", **kw), "num_classes", 2),
    ("BertForTask", lambda **kw: BertForTask(BertModel(_bert_config()), "single", **kw), "num_labels", 1),
]


@pytest.mark.parametrize("owner, build, field, minimum", SIZES,
                         ids=[f"{owner}.{field}" for owner, _, field, _ in SIZES])
@pytest.mark.parametrize("below", [1, 5])
def test_sizes_below_the_minimum_name_the_field(owner, build, field, minimum, below):
    value = minimum - below
    with pytest.raises(ValueError, match=re.escape(f"{field} must be >= {minimum}, got {value}")):
        build(**{field: value})


@pytest.mark.parametrize("channels, field", [((0, 16), "channels[0]"), ((8, -1), "channels[1]")])
def test_digits_cnn_channels(channels, field):
    with pytest.raises(ValueError, match=re.escape(f"{field} must be >= 1")):
        DigitsCNN(3, channels=channels)


@pytest.mark.parametrize("build", [
    lambda: GPTConfig(d_model=10, num_heads=3),
    lambda: BertConfig(d_model=10, num_heads=3),
    lambda: TransformerConfig(**{**TINY_TRANSFORMER, "d_model": 10, "num_heads": 3}),
    lambda: MultiHeadAttention(10, 3),
], ids=["GPTConfig", "BertConfig", "TransformerConfig", "MultiHeadAttention"])
def test_d_model_must_split_into_heads(build):
    with pytest.raises(ValueError, match=re.escape("d_model (10) must be divisible by num_heads (3)")):
        build()


def test_translation_models_check_pad_id_and_positional():
    with pytest.raises(ValueError, match="pad_id must be <= 9, got 10"):
        TransformerConfig(**{**TINY_TRANSFORMER, "pad_id": 10})
    with pytest.raises(ValueError, match="pad_id must be <= 4, got 5"):
        BahdanauSeq2Seq(10, 5, pad_id=5)
    with pytest.raises(ValueError, match="positional must be"):
        TransformerConfig(**{**TINY_TRANSFORMER, "positional": "rotary"})


# ---------------------------------------------------------------------------------------------
# 3. Broken checkpoint files
# ---------------------------------------------------------------------------------------------
def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def _other_model(path):
    save_checkpoint(nn.Linear(3, 2), path)


BROKEN = {   # how to break a valid safetensors file in place
    "random bytes": lambda p: p.write_bytes(os.urandom(4096)),
    "truncated": _truncate,
    "empty": lambda p: p.write_bytes(b""),
    "seven bytes": lambda p: p.write_bytes(b"1234567"),
    "pickle": lambda p: p.write_bytes(pickle.dumps({"weight": [1.0, 2.0]})),
    "torch.save": lambda p: torch.save({"weight": torch.ones(2)}, p),
    "JSON": lambda p: p.write_text(json.dumps({"weight": [1.0, 2.0]})),
}
FOREIGN = {"another model's weights": _other_model}

def _state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def _unchanged(model, before):
    return all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


@pytest.mark.parametrize("damage", list(BROKEN) + list(FOREIGN))
def test_a_broken_checkpoint_names_the_file_and_leaves_the_model_alone(tmp_path, damage):
    model = _gpt()
    path = save_checkpoint(model, tmp_path / "gpt.safetensors")
    {**BROKEN, **FOREIGN}[damage](path)
    target = _gpt()
    before = _state(target)
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_checkpoint(target, path)
    assert _unchanged(target, before)


def test_a_checkpoint_of_other_shapes_is_listed(tmp_path):
    path = save_checkpoint(_gpt(), tmp_path / "gpt.safetensors")
    target = GPT(GPTConfig(vocab_size=V + 1, context_size=8, d_model=8, num_layers=1, num_heads=2))
    before = _state(target)
    with pytest.raises(ValueError, match=re.escape(f"checkpoint {path} does not fit GPT:\n  "
                                                   f"lm_head.weight: checkpoint ({V}, 8) vs model ({V + 1}, 8)")):
        load_checkpoint(target, path)
    assert _unchanged(target, before)


def test_a_failed_load_keeps_the_file_and_a_later_save_replaces_it(tmp_path):
    path = tmp_path / "m.safetensors"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_checkpoint(nn.Linear(3, 2), path)
    assert path.read_bytes() == b"not a checkpoint"
    model = nn.Linear(3, 2)
    save_checkpoint(model, path)
    assert torch.equal(load_checkpoint(nn.Linear(3, 2), path).weight, model.weight)
    assert os.listdir(tmp_path) == ["m.safetensors"]


@pytest.mark.parametrize("damage", BROKEN)
def test_safetensors_readers_name_the_file(tmp_path, damage):
    path = save_checkpoint(nn.Linear(3, 2), tmp_path / "m.safetensors")
    BROKEN[damage](path)
    for read in (safetensors_shapes, load_safetensors):
        with pytest.raises(ValueError, match=re.escape(f"{path} is not a readable safetensors file")):
            read(path)
    with pytest.raises(FileNotFoundError, match="missing.safetensors"):
        load_safetensors(tmp_path / "missing.safetensors")


@pytest.mark.parametrize("text, problem", [
    (b"", "is not valid JSON"),
    (b"\xff\xfe\x00garbage", "is not valid JSON"),
    (b'{"vocab_size": 3', "is not valid JSON"),
    (b"[1, 2, 3]", "must hold a JSON object, got list"),
    (b"{}", "lacks the field 'vocab_size'"),
    (b'{"vocab_size": "many"}', "vocab_size must be an int, got str"),
    (b'{"vocab_size": 0}', "vocab_size must be >= 1, got 0"),
])
def test_load_config_names_the_file(tmp_path, text, problem):
    path = tmp_path / "config.json"
    path.write_bytes(text)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + re.escape(problem)):
        load_config(path, lambda hf: GPTConfig(vocab_size=hf["vocab_size"]))


# Hugging Face directories: config.json + model.safetensors
@pytest.fixture(scope="module")
def hf_dirs(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    bert = tmp_path_factory.mktemp("bert")
    transformers.BertForPreTraining(transformers.BertConfig(**_bert_config().to_hf())).save_pretrained(bert)
    gpt2 = tmp_path_factory.mktemp("gpt2")
    transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=8, n_positions=8, vocab_size=V, bos_token_id=None, eos_token_id=None,
        pad_token_id=None)).save_pretrained(gpt2)
    return {"bert": bert, "gpt2": gpt2}


LOADERS = {"BertModel": ("bert", BertModel.from_pretrained),
           "BertForPreTraining": ("bert", BertForPreTraining.from_pretrained),
           "GPT": ("gpt2", GPT.from_pretrained)}


def _copy(source, tmp_path):
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    return tmp_path


@pytest.mark.parametrize("loader", LOADERS)
def test_hf_loaders_read_a_valid_directory(hf_dirs, loader):
    kind, load = LOADERS[loader]
    assert isinstance(load(hf_dirs[kind]), nn.Module)


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("name", ["config.json", "model.safetensors"])
def test_hf_loaders_name_a_missing_file(hf_dirs, tmp_path, loader, name):
    kind, load = LOADERS[loader]
    (_copy(hf_dirs[kind], tmp_path) / name).unlink()
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / name} is missing")):
        load(tmp_path)


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("damage", BROKEN)
@pytest.mark.parametrize("name", ["config.json", "model.safetensors"])
def test_hf_loaders_name_a_broken_file(hf_dirs, tmp_path, loader, damage, name):
    kind, load = LOADERS[loader]
    path = _copy(hf_dirs[kind], tmp_path) / name
    BROKEN[damage](path)
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load(tmp_path)


@pytest.mark.parametrize("loader", LOADERS)
def test_hf_loaders_name_the_weights_of_another_model(hf_dirs, tmp_path, loader):
    kind, load = LOADERS[loader]
    other = "gpt2" if kind == "bert" else "bert"
    _copy(hf_dirs[kind], tmp_path)
    (tmp_path / "model.safetensors").write_bytes((hf_dirs[other] / "model.safetensors").read_bytes())
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "model.safetensors"))):
        load(tmp_path)


@pytest.mark.parametrize("loader, field", [("BertModel", "intermediate_size"), ("GPT", "n_embd"),
                                           ("GPT", "vocab_size")])
def test_hf_loaders_name_weights_of_other_shapes(hf_dirs, tmp_path, loader, field):
    kind, load = LOADERS[loader]
    config = _copy(hf_dirs[kind], tmp_path) / "config.json"
    fields = json.loads(config.read_text())
    fields[field] *= 2
    config.write_text(json.dumps(fields))
    with pytest.raises(ValueError, match="(?s)" + re.escape(str(tmp_path / "model.safetensors")) + ".*vs model"):
        load(tmp_path)


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("edit, problem", [
    (lambda f: f.pop("vocab_size"), "lacks the field 'vocab_size'"),
    (lambda f: f.update(vocab_size=0), "vocab_size must be >= 1, got 0"),
])
def test_hf_loaders_name_a_bad_config(hf_dirs, tmp_path, loader, edit, problem):
    kind, load = LOADERS[loader]
    config = _copy(hf_dirs[kind], tmp_path) / "config.json"
    fields = json.loads(config.read_text())
    edit(fields)
    config.write_text(json.dumps(fields))
    with pytest.raises(ValueError, match=re.escape(f"{config}") + ".*" + re.escape(problem)):
        load(tmp_path)
