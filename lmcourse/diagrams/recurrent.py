"""Diagrams for chapters 4-5: the unrolled, stacked and bidirectional RNN, truncated BPTT, the LSTM and GRU
cells, and ELMo (the biLM with its scalar mix, the sense probe's procedure, the character CNN with its highway layer,
the tagger)."""
import inspect

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    ACCENT,
    EDGE,
    FONT,
    SMALL,
    TEXT,
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
from lmcourse.elmo import CharCNN
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
    """The input bus of an LSTM or GRU cell: x_t (B, I) from below joins h_{t-1} (B, H) into
    [h_{t-1}, x_t] (B, H + I).

    ``h_from``: where h_{t-1} comes down from (GRU); None brings it in from the left (LSTM).
    """
    if h_from is None:
        _text(ax, 0.7, y_bus, r"$h_{t-1}$", size=12, ha="right")
        _text(ax, 0.7, y_bus - 0.27, "(B, H)", size=SMALL, ha="right")
        _arrow(ax, (0.75, y_bus), (1.3, y_bus), head=False)
    else:
        _arrow(ax, h_from, (h_from[0], y_bus), (1.3, y_bus), head=False)
    _arrow(ax, (1.3, y_bus - 0.6), (1.3, y_bus), head=False)
    _text(ax, 1.3, y_bus - 0.65, r"$x_t$", size=12, va="top")
    _text(ax, 1.45, y_bus - 0.75, "(B, I)", size=SMALL, ha="left")
    _dot(ax, 1.3, y_bus)
    _arrow(ax, (1.3, y_bus), (bus_to, y_bus), head=False)
    _text(ax, 1.45, y_bus - 0.07, r"$[h_{t-1}, x_t]$  (B, H + I)", size=11, ha="left", va="top")


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
    × and + touch; shapes for a batch of B, input size I and hidden size H."""
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
    _text(ax, 0.7, y_c - 0.27, "(B, H)", size=SMALL, ha="right")
    _arrow(ax, (0.75, y_c), times_f.left, **highway)
    _arrow(ax, times_f.right, plus.left, **highway)
    _arrow(ax, plus.right, (7.45, y_c), **highway)
    _text(ax, 7.5, y_c, r"$c_t$", size=12, ha="left")
    _text(ax, 7.5, y_c - 0.27, "(B, H)", size=SMALL, ha="left")
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
    _text(ax, 7.5, times_o.y - 0.27, "(B, H)", size=SMALL, ha="left")
    _text(ax, 2.55, y_bus - 0.55, "each gate: (B, H + I) @ (H + I, H) → (B, H); "
          r"$f_t, i_t, g_t, o_t$ all (B, H)", size=SMALL, ha="left")
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
    state as a gated mix of the old state and the candidate; shapes for a batch of B, input size I
    and hidden size H."""
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
    _text(ax, 7.5, y_h - 0.27, "(B, H)", size=SMALL, ha="left")
    _text(ax, 0.7, y_h - 0.27, "(B, H)", size=SMALL, ha="right")
    _text(ax, 2.1, y_bus - 0.55, "reset and update gates: (B, H + I) @ (H + I, H) → (B, H); "
          r"$r_t, z_t, \tilde{h}_t$ all (B, H)", size=SMALL, ha="left")
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
    """ELMo's biLM (Peters et al., 2018) as the course's :class:`~lmcourse.elmo.BiLM` builds it: a
    two-layer forward LSTM LM and a separate two-layer backward LSTM LM over one shared word table
    (the real ELMo computes the token vectors with a character CNN), both predicting through one
    shared softmax layer, with no residual connection (the real ELMo has one); on the right, the
    task's scalar mix of the layers of the token at position ``focus`` (0-based), with weights
    softmax(s) and scale γ, as :class:`~lmcourse.elmo.ScalarMix` computes it."""
    tokens = ["the", "cat", "sat", "down"]
    check_int(focus, "focus", minimum=0, maximum=len(tokens) - 1)
    fig, ax = _canvas(9.4, 6.3)
    xs = _spread(3.45, len(tokens), 1.05)
    rows = {"fwd2": 4.95, "fwd1": 4.2, "emb": 3.45, "bwd1": 2.7, "bwd2": 1.95}
    labels = {"fwd2": "forward LSTM 2", "fwd1": "forward LSTM 1", "emb": "word table $\\Theta_x$\n(shared)",
              "bwd1": "backward LSTM 1", "bwd2": "backward LSTM 2"}
    y_top, y_bottom = 5.55, 1.35                               # the shared softmax, drawn above and below
    for key, y in rows.items():
        _text(ax, 0.1, y, labels[key], size=SMALL, ha="left")
    _text(ax, 0.1, 6.05, "predicts next", size=SMALL, ha="left")
    _text(ax, 0.1, 0.88, "predicts previous", size=SMALL, ha="left")
    for y in (y_top, y_bottom):
        _text(ax, 0.1, y, "softmax $\\Theta_s$\n(shared)", size=SMALL, ha="left")
        _box(ax, 3.45, y, xs[-1] - xs[0] + 0.75, 0.3, r"softmax layer $\Theta_s$: Linear(d_model, V)", "output",
             size=SMALL)
    cells = {key: _token_row(ax, tokens if key == "emb" else ["LSTM"] * len(tokens), xs, y, w=0.75,
                             h=0.42, kinds="embedding" if key == "emb" else "recurrent", size=SMALL)
             for key, y in rows.items()}
    nexts, prevs = tokens[1:] + ["</S>"], ["<S>"] + tokens[:-1]
    for k in range(len(tokens)):
        _arrow(ax, cells["emb"][k].top, cells["fwd1"][k].bottom)
        _arrow(ax, cells["fwd1"][k].top, cells["fwd2"][k].bottom)
        _arrow(ax, cells["emb"][k].bottom, cells["bwd1"][k].top)
        _arrow(ax, cells["bwd1"][k].bottom, cells["bwd2"][k].top)
        _arrow(ax, cells["fwd2"][k].top, (xs[k], y_top - 0.15))
        _arrow(ax, (xs[k], y_top + 0.15), (xs[k], 5.95))
        _text(ax, xs[k], 6.0, nexts[k], size=SMALL, italic=True, va="bottom")
        _arrow(ax, cells["bwd2"][k].bottom, (xs[k], y_bottom + 0.15))
        _arrow(ax, (xs[k], y_bottom - 0.15), (xs[k], 0.98))
        _text(ax, xs[k], 0.93, prevs[k], size=SMALL, italic=True, va="top")
        if k + 1 < len(tokens):
            for key in ("fwd1", "fwd2"):
                _arrow(ax, cells[key][k].right, cells[key][k + 1].left)
            for key in ("bwd1", "bwd2"):
                _arrow(ax, cells[key][k + 1].left, cells[key][k].right)
    link = xs[-1] + 0.65                                       # one softmax: the two drawings are linked
    _arrow(ax, (xs[-1] + 0.375, y_top), (link, y_top), (link, y_bottom), (xs[-1] + 0.375, y_bottom),
           head=False, dashed=True)
    ax.text(link + 0.1, (y_top + y_bottom) / 2, "the same softmax weights in both directions", fontsize=SMALL,
            color=TEXT, rotation=90, ha="center", va="center", zorder=5)
    ax.add_patch(FancyBboxPatch((xs[focus] - 0.5, rows["bwd2"] - 0.3), 1.0, rows["fwd2"] - rows["bwd2"] + 0.6,
                                boxstyle="round,pad=0,rounding_size=0.1", fc="none", ec=EDGE, lw=1.3, ls="--",
                                zorder=4))

    _text(ax, 7.65, 6.05, f"scalar mix for token k = “{tokens[focus]}”", size=FONT, bold=True)
    texts = ((rows["fwd2"], "layer 2: biLSTM\n[forward; backward]"), (rows["fwd1"], "layer 1: biLSTM\n"
             "[forward; backward]"), (rows["emb"], r"layer 0: $[x_k;\ x_k]$" + "\nthe word vector, twice"))
    layers = [_box(ax, 6.7, y, 1.4, 0.55, text, "embedding" if y == rows["emb"] else "recurrent", size=SMALL)
              for y, text in texts]
    total = _node(ax, 8.45, rows["fwd1"], "Σ")
    for j, (layer, end) in enumerate(zip(layers, (total.top, total.left, total.bottom), strict=True)):
        if end[1] == layer.y:
            _arrow(ax, layer.right, end)
        else:
            _arrow(ax, layer.right, (end[0], layer.y), end)
        _text(ax, layer.right[0] + 0.04, layer.y + 0.04, rf"$\mathrm{{softmax}}(s)_{2 - j}$", size=SMALL,
              ha="left", va="bottom")
    _text(ax, 6.7, rows["emb"] - 0.42, "each (B, T, 2 d_model)", size=SMALL)
    gamma = _node(ax, 9.08, total.y, "×γ", r=0.2, size=FONT)
    _arrow(ax, total.right, gamma.left)
    result = _box(ax, 8.72, 2.6, 1.16, 0.45, r"$\mathrm{ELMo}_k^{task}$", "output", size=11)
    _arrow(ax, gamma.bottom, (gamma.x, result.top[1]))
    _text(ax, 8.72, 2.3, "(B, T, 2 d_model)", size=SMALL, va="top")
    _text(ax, 6.15, 2.25, "the weights softmax(s) are\npositive and sum to 1;\ns (L + 1 scalars) and γ are\n"
          "learned for each task;\nthe biLM stays frozen", size=SMALL, ha="left")
    _text(ax, 0.1, 0.42, r"Drawn as the course's BiLM: a word table $\Theta_x$ where the real ELMo computes each "
          "token's vector from its characters (a char-CNN),", size=SMALL, ha="left")
    _text(ax, 0.1, 0.17, r"and no residual connection (the real ELMo adds one to its second LSTM layer: "
          r"$h_2 = \mathrm{LSTM}_2(h_1) + h_1$).", size=SMALL, ha="left")
    return fig


