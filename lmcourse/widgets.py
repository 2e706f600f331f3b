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

from lmcourse.tokenize import BERT_SPECIALS, SPECIAL_PATTERN, WordPieceTokenizer, bert_pre_tokenize, split_specials
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


# The tokenizer playground's cut, in JavaScript: lmcourse.tokenize.bert_pre_tokenize (lowercasing,
# accents stripped) and WordPieceTokenizer.word_pieces, step for step; strings are walked by code
# point, as Python's are. The browser test compares it with the Python tokenizer on many texts.
PLAYGROUND_SCRIPT = """<script>
(function () {{
  var box = document.getElementById("{id}");
  var data = JSON.parse(box.querySelector("script[type='application/json']").textContent);
  var vocab = new Set(data.vocab), input = box.querySelector("input"), pick = box.querySelector("select"),
      out = box.querySelector(".lmc-pieces"), count = box.querySelector("output");
  function kind(ch) {{
    var cp = ch.codePointAt(0);
    if (" \\t\\n\\r".indexOf(ch) >= 0 || /\\p{{Zs}}/u.test(ch)) return "space";
    if (cp === 0 || cp === 0xFFFD || /\\p{{C}}/u.test(ch)) return "drop";
    if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF)
        || (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF)
        || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F)) return "cjk";
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)
        || /\\p{{P}}/u.test(ch)) return "punct";
    return "other";
  }}
  function words(text) {{
    var s = "", out = [];
    for (var ch of text) {{
      var k = kind(ch);
      if (k === "space") s += " "; else if (k === "cjk") s += " " + ch + " "; else if (k !== "drop") s += ch;
    }}
    s.normalize("NFC").split(/\\s+/).forEach(function (w) {{
      if (!w) return;
      w = w.toLowerCase().normalize("NFD").replace(/\\p{{Mn}}/gu, "");
      var cur = "";
      for (var ch of w) {{
        if (kind(ch) === "punct") {{ if (cur) out.push(cur); out.push(ch); cur = ""; }} else cur += ch;
      }}
      if (cur) out.push(cur);
    }});
    return out;
  }}
  function pieces(word) {{
    var chars = Array.from(word), out = [], start = 0;
    if (chars.length > data.max_chars) return ["[UNK]"];
    while (start < chars.length) {{
      var end = chars.length, piece = null;
      while (end > start) {{
        piece = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
        if (vocab.has(piece)) break;
        end -= 1;
      }}
      if (end === start) return ["[UNK]"];
      out.push(piece);
      start = end;
    }}
    return out;
  }}
  var special = new RegExp("(" + data.special_pattern + ")");
  function show() {{
    var ws = [], ps = [];
    input.value.split(special).forEach(function (part, k) {{   // special tokens typed in stay whole
      if (k % 2) {{ ws.push(part); ps.push(part); return; }}
      words(part).forEach(function (w) {{ ws.push(w); ps = ps.concat(pieces(w)); }});
    }});
    out.textContent = "";
    ps.forEach(function (p) {{
      var span = document.createElement("span");
      span.className = p === "[UNK]" ? "unk" : data.specials.indexOf(p) >= 0 ? "special"
                       : p.startsWith("##") ? "cont" : "start";
      span.textContent = p;
      out.appendChild(span);
    }});
    var unk = ps.filter(function (p) {{ return p === "[UNK]"; }}).length;
    count.textContent = ws.length + " words, " + ps.length + " pieces, " + unk + " [UNK]";
  }}
  input.addEventListener("input", show);
  pick.addEventListener("change", function () {{ input.value = pick.value; show(); }});
}})();
</script>"""
PLAYGROUND_STYLE = """<style>
.lmc-playground label { display: block; margin: 0.2em 0; }
.lmc-playground input { display: block; box-sizing: border-box; width: 100%; max-width: 40em;
  font-size: inherit; padding: 0.2em 0.4em; }
.lmc-playground .lmc-pieces span { display: inline-block; margin: 0.15em; padding: 0.05em 0.35em;
  border: 1px solid #5a6470; border-radius: 3px; font-family: var(--pst-font-family-monospace, monospace);
  color: #222832; }
.lmc-playground .start { background: #dbeafe; }
.lmc-playground .cont { background: #fde7c8; border-style: dashed; }
.lmc-playground .unk { background: #f9d0d0; font-weight: bold; }
.lmc-playground .special { background: #e2e8d5; font-weight: bold; }
.lmc-playground output { display: block; color: var(--pst-color-text-base, #222832); }
</style>"""


def tokenizer_playground(tokenizer, examples: Sequence[str]) -> HTML:
    """A text box that cuts whatever a reader types into word pieces, without a kernel: ``tokenizer``'s
    vocabulary travels with the page and a script repeats its cut (lowercasing BERT tokenizers only).
    ``examples`` fill a menu; the first is shown, cut here in Python, before any script runs."""
    if not isinstance(tokenizer, WordPieceTokenizer) or not tokenizer.lowercase or tokenizer.strip_accents is False:
        raise ValueError("tokenizer must be a lowercasing WordPieceTokenizer that strips accents")
    check_nonempty(examples, "examples")
    data = {"vocab": tokenizer.itos, "max_chars": tokenizer.max_chars_per_word, "specials": BERT_SPECIALS,
            "special_pattern": SPECIAL_PATTERN}
    payload = json.dumps(data, ensure_ascii=False)
    box_id = "playground" + hashlib.sha256((payload + "".join(examples)).encode()).hexdigest()[:12]
    e = html.escape
    pieces = tokenizer.tokenize(examples[0])
    kind = lambda p: ("unk" if p == tokenizer.unk_token else "special" if p in BERT_SPECIALS   # noqa: E731
                      else "cont" if p.startswith("##") else "start")
    spans = "".join(f'<span class="{kind(p)}">{e(p)}</span>' for p in pieces)
    words = sum(1 if k % 2 else len(bert_pre_tokenize(part))           # a special token typed in is one word
                for k, part in enumerate(split_specials(examples[0])))
    unknown = pieces.count(tokenizer.unk_token)
    return HTML(
        PLAYGROUND_STYLE
        + f'<div class="lmc-playground" id="{box_id}" role="group" aria-label="tokenizer playground">'
        + '<label>Examples: <select aria-label="example texts">'
        + "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in examples) + "</select></label>"
        + f'<label>Text to cut into word pieces:<input type="text" value="{e(examples[0])}" '
          'aria-label="text to cut into word pieces"></label>'
        + f'<div class="lmc-pieces" aria-live="polite">{spans}</div>'
        + f"<output>{words} words, {len(pieces)} pieces, {unknown} [UNK]</output>"
        + '<script type="application/json">' + payload.replace("</", "<\\/") + "</script>"
        + PLAYGROUND_SCRIPT.format(id=box_id) + "</div>")
