"""Diagrams for chapter 6: encoder-decoder RNNs without and with attention, and scaled dot-product
and multi-head attention."""
from collections.abc import Sequence
from itertools import pairwise

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from lmcourse.diagrams._drawing import (
    ACCENT,
    FONT,
    SMALL,
    TITLE,
    Box,
    _arrow,
    _box,
    _canvas,
    _divider,
    _edge,
    _grid,
    _node,
    _spread,
    _stack,
    _text,
    _token_row,
    diagram,
)
from lmcourse.validate import check_int, check_type


def _seq_row(ax: Axes, xs: Sequence[float], y: float, names: Sequence[str], kind: str) -> list[Box]:
    """A row of RNN states or tokens named with math symbols, linked left to right if recurrent."""
    boxes = _token_row(ax, names, xs, y, w=0.62, h=0.42, kinds=kind, size=11)
    if kind == "recurrent":
        for a, b in pairwise(boxes):
            _arrow(ax, a.right, b.left)
    return boxes


@diagram
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
    for a, b in zip(tokens, enc, strict=True):
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
    _divider(ax, (0.1, 4.2), (8.9, 4.2))

    _text(ax, 0.1, 3.95, "(b) with attention (Bahdanau et al., 2015): a new context vector at "
          "every decoder step", size=FONT, bold=True, ha="left")
    tokens = _seq_row(ax, enc_x, 0.45, src, "input")
    enc = _seq_row(ax, enc_x, 1.25, [rf"$h_{j}$" for j in range(1, 5)], "recurrent")
    for a, b in pairwise(enc):       # the encoder is bidirectional: a second chain backwards
        _arrow(ax, (b.left[0], b.y - 0.12), (a.right[0], a.y - 0.12))
    for a, b in zip(tokens, enc, strict=True):
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
    for j, (box, alpha) in enumerate(zip(enc, (0.1, 0.6, 0.2, 0.1), strict=True), start=1):
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


@diagram
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
        _text(ax, 2.2, 0.3, "Q, K: (B, h, T, d_k);  V: (B, h, T, d_v)", size=SMALL)
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
    _edge(ax, mm2.top, (col, 5.55), shape("(B, h, T, d_v)"))
    _divider(ax, (4.45, 0.2), (4.45, 6.0))

    _text(ax, 6.75, 5.9, "Multi-head attention", size=TITLE, bold=True)
    xs = (5.45, 6.75, 8.05)
    heads = _stack(ax, 6.75, 2.75, 3.5, 0.5, "Scaled dot-product attention", "attention")
    _text(ax, 5.05, 3.22, "h heads in parallel", size=SMALL, ha="left", va="bottom")
    for x, name in zip(xs, "QKV", strict=True):
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


