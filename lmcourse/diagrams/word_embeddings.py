"""Diagrams for chapter 3: word2vec's CBOW and skip-gram, the hierarchical softmax's Huffman tree,
negative sampling's pull and push, the GloVe and PPMI + SVD pipelines, and the NNLM against word2vec."""

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


@diagram
def negative_sampling(*, negatives: int = 3) -> Figure:
    """Skip-gram with negative sampling (Mikolov et al., 2013): one training pair pulls the output
    vector of the observed context word towards the centre word's input vector and pushes the
    output vectors of ``negatives`` words drawn from the noise distribution away from it."""
    check_int(negatives, "negatives", minimum=1, maximum=4)
    fig, ax = _canvas(9.0, 4.6)
    _text(ax, 4.5, 4.35, "One skip-gram pair with negative sampling: pull the observed word, push the noise",
          size=TITLE, bold=True)
    centre = _box(ax, 0.9, 2.2, 1.1, 0.42, "fire", size=11)
    _text(ax, 0.9, 1.8, "centre word", size=SMALL)
    vec = _box(ax, 2.85, 2.2, 1.7, 0.5, r"input vector $v_{fire}$", "embedding")
    _edge(ax, centre.right, vec.left, "lookup", side="above")
    _text(ax, 2.85, 1.78, "(d,)", size=SMALL)
    noise = ["the", "monday", "shares", "said"][:negatives]
    ys = _spread(2.2, 1 + negatives, 0.8)[::-1]
    rows = [("crews", "observed context word", "pull: raise " + r"$\sigma(u_{crews} \cdot v)$", ACCENT)]
    rows += [(w, "drawn from " + r"$P_n \propto$ count$^{3/4}$", "push: lower " + rf"$\sigma(u_{{{w}}} \cdot v)$",
              EDGE) for w in noise]
    for y, (word, source, effect, color) in zip(ys, rows):
        out = _box(ax, 5.6, y, 1.55, 0.46, rf"$u_{{{word}}}$", "output")
        _arrow(ax, vec.right, out.left, color=color, dashed=color == EDGE)
        _text(ax, 6.5, y + 0.11, effect, size=SMALL, ha="left")
        _text(ax, 6.5, y - 0.13, source, size=SMALL, ha="left", italic=True)
    _text(ax, 4.5, 0.35, r"loss $= -\log \sigma(u_{crews} \cdot v) - \sum_k \log \sigma(-u_{k} \cdot v)$:"
          f" {1 + negatives} dot products of length d instead of a softmax over V", size=SMALL)
    return fig


def _pipeline(ax, steps, y: float, pitch: float, width: float, x0: float) -> None:
    """Boxes ``(text, kind, shape below)`` left to right at height ``y``, joined by arrows."""
    boxes = []
    for k, (text, kind, shape) in enumerate(steps):
        box = _box(ax, x0 + k * pitch, y, width, 0.95, text, kind, size=SMALL)
        if shape:
            _text(ax, box.x, y - 0.65, shape, size=SMALL)
        boxes.append(box)
    for a, b in zip(boxes, boxes[1:]):
        _arrow(ax, a.right, b.left)


@diagram
def glove_pipeline() -> Figure:
    """GloVe (Pennington et al., 2014) as the course runs it: count co-occurrences in a window with
    1/d weights, keep the non-zero cells, fit w_i . w~_j + b_i + b~_j to log X_ij by weighted least
    squares with per-cell AdaGrad, and hand out w + w~."""
    fig, ax = _canvas(9.0, 2.6)
    _text(ax, 4.5, 2.35, "GloVe: fit dot products to the logarithm of the counts seen", size=TITLE, bold=True)
    _pipeline(ax, [("corpus\n(tokens)", "input", "N tokens"),
                   ("co-occurrence\ncounts X\nwindow 5, 1/d", "embedding", "(V, V), symmetric"),
                   ("non-zero cells\n(i, j, X_ij)\n~2.6% of X", "embedding", "(nnz,)"),
                   ("f(X_ij)(w_i.w~_j + b_i\n+ b~_j - log X_ij)^2\nAdaGrad, cell by cell", "output",
                    "(V, d) x 2, (V,) x 2"),
                   ("word vectors\nw + w~", "embedding", "(V, d)")], 1.35, 1.75, 1.55, 0.95)
    _text(ax, 4.5, 0.25, "Cells that are zero never enter the loss: pairs never seen together constrain nothing.",
          size=SMALL)
    return fig


