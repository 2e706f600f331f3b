"""Figures reused across chapters: training curves, heatmaps, 2-D embeddings, timelines."""
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import Patch

from lmcourse.validate import check_nonempty, check_type


def _as_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def smooth(values: Sequence[float], window: int) -> np.ndarray:
    """Moving average over ``window`` points (shorter at the start), same length as ``values``."""
    values = np.asarray(values, dtype=float)
    if window <= 1 or len(values) == 0:
        return values
    csum = np.cumsum(np.insert(values, 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(0, idx - window)
    return (csum[idx] - csum[lo]) / (idx - lo)


def plot_curves(curves: Mapping[str, Sequence[float] | Sequence[tuple[float, float]]],
                xlabel: str = "step", ylabel: str = "loss", title: str | None = None,
                smooth_window: int = 1, logy: bool = False, ax=None):
    """Plot named curves on one axes; a curve is a list of values or of ``(x, y)`` pairs."""
    check_type(curves, "curves", Mapping)
    check_nonempty(curves, "curves")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    for name, values in curves.items():
        values = list(values)
        if values and isinstance(values[0], (tuple, list)):
            xs, ys = zip(*values)
        else:
            xs, ys = range(1, len(values) + 1), values
        ax.plot(xs, smooth(ys, smooth_window), label=name)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def plot_history(history, smooth_window: int = 10, ax=None):
    """Training loss of a :class:`lmcourse.train.History` (smoothed) with its evaluated losses."""
    curves = {"train loss": list(enumerate(smooth(history.train_loss, smooth_window), start=1))}
    curves.update({name: values for name, values in history.evals.items() if "loss" in name})
    return plot_curves(curves, ax=ax)


def plot_heatmap(matrix, xlabels: Sequence[str] | None = None, ylabels: Sequence[str] | None = None,
                 title: str | None = None, cmap: str = "viridis", annotate: bool = False,
                 fmt: str = ".2f", ax=None, colorbar_label: str | None = None, **imshow_kwargs):
    """A matrix as an image with optional tick labels, value annotations and a colour-bar label."""
    m = _as_numpy(matrix)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {m.shape}")
    for labels, size, name in ((xlabels, m.shape[1], "xlabels"), (ylabels, m.shape[0], "ylabels")):
        if labels is not None and len(labels) != size:
            raise ValueError(f"{name} must have {size} entries, got {len(labels)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3, 0.5 * m.shape[1] + 1.5), max(2.5, 0.45 * m.shape[0] + 1)))
    im = ax.imshow(m, cmap=cmap, aspect="auto", **imshow_kwargs)
    bar = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if colorbar_label:
        bar.set_label(colorbar_label)
    if xlabels is not None:
        ax.set_xticks(range(m.shape[1]), xlabels, rotation=60, ha="right")
    if ylabels is not None:
        ax.set_yticks(range(m.shape[0]), ylabels)
    if annotate:   # dark text on the light half of the colour scale (vmin..vmax), light on the dark half
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=8,
                    color="black" if im.norm(v) > 0.5 else "white")
    if title:
        ax.set_title(title)
    return ax


def plot_attention(weights, xlabels: Sequence[str], ylabels: Sequence[str], ax=None, **kwargs):
    """An attention map, weights (queries, keys): keys along x, queries along y, coloured from 0 to 1
    with a labelled colour bar (``kwargs`` go to :func:`plot_heatmap`, ``title`` for one)."""
    return plot_heatmap(weights, xlabels=xlabels, ylabels=ylabels, ax=ax, vmin=0, vmax=1,
                        colorbar_label="attention weight", **kwargs)

def plot_embeddings_2d(vectors, labels: Sequence[str], method: str = "pca", groups: Sequence | None = None,
                       title: str | None = None, ax=None):
    """Project vectors (n, d) to 2-D by PCA (via SVD) and scatter them with their labels."""
    v = _as_numpy(vectors).astype(float)
    if v.ndim != 2 or v.shape[0] != len(labels):
        raise ValueError(f"vectors must be (len(labels), d) = ({len(labels)}, d), got {v.shape}")
    if v.shape[0] < 2:
        raise ValueError("vectors must hold at least 2 points")
    if method != "pca":
        raise ValueError(f"method must be 'pca', got {method!r}")
    centred = v - v.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    vt = vt[:2] * np.sign(vt[:2, :1] + 1e-12)  # fix the sign so the picture is deterministic
    xy = centred @ vt.T
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    if groups is None:
        ax.scatter(xy[:, 0], xy[:, 1], s=18)
    else:
        groups = list(groups)
        for g in dict.fromkeys(groups):
            idx = [i for i, gg in enumerate(groups) if gg == g]
            ax.scatter(xy[idx, 0], xy[idx, 1], s=18, label=str(g))
        ax.legend()
    for (x, y), label in zip(xy, labels):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=8)
    ax.set(xlabel="PC 1", ylabel="PC 2", title=title)
    return ax


def plot_timeline(events: Sequence[tuple], ax=None, xlim: tuple[float, float] | None = None,
                  label_width: float = 0.085):
    """Events ``(year, label, colour)`` or ``(year, label, colour, marker)`` (default ``"o"``) on a
    true time axis, ``year`` fractional (2018.45 is mid-June), with a tick at every year and small
    ticks at every quarter.

    Labels stack upwards: each goes on the lowest row where it does not overlap a label already
    placed (``label_width``: a label's width as a share of the axis), with a line down to its date.
    An empty label draws the dot only.
    """
    check_nonempty(events, "events")
    events = sorted(events)
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 3.4))
    lo, hi = xlim if xlim is not None else (events[0][0] - 1, events[-1][0] + 1)
    width = label_width * (hi - lo)
    row_ends: list[float] = []                  # the right end of the last label on each row
    for year, label, colour, *marker in events:
        ax.plot(year, 0, marker[0] if marker else "o", color=colour, ms=7, zorder=2)
        if not label:
            continue
        row = next((r for r, end in enumerate(row_ends) if year - width / 2 > end), len(row_ends))
        if row == len(row_ends):
            row_ends.append(-float("inf"))
        row_ends[row] = year + width / 2
        height = 0.6 + 1.05 * row
        ax.plot([year, year], [0, height], color="0.7", lw=0.8, zorder=0)
        ax.text(year, height, label, ha="center", va="bottom", fontsize=10, color=colour,
                bbox=dict(fc="white", ec="none", pad=0.5), zorder=1)
    ax.axhline(0, color="0.3", lw=1.2, zorder=0)
    for quarter in range(int(np.ceil(lo * 4)), int(hi * 4) + 1):
        t = quarter / 4
        ax.plot([t, t], [-0.12 if quarter % 4 == 0 else -0.06, 0], color="0.3", lw=0.8)
        if quarter % 4 == 0:
            ax.text(t, -0.2, str(int(t)), ha="center", va="top", fontsize=9)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.9, 0.6 + 1.05 * len(row_ends) + 0.6)
    ax.axis("off")
    return ax