@diagram
def self_attention_flow(*, numbers: bool = True) -> Figure:
    """Self-attention for one query, token by token (after Alammar's illustration): each input x_j
    is projected to q_j, k_j and v_j; the query q_1 is scored against every key, the scores are
    divided by √d_k and normalised by a softmax, and z_1 is the weighted sum of the values. With
    ``numbers``, the scores and weights of the "Thinking Machines" example."""
    check_type(numbers, "numbers", bool)
    fig, ax = _canvas(9.5, 4.6)
    rows = (3.05, 1.35)
    words = ("Thinking", "Machines")
    scores, scaled, weights = ("112", "96"), ("14", "12"), ("0.88", "0.12")
    headers = ((0.55, "token"), (1.5, "input\nvector"), (2.7, "three views\n(learned W)"),
               (5.05, "score:\nquery · key"), (6.65, "÷ √d_k,\nsoftmax over j"), (8.7, "output"))
    for x, text in headers:
        _text(ax, x, 4.3, text, size=SMALL, bold=True)
    ys_q = [y + 0.4 for y in rows]
    bus_x = 3.9
    for j, (y, word) in enumerate(zip(rows, words, strict=True), start=1):
        token = _box(ax, 0.55, y, 0.95, 0.4, word, "input", size=SMALL)
        x = _box(ax, 1.5, y, 0.5, 0.4, rf"$x_{j}$", "embedding", size=11)
        _arrow(ax, token.right, x.left)
        views = {}
        for name, dy, w_name in (("q", 0.4, "Q"), ("k", 0.0, "K"), ("v", -0.4, "V")):
            box = _box(ax, 2.95, y + dy, 0.5, 0.3, rf"${name}_{j}$", "attention", size=11)
            _arrow(ax, x.right, box.left, lw=0.9)
            _text(ax, 2.42, y + dy + (0.1 if dy >= 0 else -0.1), rf"$W^{w_name}$", size=8,
                  va="bottom" if dy >= 0 else "top")
            views[name] = box
        score_text = rf"$q_1 \cdot k_{j}$" + (f" = {scores[j - 1]}" if numbers else "")
        score = _box(ax, 5.05, y, 1.15, 0.4, score_text, "attention", size=SMALL)
        _arrow(ax, views["k"].right, (score.left[0], y - 0.08))
        _arrow(ax, (bus_x, y + 0.08), (score.left[0], y + 0.08), color=ACCENT)
        weight_text = (rf"{scaled[j - 1]} → $\alpha_{{1{j}}}$ = {weights[j - 1]}" if numbers
                       else rf"$\alpha_{{1{j}}}$")
        alpha = _box(ax, 6.65, y, 1.45, 0.4, weight_text, "attention", size=SMALL)
        _arrow(ax, score.right, alpha.left)
        times = _node(ax, 7.75, y, "×", r=0.15, size=11)
        _arrow(ax, alpha.right, times.left)
        v_line = views["v"].y
        _arrow(ax, views["v"].right, (times.x, v_line), times.bottom, lw=0.9)
        if j == 1:
            _arrow(ax, views["q"].right, (bus_x, ys_q[0]), (bus_x, rows[1] + 0.08), head=False, color=ACCENT)
    total = _node(ax, 8.35, sum(rows) / 2, "Σ", r=0.17)
    for y in rows:
        _arrow(ax, (7.9, y), (total.x, y), total.top if y > total.y else total.bottom, lw=0.9)
    z = _box(ax, 8.95, total.y, 0.5, 0.4, r"$z_1$", "attention", size=11)
    _arrow(ax, total.right, z.left)
    _text(ax, 4.75, 0.3, r"$z_1 = \sum_j \alpha_{1j} v_j$, with $\alpha_{1j} = \mathrm{softmax}_j"
          r"(q_1 \cdot k_j / \sqrt{d_k})$;  every token's output $z_i$ is computed the same way, "
          "all at once", size=SMALL)
    return fig


@diagram
def attention_masks(*, size: int = 4) -> Figure:
    """Which keys each query may attend to (rows: queries, columns: keys) under (a) a padding mask,
    (b) a causal mask and (c) both, for ``size`` tokens of which the last is padding; blocked scores
    are set to -∞ before the softmax, so their weights are exactly 0."""
    check_int(size, "size", minimum=3, maximum=4)
    words = ["the", "cat", "sat", "on", "mats"][: size - 1] + ["[PAD]"]
    cell = 0.42
    fig, ax = _canvas(9.0, 1.75 + size * cell)
    top = 0.95 + size * cell
    panels = (("(a) padding mask", "no query reads [PAD]", lambda i, j: j < size - 1),
              ("(b) causal mask", "query i reads keys j ≤ i", lambda i, j: j <= i),
              ("(c) both", "a padded decoder batch:\nblocked if either blocks", lambda i, j: j < size - 1 and j <= i))
    for k, (title, note, allowed) in enumerate(panels):
        left = 0.95 + k * 3.0
        cells = [["visible" if allowed(i, j) else "masked" for j in range(size)] for i in range(size)]
        _grid(ax, cells, left, top, cell, words)
        _text(ax, left + size * cell / 2, top + 0.62, title, size=FONT, bold=True, va="bottom")
        _text(ax, left + size * cell / 2, top - size * cell - 0.1, note, size=SMALL, va="top")
    _box(ax, 2.2, 0.2, 0.3, 0.22, "", "visible")
    _text(ax, 2.42, 0.2, "may attend: score kept", size=SMALL, ha="left")
    _box(ax, 5.0, 0.2, 0.3, 0.22, "", "masked")
    _text(ax, 5.22, 0.2, "blocked: score set to −∞, weight 0", size=SMALL, ha="left")
    return fig