@diagram
def ppmi_svd_pipeline() -> Figure:
    """PPMI + SVD: the same counts, reweighted by positive PMI (context counts raised to 3/4), then
    a truncated SVD M ~ U_d S_d V_d^T whose rows U_d S_d^(1/2) are the word vectors."""
    fig, ax = _canvas(9.0, 2.6)
    _text(ax, 4.5, 2.35, "PPMI + SVD: reweight the counts, then factorise the whole matrix", size=TITLE, bold=True)
    _pipeline(ax, [("corpus\n(tokens)", "input", "N tokens"),
                   ("co-occurrence\ncounts X\nwindow 5, 1/d", "embedding", "(V, V)"),
                   ("PPMI = max(0,\nlog P(w,c) /\nP(w) P(c)^0.75)", "output", "(V, V), sparse"),
                   ("truncated SVD\nM ~ U_d S_d V_d^T\nzeros included", "output", "d singular values"),
                   ("word vectors\nU_d S_d^1/2", "embedding", "(V, d)")], 1.35, 1.75, 1.55, 0.95)
    _text(ax, 4.5, 0.25, "No training loop: the best rank-d fit, in squared error, of every cell, zeros included.",
          size=SMALL)
    return fig


@diagram
def nnlm_vs_word2vec() -> Figure:
    """Where the NNLM (Bengio et al., 2003) and word2vec (Mikolov et al., 2013) differ: the NNLM
    concatenates the left context, passes it through a tanh hidden layer and a softmax over the
    vocabulary; skip-gram scores a word by one dot product of two looked-up vectors, trained with
    negative sampling."""
    fig, ax = _canvas(9.0, 4.8)
    _divider(ax, (4.5, 0.5), (4.5, 4.4))
    cx = 2.25
    _text(ax, cx, 4.55, "NNLM: a language model", size=TITLE, bold=True)
    ctx = _token_row(ax, [r"$w_{t-3}$", r"$w_{t-2}$", r"$w_{t-1}$"], _spread(cx, 3, 0.95), 0.8, w=0.8, size=11)
    concat = _box(ax, cx, 1.75, 3.0, 0.45, "look up and concatenate", "embedding")
    for box in ctx:
        _arrow(ax, box.top, (box.x, concat.bottom[1]))
    hidden = _box(ax, cx, 2.75, 3.0, 0.45, "tanh hidden layer (h units)", "feedforward")
    soft = _box(ax, cx, 3.7, 3.0, 0.45, r"softmax over V: $P(w_t \mid$ left context$)$", "output")
    _edge(ax, concat.top, hidden.bottom, "(n m,)")
    _edge(ax, hidden.top, soft.bottom, "(h,)")
    _text(ax, cx, 0.3, "per word: n m h + h V (+ n m V) multiply-adds", size=SMALL)
    cx = 6.75
    _text(ax, cx, 4.55, "skip-gram: the vectors are the product", size=TITLE, bold=True)
    centre = _box(ax, cx, 0.8, 0.8, 0.4, r"$w_t$", size=11)
    vec = _box(ax, cx, 1.75, 3.0, 0.45, r"look up $v_{w_t}$ (no hidden layer)", "embedding")
    dots = _box(ax, cx, 2.75, 3.0, 0.45, r"$u_o \cdot v$ and K negatives $u_k \cdot v$", "op")
    out = _box(ax, cx, 3.7, 3.0, 0.45, r"K + 1 logistic decisions $\sigma(\pm u \cdot v)$", "output")
    _arrow(ax, centre.top, vec.bottom)
    _edge(ax, vec.top, dots.bottom, "(m,)")
    _edge(ax, dots.top, out.bottom, "(K + 1,)")
    _text(ax, cx, 0.3, "per word: (K + 1) m multiply-adds; both sides, order ignored", size=SMALL)
    return fig
