"""Diagrams for chapter 6: encoder-decoder RNNs without and with attention, scaled dot-product and
multi-head attention, masks, path length, the two-position tasks and their model, and the choice of a
pronoun head."""
from collections.abc import Sequence
from itertools import pairwise

from matplotlib.axes import Axes
from matplotlib.figure import Figure

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
    _choose_then_test,
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


@diagram
def two_position_model(*, heads: int = 2) -> Figure:
    """:class:`lmcourse.multihead_task.TwoPositionModel` with ``heads`` heads: token embeddings plus
    learned positions, one causal multi-head self-attention layer, a ReLU layer and a linear
    read-out, trained with cross-entropy at every position that has a target; tensor shapes on the
    edges. There is no residual connection and no LayerNorm."""
    check_int(heads, "heads", minimum=1, maximum=4)
    fig, ax = _canvas(9.0, 5.95)
    _text(ax, 0.1, 5.75, f"TwoPositionModel: one causal self-attention layer, h = {heads} "
          f"head{'s' if heads > 1 else ''}", size=TITLE, bold=True, ha="left")
    col, w = 2.55, 3.3
    x = _box(ax, col, 0.45, 1.6, 0.42, "token ids x", "input")
    _text(ax, col + 0.95, 0.45, "(B, T)", size=SMALL, ha="left")
    embed = _box(ax, col - 0.85, 1.45, 1.6, 0.5, "token embedding\n(num_inputs, d_model)", "embedding", size=SMALL)
    position = _box(ax, col + 0.95, 1.45, 1.6, 0.5, "learned positions\n(T, d_model)", "embedding", size=SMALL)
    _arrow(ax, x.top, (x.x, 0.95), (embed.x, 0.95), embed.bottom)
    plus = _node(ax, col, 2.3, "+")
    _arrow(ax, embed.top, (embed.x, plus.y), plus.left)
    _arrow(ax, position.top, (position.x, plus.y), plus.right)
    if heads > 1:
        att = _stack(ax, col, 3.25, w, 0.5, f"causal self-attention, {heads} heads", "attention", depth=heads - 1)
    else:
        att = _box(ax, col, 3.25, w, 0.5, "causal self-attention, 1 head", "attention")
    _edge(ax, plus.top, att.bottom, "h: (B, T, d_model)")
    hidden = _box(ax, col, 4.2, w, 0.46, "Linear d_model → d_hidden, ReLU", "feedforward")
    _edge(ax, att.top, hidden.bottom, "z: (B, T, d_model)", side="left")
    out = _box(ax, col, 5.05, w, 0.46, "Linear d_hidden → K: logits", "output")
    _edge(ax, hidden.top, out.bottom, "(B, T, d_hidden)", side="left")
    _text(ax, col, out.top[1] + 0.08, "(B, T, K)", size=SMALL, va="bottom")
    # the attention weights, read by the chapter's plots, not by the model
    weights = _box(ax, 6.55, att.y, 1.5, 0.42, "attention weights", "attention", size=SMALL, dashed=True)
    _edge(ax, (att.right[0] + 0.07 * min(heads - 1, 2), att.y), weights.left, f"(B, {heads}, T, T)", side="above",
          dashed=True)
    loss = _box(ax, 6.55, out.y, 2.0, 0.46, "cross-entropy with y", "output", size=SMALL)
    _arrow(ax, out.right, loss.left)
    _text(ax, loss.x, loss.bottom[1] - 0.06, "y: (B, T); positions without\na target (IGNORE) are skipped",
          size=SMALL, va="top")
    notes = (f"Each head has width d_model / h = d_model / {heads}. Side by\n"
             "side the heads fill one (d_model, d_model) matrix per\n"
             "projection, so the parameters do not depend on h.\n\n"
             "No residual connection, no LayerNorm: the ReLU layer\n"
             "sees only what attention gathered; even the token at t\n"
             "reaches it only through the weight t puts on itself.\n\n"
             "In this chapter: T = 16, d_model = 32, d_hidden = 64,\n"
             "K = 10; 10 input ids (digits) or 30 (coloured digits).")
    _text(ax, 4.75, 1.55, notes, size=SMALL, ha="left")
    return fig


#: the colours of the coloured-digit task, drawn on the digits themselves (strong Okabe-Ito hues)
_DIGIT_COLOURS = {"red": ACCENT, "blue": "#0072B2", "plain": TEXT}


def _digit_row(ax: Axes, digits: Sequence[tuple[int, str]], xs: Sequence[float], y: float) -> list[Box]:
    """One token box per (digit, colour), the digit in its colour with the colour's name beneath."""
    boxes = []
    for (digit, colour), x in zip(digits, xs, strict=True):
        box = _box(ax, x, y, 0.5, 0.56, "", "input", lw=1.8 if colour != "plain" else 1.0)
        _text(ax, x, y + 0.09, str(digit), size=12, bold=True, color=_DIGIT_COLOURS[colour])
        _text(ax, x, y - 0.17, colour, size=8, color=_DIGIT_COLOURS[colour])
        boxes.append(box)
    return boxes


