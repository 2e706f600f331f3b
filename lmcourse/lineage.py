"""The family tree of pretrained language models, from word2vec to GPT-3, as data and a figure.

Years are those of first public appearance (ELECTRA: its ICLR submission, September 2019)."""
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Patch

#: name -> (column, row, year, architecture, key idea); columns run left to right in time
MODELS: dict[str, tuple[int, float, int, str, str]] = {
    "word2vec (CBOW)": (0, 5.6, 2013, "static embedding", "predict a word from both sides"),
    "ELMo": (0, 3.6, 2018, "LSTM", "contextual word vectors"),
    "Transformer": (0, 1.6, 2017, "encoder-decoder", "attention only"),
    "GPT": (1, 0.6, 2018, "decoder", "pretrain LM, fine-tune all"),
    "Transformer-XL": (2, 5.6, 2019, "decoder", "segment recurrence, relative positions"),
    "BERT": (2, 3.6, 2018, "encoder", "masked LM + NSP"),
    "RoBERTa": (3, 7.0, 2019, "encoder", "no NSP, dynamic masks, 10x data"),
    "ALBERT": (3, 6.0, 2019, "encoder", "factorised, shared weights; SOP"),
    "XLNet": (3, 5.0, 2019, "permutation LM", "two streams, permuted order"),
    "ELECTRA": (3, 4.0, 2019, "encoder", "detect replaced tokens"),
    "DistilBERT": (3, 3.0, 2019, "encoder", "distilled: smaller, faster"),
    "Sentence-BERT": (3, 2.0, 2019, "encoder", "one vector per sentence"),
    "MASS / BART / T5": (3, 1.0, 2019, "encoder-decoder", "denoising seq2seq"),
    "GPT-2": (2, 0.0, 2019, "decoder", "1.5B, zero-shot"),
    "GPT-3": (3, -0.1, 2020, "decoder", "175B, in-context learning"),
}

#: (parent, child): the child builds on the parent. XLNet answers BERT's masking but is built on
#: Transformer-XL's left-to-right language model, so it descends from that
EDGES: list[tuple[str, str]] = [
    ("word2vec (CBOW)", "BERT"), ("ELMo", "BERT"), ("Transformer", "GPT"), ("GPT", "BERT"),
    ("Transformer", "BERT"), ("Transformer", "Transformer-XL"), ("Transformer-XL", "XLNet"),
    *(("BERT", child) for child in ("RoBERTa", "ALBERT", "ELECTRA", "DistilBERT",
                                    "Sentence-BERT", "MASS / BART / T5")),
    ("GPT", "GPT-2"), ("GPT-2", "GPT-3"),
]

_COLOURS = {"static embedding": "#fde0c5", "LSTM": "#d9f0d3", "encoder": "#c6dbef",
            "decoder": "#fcbba1", "permutation LM": "#fdfd96", "encoder-decoder": "#dadaeb"}
_XSCALE, _HALF_WIDTH = 3.5, 1.4


def draw_lineage(ax=None):
    """Boxes for :data:`MODELS` (name, year, key idea) coloured by architecture; arrows for :data:`EDGES`."""
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 6.5))
    for name, (col, row, year, kind, idea) in MODELS.items():
        x = col * _XSCALE
        ax.add_patch(FancyBboxPatch((x - _HALF_WIDTH, row - 0.34), 2 * _HALF_WIDTH, 0.68,
                                    boxstyle="round,pad=0.04", fc=_COLOURS[kind], ec="0.3"))
        ax.text(x, row + 0.1, f"{name} ({year})", ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x, row - 0.16, idea, ha="center", va="center", fontsize=7.5)
    for parent, child in EDGES:
        (c0, r0, *_), (c1, r1, *_) = MODELS[parent], MODELS[child]
        ax.annotate("", xy=(c1 * _XSCALE - _HALF_WIDTH - 0.05, r1),
                    xytext=(c0 * _XSCALE + _HALF_WIDTH + 0.05, r0),
                    arrowprops=dict(arrowstyle="->", color="0.4", lw=1, shrinkA=0, shrinkB=0))
    ax.legend(handles=[Patch(fc=c, ec="0.3", label=k) for k, c in _COLOURS.items()],
              loc="upper left", fontsize=8, title="architecture (XLNet: objective)", title_fontsize=8,
              frameon=False, ncol=2)
    ax.set_xlim(-_HALF_WIDTH - 0.2, 3 * _XSCALE + _HALF_WIDTH + 0.2)
    ax.set_ylim(-0.6, 7.5)
    ax.axis("off")
    ax.set_title("Where BERT came from, and where its ideas went")
    return ax
