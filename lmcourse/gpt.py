"""GPT: a decoder-only Transformer language model (Radford et al. 2018, 2019).

The model is GPT-2's layout: token and learned position embeddings, ``num_layers`` pre-LayerNorm
blocks of causal multi-head self-attention and a GELU MLP, a final LayerNorm, and an output layer
that shares its weights with the token embedding. :meth:`GPT.from_pretrained` reads a Hugging Face
GPT-2 directory (``config.json`` + ``model.safetensors``) into it.

GPT-1's fine-tuning recipe is here too: task inputs become one token sequence with start,
delimiter and extract tokens (:func:`classification_input`, :func:`entailment_input`,
:func:`similarity_inputs`, :func:`multiple_choice_inputs`), a linear head reads the last
hidden state (:class:`GPTForTask`), and the LM loss is kept as an auxiliary loss (:func:`task_loss`).
"""
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention, causal_attention, causal_mask, scaled_dot_product_attention
from lmcourse.sampling import greedy_next, sample_next
from lmcourse.seed import DEFAULT_DEVICE
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

IGNORE_INDEX = -100  # targets with this value are left out of the loss (torch's default)
KVCache = tuple[torch.Tensor, torch.Tensor]   # one layer's (keys, values), each (B, h, T, d_head)


@dataclass
class GPTConfig:
    """Hyper-parameters of a GPT. The defaults are GPT-2 small (124M parameters)."""
    vocab_size: int = 50257       # token ids 0 .. vocab_size - 1 (GPT-2's byte-level BPE)
    context_size: int = 1024      # longest input: rows of the learned position table
    d_model: int = 768            # width of every token vector
    num_layers: int = 12          # Transformer blocks
    num_heads: int = 12           # attention heads per block, each of width d_model / num_heads
    d_ff: int | None = None       # hidden width of the MLP; None means 4 * d_model
    dropout: float = 0.0          # on embeddings, attention weights and residual branches
    layer_norm_eps: float = 1e-5  # epsilon of every LayerNorm
    tie_weights: bool = True      # output layer = token embedding matrix (Press and Wolf 2017)

    def __post_init__(self):
        for name in ("vocab_size", "context_size", "d_model", "num_layers", "num_heads"):
            check_int(getattr(self, name), name, minimum=1)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        if self.d_ff is None:
            self.d_ff = 4 * self.d_model
        check_int(self.d_ff, "d_ff", minimum=1)
        check_float(self.dropout, "dropout", minimum=0.0, maximum=1.0)
        check_float(self.layer_norm_eps, "layer_norm_eps", minimum=0.0, strict_minimum=True)
        check_type(self.tie_weights, "tie_weights", bool)

    @classmethod
    def from_hf(cls, hf: dict) -> "GPTConfig":
        """From a Hugging Face GPT-2 ``config.json`` dictionary (GPT-2's own attention and GELU only)."""
        activation = hf.get("activation_function", "gelu_new")
        if activation not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"only GPT-2's tanh GELU is supported, config has {activation!r}")
        for flag in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
            if hf.get(flag):
                raise ValueError(f"config option {flag}=True is not supported")
        if hf.get("scale_attn_weights") is False:
            raise ValueError("config option scale_attn_weights=False is not supported")
        return cls(vocab_size=hf["vocab_size"], context_size=hf["n_positions"], d_model=hf["n_embd"],
                   num_layers=hf["n_layer"], num_heads=hf["n_head"], d_ff=hf.get("n_inner"),
                   layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5),
                   tie_weights=hf.get("tie_word_embeddings", True))

    def to_hf(self) -> dict:
        """The Hugging Face GPT-2 ``config.json`` fields of this configuration."""
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": self.vocab_size,
                "n_positions": self.context_size, "n_embd": self.d_model, "n_layer": self.num_layers,
                "n_head": self.num_heads, "n_inner": self.d_ff, "activation_function": "gelu_new",
                "layer_norm_epsilon": self.layer_norm_eps, "resid_pdrop": self.dropout,
                "embd_pdrop": self.dropout, "attn_pdrop": self.dropout,
                "tie_word_embeddings": self.tie_weights}


