"""Diagrams for chapters 8-10: how GPT and BERT read their inputs and are fine-tuned; ELECTRA, T5
and XLNet."""
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from lmcourse.diagrams._drawing import (
    FONT,
    PALETTE,
    SMALL,
    TITLE,
    Box,
    _arrow,
    _box,
    _canvas,
    _node,
    _text,
    _token_row,
    diagram,
)
from lmcourse.validate import check_int

# ---------------------------------------------------------------------------------------------
# Chapters 8-9: GPT and BERT


def _math_token(token: str) -> str:
    r"""A WordPiece token as upright mathtext, for a subscript: "##ing" -> "\#\#\mathrm{ing}"."""
    stem = token.lstrip("#")
    return r"\#" * (len(token) - len(stem)) + rf"\mathrm{{{stem}}}"


@diagram
def bert_input() -> Figure:
    """Devlin et al. (2019), Figure 2: BERT's input is the sum of token, segment and position
    embeddings for "[CLS] my dog is cute [SEP] he likes play ##ing [SEP]"."""
    tokens = ["[CLS]", "my", "dog", "is", "cute", "[SEP]", "he", "likes", "play", "##ing", "[SEP]"]
    fig, ax = _canvas(9.0, 3.7)
    xs = [1.85 + k * 0.665 for k in range(len(tokens))]
    special = ["special" if t.startswith("[") else "input" for t in tokens]
    rows = (("Input", 3.15, tokens, special),
            ("Token\nembeddings", 2.35, [rf"$E_{{{_math_token(t)}}}$" for t in tokens],
             "embedding"),
            ("Segment\nembeddings", 1.45, [r"$E_A$"] * 6 + [r"$E_B$"] * 5, "embedding"),
            ("Position\nembeddings", 0.55, [rf"$E_{{{k}}}$" for k in range(len(tokens))], "embedding"))
    for label, y, names, kinds in rows:
        _text(ax, 0.1, y, label, size=FONT, ha="left", bold=label == "Input")
        _token_row(ax, names, xs, y, w=0.6, h=0.48, kinds=kinds, size=FONT if label == "Input" else 11)
    for x in xs:
        _text(ax, x, 1.9, "+", size=12)
        _text(ax, x, 1.0, "+", size=12)
    _text(ax, 5.2, 0.1, "the three rows are summed position by position: (B, T, d_model) into the "
          "Transformer", size=SMALL)
    return fig


def _finetune_panel(ax: Axes, left: float, bottom: float, title: str, data: str,
                    tokens: Sequence[str], outputs: Sequence[str], read: Sequence[int],
                    parts: Sequence[tuple[int, int, str]]) -> list[Box]:
    """One set-up of :func:`bert_finetuning`: tokens into BERT (``parts``: (first, last, name) of
    each text), its output vectors, the ones read coloured as outputs. Returns the output boxes."""
    pitch = 0.5
    xs = [left + 0.5 + k * pitch for k in range(len(tokens))]
    cx = (xs[0] + xs[-1]) / 2
    _text(ax, left + 0.05, bottom + 2.9, title, size=FONT, bold=True, ha="left")
    _text(ax, left + 0.05, bottom + 2.64, data, size=SMALL, italic=True, ha="left")
    kinds = ["special" if t.startswith("[") else "input" for t in tokens]
    ins = _token_row(ax, tokens, xs, bottom + 0.45, w=0.46, h=0.36, kinds=kinds, size=SMALL)
    for first, last, name in parts:
        _text(ax, (xs[first] + xs[last]) / 2, bottom + 0.12, name, size=SMALL, italic=True)
    bert = _box(ax, cx, bottom + 1.04, xs[-1] - xs[0] + 0.46, 0.42, "BERT", "model", bold=True)
    outs = _token_row(ax, outputs, xs, bottom + 1.63, w=0.46, h=0.36, size=FONT,
                      kinds=["output" if k in read else "input" for k in range(len(outputs))])
    for a, b in zip(ins, outs, strict=True):
        if a.w:
            _arrow(ax, a.top, (a.x, bert.bottom[1]))
            _arrow(ax, (b.x, bert.top[1]), b.bottom)
    return outs


