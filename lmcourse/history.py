"""The book's history as data, and the introduction's two figures and tables drawn from it.

``TIMELINE``: the milestones from the LSTM to GPT-3, each dated by its first public appearance
(the day its first public version was submitted, as an arXiv preprint, an ICLR submission on
OpenReview or a technical report, or presented, at a conference or with a report and blog post),
with the chapter that builds it. ``SCALE``: the models among them whose papers give both their
parameter count and their training tokens, with where each paper gives them.

``python -m lmcourse.history`` redraws ``figures/timeline.png`` and ``figures/scale.png``;
``timeline_table()`` and ``scale_table()`` write the tables that the introduction prints.
"""
import argparse
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from lmcourse.cli import output_file
from lmcourse.plots import plot_timeline

#: the notebook of each chapter, for the links of the tables
CHAPTER_FILES = {1: "chapters/01_pretraining.ipynb", 2: "chapters/02_language_models.ipynb",
                 3: "chapters/03_word_embeddings.ipynb", 4: "chapters/04_rnn_lstm.ipynb",
                 5: "chapters/05_elmo.ipynb", 6: "chapters/06_attention.ipynb",
                 7: "chapters/07_transformer.ipynb", 8: "chapters/08_gpt.ipynb",
                 9: "chapters/09_bert.ipynb", 10: "chapters/10_after_bert.ipynb"}

#: one colour per family of models, for markers, labels and legend: darker shades of Okabe-Ito's
#: colours, at least 5:1 against white (WCAG asks 3:1 of graphics and 4.5:1 of text)
FAMILIES = {"recurrent networks": "#007F5D", "neural language model": "#000000",
            "word vectors": "#946700", "sequence to sequence and attention": "#1674A9",
            "pretrained language models": "#B65000"}
#: and one marker shape per family, so that no reader has to tell the families apart by colour
MARKERS = {"recurrent networks": "s", "neural language model": "D", "word vectors": "^",
           "sequence to sequence and attention": "v", "pretrained language models": "o"}


@dataclass(frozen=True)
class Milestone:
    when: date      # first public appearance
    label: str
    family: str     # a key of FAMILIES
    key: str        # the bibtex key (references.bib) of what appeared first
    venue: str      # where it appeared first
    chapter: int    # the chapter that builds it
    built: str      # what that chapter builds of it
    later: str = ""  # the bibtex key of a later version the book also cites
    page: str = ""   # the section notebook of a split chapter that builds it, where that is not the first page

    @property
    def file(self) -> str:
        """The notebook the introduction's table links to: ``page``, or the chapter's first page."""
        return self.page or CHAPTER_FILES[self.chapter]

    @property
    def year(self) -> float:
        """The date as a fractional year (2018.45 is mid-June 2018)."""
        start = date(self.when.year, 1, 1)
        return self.when.year + (self.when - start).days / 365.25


