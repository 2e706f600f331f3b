"""Architecture diagrams for the book, drawn as code with matplotlib.

Every diagram is built from the few primitives at the top of this module (box, stacked box, op node,
arrow with an optional label, token row, grid), on a canvas whose data units are inches, so sizes
and gaps read directly as lengths on the page. One palette gives each kind of part one colour in
every diagram. Each public function returns a new :class:`~matplotlib.figure.Figure` (not shown,
not saved); :data:`DIAGRAMS` maps a short name to each of them.

Shapes use the course's names: batch ``B``, time ``T`` (``S`` for a source sequence), ``d_model``,
``h`` heads with ``d_k = d_model / h``, ``d_ff``, vocabulary size ``V``.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Polygon, Rectangle
from matplotlib.patheffects import Normal, withStroke

import torch

from lmcourse import word2vec
from lmcourse.validate import check_int, check_type

#: one colour per kind of part, the same in every diagram (light tints of the Okabe-Ito palette)
PALETTE = {
    "input": "#F2F2F2",        # tokens, words, text
    "special": "#D4D4D4",      # special tokens: [CLS], [SEP], Start, Delim, Extract
    "masked": "#A6A6A6",       # [MASK] and other hidden positions
    "embedding": "#EDD0E0",    # embedding tables and lookups (reddish purple)
    "recurrent": "#A6DDCE",    # RNN / LSTM / GRU cells and gates (bluish green)
    "attention": "#F6DDA6",    # attention and context vectors (orange)
    "feedforward": "#C4E5F7",  # feed-forward / MLP / hidden layers (sky blue)
    "norm": "#FAF6BD",         # add & norm, residual sums (yellow)
    "output": "#F0C7A6",       # output heads: linear, softmax, labels (vermillion)
    "model": "#A6CEE4",        # a whole pretrained network drawn as one block (blue)
    "op": "#FFFFFF",           # pointwise operations
    "visible": "#56B4E9",      # positions a prediction may use (sky blue, full strength)
    "visible_back": "#E69F00", # positions the right-to-left LM may use (orange, full strength)
}
TEXT = "#1A1A1A"
EDGE = "#333333"
FONT = 10    # points, at the final size (figures are drawn at their printed width)
SMALL = 9    # the smallest text used: shapes, notes, dataset names
TITLE = 11


@dataclass(frozen=True)
class Box:
    """A drawn part: centre ``(x, y)`` and size ``w`` by ``h`` in inches; its edges' midpoints."""
    x: float
    y: float
    w: float
    h: float

    @property
    def top(self) -> tuple[float, float]:
        return self.x, self.y + self.h / 2

    @property
    def bottom(self) -> tuple[float, float]:
        return self.x, self.y - self.h / 2

    @property
    def left(self) -> tuple[float, float]:
        return self.x - self.w / 2, self.y

    @property
    def right(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y


# ---------------------------------------------------------------------------------------------
# Primitives


def _canvas(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure ``width`` by ``height`` inches whose one axes fills it, in inch units."""
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def _text(ax: Axes, x: float, y: float, s: str, *, size: float = FONT, ha: str = "center",
          va: str = "center", bold: bool = False, italic: bool = False, color: str = TEXT) -> None:
    """Plain text at ``(x, y)``."""
    ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=color, zorder=5,
            fontweight="bold" if bold else "normal", fontstyle="italic" if italic else "normal")


def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str = "", kind: str = "input", *,
         size: float = FONT, bold: bool = False, dashed: bool = False, lw: float = 1.0) -> Box:
    """A rounded box of colour ``PALETTE[kind]`` centred at ``(x, y)``, with centred text."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.05",
                                fc=PALETTE[kind], ec=EDGE, lw=lw, ls="--" if dashed else "-", zorder=3))
    if text:
        _text(ax, x, y, text, size=size, bold=bold)
    return Box(x, y, w, h)


def _stack(ax: Axes, x: float, y: float, w: float, h: float, text: str, kind: str, *,
           depth: int = 2, size: float = FONT) -> Box:
    """A box with ``depth`` copies peeking out behind it: the same part repeated (heads, layers)."""
    for k in range(depth, 0, -1):
        ax.add_patch(FancyBboxPatch((x - w / 2 + 0.07 * k, y - h / 2 + 0.07 * k), w, h,
                                    boxstyle="round,pad=0,rounding_size=0.05", fc=PALETTE[kind],
                                    ec=EDGE, lw=0.8, zorder=2))
    return _box(ax, x, y, w, h, text, kind, size=size)


def _node(ax: Axes, x: float, y: float, symbol: str, *, r: float = 0.17, size: float = 12) -> Box:
    """A small circle holding a pointwise operation such as ``×`` or ``+``."""
    ax.add_patch(Circle((x, y), r, fc=PALETTE["op"], ec=EDGE, lw=1.0, zorder=3))
    _text(ax, x, y, symbol, size=size)
    return Box(x, y, 2 * r, 2 * r)


def _dot(ax: Axes, x: float, y: float) -> None:
    """A junction where one line splits in two."""
    ax.add_patch(Circle((x, y), 0.035, fc=EDGE, ec=EDGE, zorder=4))


def _arrow(ax: Axes, *points: tuple[float, float], head: bool = True, both: bool = False,
           dashed: bool = False, bridge: bool = False, color: str = EDGE, lw: float = 1.2) -> None:
    """A line through ``points`` with an arrow head at the last one (``both``: at the first too).

    Points are exact box edges: nothing is shrunk. ``bridge`` draws a white halo so the line
    visibly passes over any line it crosses.
    """
    effects = [withStroke(linewidth=5, foreground="white"), Normal()] if bridge else None
    style = "--" if dashed else "-"
    if len(points) > 2:
        xs, ys = zip(*points[:-1])
        line = Line2D(xs, ys, color=color, lw=lw, ls=style, zorder=2, solid_capstyle="butt")
        if effects:
            line.set_path_effects(effects)
        ax.add_line(line)
    arrowstyle = "<|-|>" if both else "-|>" if head else "-"
    patch = FancyArrowPatch(points[-2], points[-1], arrowstyle=arrowstyle, mutation_scale=11,
                            shrinkA=0, shrinkB=0, color=color, lw=lw, ls=style, zorder=2)
    if effects:
        patch.set_path_effects(effects)
    ax.add_patch(patch)


