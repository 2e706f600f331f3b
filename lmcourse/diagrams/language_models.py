"""Diagrams for chapter 2: the Markov window and the sampling loop, Kneser-Ney's
chain of interpolated orders, the one-layer network that learns a bigram table, and one run of the
data-size experiment."""
from matplotlib.figure import Figure

from lmcourse.diagrams._drawing import (
    ACCENT,
    FONT,
    SMALL,
    _arrow,
    _box,
    _canvas,
    _edge,
    _node,
    _spread,
    _text,
    _token_row,
    diagram,
)
from lmcourse.validate import check_int


@diagram
def sampling_loop(*, order: int = 3) -> Figure:
    """Sampling from an n-gram model of ``order`` n: only the last n - 1 words of the text so far
    (the Markov window) are read, the next word is drawn from P(w | window) and appended, and the
    loop repeats until ``</s>`` is drawn."""
    check_int(order, "order", minimum=2, maximum=4)
    fig, ax = _canvas(8.5, 3.6)
    tokens = ["<s>"] * (order - 1) + ["the", "prime", "minister"]
    xs = _spread(3.7, len(tokens) + 1, 1.0)
    row = _token_row(ax, tokens, xs[:-1], 0.75, w=0.86, size=SMALL)
    new = _box(ax, xs[-1], 0.75, 0.86, 0.4, "?", "special", bold=True)
    _text(ax, xs[0] - 0.43, 1.12, "the text so far", size=SMALL, ha="left", va="bottom")
    window = row[-(order - 1):]
    left, right = window[0].x - 0.46, window[-1].x + 0.46
    centre = (left + right) / 2
    ax.plot([left, left, right, right], [1.02, 1.12, 1.12, 1.02], color=ACCENT, lw=1.6, zorder=4)
    _text(ax, centre, 1.2, f"Markov window: the last n − 1 = {order - 1} words", size=SMALL, va="bottom",
          color=ACCENT)
    for box in row[:-(order - 1)]:
        _text(ax, box.x, 0.45, "ignored", size=SMALL, italic=True, va="top")
    model = _box(ax, centre, 2.25, 2.2, 0.55, f"n-gram model, n = {order}\nP(w | last {order - 1} words)",
                 "output", size=SMALL)
    _arrow(ax, (centre, 1.5), model.bottom)
    draw_x = xs[-1] + 0.95
    draw = _box(ax, draw_x, 2.25, 1.0, 0.55, "draw w", "op")
    _arrow(ax, model.right, draw.left)
    _arrow(ax, draw.bottom, (draw_x, new.y), new.right)
    _text(ax, draw_x + 0.08, 1.3, "append w", size=SMALL, ha="left")
    _arrow(ax, draw.top, (draw_x, 3.0), (centre, 3.0), model.top, dashed=True)
    _text(ax, (centre + draw_x) / 2, 3.07, "repeat with the window shifted by one word; stop when w = </s>",
          size=SMALL, va="bottom")
    return fig


@diagram
def kneser_ney_chain(*, order: int = 3) -> Figure:
    """Interpolated Kneser-Ney for an n-gram model of ``order`` n: each order's discounted counts
    plus the mass the discount freed, lambda(h), times the next lower order's estimate, down to the
    uniform distribution over V; below the top order the counts are continuation counts."""
    check_int(order, "order", minimum=2, maximum=4)
    height = 1.25 * order + 1.3
    fig, ax = _canvas(9.0, height)
    histories = {1: "", 2: "w_{t-1}", 3: "w_{t-2}\\,w_{t-1}", 4: "w_{t-3}\\,w_{t-2}\\,w_{t-1}"}
    plus_x, y_top = 6.2, height - 0.6
    levels = [y_top - 1.25 * k for k in range(order + 1)]
    nodes = []
    for k, m in enumerate(range(order, 0, -1)):
        y = levels[k]
        if m == order:
            term = r"$\max(c(h, w) - d,\ 0)\ /\ c(h)$"
            title = f"order {m}: counts c, h = ${histories[m]}$"
        elif m > 1:
            term = r"$\max(N_{1+}(\bullet\, h w) - d,\ 0)\ /\ N_{1+}(\bullet\, h\, \bullet)$"
            title = f"order {m}: continuation counts, h = ${histories[m]}$"
        else:
            term = r"$\max(N_{1+}(\bullet\, w) - d,\ 0)\ /\ N_{1+}(\bullet\,\bullet)$"
            title = "order 1: continuation counts, no history"
        box = _box(ax, 2.55, y, 4.7, 0.62, "", "feedforward")
        _text(ax, 2.55, y + 0.15, title, size=SMALL)
        _text(ax, 2.55, y - 0.14, term, size=FONT)
        plus = _node(ax, plus_x, y, "+")
        _edge(ax, box.right, plus.left, "discounted", side="above", size=SMALL)
        nodes.append(plus)
        result = rf"$P_{m}(w \mid {histories[m]})$" if m > 1 else r"$P_1(w)$"
        _text(ax, plus_x + 0.3, y + 0.05, result, size=FONT, ha="left", va="bottom")
    uniform = _box(ax, plus_x, levels[-1], 1.7, 0.5, "uniform  1 / |V|", "output")
    below = [*nodes[1:], uniform]
    for upper, lower in zip(nodes, below, strict=True):
        _arrow(ax, lower.top, upper.bottom)
        mid = (lower.top[1] + upper.bottom[1]) / 2
        _text(ax, plus_x + 0.12, mid, r"$\times\ \lambda(h) = d\, N_{1+}(h\,\bullet) / c(h)$", size=SMALL,
              ha="left")
    _arrow(ax, nodes[0].top, (plus_x, height - 0.12))
    _text(ax, 0.2, levels[-1] + 0.3, "Below the top order, c in lambda(h) is the continuation count.",
          size=SMALL, ha="left")
    _text(ax, 0.2, levels[-1] + 0.02, "A history never seen (c(h) = 0) passes all of its mass down:",
          size=SMALL, ha="left")
    _text(ax, 0.2, levels[-1] - 0.26, r"$\lambda(h) = 1$, so $P_m(w \mid h) = P_{m-1}(w \mid h')$.",
          size=SMALL, ha="left")
    return fig


