"""Every figure of the built book is numbered, captioned, described by its alt text and referred to
from the text (no browser needed: the built HTML is read as it is)."""
import json

import pytest

from browser_tests import bookcheck
from browser_tests.figurecheck import figure_problems, references


def test_page_figures_are_numbered_captioned_and_described(site, page_name):
    problems, _ = figure_problems((site / page_name).read_text(encoding="utf-8"))
    assert not problems, f"{page_name}:\n  " + "\n  ".join(problems)


def test_every_figure_is_referred_to_by_number(site, pytestconfig):
    pages = bookcheck.toc_pages(pytestconfig.getoption("--book-toc"))
    figures, referred = set(), set()
    for page in pages:
        html = (site / page).read_text(encoding="utf-8")
        figures |= {f"{page}#{i}" for i in figure_problems(html)[1]}
        referred |= references(html, page)
    assert figures, "the book has no figures"
    unreferred = sorted(figures - referred)
    assert not unreferred, "figures no text refers to:\n  " + "\n  ".join(unreferred)


GOOD_ALT = "Line plot of validation loss against training step, falling from 5.2 to 3.1"
CAPTION = ('<figcaption><p><span class="caption-number">Figure 6.1 </span>'
           '<span class="caption-text">The loss falls, then levels off.</span></p></figcaption>')


def page(figure_html: str) -> str:
    return f"<html><body><article>{figure_html}</article></body></html>"


@pytest.mark.parametrize("html, expected", [
    (f'<figure id="fig-a"><img src="x.png" alt="{GOOD_ALT}">{CAPTION}</figure>', None),
    ('<p><img src="x.png" alt="a"></p>', "is not in a figure"),
    (f'<figure id="fig-a"><img src="../_images/3857.png" alt="../_images/3857.png">{CAPTION}</figure>',
     "alt text is a file name"),
    (f'<figure id="fig-a"><img src="x.png">{CAPTION}</figure>', "no alt text"),
    (f'<figure id="fig-a"><img src="x.png" alt="a loss curve">{CAPTION}</figure>', "fewer than 8 words"),
    (f'<figure id="fig-a"><img src="x.png" alt="{GOOD_ALT}"></figure>', "has no number"),
    (f'<figure><img src="x.png" alt="{GOOD_ALT}">{CAPTION}</figure>', "no name"),
    (f'<figure id="fig-a"><div class="lmc-slider"><img src="x.png" alt="{GOOD_ALT}"><script type='
     f'"application/json">{json.dumps({"values": ["1", "2"], "alts": [GOOD_ALT, ""]})}</script>'
     f'</div>{CAPTION}</figure>', "frame 2: no alt text"),
])
def test_the_figure_check_finds_each_defect(html, expected):
    problems, _ = figure_problems(page(html))
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_references_resolve_relative_links():
    html = page('<a href="../intro.html#fig-timeline">Figure 1</a><a href="#fig-b">Figure 6.2</a>')
    assert references(html, "chapters/06_attention.html") == {"intro.html#fig-timeline",
                                                               "chapters/06_attention.html#fig-b"}
    # chapter 6's second part refers to a figure of its first part, a page beside it
    html = page('<a href="06_attention.html#fig-ch06-alignment">Figure 6.2</a><a href="#fig-c">Figure 6.9</a>')
    assert references(html, "chapters/06b_self_attention.html") == {"chapters/06_attention.html#fig-ch06-alignment",
                                                                     "chapters/06b_self_attention.html#fig-c"}