def _edge(ax: Axes, start: tuple[float, float], end: tuple[float, float], label: str = "", *,
          side: str = "right", size: float = SMALL, at: float = 0.5, **arrow) -> None:
    """A straight arrow with ``label`` beside it (``side``: right, left, above or below the point
    a fraction ``at`` of the way along)."""
    _arrow(ax, start, end, **arrow)
    if label:
        mx, my = start[0] + at * (end[0] - start[0]), start[1] + at * (end[1] - start[1])
        dx, dy, ha, va = {"right": (0.07, 0, "left", "center"), "left": (-0.07, 0, "right", "center"),
                          "above": (0, 0.05, "center", "bottom"),
                          "below": (0, -0.05, "center", "top")}[side]
        _text(ax, mx + dx, my + dy, label, size=size, ha=ha, va=va)


def _spread(centre: float, n: int, pitch: float) -> list[float]:
    """``n`` positions ``pitch`` apart, centred on ``centre``."""
    return [centre + (i - (n - 1) / 2) * pitch for i in range(n)]


def _token_row(ax: Axes, tokens: Sequence[str], xs: Sequence[float], y: float, *, w: float,
               h: float = 0.4, kinds: str | Sequence[str] = "input", size: float = FONT) -> list[Box]:
    """One box per token at ``xs``; ``kinds`` is one kind or one per token. An "…" is text only."""
    kinds = [kinds] * len(tokens) if isinstance(kinds, str) else kinds
    boxes = []
    for token, x, kind in zip(tokens, xs, kinds):
        if token == "…":
            _text(ax, x, y, token, size=size)
            boxes.append(Box(x, y, 0, h))
        else:
            boxes.append(_box(ax, x, y, w, h, token, kind, size=size))
    return boxes


def _grid(ax: Axes, cells: Sequence[Sequence[str | tuple[str, str]]], left: float, top: float,
          cell: float, labels: Sequence[str]) -> None:
    """A square grid of coloured cells, row 0 at the top; a ``(lower, upper)`` pair splits a cell
    along its diagonal. ``labels`` name the rows (left) and the columns (above)."""
    for i, row in enumerate(cells):
        for j, kind in enumerate(row):
            x0, y0 = left + j * cell, top - (i + 1) * cell
            if isinstance(kind, tuple):
                corners = [(x0, y0 + cell), (x0, y0), (x0 + cell, y0), (x0 + cell, y0 + cell)]
                ax.add_patch(Polygon(corners[:3], fc=PALETTE[kind[0]], ec="none", zorder=3))
                ax.add_patch(Polygon([corners[0], corners[2], corners[3]], fc=PALETTE[kind[1]],
                                     ec="none", zorder=3))
                ax.add_patch(Rectangle((x0, y0), cell, cell, fc="none", ec="white", lw=1.5, zorder=3))
            else:
                ax.add_patch(Rectangle((x0, y0), cell, cell, fc=PALETTE[kind], ec="white", lw=1.5,
                                       zorder=3))
    for k, label in enumerate(labels):
        _text(ax, left - 0.06, top - (k + 0.5) * cell, label, size=SMALL, ha="right")
        _text(ax, left + (k + 0.5) * cell, top + 0.06, label, size=SMALL, va="bottom")


# ---------------------------------------------------------------------------------------------
# Chapter 1: pretraining and transfer


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
        for k, (x, name) in enumerate(zip(xs, names)):
            copied = y < 2 and k < layers
            boxes.append(_box(ax, x, y, w, h, name, "feedforward", size=SMALL, lw=2.0 if copied else 1.0))
        boxes.append(_box(ax, out_x, y, w, h, output, "output", size=SMALL))
        for a, b in zip(boxes, boxes[1:]):
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


# ---------------------------------------------------------------------------------------------
# Chapter 3: word embeddings


def cbow_and_skipgram(*, window: int = 2) -> Figure:
    """word2vec (Mikolov et al., 2013): CBOW averages the ``window`` words on each side to predict
    the centre word; skip-gram uses the centre word to predict each context word."""
    check_int(window, "window", minimum=1, maximum=3)
    fig, ax = _canvas(9.0, 5.0)
    offsets = [k for k in range(-window, window + 1) if k != 0]
    names = [rf"$w_{{t{k:+d}}}$" for k in offsets]
    pitch = min(0.95, 4.0 / len(offsets))
    ax.add_line(Line2D([4.5, 4.5], [0.6, 4.8], color="#BBBBBB", lw=1.0))

    cx = 2.25
    _text(ax, cx, 4.6, "CBOW: the context predicts the centre word", size=TITLE, bold=True)
    context = _token_row(ax, names, _spread(cx, len(names), pitch), 0.95, w=pitch - 0.12, size=11)
    avg = _box(ax, cx, 2.05, 2.6, 0.48, "average of their input vectors", "embedding")
    for box in context:
        _arrow(ax, box.top, (cx + 0.3 * (box.x - cx), avg.bottom[1]))
    out = _box(ax, cx, 3.05, 2.6, 0.48, "softmax over V", "output")
    target = _box(ax, cx, 3.95, 0.9, 0.42, r"$w_t$", size=11)
    _arrow(ax, avg.top, out.bottom)
    _edge(ax, out.top, target.bottom, "predict")

    cx = 6.75
    _text(ax, cx, 4.6, "Skip-gram: the centre word predicts its context", size=TITLE, bold=True)
    centre = _box(ax, cx, 0.95, 0.9, 0.42, r"$w_t$", size=11)
    vec = _box(ax, cx, 2.05, 2.6, 0.48, r"input vector of $w_t$", "embedding")
    out = _box(ax, cx, 3.05, 3.3, 0.48, "softmax over V, once per context word", "output")
    _arrow(ax, centre.top, vec.bottom)
    _arrow(ax, vec.top, out.bottom)
    for box in _token_row(ax, names, _spread(cx, len(names), pitch), 3.95, w=pitch - 0.12, size=11):
        _arrow(ax, (cx + 0.3 * (box.x - cx), out.top[1]), box.bottom)
    _text(ax, 4.5, 0.25, "In practice the softmax over V is replaced by negative sampling or a "
          "hierarchical softmax.", size=SMALL)
    return fig


#: a small vocabulary with made-up counts, for drawing a Huffman tree
HUFFMAN_WORDS = (("the", 60), ("said", 25), ("fire", 12), ("police", 10), ("bank", 6), ("crews", 4),
                 ("gaza", 3), ("blaze", 2))
ACCENT = "#D55E00"   # a path or part the text points at (vermillion, full strength)