def _read(ax: Axes, source: Box, target: Box, level: float, color: str, *, shift: float = 0.0) -> None:
    """An arrow from above ``source`` up to ``level``, across, and down onto ``target`` (``shift``
    inches right of its centre)."""
    x = target.x + shift
    _arrow(ax, source.top, (source.x, level), (x, level), (x, target.top[1]), color=color, lw=1.5)


@diagram
def coloured_digit_task() -> Figure:
    """The two tasks of :mod:`lmcourse.multihead_task` that need two positions at once: (a) two fixed
    offsets, y_t = (x_{t-1} - x_{t-3}) mod 10; (b) two positions that move, y_t = (latest red digit -
    latest blue digit) mod 10; (c) the two kinds of crossed position, where a score made of a colour
    term plus a recency term ranks the two latest tokens first only by favouring one colour."""
    fig, ax = _canvas(9.0, 8.5)
    pitch = 0.62
    # (a) fixed offsets
    _text(ax, 0.1, 8.3, r"(a) two fixed positions: $y_t = (x_{t-1} - x_{t-3})$ mod 10, at every $t$",
          size=FONT, bold=True, ha="left")
    digits = [(4, "plain"), (7, "plain"), (1, "plain"), (9, "plain"), (3, "plain"), (5, "plain"), (2, "plain")]
    row = _digit_row(ax, digits, [0.6 + pitch * k for k in range(len(digits))], 7.2)
    for k, box in enumerate(row):
        offset = len(row) - 1 - k
        _text(ax, box.x, 6.8, "t" if offset == 0 else f"t−{offset}", size=SMALL)
    target = _box(ax, 6.2, 7.2, 2.6, 0.5, r"$y_t$ = (5 − 9) mod 10 = 6", "output", size=SMALL)
    _read(ax, row[-2], target, 7.75, EDGE, shift=-0.2)     # the nearer source on the lower line: no crossing
    _read(ax, row[-4], target, 7.9, EDGE, shift=0.2)
    _arrow(ax, row[-1].right, target.left, dashed=True)
    _text(ax, 5.0, 6.75, "the same two offsets in every sequence: one fixed\npattern of weights can read both",
          size=SMALL, ha="left", va="top")
    _divider(ax, (0.1, 6.15), (8.9, 6.15))
    # (b) moving positions
    _text(ax, 0.1, 5.9, r"(b) two positions that move: $y_t$ = (latest red digit − latest blue digit) mod 10",
          size=FONT, bold=True, ha="left")
    digits = [(4, "plain"), (7, "red"), (2, "blue"), (5, "plain"), (9, "red"), (1, "plain"), (3, "blue"),
              (8, "plain"), (6, "plain")]
    row = _digit_row(ax, digits, [0.6 + pitch * k for k in range(len(digits))], 4.75)
    target = _box(ax, 7.35, 4.75, 2.5, 0.5, r"$y_t$ = (9 − 3) mod 10 = 6", "output", size=SMALL)
    _read(ax, row[4], target, 5.35, _DIGIT_COLOURS["red"], shift=0.2)
    _read(ax, row[6], target, 5.2, _DIGIT_COLOURS["blue"], shift=-0.2)
    for box, label, colour in ((row[4], "latest\nred", "red"), (row[6], "latest\nblue", "blue"),
                               (row[-1], "t", "plain")):
        _text(ax, box.x, 4.35, label, size=SMALL, va="top", color=_DIGIT_COLOURS[colour])
    _text(ax, (row[1].x + row[2].x) / 2, 4.35, "older red and\nblue: ignored", size=SMALL, va="top")
    _text(ax, 6.1, 4.35, "which positions to read depends\non the colours of the sequence;\n"
          "until both colours have appeared\nthere is no target", size=SMALL, ha="left", va="top")
    _divider(ax, (0.1, 3.15), (8.9, 3.15))
    # (c) the two kinds of crossing
    _text(ax, 0.1, 2.9, "(c) crossed positions: an older token of one colour lies after the latest of the other",
          size=FONT, bold=True, ha="left")
    kinds = ((("blue", "red"), "the older red 5 lies after the latest blue 2: recency ranks it\n"
                               "above the 2, so the colour term must favour blue"),
             (("red", "blue"), "the older blue 5 lies after the latest red 2: recency ranks it\n"
                               "above the 2, so the colour term must favour red"))
    for k, ((first, other), note) in enumerate(kinds):
        y = 2.15 - 1.05 * k
        digits = [(2, first), (0, "plain"), (5, other), (8, other), (1, "plain")]
        row = _digit_row(ax, digits, [0.6 + pitch * j for j in range(len(digits))], y)
        for box, label, colour in ((row[0], "latest", first), (row[2], "older", other),
                                   (row[3], "latest", other), (row[4], "t", "plain")):
            _text(ax, box.x, y - 0.4, label, size=SMALL, color=_DIGIT_COLOURS[colour])
        _text(ax, 3.7, y, note, size=SMALL, ha="left")
    _text(ax, 0.1, 0.2, "Where the token at t is plain, its query is the same in both kinds, and one head cannot "
          "favour blue and red at once;\ntwo heads can: each ranks one colour by recency.", size=SMALL, ha="left")
    return fig