@diagram
def bert_finetuning() -> Figure:
    """Devlin et al. (2019), Figure 4: the four fine-tuning set-ups, what goes in and which output
    vectors a new output layer reads (C for a class, paragraph vectors for a span, every token's
    vector for tags)."""
    fig, ax = _canvas(9.0, 6.3)
    pair = ["[CLS]", "Tok 1", "…", "Tok N", "[SEP]", "Tok 1", "…", "Tok M"]
    pair_out = ["C", r"$T_1$", "…", r"$T_N$", r"$T_{[SEP]}$", r"$T'_1$", "…", r"$T'_M$"]
    single = ["[CLS]", "Tok 1", "Tok 2", "…", "Tok N", "[SEP]"]
    single_out = ["C", r"$T_1$", r"$T_2$", "…", r"$T_N$", r"$T_{[SEP]}$"]

    def label(box: Box, text: str, w: float = 0.46) -> Box:
        top = _box(ax, box.x, box.y + 0.6, w, 0.34, text, "output", size=SMALL)
        _arrow(ax, box.top, top.bottom)
        return top

    outs = _finetune_panel(ax, 0.0, 3.3, "(a) Sentence-pair classification",
                           "MNLI, QQP, QNLI, STS-B, MRPC, RTE, SWAG", pair, pair_out, [0],
                           [(1, 3, "sentence 1"), (5, 7, "sentence 2")])
    label(outs[0], "class label", 0.9)
    outs = _finetune_panel(ax, 4.6, 3.3, "(b) Single-sentence classification", "SST-2, CoLA",
                           single, single_out, [0], [(1, 4, "one sentence")])
    label(outs[0], "class label", 0.9)
    outs = _finetune_panel(ax, 0.0, 0.0, "(c) Question answering", "SQuAD v1.1", pair, pair_out,
                           [5, 6, 7], [(1, 3, "question"), (5, 7, "paragraph")])
    span = _box(ax, outs[6].x, outs[6].y + 0.6, 1.46, 0.34, "start / end of span", "output",
                size=SMALL)
    for k in (5, 7):
        _arrow(ax, outs[k].top, (outs[k].x, span.bottom[1]))
    outs = _finetune_panel(ax, 4.6, 0.0, "(d) Single-sentence tagging", "CoNLL-2003 NER", single,
                           single_out, [1, 2, 4], [(1, 4, "one sentence")])
    for k, tag in ((1, "O"), (2, "B-PER"), (4, "O")):
        label(outs[k], tag)
    return fig