def huffman_tree(*, word: str = "bank") -> Figure:
    """The hierarchical softmax's Huffman tree (Mikolov et al., 2013a) for eight words with made-up
    counts, built by :func:`lmcourse.word2vec.huffman_tree`: the two least frequent nodes are merged
    again and again, so frequent words sit near the root. The path to ``word`` is highlighted and
    its probability written out as a product of binary decisions."""
    check_type(word, "word", str)
    words = [w for w, _ in HUFFMAN_WORDS]
    if word not in words:
        raise ValueError(f"word must be one of {words}, got {word!r}")
    counts = [c for _, c in HUFFMAN_WORDS]
    codes, points = word2vec.huffman_tree(torch.tensor(counts))
    v = len(words)
    children: dict[int, dict[int, tuple[str, int]]] = {}     # inner node -> {bit: ("inner"|"leaf", id)}
    for leaf, (code, point) in enumerate(zip(codes, points)):
        for j, (bit, node) in enumerate(zip(code, point)):
            children.setdefault(node, {})[bit] = ("inner", point[j + 1]) if j + 1 < len(point) else ("leaf", leaf)
    depth = max(map(len, codes))
    fig, ax = _canvas(9.0, 1.2 + 0.62 * (depth + 1))
    top, step, pitch = 0.62 * (depth + 1) + 0.55, 0.62, 1.05
    order = iter(range(v))
    place: dict[tuple[str, int], tuple[float, float]] = {}
    total: dict[tuple[str, int], int] = {}

    def lay_out(node: tuple[str, int], level: int) -> None:
        if node[0] == "leaf":
            place[node], total[node] = (0.55 + pitch * next(order), top - level * step), counts[node[1]]
            return
        kids = [children[node[1]][bit] for bit in (0, 1)]
        for kid in kids:
            lay_out(kid, level + 1)
        place[node] = ((place[kids[0]][0] + place[kids[1]][0]) / 2, top - level * step)
        total[node] = total[kids[0]] + total[kids[1]]

    root = ("inner", v - 2)
    lay_out(root, 0)
    target = words.index(word)
    on_path = {("inner", n) for n in points[target]} | {("leaf", target)}
    for (kind, n), (x, y) in place.items():
        if kind == "inner":
            for bit in (0, 1):
                kid = children[n][bit]
                hot = kid in on_path and ("inner", n) in on_path
                (kx, ky), r = place[kid], 0.2
                start, end = (x, y - r), (kx, ky + (r if kid[0] == "inner" else 0.19))
                _edge(ax, start, end, str(bit), side="above", at=0.5, head=False,
                      color=ACCENT if hot else EDGE, lw=2.4 if hot else 1.0)
            ax.add_patch(Circle((x, y), 0.2, fc=PALETTE["output"], ec=EDGE, lw=1.0, zorder=3))
            _text(ax, x, y, str(total[kind, n]), size=SMALL)
            _text(ax, x + 0.24, y + 0.13, rf"$u_{n}$", size=SMALL, ha="left")
        else:
            _box(ax, x, y, 0.9, 0.38, f"{words[n]} {counts[n]}", "input", size=SMALL,
                 lw=2.4 if n == target else 1.0)
    factors = r"\,".join(rf"\sigma({'' if bit == 0 else '-'}u_{node} \cdot h)"
                       for bit, node in zip(codes[target], points[target]))
    _text(ax, 4.5, 0.3, rf"$P(\mathrm{{{word}}} \mid h) = {factors}$   (code {''.join(map(str, codes[target]))}; "
          "inner nodes show merged counts)", size=FONT)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 4: RNN and LSTM


def rnn_unrolled(*, steps: int = 4) -> Figure:
    """A simple RNN unrolled over ``steps`` time steps: inputs x_t, states h_0 -> h_1 -> ... -> h_T,
    outputs y_t, and the same three weight matrices at every step."""
    check_int(steps, "steps", minimum=2, maximum=5)
    fig, ax = _canvas(8.5, 4.6)
    pitch = 6.4 / (steps + 0.5)
    xs = [2.3 + k * pitch for k in range(steps - 1)] + [2.3 + (steps - 0.5) * pitch]
    times = [str(k + 1) for k in range(steps - 1)] + ["T"]
    y_x, y_h, y_y = 0.7, 2.0, 3.3
    _text(ax, 0.1, y_x, "inputs\n(B, I) each", size=SMALL, ha="left")
    _text(ax, 0.1, y_y, "outputs\n(B, V) each", size=SMALL, ha="left")
    prev = _box(ax, 1.1, y_h, 0.75, 0.48, r"$h_0$", "input", size=12)
    _text(ax, 1.1, y_h - 0.45, "(B, H)", size=SMALL)
    for k, (x, t) in enumerate(zip(xs, times)):
        xt = _box(ax, x, y_x, 0.75, 0.42, rf"$x_{t}$", size=12)
        ht = _box(ax, x, y_h, 0.75, 0.48, rf"$h_{t}$", "recurrent", size=12)
        yt = _box(ax, x, y_y, 0.75, 0.42, rf"$y_{t}$", "output", size=12)
        _edge(ax, xt.top, ht.bottom, r"$W_{xh}$", size=11)
        _edge(ax, ht.top, yt.bottom, r"$W_{hy}$", size=11)
        if k == steps - 1:
            gap = (prev.right[0] + ht.left[0]) / 2
            _text(ax, gap, y_h, "⋯", size=14)
            _edge(ax, prev.right, (gap - 0.2, y_h))
            _edge(ax, (gap + 0.2, y_h), ht.left)
        else:
            _edge(ax, prev.right, ht.left, r"$W_{hh}$", side="above", size=11)
        prev = ht
    _text(ax, 4.25, 4.2, r"$h_t = \tanh(W_{xh}\, x_t + W_{hh}\, h_{t-1} + b_h)$,   "
          r"$y_t = \mathrm{softmax}(W_{hy}\, h_t + b_y)$", size=11)
    _text(ax, 4.25, 3.85, "the same weights at every step", size=SMALL, italic=True)
    return fig


def _cell_inputs(ax: Axes, bus_to: float, y_bus: float, h_from: tuple[float, float] | None) -> None:
    """The input bus of an LSTM or GRU cell: x_t from below joins h_{t-1} into [h_{t-1}, x_t].

    ``h_from``: where h_{t-1} comes down from (GRU); None brings it in from the left (LSTM).
    """
    if h_from is None:
        _text(ax, 0.7, y_bus, r"$h_{t-1}$", size=12, ha="right")
        _arrow(ax, (0.75, y_bus), (1.3, y_bus), head=False)
    else:
        _arrow(ax, h_from, (h_from[0], y_bus), (1.3, y_bus), head=False)
    _arrow(ax, (1.3, y_bus - 0.6), (1.3, y_bus), head=False)
    _text(ax, 1.3, y_bus - 0.65, r"$x_t$", size=12, va="top")
    _dot(ax, 1.3, y_bus)
    _arrow(ax, (1.3, y_bus), (bus_to, y_bus), head=False)
    _text(ax, 1.45, y_bus - 0.07, r"$[h_{t-1}, x_t]$", size=11, ha="left", va="top")


