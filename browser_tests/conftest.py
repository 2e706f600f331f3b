"""Fixtures of the browser tests: the built site served locally, and one headless Chromium.

Run after the book build:  pytest browser_tests
Options choose another site (the test of the test points them at deliberately broken ones).
"""
from pathlib import Path

import pytest

from browser_tests import bookcheck

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser):
    group = parser.getgroup("browser", "browser test of the built book")
    group.addoption("--book-html", default=str(ROOT / "_build" / "html"),
                    help="folder of the built HTML site (default: _build/html)")
    group.addoption("--book-toc", default=str(ROOT / "_toc.yml"),
                    help="the book's _toc.yml, which names the pages to open (default: _toc.yml)")
    group.addoption("--screenshots", default=str(ROOT / "_build" / "screenshots"),
                    help="folder for one full-page screenshot per page; '' for none")


def pytest_generate_tests(metafunc):
    """One test per page of the toc, named by the page (``test_page[chapters/01_x.html]``)."""
    if "page_name" in metafunc.fixturenames:
        toc = metafunc.config.getoption("--book-toc")
        metafunc.parametrize("page_name", bookcheck.toc_pages(toc))


@pytest.fixture(scope="session")
def site(pytestconfig) -> Path:
    path = Path(pytestconfig.getoption("--book-html"))
    if not (path / "index.html").is_file():
        pytest.fail(f"no built site at {path} (index.html missing): build the book first "
                    "(jupyter-book build . --all --warningiserror)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def screenshots(pytestconfig) -> Path | None:
    folder = pytestconfig.getoption("--screenshots")
    return Path(folder) if folder else None


@pytest.fixture(scope="session")
def base_url(site):
    with bookcheck.serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        chromium = bookcheck.launch(playwright)
    except FileNotFoundError as err:
        playwright.stop()
        pytest.fail(str(err), pytrace=False)
    yield chromium
    chromium.close()
    playwright.stop()


@pytest.fixture(scope="session")
def context(browser):
    """One browser profile for all pages, like a reader clicking through the book."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    yield ctx
    ctx.close()
