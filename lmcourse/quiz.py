"""Self-check quizzes that work in Jupyter and in the static book, with no kernel and no network.

A quiz is rendered by ``jupyterquiz`` into one HTML output that carries its own JavaScript and
CSS inline (nothing is fetched from a CDN), with an id derived from the questions, so the saved
output is the same on every run. Each question is a dict in one of two forms::

    {"question": "Which layers does transfer copy?",             # multiple choice
     "choices": {"The lower layers": True, "The head": False},   # choice -> is it correct?
     "explanation": "The head is task-specific, so it is replaced."}

    {"question": "How many classes has task B?",                 # numeric
     "answer": 5, "tolerance": 0,                                # correct: answer +- tolerance
     "explanation": "The digits 5-9."}

The choices are shown in an order shuffled by the question's own text (:func:`choice_order`): the
same on every run, different from question to question, so the correct one cannot be found by
its place. With more than one correct choice the reader picks every correct one. After each answer the
reader sees "Correct." or "Not quite." followed by the explanation. Text is plain text (HTML
is shown as typed), except that text in backticks is shown as code and ``$...$`` as maths on
pages with MathJax.
"""
import hashlib
import html
import json
import math
import random
import re

from IPython.display import HTML
from jupyterquiz.dynamic.loader import load_questions_script
from jupyterquiz.dynamic.renderer import build_script, build_styles, render_div

from lmcourse.validate import check_float

KEYS = {"question", "choices", "answer", "tolerance", "explanation"}
MAX_WIDTH_PX = 760
# jupyterquiz's colour variables mapped onto the book theme's (pydata-sphinx-theme), so that the
# quiz follows its light and dark modes; the fallbacks are that theme's light colours (Jupyter)
COLORS = {
    "--jq-multiple-choice-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-many-choice-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-numeric-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-string-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-mc-button-bg": "var(--pst-color-background, #fff)",
    "--jq-mc-button-border": "var(--pst-color-border, #d1d5da)",
    "--jq-mc-button-inset-shadow": "var(--pst-color-shadow, #555)",
    "--jq-numeric-input-bg": "var(--pst-color-background, #fff)",
    "--jq-numeric-input-label": "var(--pst-color-text-base, #222832)",
    "--jq-numeric-input-shadow": "var(--pst-color-shadow, #999)",
    "--jq-correct-color": "var(--pst-color-success, #00843f)",
    "--jq-incorrect-color": "var(--pst-color-danger, #d72d47)",
    "--jq-text-color": "var(--pst-color-text-base, #222832)",
    "--jq-link-color": "var(--pst-color-link, #0a7d91)",
}
# jupyterquiz's sizes (16-20 pt) made to match the surrounding text; in the book's dark mode the
# quiz, which uses the theme's colours, is spared the light box the theme gives HTML outputs
PAGE_STYLE = """
html[data-theme=dark] div.cell_output .text_html:has(#{id}) {{ background: none; color: inherit;
    padding: 0; }}
#{id} {{ font-family: inherit; margin: 1em 0; }}
#{id} .Quiz {{ font-size: inherit; line-height: 1.5; margin-top: 1.2em; }}
#{id} .MultipleChoiceQn, #{id} .ManyChoiceQn, #{id} .NumericQn {{
    border-left: 4px solid var(--pst-color-primary, #0a7d91); font-weight: 600; }}
#{id} .quiz-hint {{ font-weight: normal; color: var(--pst-color-text-muted, #5d6875); }}
#{id} .MCButton {{ font-size: inherit; color: var(--jq-text-color); justify-content: flex-start;
    text-align: left; }}
#{id} .MCButton input {{ position: absolute; opacity: 0; width: 1px; height: 1px; }}
#{id} .correctButton, #{id} .incorrectButton {{ color: var(--pst-color-background, #fff); }}
#{id} .InpLabel {{ font-size: inherit; }}
#{id} .Input-text {{ font-size: inherit; border: 1px solid var(--jq-mc-button-border); }}
#{id} .Quiz code {{ background: none; color: inherit; font-family: var(--pst-font-family-monospace,
    monospace); }}
#{id} .Feedback {{ font-size: inherit; text-align: left; color: var(--jq-text-color); }}
#{id} .Feedback.correct, #{id} .Feedback.incorrect {{ border-left: 4px solid; padding: 0.4em 0.8em; }}
#{id} .Feedback.correct {{ border-color: var(--jq-correct-color); }}
#{id} .Feedback.incorrect {{ border-color: var(--jq-incorrect-color); }}
#{id} .Feedback.correct strong {{ color: var(--jq-correct-color); }}
#{id} .Feedback.incorrect strong {{ color: var(--jq-incorrect-color); }}
"""
# jupyterquiz loads MathJax from a CDN where a MathJax 3 without typeset() is on the page;
# offline that fails, and it would replace that MathJax, so the quiz leaves MathJax alone
FORCE_LOAD_MATHJAX = re.compile(r"window\.MathJax = \{.*?\}\)\(\);", re.S)
# jupyterquiz's script runs once the page has loaded and MathJax (if any) has started, so that
# its MathJax calls find MathJax ready; its numeric answer boxes get a name for screen readers
RUN_WHEN_READY = """<script>
(function () {{
function run() {{
{script}
}}
function label() {{
  document.querySelectorAll("#{id} input:not([aria-label])").forEach(function (box) {{
    box.setAttribute("aria-label", "your answer (a number)");
  }});
}}
function start() {{
  new MutationObserver(label).observe(document.getElementById("{id}"), {{childList: true, subtree: true}});
  var mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {{ mj.startup.promise.then(run); }} else {{ run(); }}
}}
if (document.readyState === "complete") {{ start(); }} else {{ window.addEventListener("load", start); }}
}})();
</script>"""