def _gate(ax: Axes, x: float, y: float, name: str, fn: str, y_bus: float) -> Box:
    """A learned gate layer (``fn`` of a linear map of [h_{t-1}, x_t]) fed from the input bus."""
    gate = _box(ax, x, y, 0.9, 0.5, f"{name}\n{fn}", "recurrent")
    _dot(ax, x, y_bus)
    _arrow(ax, (x, y_bus), gate.bottom)
    return gate


def lstm_cell(*, equations: bool = True) -> Figure:
    """One LSTM step (Hochreiter & Schmidhuber, 1997, with the forget gate of Gers et al., 2000):
    forget, input and output gates, the candidate, and the cell-state highway that only pointwise
    × and + touch."""
    check_type(equations, "equations", bool)
    fig, ax = _canvas(8.0, 5.35 if equations else 4.55)
    up = 0.8 if equations else 0.0
    y_bus, y_gate, y_mid, y_c = 0.95 + up, 1.85 + up, 2.7 + up, 3.55 + up
    _cell_inputs(ax, 5.4, y_bus, None)
    f = _gate(ax, 2.2, y_gate, "forget", "σ", y_bus)
    i = _gate(ax, 3.3, y_gate, "input", "σ", y_bus)
    g = _gate(ax, 4.3, y_gate, "candidate", "tanh", y_bus)
    o = _gate(ax, 5.4, y_gate, "output", "σ", y_bus)
    times_f, plus = _node(ax, 2.2, y_c, "×"), _node(ax, 3.8, y_c, "+")
    times_i, times_o = _node(ax, 3.8, y_mid, "×"), _node(ax, 6.3, y_mid - 0.15, "×")
    tanh_c = _box(ax, 6.3, y_c - 0.55, 0.6, 0.32, "tanh", "op", size=SMALL)
    highway = dict(color="#007A5A", lw=2.6)
    _text(ax, 0.7, y_c, r"$c_{t-1}$", size=12, ha="right")
    _arrow(ax, (0.75, y_c), times_f.left, **highway)
    _arrow(ax, times_f.right, plus.left, **highway)
    _arrow(ax, plus.right, (7.45, y_c), **highway)
    _text(ax, 7.5, y_c, r"$c_t$", size=12, ha="left")
    _text(ax, 4.85, y_c + 0.3, "cell state: a highway that only × and + touch", size=SMALL, italic=True)
    _edge(ax, f.top, times_f.bottom, r"$f_t$", size=12)
    _edge(ax, i.top, times_i.bottom, r"$i_t$", side="left", size=12)
    _edge(ax, g.top, times_i.bottom, r"$\tilde{c}_t$", size=12)
    _arrow(ax, times_i.top, plus.bottom)
    _edge(ax, o.top, times_o.left, r"$o_t$", side="above", size=12, at=0.4)
    _dot(ax, 6.3, y_c)
    _arrow(ax, (6.3, y_c), tanh_c.top)
    _arrow(ax, tanh_c.bottom, times_o.top)
    _arrow(ax, times_o.right, (7.45, times_o.y))
    _text(ax, 7.5, times_o.y, r"$h_t$", size=12, ha="left")
    _text(ax, 0.1, y_c + 0.65, "LSTM cell (forget gate: Gers et al., 2000)", size=TITLE, bold=True,
          ha="left")
    if equations:
        _text(ax, 4.0, 0.5, r"$f_t = \sigma(W_f [h_{t-1}, x_t] + b_f)$    "
              r"$i_t = \sigma(W_i [h_{t-1}, x_t] + b_i)$    $o_t = \sigma(W_o [h_{t-1}, x_t] + b_o)$", size=FONT)
        _text(ax, 4.0, 0.15, r"$\tilde{c}_t = \tanh(W_c [h_{t-1}, x_t] + b_c)$    "
              r"$c_t = f_t \odot c_{t-1} + i_t \odot \tilde{c}_t$    $h_t = o_t \odot \tanh(c_t)$",
              size=FONT)
    return fig


def gru_cell(*, equations: bool = True) -> Figure:
    """One GRU step (Cho et al., 2014): reset and update gates, the candidate state, and the new
    state as a gated mix of the old state and the candidate."""
    check_type(equations, "equations", bool)
    fig, ax = _canvas(8.0, 5.5 if equations else 4.7)
    up = 0.8 if equations else 0.0
    y_bus, y_gate, y_r, y_mix, y_h = 0.95 + up, 1.75 + up, 2.5 + up, 3.3 + up, 3.95 + up
    _text(ax, 0.7, y_h, r"$h_{t-1}$", size=12, ha="right")
    _dot(ax, 0.95, y_h)
    _cell_inputs(ax, 5.6, y_bus, (0.95, y_h))
    r = _gate(ax, 2.1, y_gate, "reset", "σ", y_bus)
    z = _gate(ax, 3.4, y_gate, "update", "σ", y_bus)
    times_old, plus = _node(ax, 3.4, y_h, "×"), _node(ax, 5.6, y_h, "+")
    times_r, one_minus = _node(ax, 2.1, y_r, "×"), _node(ax, 4.5, y_mix, "1−", size=FONT)
    times_new = _node(ax, 5.6, y_mix, "×")
    cand = _box(ax, 5.6, y_r, 0.9, 0.5, "candidate\ntanh", "recurrent")
    _dot(ax, 5.6, y_bus)
    _edge(ax, (5.6, y_bus), cand.bottom, r"$x_t$ part", size=11)
    _arrow(ax, (0.95, y_h), times_old.left)
    _arrow(ax, times_old.right, plus.left)
    _arrow(ax, plus.right, (7.45, y_h))
    _text(ax, 7.5, y_h, r"$h_t$", size=12, ha="left")
    _dot(ax, 0.95, y_r)
    _arrow(ax, (0.95, y_r), times_r.left)
    _edge(ax, r.top, times_r.bottom, r"$r_t$", side="left", size=12)
    _arrow(ax, z.top, times_old.bottom)
    _text(ax, 3.48, (z.top[1] + y_r) / 2, r"$z_t$", size=12, ha="left")
    _arrow(ax, times_r.right, cand.left, bridge=True)
    _text(ax, 4.35, y_r + 0.08, r"$r_t \odot h_{t-1}$", size=11, va="bottom")
    _dot(ax, 3.4, y_mix)
    _arrow(ax, (3.4, y_mix), one_minus.left)
    _arrow(ax, one_minus.right, times_new.left)
    _edge(ax, cand.top, times_new.bottom, r"$\tilde{h}_t$", size=12)
    _arrow(ax, times_new.top, plus.bottom)
    _text(ax, 0.1, y_h + 0.55, "GRU cell (Cho et al., 2014): no separate cell state", size=TITLE,
          bold=True, ha="left")
    if equations:
        _text(ax, 4.0, 0.5, r"$r_t = \sigma(W_r [h_{t-1}, x_t])$    $z_t = \sigma(W_z [h_{t-1}, x_t])$"
              r"    $\tilde{h}_t = \tanh(W x_t + U (r_t \odot h_{t-1}))$", size=FONT)
        _text(ax, 4.0, 0.15, r"$h_t = z_t \odot h_{t-1} + (1 - z_t) \odot \tilde{h}_t$", size=FONT)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 5: ELMo


