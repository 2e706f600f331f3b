"""Diagrams for chapters 4-5: the unrolled, stacked and bidirectional RNN, truncated BPTT, the LSTM and GRU
cells, and ELMo."""
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    ACCENT,
    EDGE,
    FONT,
    SMALL,
    TITLE,
    Box,
    _arrow,
    _box,
    _canvas,
    _divider,
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
    fig, ax = _canvas(8.0, 5.7 if equations else 4.55)
    up = 1.15 if equations else 0.0
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
    _edge(ax, g.top, times_i.bottom, r"$g_t$", size=12)
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
        _text(ax, 4.0, 0.85, r"$i_t = \sigma(W_{ii}\, x_t + W_{hi}\, h_{t-1} + b_i)$    "
              r"$f_t = \sigma(W_{if}\, x_t + W_{hf}\, h_{t-1} + b_f)$", size=FONT)
        _text(ax, 4.0, 0.5, r"$g_t = \tanh(W_{ig}\, x_t + W_{hg}\, h_{t-1} + b_g)$    "
              r"$o_t = \sigma(W_{io}\, x_t + W_{ho}\, h_{t-1} + b_o)$", size=FONT)
        _text(ax, 4.0, 0.15, r"$c_t = f_t \odot c_{t-1} + i_t \odot g_t$    $h_t = o_t \odot \tanh(c_t)$    "
              r"($b_i = b_{ii} + b_{hi}$, and so on)", size=FONT)
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


@diagram
def stacked_rnn(*, layers: int = 2) -> Figure:
    """A stacked (deep) RNN of ``layers`` layers unrolled over four steps: layer l reads layer l-1's
    state at the same step (layer 1 reads x_t) and its own state from the step before; each layer
    has its own weights, shared across time."""
    check_int(layers, "layers", minimum=2, maximum=3)
    steps = 4
    fig, ax = _canvas(8.5, 2.55 + 0.85 * layers)
    xs = [2.5 + 1.45 * k for k in range(steps)]
    ys = [1.45 + 0.85 * layer for layer in range(layers)]
    y_x, y_y = 0.45, ys[-1] + 0.95
    _text(ax, 0.1, y_x, "inputs (B, I)", size=SMALL, ha="left")
    _text(ax, 0.1, y_y, "outputs (B, V)", size=SMALL, ha="left")
    below = [_box(ax, x, y_x, 0.7, 0.4, rf"$x_{k + 1}$", size=12) for k, x in enumerate(xs)]
    for layer, y in enumerate(ys, start=1):
        _text(ax, 0.1, y, f"layer {layer}", size=SMALL, ha="left")
        prev = _box(ax, 1.3, y, 0.7, 0.45, rf"$h^{{({layer})}}_0$", "input", size=11)
        row = []
        for k, x in enumerate(xs):
            cell = _box(ax, x, y, 0.8, 0.45, rf"$h^{{({layer})}}_{k + 1}$", "recurrent", size=11)
            _edge(ax, prev.right, cell.left, rf"$W^{{({layer})}}_{{hh}}$" if k == 0 else "", side="above",
                  size=SMALL)
            _edge(ax, below[k].top, cell.bottom, rf"$W^{{({layer})}}_{{xh}}$" if k == 0 else "", size=SMALL)
            prev = cell
            row.append(cell)
        below = row
    for k, x in enumerate(xs):
        out = _box(ax, x, y_y, 0.7, 0.4, rf"$y_{k + 1}$", "output", size=12)
        _edge(ax, below[k].top, out.bottom, r"$W_{hy}$" if k == 0 else "", size=SMALL)
    _text(ax, 0.1, y_y + 0.65, r"$h^{(l)}_t = \tanh(W^{(l)}_{xh}\, h^{(l-1)}_t + W^{(l)}_{hh}\, "
          r"h^{(l)}_{t-1} + b^{(l)})$,  $h^{(0)}_t = x_t$:  every state (B, H); each layer its own "
          "weights, shared across time", size=SMALL, ha="left")
    return fig


