"""BERT (Devlin et al. 2019): a Transformer encoder pretrained by masked-LM and next-sentence prediction.

The model reads ``[CLS] sentence A [SEP] sentence B [SEP]``; each position's input is the sum of a
token, a segment (A or B) and a learned position embedding, normalised by LayerNorm; a stack of
post-LN encoder layers (multi-head self-attention over the whole sequence, then a GELU
feed-forward network, each wrapped in a residual connection and LayerNorm) turns it into one
contextual vector per position. Weights load from a Hugging Face BERT directory
(``config.json``, ``model.safetensors``, ``vocab.txt``) with :meth:`BertModel.from_pretrained`.
"""
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention, causal_mask, padding_mask
from lmcourse.masking import IGNORE_INDEX, mask_tokens
from lmcourse.positional import sinusoidal_encoding
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.tokenize import WordPieceTokenizer, pad_encodings
from lmcourse.validate import (
    check_float,
    check_int,
    check_nonempty,
    check_state_fits,
    check_token_ids,
    check_type,
    load_config,
    load_safetensors,
)


@dataclass
class BertConfig:
    """Sizes of a BERT model; the defaults are BERT-base (uncased)."""
    vocab_size: int = 30522         # word pieces
    d_model: int = 768              # hidden size H
    num_layers: int = 12            # encoder layers L
    num_heads: int = 12             # attention heads A (d_model / num_heads per head)
    d_ff: int = 3072                # feed-forward inner size (4H)
    max_len: int = 512              # rows of the learned position table: the longest input
    num_segments: int = 2           # segment (token type) embeddings: sentence A and B
    dropout: float = 0.1            # on embeddings, attention weights and sublayer outputs
    layer_norm_eps: float = 1e-12
    pad_id: int = 0
    causal: bool = False            # True: left-only context (a GPT-style mask), for comparison

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "num_layers", "num_heads", "d_ff", "max_len", "num_segments"):
            check_int(getattr(self, name), name, minimum=1)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        check_float(self.dropout, "dropout", minimum=0.0, maximum=1.0)
        check_float(self.layer_norm_eps, "layer_norm_eps", minimum=0.0, strict_minimum=True)
        check_int(self.pad_id, "pad_id", minimum=0, maximum=self.vocab_size - 1)

    @classmethod
    def from_hf(cls, hf: dict) -> "BertConfig":
        """From a Hugging Face ``config.json`` dictionary (exact GELU only)."""
        act = hf.get("hidden_act", "gelu")
        if act != "gelu":
            raise ValueError(f"hidden_act must be 'gelu' (the exact erf form BERT uses), got {act!r}")
        if hf.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute (learned) position embeddings are supported")
        return cls(vocab_size=hf["vocab_size"], d_model=hf["hidden_size"],
                   num_layers=hf["num_hidden_layers"], num_heads=hf["num_attention_heads"],
                   d_ff=hf["intermediate_size"], max_len=hf["max_position_embeddings"],
                   num_segments=hf["type_vocab_size"], dropout=hf.get("hidden_dropout_prob", 0.1),
                   layer_norm_eps=hf.get("layer_norm_eps", 1e-12), pad_id=hf.get("pad_token_id", 0) or 0)

    def to_hf(self) -> dict:
        """The Hugging Face ``config.json`` fields of this configuration."""
        return {"model_type": "bert", "vocab_size": self.vocab_size, "hidden_size": self.d_model,
                "num_hidden_layers": self.num_layers, "num_attention_heads": self.num_heads,
                "intermediate_size": self.d_ff, "max_position_embeddings": self.max_len,
                "type_vocab_size": self.num_segments, "hidden_act": "gelu",
                "hidden_dropout_prob": self.dropout, "attention_probs_dropout_prob": self.dropout,
                "layer_norm_eps": self.layer_norm_eps, "pad_token_id": self.pad_id}