def elmo(*, focus: int = 2) -> Figure:
    """ELMo (Peters et al., 2018): a two-layer forward LSTM LM and a separate two-layer backward
    LSTM LM over the same char-CNN token embeddings; on the right, the task-specific scalar mix of
    the layers of the token at position ``focus`` (0-based)."""
    tokens = ["the", "cat", "sat", "down"]
    check_int(focus, "focus", minimum=0, maximum=len(tokens) - 1)
    fig, ax = _canvas(9.0, 5.3)
    xs = _spread(3.55, len(tokens), 1.1)
    rows = {"fwd2": 4.25, "fwd1": 3.45, "emb": 2.55, "bwd1": 1.65, "bwd2": 0.85}
    labels = {"fwd2": "forward LSTM 2", "fwd1": "forward LSTM 1", "emb": "char-CNN\nembedding",
              "bwd1": "backward LSTM 1", "bwd2": "backward LSTM 2"}
    for key, y in rows.items():
        _text(ax, 0.1, y, labels[key], size=SMALL, ha="left")
    _text(ax, 0.1, 4.85, "predicts next", size=SMALL, ha="left")
    _text(ax, 0.1, 0.25, "predicts previous", size=SMALL, ha="left")
    cells = {key: _token_row(ax, tokens if key == "emb" else ["LSTM"] * len(tokens), xs, y, w=0.75,
                             h=0.42, kinds="embedding" if key == "emb" else "recurrent", size=SMALL)
             for key, y in rows.items()}
    nexts, prevs = tokens[1:] + ["</S>"], ["<S>"] + tokens[:-1]
    for k in range(len(tokens)):
        _arrow(ax, cells["emb"][k].top, cells["fwd1"][k].bottom)
        _arrow(ax, cells["fwd1"][k].top, cells["fwd2"][k].bottom)
        _arrow(ax, cells["emb"][k].bottom, cells["bwd1"][k].top)
        _arrow(ax, cells["bwd1"][k].bottom, cells["bwd2"][k].top)
        _arrow(ax, cells["fwd2"][k].top, (xs[k], 4.7))
        _text(ax, xs[k], 4.75, nexts[k], size=SMALL, italic=True, va="bottom")
        _arrow(ax, cells["bwd2"][k].bottom, (xs[k], 0.4))
        _text(ax, xs[k], 0.35, prevs[k], size=SMALL, italic=True, va="top")
        if k + 1 < len(tokens):
            for key in ("fwd1", "fwd2"):
                _arrow(ax, cells[key][k].right, cells[key][k + 1].left)
            for key in ("bwd1", "bwd2"):
                _arrow(ax, cells[key][k + 1].left, cells[key][k].right)
    ax.add_patch(FancyBboxPatch((xs[focus] - 0.5, 0.57), 1.0, 3.96, boxstyle="round,pad=0,rounding_size=0.1",
                                fc="none", ec=EDGE, lw=1.3, ls="--", zorder=4))

    _text(ax, 7.55, 4.85, f"scalar mix for token k = “{tokens[focus]}”", size=FONT, bold=True)
    layers = [_box(ax, 6.75, y, 1.45, 0.5, text, "recurrent", size=SMALL)
              for y, text in ((4.1, "layer 2\n[forward; backward]"), (3.3, "layer 1\n[forward; backward]"),
                              (2.5, "layer 0\ntoken embedding"))]
    total = _node(ax, 8.45, 2.5, "Σ")
    ends = (total.left, (total.x - 0.12, total.y + 0.12), total.top)   # layer 0, 1, 2
    for j, (layer, end) in enumerate(zip(reversed(layers), ends)):
        _edge(ax, layer.right, end, rf"$s_{j}$", side="above" if j == 0 else "right", size=11,
              at=0.45)
    gamma = _node(ax, 8.45, 1.65, "×γ", r=0.22, size=FONT)
    _arrow(ax, total.bottom, gamma.top)
    result = _box(ax, 8.1, 0.85, 1.4, 0.45, r"$\mathrm{ELMo}_k^{task}$", "output", size=11)
    _arrow(ax, gamma.bottom, (gamma.x, result.top[1]))
    _text(ax, 6.1, 1.75, "s = softmax(w);\nw and γ are learned\nfor each task, the\nbiLM stays frozen",
          size=SMALL, ha="left")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 6: attention


def _seq_row(ax: Axes, xs: Sequence[float], y: float, names: Sequence[str], kind: str) -> list[Box]:
    """A row of RNN states or tokens named with math symbols, linked left to right if recurrent."""
    boxes = _token_row(ax, names, xs, y, w=0.62, h=0.42, kinds=kind, size=11)
    if kind == "recurrent":
        for a, b in zip(boxes, boxes[1:]):
            _arrow(ax, a.right, b.left)
    return boxes


