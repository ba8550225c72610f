"""The book's notebooks as a student uses them: opened in a real JupyterLab in headless Chromium, and run.

The notebooks are those of the session's book build (``site`` in
conftest.py: ``_book/notebooks/``, the copies of ``_build/notebooks/``),
copied to a folder of their own that JupyterLab serves. JupyterLab is started
from the test on 127.0.0.1 on a free port with a random token, with settings,
workspaces and runtime files in temporary folders, and is stopped by the
fixture's teardown. Every notebook must open unmodified, run all its cells
with no error, show no raw Quarto markup and keep its solutions closed.
In chapter 1, a wrong answer typed into exercise 1 still fails its check after
"Run All", and the workshop's chart changes when its slider is dragged. The
time each "Run All" took is printed, and a screenshot of each notebook goes to
``_build/test-output/screenshots/jupyterlab-*.png`` (``RLBOOK_SCREENSHOTS`` moves it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rlbook.publish.config import book_pages

REPO = Path(__file__).resolve().parents[2]
RAW = (":::", "{#sec-", "@fig-", "[@")
"""Quarto markup that must never reach a rendered cell."""
SETTINGS = {
    # Every cell in the page, so that all of them can be read (JupyterLab otherwise renders only those in view).
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # No question about news, no check for updates: nothing leaves the machine.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}
WRONG_LABELS = (
    'labels = {"state": "U:", "action": "#", "trajectory": [], "rewards": [1.0], "return": 0.0, "policy": "mine"}'
)
RUN_ALL_TIMEOUT_S = 300
SCREENSHOTS = Path(os.environ.get("RLBOOK_SCREENSHOTS") or REPO / "_build" / "test-output" / "screenshots")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Lab:
    """A running JupyterLab: where it listens, its token and the folder it serves."""

    def __init__(self, url: str, token: str, folder: Path):
        self.url, self.token, self.folder = url, token, folder

    def notebook_url(self, name: str) -> str:
        return f"{self.url}lab/tree/{name}?reset&token={self.token}"  # reset: no tab of an earlier test reopens


@pytest.fixture(scope="session")
def lab(site, tmp_path_factory):
    """JupyterLab serving a copy of the book's notebooks; stopped (and its kernels with it) at the end."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (pip install -e '.[dev]')")
    home = tmp_path_factory.mktemp("jupyterlab")
    folder = home / "notebooks"
    shutil.copytree(site / "notebooks", folder)
    for name, values in SETTINGS.items():
        (home / "settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / "settings" / name).write_text(json.dumps(values))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    env.pop("RLBOOK_BUILDING", None)  # set by the session's book build; a student's kernel runs without it
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={folder}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with open(home / "server.log", "w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(f"http://127.0.0.1:{port}/", token, server, home / "server.log")
            yield Lab(f"http://127.0.0.1:{port}/", token, folder)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_until_up(url: str, token: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}api/status?token={token}", timeout=5):
                return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start:\n" + log.read_text()) from None
            time.sleep(0.5)


@pytest.fixture
def tab(browser, lab):
    """A browser page that may reach the JupyterLab server only; any other request is refused and fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith(lab.url):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    yield page
    page.evaluate("""async () => {  // the notebook's kernel holds a Python with torch: stop it
        const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        if (w && w.sessionContext) { await w.sessionContext.shutdown(); }
    }""")
    context.close()
    assert not refused, f"JupyterLab's page asked for something beyond its server: {refused}"


def _open(tab, lab: Lab, name: str) -> None:
    """Open a notebook and wait until its kernel is idle."""
    tab.goto(lab.notebook_url(name))
    tab.wait_for_function(
        """(name) => {
        const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        return w && w.context && w.context.path === name && w.context.isReady
            && w.sessionContext.session && w.sessionContext.session.kernel
            && w.sessionContext.session.kernel.status === 'idle';
    }""",
        arg=name,
        timeout=120_000,
    )
    tab.wait_for_timeout(1000)  # anything JupyterLab would rewrite on opening is done by now


def _dirty(tab) -> bool:
    return tab.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")


def _run_all(tab) -> float:
    """Run every cell (JupyterLab's "Run All Cells") and return the seconds it took."""
    started = time.perf_counter()
    tab.evaluate("async () => await window.jupyterapp.commands.execute('notebook:run-all-cells')")
    tab.wait_for_function(
        """() => {
        const w = window.jupyterapp.shell.currentWidget;
        return w.sessionContext.session.kernel.status === 'idle'
            && w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount !== null);
    }""",
        timeout=RUN_ALL_TIMEOUT_S * 1000,
    )
    return time.perf_counter() - started


def _cells(tab) -> list[dict]:
    return tab.evaluate("() => window.jupyterapp.shell.currentWidget.model.toJSON().cells")


def _rendered_text(tab) -> str:
    return "\n".join(tab.locator(".jp-MarkdownCell .jp-RenderedMarkdown, .jp-OutputArea-output").all_inner_texts())


def _errors(cells: list[dict]) -> list[str]:
    found = []
    for index, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                found.append(f"cell {index}: {output['ename']}: {output['evalue']}")
    return found


def _check_output(cells: list[dict], call: str) -> str:
    cell = next(c for c in cells if c["cell_type"] == "code" and call in "".join(c["source"]))
    return "".join("".join(o.get("text", "")) for o in cell["outputs"])


NOTEBOOKS = [page.stem for page in book_pages(REPO)]


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_each_notebook_opens_unmodified_runs_all_and_reads_clean(tab, lab, stem):
    name = f"{stem}.ipynb"
    if not (lab.folder / name).is_file():
        pytest.skip(f"{name} is not among the built notebooks")
    _open(tab, lab, name)
    assert not _dirty(tab), f"{name} shows as modified as soon as JupyterLab opens it"
    seconds = _run_all(tab)
    print(f"\n{name}: Run All in {seconds:.1f} s")
    cells = _cells(tab)
    assert not _errors(cells), _errors(cells)
    text = _rendered_text(tab)
    raw = [token for token in RAW if token in text]
    assert not raw, f"{name} shows raw markup {raw}: " + text[max(0, text.find(raw[0]) - 200) :][:400]
    details = tab.locator(".jp-RenderedMarkdown details")
    assert all(d.get_attribute("open") is None for d in details.all()), "a solution is open"
    solutions = tab.locator(".jp-RenderedMarkdown details pre")
    assert not any(s.is_visible() for s in solutions.all()), "a solution's code shows before it is opened"
    if any(".check_" in "".join(c["source"]) for c in cells if c["cell_type"] == "code"):  # it has exercises
        assert details.count() > 0, f"{name} has exercises but no closed solution"
        details.first.evaluate("d => d.scrollIntoView()")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / f"jupyterlab-{stem}.png"))


def _set_cell(tab, index: int, text: str) -> None:
    """Type ``text`` into code cell ``index`` (of all cells), in place of what it held."""
    editor = tab.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    tab.keyboard.press("Control+a")
    tab.keyboard.insert_text(text)


def _workshop_picture(tab) -> str:
    output = tab.locator(".jp-OutputArea .widget-output").first
    return output.inner_html()


def test_chapter_1_keeps_a_wrong_answer_wrong_and_its_workshop_redraws_when_the_slider_moves(tab, lab):
    name = "01-rl-loop.ipynb"
    if not (lab.folder / name).is_file():
        pytest.skip(f"{name} is not among the built notebooks")
    _open(tab, lab, name)
    cells = _cells(tab)
    check = next(i for i, c in enumerate(cells) if "check_rollout_labels" in "".join(c["source"]))
    assert "labels = " in "".join(cells[check - 1]["source"]), "exercise 1's answer cell comes before its check"
    _set_cell(tab, check - 1, WRONG_LABELS)
    _run_all(tab)
    cells = _cells(tab)
    assert "".join(cells[check - 1]["source"]) == WRONG_LABELS
    verdict = _check_output(cells, "check_rollout_labels")
    assert verdict.startswith("NOT YET"), f"a wrong answer was graded: {verdict}"
    tab.evaluate(f"""async () => {{
        const w = window.jupyterapp.shell.currentWidget;
        w.content.activeCellIndex = {check};
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }}""")
    tab.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'")
    assert _check_output(_cells(tab), "check_rollout_labels").startswith("NOT YET")

    slider = tab.locator(".widget-hslider .noUi-handle, .widget-slider .noUi-handle").first
    slider.scroll_into_view_if_needed()
    tab.wait_for_function("() => document.querySelector('.widget-output img, .widget-output svg') !== null")
    before = _workshop_picture(tab)
    box = slider.bounding_box()
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tab.mouse.down()
    tab.mouse.move(box["x"] - 60, box["y"] + box["height"] / 2, steps=8)
    tab.mouse.up()
    tab.wait_for_function(
        "(before) => { const o = document.querySelector('.widget-output');"
        " return o && o.innerHTML !== before && o.querySelector('img, svg'); }",
        arg=before,
        timeout=60_000,
    )
    readout = tab.locator(".widget-readout").first.inner_text()
    assert readout != "1.0" and _workshop_picture(tab) != before
    print(f"\nexercise 1 with a wrong answer: {verdict.strip()[:90]}...; slider at T = {readout}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / "jupyterlab-workshop.png"))
