"""The introduction's history: the timeline and scale data are well formed and cited, their figures
draw every entry where it belongs with legible labels, and what intro.md says about them (its
tables, counts, gaps, ratios and the machines that reproduce the book) follows from the data."""
import json
import re
from datetime import date
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.path import Path as Outline  # noqa: E402

from lmcourse.history import (  # noqa: E402
    BURST,
    FAMILIES,
    MARKERS,
    SCALE,
    SCALE_LIMITS,
    SPAN,
    TIMELINE,
    contrast,
    draw_scale,
    draw_timeline,
    in_words,
    main,
    scale_table,
    timeline_table,
)

ROOT = Path(__file__).resolve().parent.parent
INTRO = (ROOT / "intro.md").read_text(encoding="utf-8")
PROSE = " ".join(INTRO.split())          # line breaks do not matter to a sentence
BIB_KEYS = set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(encoding="utf-8"),
                          re.MULTILINE))
BURST_MILESTONES = [m for m in TIMELINE if BURST[0] <= m.year <= BURST[1]]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def milestone(label: str):
    return next(m for m in TIMELINE if m.label == label)


def model(label: str):
    return next(m for m in SCALE if m.label == label)


def labels_of(ax, names) -> list:
    return [text for text in ax.texts if text.get_text() in names]


def overlapping(texts, renderer) -> list[tuple[str, str]]:
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def rotated_footprint(text, renderer) -> Outline:
    """The outline of a text rotated about its anchor (its bounding box is axis-aligned)."""
    angle = text.get_rotation()
    text.set_rotation(0)
    box = text.get_window_extent(renderer)
    text.set_rotation(angle)
    anchor = np.array([box.x0, box.y1])                   # ha="left", va="top"
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    corners = [(box.x0, box.y1), (box.x1, box.y1), (box.x1, box.y0), (box.x0, box.y0), (box.x0, box.y1)]
    return Outline([anchor + np.array([[c, -s], [s, c]]) @ (np.array(p) - anchor) for p in corners], closed=True)


def test_contrast_and_in_words():
    assert contrast("#000000") == pytest.approx(21) and contrast("#FFFFFF") == pytest.approx(1)
    assert contrast("#56B4E9") < 3 < 4.5 < contrast("#1674A9")
    assert [in_words(n) for n in (11_904_264, 6 * 10**9, 2_097_152_000_000, 1234)] == [
        "11.9 million", "6 billion", "2.1 trillion", "1,234"]


def test_timeline_is_dated_ordered_cited_and_built():
    dates = [m.when for m in TIMELINE]
    assert dates == sorted(dates) and dates[0] == date(1995, 8, 23) and dates[-1] == date(2020, 5, 28)
    assert len({m.label for m in TIMELINE}) == len(TIMELINE)
    assert {m.family for m in TIMELINE} == set(FAMILIES)
    assert all(contrast(colour) >= 4.5 for colour in FAMILIES.values())   # markers too
    assert set(MARKERS) == set(FAMILIES) and len(set(MARKERS.values())) == len(MARKERS)  # not by colour alone
    for m in TIMELINE:
        assert m.key in BIB_KEYS and (not m.later or m.later in BIB_KEYS), m.label
        chapter = (ROOT / m.file).read_text(encoding="utf-8")
        assert m.built and any(f"`{key}`" in chapter for key in (m.key, m.later) if key), \
            f"{m.label}: {m.file} does not cite it"
        arxiv = re.fullmatch(r"arXiv (\d\d)(\d\d)\.\d{4,5}", m.venue)
        if arxiv:                                  # dated by the preprint: its number names the month
            assert (m.when.year, m.when.month) == (2000 + int(arxiv[1]), int(arxiv[2])), m.label
    assert SPAN[0] < TIMELINE[0].year and TIMELINE[-1].year < SPAN[1]


def test_timeline_is_drawn_to_scale_with_legible_labels_clear_of_the_box(tmp_path):
    fig = draw_timeline()
    top, bottom = fig.axes
    dots = lambda ax: sorted(line.get_xdata()[0] for line in ax.lines  # noqa: E731
                             if line.get_marker() in MARKERS.values())
    assert dots(top) == pytest.approx(sorted(m.year for m in TIMELINE))       # every milestone, at its date
    assert dots(bottom) == pytest.approx(sorted(m.year for m in BURST_MILESTONES))
    assert top.get_xlim() == SPAN and bottom.get_xlim() == BURST
    names = {m.label for m in TIMELINE}
    drawn = labels_of(top, names) + labels_of(bottom, names)
    assert sorted(t.get_text() for t in drawn) == sorted(names)               # each label once
    assert all(contrast(to_hex(t.get_color()).upper()) >= 4.5 for t in drawn)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in (top, bottom):
        assert not overlapping(labels_of(ax, names), renderer)
    box = next(p for p in top.patches if isinstance(p, Rectangle)).get_window_extent(renderer)
    assert not [t.get_text() for t in labels_of(top, names) if box.overlaps(t.get_window_extent(renderer))]
    written = main(str(tmp_path / "t.png"), str(tmp_path / "s.png"))
    assert [p.name for p in written] == ["t.png", "s.png"] and all(p.stat().st_size > 10_000 for p in written)