def seq2seq_attention(*, step: int = 2) -> Figure:
    """Encoder-decoder RNNs: (a) the whole source squeezed into one fixed vector c; (b) with
    attention (Bahdanau et al., 2015), decoder step ``step`` builds its own context c_i from all
    the encoder states."""
    check_int(step, "step", minimum=1, maximum=3)
    fig, ax = _canvas(9.0, 6.9)
    enc_x = _spread(2.0, 4, 0.95)
    src = [rf"$x_{j}$" for j in range(1, 5)]

    _text(ax, 0.1, 6.6, "(a) one fixed vector between encoder and decoder (Sutskever et al., 2014; "
          "Cho et al., 2014)", size=FONT, bold=True, ha="left")
    dec_x = _spread(7.3, 3, 0.95)
    tokens = _seq_row(ax, enc_x, 4.55, src, "input")
    enc = _seq_row(ax, enc_x, 5.35, [rf"$h_{j}$" for j in range(1, 5)], "recurrent")
    for a, b in zip(tokens, enc):
        _arrow(ax, a.top, b.bottom)
    c = _box(ax, 5.05, 5.35, 0.62, 0.42, r"$c$", "attention", size=12)
    _text(ax, 5.05, 4.95, "(B, H), however\nlong the source", size=SMALL, va="top")
    dec = _seq_row(ax, dec_x, 5.35, [rf"$s_{i}$" for i in range(1, 4)], "recurrent")
    _arrow(ax, enc[-1].right, c.left)
    _arrow(ax, c.right, dec[0].left)
    for i, box in enumerate(dec):
        out = _box(ax, box.x, 6.1, 0.62, 0.38, rf"$y_{i + 1}$", "output", size=11)
        _arrow(ax, box.top, out.bottom)
    _text(ax, 8.9, 4.6, "each step also reads its previous output\n(and c itself, in Cho et al.'s model)",
          size=SMALL, ha="right")
    ax.add_line(Line2D([0.1, 8.9], [4.2, 4.2], color="#BBBBBB", lw=1.0))

    _text(ax, 0.1, 3.95, "(b) with attention (Bahdanau et al., 2015): a new context vector at "
          "every decoder step", size=FONT, bold=True, ha="left")
    tokens = _seq_row(ax, enc_x, 0.45, src, "input")
    enc = _seq_row(ax, enc_x, 1.25, [rf"$h_{j}$" for j in range(1, 5)], "recurrent")
    for a, b in zip(enc, enc[1:]):       # the encoder is bidirectional: a second chain backwards
        _arrow(ax, (b.left[0], b.y - 0.12), (a.right[0], a.y - 0.12))
    for a, b in zip(tokens, enc):
        _arrow(ax, a.top, b.bottom)
    _text(ax, enc[-1].right[0] + 0.15, 1.25,
          r"bidirectional encoder: $h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j]$", size=SMALL,
          ha="left")
    dec = _seq_row(ax, _spread(6.4, 3, 1.3), 3.0, [rf"$s_{i}$" for i in range(1, 4)], "recurrent")
    for i, box in enumerate(dec):
        out = _box(ax, box.x, 3.6, 0.62, 0.32, rf"$y_{i + 1}$", "output", size=11)
        _arrow(ax, box.top, out.bottom)
    target, y_bus, weight = dec[step - 1], 2.1, dict(color="#B07000")
    ctx = _node(ax, target.x, y_bus, "Σ")
    _arrow(ax, ctx.top, target.bottom)
    _text(ax, ctx.x + 0.25, y_bus, r"$c_i = \sum_j \alpha_{ij} h_j$", size=11, ha="left")
    for j, (box, alpha) in enumerate(zip(enc, (0.1, 0.6, 0.2, 0.1)), start=1):
        _arrow(ax, box.top, (box.x, y_bus), head=False, lw=0.8 + 5 * alpha, **weight)
        _text(ax, box.x + 0.1, 1.8, rf"$\alpha_{{i{j}}}$", size=11, ha="left")
    _arrow(ax, (enc[0].x, y_bus), ctx.left, lw=1.4, **weight)
    _text(ax, 0.55, y_bus + 0.12, r"$\alpha_{ij} = \mathrm{softmax}_j\; a(s_{i-1}, h_j)$", size=11,
          ha="left", va="bottom")
    if step > 1:
        query = dec[step - 2]
        _arrow(ax, query.bottom, (ctx.x - 0.12, ctx.y + 0.12), dashed=True)
        _text(ax, query.x - 0.1, 2.5, r"query $s_{i-1}$", size=SMALL, ha="right")
    return fig