# ---------------------------------------------------------------------------------------------
# Parameter count, by formula (correction 14)
# ---------------------------------------------------------------------------------------------
def count_parameters(config: BertConfig) -> dict[str, int]:
    """BERT's parameters by part, from the configuration alone.

    Keys: ``embeddings`` (V + P + S rows of H), ``embedding_norm`` (2H), per-layer totals times L for
    ``attention_weights`` (4 H^2), ``attention_biases`` (4H), ``ffn_weights`` (2 H d_ff),
    ``ffn_biases`` (d_ff + H), ``layer_norms`` (2 x 2H); ``pooler`` (H^2 + H); the MLM head
    (``mlm_head``: H^2 + H + 2H + V, its decoder weight being tied to the token embeddings) and
    ``nsp_head`` (2H + 2); and the sums ``without_biases`` (the number usually quoted,
    108,808,704 for BERT-base, which leaves out the linear biases and the pooler),
    ``bert_model`` (everything a BertModel holds) and ``for_pretraining`` (plus both heads).
    """
    check_type(config, "config", BertConfig)
    H, L, V, F_ = config.d_model, config.num_layers, config.vocab_size, config.d_ff
    parts = {
        "embeddings": (V + config.max_len + config.num_segments) * H,
        "embedding_norm": 2 * H,
        "attention_weights": L * 4 * H * H,
        "attention_biases": L * 4 * H,
        "ffn_weights": L * 2 * H * F_,
        "ffn_biases": L * (F_ + H),
        "layer_norms": L * 2 * 2 * H,
        "pooler": H * H + H,
        "mlm_head": H * H + H + 2 * H + V,
        "nsp_head": 2 * H + 2,
    }
    parts["without_biases"] = (parts["embeddings"] + parts["embedding_norm"] + parts["attention_weights"]
                               + parts["ffn_weights"] + parts["layer_norms"])
    parts["bert_model"] = (parts["without_biases"] + parts["attention_biases"] + parts["ffn_biases"]
                           + parts["pooler"])
    parts["for_pretraining"] = parts["bert_model"] + parts["mlm_head"] + parts["nsp_head"]
    return parts


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------
class BertEmbeddings(nn.Module):
    """E = LayerNorm(token[x_t] + segment[s_t] + position[t]), then dropout.

    input_ids (B, T) int64, token_type_ids (B, T) -> (B, T, d_model). Summing three lookups equals
    one linear layer applied to the concatenated one-hot vectors of token, segment and position.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.token = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        self.segment = nn.Embedding(config.num_segments, config.d_model)
        self.position = nn.Embedding(config.max_len, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        T = input_ids.size(1)
        positions = torch.arange(T, device=input_ids.device)                   # (T,)
        x = self.token(input_ids) + self.segment(token_type_ids) + self.position(positions)  # (B, T, C)
        return self.dropout(self.norm(x))                                      # (B, T, C)


class BertLayer(nn.Module):
    """One post-LN encoder layer: x = LN(x + MHA(x)); x = LN(x + W2 GELU(W1 x)).

    x (B, T, d_model), mask bool broadcastable to (B, h, T, T) -> (B, T, d_model) and, if
    ``need_weights``, the attention weights (B, h, T, T). With ``keep`` (B, T) bool, x holds only
    the N kept (real) positions, (N, d_model): attention sees them in place in their (B, T) rows,
    and everything position-wise (output projection, LayerNorms, FFN) skips the padding.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attn = MultiHeadAttention(config.d_model, config.num_heads, dropout=config.dropout, bias=True)
        self.norm1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.ffn_in = nn.Linear(config.d_model, config.d_ff)
        self.ffn_out = nn.Linear(config.d_ff, config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = False,
                keep: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        a, weights = self.attn(unpack(x, keep), mask=mask, need_weights=need_weights)  # (B, T, C), (B, h, T, T)
        if keep is not None:
            a = a[keep]                                                   # (B, T, C) -> (N, C)
        x = self.norm1(x + self.dropout(a))                               # (..., C)
        # GELU(x) = x * Phi(x) with the exact normal CDF (erf), not the tanh approximation
        h = F.gelu(self.ffn_in(x))                                        # (..., C) -> (..., d_ff)
        x = self.norm2(x + self.dropout(self.ffn_out(h)))                 # (..., d_ff) -> (..., C)
        return x, weights


def unpack(x: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
    """The kept positions (N, C) back in their rows, (B, T, C), zeros where ``keep`` is False."""
    if keep is None:
        return x
    return x.new_zeros(*keep.shape, x.size(-1)).index_put_((keep,), x)


class BertOutput(NamedTuple):
    """What :class:`BertModel` returns; index 0 is the last hidden states, as in transformers."""
    last_hidden_state: torch.Tensor          # (B, T, d_model)
    pooler_output: torch.Tensor              # (B, d_model): tanh(W h_[CLS] + b)
    hidden_states: tuple | None = None       # num_layers + 1 tensors (B, T, d_model), embeddings first
    attentions: tuple | None = None          # num_layers tensors (B, h, T, T)


class BertModel(nn.Module):
    """BERT encoder: embeddings, ``num_layers`` encoder layers and the [CLS] pooler.

    forward(input_ids (B, T), token_type_ids (B, T) = zeros, attention_mask (B, T) = ones, with 1
    for real tokens and 0 for padding) -> :class:`BertOutput`, whose first field is (B, T, d_model).
    Padding is skipped (the layers run on the real positions only) and comes out as zeros.
    """

    def __init__(self, config: BertConfig, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__()
        check_type(config, "config", BertConfig)
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(BertLayer(config) for _ in range(config.num_layers))
        self.pooler = nn.Linear(config.d_model, config.d_model)
        self.apply(init_bert_weights)
        self.to(device)

    def _check_inputs(self, input_ids, token_type_ids, attention_mask):
        check_token_ids(input_ids, self.config.vocab_size, "input_ids")
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, time), got shape {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        if T > self.config.max_len:
            raise ValueError(f"input_ids has {T} positions but the position table has only "
                             f"max_len={self.config.max_len} rows; truncate the input")
        for name, t in (("token_type_ids", token_type_ids), ("attention_mask", attention_mask)):
            if t is not None and tuple(t.shape) != (B, T):
                raise ValueError(f"{name} must have the shape of input_ids {(B, T)}, got {tuple(t.shape)}")
        if token_type_ids is not None:
            check_token_ids(token_type_ids, self.config.num_segments, "token_type_ids")

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None, output_hidden_states: bool = False,
                output_attentions: bool = False) -> BertOutput:
        self._check_inputs(input_ids, token_type_ids, attention_mask)
        B, T = input_ids.shape
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        mask = keep = None                                            # None: every key is visible
        if attention_mask is not None and not bool(attention_mask.all()):
            mask = padding_mask(attention_mask)                       # (B, 1, 1, T)
            keep = attention_mask.bool()                              # (B, T): the N real positions
        if self.config.causal:
            causal = causal_mask(T, device=input_ids.device)         # (T, T)
            mask = causal if mask is None else mask & causal          # (B, 1, T, T)
        x = self.embeddings(input_ids, token_type_ids)                # (B, T, C)
        if keep is not None:
            x = x[keep]                                               # padding skipped: (N, C)
        hidden, attentions = [x], []                                  # kept only when asked for
        for layer in self.layers:
            x, w = layer(x, mask, need_weights=output_attentions, keep=keep)  # (B, T, C) or (N, C)
            if output_hidden_states:
                hidden.append(x)
            if output_attentions:
                attentions.append(w)
        x = unpack(x, keep)                                           # (B, T, C), zeros at padding
        pooled = torch.tanh(self.pooler(x[:, 0]))                     # [CLS]: (B, C) -> (B, C)
        return BertOutput(x, pooled, tuple(unpack(h, keep) for h in hidden) if output_hidden_states else None,
                          tuple(attentions) if output_attentions else None)

    @classmethod
    def from_pretrained(cls, directory: str | Path, device: str | torch.device = DEFAULT_DEVICE) -> "BertModel":
        """Load a Hugging Face BERT directory (``config.json`` + ``model.safetensors``)."""
        config, state, source = _read_hf_directory(directory)
        model = cls(config)
        _load_hf_state(model, state, source, prefix="", heads={})
        return model.to(device).eval()


def init_bert_weights(module: nn.Module, std: float = 0.02) -> None:
    """BERT's initialisation: normal(0, 0.02) weights, zero biases, unit LayerNorm."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=std)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            with torch.no_grad():
                module.weight[module.padding_idx].zero_()
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)


def sinusoidal_positions(model: "BertModel", scale: float) -> None:
    """Start the learned position table as ``scale`` times the Transformer's sinusoids
    (:func:`lmcourse.positional.sinusoidal_encoding`) instead of random: nearby positions then start
    with similar vectors (at scale 0.1 and width 96 also longer ones than BERT's normal(0, 0.02) rows,
    sharing a common direction). With it a small BERT leaves the unigram plateau within its budget,
    with the random start it does not (chapter 9). The table stays learned, so the checkpoint keeps
    BERT's layout."""
    check_type(model, "model", BertModel)
    check_float(scale, "scale", minimum=0.0, strict_minimum=True)
    table = model.embeddings.position.weight                                  # (max_len, C)
    with torch.no_grad():
        table.copy_(scale * sinusoidal_encoding(*table.shape))


class BertForPreTraining(nn.Module):
    """BERT with its two pretraining heads.

    MLM: logits = LN(GELU(W h_t + b)) E^T + b_vocab, where E is the token-embedding matrix (tied);
    NSP: logits = W_nsp pooled + b over {0: B follows A, 1: B is random} (Hugging Face's order).
    forward(input_ids, token_type_ids, attention_mask) -> (mlm_logits (B, T, V), nsp_logits (B, 2)).
    """

    def __init__(self, config: BertConfig, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__()
        self.config = config
        self.bert = BertModel(config)
        self.mlm_dense = nn.Linear(config.d_model, config.d_model)
        self.mlm_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.mlm_decoder = nn.Linear(config.d_model, config.vocab_size)
        self.mlm_decoder.weight = self.bert.embeddings.token.weight   # tied: one (V, C) matrix
        self.nsp = nn.Linear(config.d_model, 2)
        for m in (self.mlm_dense, self.mlm_norm, self.nsp):
            init_bert_weights(m)
        nn.init.zeros_(self.mlm_decoder.bias)
        self.to(device)

    def mlm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., vocab_size)."""
        h = self.mlm_norm(F.gelu(self.mlm_dense(hidden)))   # (..., C)
        return self.mlm_decoder(h)                          # (..., C) @ (C, V) -> (..., V)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.bert(input_ids, token_type_ids, attention_mask)
        return self.mlm_logits(out.last_hidden_state), self.nsp(out.pooler_output)  # (B, T, V), (B, 2)

    @classmethod
    def from_pretrained(cls, directory: str | Path,
                        device: str | torch.device = DEFAULT_DEVICE) -> "BertForPreTraining":
        """Load a Hugging Face ``BertForPreTraining`` directory (encoder plus ``cls.*`` heads)."""
        config, state, source = _read_hf_directory(directory)
        model = cls(config)
        heads = {"cls.predictions.transform.dense": "mlm_dense",
                 "cls.predictions.transform.LayerNorm": "mlm_norm",
                 "cls.predictions.bias": "mlm_decoder.bias",
                 "cls.seq_relationship": "nsp"}
        _load_hf_state(model, state, source, prefix="bert.", heads=heads)
        return model.to(device).eval()


# ---------------------------------------------------------------------------------------------
# Hugging Face weight loading
# ---------------------------------------------------------------------------------------------
_HF_RENAMES = [
    (r"embeddings\.word_embeddings\.", "embeddings.token."),
    (r"embeddings\.token_type_embeddings\.", "embeddings.segment."),
    (r"embeddings\.position_embeddings\.", "embeddings.position."),
    (r"embeddings\.LayerNorm\.", "embeddings.norm."),
    (r"encoder\.layer\.(\d+)\.attention\.self\.query\.", r"layers.\1.attn.q_proj."),
    (r"encoder\.layer\.(\d+)\.attention\.self\.key\.", r"layers.\1.attn.k_proj."),
    (r"encoder\.layer\.(\d+)\.attention\.self\.value\.", r"layers.\1.attn.v_proj."),
    (r"encoder\.layer\.(\d+)\.attention\.output\.dense\.", r"layers.\1.attn.out_proj."),
    (r"encoder\.layer\.(\d+)\.attention\.output\.LayerNorm\.", r"layers.\1.norm1."),
    (r"encoder\.layer\.(\d+)\.intermediate\.dense\.", r"layers.\1.ffn_in."),
    (r"encoder\.layer\.(\d+)\.output\.dense\.", r"layers.\1.ffn_out."),
    (r"encoder\.layer\.(\d+)\.output\.LayerNorm\.", r"layers.\1.norm2."),
    (r"pooler\.dense\.", "pooler."),
]


def hf_state_dict(model: "BertForPreTraining") -> dict[str, torch.Tensor]:
    """The weights of ``model`` under Hugging Face ``BertForPreTraining``'s names (the inverse of
    :meth:`BertForPreTraining.from_pretrained`; the tied MLM decoder matrix is stored once, as the
    token embedding)."""
    check_type(model, "model", BertForPreTraining)
    heads = {"mlm_dense.": "cls.predictions.transform.dense.", "mlm_norm.": "cls.predictions.transform.LayerNorm.",
             "mlm_decoder.bias": "cls.predictions.bias", "nsp.": "cls.seq_relationship."}
    state = {}
    for name, tensor in model.state_dict().items():
        if name == "mlm_decoder.weight":
            continue
        hf = next((theirs + name[len(ours):] for ours, theirs in heads.items() if name.startswith(ours)), None)
        if hf is None:
            hf = "bert." + _course_to_hf_name(name.removeprefix("bert."))
        state[hf] = tensor.contiguous()
    return state


def _course_to_hf_name(name: str) -> str:
    """The inverse of :func:`hf_to_course_name` for an encoder parameter name."""
    layer = re.match(r"layers\.(\d+)\.", name)
    for pattern, repl in _HF_RENAMES:
        course = repl.replace(r"\1", layer.group(1)) if layer else repl
        if name.startswith(course):
            hf = pattern.replace("\\", "").replace("(d+)", layer.group(1) if layer else "")
            return hf + name[len(course):]
    raise ValueError(f"{name!r} is not a parameter name of the course's BertModel")


def _read_hf_directory(directory) -> tuple[BertConfig, dict[str, torch.Tensor], str]:
    """(config, stored tensors, a description of the files); ``ValueError`` naming a missing or bad file."""
    config_file, weights_file = Path(directory) / "config.json", Path(directory) / "model.safetensors"
    for path in (config_file, weights_file):
        if not path.is_file():
            raise ValueError(f"{path} is missing; expected a Hugging Face BERT directory")
    config = load_config(config_file, BertConfig.from_hf)
    return config, load_safetensors(weights_file), f"{weights_file} (with {config_file})"


def hf_to_course_name(name: str, prefix: str = "") -> str | None:
    """A Hugging Face BERT parameter name -> the course's name (None for buffers such as position_ids)."""
    name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
    name = name.removeprefix("bert.")
    if name.endswith("position_ids"):
        return None
    for pattern, repl in _HF_RENAMES:
        new, n = re.subn("^" + pattern, repl, name)
        if n:
            return prefix + new
    return None


def _load_hf_state(model: nn.Module, state: dict, source: str, prefix: str, heads: dict[str, str]) -> None:
    """Copy a Hugging Face state dict read from ``source`` into ``model``, reporting every missing,
    unexpected or misshapen tensor before anything is copied."""
    ours = model.state_dict()
    new, unused = {}, []
    for name, tensor in state.items():
        target = None
        for hf_prefix, course in heads.items():
            if name.startswith(hf_prefix):
                rest = name[len(hf_prefix):].replace("gamma", "weight").replace("beta", "bias")
                target = course if course.endswith(("bias", "weight")) else course + rest
        if target is None:
            if name.startswith("cls."):
                unused.append(name)     # pretraining heads, not part of a BertModel
                continue
            target = hf_to_course_name(name, prefix)
            if target is None:
                if not name.endswith("position_ids"):
                    unused.append(name)
                continue
        new[target] = tensor
    tied = {"mlm_decoder.weight"} if f"{prefix}embeddings.token.weight" in new else set()
    check_state_fits(ours, new, source, type(model).__name__, optional=tied)
    if "mlm_decoder.weight" in ours:
        new["mlm_decoder.weight"] = new[f"{prefix}embeddings.token.weight"]
    model.load_state_dict(new, strict=True)


# ---------------------------------------------------------------------------------------------
# Pretraining data: NSP pairs and masked batches
# ---------------------------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def split_sentences(document: str) -> list[str]:
    """Split running text after . ! ? followed by a capitalised word (good enough for news prose)."""
    check_type(document, "document", str)
    return [s.strip() for s in _SENTENCE_END.split(document) if s.strip()]


def nsp_pairs(documents: list[list[str]], seed: int = 0) -> list[tuple[str, str, int]]:
    """Next-sentence pairs ``(A, B, label)``: label 0 if B really follows A, 1 if B is a random
    sentence from another document (half of each, drawn with ``seed``).

    documents: each a list of sentences (e.g. from :func:`split_sentences`); at least two documents.
    """
    check_nonempty(documents, "documents")
    docs = [d for d in documents if d]
    if len(docs) < 2:
        raise ValueError("documents must hold at least two non-empty documents (random B comes from another)")
    g = torch.Generator().manual_seed(seed)
    pairs = []
    for i, doc in enumerate(docs):
        for j in range(len(doc) - 1):
            if torch.rand((), generator=g) < 0.5:
                pairs.append((doc[j], doc[j + 1], 0))
            else:
                k = int(torch.randint(len(docs) - 1, (), generator=g))
                k += k >= i                                   # any document but this one
                other = docs[k]
                pairs.append((doc[j], other[int(torch.randint(len(other), (), generator=g))], 1))
    return pairs


def pretraining_batches(tokenizer: WordPieceTokenizer, pairs: list[tuple[str, str, int]],
                        batch_size: int, max_len: int, seed: int = 0):
    """A function ``epoch -> list of batches`` for :func:`lmcourse.train.fit`: the NSP pairs are
    encoded once, and each epoch shuffles them and draws fresh 80/10/10 masks (dynamic masking).

    A batch is a dict with input_ids, token_type_ids, attention_mask (B, T), mlm_labels (B, T;
    -100 where not predicted) and nsp_labels (B,).
    """
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    check_nonempty(pairs, "pairs")
    check_int(batch_size, "batch_size", minimum=1)
    check_int(max_len, "max_len", minimum=3)
    encoded = [tokenizer.encode(a, b, max_length=max_len) for a, b, _ in pairs]
    labels = torch.tensor([y for _, _, y in pairs])

    def batches(epoch: int) -> list[dict[str, torch.Tensor]]:
        g = torch.Generator().manual_seed(seed * 1000 + epoch)
        order = torch.randperm(len(encoded), generator=g).tolist()
        out = []
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            batch = pad_encodings([encoded[i] for i in idx], tokenizer.pad_id)
            m = mask_tokens(batch["input_ids"], tokenizer.mask_id, len(tokenizer),
                            special_ids=tokenizer.special_ids, generator=g)
            batch.update(input_ids=m.input_ids, mlm_labels=m.labels, nsp_labels=labels[idx])
            out.append(batch)
        return out

    return batches


def pretraining_losses(model: BertForPreTraining, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(masked-LM loss over the chosen positions, next-sentence loss), both mean cross-entropies."""
    out = model.bert(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
    chosen = batch["mlm_labels"] != IGNORE_INDEX                          # (B, T) bool
    mlm = model.mlm_logits(out.last_hidden_state[chosen])                 # only the chosen: (N, V)
    nsp = model.nsp(out.pooler_output)                                    # (B, 2)
    return F.cross_entropy(mlm, batch["mlm_labels"][chosen]), F.cross_entropy(nsp, batch["nsp_labels"])


def pretraining_metrics(model: BertForPreTraining, batches: list[dict]) -> dict[str, float]:
    """Mean MLM and NSP losses and accuracies over ``batches`` (call under ``torch.no_grad``)."""
    check_nonempty(batches, "batches")
    totals = dict.fromkeys(("mlm loss", "nsp loss", "mlm accuracy", "nsp accuracy"), 0.0)
    for b in batches:
        out = model.bert(b["input_ids"], b["token_type_ids"], b["attention_mask"])
        chosen = b["mlm_labels"] != IGNORE_INDEX
        mlm, target = model.mlm_logits(out.last_hidden_state[chosen]), b["mlm_labels"][chosen]
        nsp = model.nsp(out.pooler_output)
        totals["mlm loss"] += F.cross_entropy(mlm, target).item()
        totals["nsp loss"] += F.cross_entropy(nsp, b["nsp_labels"]).item()
        totals["mlm accuracy"] += (mlm.argmax(-1) == target).float().mean().item()
        totals["nsp accuracy"] += (nsp.argmax(-1) == b["nsp_labels"]).float().mean().item()
    return {k: v / len(batches) for k, v in totals.items()}


def gelu_exact(x: torch.Tensor) -> torch.Tensor:
    """GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2: the form BERT uses (correction 19)."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """The tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))



