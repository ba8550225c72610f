"""``rlbook bench --browser``: the book's live panels measured in headless Chromium (ARCHITECTURE.md, section 7).

The workshop's site files are written to a temporary folder beside one page
per chapter that carries panels (each holding only its panel blocks), opened
from ``file://`` in Debian's Chromium driven by Playwright, and measured as a
reader uses them: 32 samples after chapter 1's page has loaded; the lab's
first step with a new worker (its start included), several times; a pause
pressed at full speed, several times, and how many steps still came; the lab
at each speed it offers, with the main-thread tasks over 50 ms in each; every
step of a full run of ``main``'s recipe and its final held-out expected
reward beside ``main``'s seeds; the reward-hack panel's full run; and the
bytes that each page with a panel adds. rlbook's own torch step on the same
recipe is timed in the same process for the ratio.
"""

from __future__ import annotations

import itertools
import re
import statistics
import tempfile
import time
from pathlib import Path

import torch

from rlbook import rl, runs, sampling, world
from rlbook.publish import checkpoints, webworkshop

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
LONG_TASKS = (
    "window.rlbookLongTasks = []; new PerformanceObserver((list) => { for (const e of list.getEntries())"
    " window.rlbookLongTasks.push([e.startTime, e.duration]); }).observe({ entryTypes: ['longtask'] });"
)
CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"


def torch_steps(steps: int = 10, threads: int = runs.DEFAULT_THREADS) -> list[float]:
    """Seconds of each of ``steps`` RL steps of ``main``'s recipe from ``base``, the way ``rlbook.core.loop.train_rl`` takes them.

    Sampling, scoring (with its time-out guard), credit, the reference's log-probs (which ``train_rl`` reads
    every step for the logged KL) and the update, on ``threads`` threads.
    """
    cfg = runs.spec("main").rl_config()
    policy = runs.load("base", checkpoints.SEED).policy()
    reference = runs.load("base", checkpoints.SEED).policy().eval()
    opt, gen, memo = rl.adamw(policy.parameters(), cfg.lr), torch.Generator().manual_seed(0), rl.ReferenceMemo()
    verifier, prompts = rl.make_verifier(cfg), [t.prompt for t in world.split("train")]
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    seconds = []
    try:
        for step in range(1, steps + 1):
            started = time.perf_counter()
            opt.param_groups[0]["lr"] = rl.warmup_lr(cfg.lr, cfg.warmup, step)
            batch_rollouts = sampling.sample(
                policy, prompts, n=cfg.group_size, temperature=cfg.temperature, budget=cfg.budget, generator=gen
            )
            scores, statuses, _ = rl.score_guarded(verifier, batch_rollouts, cfg.guard.verifier_timeout_s)
            advantages, used = rl.credit(cfg, scores, statuses)
            batch = rl.Batch(step, batch_rollouts, scores, statuses, advantages, used)
            rl.update(policy, opt, batch, cfg, memo.logprobs(reference, batch_rollouts))
            seconds.append(time.perf_counter() - started)
    finally:
        torch.set_num_threads(before)
    return seconds


def panel_pages(chapters: Path = CHAPTERS) -> dict[str, list[str]]:
    """The book's pages that carry live panels: the page's file stem -> its panel blocks of raw HTML."""
    pages = {p.stem: webworkshop.page_blocks(p.read_text(encoding="utf-8")) for p in sorted(chapters.glob("*.qmd"))}
    return {stem: blocks for stem, blocks in pages.items() if blocks}


def write_site(root: Path, data: dict | None = None) -> dict[str, tuple[Path, int]]:
    """The workshop's files, and each page with panels holding only its panel blocks, under ``root``.

    Returns, for each panel kind (``data-panel``), the page that carries it and the bytes that page adds:
    the workshop files it loads and its blocks.
    """
    files = {f.name: f.stat().st_size for f in webworkshop.write_assets(root, data)}
    out = {}
    for stem, blocks in panel_pages().items():
        page = root / "chapters" / f"{stem}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(
            "<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' "
            "content='width=device-width, initial-scale=1'><title>"
            + stem
            + "</title></head><body>"
            + "<p>Prose between the panels.</p>".join(blocks)
            + "</body></html>",
            encoding="utf-8",
        )
        added = sum(files[name] for name in webworkshop.page_files(blocks)) + sum(len(b.encode()) for b in blocks)
        for kind in re.findall(r'data-panel="([\w-]+)"', "".join(blocks)):
            out[kind] = (page, added)
    return out


