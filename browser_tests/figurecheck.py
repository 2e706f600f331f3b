"""Figures as a book has them, checked on the built HTML: every image of a page's content is in a
numbered figure ("Figure 6.2") with a caption, carries an alt text that describes it (not a file
name), and every figure is referred to from the book's text."""
import json
import re
from pathlib import Path

from bs4 import BeautifulSoup

MIN_ALT_WORDS = 8          # "Line plot of validation loss against step for three models" is 10
MIN_CAPTION_WORDS = 4
FILE_LIKE = re.compile(r"\.(png|jpe?g|svg|gif)\b|_images/|^[\w./-]+$", re.I)
NUMBER = re.compile(r"^Figure \d+(\.\d+)?$")


def _alt_problem(alt: str | None, caption: str) -> str | None:
    """Why ``alt`` does not describe an image, or None if it does."""
    if alt is None or not alt.strip():
        return "no alt text"
    if FILE_LIKE.search(alt.strip()):
        return f"alt text is a file name: {alt!r}"
    if len(alt.split()) < MIN_ALT_WORDS:
        return f"alt text has fewer than {MIN_ALT_WORDS} words: {alt!r}"
    if alt.strip() == caption:
        return "alt text repeats the caption (it should describe what the caption asks to see)"
    return None


def figure_problems(html: str) -> tuple[list[str], set[str]]:
    """(problems, ids of the figures) of one built page."""
    soup = BeautifulSoup(html, "html.parser")
    content = soup.find("article") or soup
    problems, ids = [], set()
    for img in content.find_all("img"):
        figure = img.find_parent("figure")
        where = f"image {img.get('src', '')[:60]!r}"
        if figure is None:
            problems.append(f"{where} is not in a figure")
            continue
        number = figure.find(class_="caption-number")
        text = figure.find(class_="caption-text")
        caption = text.get_text(" ", strip=True) if text else ""
        if number is None or not NUMBER.match(number.get_text(strip=True)):
            problems.append(f"{where}: its figure has no number")
        if len(caption.split()) < MIN_CAPTION_WORDS:
            problems.append(f"{where}: caption {caption!r} is missing or too short")
        if not figure.get("id"):
            problems.append(f"{where}: its figure has no name to refer to it by")
        else:
            ids.add(figure["id"])
        if problem := _alt_problem(img.get("alt"), caption):
            problems.append(f"{where}: {problem}")
        slider = img.find_parent(class_="lmc-slider")
        if slider is not None:     # a kernel-free slider: every frame has its own alt text
            frames = json.loads(slider.find("script", type="application/json").string)
            for value, alt in zip(frames["values"], frames["alts"], strict=True):
                if problem := _alt_problem(alt, caption):
                    problems.append(f"{where}, frame {value}: {problem}")
    return problems, ids


def references(html: str, page: str) -> set[str]:
    """The figure ids that ``page``'s links point to, as ``page#id`` strings."""
    soup = BeautifulSoup(html, "html.parser")
    found = set()
    for a in soup.find_all("a", href=True):
        target, _, anchor = a["href"].partition("#")
        if anchor and "headerlink" not in a.get("class", []):
            found.add(_normalise(f"{(Path(page).parent / target).as_posix() if target else page}#{anchor}"))
    return found


def _normalise(ref: str) -> str:
    """``chapters/../intro.html#x`` -> ``intro.html#x``."""
    path, _, anchor = ref.partition("#")
    parts = []
    for part in path.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) + "#" + anchor
