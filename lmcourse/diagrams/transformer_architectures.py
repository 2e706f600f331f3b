"""Diagrams for chapters 7-9: the Transformer's encoder and decoder layers, the decoder-only design
beside the encoder-decoder, GPT-2's model around its residual stream, what ELMo, GPT and BERT each see,
generation with a key-value cache, and the two-head induction circuit."""
from collections.abc import Callable

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    ACCENT,
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
    _grid,
    _node,
    _spread,
    _stack,
    _text,
    _token_row,
    diagram,
)
from lmcourse.gpt import GPTConfig
from lmcourse.validate import check_int, check_type

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


@diagram
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

    attn, norm1 = _sublayer(ax, ex, 1.2, "Multi-head self-attention" + weights("(B, h, S, S)"),
                            "attention", 0.65)
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
    cross, norm2 = _sublayer(ax, dx, 3.0, "Multi-head cross-attention" + weights("(B, h, T, S)"),
                             "attention", 8.1)
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


@diagram
def transformer_model(*, shapes: bool = True) -> Figure:
    """Vaswani et al. (2017), the whole model: token embeddings scaled by sqrt(d_model) plus positional
    encodings, N encoder layers, N decoder layers whose cross-attention reads the encoder's output, and
    a linear layer and softmax over the target vocabulary."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 8.8)
    _text(ax, 4.5, 8.5, "The Transformer, the whole model (read from the bottom)", size=TITLE, bold=True)
    ex, dx, w = 2.3, 6.5, 3.0

    def shape(text: str) -> str:
        return text if shapes else ""

    for x, name, ids, vocab in ((ex, "source tokens", "(B, S)", "V_src"),
                                (dx, "target tokens, shifted right (BOS first)", "(B, T)", "V_tgt")):
        tokens = _box(ax, x, 0.45, w, 0.45, name, "input", size=SMALL)
        embed = _box(ax, x, 1.45, w, 0.5, f"Embedding ({vocab}, d_model), × √d_model", "embedding", size=SMALL)
        _edge(ax, tokens.top, embed.bottom, shape(ids + " ids"), side="right")
        plus = _node(ax, x, 2.45, "+")
        _edge(ax, embed.top, plus.bottom, shape(ids[:-1] + ", d_model)"), side="right")
        pe_x = x - 1.05 if x < 4.5 else x + 1.05
        pe = _box(ax, pe_x, 2.45, 1.1, 0.5, "positional\nencoding", "embedding", size=SMALL)
        _arrow(ax, pe.right if x < 4.5 else pe.left, plus.left if x < 4.5 else plus.right)
    encoder = _stack(ax, ex, 4.0, w, 1.5, "Encoder layer × N\nself-attention, Add & Norm\n"
                     "feed-forward, Add & Norm", "attention", size=SMALL)
    decoder = _stack(ax, dx, 4.3, w, 2.1, "Decoder layer × N\nmasked self-attention, Add & Norm\n"
                     "cross-attention, Add & Norm\nfeed-forward, Add & Norm", "attention", size=SMALL)
    _edge(ax, (ex, 2.62), encoder.bottom, shape("(B, S, d_model)"), side="right")
    _edge(ax, (dx, 2.62), decoder.bottom, shape("(B, T, d_model)"), side="right")
    _arrow(ax, encoder.top, (ex, 5.6), (4.3, 5.6), (4.3, 4.3), decoder.left)
    _text(ax, ex - 0.05, 5.68, "encoder output" + shape(" (B, S, d_model)"), size=SMALL, ha="left", va="bottom")
    _text(ax, ex + 0.1, 5.3, "read by every cross-attention\n(projected there to K and V)", size=SMALL, ha="left")
    linear = _box(ax, dx, 6.1, w, 0.5, "Linear d_model → V_tgt", "output", size=SMALL)
    softmax = _box(ax, dx, 6.95, w, 0.45, "softmax", "output", size=SMALL)
    out = _box(ax, dx, 7.8, w, 0.45, "P(next target token)", "output", size=SMALL)
    _edge(ax, decoder.top, linear.bottom, shape("(B, T, d_model)"), side="right")
    _edge(ax, linear.top, softmax.bottom, shape("(B, T, V_tgt)"), side="right")
    _arrow(ax, softmax.top, out.bottom)
    _text(ax, 0.25, 7.5, "Base model of the paper: N = 6, d_model = 512,\nh = 8 heads, d_ff = 2048, 65M parameters;\n"
          "one subword vocabulary (V_src = V_tgt), so the two\n"
          "embeddings and the output Linear share one weight matrix.",
          size=SMALL, ha="left")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapters 8-9: GPT and BERT


@diagram
def decoder_only(*, shapes: bool = True) -> Figure:
    """An encoder-decoder Transformer (Vaswani et al., 2017; T5) beside a decoder-only one (GPT):
    GPT keeps the decoder's masked self-attention and feed-forward layers, drops the encoder and the
    cross-attention, and reads the prompt and its continuation as one sequence."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 5.2)
    _divider(ax, (4.6, 0.5), (4.6, 5.0))
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