@diagram
def probe_procedure(*, folds: int = 5, partitions: int = 6) -> Figure:
    """Chapter 5's probe of what a representation knows about a word's sense, step by step: labelled
    occurrences of one word (21-word windows, the word at token 11); one vector per occurrence from each
    representation (context baselines, the biLM's layers and halves, MiniLM's layers); ``folds`` folds of
    whole articles (:func:`~lmcourse.context_probe.group_folds`), each tested once by a probe trained on
    the others (:func:`~lmcourse.context_probe.probe_folds`: nearest class mean on vectors, naive Bayes on
    word ids) and scored by balanced accuracy; two representations compared fold by fold, with a verdict
    kept only if every change of up to 2 occurrences keeps it (:func:`~lmcourse.context_probe.robust_verdict`);
    steps 3 and 4 repeated on ``partitions`` partitions of the articles."""
    check_int(folds, "folds", minimum=3, maximum=6)
    check_int(partitions, "partitions", minimum=2, maximum=9)
    fig, ax = _canvas(9.6, 7.5)
    _text(ax, 0.1, 7.25, "The probe: from one word's labelled occurrences to a verdict", size=TITLE, bold=True,
          ha="left")

    # 1. the occurrences, 2. one vector per occurrence and representation
    _text(ax, 0.1, 6.85, "1. labelled occurrences of one word", size=FONT, bold=True, ha="left")
    for k, (window, label) in enumerate((("… they told us the news …", "label 0 (pronoun)"),
                                         ("… raids by US warplanes on …", "label 1 (country)"))):
        y = 6.4 - 0.5 * k
        _box(ax, 1.15, y, 2.1, 0.36, window, "input", size=SMALL)
        _text(ax, 2.3, y, label, size=SMALL, ha="left")
    _text(ax, 0.1, 5.3, "21-word windows, the word at token 11:\nids (N, 21), label (N,), article (N,)",
          size=SMALL, ha="left")
    _text(ax, 3.95, 6.85, "2. one vector per occurrence, from each representation", size=FONT, bold=True,
          ha="left")
    reps = (("input", "context baselines: the previous word, the next word, both (word ids);\n"
             "the mean layer-0 vector of the 20 or the 4 nearest words, (N, d)"),
            ("recurrent", "course biLM, the word's vector: layer 0; in layers 1 and 2 the forward\n"
             "half [:d] and the backward half [d:], (N, d) each, and both, (N, 2d)"),
            ("model", "MiniLM, the word's first word piece: layers 0 to 6, (N, 384)"))
    rep_boxes = [_box(ax, 6.7, 6.35 - 0.56 * k, 5.5, 0.46, text, kind, size=SMALL)
                 for k, (kind, text) in enumerate(reps)]
    for box in rep_boxes:
        _arrow(ax, (3.5, 5.9), box.left)

    # steps 3 and 4 inside a frame: repeated on every partition (step 5)
    frame_top, frame_bottom = 4.8, 0.7
    ax.add_patch(FancyBboxPatch((0.05, frame_bottom), 9.5, frame_top - frame_bottom,
                                boxstyle="round,pad=0,rounding_size=0.1", fc="none", ec=ACCENT, lw=1.3, ls="--",
                                zorder=1))
    _edge(ax, rep_boxes[-1].bottom, (rep_boxes[-1].x, frame_top), "each representation's vectors", side="right")

    # 3. folds of whole articles, each tested once
    _text(ax, 0.3, 4.5, f"3. {folds} folds of whole articles (no article on both sides), each tested once",
          size=FONT, bold=True, ha="left")
    cell_w, pitch, left, top = 2.2 / folds, 1.45 / folds, 0.95, 4.0      # the grid's size is fixed
    cell_h = min(0.24, pitch - 0.05)
    _text(ax, left - 0.08, top + 0.2, "fold", size=SMALL, ha="right")
    for f in range(folds):
        _text(ax, left + (f + 0.5) * cell_w, top + 0.15, str(f + 1), size=SMALL, va="bottom")
    for r in range(folds):
        y = top - r * pitch
        _text(ax, left - 0.08, y, f"round {r + 1}", size=SMALL, ha="right")
        for f in range(folds):
            _box(ax, left + (f + 0.5) * cell_w, y, cell_w - 0.05, cell_h, "test" if f == r else "",
                 "output" if f == r else "input", size=SMALL)
    grid_right, mid = left + folds * cell_w, top - (folds - 1) * pitch / 2
    probe = _box(ax, 4.95, mid + 0.4, 2.75, 0.62, "probe trained on the other folds:\nclass means (nearest "
                 "centroid) on\nvectors, naive Bayes on word ids", "feedforward", size=SMALL)
    score = _box(ax, 4.95, mid - 0.4, 2.75, 0.62, "balanced accuracy on the test fold:\nthe mean of the two "
                 "labels' hit rates\n(chance 0.5)", "output", size=SMALL)
    _arrow(ax, (grid_right + 0.05, probe.y), probe.left)
    _arrow(ax, probe.bottom, score.top)
    acc = _box(ax, 8.35, mid - 0.4, 1.9, 0.62, f"({folds},) accuracies per\nrepresentation,\npaired by fold",
               "op", size=SMALL)
    _edge(ax, score.right, acc.left, f"× {folds} rounds", side="above")

    # 4. the verdict on one comparison
    y4 = 1.7
    _text(ax, 0.3, 2.35, "4. compare two representations A and B, fold by fold", size=FONT, bold=True,
          ha="left")
    diff = _box(ax, 1.55, y4, 2.3, 0.6, f"d = acc_A − acc_B: ({folds},)\nits mean ± SE over folds", "op",
                size=SMALL)
    route = (2.55, 0.17)                                        # around step 4's heading, into the box's side
    _arrow(ax, acc.bottom, (acc.x, route[0]), (route[1], route[0]), (route[1], y4), diff.left)
    change = _box(ax, 4.6, y4, 3.0, 0.6, "recompute after every change of up to\n2 occurrences (a prediction "
                  "flipped)", "op", size=SMALL)
    _arrow(ax, diff.right, change.left)
    verdicts = ("ahead: mean > 2 SE in every change", "within: |mean| < 2 SE in every change",
                "behind: mean < −2 SE in every change", "otherwise (changes disagree): unresolved")
    for k, text in enumerate(verdicts):
        box = _box(ax, 7.95, y4 + 0.45 - 0.3 * k, 2.85, 0.25, text, "output" if k < 3 else "input",
                   size=SMALL)
        _arrow(ax, change.right, box.left)
    _text(ax, 0.3, 0.93, f"5. steps 3 and 4 on {partitions} partitions of the articles (fold seeds): "
          f"a comparison is reported as 'ahead on k of {partitions}'", size=FONT, bold=True, ha="left",
          color=ACCENT)
    _text(ax, 0.1, 0.42, "d = d_model = 96 in the chapter's biLM. Labels: the capital letter ('us', 'may', 'house', "
          "'court') or a hand-labelled sense ('power').", size=SMALL, ha="left")
    _text(ax, 0.1, 0.17, "One flipped prediction moves its fold's accuracy by up to 1 / (2n), n the fold's count of "
          "its rarer label (fold_moves).", size=SMALL, ha="left")
    return fig


