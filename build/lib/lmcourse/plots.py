"""Figures reused across chapters: training curves, heatmaps, 2-D embeddings, timelines."""
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

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
                 fmt: str = ".2f", ax=None, **imshow_kwargs):
    """A matrix as an image with optional tick labels and value annotations."""
    m = _as_numpy(matrix)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {m.shape}")
    for labels, size, name in ((xlabels, m.shape[1], "xlabels"), (ylabels, m.shape[0], "ylabels")):
        if labels is not None and len(labels) != size:
            raise ValueError(f"{name} must have {size} entries, got {len(labels)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3, 0.5 * m.shape[1] + 1.5), max(2.5, 0.45 * m.shape[0] + 1)))
    im = ax.imshow(m, cmap=cmap, aspect="auto", **imshow_kwargs)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if xlabels is not None:
        ax.set_xticks(range(m.shape[1]), xlabels, rotation=60, ha="right")
    if ylabels is not None:
        ax.set_yticks(range(m.shape[0]), ylabels)
    if annotate:
        mid = (np.nanmax(m) + np.nanmin(m)) / 2
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=8,
                    color="black" if v > mid else "white")
    if title:
        ax.set_title(title)
    return ax


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


def plot_timeline(events: Sequence[tuple[float, str]], title: str | None = None, ax=None):
    """Events ``(year, label)`` in order, evenly spaced (time is uneven: 2003, then 2013-2020),
    labels alternating above and below the axis; fractional years only order the events."""
    check_nonempty(events, "events")
    events = sorted(events)
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 4.2))
    ax.axhline(0, color="0.3", lw=1.5, zorder=0)
    levels = [1.0, -1.0, 2.0, -2.0]
    for i, (year, label) in enumerate(events):
        level = levels[i % len(levels)]
        ax.plot([i, i], [0, level], color="0.6", lw=0.8, zorder=0)
        ax.plot(i, 0, "o", color=f"C{int(year) % 10}", zorder=1)
        ax.text(i, level, f"{int(year)}\n{label}" if level > 0 else f"{label}\n{int(year)}",
                ha="center", va="bottom" if level > 0 else "top", fontsize=8.5)
    ax.set_ylim(-3.3, 3.3)
    ax.set_xlim(-0.8, len(events) - 0.2)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