_SEQ, _PLM = "sequence to sequence and attention", "pretrained language models"
_ICLR = "ICLR 2020 submission on OpenReview (deadline 25 September 2019); "
TIMELINE: list[Milestone] = [
    Milestone(date(1995, 8, 23), "LSTM", "recurrent networks", "Hochreiter1995",
              "technical report FKI-207-95, TU Munich; journal version 1997", 4,
              "LSTM, GRU and RNN cells", later="Hochreiter1997"),
    Milestone(date(2000, 11, 27), "Neural probabilistic LM", "neural language model", "Bengio2000",
              "NIPS 2000 (27 November to 2 December, dated by its first day); journal version 2003", 2,
              "Bengio's network", later="Bengio2003"),
    Milestone(date(2013, 1, 16), "word2vec", "word vectors", "Mikolov2013a", "arXiv 1301.3781", 3,
              "skip-gram and CBOW"),
    Milestone(date(2014, 9, 1), "Bahdanau attention", _SEQ, "Bahdanau2015", "arXiv 1409.0473", 6,
              "an encoder-decoder with attention"),
    Milestone(date(2014, 9, 10), "seq2seq", _SEQ, "Sutskever2014", "arXiv 1409.3215", 6,
              "an encoder-decoder without attention"),
    Milestone(date(2014, 10, 25), "GloVe", "word vectors", "Pennington2014",
              "EMNLP 2014 (25 to 29 October, dated by its first day)", 3,
              "GloVe"),
    Milestone(date(2015, 8, 17), "Luong attention", _SEQ, "Luong2015", "arXiv 1508.04025", 6,
              "dot, general and concat scores"),
    Milestone(date(2015, 11, 4), "Dai & Le", _PLM, "Dai2015", "arXiv 1511.01432", 5,
              "fine-tuning a pretrained LSTM language model (the history: chapter 1)",
              page="chapters/05b_elmo_in_use.ipynb"),
    Milestone(date(2017, 6, 12), "Transformer", _SEQ, "Vaswani2017", "arXiv 1706.03762", 7,
              "an encoder-decoder Transformer"),
    Milestone(date(2017, 10, 27), "ELMo", _PLM, "Peters2018",
              "ICLR 2018 submission on OpenReview (deadline 27 October 2017), withdrawn; arXiv 1802.05365 in "
              "February 2018, NAACL 2018", 5,
              "a biLM and the scalar mix"),
    Milestone(date(2018, 1, 18), "ULMFiT", _PLM, "Howard2018", "arXiv 1801.06146", 5,
              "fine-tuning a pretrained LSTM language model (the history: chapter 1)",
              page="chapters/05b_elmo_in_use.ipynb"),
    Milestone(date(2018, 6, 11), "GPT", _PLM, "Radford2018", "OpenAI report and blog post", 8,
              "a small GPT, pretrained and fine-tuned"),
    Milestone(date(2018, 10, 11), "BERT", _PLM, "Devlin2019", "arXiv 1810.04805", 9,
              "BERT pretraining and fine-tuning"),
    Milestone(date(2019, 2, 14), "GPT-2", _PLM, "Radford2019", "OpenAI report and blog post", 8,
              "GPT-2's architecture and a loader for its weights"),
    Milestone(date(2019, 6, 19), "XLNet", _PLM, "Yang2019", "arXiv 1906.08237", 10,
              "a two-stream attention layer"),
    Milestone(date(2019, 7, 26), "RoBERTa", _PLM, "Liu2019", "arXiv 1907.11692", 10,
              "dynamic masking"),
    Milestone(date(2019, 9, 25), "ALBERT", _PLM, "Lan2020", _ICLR + "arXiv 1909.11942 a day later",
              10, "ALBERT's parameter count (factorised embeddings, shared layers); sentence-order pairs"),
    Milestone(date(2019, 9, 25), "ELECTRA", _PLM, "Clark2020", _ICLR + "arXiv 2003.10555 in March 2020",
              10, "replaced-token detection"),
    Milestone(date(2019, 10, 23), "T5", _PLM, "Raffel2020", "arXiv 1910.10683", 10,
              "span corruption"),
    Milestone(date(2020, 5, 28), "GPT-3", _PLM, "Brown2020", "arXiv 2005.14165", 10,
              "in-context learning"),
]

#: the years the upper panel spans, and the years the lower panel enlarges
SPAN = (1994.5, 2021.0)
BURST = (2017.0, 2020.75)


@dataclass(frozen=True)
class ModelScale:
    """One model's size, as its paper gives it. Training tokens are the tokens the pretraining
    reads: steps x sequences per batch x tokens per sequence where the paper gives them, otherwise
    corpus size x passes over it. A token is the model's own unit (word, WordPiece, SentencePiece or
    BPE piece)."""
    label: str
    milestone: str    # the label of its milestone in TIMELINE
    family: str       # a key of FAMILIES
    key: str          # its paper's bibtex key
    parameters: int
    tokens: int
    source: str       # where its paper gives the numbers (section, table) and how they combine
    bound: str = ""   # "at most" (sequences of at most a stated length) or "at least" (passes not given)