def attention(*, shapes: bool = True) -> Figure:
    """Vaswani et al. (2017), Figure 2 redrawn: scaled dot-product attention (left) and multi-head
    attention (right), with tensor shapes on the edges when ``shapes``."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 6.2)

    def shape(text: str) -> str:
        return text if shapes else ""

    _text(ax, 2.15, 5.9, "Scaled dot-product attention", size=TITLE, bold=True)
    col, w = 1.3, 1.7
    q, k, v = (_box(ax, x, 0.8, 0.9, 0.42, name, "input", size=11) for x, name in
               ((0.75, "Q"), (1.85, "K"), (3.6, "V")))
    if shapes:
        _text(ax, 2.2, 0.3, "Q, K, V:  (B, h, T, d_k) each", size=SMALL)
    mm1 = _box(ax, col, 1.7, w, 0.42, "MatMul   Q Kᵀ", "attention")
    scale = _box(ax, col, 2.5, w, 0.42, "Scale   ÷ √d_k", "attention")
    mask = _box(ax, col, 3.3, w, 0.42, "Mask (optional)", "attention", dashed=True)
    soft = _box(ax, col, 4.1, w, 0.42, "SoftMax over keys", "attention")
    mm2 = _box(ax, col, 4.9, w, 0.42, "MatMul   weights · V", "attention")
    _arrow(ax, q.top, (col - 0.3, mm1.bottom[1]))
    _arrow(ax, k.top, (col + 0.3, mm1.bottom[1]))
    _edge(ax, mm1.top, scale.bottom, shape("scores (B, h, T, T)"))
    _arrow(ax, scale.top, mask.bottom)
    _edge(ax, mask.top, soft.bottom, "hidden keys → −∞")
    _edge(ax, soft.top, mm2.bottom, shape("weights (B, h, T, T)"))
    _arrow(ax, v.top, (v.x, mm2.y), mm2.right)
    _edge(ax, mm2.top, (col, 5.55), shape("(B, h, T, d_k)"))
    ax.add_line(Line2D([4.45, 4.45], [0.2, 6.0], color="#BBBBBB", lw=1.0))

    _text(ax, 6.75, 5.9, "Multi-head attention", size=TITLE, bold=True)
    xs = (5.45, 6.75, 8.05)
    heads = _stack(ax, 6.75, 2.75, 3.5, 0.5, "Scaled dot-product attention", "attention")
    _text(ax, 5.05, 3.22, "h heads in parallel", size=SMALL, ha="left", va="bottom")
    for x, name in zip(xs, "QKV"):
        inp = _box(ax, x, 0.8, 0.9, 0.42, name, "input", size=11)
        lin = _stack(ax, x, 1.7, 0.9, 0.42, "Linear", "feedforward")
        _arrow(ax, inp.top, lin.bottom)
        _edge(ax, lin.top, (x, heads.bottom[1]), shape("(B, h, T, d_k)") if name == "V" else "",
              side="left")
    if shapes:
        _text(ax, 6.75, 0.3, "Q, K, V:  (B, T, d_model) each;   d_k = d_model / h", size=SMALL)
    concat = _box(ax, 6.75, 3.75, 1.6, 0.42, "Concat", "attention")
    out = _box(ax, 6.75, 4.6, 1.6, 0.42, "Linear", "feedforward")
    _edge(ax, heads.top, concat.bottom, shape("(B, h, T, d_k)"))
    _edge(ax, concat.top, out.bottom, shape("(B, T, h·d_k) = (B, T, d_model)"))
    _edge(ax, out.top, (6.75, 5.35), shape("(B, T, d_model)"))
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 7: the Transformer


def _sublayer(ax: Axes, x: float, y: float, text: str, kind: str, side: float) -> tuple[Box, Box]:
    """A sub-layer centred at ``(x, y)`` and its Add & Norm above it; the residual path leaves the
    incoming arrow just below the sub-layer and runs at x = ``side``. Returns both boxes."""
    block = _box(ax, x, y, 2.7, 0.5, text, kind, size=SMALL if "\n" in text else FONT)
    norm = _box(ax, x, y + 0.8, 2.7, 0.4, "Add & Norm", "norm")
    _arrow(ax, block.top, norm.bottom)
    split = y - 0.4
    _dot(ax, x, split)
    edge = norm.left if side < x else norm.right
    _arrow(ax, (x, split), (side, split), (side, norm.y), edge)
    return block, norm


def transformer_layers(*, shapes: bool = True) -> Figure:
    """Vaswani et al. (2017): one encoder layer (self-attention, feed-forward) and one decoder layer
    (masked self-attention, cross-attention over the encoder output, feed-forward), each sub-layer
    followed by a residual add and LayerNorm (post-LN, as in the paper)."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 7.0)
    ex, dx = 2.3, 6.4
    _text(ax, ex, 6.7, "Encoder layer (× N)", size=TITLE, bold=True)
    _text(ax, dx, 6.7, "Decoder layer (× N)", size=TITLE, bold=True)
    ff_text = "Feed-forward\nd_model → d_ff → d_model"

    def weights(shape: str) -> str:
        return f"\nweights {shape}" if shapes else ""

    attn, norm1 = _sublayer(ax, ex, 1.2, "Multi-head self-attention" + weights("(B, h, S, S)"), "attention", 0.65)
    ff, norm2 = _sublayer(ax, ex, 3.0, ff_text, "feedforward", 0.65)
    _edge(ax, (ex, 0.2), attn.bottom, "(B, S, d_model)" if shapes else "", at=0.35)
    _arrow(ax, norm1.top, ff.bottom)
    top = 4.75
    _arrow(ax, norm2.top, (ex, top), (4.4, top), (4.4, 3.0), (dx - 1.35, 3.0))
    _text(ax, 3.35, top + 0.07, "encoder output" + (" (B, S, d_model)" if shapes else ""),
          size=SMALL, va="bottom")
    _text(ax, 4.5, 3.07, "K, V", size=SMALL, ha="left", va="bottom")

    masked, norm1 = _sublayer(ax, dx, 1.2, "Masked multi-head self-attention" + weights("(B, h, T, T)"),
                              "attention", 8.1)
    cross, norm2 = _sublayer(ax, dx, 3.0, "Multi-head cross-attention" + weights("(B, h, T, S)"), "attention", 8.1)
    ff, norm3 = _sublayer(ax, dx, 4.8, ff_text, "feedforward", 8.1)
    _edge(ax, (dx, 0.2), masked.bottom, "(B, T, d_model)" if shapes else "", side="left", at=0.35)
    _edge(ax, norm1.top, cross.bottom, "Q", side="left", size=FONT)
    _arrow(ax, norm2.top, ff.bottom)
    _edge(ax, norm3.top, (dx, 6.35), "(B, T, d_model)" if shapes else "", side="left")
    for x in (0.65, 8.1):                                      # the residual paths, named once per layer
        ax.text(x + (0.06 if x < 4 else -0.06), 1.5, "residual", fontsize=SMALL, color=TEXT,
                ha="left" if x < 4 else "right", va="center", rotation=90, zorder=5)
    _text(ax, 0.2, 5.9, "Post-LN, as in the 2017 paper: each sub-layer\n"
          "gives LayerNorm(x + Sublayer(x)). GPT-2 and most\n"
          "later models use pre-LN: x + Sublayer(LayerNorm(x)).\n"
          "The residual path carries x past every sub-layer.", size=SMALL, ha="left")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapters 8-9: GPT and BERT