def plot_paired_seeds(scores: Mapping[str, Sequence[float]], baselines: Mapping[str, float] | None = None,
                      ylabel: str = "score", pairs: Sequence[tuple[str, str]] = (), axes=None):
    """Arms compared on the same seeds. Left: every seed's score per arm (grey lines join one seed's
    arms), the mean with +-1 standard error, and ``baselines`` as dashed lines. Right (when ``pairs``
    are given): each pair's per-seed differences ``a - b`` with their mean +- 2 standard errors, and
    zero: a bar that crosses zero is no difference beyond the noise. Returns the axes."""
    check_type(scores, "scores", Mapping)
    check_nonempty(scores, "scores")
    values = {name: np.asarray(v, dtype=float) for name, v in scores.items()}
    n = {len(v) for v in values.values()}
    if len(n) != 1 or n.pop() < 2:
        raise ValueError("scores must give every arm the same number (>= 2) of seeds")
    for a, b in pairs:
        if a not in values or b not in values:
            raise ValueError(f"pairs must name arms of scores, got {(a, b)}")
    if axes is None:
        _, axes = plt.subplots(1, 2 if pairs else 1, figsize=(11 if pairs else 6, 3.8), squeeze=False)
        axes = axes[0]
    se = lambda v: v.std(ddof=1) / np.sqrt(len(v))                           # noqa: E731
    ax = axes[0]
    names = list(values)
    seeds = np.stack([values[name] for name in names], axis=1)              # (seeds, arms)
    for row in seeds:
        ax.plot(range(len(names)), row, color="0.75", lw=0.8, zorder=1)
    for i, name in enumerate(names):
        ax.plot([i] * len(values[name]), values[name], "o", color=f"C{i}", alpha=0.6, zorder=2)
        ax.errorbar(i + 0.18, values[name].mean(), yerr=se(values[name]), fmt="s", color=f"C{i}", capsize=4, zorder=3)
    for k, (label, value) in enumerate((baselines or {}).items()):
        ax.axhline(value, ls=["--", ":", "-."][k % 3], color="0.4", lw=1, label=label)
    ax.set_xticks(range(len(names)), names)
    ax.set(ylabel=ylabel, title="each seed (dots, joined), mean ± 1 SE (squares)")
    if baselines:
        shown = np.concatenate([seeds.ravel(), list(baselines.values())])
        pad = 0.12 * (shown.max() - shown.min() or 1.0)
        ax.set_ylim(shown.min() - pad, shown.max() + 2 * pad)        # room for the legend above the lines
        ax.legend(fontsize=8, loc="upper center", ncol=len(baselines))
    ax.grid(alpha=0.3, axis="y")
    if pairs:
        ax = axes[1]
        for i, (a, b) in enumerate(pairs):
            d = values[a] - values[b]
            ax.plot([i] * len(d), d, "o", color="0.5", alpha=0.6)
            ax.errorbar(i + 0.18, d.mean(), yerr=2 * se(d), fmt="s", color="C3", capsize=4)
        ax.axhline(0, color="0.3", lw=1)
        ax.set_xticks(range(len(pairs)), [f"{a}\n− {b}" for a, b in pairs])
        ax.set(ylabel=f"difference in {ylabel}", title="paired differences, mean ± 2 SE")
        ax.grid(alpha=0.3, axis="y")
    return axes


