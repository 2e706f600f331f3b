"""Diagrams for chapter 3: word2vec's CBOW and skip-gram, and the hierarchical softmax's Huffman
tree."""

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from lmcourse import word2vec
from lmcourse.diagrams._drawing import (
    ACCENT,
    EDGE,
    FONT,
    PALETTE,
    SMALL,
    TITLE,
    _arrow,
    _box,
    _canvas,
    _divider,
    _edge,
    _spread,
    _text,
    _token_row,
    diagram,
)
from lmcourse.validate import check_int, check_type


@diagram
def cbow_and_skipgram(*, window: int = 2) -> Figure:
    """word2vec (Mikolov et al., 2013): CBOW averages the ``window`` words on each side to predict
    the centre word; skip-gram uses the centre word to predict each context word."""
    check_int(window, "window", minimum=1, maximum=3)
    fig, ax = _canvas(9.0, 5.0)
    offsets = [k for k in range(-window, window + 1) if k != 0]
    names = [rf"$w_{{t{k:+d}}}$" for k in offsets]
    pitch = min(0.95, 4.0 / len(offsets))
    _divider(ax, (4.5, 0.6), (4.5, 4.8))

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


@diagram
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
    for leaf, (code, point) in enumerate(zip(codes, points, strict=True)):
        for j, (bit, node) in enumerate(zip(code, point, strict=True)):
            kid = ("inner", point[j + 1]) if j + 1 < len(point) else ("leaf", leaf)
            children.setdefault(node, {})[bit] = kid
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
                       for bit, node in zip(codes[target], points[target], strict=True))
    target_code = "".join(map(str, codes[target]))
    _text(ax, 4.5, 0.3, rf"$P(\mathrm{{{word}}} \mid h) = {factors}$   (code {target_code}; "
          "inner nodes show merged counts)", size=FONT)
    return fig