@diagram
def char_cnn_highway(*, word: str = "cats") -> Figure:
    """ELMo's character encoder as the course's :class:`~lmcourse.elmo.CharCNN` builds it, for
    ``word``: its bytes (+1, 0 pads) -> character embeddings -> convolutions of widths 1 to 4, each
    max-pooled over the word -> concatenation -> one highway layer (Srivastava et al., 2015),
    y = g ⊙ ReLU(W_H x + b_H) + (1 - g) ⊙ x with gate g = σ(W_T x + b_T), drawn in detail on the
    right -> linear projection -> the token vector. Shapes use the class's default sizes, read from
    its signature; N is the number of words."""
    check_type(word, "word", str)
    if not (1 <= len(word) <= 6 and word.isascii() and word.isalnum()):
        raise ValueError(f"word must be 1 to 6 ASCII letters or digits, got {word!r}")
    defaults = {name: p.default for name, p in inspect.signature(CharCNN.__init__).parameters.items()}
    widths, filters, max_chars, char_dim = (defaults[k] for k in ("widths", "filters", "max_chars", "char_dim"))
    width = filters * len(widths)
    fig, ax = _canvas(9.4, 6.75)
    cx = 4.15
    rows = {"chars": 1.15, "emb": 1.95, "conv": 2.9, "max": 3.58, "cat": 4.15, "highway": 4.75, "proj": 5.35,
            "token": 5.95}
    _text(ax, 0.1, 6.5, "ELMo's token layer from characters, as the course's CharCNN computes it (N words)",
          size=TITLE, bold=True, ha="left")
    labels = {"chars": f"bytes + 1, 0 pads:\n(N, max_chars = {max_chars})",
              "emb": f"character embeddings\n(N, {max_chars}, char_dim = {char_dim})",
              "conv": f"Conv1d + ReLU, width w:\n(N, filters = {filters}, {max_chars + 1} − w)",
              "max": f"max over positions: (N, {filters})", "cat": f"concatenate: (N, {width})",
              "highway": f"highway layer: (N, {width})", "proj": "projection: (N, out_dim)",
              "token": "token vector $x_k$:\nout_dim = 96 in chapter 5"}
    for key, y in rows.items():
        _text(ax, 0.1, y, labels[key], size=SMALL, ha="left")

    pads = max(2, 6 - len(word))                                # padding up to max_chars, drawn in part
    chars = [*word, *[""] * pads, "…"]
    xs = _spread(cx, len(chars), 0.43)
    kinds = ["input"] * len(word) + ["special"] * pads + ["input"]
    boxes = _token_row(ax, chars, xs, rows["chars"], w=0.34, h=0.36, kinds=kinds)
    for box, char in zip(boxes, chars, strict=True):
        if box.w:
            _text(ax, box.x, rows["chars"] - 0.3, str(ord(char) + 1) if char else "0", size=SMALL, va="top")
    vectors = []
    for box, kind in zip(boxes, kinds, strict=True):
        if box.w:
            vec = _box(ax, box.x, rows["emb"], 0.2, 0.56, "", "embedding" if kind == "input" else "special")
            _arrow(ax, box.top, vec.bottom)
            vectors.append(vec)
        else:
            _text(ax, box.x, rows["emb"], "…", size=FONT)
    conv_xs = _spread(cx, len(widths), 0.98)
    left, right = min(xs[0] - 0.3, conv_xs[0] - 0.43), max(xs[-1] + 0.3, conv_xs[-1] + 0.43)
    ax.add_patch(FancyBboxPatch((left, rows["emb"] - 0.36), right - left, 0.72,
                                boxstyle="round,pad=0,rounding_size=0.06", fc="none", ec="#888888", lw=0.9, zorder=2))
    maxes = []
    for x, w in zip(conv_xs, widths, strict=True):
        conv = _box(ax, x, rows["conv"], 0.86, 0.5, f"width {w}\n{filters} filters", "feedforward", size=SMALL)
        _arrow(ax, (x, rows["emb"] + 0.36), conv.bottom)
        pool = _box(ax, x, rows["max"], 0.56, 0.3, "max", "op", size=SMALL)
        _arrow(ax, conv.top, pool.bottom)
        maxes.append(pool)
    cat = _box(ax, cx, rows["cat"], conv_xs[-1] - conv_xs[0] + 0.86, 0.32, "concatenate", "op", size=SMALL)
    for pool in maxes:
        _arrow(ax, pool.top, (pool.x, cat.bottom[1]))
    highway = _box(ax, cx, rows["highway"], 2.3, 0.36, "highway layer (detail on the right)", "feedforward",
                   size=SMALL)
    proj = _box(ax, cx, rows["proj"], 2.3, 0.36, f"Linear({width}, out_dim)", "feedforward", size=SMALL)
    token = _box(ax, cx, rows["token"], 2.3, 0.36, f"token vector for “{word}”", "embedding", size=SMALL)
    for a, b in ((cat, highway), (highway, proj), (proj, token)):
        _arrow(ax, a.top, b.bottom)

    # the highway layer in detail: x -> one Linear, split into a transform half and a gate half
    frame_left, frame_right, frame_bottom, frame_top = 6.25, 9.3, 0.95, 5.75
    ax.add_patch(FancyBboxPatch((frame_left, frame_bottom), frame_right - frame_left, frame_top - frame_bottom,
                                boxstyle="round,pad=0,rounding_size=0.1", fc="none", ec="#888888", lw=1.0,
                                ls="--", zorder=1))
    _arrow(ax, highway.right, (frame_left, highway.y), head=False, dashed=True, color="#888888", lw=1.0)
    _text(ax, (frame_left + frame_right) / 2, 5.52, "the highway layer", size=FONT, bold=True)
    x_carry, x_gate, x_transform = 6.65, 7.7, 8.75
    y_in, y_split, y_linear, y_fn, y_mul, y_sum = 1.3, 1.7, 2.2, 2.95, 3.7, 4.45
    _text(ax, x_carry, y_in - 0.05, f"x: (N, {width})", size=SMALL, va="top")
    _arrow(ax, (x_carry, y_in), (x_carry, y_mul - 0.17))
    _dot(ax, x_carry, y_split)
    linear = _box(ax, 8.2, y_linear, 1.6, 0.45, f"Linear({width}, 2 × {width}),\nsplit in two halves",
                  "feedforward", size=SMALL)
    _arrow(ax, (x_carry, y_split), (linear.x, y_split), linear.bottom)
    sigma = _box(ax, x_gate, y_fn, 0.5, 0.3, "σ", "op", size=FONT)
    relu = _box(ax, x_transform, y_fn, 0.6, 0.3, "ReLU", "op", size=SMALL)
    _edge(ax, (x_gate, linear.top[1]), sigma.bottom, r"$W_T x + b_T$", side="left")
    _edge(ax, (x_transform, linear.top[1]), relu.bottom, r"$W_H x + b_H$", side="left")
    times_carry, one_minus = _node(ax, x_carry, y_mul, "×"), _node(ax, 7.17, y_mul, "1−", size=FONT)
    times_transform, plus = _node(ax, x_transform, y_mul, "×"), _node(ax, x_gate, y_sum, "+")
    _arrow(ax, sigma.top, (x_gate, y_mul))
    _dot(ax, x_gate, y_mul)
    _text(ax, x_gate + 0.06, (sigma.top[1] + y_mul) / 2, "g", size=11, ha="left", italic=True)
    _arrow(ax, (x_gate, y_mul), times_transform.left)
    _arrow(ax, (x_gate, y_mul), one_minus.right)
    _arrow(ax, one_minus.left, times_carry.right)
    _arrow(ax, relu.top, times_transform.bottom)
    _arrow(ax, times_carry.top, (x_carry, y_sum), plus.left)
    _arrow(ax, times_transform.top, (x_transform, y_sum), plus.right)
    _arrow(ax, plus.top, (x_gate, y_sum + 0.5))
    _text(ax, x_gate + 0.08, y_sum + 0.45, f"y: (N, {width})", size=SMALL, ha="left")
    _text(ax, 0.1, 0.42, r"highway: $y = g \odot \mathrm{ReLU}(W_H x + b_H) + (1 - g) \odot x$ with gate "
          r"$g = \sigma(W_T x + b_T)$: each feature is a gated mix of a new value and the unchanged input.",
          size=SMALL, ha="left")
    _text(ax, 0.1, 0.17, "The real ELMo: 50 characters, 16-dimensional character embeddings, widths 1 to 7 with "
          "2,048 filters, two highway layers, projection to 512.", size=SMALL, ha="left")
    return fig