class CausalSelfAttention(MultiHeadAttention):
    """Masked multi-head self-attention: position t attends to positions 0..t only.

    forward(x (B, T, d_model)) -> (B, T, d_model); ``need_weights=True`` also returns the
    attention weights (B, h, T, T), computed explicitly with :func:`causal_mask`.
    """

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        B, T, C = x.shape
        q, k, v = self.project_qkv(x)              # one (C, 3C) matrix product: 3 x (B, h, T, d_head)
        p = self.dropout if self.training else 0.0
        if need_weights or not self.fused:
            out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device),
                                                        p, self.training)
        else:
            # fast path: the same masked softmax(q k^T / sqrt(d_head)) v by the quickest route
            out, weights = causal_attention(q, k, v, self.dropout, self.training), None
        out = out.transpose(1, 2).reshape(B, T, C)                                        # concat heads: (B, T, C)
        out = self.out_proj(out)                                                          # (B, T, C)
        return (out, weights) if need_weights else out

    def forward_cached(self, x: torch.Tensor, cache: KVCache | None = None
                       ) -> tuple[torch.Tensor, KVCache]:
        """Attention of the new positions x (B, T_new, C) to the cached keys and values and their own.

        cache: (keys, values), each (B, h, T_past, d_head), from the earlier positions (None: none).
        Returns (output (B, T_new, C), the cache extended to T_past + T_new positions). New position
        i sees the T_past cached ones and new positions <= i, so the output equals the rows of a
        full forward pass over all T_past + T_new positions.
        """
        B, T, C = x.shape
        q, k, v = self.project_qkv(x)                                    # 3 x (B, h, T_new, d_head)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)                          # (B, h, T_past + T_new, d_head)
            v = torch.cat([cache[1], v], dim=2)
        past = k.size(2) - T
        visible = torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(diagonal=past)  # (T_new, T_all)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)                  # (B, h, T_new, d_head)
        out = self.out_proj(out.transpose(1, 2).reshape(B, T, C))                         # (B, T_new, C)
        return out, (k, v)


class MLP(nn.Module):
    """Position-wise feed-forward network: Linear(d_model, d_ff), GELU (tanh form), Linear back.

    (B, T, d_model) -> (B, T, d_model).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.d_ff)
        self.act = nn.GELU(approximate="tanh")  # GPT-2's "gelu_new"; the exact GELU uses erf
        self.proj = nn.Linear(config.d_ff, config.d_model)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(self.act(self.fc(x))))   # (B, T, C) -> (B, T, d_ff) -> (B, T, C)


class Block(nn.Module):
    """One pre-LN decoder block (GPT-2): x + Attn(LN(x)), then x + MLP(LN(x)). (B, T, C) -> (B, T, C)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.attn = CausalSelfAttention(config.d_model, config.num_heads, dropout=config.dropout)
        self.ln_2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.mlp = MLP(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln_1(x)))   # (B, T, C)
        return x + self.mlp(self.ln_2(x))            # (B, T, C)

    def forward_cached(self, x: torch.Tensor, cache: KVCache | None = None) -> tuple[torch.Tensor, KVCache]:
        """:meth:`forward` for new positions only, reusing the earlier positions' keys and values."""
        a, cache = self.attn.forward_cached(self.ln_1(x), cache)
        x = x + self.drop(a)                         # (B, T_new, C)
        return x + self.mlp(self.ln_2(x)), cache     # (B, T_new, C)