@diagram
def bidirectional_rnn(*, focus: int = 2) -> Figure:
    """A bidirectional RNN (Schuster & Paliwal, 1997) over four inputs: a forward RNN reads x_1..x_4,
    a second one with its own weights reads x_4..x_1, and the state for step t is the concatenation
    of the two states at t (framed for the step at position ``focus``, 0-based)."""
    steps = 4
    check_int(focus, "focus", minimum=0, maximum=steps - 1)
    fig, ax = _canvas(8.5, 4.05)
    xs = _spread(3.75, steps, 1.3)
    y_f, y_x, y_b = 2.75, 1.75, 0.75
    _text(ax, 0.1, y_f, "forward RNN,\nleft to right", size=SMALL, ha="left")
    _text(ax, 0.1, y_x, "inputs (B, I)", size=SMALL, ha="left")
    _text(ax, 0.1, y_b, "backward RNN,\nright to left", size=SMALL, ha="left")
    fwd = [_box(ax, x, y_f, 0.8, 0.45, rf"$\overrightarrow{{h}}_{k + 1}$", "recurrent", size=12)
           for k, x in enumerate(xs)]
    inp = [_box(ax, x, y_x, 0.7, 0.4, rf"$x_{k + 1}$", size=12) for k, x in enumerate(xs)]
    bwd = [_box(ax, x, y_b, 0.8, 0.45, rf"$\overleftarrow{{h}}_{k + 1}$", "recurrent", size=12)
           for k, x in enumerate(xs)]
    for k in range(steps):
        _arrow(ax, inp[k].top, fwd[k].bottom)
        _arrow(ax, inp[k].bottom, bwd[k].top)
        if k + 1 < steps:
            _arrow(ax, fwd[k].right, fwd[k + 1].left)
            _arrow(ax, bwd[k + 1].left, bwd[k].right)
    _text(ax, (xs[0] + xs[1]) / 2, y_f - 0.15, r"$W_{hh}^{\rightarrow}$", size=SMALL, va="top")
    _text(ax, (xs[0] + xs[1]) / 2, y_b + 0.15, r"$W_{hh}^{\leftarrow}$", size=SMALL, va="bottom")
    top = y_f + 0.35
    ax.add_patch(FancyBboxPatch((xs[focus] - 0.5, y_b - 0.35), 1.0, top - y_b + 0.35,
                                boxstyle="round,pad=0,rounding_size=0.1", fc="none", ec=EDGE, lw=1.3, ls="--",
                                zorder=4))
    t = focus + 1
    out = _box(ax, 7.5, 2.3, 1.6, 0.7, rf"$h_{t} = [\overrightarrow{{h}}_{t};\ \overleftarrow{{h}}_{t}]$"
               + "\n(B, 2H)", "recurrent", size=11)
    _arrow(ax, (xs[focus], top), (xs[focus], 3.6), (out.x, 3.6), out.top)
    _text(ax, (xs[focus] + out.x) / 2, 3.65, "concatenate", size=SMALL, va="bottom")
    _text(ax, 7.5, 1.1, f"step {t} sees the whole input:\n" + rf"$\overrightarrow{{h}}_{t}$ has read "
          rf"$x_1, \ldots, x_{t}$," + "\n" + rf"$\overleftarrow{{h}}_{t}$ has read $x_{t}, \ldots, x_4$" + "\n"
          "(each direction has its own\nweights; every state (B, H))", size=SMALL)
    return fig


@diagram
def truncated_bptt(*, window: int = 3) -> Figure:
    """Truncated backpropagation through time with windows of ``window`` steps: stateless (each
    window from a zero state, at a random place in the stream) against stateful (row b of window
    n + 1 continues row b of window n, and starts from its final state, detached: the values cross
    the boundary, the gradient does not)."""
    check_int(window, "window", minimum=2, maximum=4)
    windows = 3
    fig, ax = _canvas(8.5, 5.2)
    gap = 0.75
    pitch = min(0.62, (8.3 - 1.35 - (windows - 1) * gap) / (windows * window))
    width = window * pitch
    starts = [1.35 + n * (width + gap) for n in range(windows)]
    panels = {"stateless": 3.55, "stateful": 1.15}
    _text(ax, 0.1, 4.85, "stateless: every window starts from zeros, at a random place in the stream",
          size=FONT, bold=True, ha="left")
    _text(ax, 0.1, 2.45, "stateful: window n + 1 continues window n and starts from its final state, detached",
          size=FONT, bold=True, ha="left")
    _divider(ax, (0.1, 2.75), (8.4, 2.75))
    for panel, y in panels.items():
        prev = None
        for n, x0 in enumerate(starts):
            cells = [_box(ax, x0 + (j + 0.5) * pitch, y, 0.68 * pitch, 0.4, "", "recurrent") for j in range(window)]
            ax.add_patch(FancyBboxPatch((x0 + 0.02, y - 0.6), width - 0.04, 1.2,
                                        boxstyle="round,pad=0,rounding_size=0.08", fc="none", ec="#888888",
                                        lw=0.9, zorder=1))
            where = f"random place {n + 1}" if panel == "stateless" else f"window {n + 1}"
            _text(ax, x0 + width / 2, y + 0.75, where, size=SMALL)
            for a, b in zip(cells, cells[1:], strict=False):
                _arrow(ax, a.right, b.left)
            for c in cells:
                _arrow(ax, (c.x, c.y + 0.2), (c.x, c.y + 0.45), head=True, lw=0.9)
            _arrow(ax, (cells[-1].x, y - 0.35), (cells[0].x - 0.12, y - 0.35), (cells[0].x - 0.12, y - 0.22),
                   color=ACCENT, dashed=True)
            if panel == "stateless":
                zero = _node(ax, x0 - 0.3, y, "0", r=0.15, size=FONT)
                _arrow(ax, zero.right, cells[0].left)
            elif prev is None:
                zero = _node(ax, x0 - 0.3, y, "0", r=0.15, size=FONT)
                _arrow(ax, zero.right, cells[0].left)
            else:
                _arrow(ax, prev.right, cells[0].left, lw=1.6)
                cut = (prev.right[0] + cells[0].left[0]) / 2
                ax.plot([cut, cut], [y - 0.5, y + 0.3], color=ACCENT, lw=1.6, zorder=4)
                _text(ax, cut, y - 0.62, "✂ detach", size=SMALL, color=ACCENT)
            prev = cells[-1]
    _text(ax, 0.1, 0.2, "→ state (forward pass)     ↑ prediction and loss at every step     "
          "⇠ gradient (backward pass), only inside a window", size=SMALL, ha="left")
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