@diagram
def pronoun_head_selection() -> Figure:
    """How the chapter picks a pronoun-resolving head of the pretrained six-layer encoder without
    fooling itself: 24 controlled sentences (4 templates, 6 word sets), every one of the 72 heads
    scored by whether the pronoun's query weighs the antecedent above the other candidate noun, the
    head chosen on word sets 0, 2 and 4 and tested on 1, 3 and 5, against the nearer-noun,
    first-noun and position-only baselines, which the design holds at one half, and the rule that reads
    only the pronoun, which the templates favour ("they" names the first noun, "them" the second)."""
    fig, ax = _canvas(9.0, 8.2)
    _text(ax, 0.1, 8.0, "Choosing a pronoun head on one half of the sentences and testing it on the other",
          size=TITLE, bold=True, ha="left")
    # 1: the sentences
    _text(ax, 0.1, 7.55, "1  24 sentences: 4 templates × 6 word sets; number agreement decides the antecedent",
          size=FONT, bold=True, ha="left")
    words = ["[CLS]", "the", "dog", "chased", "the", "horses", "all", "day", "because", "it", "was", "hungry",
             "[SEP]"]
    xs = _spread(4.5, len(words), 0.67)
    kinds = ["special" if w.startswith("[") else "input" for w in words]
    y = 6.55
    boxes = _token_row(ax, words, xs, y, w=0.63, kinds=kinds, size=SMALL)
    it, dog, horses = boxes[9], boxes[2], boxes[5]
    _arrow(ax, it.top, (it.x, y + 0.45), (dog.x, y + 0.45), dog.top, color=ACCENT, lw=1.5)
    _text(ax, (dog.x + it.x) / 2, y + 0.52, "antecedent: agrees with “it” in number", size=SMALL, va="bottom",
          color=ACCENT)
    _arrow(ax, it.bottom, (it.x, y - 0.42), (horses.x, y - 0.42), horses.bottom, color="#777777", dashed=True)
    _text(ax, (horses.x + it.x) / 2, y - 0.49, "the other candidate noun", size=SMALL, va="top")
    templates = (("the A verb the Bs … because it was ADJ", "A, the first noun"),
                 ("the As verb the B … because they were ADJ", "As, the first noun"),
                 ("the A verb the Bs and then followed them", "Bs, the second noun"),
                 ("the As verb the B and then followed it", "B, the second noun"))
    _text(ax, 0.3, 5.72, "template", size=SMALL, ha="left", bold=True)
    _text(ax, 3.55, 5.72, "antecedent", size=SMALL, ha="left", bold=True)
    for k, (template, antecedent) in enumerate(templates):
        _text(ax, 0.3, 5.45 - 0.24 * k, template, size=SMALL, ha="left")
        _text(ax, 3.55, 5.45 - 0.24 * k, antecedent, size=SMALL, ha="left")
    _text(ax, 5.55, 5.72, "Half the sentences open with three more\nwords, which move nouns and pronoun: the\n"
          "nearer noun, the first noun and any rule\nthat sees only positions are right on half.\n"
          "The pronoun is a cue: “they” names the\nfirst noun, “them” the second.", size=SMALL, ha="left",
          va="top")
    _divider(ax, (0.1, 4.5), (8.9, 4.5))
    # 2: scoring every head
    _text(ax, 0.1, 4.25, "2  Score every head on every sentence", size=FONT, bold=True, ha="left")
    y = 3.45
    encoder = _box(ax, 1.0, y, 1.6, 0.62, "pretrained\nencoder:\n6 layers × 12 heads", "model", size=SMALL)
    row = _box(ax, 3.85, y, 2.3, 0.62, "the pronoun's row:\nweight on the antecedent\n− weight on the other noun",
               "attention", size=SMALL)
    verdict = _box(ax, 7.35, y, 2.6, 0.62, "resolved = margin > 0;\nfor all 24 sentences:\n(24, 6, 12)", "output",
                   size=SMALL)
    _edge(ax, encoder.right, row.left, "(6, 12, T, T)", side="above")
    _edge(ax, row.right, verdict.left, "margin (6, 12)", side="above")
    _divider(ax, (0.1, 2.6), (8.9, 2.6))
    # 3: choose on one half, test on the other
    _text(ax, 0.1, 2.35, "3  Choose on one half, test on the other", size=FONT, bold=True, ha="left")
    _choose_then_test(ax, ("24 sentences", 1.2), ("selection: word sets 0, 2, 4\n(12 sentences)",
                                                 "held out: word sets 1, 3, 5\n(12 sentences)"),
                      ("choose the head that resolves the most;\nties: the larger mean margin",
                       "count the held-out sentences it resolves,\nbeside four baselines on the same 12\n"
                       "(one reads only the pronoun)"),
                      (1.65, 0.6), half_w=2.3, half_h=0.46, result_x=6.75, result_w=4.0)
    return fig