class GPT(nn.Module):
    """Decoder-only Transformer language model.

    forward(ids (B, T) int64) -> logits (B, T, vocab_size): row t scores the token at t + 1.
    :meth:`hidden_states` gives the final (B, T, d_model) vectors that the logits are made from.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        check_type(config, "config", GPTConfig)
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)      # token embeddings
        self.wpe = nn.Embedding(config.context_size, config.d_model)    # learned position embeddings
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.ln_f = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_weights:
            self.lm_head.weight = self.wte.weight
        self.apply(self._init_weights)
        # GPT-2: scale the init of layers that write into the residual stream by 1/sqrt(2 * layers)
        for block in self.blocks:
            for layer in (block.attn.out_proj, block.mlp.proj):
                nn.init.normal_(layer.weight, mean=0.0, std=0.02 / math.sqrt(2 * config.num_layers))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def _check_ids(self, ids: torch.Tensor) -> None:
        check_token_ids(ids, self.config.vocab_size, "ids")
        if ids.dim() != 2:
            raise ValueError(f"ids must be (batch, time) token ids, got shape {tuple(ids.shape)}")
        if ids.size(1) > self.config.context_size:
            raise ValueError(f"ids has {ids.size(1)} positions but context_size is "
                             f"{self.config.context_size}; crop or split the input")

    def hidden_states(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) token ids -> (B, T, d_model) vectors after the final LayerNorm."""
        self._check_ids(ids)
        positions = torch.arange(ids.size(1), device=ids.device)              # (T,)
        x = self.drop(self.wte(ids) + self.wpe(positions))                  # (B, T, C) + (T, C)
        for block in self.blocks:
            x = block(x)                                                     # (B, T, C)
        return self.ln_f(x)                                                  # (B, T, C)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.hidden_states(ids))                         # (B, T, C) @ (C, V) -> (B, T, V)

    def forward_cached(self, ids: torch.Tensor, cache: list[KVCache] | None = None
                       ) -> tuple[torch.Tensor, list[KVCache]]:
        """Logits of the new tokens ids (B, T_new) given the cache of the earlier ones -> (logits
        (B, T_new, V), the extended cache: one (keys, values) per block).

        A key-value cache: keys and values of past positions never change (causal attention), so
        each generated token costs one position's work instead of a pass over the whole text.
        """
        self._check_ids(ids)
        past = 0 if cache is None else cache[0][0].size(2)
        if past + ids.size(1) > self.config.context_size:
            raise ValueError(f"cache ({past}) plus ids ({ids.size(1)}) exceed context_size "
                             f"{self.config.context_size}")
        positions = torch.arange(past, past + ids.size(1), device=ids.device)  # (T_new,)
        x = self.drop(self.wte(ids) + self.wpe(positions))                      # (B, T_new, C)
        new_cache = []
        for i, block in enumerate(self.blocks):
            x, layer_cache = block.forward_cached(x, None if cache is None else cache[i])
            new_cache.append(layer_cache)
        return self.lm_head(self.ln_f(x)), new_cache                            # (B, T_new, V)

    @torch.no_grad()
    def attention_maps(self, ids: torch.Tensor) -> torch.Tensor:
        """Every block's attention weights for ids (B, T) -> (num_layers, B, num_heads, T, T)."""
        self._check_ids(ids)
        x = self.wte(ids) + self.wpe(torch.arange(ids.size(1), device=ids.device))  # (B, T, C)
        maps = []
        for block in self.blocks:
            a, weights = block.attn(block.ln_1(x), need_weights=True)           # weights (B, h, T, T)
            maps.append(weights)
            x = x + a
            x = x + block.mlp(block.ln_2(x))
        return torch.stack(maps)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, greedy: bool = False,
                 generator: torch.Generator | None = None, use_cache: bool = False) -> torch.Tensor:
        """Append ``max_new_tokens`` sampled tokens to each row of ``ids`` (B, T) -> (B, T + new).

        Each step feeds the last ``context_size`` tokens (the window slides once the text is
        longer than the context) and samples with :func:`lmcourse.sampling.sample_next`
        (temperature > 0, top-k, top-p in (0, 1]); ``greedy=True`` takes the argmax instead.
        ``use_cache=True`` keeps every block's keys and values (:meth:`forward_cached`) and feeds
        only the newest token; once the window slides, the positions of all tokens change, so the
        cache is rebuilt from the window at each step. A prompt longer than the context is an
        error rather than silently cut.
        """
        self._check_ids(ids)
        check_int(max_new_tokens, "max_new_tokens", minimum=0)
        check_type(use_cache, "use_cache", bool)
        if ids.size(1) == 0:
            raise ValueError("ids must hold at least one token to condition on")
        was_training = self.training
        self.eval()
        cache = None
        for _ in range(max_new_tokens):
            if not use_cache:
                logits = self(ids[:, -self.config.context_size:])[:, -1, :]  # (B, V): the next token
            elif cache is not None and cache[0][0].size(2) < self.config.context_size:
                logits, cache = self.forward_cached(ids[:, -1:], cache)     # only the newest token
                logits = logits[:, -1, :]
            else:                                                            # first step, or the window slid
                logits, cache = self.forward_cached(ids[:, -self.config.context_size:])
                logits = logits[:, -1, :]
            if greedy:
                nxt = greedy_next(logits)
            else:
                nxt = sample_next(logits, temperature, top_k, top_p, generator=generator)
            ids = torch.cat([ids, nxt[:, None]], dim=1)                      # (B, T + 1)
        self.train(was_training)
        return ids

    @classmethod
    def from_pretrained(cls, directory: str | Path, device: str | torch.device = DEFAULT_DEVICE) -> "GPT":
        """Load a Hugging Face GPT-2 checkpoint (``config.json`` and ``model.safetensors``).

        GPT-2 stores its linear layers as ``Conv1D`` with weight (in, out), used as ``x @ W + b``;
        ``nn.Linear`` keeps (out, in), so every matrix is transposed. The fused ``c_attn`` weight
        (d, 3d) holds the Q, K and V projections side by side and is split into three.
        Files that are missing, corrupt or of another model raise ``ValueError`` naming the file.
        """
        config_file, weights_file = Path(directory) / "config.json", Path(directory) / "model.safetensors"
        for path in (config_file, weights_file):
            if not path.is_file():
                raise ValueError(f"{path} is missing; expected a Hugging Face GPT-2 directory")
        config = load_config(config_file, GPTConfig.from_hf)
        stored = load_safetensors(weights_file)
        # GPT2LMHeadModel prefixes names with "transformer."; a bare GPT2Model does not
        stored = {k.removeprefix("transformer."): v for k, v in stored.items()}
        _check_gpt2_tensors(stored, config, weights_file, config_file)
        d = config.d_model
        state = {"wte.weight": stored["wte.weight"], "wpe.weight": stored["wpe.weight"],
                 "ln_f.weight": stored["ln_f.weight"], "ln_f.bias": stored["ln_f.bias"]}
        for i in range(config.num_layers):
            h, o = f"h.{i}.", f"blocks.{i}."
            w_qkv, b_qkv = stored[h + "attn.c_attn.weight"], stored[h + "attn.c_attn.bias"]  # (d, 3d), (3d,)
            for j, name in enumerate(("q_proj", "k_proj", "v_proj")):
                state[o + f"attn.{name}.weight"] = w_qkv[:, j * d:(j + 1) * d].t()         # (d, d) as (out, in)
                state[o + f"attn.{name}.bias"] = b_qkv[j * d:(j + 1) * d]
            for ours, theirs in (("attn.out_proj", "attn.c_proj"), ("mlp.fc", "mlp.c_fc"),
                                 ("mlp.proj", "mlp.c_proj")):
                state[o + ours + ".weight"] = stored[h + theirs + ".weight"].t()
                state[o + ours + ".bias"] = stored[h + theirs + ".bias"]
            for ln in ("ln_1", "ln_2"):
                state[o + ln + ".weight"] = stored[h + ln + ".weight"]
                state[o + ln + ".bias"] = stored[h + ln + ".bias"]
        state["lm_head.weight"] = stored["wte.weight"] if config.tie_weights else stored["lm_head.weight"]
        model = cls(config)
        model.load_state_dict({k: v.contiguous() for k, v in state.items()}, strict=True)
        return model.to(device)