# ---------------------------------------------------------------------------------------------
# Why both directions: the weather sentence of seed 000, as a fill-in-the-blank experiment
# ---------------------------------------------------------------------------------------------
WEATHER_WORDS = {"good": ("sunny", "lovely", "warm", "fine"), "bad": ("stormy", "awful", "cold", "wet")}
_WEATHER_AFTER = {"good": ("so we went to the beach", "so we had a picnic outside", "so the match went ahead"),
                  "bad": ("so we cancelled the picnic", "so we stayed at home", "so the match was called off")}


def weather_sentences(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``(sentence, 'good' or 'bad')``: "the weather today was <adjective> , so ..." where only the
    words AFTER the adjective tell which kind of adjective it must be."""
    check_int(n, "n", minimum=1)
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        kind = ("good", "bad")[int(torch.randint(2, (), generator=g))]
        adjective = WEATHER_WORDS[kind][int(torch.randint(4, (), generator=g))]
        after = _WEATHER_AFTER[kind][int(torch.randint(3, (), generator=g))]
        out.append((f"the weather today was {adjective} , {after} .", kind))
    return out


def remask_count(blanks: int, iterations: int, k: int) -> int:
    """How many of ``blanks`` guesses mask-predict masks again after round ``k`` (0-based) of
    ``iterations``: blanks (K - 1 - k) / K rounded down, K = ``iterations`` (none after the last)."""
    check_int(blanks, "blanks", minimum=1)
    check_int(iterations, "iterations", minimum=1)
    check_int(k, "k", minimum=0, maximum=iterations - 1)
    return blanks * (iterations - 1 - k) // iterations


def mask_predict(model: BertForPreTraining, input_ids: torch.Tensor, blanks: list[int], mask_id: int,
                 iterations: int) -> torch.Tensor:
    """Fill the ``blanks`` (positions) of ``input_ids`` (T,) by mask-predict (Ghazvininejad et al. 2019):
    predict every blank at once, then re-mask the least confident and predict them again, with
    fewer re-masked each round (:func:`remask_count`). Returns the
    filled (T,) ids; ``iterations=1`` is one parallel guess, each blank independent of the others."""
    check_type(model, "model", BertForPreTraining)
    check_token_ids(input_ids, model.config.vocab_size, "input_ids")
    if input_ids.dim() != 1:
        raise ValueError(f"input_ids must be (time,), got shape {tuple(input_ids.shape)}")
    check_nonempty(blanks, "blanks")
    if len(set(blanks)) != len(blanks) or not all(0 <= b < len(input_ids) for b in blanks):
        raise ValueError(f"blanks must be distinct positions in [0, {len(input_ids)}), got {blanks}")
    check_int(mask_id, "mask_id", minimum=0, maximum=model.config.vocab_size - 1)
    check_int(iterations, "iterations", minimum=1)
    ids, where = input_ids.clone(), torch.tensor(blanks)
    ids[where] = mask_id
    confidence = torch.zeros(len(blanks))
    remasked = torch.ones(len(blanks), dtype=torch.bool)
    for k in range(iterations):
        with torch.no_grad():
            probs = model(ids[None])[0][0, where].softmax(-1)               # (n, V)
        best, guess = probs.max(-1)
        ids[where[remasked]], confidence[remasked] = guess[remasked], best[remasked]
        remasked = torch.zeros(len(blanks), dtype=torch.bool)
        remasked[confidence.argsort()[:remask_count(len(blanks), iterations, k)]] = True   # the least confident
        ids[where[remasked]] = mask_id
    return ids


def fill_in_the_blank(causal: bool, num_steps: int = 150, seed: int = 0) -> dict[str, float]:
    """Train a tiny masked LM on :func:`weather_sentences` with the adjective always masked, seeing
    both sides (``causal=False``, BERT) or only the left (``causal=True``), and report on held-out
    sentences how often the predicted adjective is of the right kind (good vs bad)."""
    check_int(num_steps, "num_steps", minimum=1)
    from lmcourse.seed import set_seed
    words = sorted({w for s, _ in weather_sentences(200, seed) for w in s.split()})
    tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words)
    set_seed(seed, num_threads=None)
    model = BertForPreTraining(BertConfig(vocab_size=len(tok), d_model=32, num_layers=2, num_heads=2,
                                          d_ff=64, max_len=24, dropout=0.0, causal=causal))

    def batch(sentences):
        enc = tok.batch_encode([s for s, _ in sentences])
        labels = torch.full_like(enc["input_ids"], IGNORE_INDEX)
        labels[:, 5] = enc["input_ids"][:, 5]       # [CLS] the weather today was <adjective>
        enc["input_ids"][:, 5] = tok.mask_id
        return enc, labels

    train, test = batch(weather_sentences(512, seed)), batch(weather_sentences(200, seed + 1))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(num_steps):
        idx = torch.arange(step * 32, step * 32 + 32) % 512
        (enc, labels) = train
        mlm, _ = model(enc["input_ids"][idx], attention_mask=enc["attention_mask"][idx])
        loss = F.cross_entropy(mlm[:, 5], labels[idx, 5])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    enc, labels = test
    with torch.no_grad():
        pred = model(enc["input_ids"], attention_mask=enc["attention_mask"])[0][:, 5].argmax(-1)
    good = {tok.stoi[w] for w in WEATHER_WORDS["good"]}
    same_kind = [(int(p) in good) == (int(t) in good) for p, t in zip(pred, labels[:, 5])]
    return {"right kind": sum(same_kind) / len(same_kind),
            "exact word": (pred == labels[:, 5]).float().mean().item(), "train loss": loss.item()}