SCALE: list[ModelScale] = [
    ModelScale("NNLM, AP News", "Neural probabilistic LM", "neural language model", "Bengio2003",
               parameters=17_964 * (1 + 6 * 100 + 60) + 60 * (1 + 5 * 100),
               tokens=13_994_528 * 5,
               source="parameters: Section 2's count V(1 + nm + h) + h(1 + (n - 1)m) with the AP News "
                      "model of Section 3.2 and Table 2 (V = 17,964 words, n = 6, m = 100, h = 60); "
                      "tokens: Section 4's 13,994,528 training words, 5 epochs (Section 4.2)"),
    ModelScale("word2vec skip-gram", "word2vec", "word vectors", "Mikolov2013a",
               parameters=(2 * 1_000_000 - 1) * 1000,
               tokens=6_000_000_000 * 1, bound="at least",
               source="parameters: a 1,000-dimensional input vector per word and one per inner node "
                      "of the hierarchical softmax's binary tree (Section 2.1), for the 1 million "
                      "words of Section 4.2 (Table 6: 1,000 dimensions); tokens: Table 6's 6 billion "
                      "training words, read at least once (the paper does not state the epochs of Table 6's "
                      "runs; its Table 5 compares one and three epochs on smaller parts of the Google News "
                      "data)"),
    ModelScale("GloVe", "GloVe", "word vectors", "Pennington2014",
               parameters=2 * 400_000 * (300 + 1),
               tokens=6_000_000_000 * 1,
               source="parameters: two 300-dimensional vectors and two biases per word (Section 3; "
                      "Table 2: 300 dimensions) for the 400,000 words of Section 4.2; tokens: the "
                      "6-billion-token corpus of Section 4.2, read once to count co-occurrences "
                      "(training then iterates over the counts, not the text)"),
    ModelScale("BERT-base", "BERT", _PLM, "Devlin2019",
               parameters=110_000_000,
               tokens=1_000_000 * 256 * (9 * 128 + 1 * 512) // 10, bound="at most",
               source="parameters: Section 3 (110M); tokens: Appendix A.2, 1,000,000 steps of 256 "
                      "sequences of at most 128 tokens for 90% of the steps and at most 512 for the rest "
                      "(Appendix A.1 samples the two segments so that together they are at most that long; "
                      "A.2's '128,000 tokens/batch' counts every step at 512 tokens, which would give "
                      "128 billion)"),
    ModelScale("BERT-large", "BERT", _PLM, "Devlin2019",
               parameters=340_000_000,
               tokens=1_000_000 * 256 * (9 * 128 + 1 * 512) // 10, bound="at most",
               source="parameters: Section 3 (340M); tokens: as for BERT-base (Appendix A.2)"),
    ModelScale("RoBERTa", "RoBERTa", _PLM, "Liu2019",
               parameters=355_000_000,
               tokens=500_000 * 8_192 * 512, bound="at most",
               source="parameters: Section 5 (355M); tokens: Table 4, 500K steps of 8K sequences "
                      "(8,192, as Section 4.3's equal-cost batches imply) of at most 512 tokens "
                      "(Section 4.2's full-sentence inputs; Section 3.1 trains only with full-length "
                      "sequences, so the bound is close)"),
    ModelScale("ALBERT-xxlarge", "ALBERT", _PLM, "Lan2020",
               parameters=235_000_000,
               tokens=1_500_000 * 4_096 * 512, bound="at most",
               source="parameters: Table 1 (235M; Section 3.2 writes 233M); tokens: the 1.5M steps of "
                      "the best model (Tables 9 and 10) with Section 4.1's batches of 4,096 sequences "
                      "of at most 512 tokens (10% are shorter)"),
    ModelScale("ELECTRA-Large", "ELECTRA", _PLM, "Clark2020",
               parameters=335_000_000,
               tokens=1_750_000 * 2_048 * 512, bound="at most",
               source="parameters: Table 2 (335M); tokens: Section 3.4's ELECTRA-1.75M, 1.75M steps "
                      "of batches of 2,048 sequences, of at most 512 tokens (Table 6's maximum "
                      "sequence length)"),
    ModelScale("T5-11B", "T5", _PLM, "Raffel2020",
               parameters=11_000_000_000,
               tokens=1_000_000 * 2**11 * 512,
               source="parameters: Section 3.7 (11 billion); tokens: Section 3.7, 1 million steps "
                      "of 2,048 (2^11) sequences of 512 tokens, 'about 1 trillion pre-training tokens'"),
    ModelScale("GPT-3", "GPT-3", _PLM, "Brown2020",
               parameters=175_000_000_000,
               tokens=300_000_000_000,
               source="Table 2.1: 175.0B parameters; all models trained for 300 billion tokens"),
]