def hf_state_dict(model: GPT) -> dict[str, torch.Tensor]:
    """The weights of ``model`` under Hugging Face GPT-2's names and layouts (the inverse of
    :meth:`GPT.from_pretrained`): ``Conv1D`` matrices (in, out), Q, K and V fused into ``c_attn``."""
    check_type(model, "model", GPT)
    ours = model.state_dict()
    state = {name: ours[name] for name in ("wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias")}
    for i in range(model.config.num_layers):
        h, o = f"h.{i}.", f"blocks.{i}."
        qkv = [o + f"attn.{name}" for name in ("q_proj", "k_proj", "v_proj")]
        state[h + "attn.c_attn.weight"] = torch.cat([ours[n + ".weight"].t() for n in qkv], dim=1)  # (d, 3d)
        state[h + "attn.c_attn.bias"] = torch.cat([ours[n + ".bias"] for n in qkv])                  # (3d,)
        for ours_name, theirs in (("attn.out_proj", "attn.c_proj"), ("mlp.fc", "mlp.c_fc"), ("mlp.proj", "mlp.c_proj")):
            state[h + theirs + ".weight"] = ours[o + ours_name + ".weight"].t()
            state[h + theirs + ".bias"] = ours[o + ours_name + ".bias"]
        for ln in ("ln_1", "ln_2"):
            state[h + ln + ".weight"], state[h + ln + ".bias"] = ours[o + ln + ".weight"], ours[o + ln + ".bias"]
    if not model.config.tie_weights:
        state["lm_head.weight"] = ours["lm_head.weight"]
    return {name: tensor.contiguous() for name, tensor in state.items()}


