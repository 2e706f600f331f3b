"""Parameter counts of BERT-style encoders, and ALBERT's two ways of shrinking them (Lan et al. 2020).

1. Factorised embeddings: the V x H token table becomes V x E followed by an E x H projection,
   so it costs V*E + E*H instead of V*H (ALBERT uses E = 128 with V = 30,000).
2. Cross-layer sharing: the L layers reuse one set of weights (or only the attention, or only the
   feed-forward block), so the layers cost what 1 layer costs.

The count is computed from the configuration alone, module by module, like summing
``p.numel()`` over ``transformers.BertModel`` / ``AlbertModel`` (the tests check that it does).
"""
from dataclasses import dataclass

from lmcourse.validate import check_int, check_type

SHARING = ("none", "attention", "ffn", "all")


@dataclass(frozen=True)
class EncoderConfig:
    """Sizes that determine an encoder's parameter count (the number of heads does not)."""
    vocab_size: int = 30522          # V: WordPiece vocabulary (BERT 30,522; ALBERT 30,000)
    d_model: int = 768               # H: hidden width of every layer
    num_layers: int = 12             # L
    d_ff: int = 3072                 # width of the feed-forward block (4H)
    d_embed: int | None = None       # E: token-embedding width; None means E = H (no factorisation)
    max_positions: int = 512         # rows of the learned position table
    type_vocab_size: int = 2         # segment embeddings (sentence A / B)
    sharing: str = "none"            # which layer weights all L layers share: none/attention/ffn/all
    biases: bool = True              # biases of the linear layers (LayerNorm always has gain and bias)
    pooler: bool = True              # the tanh layer on [CLS] used for sentence-level tasks

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "num_layers", "d_ff", "max_positions"):
            check_int(getattr(self, name), name, minimum=1)
        check_int(self.type_vocab_size, "type_vocab_size", minimum=0)
        if self.d_embed is not None:
            check_int(self.d_embed, "d_embed", minimum=1)
        if self.sharing not in SHARING:
            raise ValueError(f"sharing must be one of {SHARING}, got {self.sharing!r}")
        check_type(self.biases, "biases", bool)
        check_type(self.pooler, "pooler", bool)


def _linear(n_in: int, n_out: int, bias: bool) -> int:
    return n_in * n_out + (n_out if bias else 0)


def encoder_parameters(config: EncoderConfig) -> dict[str, int]:
    """Parameters of each part of the encoder described by ``config``, and their ``"total"``."""
    check_type(config, "config", EncoderConfig)
    c = config
    H, E = c.d_model, (c.d_embed or c.d_model)
    b = c.biases
    parts = {
        "token embeddings": c.vocab_size * E,
        "position embeddings": c.max_positions * E,
        "segment embeddings": c.type_vocab_size * E,
        "embedding LayerNorm": 2 * E,
        # ALBERT: project the E-wide embeddings up to the H-wide layers
        "embedding projection": _linear(E, H, b) if E != H else 0,
    }
    # one layer: Q, K, V and output projections (4 H x H) + LayerNorm; FFN H -> d_ff -> H + LayerNorm
    attention = 4 * _linear(H, H, b) + 2 * H
    ffn = _linear(H, c.d_ff, b) + _linear(c.d_ff, H, b) + 2 * H
    copies_attention = 1 if c.sharing in ("attention", "all") else c.num_layers
    copies_ffn = 1 if c.sharing in ("ffn", "all") else c.num_layers
    parts["attention (all layers)"] = copies_attention * attention
    parts["feed-forward (all layers)"] = copies_ffn * ffn
    parts["pooler"] = _linear(H, H, b) if c.pooler else 0
    parts["total"] = sum(parts.values())
    return parts


def ffn_fraction(config: EncoderConfig) -> float:
    """Share of one layer's weights that sit in its feed-forward block (about 2/3 when d_ff = 4H)."""
    check_type(config, "config", EncoderConfig)
    one = EncoderConfig(**{**config.__dict__, "num_layers": 1, "sharing": "none"})
    parts = encoder_parameters(one)
    return parts["feed-forward (all layers)"] / (parts["feed-forward (all layers)"]
                                                 + parts["attention (all layers)"])


#: the configurations of the BERT paper and of ALBERT's Table 1
PRESETS: dict[str, EncoderConfig] = {
    "BERT-base": EncoderConfig(),
    "BERT-large": EncoderConfig(d_model=1024, num_layers=24, d_ff=4096),
    "ALBERT-base": EncoderConfig(vocab_size=30000, d_embed=128, sharing="all"),
    "ALBERT-large": EncoderConfig(vocab_size=30000, d_model=1024, num_layers=24, d_ff=4096,
                                  d_embed=128, sharing="all"),
    "ALBERT-xlarge": EncoderConfig(vocab_size=30000, d_model=2048, num_layers=24, d_ff=8192,
                                   d_embed=128, sharing="all"),
    "ALBERT-xxlarge": EncoderConfig(vocab_size=30000, d_model=4096, num_layers=12, d_ff=16384,
                                    d_embed=128, sharing="all"),
}

#: parameter counts (millions) as printed in ALBERT's Table 1
PAPER_MILLIONS: dict[str, int] = {
    "BERT-base": 108, "BERT-large": 334, "ALBERT-base": 12, "ALBERT-large": 18,
    "ALBERT-xlarge": 60, "ALBERT-xxlarge": 235,
}
