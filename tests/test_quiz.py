"""Self-check quizzes: one HTML output with everything inline (it must work offline in the static
book), the same output on every run (nbval compares it), and bad questions rejected by name."""
import ast
import json
import math
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from IPython.core.formatters import DisplayFormatter

from lmcourse.quiz import choice_order, quiz

QUESTIONS = [
    {"question": "Which layers does `transfer_model` copy?",
     "choices": {"The convolutions": True, "The head": False},
     "explanation": "The head is task-specific, so it is replaced."},
    {"question": "Which strategies update the copied layers?",
     "choices": {"fine-tuned": True, "scratch": True, "frozen": False},
     "explanation": "Only the frozen model keeps them fixed."},
    {"question": "How many classes has task B?", "answer": 5, "tolerance": 0.5,
     "explanation": "The digits 5 to 9."},
]


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside each <script>."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def questions_of(html: str) -> list:
    """The questions as jupyterquiz receives them (the JSON the script starts with)."""
    match = re.search(r"var questions(quiz\w+)=(\[.*?\]);\n", html)
    return json.loads(match.group(2).replace("<\\/", "</"))


def test_one_html_output_with_everything_inline():
    data, _ = DisplayFormatter().format(quiz(QUESTIONS))
    assert set(data) == {"text/html", "text/plain"}   # no application/javascript for myst-nb to drop
    html = data["text/html"]
    tags = parse(html)
    names = [tag for tag, _ in tags.tags]
    assert names.count("script") == 1 and names.count("style") == 2 and "link" not in names
    assert not any("src" in attrs for _, attrs in tags.tags)
    assert "://" not in html and "url(" not in html and "@import" not in html
    assert "</" not in tags.scripts[0], "the script must not contain '</' (it could end early)"
    div = tags.tags[0]
    assert div[0] == "div" and re.fullmatch(r"quiz[0-9a-f]{12}", div[1]["id"])
    assert f"show_questions(questions{div[1]['id']}, {div[1]['id']})" in html


def test_same_questions_same_output_other_questions_other_id():
    first, second = quiz(QUESTIONS).data, quiz([dict(q) for q in QUESTIONS]).data
    assert first == second
    other = quiz(QUESTIONS[:1]).data
    assert parse(other).tags[0][1]["id"] != parse(first).tags[0][1]["id"]


def test_questions_in_jupyterquiz_format():
    one, many, numeric = questions_of(quiz(QUESTIONS).data)
    assert one["type"] == "multiple_choice"
    assert one["question"] == "Which layers does <code>transfer_model</code> copy?"
    feedback = {a["answer"]: a["feedback"] for a in one["answers"]}
    assert [a["correct"] for a in one["answers"]] == [QUESTIONS[0]["choices"][c] for c in choice_order(QUESTIONS[0])]
    assert feedback["The convolutions"] == ("<strong>Correct.</strong> The head is "
                                            "task-specific, so it is replaced.")
    assert feedback["The head"].startswith("<strong>Not quite.</strong> The head")
    assert many["type"] == "many_choice" and "select all 2 correct answers" in many["question"]
    assert numeric["type"] == "numeric"
    low, high = numeric["answers"][0]["range"]
    assert low == 4.5 and high == math.nextafter(5.5, math.inf)   # both ends count as correct
    assert numeric["answers"][1] == {"type": "default",
                                     "feedback": "<strong>Not quite.</strong> The digits 5 to 9."}


def test_text_is_escaped():
    q = {"question": "Is 1 < 2 <script>?", "choices": {"a & b": True, "no": False},
         "explanation": "</script> stays text"}
    (converted,) = questions_of(quiz([q]).data)
    assert converted["question"] == "Is 1 &lt; 2 &lt;script&gt;?"
    assert "a &amp; b" in [a["answer"] for a in converted["answers"]]
    assert all("&lt;/script&gt; stays text" in a["feedback"] for a in converted["answers"])


GOOD = {"question": "q", "choices": {"a": True, "b": False}, "explanation": "e"}