def _frame(ax: Axes, left: float, bottom: float, right: float, top: float, *, color: str = "#999999") -> None:
    """A dashed frame around a group of parts (a repeated block, a cache)."""
    ax.add_patch(FancyBboxPatch((left, bottom), right - left, top - bottom, boxstyle="round,pad=0,rounding_size=0.08",
                                fc="none", ec=color, lw=1.0, ls="--", zorder=1))


@diagram
def gpt_block(*, shapes: bool = True) -> Figure:
    """GPT-2's model as :class:`~lmcourse.gpt.GPT` and :class:`~lmcourse.gpt.Block` compute it. Token
    plus learned position embeddings start the residual stream, drawn as one straight line that every
    sub-layer reads from, through its own LayerNorm (pre-LN), and adds its output back to; each of the N
    blocks holds causal multi-head self-attention and a GELU MLP (d_model -> 4 d_model -> d_model). A
    final LayerNorm, an output layer whose weight is the token-embedding matrix itself (tied, no bias),
    and a softmax over the V tokens close the model; ``shapes`` adds the tensor shapes to the edges."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 7.4)
    _text(ax, 0.1, 7.15, "GPT-2, as GPT and Block compute it (read from the bottom)", size=TITLE, bold=True,
          ha="left")

    def shape(text: str) -> str:
        return text if shapes else ""

    sx, stream = 1.75, dict(lw=2.4)                                # the residual stream: x, line width
    ids = _box(ax, sx, 0.35, 1.3, 0.38, "token ids", "input", size=SMALL)
    wte = _box(ax, sx, 1.2, 2.0, 0.52, "token embedding wte\n(V, d_model)", "embedding", size=SMALL)
    _edge(ax, ids.top, wte.bottom, shape("(B, T)"))
    start = _node(ax, sx, 2.05, "+")
    _edge(ax, wte.top, start.bottom, shape("(B, T, d_model)"))
    wpe = _box(ax, 4.6, start.y, 2.1, 0.52, "position embedding wpe\n(context_size, d_model)", "embedding",
               size=SMALL)
    _edge(ax, wpe.left, start.right, shape("(T, d_model)"), side="above")
    positions = _box(ax, wpe.x, 1.2, 1.7, 0.38, "positions 0 … T − 1", "input", size=SMALL)
    _arrow(ax, positions.top, wpe.bottom)

    _frame(ax, 1.1, 2.55, 8.2, 5.0)
    _text(ax, 8.1, 4.8, "Block × N", size=FONT, bold=True, ha="right")
    below = start
    for y, part in ((2.9, "attention"), (4.1, "mlp")):              # read at a dot, add back at a +
        _arrow(ax, below.top, (sx, y), **stream)
        _dot(ax, sx, y)
        norm = _box(ax, 2.95, y, 1.0, 0.38, "LayerNorm", "norm", size=SMALL)
        _arrow(ax, (sx, y), norm.left)
        if part == "attention":
            last = _stack(ax, 4.6, y, 2.0, 0.52, "causal multi-head\nself-attention", "attention", size=SMALL)
            _arrow(ax, norm.right, last.left)
        else:
            fc = _box(ax, 4.4, y, 1.62, 0.52, "Linear\nd_model → 4·d_model", "feedforward", size=SMALL)
            gelu = _box(ax, 5.64, y, 0.56, 0.38, "GELU", "feedforward", size=SMALL)
            last = _box(ax, 6.86, y, 1.62, 0.52, "Linear\n4·d_model → d_model", "feedforward", size=SMALL)
            _arrow(ax, norm.right, fc.left)
            _arrow(ax, fc.right, gelu.left)
            _arrow(ax, gelu.right, last.left)
            if shapes:
                _text(ax, gelu.x, y - 0.3, "(B, T, 4·d_model)", size=SMALL, va="top")
        add = _node(ax, sx, y + 0.6, "+")
        _arrow(ax, (sx, y), add.bottom, **stream)
        top = last.top[1] + (0.14 if part == "attention" else 0)        # above the stacked heads
        _arrow(ax, (last.x, top), (last.x, add.y), add.right)
        below = add

    ln_f = _box(ax, sx, 5.45, 1.6, 0.38, "final LayerNorm", "norm", size=SMALL)
    _arrow(ax, below.top, ln_f.bottom, **stream)
    head = _box(ax, sx, 6.15, 2.0, 0.52, "Linear d_model → V\n(no bias)", "output", size=SMALL)
    _edge(ax, ln_f.top, head.bottom, shape("(B, T, d_model)"))
    soft = _box(ax, sx, 6.85, 1.6, 0.38, "softmax over V", "output", size=SMALL)
    _edge(ax, head.top, soft.bottom, shape("(B, T, V) logits"))
    small = GPTConfig()                                             # the defaults: GPT-2 small
    _text(ax, 3.3, 6.95, "Each block, pre-LN:  x ← x + Attn(LN₁(x)),  then  x ← x + MLP(LN₂(x))", size=SMALL,
          ha="left")
    _text(ax, 3.3, 6.65, "The stream itself passes no LayerNorm until the final one.", size=SMALL, ha="left")
    _text(ax, 3.3, 6.27, "GPT returns the logits; the softmax is taken in the loss\nor when a token is sampled.",
          size=SMALL, ha="left")
    _text(ax, 3.3, 5.82, f"GPT-2 small: N = {small.num_layers} blocks, d_model = {small.d_model}, h = "
          f"{small.num_heads} heads,\n4·d_model = {small.d_ff:,}, V = {small.vocab_size:,} tokens, "
          f"context_size = {small.context_size:,}.", size=SMALL, ha="left")
    tie = 0.5
    _arrow(ax, wte.left, (tie, wte.y), (tie, head.y), head.left, dashed=True, color=ACCENT, lw=1.6)
    ax.text(tie - 0.17, 3.7, "tied: the output layer's weight is wte itself", fontsize=SMALL, color=ACCENT,
            ha="center", va="center", rotation=90, zorder=5)
    ax.text(sx - 0.3, 3.7, "residual stream" + shape(" (B, T, d_model)"), fontsize=SMALL, color=TEXT,
            ha="center", va="center", rotation=90, zorder=5)
    return fig


@diagram
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
        for k, (x, w) in enumerate(zip(_spread(cx, n, 0.56), words, strict=True)):
            if k == position:
                _box(ax, x, y, 0.52, 0.36, target, target_kind, size=SMALL, lw=2.2)
            else:
                _box(ax, x, y, 0.52, 0.36, w, kind if visible(k) else "input", size=SMALL)

    centres = (1.5, 4.5, 7.5)
    heads = (("ELMo", "two one-way LMs, concatenated"), ("GPT", "left to right only"),
             ("BERT", "both sides at once"))
    for cx, (name, sub) in zip(centres, heads, strict=True):
        _text(ax, cx, low + 2.75, name, size=TITLE, bold=True)
        _text(ax, cx, low + 2.48, sub, size=SMALL, italic=True)
    cx = centres[0]
    _text(ax, cx, low + 2.15, "left-to-right LM", size=SMALL)
    row(cx, low + 1.85, lambda k: k < position, "visible", "?", "op")
    _text(ax, cx, low + 1.42, "right-to-left LM", size=SMALL)
    row(cx, low + 1.12, lambda k: k > position, "visible_back", "?", "op")
    _text(ax, cx, low + 0.6, f"each predicts “{word}” from one side;\ntrained together, sharing the token\n"
          "layer and the softmax", size=SMALL)
    cx = centres[1]
    row(cx, low + 1.5, lambda k: k < position, "visible", "?", "op")
    _text(ax, cx, low + 0.8, f"predicts “{word}” from the words\nbefore it; later ones are hidden",
          size=SMALL)
    cx = centres[2]
    row(cx, low + 1.5, lambda k: True, "visible", "[MASK]", "masked")
    _text(ax, cx, low + 0.8, f"“{word}” is replaced by [MASK] and\npredicted from both sides",
          size=SMALL)
    if matrices:
        _divider(ax, (0.2, low + 0.25), (8.8, low + 0.25))
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
        for cx, cells, note in zip(centres, grids, notes, strict=True):
            _grid(ax, cells, cx - n * cell / 2 + 0.15, top, cell, words)
            _text(ax, cx, 0.15, note, size=SMALL)
    return fig


@diagram
def kv_cache(*, step: int = 5) -> Figure:
    """Generation step t (``step``) of one attention layer, without and with a key-value cache, as
    :meth:`~lmcourse.gpt.CausalSelfAttention.forward_cached` computes it. Without a cache all t tokens go
    through the layer again and every query i attends to keys 1..i, although rows 1..t-1 repeat the last
    step's work. With the cache only the new token goes in: its query attends to the cached keys of
    positions 1..t-1 and its own key, and its key and value are appended to the cache, which every
    block keeps for itself. The output row t is the same either way."""
    check_int(step, "step", minimum=3, maximum=5)
    t = step
    pitch, cell, rise = 0.52, 0.48, 0.45
    y_tok, y_kv, y_row = 1.55, 2.3, 2.95                              # tokens, keys and values, row t of the weights
    height = y_row + (t - 1) * rise + 1.2
    fig, ax = _canvas(9.0, height)
    _divider(ax, (4.5, 1.2), (4.5, height - 0.2))

    def row_y(i: int) -> float:
        return y_row + (t - i) * rise                                  # query t lowest, next to the keys

    for left, cached in ((0.0, False), (4.5, True)):
        xs = [left + 1.2 + j * pitch for j in range(t)]
        q_x, out_x = left + 0.66, xs[-1] + 0.65
        title = "With a cache: only the new token" if cached else "Without a cache: all t tokens again"
        _text(ax, left + 2.25, height - 0.25, title, size=TITLE, bold=True)
        _text(ax, left + 0.1, y_tok, "tokens", size=SMALL, ha="left")
        _text(ax, left + 0.1, y_kv, "keys,\nvalues", size=SMALL, ha="left")
        for j, x in enumerate(xs, start=1):
            new = j == t
            fed = new or not cached
            token = _box(ax, x, y_tok, cell, 0.36, rf"$x_{{{j}}}$", "input", size=FONT, dashed=not fed)
            kv = _box(ax, x, y_kv, cell, 0.36, rf"$k_{{{j}}}, v_{{{j}}}$", "attention", size=SMALL,
                      lw=2.2 if cached and new else 1.0)
            if fed:
                _arrow(ax, token.top, kv.bottom)
        if cached:
            _frame(ax, xs[0] - 0.32, y_kv - 0.28, xs[-2] + 0.32, y_kv + 0.28, color=ACCENT)
            _text(ax, xs[-1] + 0.3, y_kv, "appended", size=SMALL, ha="left", color=ACCENT)
            _text(ax, (xs[0] + xs[-2]) / 2, y_kv - 0.42, "the cache", size=SMALL, color=ACCENT)
        rows = [t] if cached else list(range(1, t + 1))
        for i in rows:
            y = row_y(i)
            _box(ax, q_x, y, 0.42, 0.36, rf"$q_{{{i}}}$", "attention", size=FONT)
            for j, x in enumerate(xs, start=1):
                _box(ax, x, y, cell, 0.36, "", "visible" if j <= i else "input")
            out = _box(ax, out_x, y, 0.42, 0.36, rf"$o_{{{i}}}$", "output" if i == t else "input", size=FONT)
            _arrow(ax, (xs[-1] + cell / 2, y), out.left)
        top = row_y(1) + 0.3
        _text(ax, q_x, top, "query", size=SMALL, va="bottom")
        _text(ax, (xs[0] + xs[-1]) / 2, top, "attends to keys j ≤ i", size=SMALL, va="bottom")
        _text(ax, out_x, top, "out", size=SMALL, va="bottom")
        if cached:
            _text(ax, (xs[0] + xs[-1]) / 2 + 0.2, (row_y(1) + row_y(t)) / 2 + 0.25,
                  f"rows 1 … {t - 1} are not computed:\ntheir keys and values\nare in the cache", size=SMALL,
                  italic=True)
            notes = ("in: the new token, (B, 1, d_model)",
                     f"q: (B, h, 1, d_head); cached K, V: (B, h, {t - 1}, d_head)",
                     f"+ new k, v → (B, h, {t}, d_head); weights (B, h, 1, {t})")
        else:
            notes = (f"in: all t = {t} tokens, (B, {t}, d_model)",
                     f"Q, K, V: (B, h, {t}, d_head); weights (B, h, {t}, {t})",
                     f"rows 1 … {t - 1} repeat step {t - 1}'s work")
        for k, note in enumerate(notes):
            _text(ax, left + 0.15, 0.98 - 0.23 * k, note, size=SMALL, ha="left")
    _text(ax, 4.5, 0.1, "One attention layer at step t; each block keeps its own cache, and row t is the same "
          "either way.", size=SMALL, va="bottom")
    return fig


@diagram
def induction_circuit() -> Figure:
    """The two-head induction circuit (Elhage et al. 2021; Olsson et al. 2022) on "… A B … A": in layer 1 a
    previous-token head at B's position attends to A and writes "my previous token is A" into B's residual
    stream; in layer 2 an induction head at the second A builds its query from A and finds B's position,
    whose key was built from that copy (K-composition); it copies B's token forward, so the model predicts
    B. Each position's residual stream is drawn as a vertical line; only the two heads' moves are drawn."""
    tokens, letters = ["…", "Dr", "Okafor", "spoke", "…", "Dr"], {1: "A", 2: "B", 5: "A"}
    a, b, last = 1, 2, len(tokens) - 1
    fig, ax = _canvas(9.0, 5.3)
    _text(ax, 0.1, 5.05, "An induction circuit: two heads in two layers continue “… A B … A” with B", size=TITLE,
          bold=True, ha="left")
    xs = [2.15 + 1.15 * k for k in range(len(tokens))]
    y_tok, y_one, y_two, y_out = 0.75, 1.95, 3.25, 4.3
    boxes = _token_row(ax, tokens, xs, y_tok, w=0.9, h=0.4, size=FONT)
    for k, letter in letters.items():
        _text(ax, xs[k], y_tok - 0.38, letter, size=FONT, bold=True, italic=True)
    for box in boxes:                                                 # the residual stream of each position
        if box.w:
            _arrow(ax, box.top, (box.x, y_two + 0.55), head=False, color="#BBBBBB", lw=1.0)
    for y, name, what in ((y_tok, "tokens", ""), (y_one, "layer 1", "previous-token head"),
                          (y_two, "layer 2", "induction head"), (y_out, "prediction", "")):
        _text(ax, 0.15, y + (0.1 if what else 0), name, size=FONT, bold=True, ha="left")
        if what:
            _text(ax, 0.15, y - 0.14, what, size=SMALL, ha="left")

    one = _box(ax, xs[b], y_one, 1.05, 0.5, f"{tokens[b]}\n+ “after {tokens[a]}”", "attention", size=SMALL)
    _dot(ax, xs[a], y_one)
    _arrow(ax, (xs[a], y_one), one.left, color=ACCENT, lw=1.8)
    _text(ax, xs[b] + 0.62, y_one - 0.12, "at every position: attend to the\nprevious token, copy it in", size=SMALL,
          ha="left", va="top")
    two = _box(ax, xs[last], y_two, 1.2, 0.5, f"{tokens[last]}\n+ “next: {tokens[b]}”", "attention", size=SMALL)
    _arrow(ax, one.top, (xs[b], y_two), two.left, color=ACCENT, lw=1.8, bridge=True)
    _text(ax, xs[b] + 0.08, (one.top[1] + y_two) / 2, f"key from “after {tokens[a]}”\n(K-composition)", size=SMALL,
          ha="left")
    _text(ax, xs[last] - 0.08, (y_tok + 0.2 + two.bottom[1]) / 2, f"query from\n“{tokens[last]}”", size=SMALL,
          ha="right")
    _text(ax, (xs[b] + two.left[0]) / 2, y_two + 0.12, f"query “{tokens[last]}” matches the key “after {tokens[a]}”:\n"
          f"the head attends there and copies “{tokens[b]}”", size=SMALL, va="bottom")
    out = _box(ax, xs[last], y_out, 1.05, 0.4, tokens[b], "output", size=FONT, bold=True)
    _arrow(ax, two.top, out.bottom)
    _text(ax, 4.5, 0.12, "Orange: each head's attention, from the position it reads into the position it writes. "
          "Grey: each position's residual stream.", size=SMALL)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 7 (continued): the two ways a decoder runs, and beam search


@diagram
def teacher_forcing(*, steps: int = 4) -> Figure:
    """Training against inference for a decoder writing "2 0 9 7": with teacher forcing the reference,
    shifted right by one (BOS first), is the input and every position is predicted in one pass under the
    causal mask; generating, the decoder starts from BOS and runs once per token, feeding back each
    token it wrote (the first ``steps`` steps drawn)."""
    check_int(steps, "steps", minimum=2, maximum=4)
    fig, ax = _canvas(9.0, 4.9)
    _divider(ax, (4.3, 0.3), (4.3, 4.5))
    _text(ax, 2.15, 4.65, "Training: teacher forcing, one pass", size=TITLE, bold=True)
    _text(ax, 6.65, 4.65, "Inference: one pass per token", size=TITLE, bold=True)
    target = ["2", "0", "9", "7", "EOS"]
    xs = _spread(2.35, 5, 0.68)
    inputs = _token_row(ax, ["BOS", *target[:-1]], xs, 0.95, w=0.56, kinds=["special"] + ["input"] * 4, size=SMALL)
    decoder = _box(ax, 2.35, 2.25, 3.5, 0.75, "decoder, causal mask:\nposition t sees inputs ≤ t", "attention",
                   size=SMALL)
    outputs = _token_row(ax, target, xs, 3.55, w=0.56, kinds="output", size=SMALL)
    for low, high in zip(inputs, outputs, strict=True):
        _arrow(ax, low.top, (low.x, decoder.bottom[1]))
        _arrow(ax, (high.x, decoder.top[1]), high.bottom)
    _text(ax, 0.12, 0.95, "input", size=SMALL, ha="left")
    _text(ax, 0.12, 3.55, "target", size=SMALL, ha="left")
    _text(ax, 2.35, 0.42, "input = the reference target shifted right by one", size=SMALL)
    _text(ax, 2.35, 4.12, "loss: cross-entropy at every position at once", size=SMALL)

    rows = _spread(2.45, steps, 3.4 / steps)[::-1]                        # step 1 at the top
    written = ["BOS", *target]
    for k, y in enumerate(rows):
        prefix = _token_row(ax, written[:k + 1], [4.75 + 0.5 * j for j in range(k + 1)], y, w=0.42, h=0.36,
                            kinds=["special"] + ["input"] * k, size=SMALL)
        dec = _box(ax, 7.5, y, 0.95, 0.36, "decoder", "attention", size=SMALL)
        out = _box(ax, 8.55, y, 0.5, 0.36, written[k + 1], "output", size=SMALL)
        _arrow(ax, prefix[-1].right, dec.left)
        _arrow(ax, dec.right, out.left)
        _text(ax, 4.42, y, f"{k + 1}", size=SMALL, ha="right", bold=True)
        if k + 1 < steps:                                                 # the written token comes back
            _arrow(ax, out.bottom, (4.75 + 0.5 * (k + 1), rows[k + 1] + 0.18), dashed=True, color=ACCENT)
    more = len(target) - steps
    _text(ax, 6.65, 0.42, "step (left), prefix → next token; dashed: the token written is fed back;"
          f"\n{more} more step{'s' if more > 1 else ''} until EOS", size=SMALL)
    return fig


@diagram
def beam_search_tree(*, beam_size: int = 2) -> Figure:
    """Beam search on a toy decoder: every kept prefix is extended by every token, and only the
    ``beam_size`` prefixes with the highest total log-probability survive each step (the rest pruned,
    dashed); greedy decoding takes the likelier first token and ends worse than the beam."""
    check_int(beam_size, "beam_size", minimum=1, maximum=2)
    fig, ax = _canvas(9.0, 4.6)
    _text(ax, 4.5, 4.4, f"Beam search, beam size {beam_size}: total log-probability beside each prefix",
          size=TITLE, bold=True)
    # (prefix, step log-probability) for every node the search scores; children follow their parent
    # probabilities: every expansion's listed tokens take less than all of it (exp(-0.5) + exp(-1.2) + exp(-2.5) < 1)
    tree = {("2",): -0.50, ("1",): -1.20, ("9",): -2.50,
            ("2", "0"): -2.00, ("2", "9"): -2.20, ("1", "9"): -0.30, ("1", "8"): -1.60,
            ("2", "0", "EOS"): -0.20, ("1", "9", "EOS"): -0.10}
    total = {p: sum(tree[p[:k + 1]] for k in range(len(p))) for p in tree}
    kept, frontier = set(), [()]
    for depth in (1, 2, 3):
        children = [p for p in tree if len(p) == depth and p[:-1] in frontier]
        frontier = sorted(children, key=lambda p: -total[p])[:beam_size]
        kept |= set(frontier)
    best = max((p for p in kept if p[-1] == "EOS"), key=lambda p: total[p])
    column = {0: 0.7, 1: 2.7, 2: 5.0, 3: 7.5}
    rows = {("2",): 3.45, ("1",): 1.95, ("9",): 0.85, ("2", "0"): 3.85, ("2", "9"): 3.05,
            ("1", "9"): 2.35, ("1", "8"): 1.55, ("2", "0", "EOS"): 3.85, ("1", "9", "EOS"): 2.35}
    place = {(): Box(column[0], 2.35, 0.8, 0.42)}
    _box(ax, column[0], 2.35, 0.8, 0.42, "BOS", "special", size=SMALL)
    for p in tree:                                                        # parents come before children
        x, y = column[len(p)], rows[p]
        on_beam, on_best = p in kept, p == best[:len(p)]
        label = f"{' '.join(p)}   {total[p]:.2f}"
        box = _box(ax, x, y, 1.5, 0.4, label, "output" if on_beam else "input", size=SMALL, dashed=not on_beam,
                   lw=2.0 if on_best else 1.0)
        parent = place[p[:-1]]
        _edge(ax, parent.right, box.left, f"{tree[p]:+.2f}", side="above", at=0.55, dashed=not on_beam,
              color=ACCENT if on_best else "#333333" if on_beam else "#999999")
        place[p] = box
    greedy = ("2", "0", "EOS")
    _text(ax, 8.35, 1.2, f"best finished: {' '.join(best)}, {total[best]:.2f}", size=SMALL, ha="right")
    _text(ax, 8.35, 0.85, f"greedy: {' '.join(greedy)}, {total[greedy]:.2f}", size=SMALL, ha="right")
    _text(ax, 0.2, 0.42, "Solid boxes, dark edges: kept on the beam; dashed, grey: pruned; orange edges and thick "
          "boxes: the best path.", size=SMALL, ha="left")
    _text(ax, 0.2, 0.14, "Numbers on the edges: the log-probability of that token.", size=SMALL, ha="left")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 7 (continued): where the LayerNorm sits, and the relative-position bias


@diagram
def layernorm_placement(*, shapes: bool = True) -> Figure:
    """One sub-layer F (attention or feed-forward) with its residual connection, post-LN against pre-LN:
    post-LN (Vaswani et al. 2017) normalises the sum, LN(x + F(x)), so the residual path passes through a
    LayerNorm in every sub-layer; pre-LN (Xiong et al. 2020, GPT-2) normalises only F's input,
    x + F(LN(x)), so the residual path runs from the embedding to the output untouched."""
    check_type(shapes, "shapes", bool)
    fig, ax = _canvas(9.0, 5.0)
    _divider(ax, (4.5, 0.3), (4.5, 4.6))
    shape = "(B, T, d_model)" if shapes else ""
    for centre, side, title, formula, post in ((2.85, 1.3, "Post-LN (the 2017 paper)", "x' = LN(x + F(x))", True),
                                               (7.3, 5.7, "Pre-LN (GPT-2 and later)", "x' = x + F(LN(x))", False)):
        panel = 2.25 if post else 6.75
        _text(ax, panel, 4.75, title, size=TITLE, bold=True)
        _text(ax, panel, 4.4, formula, size=FONT)
        split = 0.95
        _edge(ax, (centre, 0.3), (centre, split), "x " + shape, side="right", at=0.5)
        _dot(ax, centre, split)
        if post:
            block = _box(ax, centre, 1.75, 2.0, 0.5, "Sub-layer F\n(attention or FFN)", "attention", size=SMALL)
            add = _node(ax, centre, 2.7, "+")
            norm = _box(ax, centre, 3.45, 2.0, 0.4, "LayerNorm", "norm")
            _arrow(ax, (centre, split), block.bottom)
            _arrow(ax, block.top, add.bottom)
            _arrow(ax, add.top, norm.bottom)
            _edge(ax, norm.top, (centre, 4.15), "x' " + shape, side="right", at=0.45)
            _arrow(ax, (centre, split), (side, split), (side, add.y), add.left)
            _text(ax, 0.15, 3.45, "every path, the\nresidual's too,\npasses a LayerNorm", size=SMALL,
                  ha="left", color=ACCENT)
        else:
            norm = _box(ax, centre, 1.55, 2.0, 0.4, "LayerNorm", "norm")
            block = _box(ax, centre, 2.4, 2.0, 0.5, "Sub-layer F\n(attention or FFN)", "attention", size=SMALL)
            add = _node(ax, centre, 3.3, "+")
            _arrow(ax, (centre, split), norm.bottom)
            _arrow(ax, norm.top, block.bottom)
            _arrow(ax, block.top, add.bottom)
            _edge(ax, add.top, (centre, 4.15), "x' " + shape, side="right", at=0.5)
            _arrow(ax, (centre, split), (side, split), (side, add.y), add.left, color=ACCENT, lw=1.8)
            _text(ax, side - 0.08, 3.95, "the residual path\nskips every LayerNorm", size=SMALL, ha="left",
                  color=ACCENT)
        ax.text(side + 0.07, 1.9, "residual", fontsize=SMALL, color=TEXT, ha="left", va="center", rotation=90,
                zorder=5)
    _text(ax, 4.5, 0.12, "Each stack ends with one more LayerNorm under pre-LN; post-LN needs none.", size=SMALL)
    return fig


@diagram
def relative_position_bias(*, size: int = 6, max_offset: int = 3) -> Figure:
    """The relative-position bias of ``lmcourse.relative_position`` (Shaw et al. 2018; T5's sharing of the
    far offsets): every head learns one score per offset i - j = 0 .. ``max_offset``, the offsets of
    ``max_offset`` and more sharing the last; the (T, T) table built from it is added to the attention
    scores before the causal mask and the softmax, at any length T (``size`` drawn)."""
    check_int(size, "size", minimum=3, maximum=7)
    check_int(max_offset, "max_offset", minimum=1, maximum=size - 1)
    fig, ax = _canvas(9.0, 4.9)
    _text(ax, 4.5, 4.7, f"Relative-position bias: per head, one learned score per offset i − j = 0 .. {max_offset}",
          size=TITLE, bold=True)
    cell, left, top = 2.52 / size, 1.15, 4.05
    cells = [["masked" if j > i else "visible_back" if i - j >= max_offset else "feedforward" for j in range(size)]
             for i in range(size)]
    _grid(ax, cells, left, top, cell, [str(k) for k in range(size)])
    for i in range(size):
        for j in range(i + 1):
            _text(ax, left + (j + 0.5) * cell, top - (i + 0.5) * cell, f"b{min(i - j, max_offset)}", size=SMALL)
    bottom = top - size * cell
    _text(ax, left + size * cell / 2, top + 0.3, "key position j", size=SMALL)
    ax.text(left - 0.35, top - size * cell / 2, "query position i", fontsize=SMALL, color=TEXT, ha="center",
            va="center", rotation=90, zorder=5)
    _text(ax, left + size * cell / 2, bottom - 0.25, f"bias (h, T, T), T = {size}: one head drawn", size=SMALL)
    _text(ax, 0.2, bottom - 0.6, f"light blue: offsets 0 .. {max_offset - 1}, a score each;", size=SMALL, ha="left")
    _text(ax, 0.2, bottom - 0.88, f"orange: every offset ≥ {max_offset} shares b{max_offset};", size=SMALL,
          ha="left")
    _text(ax, 0.2, bottom - 1.16, "grey: later keys, removed by the causal mask", size=SMALL, ha="left")

    xs = _spread(4.95, max_offset + 1, 0.5)
    _text(ax, 4.95, 4.2, "learned table, per head", size=SMALL)
    table = _token_row(ax, [f"b{k}" for k in range(max_offset + 1)], xs, 3.85, w=0.44, h=0.36,
                       kinds=["feedforward"] * max_offset + ["visible_back"], size=SMALL)
    _text(ax, 4.95, 3.45, f"(h, {max_offset + 1}): offsets 0 .. {max_offset}", size=SMALL)
    _arrow(ax, table[0].left, (left + size * cell + 0.08, table[0].y))
    _text(ax, 4.95, 3.15, "bias[h, i, j] = b[h, min(i − j, R)]", size=SMALL)
    _text(ax, 4.95, 2.88, f"R = {max_offset}: the same at any length T", size=SMALL)

    fx = 7.75
    scores = _box(ax, fx, 3.6, 1.9, 0.5, "scores QKᵀ / √d_k\n(B, h, T, T)", "attention", size=SMALL)
    add = _node(ax, fx, 2.6, "+")
    mask = _box(ax, fx, 1.9, 1.9, 0.4, "causal mask", "masked", size=SMALL)
    soft = _box(ax, fx, 1.25, 1.9, 0.4, "softmax over j", "output", size=SMALL)
    _arrow(ax, scores.bottom, add.top)
    _arrow(ax, (left + size * cell + 0.08, add.y), add.left)
    _text(ax, 6.4, add.y + 0.05, "+ bias", size=SMALL, va="bottom")
    _arrow(ax, add.bottom, mask.top)
    _arrow(ax, mask.bottom, soft.top)
    _edge(ax, soft.bottom, (fx, 0.45), "weights (B, h, T, T)", side="left", at=0.5)
    _text(ax, 4.95, 0.3, "no position is added\nto the token vectors", size=SMALL)
    return fig