@diagram
def gpt_input_transformations(*, choices: int = 3) -> Figure:
    """Radford et al. (2018), Figure 1 (right): each task becomes one or more token sequences with
    Start, Delim and Extract tokens, run through the same pretrained Transformer, then a new Linear
    layer reads the Extract position (``choices``: answers drawn for multiple choice)."""
    check_int(choices, "choices", minimum=2, maximum=4)
    special_w = {"Start": 0.55, "Delim": 0.55, "Extract": 0.7}
    tasks = [("Classification", [["Start", "Text", "Extract"]]),
             ("Entailment", [["Start", "Premise", "Delim", "Hypothesis", "Extract"]]),
             ("Similarity", [["Start", "Text 1", "Delim", "Text 2", "Extract"],
                             ["Start", "Text 2", "Delim", "Text 1", "Extract"]]),
             ("Multiple choice", [["Start", "Context", "Delim", f"Answer {k}", "Extract"]
                                  for k in range(1, choices + 1)])]
    pitch, gap = 0.58, 0.32
    height = 0.55 + sum(len(rows) for _, rows in tasks) * pitch + (len(tasks) - 1) * gap + 0.2
    fig, ax = _canvas(9.0, height)
    y = height - 0.2 - pitch / 2
    seq_left, seq_right, tx, lx = 1.55, 5.45, 6.2, 7.75
    for name, rows in tasks:
        ys = [y - k * pitch for k in range(len(rows))]
        _text(ax, 0.1, sum(ys) / len(ys), name, size=FONT, bold=True, ha="left")
        ends = []
        for row, yy in zip(rows, ys, strict=True):
            free = seq_right - seq_left - sum(special_w.get(t, 0) for t in row) - 0.04 * (len(row) - 1)
            texts = sum(t not in special_w for t in row)
            x = seq_left
            for t in row:
                w = special_w.get(t, free / texts)
                _box(ax, x + w / 2, yy, w, 0.44, t, "special" if t in special_w else "input", size=SMALL)
                x += w + 0.04
            trans = _box(ax, tx, yy, 1.0, 0.44, "Transformer", "model", size=SMALL)
            _arrow(ax, (seq_right, yy), trans.left)
            ends.append(trans)
        if name == "Similarity":
            plus = _node(ax, 7.0, sum(ys) / 2, "+")
            for t in ends:
                _arrow(ax, t.right, (plus.x, t.y), plus.top if t.y > plus.y else plus.bottom)
            lin = _box(ax, lx, plus.y, 0.75, 0.44, "Linear", "output", size=SMALL)
            _arrow(ax, plus.right, lin.left)
        elif name == "Multiple choice":
            mid = sum(ys) / len(ys)
            soft = _box(ax, 8.6, mid, 0.7, 0.44 + pitch * (len(ys) - 1), "softmax\nover\nanswers",
                        "output", size=SMALL)
            for t in ends:
                lin = _box(ax, lx, t.y, 0.75, 0.44, "Linear", "output", size=SMALL)
                _arrow(ax, t.right, lin.left)
                _arrow(ax, lin.right, (soft.left[0], t.y))
        else:
            lin = _box(ax, lx, ys[0], 0.75, 0.44, "Linear", "output", size=SMALL)
            _arrow(ax, ends[0].right, lin.left)
        y = ys[-1] - pitch - gap
    _text(ax, 4.5, 0.25, "The same pretrained Transformer in every row; only the Linear layer and "
          "the special tokens' embeddings are new.", size=SMALL)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 10: after BERT


@diagram
def electra() -> Figure:
    """Clark et al. (2020), Figure 1: a small generator (a masked LM) fills the [MASK] positions
    with samples; the discriminator labels every token original or replaced."""
    words = ["the", "chef", "cooked", "the", "meal"]
    masked = ["[MASK]", "chef", "[MASK]", "the", "meal"]
    sampled = ["the", "chef", "ate", "the", "meal"]
    fig, ax = _canvas(9.0, 3.95)
    ys = [3.05 - 0.5 * k for k in range(len(words))]
    for x, head in ((0.75, "input"), (2.2, "masked (~15%)"), (5.1, "sampled"), (8.15, "label")):
        _text(ax, x, 3.62, head, size=FONT, bold=True)
    gen = _box(ax, 3.65, 2.05, 1.15, 2.4, "Generator\n(small\nmasked LM)", "model")
    disc = _box(ax, 6.6, 2.05, 1.25, 2.4, "Discriminator\n(ELECTRA)", "model")
    for y, word, m, s in zip(ys, words, masked, sampled, strict=True):
        a = _box(ax, 0.75, y, 0.9, 0.38, word, size=FONT)
        b = _box(ax, 2.2, y, 0.95, 0.38, m, "masked" if m == "[MASK]" else "input", size=FONT)
        c = _box(ax, 5.1, y, 0.9, 0.38, s, "input", size=FONT, bold=s != word)
        replaced = s != word
        d = _box(ax, 8.15, y, 1.1, 0.38, "replaced" if replaced else "original",
                 "output" if replaced else "input", size=FONT, bold=replaced)
        _arrow(ax, a.right, b.left)
        _arrow(ax, b.right, (gen.left[0], y))
        _arrow(ax, (gen.right[0], y), c.left)
        _arrow(ax, c.right, (disc.left[0], y))
        _arrow(ax, (disc.right[0], y), d.left)
    _text(ax, 4.5, 0.45, "Generator: masked-LM loss at the masked positions. Discriminator: original "
          "or replaced? at every position.", size=SMALL)
    _text(ax, 4.5, 0.15, "A sample that equals the original word (“the”) counts as original. After "
          "pre-training only the discriminator is kept.", size=SMALL)
    return fig


