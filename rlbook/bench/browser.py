"""``rlbook bench --browser``: chapter 1's web workshop measured in headless Chromium (DESIGN.md section 11).

The workshop's site files are written to a temporary folder beside a page
holding chapter 1's workshop markup, opened from ``file://`` in Debian's
Chromium driven by Playwright, and measured as a reader uses it: 32 samples
after the page has loaded, every step of a full run of ``main``'s recipe in
the worker, the run's wall time with its checkpoint evaluations, the
main-thread tasks over 50 ms while it trains, its final held-out expected
reward beside ``main``'s seeds, and the bytes the workshop adds to the site.
rlbook's own torch step on the same recipe is timed in the same process for
the ratio.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

from rlbook import rl, runs, sampling, world
from rlbook.publish import checkpoints, webworkshop

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
LONG_TASKS = ("window.rlbookLongTasks = []; new PerformanceObserver((list) => { for (const e of list.getEntries())"
              " window.rlbookLongTasks.push([e.startTime, e.duration]); }).observe({ entryTypes: ['longtask'] });")
CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "01-rl-loop.qmd"


def torch_steps(steps: int = 10, threads: int = runs.DEFAULT_THREADS) -> list[float]:
    """Seconds of each of ``steps`` RL steps of ``main``'s recipe from ``base``, the way ``rl.train_rl`` takes them.

    Sampling, scoring (with its time-out guard), credit, the reference's log-probs (which ``train_rl`` reads
    every step for the logged KL) and the update, on ``threads`` threads.
    """
    cfg = runs.spec("main").rl
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
            batch_rollouts = sampling.sample(policy, prompts, n=cfg.group_size, temperature=cfg.temperature,
                                             budget=cfg.budget, generator=gen)
            scores, statuses, _ = rl.score_guarded(verifier, batch_rollouts, cfg.guard.verifier_timeout_s)
            advantages, used = rl.credit(cfg, scores, statuses)
            batch = rl.Batch(step, batch_rollouts, scores, statuses, advantages, used)
            rl.update(policy, opt, batch, cfg, memo.logprobs(reference, batch_rollouts))
            seconds.append(time.perf_counter() - started)
    finally:
        torch.set_num_threads(before)
    return seconds


def write_site(root: Path) -> tuple[Path, int]:
    """The workshop's files and a page of chapter 1's workshop markup under ``root``; the page and the bytes added."""
    files = webworkshop.write_assets(root)
    blocks = webworkshop.page_blocks(CHAPTER.read_text(encoding="utf-8"))
    page = root / "chapters" / "01-rl-loop.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>workshop</title></head><body>"
                    + "\n".join(blocks) + "</body></html>", encoding="utf-8")
    return page, sum(f.stat().st_size for f in files) + sum(len(b.encode()) for b in blocks)


def measure(samples: int = 20) -> dict:
    """The browser's figures (see the module docstring); raises RuntimeError if Chromium or Playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise RuntimeError("Playwright's Python package is not installed (pip install playwright)") from None
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        page_path, added = write_site(Path(folder))
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.add_init_script(LONG_TASKS)
            tab.goto(page_path.as_uri())
            tab.wait_for_function("document.querySelectorAll('.rw-chip').length === 32 && "
                                  "document.querySelector('[data-panel=train]').dataset.ready === 'true'")
            loaded_ms = tab.evaluate("performance.now()")
            again = tab.get_by_role("button", name="Sample 32 again")
            sample_ms = []
            for _ in range(samples):
                again.click()
                sample_ms.append(float(tab.locator("[data-panel=sample]").get_attribute("data-sample-ms")))
            started = tab.evaluate("performance.now()")
            tab.get_by_role("button", name="Train", exact=True).click()
            tab.wait_for_function("document.querySelector('[data-panel=train]').dataset.state === 'done'",
                                  timeout=600_000)
            run = tab.evaluate("document.querySelector('[data-panel=train]').workshopRun")
            finished = tab.evaluate("performance.now()")
            long_tasks = [d for t, d in tab.evaluate("window.rlbookLongTasks") if t >= started]
        finally:
            browser.close()
    torch_s = torch_steps()
    steps_ms = [s["sampleMs"] + s["updateMs"] for s in run["steps"]]
    finals = {r["seed"]: r["heldout_expected_reward"][-1] for r in checkpoints.export_data()["main_seeds"]}
    return {"page_loaded_ms": loaded_ms, "sample32_ms": sample_ms,
            "step_ms": steps_ms, "step_sample_ms": [s["sampleMs"] for s in run["steps"]],
            "step_update_ms": [s["updateMs"] for s in run["steps"]], "torch_step_ms": [1000 * s for s in torch_s],
            "full_run_s": (finished - started) / 1000, "long_tasks_while_training_ms": long_tasks,
            "final_heldout": run["evals"][-1]["heldoutExpectedReward"], "evaluations": len(run["evals"]), "main_final_heldout": finals,
            "bytes_added": added, "seed": run["seed"]}


def lines(report: dict) -> list[str]:
    """The figures as the bench prints them, each with its target."""
    med = statistics.median
    step, torch_step = med(report["step_ms"]), med(report["torch_step_ms"])
    finals = report["main_final_heldout"]
    return [
        f"page ready after {report['page_loaded_ms']:.0f} ms (file://, offline)",
        (f"32 samples: median {med(report['sample32_ms']):.1f} ms, max {max(report['sample32_ms']):.1f} ms "
        f"over {len(report['sample32_ms'])} presses (target <= 20 ms)"),
        (f"one RL step of main's batch in the worker: median {step:.0f} ms (sampling {med(report['step_sample_ms']):.0f}, "
        f"update {med(report['step_update_ms']):.0f}), first {report['step_ms'][0]:.0f} ms, max {max(report['step_ms']):.0f} ms "
        f"(target <= 400 ms, stretch 100 ms)"),
        (f"rlbook's torch step, same recipe, {runs.DEFAULT_THREADS} thread: median {torch_step:.0f} ms; "
        f"browser / torch = {step / torch_step:.2f}"),
        (f"main's {len(report['step_ms'])} steps with {report['evaluations']} checkpoint evaluations: "
        f"{report['full_run_s']:.1f} s (target < 60 s)"),
        f"main-thread tasks over 50 ms while training: {len(report['long_tasks_while_training_ms'])}"
        + (f" (longest {max(report['long_tasks_while_training_ms']):.0f} ms)" if report["long_tasks_while_training_ms"] else ""),
        (f"held-out expected reward after the run (seed {report['seed']}): {report['final_heldout']:.3f}; "
        f"main's seeds {', '.join(f'{s}: {v:.3f}' for s, v in finals.items())} "
        f"(range {min(finals.values()):.3f} to {max(finals.values()):.3f})"),
        f"bytes the workshop adds to the site: {report['bytes_added']:,} (target <= 300,000)",
    ]