@diagram
def luong_attention(*, shapes: bool = True) -> Figure:
    """One decoder step of Luong et al.'s (2015) global attention with input feeding: the new state
    s_t scores every encoder state, the context c_t and s_t make the attentional vector
    a_t = tanh(W_c [c_t; s_t]) (their h̃_t), which predicts y_t and is fed into the next step's input.
    With ``shapes``, tensor shapes on the edges."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 5.1)
    _text(ax, 0.1, 4.9, "Luong et al.'s global attention with input feeding: decoder step t", size=TITLE,
          bold=True, ha="left")
    _text(ax, 0.1, 4.55, r"Luong et al. write $h_t$ for $s_t$ and $\tilde h_t$ for $a_t$; our encoder is bidirectional",
          size=SMALL, ha="left")
    enc_x = _spread(1.75, 4, 0.8)
    tokens = _seq_row(ax, enc_x, 0.45, [rf"$x_{j}$" for j in range(1, 5)], "input")
    enc = _seq_row(ax, enc_x, 1.3, [rf"$h_{j}$" for j in range(1, 5)], "recurrent")
    for a, b in pairwise(enc):       # the encoder is bidirectional: a second chain backwards
        _arrow(ax, (b.left[0], b.y - 0.12), (a.right[0], a.y - 0.12))
    for a, b in zip(tokens, enc, strict=True):
        _arrow(ax, a.top, b.bottom)

    dec = _seq_row(ax, (4.7, 6.2, 7.75), 1.3, [r"$s_{t-1}$", r"$s_t$", r"$s_{t+1}$"], "recurrent")
    _text(ax, 3.85, 1.3, "…", size=11)
    _arrow(ax, (4.05, 1.3), dec[0].left)
    inputs = [_box(ax, box.x, 0.45, 1.25, 0.38, text, "input", size=SMALL) for box, text in
              zip(dec[1:], (r"$[E y_{t-1};\, a_{t-1}]$", r"$[E y_t;\, a_t]$"), strict=True)]
    for inp, box in zip(inputs, dec[1:], strict=True):
        _arrow(ax, inp.top, box.bottom)

    y_bus, weight = 2.45, dict(color="#B07000")
    ctx = _node(ax, 5.4, y_bus, "Σ")
    for j, (box, alpha) in enumerate(zip(enc, (0.1, 0.2, 0.6, 0.1), strict=True), start=1):
        _arrow(ax, box.top, (box.x, y_bus), head=False, lw=0.8 + 5 * alpha, **weight)
        _text(ax, box.x + 0.1, 1.95, rf"$\alpha_{{t{j}}}$", size=11, ha="left")
    _arrow(ax, (enc[0].x, y_bus), ctx.left, lw=1.4, **weight)
    _text(ax, 0.25, y_bus + 0.12, r"$\alpha_{tj} = \mathrm{softmax}_j\; s_t^\top W_a h_j$  (score with the new state)",
          size=SMALL, ha="left", va="bottom")
    if shapes:
        _text(ax, 3.45, 1.85, "h: (B, S, 2H)", size=SMALL, ha="left")
    _arrow(ax, (dec[1].x - 0.15, dec[1].top[1]), (ctx.x + 0.12, ctx.y - 0.12), dashed=True)
    _text(ax, 5.6, 1.95, r"query $s_t$", size=SMALL, ha="right")

    combine = _box(ax, 6.2, 3.4, 2.1, 0.42, r"$a_t = \tanh(W_c\,[c_t; s_t])$", "attention")
    _edge(ax, ctx.top, (ctx.x, combine.bottom[1]), r"$c_t$" + (" (B, 2H)" if shapes else ""), side="left")
    _edge(ax, (6.45, dec[1].top[1]), (6.45, combine.bottom[1]), r"$s_t$" + (" (B, H)" if shapes else ""),
          side="right", at=0.6)
    out = _box(ax, 6.2, 4.3, 2.1, 0.4, r"$p(y_t) = \mathrm{softmax}(W_s\, a_t)$", "output")
    _edge(ax, combine.top, out.bottom, r"$a_t$" + (" (B, H)" if shapes else ""), side="right")
    if shapes:
        _text(ax, out.x, out.top[1] + 0.08, "(B, V)", size=SMALL, va="bottom")
    feed = 8.75
    _arrow(ax, combine.right, (feed, combine.y), (feed, inputs[1].y), inputs[1].right, color=ACCENT)
    feed_label = "input feeding:\n" + r"$a_t$" + (" (B, H)" if shapes else "") + "\ngoes into\nstep t + 1"
    _text(ax, feed - 0.07, 2.45, feed_label, size=SMALL, ha="right", color=ACCENT)
    return fig


@diagram
def path_length(*, tokens: int = 5) -> Figure:
    """How many steps a signal from token 1 travels to reach position T (Vaswani et al.'s Table 1,
    last column): (a) T - 1 recurrent steps through an RNN; (b) one step through self-attention,
    whatever T is. ``tokens`` is T."""
    check_int(tokens, "tokens", minimum=3, maximum=6)
    fig, ax = _canvas(9.0, 3.3)
    names = [rf"$x_{j}$" for j in range(1, tokens + 1)]

    _text(ax, 2.2, 3.1, f"(a) RNN: path length T − 1 = {tokens - 1}", size=TITLE, bold=True)
    pitch = min(0.78, 3.9 / tokens)
    xs = _spread(2.2, tokens, pitch)
    inp = _token_row(ax, names, xs, 0.5, w=0.5, h=0.38, size=11)
    states = _token_row(ax, [rf"$h_{j}$" for j in range(1, tokens + 1)], xs, 1.6, w=0.5, h=0.4,
                        kinds="recurrent", size=11)
    _arrow(ax, inp[0].top, states[0].bottom, color=ACCENT, lw=2.0)
    for a, b in zip(inp[1:], states[1:], strict=True):
        _arrow(ax, a.top, b.bottom, lw=0.9)
    for a, b in pairwise(states):
        _arrow(ax, a.right, b.left, color=ACCENT, lw=2.0)
    _text(ax, 2.2, 2.2, f"{tokens - 1} recurrent steps from $x_1$ to $h_{tokens}$,\n"
          "each multiplying the gradient by a Jacobian", size=SMALL, va="bottom", color=ACCENT)
    _divider(ax, (4.45, 0.2), (4.45, 3.2))

    _text(ax, 6.75, 3.1, "(b) self-attention: path length 1", size=TITLE, bold=True)
    xs = _spread(6.75, tokens, pitch)
    inp = _token_row(ax, names, xs, 0.5, w=0.5, h=0.38, size=11)
    outs = _token_row(ax, [rf"$z_{j}$" for j in range(1, tokens + 1)], xs, 1.9, w=0.5, h=0.4,
                      kinds="attention", size=11)
    for box in inp[1:]:
        _arrow(ax, box.top, outs[-1].bottom, color="#AAAAAA", lw=0.8)
    _arrow(ax, inp[0].top, outs[-1].bottom, color=ACCENT, lw=2.0)
    _text(ax, 6.75, 2.35, f"one step: $z_{tokens}$ reads $x_1$ directly, whatever T is\n"
          "(grey: the other keys it reads)", size=SMALL, va="bottom", color=ACCENT)
    return fig