def test_scale_data_are_well_formed_and_cited():
    (x0, x1), (y0, y1) = SCALE_LIMITS
    assert len({m.label for m in SCALE}) == len(SCALE)
    assert [milestone(m.milestone).when for m in SCALE] == sorted(milestone(m.milestone).when for m in SCALE)
    for m in SCALE:
        first = milestone(m.milestone)
        assert m.key in BIB_KEYS and m.key in (first.key, first.later) and m.family == first.family
        assert isinstance(m.parameters, int) and isinstance(m.tokens, int)
        assert x0 < m.parameters < x1 and y0 < m.tokens < y1, m.label
        assert re.search(r"\b(Section|Table|Appendix) ", m.source), m.label
    # the papers' own round figures
    assert model("T5-11B").tokens == pytest.approx(1e12, rel=0.05)             # "about 1 trillion"
    assert model("GPT-3").tokens == 300 * 10**9 and model("NNLM, AP News").tokens == 13_994_528 * 5


def test_scale_figure_places_every_model_with_legible_labels():
    fig = draw_scale()
    ax = fig.axes[0]
    points = sorted((line.get_xdata()[0], line.get_ydata()[0], line.get_marker()) for line in ax.lines
                    if line.get_marker() in MARKERS.values())
    assert points == sorted((m.parameters, m.tokens, MARKERS[m.family]) for m in SCALE)
    arrows = sorted((a.xy, a.xyann) for a in ax.texts if not a.get_text())      # bounds point away
    factor = {"at most": 0.3, "at least": 1 / 0.3}
    assert arrows == sorted(((m.parameters, m.tokens * factor[m.bound]), (m.parameters, m.tokens)) for m in SCALE
                            if m.bound)
    assert [m.label for m in SCALE if m.bound == "at most"] == ["BERT-base", "BERT-large", "RoBERTa",
                                                                "ALBERT-xxlarge", "ELECTRA-Large"]
    assert [m.label for m in SCALE if m.bound == "at least"] == ["word2vec skip-gram"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert (ax.get_xlim(), ax.get_ylim()) == SCALE_LIMITS
    labels = labels_of(ax, {m.label for m in SCALE})
    assert len(labels) == len(SCALE)
    assert all(contrast(to_hex(t.get_color()).upper()) >= 4.5 for t in labels)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert not overlapping(labels, renderer)
    line_label = next(t for t in ax.texts if t.get_text() == "as many tokens as parameters")
    assert 30 < line_label.get_rotation() < 40 and line_label.get_rotation_mode() == "anchor"
    footprint = rotated_footprint(line_label, renderer)       # along the dotted line, clear of every label
    assert not [t.get_text() for t in labels if footprint.intersects_bbox(t.get_window_extent(renderer))]


def test_the_introduction_prints_the_tables_and_refers_to_both_figures():
    assert timeline_table() in INTRO, "intro.md's milestone table is out of date: paste timeline_table()"
    assert scale_table() in INTRO, "intro.md's scale table is out of date: paste scale_table()"
    for name in ("fig-timeline", "fig-scale"):
        assert f":name: {name}" in INTRO and f"{{numref}}`{name}`" in INTRO
    alt = re.search(r"figures/scale\.png\n:name: fig-scale\n:alt: ([^\n]+)", INTRO)[1]
    for m in SCALE:                                 # the alt text quotes the data
        assert in_words(m.tokens) in alt and in_words(m.parameters).split()[0] in alt, m.label
        shared = sum(in_words(other.tokens) == in_words(m.tokens) for other in SCALE) > 1
        for bound in ("at most", "at least"):
            if m.bound == bound or not shared:
                assert (f"{bound} {in_words(m.tokens)}" in alt) == (m.bound == bound), m.label


def test_the_introductions_counts_gaps_and_ratios_follow_from_the_data():
    first, last = BURST_MILESTONES[0].when, BURST_MILESTONES[-1].when
    assert len(BURST_MILESTONES) == 12 and "Twelve milestones fall between June 2017 and May 2020" in PROSE
    assert (f"{first:%B %Y}", f"{last:%B %Y}") == ("June 2017", "May 2020")
    bert, t5 = milestone("BERT").when, milestone("T5").when
    assert sum(bert <= m.when <= t5 for m in TIMELINE) == 7 and 365 < (t5 - bert).days < 365 + 31
    assert "seven of them in just over a year, from BERT (October 2018) to T5 (October 2019)" in PROSE
    lstm, nnlm, word2vec = (milestone(x).when for x in ("LSTM", "Neural probabilistic LM", "word2vec"))
    assert (nnlm - lstm).days // 365 == 5 and (word2vec - nnlm).days // 365 == 12
    assert "Five years pass between the LSTM and the neural probabilistic language model, and twelve more" in PROSE
    bahdanau, seq2seq, glove = (milestone(x).when for x in ("Bahdanau attention", "seq2seq", "GloVe"))
    assert (seq2seq - bahdanau).days == 9 and 7.5 < (glove - bahdanau).days / 7 < 8
    assert "attention for translation appeared nine days before Sutskever and colleagues' sequence-to-sequence" in PROSE
    assert "and nearly eight weeks before GloVe" in PROSE
    roberta, bert_large, gpt3 = model("RoBERTa"), model("BERT-large"), model("GPT-3")
    assert 45 < roberta.tokens / bert_large.tokens < 55 and "about fifty times as many tokens" in PROSE
    assert 450 < gpt3.parameters / roberta.parameters < 550 and "about 500 times RoBERTa's parameters" in PROSE
    assert round(roberta.tokens / gpt3.tokens) == 7 and "a seventh of its tokens" in PROSE
    electra = model("ELECTRA-Large")
    assert abs(electra.parameters / bert_large.parameters - 1) < 0.05 and 0.8 < electra.tokens / roberta.tokens < 1
    assert "ELECTRA-Large, of BERT-large's size too, read nearly as many as RoBERTa" in PROSE
    glove = model("GloVe")
    assert round(glove.tokens / glove.parameters) == 25 and "about 25 for GloVe" in PROSE
    assert all(5000 < m.tokens / m.parameters < 6000 for m in (roberta, electra))
    assert model("ALBERT-xxlarge").tokens / model("ALBERT-xxlarge").parameters > 13000
    assert "5,000 to 6,000 for ELECTRA-Large and RoBERTa and over 13,000 for ALBERT-xxlarge" in PROSE
    albert = model("ALBERT-xxlarge")
    assert albert.parameters < bert_large.parameters and albert.tokens > roberta.tokens
    assert "ALBERT-xxlarge, with fewer parameters than BERT-large, read more still" in PROSE
    t5 = model("T5-11B")
    assert 50 < t5.tokens / t5.parameters < 150 and gpt3.tokens / gpt3.parameters < 2
    assert "T5-11B read about a hundred tokens per parameter and GPT-3 under two" in PROSE
    assert all(m.tokens / m.parameters < 10 for m in SCALE[:2]) and 100 < bert_large.tokens / bert_large.parameters
    assert "a few tokens per parameter for the NNLM and word2vec, about 25 for GloVe, over a hundred for BERT" in PROSE
    assert f"word2vec's {in_words(model('word2vec skip-gram').parameters)} parameters" in PROSE


def test_the_introduction_names_exactly_the_fingerprinted_machines():
    record = json.loads((ROOT / "tests/data/numerics_fingerprints.json").read_text(encoding="utf-8"))
    expected = (record["expected"]["torch"], record["expected"]["numpy/scipy"])
    reproducing = [r for r in record["recorded"] if r["settings"] == "reference" and r["threads"] == 1
                   and (r["torch"], r["numpy/scipy"]) == expected]
    assert all(r["cpu"].startswith("AMD EPYC") for r in record["recorded"])
    zens = sorted({re.search(r"Zen \d+", r["cpu"])[0] for r in reproducing}, key=lambda z: int(z[4:]))
    assert zens == ["Zen 1", "Zen 2", "Zen 5"]
    assert f"AMD EPYC processors of the {', '.join(zens[:-1])} and {zens[-1]} generations" in PROSE
    avx512 = {re.search(r"Zen \d+", r["cpu"])[0] for r in reproducing if "no AVX-512" not in r["cpu"]}
    assert avx512 == {"Zen 5"} and "the Zen 5 with AVX-512" in PROSE
    assert PROSE.count("Intel") == 1 and "No Intel processor is recorded" in PROSE
    assert PROSE.count("x86-64") == 1 and "With Python 3.11 on x86-64 Linux and `make`" in PROSE  # installing only
    assert "make fingerprint" in PROSE and "\nfingerprint:" in (ROOT / "Makefile").read_text()
    assert "for _ in range(150):" in (ROOT / "scripts/numerics_fingerprint.py").read_text()
    assert "trained together for 150 steps" in PROSE
