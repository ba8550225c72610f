"""Headless Chromium for the browser tests: one browser per session, a fresh page per test.

Debian's ``chromium`` (``/usr/bin/chromium``) is driven by Playwright's Python
package; Playwright's own browser download cannot work on these machines.
``.ci/run`` installs both; a machine without either skips these tests with
the reason. Every page starts offline: any request that is not for a
``file://`` URL is refused and recorded, so a test can assert that a page
reaches nothing beyond its own files. The ``page`` fixture fails the test if
the page logged a console error or threw an uncaught exception. The ``site``
fixture builds the whole book once per session (its site and its notebooks
for Jupyter), for the tests of the site and of the notebooks in JupyterLab;
``server`` serves it on 127.0.0.1, ``pages`` lists its pages and ``tab``
opens one in a browser context that records every problem (``sitekit.Tab``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest
from browser.sitekit import WIDE, Tab, served

from rlbook.bench import browser as bench_browser
from rlbook.publish.build import build_book

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("_quarto.yml", "index.qmd", "references.bib", "chapters")
"""What the whole book is built from."""
CHROMIUM = Path(bench_browser.CHROMIUM)
CHROMIUM_ARGS = bench_browser.CHROMIUM_ARGS  # one list of flags, the benchmark's


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium, shared by the session's tests."""
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="Playwright's Python package is not installed (pip install playwright): the browser tests cannot run",
    )
    executable = CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")
    if executable is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the browser tests cannot run")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class PageLog:
    """What a page did that a test may assert about: console errors, uncaught exceptions, refused requests."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.refused: list[str] = []


@pytest.fixture
def page(browser):
    """A new page in a context of its own, offline, with its log as ``page.log``; fails on console errors."""
    context = browser.new_context(viewport={"width": 1100, "height": 1400})
    log = PageLog()

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            log.refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    tab = context.new_page()
    tab.on("console", lambda message: message.type == "error" and log.errors.append(message.text))
    tab.on("pageerror", lambda error: log.errors.append(str(error)))
    tab.log = log
    yield tab
    context.close()
    assert not log.errors, f"the page logged errors: {log.errors}"


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The built book's ``_book/``: every page of the real book, built once for the test run.

    ``RLBOOK_TEST_SITE`` names a site built already (a ``_book/`` folder) to test instead. When the suite runs on
    several pytest-xdist workers (``make test``), the first worker to ask builds it into the run's shared
    temporary folder while the others wait on a lock, and all of them test that one site.
    """
    if os.environ.get("RLBOOK_TEST_SITE"):
        return Path(os.environ["RLBOOK_TEST_SITE"])
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _built(tmp_path_factory.mktemp("book"))
    shared = tmp_path_factory.getbasetemp().parent  # the same folder for every worker of this run
    with open(shared / "book.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (shared / "book" / "_book" / "index.html").is_file():
            return shared / "book" / "_book"
        shutil.rmtree(shared / "book", ignore_errors=True)  # a worker that failed half-way
        (shared / "book").mkdir()
        return _built(shared / "book")


def _built(root: Path) -> Path:
    """Build the whole book from this checkout's sources in ``root``; its ``_book/``."""
    for name in SOURCES:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, root / name)
    os.environ.setdefault("RLBOOK_CACHE", str(REPO / ".rlbook-cache"))
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append, prefetch=True) == 0, "\n".join(lines)
    assert not [line for line in lines if "left out of this build" in line], "\n".join(lines)
    return root / "_book"


@pytest.fixture(scope="session")
def server(site):
    """The site served over HTTP on 127.0.0.1 (a free port); yields its base URL."""
    with served(site) as origin:
        yield origin


@pytest.fixture(scope="session")
def pages(site) -> list[str]:
    """Every HTML page of the site, relative to its root ("index.html", "chapters/01-rl-loop.html", ...)."""
    found = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert "index.html" in found and "chapters/appendix-trl.html" in found
    return found


@pytest.fixture
def tab(browser, server):
    """Open a Tab on the served site: ``tab(size, scheme)``; every tab's problems fail the test."""
    opened: list[Tab] = []

    def make(size=WIDE, scheme="light", **context) -> Tab:
        opened.append(Tab(browser, server, size, scheme, **context))
        return opened[-1]

    yield make
    problems = [p for t in opened for p in t.problems]
    for t in opened:
        t.close()
    assert not problems, problems
