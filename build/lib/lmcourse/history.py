"""The timeline of the book: from the neural language model of 2003 to GPT-3 (dates of first
public appearance, usually the arXiv preprint), and the script that draws it for the introduction."""
from pathlib import Path

from lmcourse.plots import plot_timeline

#: (year, milestone, bibtex key in references.bib)
TIMELINE: list[tuple[float, str, str]] = [
    (2003, "Neural probabilistic LM\n(Bengio et al.)", "Bengio2003"),
    (2013, "word2vec\n(Mikolov et al.)", "Mikolov2013"),
    (2014, "GloVe\n(Pennington et al.)", "Pennington2014"),
    (2014.4, "seq2seq\n(Sutskever et al.)", "Sutskever2014"),
    (2014.7, "Attention for NMT\n(Bahdanau et al.)", "Bahdanau2015"),
    (2015.6, "Luong attention", "Luong2015"),
    (2017.5, "Transformer\n(Vaswani et al.)", "Vaswani2017"),
    (2018.1, "ELMo\n(Peters et al.)", "Peters2018"),
    (2018.45, "GPT\n(Radford et al.)", "Radford2018"),
    (2018.8, "BERT\n(Devlin et al.)", "Devlin2019"),
    (2019.1, "GPT-2", "Radford2019"),
    (2019.45, "XLNet", "Yang2019"),
    (2019.55, "RoBERTa", "Liu2019"),
    (2019.75, "ALBERT", "Lan2020"),
    (2019.85, "T5", "Raffel2020"),
    (2020.2, "ELECTRA", "Clark2020"),
    (2020.4, "GPT-3", "Brown2020"),
]


def draw_timeline(ax=None):
    """The milestones of :data:`TIMELINE` on one axis."""
    return plot_timeline([(year, label) for year, label, _ in TIMELINE],
                         title="From neural language models to GPT-3", ax=ax)


def main(path: str = "figures/timeline.png") -> Path:
    """Write the introduction's timeline figure (``python -m lmcourse.history``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = draw_timeline()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(out, dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(ax.figure)
    return out


if __name__ == "__main__":
    print(main())