def _check_gpt2_tensors(stored: dict, config: GPTConfig, weights_file: Path, config_file: Path) -> None:
    """Raise ``ValueError`` naming ``weights_file`` unless ``stored`` holds every tensor of a Hugging Face
    GPT-2 with the shape ``config`` gives it (``Conv1D`` weights are (in, out)); others are ignored."""
    V, P, d, f = config.vocab_size, config.context_size, config.d_model, config.d_ff
    shapes = {"wte.weight": (V, d), "wpe.weight": (P, d), "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for i in range(config.num_layers):
        for name, weight in (("attn.c_attn", (d, 3 * d)), ("attn.c_proj", (d, d)), ("mlp.c_fc", (d, f)),
                             ("mlp.c_proj", (f, d)), ("ln_1", (d,)), ("ln_2", (d,))):
            shapes[f"h.{i}.{name}.weight"], shapes[f"h.{i}.{name}.bias"] = weight, weight[-1:]
    if not config.tie_weights:
        shapes["lm_head.weight"] = (V, d)
    check_state_fits(shapes, {k: v for k, v in stored.items() if k in shapes}, str(weights_file),
                     f"the GPT-2 that {config_file} describes")


def lm_loss(model: GPT, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) of a batch ``(x, y)``, each (B, T), y = x shifted by one."""
    x, y = batch
    logits = model(x)                                                          # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


def training_flops_per_token(model: GPT) -> float:
    """Training FLOPs per token: 6 per matrix weight (forward 2, backward 4) plus attention's
    12 L T d, as in the PaLM paper's appendix B (the model FLOPs of "model FLOP/s utilisation")."""
    c = model.config
    matmul_weights = sum(p.numel() for name, p in model.named_parameters()
                         if p.dim() == 2 and not name.startswith("wpe"))   # wte counts once, as lm_head
    return 6 * matmul_weights + 12 * c.num_layers * c.context_size * c.d_model


def sequence_log_probs(model: GPT, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Total log-probability (nats) of each sequence's tokens 1 .. length - 1 given the ones before.

    ids (B, T) padded on the right, lengths (B,) the real lengths (>= 2) -> (B,). Token 0 (e.g.
    ``<|endoftext|>``) is only conditioned on. Differentiable: it scores candidates zero-shot and,
    as the score of a multiple-choice loss, fine-tunes the language model itself.
    """
    check_type(ids, "ids", torch.Tensor)
    check_type(lengths, "lengths", torch.Tensor)
    if ids.dim() != 2 or lengths.shape != ids.shape[:1]:
        raise ValueError(f"ids must be (batch, time) and lengths (batch,); got {tuple(ids.shape)} "
                         f"and {tuple(lengths.shape)}")
    if lengths.min() < 2 or lengths.max() > ids.size(1):
        raise ValueError(f"lengths must lie in [2, {ids.size(1)}], got {lengths.tolist()}")
    log_p = model(ids[:, :-1]).log_softmax(-1)                                  # (B, T-1, V)
    log_p = log_p.gather(-1, ids[:, 1:, None]).squeeze(-1)                     # (B, T-1): log P(ids[t+1])
    scored = torch.arange(1, ids.size(1), device=ids.device) < lengths[:, None]  # (B, T-1): not padding
    return (log_p * scored).sum(-1)                                             # (B,)


@torch.no_grad()
def loss_by_position(model: GPT, batches) -> torch.Tensor:
    """Mean next-token loss (nats) at each position of the window: batches of ``(x, y)``, each (B, T),
    all of one length T -> (T,). Position t predicts its token from t + 1 tokens of context."""
    total, count = None, 0
    for x, y in batches:
        logits = model(x)                                                      # (B, T, V)
        nll = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")     # (B, T)
        if total is not None and nll.size(1) != total.numel():
            raise ValueError(f"batches must all have one window length; got {total.numel()} and {nll.size(1)}")
        total = nll.sum(0) if total is None else total + nll.sum(0)
        count += nll.size(0)
    if total is None:
        raise ValueError("batches must not be empty")
    return total / count


@torch.no_grad()
def sliding_window_loss(model: GPT, ids: torch.Tensor, stride: int, batch_size: int = 16) -> float:
    """Mean next-token loss (nats) over a token stream ``ids`` (N,), every token after the first
    predicted exactly once.

    Windows of ``context_size`` tokens start every ``stride`` tokens (the last one ends at the
    stream's end); each window scores only the targets that no earlier window scored, so every
    target after the first window sees at least ``context_size - stride`` tokens of context.
    ``stride = context_size`` is the usual evaluation on non-overlapping windows, where the first
    tokens of each window are predicted from almost nothing.
    """
    check_type(ids, "ids", torch.Tensor)
    T = model.config.context_size
    if ids.dim() != 1 or len(ids) < T + 1:
        raise ValueError(f"ids must be a 1-D stream of at least context_size + 1 = {T + 1} tokens, "
                         f"got shape {tuple(ids.shape)}")
    check_int(stride, "stride", minimum=1, maximum=T)
    check_int(batch_size, "batch_size", minimum=1)
    last = len(ids) - 1 - T                                    # start of the window that ends the stream
    starts = torch.tensor(sorted(set(range(0, last, stride)) | {last}))
    scored_up_to = torch.cat([starts.new_zeros(1), starts[:-1] + T])    # targets <= this were scored before
    total = 0.0
    for i in range(0, len(starts), batch_size):
        s = starts[i:i + batch_size, None] + torch.arange(T)              # (W, T): input positions
        logits = model(ids[s])                                            # (W, T, V)
        nll = F.cross_entropy(logits.transpose(1, 2), ids[s + 1], reduction="none")   # (W, T)
        total += nll[s + 1 > scored_up_to[i:i + batch_size, None]].sum().item()
    return total / (len(ids) - 1)


def transfer_layers(pretrained: GPT, num_blocks: int) -> GPT:
    """A new GPT of ``pretrained``'s configuration that copies its embeddings (tied output layer),
    final LayerNorm and first ``num_blocks`` blocks; the blocks above keep their fresh random
    initialisation (seed before calling). GPT-1's "layers transferred" experiment."""
    check_type(pretrained, "pretrained", GPT)
    check_int(num_blocks, "num_blocks", minimum=0, maximum=pretrained.config.num_layers)
    model = GPT(pretrained.config).to(pretrained.wte.weight.device)
    kept = {name: value for name, value in pretrained.state_dict().items()
            if not name.startswith("blocks.") or int(name.split(".")[1]) < num_blocks}
    model.load_state_dict(kept, strict=False)     # only the upper blocks' weights are left out
    return model


def complete(model: GPT, tokenizer, prompt: str, max_new_tokens: int, **sampling) -> str:
    """Encode ``prompt`` with ``tokenizer`` (``encode``/``decode``), continue it, decode the new text.

    ``sampling`` goes to :meth:`GPT.generate` (temperature, top_k, top_p, greedy, generator).
    """
    check_type(prompt, "prompt", str)
    ids = tokenizer.encode(prompt)
    if not ids:
        raise ValueError("prompt must not be empty (it is the text the model continues)")
    device = model.wte.weight.device
    out = model.generate(torch.tensor([ids], device=device), max_new_tokens, **sampling)
    return tokenizer.decode(out[0, len(ids):].tolist())


# --- GPT-1 fine-tuning: task input transformations, task heads and the auxiliary LM loss ----------

@dataclass(frozen=True)
class TaskTokens:
    """Ids of GPT-1's added tokens: start, delimiter between the parts, extract (read by the head)."""
    start: int
    delim: int
    extract: int


def classification_input(text: list[int], tokens: TaskTokens) -> list[list[int]]:
    """[start] text [extract]: one sequence."""
    return [[tokens.start, *text, tokens.extract]]


def entailment_input(premise: list[int], hypothesis: list[int], tokens: TaskTokens) -> list[list[int]]:
    """[start] premise [delim] hypothesis [extract]: one sequence."""
    return [[tokens.start, *premise, tokens.delim, *hypothesis, tokens.extract]]


def similarity_inputs(a: list[int], b: list[int], tokens: TaskTokens) -> list[list[int]]:
    """Both orders, since similarity has none: [start] a [delim] b [extract] and b before a."""
    return [[tokens.start, *a, tokens.delim, *b, tokens.extract],
            [tokens.start, *b, tokens.delim, *a, tokens.extract]]


def multiple_choice_inputs(context: list[int], answers: list[list[int]], tokens: TaskTokens) -> list[list[int]]:
    """One sequence per answer: [start] context [delim] answer_k [extract]."""
    check_nonempty(answers, "answers")
    return [[tokens.start, *context, tokens.delim, *answer, tokens.extract] for answer in answers]


def task_batch(examples: list[list[list[int]]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad the sequences of a batch of examples to one length.

    ``examples[b]`` holds the N sequences of example b (N = 1 for classification and entailment,
    2 for similarity, the number of answers for multiple choice). Returns ids (B, N, T), padded
    on the right with ``pad_id``, and ``last`` (B, N), the position of each extract token. Right
    padding needs no attention mask: causal attention never lets a token see the pads after it.
    """
    check_nonempty(examples, "examples")
    n = len(examples[0])
    if n == 0 or any(len(seqs) != n for seqs in examples):
        raise ValueError("every example must hold the same, non-zero number of sequences")
    lengths = [[len(s) for s in seqs] for seqs in examples]
    if min(min(ls) for ls in lengths) == 0:
        raise ValueError("sequences must not be empty")
    T = max(max(ls) for ls in lengths)
    ids = torch.full((len(examples), n, T), pad_id, dtype=torch.long)                   # (B, N, T)
    for b, seqs in enumerate(examples):
        for j, s in enumerate(seqs):
            ids[b, j, :len(s)] = torch.tensor(s, dtype=torch.long)
    last = torch.tensor(lengths, dtype=torch.long) - 1                                   # (B, N)
    return ids, last


class GPTForTask(nn.Module):
    """A pretrained :class:`GPT` plus GPT-1's linear head on the extract token's final state h.

    task: 'classification' or 'entailment' (logits = h W), 'similarity' (the two orders' states are
    added: logits = (h_ab + h_ba) W), 'multiple_choice' (one score per answer: logits_k = h_k w).
    forward(ids (B, N, T), last (B, N)) -> (task logits (B, num_classes) or (B, N) for
    multiple choice, LM logits (B, N, T, vocab_size) for the auxiliary loss).
    """

    TASKS = ("classification", "entailment", "similarity", "multiple_choice")

    def __init__(self, gpt: GPT, task: str, num_classes: int = 2):
        super().__init__()
        check_type(gpt, "gpt", GPT)
        if task not in self.TASKS:
            raise ValueError(f"task must be one of {self.TASKS}, got {task!r}")
        check_int(num_classes, "num_classes", minimum=2)
        self.gpt, self.task = gpt, task
        self.head = nn.Linear(gpt.config.d_model, 1 if task == "multiple_choice" else num_classes)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, ids: torch.Tensor, last: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if ids.dim() != 3 or last.shape != ids.shape[:2]:
            raise ValueError(f"ids must be (batch, N, time) and last (batch, N); got "
                             f"{tuple(ids.shape)} and {tuple(last.shape)}")
        B, N, T = ids.shape
        h = self.gpt.hidden_states(ids.reshape(B * N, T))                          # (B*N, T, C)
        lm_logits = self.gpt.lm_head(h).view(B, N, T, -1)                          # (B, N, T, V)
        h_last = h[torch.arange(B * N, device=ids.device), last.reshape(-1)]      # (B*N, C)
        h_last = h_last.view(B, N, -1)                                             # (B, N, C)
        if self.task == "multiple_choice":
            return self.head(h_last).squeeze(-1), lm_logits                        # (B, N)
        if self.task == "similarity":
            return self.head(h_last.sum(dim=1)), lm_logits                         # (B, C) -> (B, classes)
        if N != 1:
            raise ValueError(f"task {self.task!r} takes one sequence per example, got {N}")
        return self.head(h_last[:, 0]), lm_logits                                  # (B, classes)


def task_loss(model: GPTForTask, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
              lm_weight: float = 0.5) -> torch.Tensor:
    """GPT-1's fine-tuning objective L3 = L2 (task) + lm_weight * L1 (LM on the task's own text).

    batch = (ids (B, N, T), last (B, N), labels (B,)). The LM term predicts every token up to the
    extract token and ignores the padding. ``lm_weight=0`` drops it; GPT-1 used 0.5.
    """
    check_float(lm_weight, "lm_weight", minimum=0.0)
    ids, last, labels = batch
    logits, lm_logits = model(ids, last)
    loss = F.cross_entropy(logits, labels)
    if lm_weight > 0:
        targets = ids[..., 1:].clone()                                              # (B, N, T-1)
        positions = torch.arange(1, ids.size(-1), device=ids.device)               # (T-1,)
        targets[positions > last[..., None]] = IGNORE_INDEX                        # pads after extract
        lm = F.cross_entropy(lm_logits[..., :-1, :].reshape(-1, lm_logits.size(-1)),
                             targets.reshape(-1), ignore_index=IGNORE_INDEX)
        loss = loss + lm_weight * lm
    return loss