@diagram
def t5_text_to_text() -> Figure:
    """Raffel et al. (2020), Figure 1: every task is text in, text out, through one encoder-decoder
    model; a text prefix names the task."""
    pairs = [("“translate English to German: That is good.”", "“Das ist gut.”"),
             ("“cola sentence: The course is jumping well.”", "“not acceptable”"),
             ("“stsb sentence1: The rhino grazed on the grass.\nsentence2: A rhino is grazing in a "
              "field.”", "“3.8”"),
             ("“summarize: state authorities dispatched emergency\ncrews tuesday to survey the damage "
              "after an\nonslaught of severe weather in mississippi…”",
              "“six people hospitalized after\na storm in attala county.”")]
    fig, ax = _canvas(9.0, 4.8)
    ys = (4.05, 3.15, 2.2, 1.05)
    model = _box(ax, 4.8, 2.5, 0.9, 3.7, "T5", "model", bold=True, size=TITLE)
    for y, (source, target) in zip(ys, pairs, strict=True):
        h = 0.4 + 0.17 * source.count("\n")
        a = _box(ax, 2.0, y, 3.8, h, source, size=SMALL)
        b = _box(ax, 7.4, y, 2.9, 0.4 + 0.17 * target.count("\n"), target, "output", size=SMALL)
        _arrow(ax, a.right, (model.left[0], y))
        _arrow(ax, (model.right[0], y), b.left)
    _text(ax, 4.5, 0.2, "One model, one objective (cross-entropy on the output text) for every task.",
          size=SMALL)
    return fig


@diagram
def xlnet_factorisation(*, order: Sequence[int] = (2, 1, 3, 0)) -> Figure:
    """XLNet's factorisation order as a graph: tokens stay in their natural order (bottom); the
    query-stream vector that predicts x_i (top) reads the content of the positions earlier in the
    ORDER, never x_i itself. ``order`` is 0-based (the default is the paper's 3 -> 2 -> 4 -> 1)."""
    order = [int(p) for p in order]
    if sorted(order) != list(range(len(order))) or not 2 <= len(order) <= 8:
        raise ValueError(f"order must be a permutation of 0..T-1 with 2 <= T <= 8, got {order}")
    T = len(order)
    step = {p: k for k, p in enumerate(order)}
    fig, ax = _canvas(1.6 * T + 1.6, 3.6)
    xs = [1.9 + 1.6 * i for i in range(T)]
    tops, bottoms = [], []
    for i, x in enumerate(xs):
        bottoms.append(_box(ax, x, 0.9, 0.95, 0.42, f"$x_{i + 1}$ (content)", "input", size=SMALL))
        tops.append(_box(ax, x, 2.55, 1.15, 0.5, f"predict $x_{i + 1}$\nstep {step[i] + 1}", "output",
                         size=SMALL))
    for i in range(T):
        for j in range(T):
            if step[j] < step[i]:
                _arrow(ax, bottoms[j].top, tops[i].bottom, color=PALETTE["visible"], lw=1.4)
    _text(ax, xs[0] - 0.75, 2.55, "query\nstream g", size=SMALL, ha="right")
    _text(ax, xs[0] - 0.75, 0.9, "tokens in\nnatural order", size=SMALL, ha="right")
    _text(ax, (xs[0] + xs[-1]) / 2, 3.35, "order " + " → ".join(f"$x_{p + 1}$" for p in order)
          + ": each prediction reads only the tokens earlier in the order", size=FONT)
    _text(ax, (xs[0] + xs[-1]) / 2, 0.3, "No arrow enters a prediction from its own token; the positions "
          "never move.", size=SMALL)
    return fig
