"""The timeline of the book, from the first neural language model to GPT-3, and the script that
draws it for the introduction.

Each milestone is dated by its first public appearance: the arXiv preprint where there was one,
otherwise the conference (the NNLM at NIPS 2000, GloVe at EMNLP 2014) or the blog post and report
(GPT, GPT-2).
"""
import argparse
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from lmcourse.cli import output_file
from lmcourse.plots import plot_timeline


@dataclass(frozen=True)
class Milestone:
    when: date      # first public appearance
    label: str
    family: str     # a key of FAMILIES
    key: str        # its bibtex key in references.bib
    venue: str      # where it first appeared

    @property
    def year(self) -> float:
        """The date as a fractional year (2018.45 is mid-June 2018)."""
        start = date(self.when.year, 1, 1)
        return self.when.year + (self.when - start).days / 365.25


#: one colour per family of models (Okabe-Ito), the legend of the figure
FAMILIES = {"neural language model": "#000000", "word vectors": "#E69F00",
            "sequence to sequence and attention": "#56B4E9", "pretrained language models": "#D55E00"}

TIMELINE: list[Milestone] = [
    Milestone(date(2000, 11, 27), "Neural probabilistic LM", "neural language model",
              "Bengio2000", "NIPS 2000; journal version JMLR 2003"),
    Milestone(date(2013, 1, 16), "word2vec", "word vectors", "Mikolov2013", "arXiv 1301.3781"),
    Milestone(date(2014, 9, 1), "Bahdanau attention", "sequence to sequence and attention",
              "Bahdanau2015", "arXiv 1409.0473"),
    Milestone(date(2014, 9, 10), "seq2seq", "sequence to sequence and attention",
              "Sutskever2014", "arXiv 1409.3215"),
    Milestone(date(2014, 10, 25), "GloVe", "word vectors", "Pennington2014", "EMNLP 2014"),
    Milestone(date(2015, 8, 17), "Luong attention", "sequence to sequence and attention", "Luong2015",
              "arXiv 1508.04025"),
    Milestone(date(2017, 6, 12), "Transformer", "sequence to sequence and attention", "Vaswani2017",
              "arXiv 1706.03762"),
    Milestone(date(2018, 2, 15), "ELMo", "pretrained language models", "Peters2018", "arXiv 1802.05365"),
    Milestone(date(2018, 6, 11), "GPT", "pretrained language models", "Radford2018", "OpenAI report"),
    Milestone(date(2018, 10, 11), "BERT", "pretrained language models", "Devlin2019", "arXiv 1810.04805"),
    Milestone(date(2019, 2, 14), "GPT-2", "pretrained language models", "Radford2019", "OpenAI report"),
    Milestone(date(2019, 6, 19), "XLNet", "pretrained language models", "Yang2019", "arXiv 1906.08237"),
    Milestone(date(2019, 7, 26), "RoBERTa", "pretrained language models", "Liu2019", "arXiv 1907.11692"),
    Milestone(date(2019, 9, 26), "ALBERT", "pretrained language models", "Lan2020", "arXiv 1909.11942"),
    Milestone(date(2019, 10, 23), "T5", "pretrained language models", "Raffel2020", "arXiv 1910.10683"),
    Milestone(date(2020, 3, 23), "ELECTRA", "pretrained language models", "Clark2020", "arXiv 2003.10555"),
    Milestone(date(2020, 5, 28), "GPT-3", "pretrained language models", "Brown2020", "arXiv 2005.14165"),
]

#: the years the lower panel enlarges
BURST = (2017.0, 2020.75)


def draw_timeline():
    """Two panels on true time axes: 2000-2021 with every milestone, and the 2017-2020 burst
    enlarged. Returns the figure."""
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.4), height_ratios=(1, 1.15))
    burst = [m for m in TIMELINE if BURST[0] <= m.year <= BURST[1]]
    plot_timeline([(m.year, "" if m in burst else m.label, FAMILIES[m.family]) for m in TIMELINE],
                  ax=top, xlim=(1999.5, 2021.0), label_width=0.13)   # the burst's labels are below
    top.axvspan(*BURST, color="0.92", zorder=-1)
    top.text(sum(BURST) / 2, 0.35, "enlarged\nbelow", ha="center", va="bottom", fontsize=8, color="0.35")
    top.set_title("From the neural language model to GPT-3 (first public appearance)", fontsize=12)
    plot_timeline([(m.year, m.label, FAMILIES[m.family]) for m in burst], ax=bottom, xlim=BURST,
                  label_width=0.1)
    bottom.set_title(f"Enlarged: {len(burst)} milestones between {burst[0].when:%B %Y} and "
                     f"{burst[-1].when:%B %Y}", fontsize=11)
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=f) for f, c in FAMILIES.items()]
    fig.legend(handles=handles, loc="lower center", ncol=2, frameon=False, fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def main(path: str = "figures/timeline.png") -> Path:
    """Write the introduction's timeline figure (``python -m lmcourse.history``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = draw_timeline()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return out


def cli(argv: list[str] | None = None) -> int:
    """``python -m lmcourse.history [--out PATH]``: write the timeline figure and print where."""
    parser = argparse.ArgumentParser(prog="python -m lmcourse.history",
                                     description="Draw the introduction's timeline figure.")
    parser.add_argument("--out", type=output_file, default="figures/timeline.png",
                        help="the PNG file to write (default: %(default)s)")
    args = parser.parse_args(argv)
    print(main(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