def plot_flagged_tokens(rows: Sequence[Mapping], threshold: float | None = None, ax=None):
    """One sentence read by a replaced-token detector: a bar per token of its P(replaced), orange where
    the token really was replaced (its tick label gives the shown word over the original in brackets),
    blue where it is original; ``threshold`` as a dashed line. rows: dicts with ``shown``, ``original``,
    ``replaced``, ``p_replaced`` (:func:`lmcourse.electra_small.flagged_tokens`)."""
    check_nonempty(rows, "rows")
    missing = {"shown", "original", "replaced", "p_replaced"} - set(rows[0])
    if missing:
        raise ValueError(f"rows must carry shown, original, replaced and p_replaced; missing {sorted(missing)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(rows)), 3.4))
    colours = ["#E69F00" if r["replaced"] else "#56B4E9" for r in rows]
    ax.bar(range(len(rows)), [r["p_replaced"] for r in rows], color=colours, edgecolor="0.3", lw=0.5)
    labels = [f"{r['shown']}\n({r['original']})" if r["replaced"] else r["shown"] for r in rows]
    ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=8)
    for tick, r in zip(ax.get_xticklabels(), rows):
        if r["replaced"]:
            tick.set_color("#B05E00")
    if threshold is not None:
        ax.axhline(threshold, ls="--", color="0.4", lw=1, label=f"threshold {threshold:g}")
    handles = [Patch(color="#E69F00", label="replaced by the generator (original in brackets)"),
               Patch(color="#56B4E9", label="original")]
    top = 1.15 * max(max(r["p_replaced"] for r in rows), threshold or 0.0)
    ax.set(ylabel="P(replaced), discriminator", ylim=(0, top))
    ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=8, loc="upper right")
    return ax