@diagram
def bigram_network() -> Figure:
    """The one-layer network that learns a bigram table: the previous word as a one-hot vector,
    times W (one row of scores per previous word), then a softmax over the next word."""
    fig, ax = _canvas(8.5, 3.2)
    onehot = _box(ax, 1.25, 1.5, 1.9, 0.62, "one-hot $e_w$\nprevious word w", "input", size=SMALL)
    cells_x = _spread(1.25, 7, 0.2)
    for k, x in enumerate(cells_x):
        _box(ax, x, 0.75, 0.17, 0.17, "", "embedding" if k == 2 else "input", lw=0.8)
    _text(ax, 1.25, 0.45, "(B, V): a single 1", size=SMALL, va="top")
    weights = _box(ax, 4.1, 1.5, 2.4, 0.62, "× W  (V, V)\nrow w = scores after w", "feedforward", size=SMALL)
    out = _box(ax, 7.0, 1.5, 2.3, 0.62, "softmax over V", "output")
    _edge(ax, onehot.right, weights.left, "(B, V)", side="above")
    _edge(ax, weights.right, out.left, "(B, V)", side="above")
    _arrow(ax, out.top, (7.0, 2.6))
    _text(ax, 7.0, 2.68, r"$P(\cdot \mid w)$, (B, V)", size=FONT, va="bottom")
    _text(ax, 4.1, 2.5, "trained on the pairs (w, next word): softmax(row w)", size=SMALL)
    _text(ax, 4.1, 2.25, "→ count(w, ·) / count(w), the counted bigram table", size=SMALL)
    return fig


@diagram
def data_size_protocol() -> Figure:
    """One run of the data-size experiment: a seeded share of a corpus's training articles, one
    vocabulary built from it, three models fitted to it (the Kneser-Ney discount estimated from its
    counts, the NNLM stopped on the validation articles), all scored on the corpus's test articles."""
    fig, ax = _canvas(9.6, 3.7)
    corpus = _box(ax, 1.35, 3.05, 2.4, 0.7, "training articles\nof one corpus", "input", size=SMALL)
    share = _box(ax, 4.25, 3.05, 2.5, 0.7, "draw 25%, 50% or all\nof them (seed 0, 1, 2)", "op", size=SMALL)
    vocab = _box(ax, 7.55, 3.05, 3.2, 0.7, "vocabulary: words seen twice or more,\nat most 2,000; the rest <unk>",
                 "embedding", size=SMALL)
    _arrow(ax, corpus.right, share.left)
    _arrow(ax, share.right, vocab.left)
    labels = ("unigram baseline\nadd-k, k = 0.01", "Kneser-Ney trigram\nd = n1 / (n1 + 2 n2) of these counts",
              "NNLM, 3 words of context\nstopped early on validation")
    models = [_box(ax, x, 1.65, 2.9, 0.7, text, kind, size=SMALL)
              for x, text, kind in zip((1.65, 4.8, 7.95), labels, ("model", "model", "model"), strict=True)]
    for model in models:
        _arrow(ax, (vocab.x, vocab.bottom[1]), (vocab.x, 2.35), (model.x, 2.35), model.top)
    _text(ax, 4.8, 0.75, "each scored on the same test articles of its corpus (test perplexity),", size=SMALL)
    _text(ax, 4.8, 0.45,
          "compared across sizes as the ratio NNLM / Kneser-Ney; 2 corpora × 3 shares × 3 seeds = 18 runs", size=SMALL)
    return fig