@pytest.mark.parametrize("questions, error, match", [
    ([], ValueError, "questions must not be empty"),
    (GOOD, TypeError, "questions must be a list of dicts, got dict"),
    (["q"], TypeError, r"questions\[0\] must be a dict, got str"),
    ([{**GOOD, "explaination": "e"}], ValueError, r"questions\[0\] has unknown keys \['explaination'\]"),
    ([{"question": "q", "explanation": "e"}], ValueError, "needs either 'choices'.*or 'answer'"),
    ([{**GOOD, "answer": 1}], ValueError, "needs either 'choices'.*or 'answer'"),
    ([{**GOOD, "question": ""}], ValueError, r"questions\[0\]\['question'\] must be a non-empty string"),
    ([{**GOOD, "explanation": None}], ValueError, r"\['explanation'\] must be a non-empty string"),
    ([GOOD, {**GOOD, "choices": {"a": False, "b": False}}], ValueError,
     r"questions\[1\]\['choices'\] has no correct choice"),
    ([{**GOOD, "choices": {"a": True}}], ValueError, "must be a dict of at least 2 choices"),
    ([{**GOOD, "choices": ["a", "b"]}], ValueError, "must be a dict of at least 2 choices"),
    ([{**GOOD, "choices": {"a": 1, "b": 0}}], TypeError, r"\['choices'\]\['a'\] must be True or False"),
    ([{**GOOD, "choices": {"a": True, "": False}}], ValueError, "a choice of questions.0. must be"),
    ([{"question": "q", "answer": "5", "explanation": "e"}], TypeError, r"\['answer'\] must be a number"),
    ([{"question": "q", "answer": math.nan, "explanation": "e"}], ValueError, "must be finite"),
    ([{"question": "q", "answer": 5, "tolerance": -1, "explanation": "e"}], ValueError,
     r"\['tolerance'\] must be >= 0"),
])
def test_bad_questions_are_rejected_by_name(questions, error, match):
    with pytest.raises(error, match=match):
        quiz(questions)


# ------------------------------------------------------------------ the chapters' quizzes, gamed
# every chapter notebook, a split chapter's section notebooks (06b_...) included: every page has its quiz
CHAPTERS = sorted((Path(__file__).parents[1] / "chapters").glob("[0-9][0-9]*_*.ipynb"))


def chapter_questions(path: Path) -> list[dict]:
    """The multiple-choice questions of every ``quiz([...])`` call in a chapter's code cells."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or "quiz(" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "quiz":
                found += [q for q in ast.literal_eval(node.args[0]) if "choices" in q]
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_quiz_cannot_be_passed_by_position_or_length(path):
    """No position holds more than half of the correct choices, and neither the longest nor the shortest choice is
    correct in more than half of the multiple-choice questions."""
    questions = chapter_questions(path)
    assert len(questions) >= 5, f"{path.name}: {len(questions)} multiple-choice questions, want 5 or more"
    positions, longest, shortest = [], [], []
    for q in questions:
        order = choice_order(q)
        positions += [i for i, text in enumerate(order) if q["choices"][text]]
        longest.append(q["choices"][max(order, key=len)])
        shortest.append(q["choices"][min(order, key=len)])
    position, count = Counter(positions).most_common(1)[0]
    assert count <= len(positions) / 2, (
        f"{path.name}: {count} of {len(positions)} correct choices are shown at position {position}")
    assert sum(longest) <= len(questions) / 2, (
        f"{path.name}: the longest choice is correct in {sum(longest)} of {len(questions)} questions")
    # the opposite cue: a reader who always picks the shortest choice must not do well either
    assert sum(shortest) <= len(questions) / 2, (
        f"{path.name}: the shortest choice is correct in {sum(shortest)} of {len(questions)} questions")


def test_choices_are_shown_in_a_fixed_order_shuffled_by_question():
    q = {"question": "Which?", "choices": {c: c == "a" for c in "abcdef"}, "explanation": "a."}
    assert choice_order(q) == choice_order(dict(q)) and sorted(choice_order(q)) == list("abcdef")
    orders = {tuple(choice_order({**q, "question": f"Which {i}?"})) for i in range(20)}
    assert len(orders) > 10                                     # not one order for every question
    shown = questions_of(quiz([q]).data)[0]
    assert [a["answer"] for a in shown["answers"]] == choice_order(q)
