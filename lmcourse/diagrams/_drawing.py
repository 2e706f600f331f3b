"""The diagrams' shared visual language: one colour per kind of part, the fonts, and the few
primitives every diagram is built from (box, stacked box, op node, arrow with an optional label,
token row, grid, divider), on a canvas whose data units are inches, so sizes and gaps read directly
as lengths on the page. :func:`diagram` registers a diagram for :data:`lmcourse.diagrams.DIAGRAMS`.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Polygon, Rectangle
from matplotlib.patheffects import Normal, withStroke

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
ACCENT = "#D55E00"   # a path or part the text points at (vermillion, full strength)
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


#: every diagram function, in the order the part modules registered them with :func:`diagram`
REGISTERED: list[Callable[..., Figure]] = []
_Diagram = TypeVar("_Diagram", bound=Callable[..., Figure])


def diagram(function: _Diagram) -> _Diagram:
    """Register ``function`` as a diagram; :mod:`lmcourse.diagrams` exports it under its own name."""
    REGISTERED.append(function)
    return function


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
        xs, ys = zip(*points[:-1], strict=True)
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


def _divider(ax: Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A thin grey line between two panels of one figure."""
    ax.add_line(Line2D([start[0], end[0]], [start[1], end[1]], color="#BBBBBB", lw=1.0))


def _spread(centre: float, n: int, pitch: float) -> list[float]:
    """``n`` positions ``pitch`` apart, centred on ``centre``."""
    return [centre + (i - (n - 1) / 2) * pitch for i in range(n)]


def _token_row(ax: Axes, tokens: Sequence[str], xs: Sequence[float], y: float, *, w: float,
               h: float = 0.4, kinds: str | Sequence[str] = "input", size: float = FONT) -> list[Box]:
    """One box per token at ``xs``; ``kinds`` is one kind or one per token. An "…" is text only."""
    kinds = [kinds] * len(tokens) if isinstance(kinds, str) else kinds
    boxes = []
    for token, x, kind in zip(tokens, xs, kinds, strict=True):
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


def _choose_then_test(ax: Axes, whole: tuple[str, float], halves: Sequence[str], results: Sequence[str],
                      ys: tuple[float, float], *, half_w: float, half_h: float, result_x: float,
                      result_w: float) -> None:
    """The flow of a choice made on one half of the data and tested on the other: a box ``whole``
    (label, width) at the left splits into the two ``halves`` (upper at ``ys[0]``, lower at ``ys[1]``);
    the upper leads to the choice, ``results[0]``, the lower to the test, ``results[1]``, and the
    choice passes down to the test."""
    label, whole_w = whole
    start = _box(ax, 0.2 + whole_w / 2, sum(ys) / 2, whole_w, 0.42, label, "input", size=SMALL)
    boxes = [_box(ax, 3.0, y, half_w, half_h, text, "input", size=SMALL) for y, text in zip(ys, halves, strict=True)]
    pick, test = (_box(ax, result_x, y, result_w, 0.5, text, "output", size=SMALL)
                  for y, text in zip(ys, results, strict=True))
    for half, result in zip(boxes, (pick, test), strict=True):
        _arrow(ax, start.right, (1.75, start.y), (1.75, half.y), half.left)
        _arrow(ax, half.right, result.left)
    _edge(ax, pick.bottom, test.top, "the chosen head", side="right")