#: the axes of the scale figure: parameters, training tokens
SCALE_LIMITS = ((1e6, 1e12), (1e7, 1e13))


def contrast(colour: str, background: str = "#FFFFFF") -> float:
    """WCAG 2 contrast ratio of two colours given as ``#RRGGBB`` (1 to 21)."""
    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    light, dark = sorted((luminance(colour), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _colour_labels(ax, family_of: dict[str, str]) -> None:
    """Draw each milestone's label in its family's colour."""
    for text in ax.texts:
        if text.get_text() in family_of:
            text.set_color(FAMILIES[family_of[text.get_text()]])


def _legend(fig, families, extra=(), **kwargs):
    import matplotlib.pyplot as plt
    handles = [plt.Line2D([], [], marker=MARKERS[f], ls="", color=FAMILIES[f], label=f) for f in families]
    return fig.legend(handles=handles + list(extra), frameon=False, fontsize=10, **kwargs)


def draw_timeline():
    """Two panels on true time axes: 1995-2021 with every milestone, and the 2017-2020 burst
    enlarged. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 8.2), height_ratios=(1.3, 1.2))
    burst = [m for m in TIMELINE if BURST[0] <= m.year <= BURST[1]]
    family_of = {m.label: m.family for m in TIMELINE}
    plot_timeline([(m.year, "" if m in burst else m.label, FAMILIES[m.family], MARKERS[m.family])
                   for m in TIMELINE],
                  ax=top, xlim=SPAN, label_width=0.14)   # the burst's labels are below
    _colour_labels(top, family_of)
    for text in top.texts:                     # a 26-year axis: name every fifth year
        if text.get_text().isdigit() and int(text.get_text()) % 5:
            text.set_visible(False)
    low, high = top.get_ylim()
    top.set_ylim(low - 0.6, high)
    # the enlarged years: a grey box round their dots and year labels, below every label
    top.add_patch(Rectangle((BURST[0], low - 0.55), BURST[1] - BURST[0], 0.95 - low,
                            color="0.92", zorder=-1, lw=0))
    top.text(sum(BURST) / 2, low - 0.45, "enlarged below", ha="center", va="bottom", fontsize=8,
             color="0.3")
    top.set_title(f"From the {TIMELINE[0].label} to {TIMELINE[-1].label} (first public appearance)",
                  fontsize=12)
    plot_timeline([(m.year, m.label, FAMILIES[m.family], MARKERS[m.family]) for m in burst], ax=bottom, xlim=BURST,
                  label_width=0.1)
    _colour_labels(bottom, family_of)
    bottom.set_title(f"Enlarged: {len(burst)} milestones between {burst[0].when:%B %Y} and "
                     f"{burst[-1].when:%B %Y}", fontsize=11)
    _legend(fig, FAMILIES, loc="lower center", ncol=3)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


#: where each label of the scale figure goes beside its point (default: right)
_SCALE_LABEL_SIDE = {"GloVe": "left", "BERT-base": "left", "ALBERT-xxlarge": "left", "ELECTRA-Large": "left",
                     "GPT-3": "left"}
#: where a bound's arrow points, and how far it reaches, as a factor of the value
_BOUND_ARROW = {"at most": 0.3, "at least": 1 / 0.3}


def draw_scale():
    """The models of SCALE on log axes of parameters and training tokens, with the line where
    the two are equal; a token count that is an upper bound carries an arrow pointing down, a lower
    bound one pointing up.
    Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np
    fig, ax = plt.subplots(figsize=(7.5, 6.2))
    (x0, x1), (y0, y1) = SCALE_LIMITS
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.plot([x0, x1], [x0, x1], ls=":", color="0.45", lw=1, zorder=1)
    for model in SCALE:
        colour = FAMILIES[model.family]
        ax.plot(model.parameters, model.tokens, MARKERS[model.family], ms=8, color=colour, zorder=3)
        if model.bound:
            ax.annotate("", (model.parameters, model.tokens * _BOUND_ARROW[model.bound]),
                        (model.parameters, model.tokens),
                        arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.2, shrinkA=5, shrinkB=0), zorder=2)
        left = _SCALE_LABEL_SIDE.get(model.label) == "left"
        ax.annotate(model.label, (model.parameters, model.tokens), xytext=(-8 if left else 8, 0),
                    textcoords="offset points", ha="right" if left else "left", va="center",
                    fontsize=10, color=colour, zorder=4)
    ax.set_xlabel("parameters")
    ax.set_ylabel("training tokens (tokens read in pretraining)")
    ax.grid(True, which="major", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title("Size and training tokens, computed from the papers", fontsize=12)
    bounds = [plt.Line2D([], [], marker=r"$\downarrow$", ls="", ms=10, color="0.3",
                         label="at most: the paper gives the longest sequence"),
              plt.Line2D([], [], marker=r"$\uparrow$", ls="", ms=10, color="0.3",
                         label="at least: the paper does not give the passes")]
    _legend(fig, [f for f in FAMILIES if any(m.family == f for m in SCALE)], extra=bounds,
            loc="lower center", ncol=2)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    # the line's name along it, just below it, where no point lies: its angle on the page, once laid out
    (ax0, ay0), (ax1, ay1) = ax.transData.transform([(x0, x0), (x1, x1)])
    ax.annotate("as many tokens as parameters", (1.5e8, 1.5e8), xytext=(2, -2), textcoords="offset points",
                rotation=np.degrees(np.arctan2(ay1 - ay0, ax1 - ax0)), rotation_mode="anchor",
                ha="left", va="top", fontsize=8, color="0.3")
    return fig


def _link(m: Milestone) -> str:
    return f"[chapter {m.chapter}]({m.file})"


def _cite(key: str) -> str:
    return f"{{footcite:p}}`{key}`"


def timeline_table() -> str:
    """The introduction's table of milestones (Markdown): date, where it appeared, the chapter."""
    rows = ["| First appeared | Milestone | Where | Built in |", "|---|---|---|---|"]
    for m in TIMELINE:
        venue = m.venue + (f" {_cite(m.later)}" if m.later else "")
        rows.append(f"| {m.when.day} {m.when:%b %Y} | {m.label} {_cite(m.key)} | {venue} | "
                    f"{_link(m)}: {m.built} |")
    return "\n".join(rows) + "\n"


def in_words(n: int) -> str:
    """A large count in words, to three significant figures: 11904264 -> '11.9 million'."""
    for value, name in ((10**12, "trillion"), (10**9, "billion"), (10**6, "million")):
        if n >= value:
            return f"{n / value:.3g} {name}"
    return f"{n:,}"


def scale_table() -> str:
    """The introduction's table of the scale figure's numbers and their sources (Markdown)."""
    rows = ["| Model | Parameters | Training tokens | Where the paper gives them |", "|---|---|---|---|"]
    for m in SCALE:
        tokens = f"{m.bound} {in_words(m.tokens)}".strip()
        rows.append(f"| {m.label} {_cite(m.key)} | {in_words(m.parameters)} | {tokens} | "
                    f"{m.source} |")
    return "\n".join(rows) + "\n"


def _save(fig, path: str) -> Path:
    import matplotlib.pyplot as plt
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return out


def main(path: str = "figures/timeline.png", scale_path: str = "figures/scale.png") -> list[Path]:
    """Write the introduction's two figures (``python -m lmcourse.history``)."""
    import matplotlib
    matplotlib.use("Agg")
    return [_save(draw_timeline(), path), _save(draw_scale(), scale_path)]


def cli(argv: list[str] | None = None) -> int:
    """``python -m lmcourse.history [--out PATH] [--scale-out PATH]``: write the figures and print
    where."""
    parser = argparse.ArgumentParser(prog="python -m lmcourse.history",
                                     description="Draw the introduction's timeline and scale figures.")
    parser.add_argument("--out", type=output_file, default="figures/timeline.png",
                        help="the timeline's PNG file (default: %(default)s)")
    parser.add_argument("--scale-out", type=output_file, default="figures/scale.png",
                        help="the scale figure's PNG file (default: %(default)s)")
    args = parser.parse_args(argv)
    for path in main(args.out, args.scale_out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