@diagram
def elmo_tagger(*, frozen: bool = True) -> Figure:
    """Chapter 5's :class:`~lmcourse.elmo.TokenTagger` (``layer_norm=True, with_token_layer=True``):
    the pretrained biLM's three layers of every token, each layer-normalised; the scalar mix
    γ Σ_j softmax(s)_j LN(h_{k,j}); the token layer beside the mix, [x_k; ELMo_k]; a one-hidden-layer
    MLP and the tag. ``frozen``: the biLM's weights stay fixed (thick edges: feature-based, as
    ELMo is used) or are fine-tuned with the task (``freeze=False``)."""
    check_type(frozen, "frozen", bool)
    tokens = ["troops", "from", "the", "us"]
    fig, ax = _canvas(9.6, 6.0)
    xs = _spread(3.2, len(tokens), 1.0)
    rows = {"tokens": 0.95, 0: 1.75, 1: 2.5, 2: 3.25}
    _text(ax, 0.1, 5.7, "ELMo features for a tagger: chapter 5's TokenTagger", size=TITLE, bold=True, ha="left")
    labels = {"tokens": "tokens: (B, T)\nlowercased ids", 0: "layer 0: table,\n[x; x] (B, T, 2d)",
              1: "layer 1: [→; ←]\n(B, T, 2d)", 2: "layer 2: [→; ←]\n(B, T, 2d)"}
    for key, y in rows.items():
        _text(ax, 0.1, y, labels[key], size=SMALL, ha="left")
    ins = _token_row(ax, tokens, xs, rows["tokens"], w=0.7, h=0.36, size=SMALL)
    edge = 2.2 if frozen else 1.0
    cells = {j: [_box(ax, x, rows[j], 0.7, 0.4, "[x; x]" if j == 0 else "[→; ←]",
                      "embedding" if j == 0 else "recurrent", size=SMALL, lw=edge) for x in xs] for j in range(3)}
    for k in range(len(tokens)):
        _arrow(ax, ins[k].top, cells[0][k].bottom)
        _arrow(ax, cells[0][k].top, cells[1][k].bottom)
        _arrow(ax, cells[1][k].top, cells[2][k].bottom)
        if k + 1 < len(tokens):
            for j in (1, 2):
                _arrow(ax, cells[j][k].right, cells[j][k + 1].left, both=True)
    bilm_note = ("pretrained biLM, frozen (thick edges): no gradient" if frozen
            else "pretrained biLM, fine-tuned with the task (freeze=False)")
    _text(ax, xs[0] - 0.35, 3.72, bilm_note, size=SMALL, ha="left", italic=True)
    _text(ax, xs[0] - 0.35, 4.02, "[→; ←]: two separate LSTM stacks, each reading only its own layer below",
          size=SMALL, ha="left")

    k = len(tokens) - 1
    _text(ax, 5.55, 3.72, "layer norm", size=SMALL)
    total = _node(ax, 7.05, rows[1], "Σ")
    split = 6.2                                                 # where x_k leaves the mix for the concatenation
    for j, end in ((2, total.top), (1, total.left), (0, total.bottom)):
        norm = _box(ax, 5.55, rows[j], 0.5, 0.3, "LN", "norm", size=SMALL)
        _arrow(ax, cells[j][k].right, norm.left)
        if j == 1:
            _arrow(ax, norm.right, end)
        else:
            _arrow(ax, norm.right, (end[0], rows[j]), end)
        _text(ax, norm.right[0] + 0.04, rows[j] + 0.04, rf"$\mathrm{{softmax}}(s)_{j}$", size=SMALL, ha="left",
              va="bottom")
    gamma = _node(ax, 7.55, rows[1], "×γ", r=0.19, size=FONT)
    _arrow(ax, total.right, gamma.left)
    concat = _box(ax, 8.8, rows[1], 0.95, 0.6, r"$[x_k;\ \mathrm{ELMo}_k]$" + "\n(B, T, 4d)", "op", size=SMALL)
    _arrow(ax, gamma.right, concat.left)
    _text(ax, 8.03, rows[1] - 0.06, r"$\mathrm{ELMo}_k$", size=SMALL, va="top")
    _dot(ax, split, rows[0])
    _arrow(ax, (split, rows[0]), (split, 1.3), (concat.x, 1.3), concat.bottom)
    _text(ax, 7.6, 1.25, r"$x_k$: the token layer, beside the mix", size=SMALL, va="top")
    mlp = _box(ax, 8.8, 3.4, 1.45, 0.55, "MLP: Linear(4d, 64),\nReLU, Linear(64, C)", "feedforward", size=SMALL)
    _arrow(ax, concat.top, mlp.bottom)
    logits = _box(ax, 8.8, 4.45, 1.3, 0.4, "logits (B, T, C)", "output", size=SMALL)
    _arrow(ax, mlp.top, logits.bottom)
    tag = _box(ax, 8.8, 5.2, 1.3, 0.45, f"tag for “{tokens[k]}”: 1\n(written “US”)", "output", size=SMALL)
    _arrow(ax, logits.top, tag.bottom)
    ax.add_patch(FancyBboxPatch((6.7, 2.0), 2.82, 1.85, boxstyle="round,pad=0,rounding_size=0.1", fc="none",
                                ec=ACCENT, lw=1.3, ls="--", zorder=1))
    learned = "learned with the task: s, γ, the MLP" if frozen else "learned: s, γ, the MLP and the biLM"
    _text(ax, 6.75, 3.97, learned, size=SMALL, ha="left", color=ACCENT)
    ax.add_patch(FancyBboxPatch((xs[k] - 0.45, rows[0] - 0.32), 0.9, rows[2] - rows[0] + 0.64,
                                boxstyle="round,pad=0,rounding_size=0.1", fc="none", ec=EDGE, lw=1.3, ls="--",
                                zorder=4))
    _text(ax, 0.1, 0.42, "d = d_model = 96 in the chapter's biLM (2d = 192, 4d = 384); C = 2 classes: capital "
          "mid-sentence or not.  LN has no parameters.", size=SMALL, ha="left")
    _text(ax, 0.1, 0.17, f"Drawn for token k = “{tokens[k]}”; the same mix and MLP run at every position."
          + ("  Frozen, the biLM's layers are computed once and stored." if frozen else
             "  Fine-tuned, the biLM runs forward and backward at every step."), size=SMALL, ha="left")
    return fig