LAB, HACK = "document.querySelector('[data-panel=lab]')", "document.querySelector('[data-panel=hack]')"
SPEED_LABELS = {1: "1 step a second", 5: "5 a second", 20: "20 a second", 0: "as fast as it goes"}
"""The lab's speed buttons by steps a second (0: as fast as it goes)."""


def _long_tasks(tab, since: float) -> list[float]:
    return [d for t, d in tab.evaluate("window.rlbookLongTasks") if t >= since]


def _first_steps(tab, lab, times: int, after_ms: int = 0) -> list[float]:
    """Milliseconds from asking for a new run's first step, at once, to its arrival, ``times`` runs.

    The lab makes a new run's worker as soon as the run exists while the lab is in view; the step is asked
    for straight after, so nearly all of the worker's start is waited for and counted; or, with ``after_ms``,
    that long after, as a reader who looks at the lab before pressing.
    """
    out = []
    for _ in range(times):
        lab.get_by_role("button", name="New run", exact=True).click()
        tab.wait_for_timeout(after_ms)
        lab.get_by_role("button", name="Step", exact=True).click()
        tab.wait_for_function(f"{LAB}.workshopRun.timing.firstStep !== null", timeout=120_000)
        out.append(tab.evaluate(f"{LAB}.workshopRun.timing.firstStep"))
        tab.wait_for_timeout(300)  # the starting checkpoint's evaluation, which follows the first step
    return out


def _pauses(tab, lab, times: int) -> list[tuple[int, float]]:
    """Pause at full speed ``times`` times: for each, the steps that arrived after the press and the
    milliseconds from the press to the last of them (0 if none)."""
    out = []
    lab.get_by_label(SPEED_LABELS[0]).check()
    for k in range(times):
        if tab.evaluate(f"{LAB}.dataset.state") == "done":  # a fast machine finishes a run between pauses
            lab.get_by_role("button", name="New run", exact=True).click()
        lab.get_by_role("button", name="Train", exact=True).click()
        tab.wait_for_timeout(400 + 137 * k)  # pressed at a different point of a step each time
        if tab.evaluate(f"{LAB}.dataset.state") != "running":  # it ended before the press: nothing to pause
            continue
        lab.get_by_role("button", name="Pause", exact=True).click()
        at = tab.evaluate(f"[{LAB}.workshopRun.timing.paused, {LAB}.workshopRun.timing.stepsAtPause]")
        tab.wait_for_timeout(1500)
        late = tab.evaluate(f"{LAB}.workshopRun.steps.slice({at[1]}).map(s => s.arrived)")
        out.append((len(late), max(late) - at[0] if late else 0.0))
    return out


def _speeds(tab, lab, seconds: float = 4.0) -> dict[int, dict]:
    """The lab trained ``seconds`` at each speed but the last, then to its end as fast as it goes: steps taken,
    the time taken, the median time between steps asked for, and the main-thread tasks over 50 ms, per speed."""
    out = {}
    lab.get_by_role("button", name="New run", exact=True).click()
    lab.get_by_label(SPEED_LABELS[1]).check()
    lab.get_by_role("button", name="Train", exact=True).click()
    for speed in (1, 5, 20, 0):
        lab.get_by_label(SPEED_LABELS[speed]).check()
        start, steps = tab.evaluate("performance.now()"), tab.evaluate(f"{LAB}.workshopRun.steps.length")
        if speed:
            tab.wait_for_timeout(seconds * 1000)
        else:
            tab.wait_for_function(f"{LAB}.dataset.state === 'done'", timeout=600_000)
            tab.wait_for_function(f"{LAB}.querySelector('.rw-summary').textContent !== ''", timeout=60_000)
        asked = [t for t in tab.evaluate(f"{LAB}.workshopRun.timing.asked") if t >= start]
        out[speed] = {
            "steps": tab.evaluate(f"{LAB}.workshopRun.steps.length") - steps,
            "seconds": (tab.evaluate("performance.now()") - start) / 1000,
            "asked_every_ms": statistics.median(b - a for a, b in itertools.pairwise(asked))
            if len(asked) > 2
            else None,
            "long_tasks_ms": _long_tasks(tab, start),
        }
    return out


