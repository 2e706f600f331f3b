"""Explorers that work in two places: live ipywidgets in Jupyter, and a kernel-free slider in the
static book (its frames are drawn now and embedded in the page, each with its own alt text)."""
import base64
import hashlib
import html
import io
import json
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
from IPython.display import HTML

from lmcourse.validate import check_nonempty

# Plain HTML, CSS and JavaScript: nothing is fetched, colours follow the book's light and dark
# modes (pydata-sphinx-theme's variables, with its light colours as fallbacks for Jupyter), and
# the controls are a labelled range input and two named buttons that screen readers announce.
STYLE = """<style>
.lmc-slider {{ margin: 0.5em 0; }}
.lmc-slider img {{ display: block; max-width: 100%; height: auto; background: #fff; }}
.lmc-slider-controls {{ display: flex; align-items: center; gap: 0.5em; margin-top: 0.3em;
  max-width: {width}px; }}
.lmc-slider-controls input {{ flex: 1; accent-color: var(--pst-color-primary, #0a7d91); }}
.lmc-slider-controls button {{ min-width: 2.2em; padding: 0.1em 0.5em; font-size: inherit;
  color: var(--pst-color-text-base, #222832); background: var(--pst-color-background, #fff);
  border: 1px solid var(--pst-color-border, #8a939c); border-radius: 4px; cursor: pointer; }}
.lmc-slider-controls output {{ min-width: 8em; color: var(--pst-color-text-base, #222832); }}
</style>"""
SCRIPT = """<script>
(function () {{
  var box = document.getElementById("{id}");
  var data = JSON.parse(box.querySelector("script[type='application/json']").textContent);
  var img = box.querySelector("img"), range = box.querySelector("input"),
      out = box.querySelector("output"), buttons = box.querySelectorAll("button");
  function show(i) {{
    i = Math.max(0, Math.min(data.frames.length - 1, i));
    range.value = i;
    img.src = "data:image/png;base64," + data.frames[i];
    img.alt = data.alts[i];
    range.setAttribute("aria-valuetext", data.values[i]);
    out.textContent = data.label + ": " + data.values[i];
  }}
  range.addEventListener("input", function () {{ show(parseInt(range.value, 10)); }});
  buttons[0].addEventListener("click", function () {{ show(parseInt(range.value, 10) - 1); }});
  buttons[1].addEventListener("click", function () {{ show(parseInt(range.value, 10) + 1); }});
}})();
</script>"""


def static_slider(draw: Callable[[object, object], None], values: Sequence, *, label: str,
                  describe: Callable[[object], str], figsize=(6, 3.5), dpi: int = 100) -> HTML:
    """A slider over ``values`` that works without a kernel (e.g. in the rendered book).

    ``draw(fig, value)`` draws one frame on a cleared figure; ``describe(value)`` is that frame's
    alt text for a reader who cannot see it (what is plotted, the trend, the key values);
    ``label`` names the slider's control ("key width d_k"). Every frame is rendered now and
    embedded as a PNG, so keep ``values`` to a few dozen at most. The same frames give the same
    output.
    """
    check_nonempty(values, "values")
    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    if not callable(describe):
        raise TypeError(f"describe must be callable (value -> alt text), got {type(describe).__name__}")
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label must be a non-empty string naming the control, got {label!r}")
    values = list(values)
    fig = plt.figure(figsize=figsize)
    frames, alts = [], []
    try:
        for value in values:
            fig.clear()
            draw(fig, value)
            png = io.BytesIO()
            fig.savefig(png, format="png", dpi=dpi)
            frames.append(base64.b64encode(png.getvalue()).decode("ascii"))
            alt = describe(value)
            if not isinstance(alt, str) or not alt.strip():
                raise ValueError(f"describe({value!r}) must return a non-empty alt text, got {alt!r}")
            alts.append(alt.strip())
    finally:
        plt.close(fig)
    data = {"label": label, "values": [str(v) for v in values], "frames": frames, "alts": alts}
    payload = json.dumps(data)
    box_id = "slider" + hashlib.sha256(payload.encode()).hexdigest()[:12]
    e = html.escape
    width, height = round(figsize[0] * dpi), round(figsize[1] * dpi)
    return HTML(
        STYLE.format(width=width)
        + f'<div class="lmc-slider" id="{box_id}" role="group" aria-label="{e(label)}">'
        + f'<img src="data:image/png;base64,{frames[0]}" alt="{e(alts[0])}" '
          f'width="{width}" height="{height}">'
        + '<div class="lmc-slider-controls">'
        + '<button type="button" aria-label="previous frame">&#8249;</button>'
        + f'<input type="range" min="0" max="{len(values) - 1}" step="1" value="0" '
          f'aria-label="{e(label)}" aria-valuetext="{e(data["values"][0])}">'
        + '<button type="button" aria-label="next frame">&#8250;</button>'
        + f'<output aria-live="polite">{e(label)}: {e(data["values"][0])}</output></div>'
        # "</" only occurs in strings here, where "<\/" means the same and cannot end the script
        + '<script type="application/json">' + payload.replace("</", "<\\/") + "</script>"
        + SCRIPT.format(id=box_id) + "</div>")