@diagram
def memory_task(*, gap: int = 4) -> Figure:
    """The long-memory task of chapter 4 (``lmcourse.memory_task``) for a ``gap`` of 2 to 4 drawn: a
    signal symbol, ``gap`` random noise symbols and a query are read one per step; only the final
    state is classified, so the signal must be carried ``gap + 1`` steps through the recurrence."""
    check_int(gap, "gap", minimum=2, maximum=4)
    steps = gap + 2
    fig, ax = _canvas(8.5, 3.9)
    xs = _spread(4.55, steps, 0.95)
    y_x, y_h, y_out = 1.0, 2.05, 3.1
    noise = ["n", "k", "w", "z"][:gap]
    tokens = ["2", *noise, "?"]
    kinds = ["visible", *["masked"] * gap, "special"]
    inputs = _token_row(ax, tokens, xs, y_x, w=0.5, kinds=kinds, size=12)
    _text(ax, 0.1, y_x, "ids (B, gap + 2)", size=SMALL, ha="left")
    _text(ax, 0.1, y_h, "states (B, H)", size=SMALL, ha="left")
    _text(ax, 0.1, (y_x + y_h) / 2, "Embedding: (B, gap + 2, E)", size=SMALL, ha="left")
    prev = _box(ax, xs[0] - 0.95, y_h, 0.55, 0.42, r"$h_0$", "input", size=11)
    for k, (x, token) in enumerate(zip(xs, inputs, strict=True)):
        cell = _box(ax, x, y_h, 0.62, 0.42, rf"$h_{k + 1}$", "recurrent", size=11)
        _arrow(ax, token.top, cell.bottom)
        _arrow(ax, prev.right, cell.left, color=ACCENT if k > 0 else EDGE, lw=2.0 if k > 0 else 1.2)
        prev = cell
    out = _box(ax, xs[-1], y_out, 1.3, 0.42, "logits (B, C)", "output", size=SMALL)
    _edge(ax, prev.top, out.bottom, "Linear(H, C)", side="right")
    _text(ax, xs[-1] - 0.8, y_out, "trained to predict the signal, 2", size=SMALL, ha="right")
    _text(ax, xs[0], y_x - 0.3, "signal, one of C = 4", size=SMALL, va="top")
    _text(ax, xs[-1], y_x - 0.3, "query", size=SMALL, va="top")
    _text(ax, (xs[1] + xs[gap]) / 2, y_x - 0.62, f"grey: gap = {gap} noise symbols, drawn at random, that say nothing "
          "about the signal", size=SMALL, va="top")
    _text(ax, (xs[0] + xs[-2]) / 2, y_h + 0.42, f"the signal rides the recurrence {gap + 1} steps (orange)",
          size=SMALL, va="bottom", color=ACCENT)
    _text(ax, 0.1, 3.7, "Only the last state is classified; guessing scores 1 / C = 0.25. A model's limit is the "
          "longest gap it solves (every seed above 0.9).", size=SMALL, ha="left")
    return fig