def measure(samples: int = 20, first_steps: int = 5, pauses: int = 5) -> dict:
    """The browser's figures (see the module docstring); raises RuntimeError if Chromium or Playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise RuntimeError("Playwright's Python package is not installed (pip install playwright)") from None
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    data = checkpoints.export_data()
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        pages = write_site(Path(folder), data)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.add_init_script(LONG_TASKS)
            tab.goto(pages["lab"][0].as_uri())
            tab.wait_for_function(
                "document.querySelectorAll('[data-panel=sample] .rw-chip').length === 32 && "
                f"{LAB}.dataset.ready === 'true'"
            )
            loaded_ms = tab.evaluate("performance.now()")
            loading_tasks = _long_tasks(tab, 0)
            again = tab.get_by_role("button", name="Sample 32 again")
            sample_ms = []
            for _ in range(samples):
                again.click()
                shown = tab.locator("[data-panel=sample]").get_attribute("data-sample-ms")
                if shown is None:
                    raise RuntimeError("the sample panel did not report how long sampling took (data-sample-ms)")
                sample_ms.append(float(shown))
            lab = tab.locator("[data-panel=lab]")
            first = _first_steps(tab, lab, first_steps)
            later = _first_steps(tab, lab, first_steps, after_ms=3000)
            paused = _pauses(tab, lab, pauses)
            speeds = _speeds(tab, lab)
            run = tab.evaluate(
                f"(() => {{ const r = {LAB}.workshopRun; return {{ seed: r.seed, steps: r.steps.map(s => "
                "[s.sampleMs, s.watchMs, s.updateMs]), evals: r.evals.map(e => e.heldoutExpectedReward),"
                " draw: r.steps.map(s => s.drawMs) }; })()"
            )
            tab.goto(pages["hack"][0].as_uri())
            tab.wait_for_function(f"{HACK}.dataset.ready === 'true'", timeout=60_000)
            hack = tab.locator("[data-panel=hack]")
            hack.get_by_label(SPEED_LABELS[0]).check()
            started = tab.evaluate("performance.now()")
            hack.get_by_role("button", name="Train", exact=True).click()
            tab.wait_for_function(f"{HACK}.dataset.state === 'done'", timeout=600_000)
            hacked = tab.evaluate(
                f"(() => {{ const r = {HACK}.workshopRun; return {{ shares: r.steps.map(s => "
                "s.loopholeShare), evals: r.evals.map(e => e.heldoutExpectedReward), "
                "seconds: (performance.now() - " + str(started) + ") / 1000 }; })()"
            )
        finally:
            browser.close()
    torch_s = torch_steps()
    finals = {r["seed"]: r["heldout_expected_reward"][-1] for r in data["references"]["main"]}
    return {
        "page_loaded_ms": loaded_ms,
        "loading_long_tasks_ms": loading_tasks,
        "draw_ms": run["draw"],
        "sample32_ms": sample_ms,
        "first_step_ms": first,
        "first_step_later_ms": later,
        "pauses": paused,
        "speeds": speeds,
        "step_ms": [sum(s) for s in run["steps"]],
        "step_sample_ms": [s[0] for s in run["steps"]],
        "step_watch_ms": [s[1] for s in run["steps"]],
        "step_update_ms": [s[2] for s in run["steps"]],
        "torch_step_ms": [1000 * s for s in torch_s],
        "final_heldout": run["evals"][-1],
        "evaluations": len(run["evals"]),
        "main_final_heldout": finals,
        "seed": run["seed"],
        "hack": hacked,
        "exploit_takeovers": [r["takeover"] for r in data["references"]["exploit"]],
        "bytes_added": {page.name: added for page, added in pages.values()},
        "panels": {page.name: [k for k, (p, _) in pages.items() if p == page] for page, _ in pages.values()},
    }


def lines(report: dict) -> list[str]:
    """The figures as the bench prints them, each with its target."""
    med = statistics.median
    step, torch_step = med(report["step_ms"]), med(report["torch_step_ms"])
    finals, first, pauses = report["main_final_heldout"], report["first_step_ms"], report["pauses"]
    loading = report["loading_long_tasks_ms"]
    out = [
        (
            f"page ready after {report['page_loaded_ms']:.0f} ms (file://, offline); main-thread tasks over 50 ms "
            f"while it loads: {len(loading)}" + (f" (longest {max(loading):.0f} ms)" if loading else "")
        ),
        (
            f"32 samples: median {med(report['sample32_ms']):.1f} ms, max {max(report['sample32_ms']):.1f} ms "
            f"over {len(report['sample32_ms'])} presses (target <= 20 ms)"
        ),
        (
            f"first RL step asked for as a new run starts, the worker's start included: median {med(first):.0f} ms, "
            f"max {max(first):.0f} ms over {len(first)} new runs (target <= 400 ms); asked 3 s after: median "
            f"{med(report['first_step_later_ms']):.0f} ms"
        ),
        (
            f"one RL step of main's batch in the worker: median {step:.0f} ms (sampling {med(report['step_sample_ms']):.0f}, "
            f"watching {med(report['step_watch_ms']):.0f}, update {med(report['step_update_ms']):.0f}), "
            f"max {max(report['step_ms']):.0f} ms (target <= 100 ms)"
        ),
        (
            f"rlbook's torch step, same recipe, {runs.DEFAULT_THREADS} thread: median {torch_step:.0f} ms; "
            f"browser / torch = {step / torch_step:.2f}"
        ),
        (
            f"pause at full speed, {len(pauses)} presses: at most {max(n for n, _ in pauses)} step arrived after a press, "
            f"the last {max(ms for _, ms in pauses):.0f} ms after it (target: within one step)"
        ),
    ]
    out.append(
        f"the lab's own drawing of a step on the main thread: median {med(report['draw_ms']):.1f} ms, "
        f"max {max(report['draw_ms']):.1f} ms"
    )
    for speed, seen in report["speeds"].items():
        name = f"{speed} a second" if int(speed) else "as fast as it goes"
        every = f", asked every {seen['asked_every_ms']:.0f} ms (median)" if seen["asked_every_ms"] else ""
        tasks = seen["long_tasks_ms"]
        out.append(
            f"lab at {name}: {seen['steps']} steps in {seen['seconds']:.1f} s{every}; main-thread tasks over "
            f"50 ms: {len(tasks)}" + (f" (longest {max(tasks):.0f} ms)" if tasks else "") + " (target 0)"
        )
    hack = report["hack"]
    over = next((k + 1 for k, x in enumerate(hack["shares"]) if x > 0.5), None)
    out += [
        (
            f"held-out expected reward after the run (seed {report['seed']}): {report['final_heldout']:.3f}; "
            f"main's seeds {', '.join(f'{s}: {v:.3f}' for s, v in finals.items())} "
            f"(range {min(finals.values()):.3f} to {max(finals.values()):.3f})"
        ),
        (
            f"reward-hack panel: {len(hack['shares'])} steps in {hack['seconds']:.1f} s; the loophole "
            + (f"passed one half at step {over}" if over else f"peaked at {max(hack['shares']):.0%}")
            + f", held-out {hack['evals'][0]:.2f} -> {hack['evals'][-1]:.2f}; the book's exploit seeds passed it at "
            f"steps {', '.join(str(t) for t in report['exploit_takeovers'])}"
        ),
    ]
    out += [
        f"bytes added by {page} ({', '.join(report['panels'][page])}): {added:,} (target <= 300,000)"
        for page, added in report["bytes_added"].items()
    ]
    return out
