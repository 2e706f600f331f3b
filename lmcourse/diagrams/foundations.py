"""Diagrams for chapters 1-2: pretraining and transfer, and the first neural language model."""
from itertools import pairwise

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    EDGE,
    FONT,
    SMALL,
    _arrow,
    _box,
    _canvas,
    _edge,
    _spread,
    _text,
    diagram,
)
from lmcourse.validate import check_int, check_type

# ---------------------------------------------------------------------------------------------
# Chapter 1: pretraining and transfer


@diagram
def transfer(*, layers: int = 3) -> Figure:
    """Pretraining and transfer (chapter 1): model A learns digits 0-4 from many labels; model B
    for digits 5-9 copies A's lowest ``layers`` hidden layers, gets a new output layer, and either
    freezes the copies or fine-tunes them on its few labels."""
    check_int(layers, "layers", minimum=1, maximum=3)
    names = ["conv 3x3", "conv 3x3\n+ max-pool", "hidden\n(linear)"]
    fig, ax = _canvas(9.0, 3.9)
    xs = [2.35, 3.85, 5.35]
    out_x, w, h = 6.95, 1.2, 0.62
    rows = ((3.0, "Model A: pretraining", "digits 0-4\n~800 labelled", "output\n0-4"),
            (1.15, "Model B: transfer", "digits 5-9\na few labelled", "new output\n5-9"))
    drawn = []
    for y, title, data, output in rows:
        _text(ax, 0.1, y + 0.62, title, size=FONT, bold=True, ha="left")
        image = _box(ax, 0.85, y, 1.15, h, data, "input", size=SMALL)
        boxes = [image]
        for k, (x, name) in enumerate(zip(xs, names, strict=True)):
            copied = y < 2 and k < layers
            boxes.append(_box(ax, x, y, w, h, name, "feedforward", size=SMALL, lw=2.0 if copied else 1.0))
        boxes.append(_box(ax, out_x, y, w, h, output, "output", size=SMALL))
        for a, b in pairwise(boxes):
            _arrow(ax, a.right, b.left)
        drawn.append(boxes)
    for k in range(layers):
        top, bottom = drawn[0][k + 1], drawn[1][k + 1]
        _edge(ax, top.bottom, bottom.top, "copy" if k == 0 else "", side="left", dashed=True)
    _text(ax, out_x, 2.08, "replaced: starts random", size=SMALL, italic=True)
    _text(ax, 7.75, 3.0, "plenty of\nlabels", size=SMALL, italic=True, ha="left")
    _text(ax, 7.75, 1.15, "few\nlabels", size=SMALL, italic=True, ha="left")
    _text(ax, 4.5, 0.42, "frozen: the copied layers (thick edges) stay fixed; only the layers above "
          "them learn.", size=SMALL)
    _text(ax, 4.5, 0.16, "fine-tuned: they learn too, starting from the copied values.   "
          "scratch: nothing is copied.", size=SMALL)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 2: language models


@diagram
def nnlm(*, context_size: int = 3, direct: bool = True) -> Figure:
    """Bengio et al. (2003): the ``context_size`` previous words looked up in one shared table C,
    concatenated, a tanh hidden layer, a softmax over V; ``direct`` draws the optional direct
    connections W from the concatenation to the output (dashed)."""
    check_int(context_size, "context_size", minimum=2, maximum=4)
    check_type(direct, "direct", bool)
    fig, ax = _canvas(8.5, 6.1)
    cx, pitch = 3.5, min(1.7, 5.2 / context_size)
    xs = _spread(cx, context_size, pitch)
    span = xs[-1] - xs[0] + 1.2
    concat = _box(ax, cx, 2.75, span, 0.5, "concatenate:  x", "embedding")
    for k, x in enumerate(xs):
        lag = context_size - k
        word = _box(ax, x, 0.45, 1.0, 0.42, rf"$w_{{t-{lag}}}$", size=12)
        row = _box(ax, x, 1.6, pitch - 0.15, 0.45, rf"$C(w_{{t-{lag}}})$", "embedding", size=11)
        _edge(ax, word.top, row.bottom, "look up" if k == 0 else "", side="left")
        _edge(ax, row.top, (x, concat.bottom[1]), "(B, m)" if k == context_size - 1 else "")
    left = xs[0] - pitch / 2 + 0.02
    ax.add_patch(FancyBboxPatch((left, 1.27), xs[-1] - xs[0] + pitch - 0.04, 0.66,
                                boxstyle="round,pad=0,rounding_size=0.08", fc="none", ec=EDGE,
                                lw=1.0, ls=":", zorder=2))
    _text(ax, xs[-1] + pitch / 2 + 0.12, 1.6, "one shared table C,\n(V, m): the same\nfor every position",
          size=SMALL, ha="left")
    hidden = _box(ax, cx, 3.95, 2.6, 0.5, "hidden layer:  tanh(d + H x)", "feedforward")
    out = _box(ax, cx, 5.15, 4.3, 0.5, "softmax over V:  b + W x + U tanh(d + H x)", "output")
    _edge(ax, concat.top, hidden.bottom, "(B, (n−1)·m)")
    _edge(ax, hidden.top, out.bottom, "(B, h),  h hidden units")
    _arrow(ax, out.top, (cx, 5.75))
    _text(ax, cx + 0.1, 5.82, r"$P(w_t \mid w_{t-n+1}, \ldots, w_{t-1})$,  (B, V)", size=FONT,
          ha="left", va="bottom")
    if direct:
        x_route = max(concat.right[0], out.right[0]) + 0.45
        _arrow(ax, concat.right, (x_route, concat.y), (x_route, out.y), out.right, dashed=True)
        _text(ax, x_route + 0.1, 3.95, "optional direct\nconnections W x", size=SMALL, ha="left")
    return fig
