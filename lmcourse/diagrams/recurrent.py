"""Diagrams for chapters 4-5: the unrolled RNN, the LSTM and GRU cells, and ELMo."""
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    EDGE,
    FONT,
    SMALL,
    TITLE,
    Box,
    _arrow,
    _box,
    _canvas,
    _dot,
    _edge,
    _node,
    _spread,
    _text,
    _token_row,
    diagram,
)
from lmcourse.validate import check_int, check_type

# ---------------------------------------------------------------------------------------------
# Chapter 4: RNN and LSTM


@diagram
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
    for k, (x, t) in enumerate(zip(xs, times, strict=True)):
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


@diagram
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
              r"$i_t = \sigma(W_i [h_{t-1}, x_t] + b_i)$    $o_t = \sigma(W_o [h_{t-1}, x_t] + b_o)$",
              size=FONT)
        _text(ax, 4.0, 0.15, r"$\tilde{c}_t = \tanh(W_c [h_{t-1}, x_t] + b_c)$    "
              r"$c_t = f_t \odot c_{t-1} + i_t \odot \tilde{c}_t$    $h_t = o_t \odot \tanh(c_t)$",
              size=FONT)
    return fig


@diagram
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


@diagram
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
    for j, (layer, end) in enumerate(zip(reversed(layers), ends, strict=True)):
        _edge(ax, layer.right, end, rf"$s_{j}$", side="above" if j == 0 else "right", size=11,
              at=0.45)
    gamma = _node(ax, 8.45, 1.65, "×γ", r=0.22, size=FONT)
    _arrow(ax, total.bottom, gamma.top)
    result = _box(ax, 8.1, 0.85, 1.4, 0.45, r"$\mathrm{ELMo}_k^{task}$", "output", size=11)
    _arrow(ax, gamma.bottom, (gamma.x, result.top[1]))
    _text(ax, 6.1, 1.75, "s = softmax(w);\nw and γ are learned\nfor each task, the\nbiLM stays frozen",
          size=SMALL, ha="left")
    return fig
