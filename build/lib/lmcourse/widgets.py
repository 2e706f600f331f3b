"""Explorers that work in two places: live ipywidgets in Jupyter, and a kernel-free slider in the
static book (a matplotlib animation whose frames are precomputed and embedded in the page)."""
import re
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
from IPython.display import HTML
from matplotlib.animation import FuncAnimation

from lmcourse.validate import check_nonempty


def static_slider(draw: Callable[[object, object], None], values: Sequence, figsize=(6, 3.5),
                  interval_ms: int = 600) -> HTML:
    """A slider over ``values`` that works without a kernel (e.g. in the rendered book).

    ``draw(fig, value)`` draws one frame on the (cleared) figure. Every frame is rendered now and
    embedded as an image, so keep ``values`` to a few dozen at most.
    """
    check_nonempty(values, "values")
    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    values = list(values)
    fig = plt.figure(figsize=figsize)

    def frame(i):
        fig.clear()
        draw(fig, values[i])

    anim = FuncAnimation(fig, frame, frames=len(values), interval=interval_ms)
    # matplotlib links Font Awesome 4 from a CDN for the button icons; the book's theme already
    # provides Font Awesome, and offline readers must not wait for a CDN
    html = re.sub(r'<link rel="stylesheet"\s+href="https://[^"]*font-awesome[^"]*">\s*', "",
                  anim.to_jshtml(default_mode="once"))
    plt.close(fig)
    return HTML(html)