def quiz(questions) -> HTML:
    """An interactive quiz of ``questions`` (a list of dicts, see the module docstring), as one
    HTML output with everything inline; the same questions give the same output."""
    if not isinstance(questions, (list, tuple)):
        raise TypeError(f"questions must be a list of dicts, got {type(questions).__name__}")
    if not questions:
        raise ValueError("questions must not be empty")
    converted = [_convert(q, f"questions[{i}]") for i, q in enumerate(questions)]
    digest = hashlib.sha256(json.dumps(converted, sort_keys=True).encode()).hexdigest()
    div_id = f"quiz{digest[:12]}"   # a JavaScript identifier: jupyterquiz refers to the div by it
    prefix, static, url = load_questions_script(converted, div_id)
    js = FORCE_LOAD_MATHJAX.sub("", build_script(prefix, static, url, div_id, load_js=True)
                                .removeprefix(prefix))
    if "://" in js:
        raise RuntimeError("jupyterquiz's script names a URL that lmcourse.quiz does not remove; "
                           "install the version pinned in requirements.lock")
    # "</" only occurs in string literals, where "<\/" means the same and cannot end the
    # <script> element early
    script = (prefix + js).replace("</", "<\\/")
    return HTML(render_div(div_id, shuffle_questions=False, shuffle_answers=False,
                           preserve_responses=False, num=len(converted), max_width=MAX_WIDTH_PX,
                           border_radius=6, question_alignment="left") + "</div>"
                + build_styles(div_id, COLORS)
                + f"<style>{PAGE_STYLE.format(id=div_id)}</style>"
                + RUN_WHEN_READY.format(script=script, id=div_id))


def choice_order(question: dict) -> list[str]:
    """The choices of a multiple-choice ``question`` (a dict as :func:`quiz` takes) in the order a
    reader sees them: shuffled by a generator seeded with the question's text."""
    seed = int.from_bytes(hashlib.sha256(question["question"].encode()).digest()[:8], "big")
    order = list(question["choices"])
    random.Random(seed).shuffle(order)
    return order


def _text(value, name: str) -> str:
    """Non-empty plain text as HTML: escaped, with `code` in backticks."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(value.strip(), quote=False))


def _feedback(correct: bool, explanation: str) -> str:
    return f"<strong>{'Correct.' if correct else 'Not quite.'}</strong> {explanation}"


def _convert(q, name: str) -> dict:
    """One question of :func:`quiz` in jupyterquiz's format, after checking it."""
    if not isinstance(q, dict):
        raise TypeError(f"{name} must be a dict, got {type(q).__name__}")
    unknown = sorted(set(q) - KEYS)
    if unknown:
        raise ValueError(f"{name} has unknown keys {unknown}; the keys are {sorted(KEYS)}")
    if ("choices" in q) == ("answer" in q):
        raise ValueError(f"{name} needs either 'choices' (multiple choice) or 'answer' (numeric)")
    question = _text(q.get("question"), f"{name}['question']")
    explanation = _text(q.get("explanation"), f"{name}['explanation']")
    if "choices" in q:
        return _choice_question(q, name, question, explanation)
    answer, tolerance = q["answer"], q.get("tolerance", 0)
    check_float(answer, f"{name}['answer']")
    check_float(tolerance, f"{name}['tolerance']", minimum=0)
    answer, tolerance = float(answer), float(tolerance)
    # jupyterquiz's ranges exclude their upper end: the next float above makes it inclusive
    high = math.nextafter(answer + tolerance, math.inf)
    return {"question": question, "type": "numeric",
            "answers": [{"type": "range", "range": [answer - tolerance, high], "correct": True,
                         "feedback": _feedback(True, explanation)},
                        {"type": "default", "feedback": _feedback(False, explanation)}]}


def _choice_question(q, name: str, question: str, explanation: str) -> dict:
    choices = q["choices"]
    if not isinstance(choices, dict) or len(choices) < 2:
        raise ValueError(f"{name}['choices'] must be a dict of at least 2 choices (text -> True "
                         f"if correct, False if not), got {choices!r}")
    for text, correct in choices.items():
        if not isinstance(correct, bool):
            raise TypeError(f"{name}['choices'][{text!r}] must be True or False, got {correct!r}")
    n_correct = sum(choices.values())
    if n_correct == 0:
        raise ValueError(f"{name}['choices'] has no correct choice (none is True)")
    if n_correct > 1:
        question += (f' <span class="quiz-hint">(select all {n_correct} correct answers)'
                     '</span>')
    return {"question": question, "type": "many_choice" if n_correct > 1 else "multiple_choice",
            "answers": [{"answer": _text(text, f"a choice of {name}"), "correct": choices[text],
                         "feedback": _feedback(choices[text], explanation)}
                        for text in choice_order(q)]}
