"""Diagrams for chapters 1-2: pretraining and transfer, and the first neural language model."""
from itertools import pairwise

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from lmcourse.diagrams._drawing import (
    EDGE,
    FONT,
    SMALL,
    _arrow,
    _box,
    _canvas,
    _divider,
    _edge,
    _spread,
    _text,
    diagram,
)
from lmcourse.validate import check_int, check_type

# ---------------------------------------------------------------------------------------------
# Chapter 1: pretraining and transfer


@diagram
def transfer(*, layers: int = 3, image_size: int = 8, rates: tuple[str, str] | None = None) -> Figure:
    """Pretraining and transfer (chapter 1): model A learns digits 0-4 from many labels; model B
    for digits 5-9 copies A's lowest ``layers`` hidden layers (thick edges), gets new layers above
    them (dashed: they start random), and either freezes the copies or fine-tunes them on its few
    labels. Boxes give each layer's parameter count for ``image_size`` x ``image_size`` digits;
    the shapes above both models' arrows are the tensors passed between layers, with S = ``image_size``.
    ``rates``: the learning rates of the copied and of the new layers when fine-tuning, written under
    model B's boxes, e.g. ("1e-4", "3e-3")."""
    check_int(layers, "layers", minimum=1, maximum=3)
    check_int(image_size, "image_size", minimum=2)
    if rates is not None and (not isinstance(rates, tuple) or len(rates) != 2
                              or not all(isinstance(r, str) for r in rates)):
        raise TypeError(f"rates must be None or a pair of strings (copied, new), got {rates!r}")
    flat = 16 * (image_size // 2) ** 2
    counts = [1 * 8 * 9 + 8, 8 * 16 * 9 + 16, flat * 64 + 64, 64 * 5 + 5]
    names = ["conv 3x3, 1→8\n+ ReLU", "conv 3x3, 8→16\n+ ReLU, max-pool", f"hidden linear\n{flat}→64 + ReLU"]
    shapes = ["(B, 1, S, S)", "(B, 8, S, S)", "(B, 16, S/2, S/2)", "(B, 64)"]
    fig, ax = _canvas(10.0, 4.6)
    xs = [2.55, 4.55, 6.55]
    out_x, w, h = 8.45, 1.45, 0.78
    rows = ((3.35, "Model A: pretraining", "digits 0-4\n~800 labelled", "output 64→5\n(B, 5), digits 0-4"),
            (1.35, "Model B: transfer", "digits 5-9\na few labelled", "new output 64→5\n(B, 5), digits 5-9"))
    drawn = []
    for y, title, data, output in rows:
        _text(ax, 0.1, y + 0.78, title, size=FONT, bold=True, ha="left")
        boxes = [_box(ax, 0.85, y, 1.2, h, data, "input", size=SMALL)]
        for k, (x, name) in enumerate(zip(xs, names, strict=True)):
            copied, new = y < 2 and k < layers, y < 2 and k >= layers
            text = f"{name}\n{counts[k]:,} parameters"
            boxes.append(_box(ax, x, y, w + 0.15, h, text, "feedforward", size=SMALL, lw=2.2 if copied else 1.0,
                              dashed=new))
        boxes.append(_box(ax, out_x, y, w, h, f"{output}\n{counts[3]:,} parameters", "output", size=SMALL,
                          dashed=y < 2))
        for k, (a, b) in enumerate(pairwise(boxes)):
            _arrow(ax, a.right, b.left)
            _text(ax, (a.right[0] + b.left[0]) / 2, y + 0.5, shapes[k], size=SMALL - 1)
        drawn.append(boxes)
    for k in range(layers):
        top, bottom = drawn[0][k + 1], drawn[1][k + 1]
        _edge(ax, top.bottom, bottom.top, "copy" if k == 0 else "", side="left", dashed=True)
    for k, box in enumerate(drawn[1][1:]):
        note = "" if k < layers else "new: starts random"
        if rates is not None:
            note = f"fine-tuned at lr {rates[0]}" if k < layers else f"new, lr {rates[1]}"
        if note:
            _text(ax, box.x, box.y - h / 2 - 0.13, note, size=SMALL, italic=True)
    _text(ax, 9.25, 3.35, "plenty of\nlabels", size=SMALL, italic=True, ha="left")
    _text(ax, 9.25, 1.35, "few\nlabels", size=SMALL, italic=True, ha="left")
    _text(ax, 5.0, 0.4, f"{sum(counts):,} parameters in all for {image_size}x{image_size} digits.   "
          "frozen: the copied layers (thick edges) stay fixed; only the new layers learn.", size=SMALL)
    _text(ax, 5.0, 0.14, "fine-tuned: the copies learn too, starting from model A's values.   "
          "scratch: nothing is copied, every layer starts random.", size=SMALL)
    return fig


@diagram
def framed_task(*, frame: int = 12) -> Figure:
    """Chapter 1's framed task: an 8x8 digit pasted into a blank ``frame`` x ``frame`` image at a
    random position, either once before training (fixed placement) or afresh at every step
    (random placement, a data augmentation), then read by the CNN."""
    check_int(frame, "frame", minimum=9, maximum=20)
    fig, ax = _canvas(10.0, 3.5)
    digit = _box(ax, 0.95, 1.75, 1.35, 0.75, "8x8 digit\n(B, 1, 8, 8)", "input", size=SMALL)
    fixed = _box(ax, 3.7, 2.7, 2.6, 0.75, "placed once, before training:\nthe same position at every step",
                 "op", size=SMALL)
    moving = _box(ax, 3.7, 0.8, 2.6, 0.75, "placed afresh at every step:\na new random position each time",
                  "op", size=SMALL)
    n = frame - 8 + 1
    framed = _box(ax, 6.55, 1.75, 1.7, 0.75, f"{frame}x{frame} frame\n(B, 1, {frame}, {frame})", "input",
                  size=SMALL)
    cnn = _box(ax, 8.55, 1.75, 1.4, 0.75, "CNN\n(transfer\ndiagram)", "feedforward", size=SMALL)
    for branch in (fixed, moving):
        _arrow(ax, digit.right, (digit.right[0] + 0.35, digit.y), (digit.right[0] + 0.35, branch.y), branch.left)
        _arrow(ax, branch.right, (branch.right[0] + 0.35, branch.y), (branch.right[0] + 0.35, framed.y),
               framed.left)
    _edge(ax, framed.right, cnn.left)
    _edge(ax, cnn.right, (9.85, cnn.y), "(B, 5)", side="above")
    _text(ax, 3.7, 3.3, "task B models in step 4 (fixed placement)", size=SMALL, italic=True)
    _text(ax, 3.7, 0.2, "model A, and the '+ placement' models", size=SMALL, italic=True)
    _text(ax, 7.45, 0.85, f"either way one of {n} x {n} = {n * n} positions;\ntest digits are placed at random once",
          size=SMALL, italic=True)
    return fig


@diagram
def layer_transfer_design(*, layers: int = 2) -> Figure:
    """Yosinski et al.'s design in small (chapter 1): base networks trained on task A and on task
    B; a new network for task B copies the lowest ``layers`` layers from base B (BnB, self-transfer)
    or from base A (AnB), and trains the rest on B with the copies frozen, or with everything
    fine-tuned (BnB+, AnB+). A line at the top gives the tensor shapes between the layers."""
    check_int(layers, "layers", minimum=1, maximum=3)
    fig, ax = _canvas(10.5, 4.1)
    names = ["conv 1", "conv 2", "hidden", "output"]
    w, h, pitch = 0.85, 0.46, 1.12
    halves = ((0.75, "base A: trained on task A (digits 0-4)", "AnB: copies from base A"),
              (5.55, "base B: trained on task B (digits 5-9)", "BnB: copies from base B (self-transfer)"))
    for left, base_title, target_title in halves:
        xs = [left + 0.45 + k * pitch for k in range(4)]
        drawn = []
        for y, title in ((2.85, base_title), (1.25, target_title)):
            _text(ax, left, y + 0.5 if y > 2 else y - 0.45, title, size=SMALL, bold=True, ha="left")
            boxes = []
            for k, (x, name) in enumerate(zip(xs, names, strict=True)):
                copied, new = y < 2 and k < layers, y < 2 and k >= layers
                boxes.append(_box(ax, x, y, w, h, name, "output" if k == 3 else "feedforward", size=SMALL,
                                  lw=2.2 if copied else 1.0, dashed=new))
            for a, b in pairwise(boxes):
                _arrow(ax, a.right, b.left)
            drawn.append(boxes)
        for k in range(layers):
            _edge(ax, drawn[0][k].bottom, drawn[1][k].top, "copy" if k == 0 else "", side="left", dashed=True)
    _divider(ax, (5.15, 0.75), (5.15, 3.55))
    _text(ax, 5.25, 3.75, "tensor shapes for 12x12 frames: input (B, 1, 12, 12) → conv 1 → (B, 8, 12, 12) → conv 2, "
          "max-pool → (B, 16, 6, 6) → hidden → (B, 64) → output → (B, 5)", size=SMALL, italic=True)
    _text(ax, 5.25, 0.42, f"k = {layers}: both new networks train on task B; dashed layers start random. "
          "frozen (AnB, BnB): the copies stay fixed; fine-tuned (AnB+, BnB+): they learn too.", size=SMALL)
    _text(ax, 5.25, 0.14, "BnB below base B, trained as long: the copies needed their old partner layers "
          "(co-adaptation).   AnB below BnB: task A's features do not fit B (specificity).", size=SMALL)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 2: language models


@diagram
def nnlm(*, context_size: int = 3, direct: bool = True) -> Figure:
    """Bengio et al. (2003): the ``context_size`` previous words looked up in one shared table C,
    concatenated, a tanh hidden layer, a softmax over V; ``direct`` draws the optional direct
    connections W from the concatenation to the output (dashed)."""
    check_int(context_size, "context_size", minimum=2, maximum=4)
    check_type(direct, "direct", bool)
    fig, ax = _canvas(8.5, 6.1)
    cx, pitch = 3.5, min(1.7, 5.2 / context_size)
    xs = _spread(cx, context_size, pitch)
    span = xs[-1] - xs[0] + 1.2
    concat = _box(ax, cx, 2.75, span, 0.5, "concatenate:  x", "embedding")
    for k, x in enumerate(xs):
        lag = context_size - k
        word = _box(ax, x, 0.45, 1.0, 0.42, rf"$w_{{t-{lag}}}$", size=12)
        row = _box(ax, x, 1.6, pitch - 0.15, 0.45, rf"$C(w_{{t-{lag}}})$", "embedding", size=11)
        _edge(ax, word.top, row.bottom, "look up" if k == 0 else "", side="left")
        _edge(ax, row.top, (x, concat.bottom[1]), "(B, m)" if k == context_size - 1 else "")
    left = xs[0] - pitch / 2 + 0.02
    ax.add_patch(FancyBboxPatch((left, 1.27), xs[-1] - xs[0] + pitch - 0.04, 0.66,
                                boxstyle="round,pad=0,rounding_size=0.08", fc="none", ec=EDGE,
                                lw=1.0, ls=":", zorder=2))
    _text(ax, xs[-1] + pitch / 2 + 0.12, 1.6, "one shared table C,\n(V, m): the same\nfor every position",
          size=SMALL, ha="left")
    hidden = _box(ax, cx, 3.95, 2.6, 0.5, "hidden layer:  tanh(d + H x)", "feedforward")
    out = _box(ax, cx, 5.15, 4.3, 0.5, "softmax over V:  b + W x + U tanh(d + H x)", "output")
    _edge(ax, concat.top, hidden.bottom, "(B, (n−1)·m)")
    _edge(ax, hidden.top, out.bottom, "(B, h),  h hidden units")
    _arrow(ax, out.top, (cx, 5.75))
    _text(ax, cx + 0.1, 5.82, r"$P(w_t \mid w_{t-n+1}, \ldots, w_{t-1})$,  (B, V)", size=FONT,
          ha="left", va="bottom")
    if direct:
        x_route = max(concat.right[0], out.right[0]) + 0.45
        _arrow(ax, concat.right, (x_route, concat.y), (x_route, out.y), out.right, dashed=True)
        _text(ax, x_route + 0.1, 3.95, "optional direct\nconnections W x", size=SMALL, ha="left")
    return fig