def decoder_only(*, shapes: bool = True) -> Figure:
    """An encoder-decoder Transformer (Vaswani et al., 2017; T5) beside a decoder-only one (GPT):
    GPT keeps the decoder's masked self-attention and feed-forward layers, drops the encoder and the
    cross-attention, and reads the prompt and its continuation as one sequence."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 5.2)
    ax.add_line(Line2D([4.6, 4.6], [0.5, 5.0], color="#BBBBBB", lw=1.0))
    _text(ax, 2.3, 4.85, "Encoder-decoder (Transformer, T5)", size=TITLE, bold=True)
    _text(ax, 6.8, 4.85, "Decoder-only (GPT)", size=TITLE, bold=True)

    ex, dx = 1.25, 3.4
    source = _box(ax, ex, 0.75, 1.7, 0.42, "source text", "input", size=SMALL)
    target = _box(ax, dx, 0.75, 1.7, 0.42, "target, shifted right", "input", size=SMALL)
    encoder = _stack(ax, ex, 2.3, 1.7, 1.1, "Encoder × N\nself-attention\n(sees all)\n+ FFN", "attention",
                     size=SMALL)
    decoder = _stack(ax, dx, 2.3, 1.7, 1.1, "Decoder × N\nmasked self-attn\n+ cross-attn\n+ FFN",
                     "attention", size=SMALL)
    out = _box(ax, dx, 3.95, 1.7, 0.42, "next target token", "output", size=SMALL)
    _arrow(ax, source.top, encoder.bottom)
    _arrow(ax, target.top, decoder.bottom)
    _edge(ax, encoder.right, decoder.left, "K, V", side="above")
    _arrow(ax, decoder.top, out.bottom)

    gx = 6.8
    text = _box(ax, gx, 0.75, 2.6, 0.42, "prompt + text generated so far", "input", size=SMALL)
    blocks = _stack(ax, gx, 2.3, 2.6, 1.1, "Decoder block × N\nmasked self-attention + FFN\n(no encoder, "
                    "no cross-attention)", "attention", size=SMALL)
    nxt = _box(ax, gx, 3.95, 2.6, 0.42, "next token (softmax over V)", "output", size=SMALL)
    _edge(ax, text.top, blocks.bottom, "(B, T, d_model)" if shapes else "", at=0.45)
    _arrow(ax, blocks.top, nxt.bottom)
    _text(ax, 4.6, 0.2, "Both generate left to right; only the encoder-decoder reads its input with "
          "attention that sees both sides.", size=SMALL)
    return fig


def what_each_model_sees(*, position: int = 2, matrices: bool = True) -> Figure:
    """What ELMo, GPT and BERT may look at to predict the word at ``position`` (0-based, in a
    five-word sentence); with ``matrices``, a second row of T x T visibility grids (row i: the
    positions that the vector at position i is computed from)."""
    words = ["the", "cat", "sat", "on", "mat"]
    check_int(position, "position", minimum=1, maximum=len(words) - 2)
    check_type(matrices, "matrices", bool)
    low = 2.6 if matrices else 0.0
    fig, ax = _canvas(9.0, 3.0 + low)
    n, word = len(words), words[position]

    def row(cx: float, y: float, visible: Callable[[int], bool], kind: str, target: str,
            target_kind: str) -> None:
        """One token row: the target position outlined, the visible ones coloured ``kind``."""
        for k, (x, w) in enumerate(zip(_spread(cx, n, 0.56), words)):
            if k == position:
                _box(ax, x, y, 0.52, 0.36, target, target_kind, size=SMALL, lw=2.2)
            else:
                _box(ax, x, y, 0.52, 0.36, w, kind if visible(k) else "input", size=SMALL)

    centres = (1.5, 4.5, 7.5)
    heads = (("ELMo", "two one-way LMs, concatenated"), ("GPT", "left to right only"),
             ("BERT", "both sides at once"))
    for cx, (name, sub) in zip(centres, heads):
        _text(ax, cx, low + 2.75, name, size=TITLE, bold=True)
        _text(ax, cx, low + 2.48, sub, size=SMALL, italic=True)
    cx = centres[0]
    _text(ax, cx, low + 2.15, "left-to-right LM", size=SMALL)
    row(cx, low + 1.85, lambda k: k < position, "visible", "?", "op")
    _text(ax, cx, low + 1.42, "right-to-left LM", size=SMALL)
    row(cx, low + 1.12, lambda k: k > position, "visible_back", "?", "op")
    _text(ax, cx, low + 0.6, f"each predicts “{word}” from one side;\ntrained together, sharing the token\nlayer and the softmax",
          size=SMALL)
    cx = centres[1]
    row(cx, low + 1.5, lambda k: k < position, "visible", "?", "op")
    _text(ax, cx, low + 0.8, f"predicts “{word}” from the words\nbefore it; later ones are hidden",
          size=SMALL)
    cx = centres[2]
    row(cx, low + 1.5, lambda k: True, "visible", "[MASK]", "masked")
    _text(ax, cx, low + 0.8, f"“{word}” is replaced by [MASK] and\npredicted from both sides",
          size=SMALL)
    if matrices:
        ax.add_line(Line2D([0.2, 8.8], [low + 0.25, low + 0.25], color="#BBBBBB", lw=1.0))
        cell, top = 0.3, low - 0.5
        _text(ax, 4.5, low + 0.02, "row i: the positions that the vector at position i is computed from",
              size=SMALL, italic=True)
        grids = (
            [[("visible", "visible_back") if i == j else "visible" if j < i else "visible_back"
              for j in range(n)] for i in range(n)],
            [["visible" if j <= i else "input" for j in range(n)] for i in range(n)],
            [["visible"] * n for _ in range(n)],
        )
        notes = ("blue: left-to-right, orange: right-to-left", "causal: position i sees j ≤ i",
                 "every position sees every position")
        for cx, cells, note in zip(centres, grids, notes):
            _grid(ax, cells, cx - n * cell / 2 + 0.15, top, cell, words)
            _text(ax, cx, 0.15, note, size=SMALL)
    return fig


def _math_token(token: str) -> str:
    r"""A WordPiece token as upright mathtext, for a subscript: "##ing" -> "\#\#\mathrm{ing}"."""
    stem = token.lstrip("#")
    return r"\#" * (len(token) - len(stem)) + rf"\mathrm{{{stem}}}"


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
    for a, b in zip(ins, outs):
        if a.w:
            _arrow(ax, a.top, (a.x, bert.bottom[1]))
            _arrow(ax, (b.x, bert.top[1]), b.bottom)
    return outs


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
        for row, yy in zip(rows, ys):
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
    for y, word, m, s in zip(ys, words, masked, sampled):
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
    for y, (source, target) in zip(ys, pairs):
        h = 0.4 + 0.17 * source.count("\n")
        a = _box(ax, 2.0, y, 3.8, h, source, size=SMALL)
        b = _box(ax, 7.4, y, 2.9, 0.4 + 0.17 * target.count("\n"), target, "output", size=SMALL)
        _arrow(ax, a.right, (model.left[0], y))
        _arrow(ax, (model.right[0], y), b.left)
    _text(ax, 4.5, 0.2, "One model, one objective (cross-entropy on the output text) for every task.",
          size=SMALL)
    return fig


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


#: every diagram by short name, so that a test (or a chapter) can draw them all
DIAGRAMS: dict[str, Callable[[], Figure]] = {
    "transfer": transfer,
    "nnlm": nnlm,
    "cbow_and_skipgram": cbow_and_skipgram,
    "huffman_tree": huffman_tree,
    "rnn_unrolled": rnn_unrolled,
    "lstm_cell": lstm_cell,
    "gru_cell": gru_cell,
    "elmo": elmo,
    "seq2seq_attention": seq2seq_attention,
    "attention": attention,
    "transformer_layers": transformer_layers,
    "decoder_only": decoder_only,
    "what_each_model_sees": what_each_model_sees,
    "bert_input": bert_input,
    "bert_finetuning": bert_finetuning,
    "gpt_input_transformations": gpt_input_transformations,
    "electra": electra,
    "t5_text_to_text": t5_text_to_text,
    "xlnet_factorisation": xlnet_factorisation,
}
