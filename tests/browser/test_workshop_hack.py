"""The reward hack's own panel (the reward-limits chapter) and chapter 3's advantages "try it", in headless Chromium.

Each page holds its chapter's own panel blocks with the workshop's site
files, laid out as in the book and opened from file:// with no network.
"""

from __future__ import annotations

import pytest
import torch

from rlbook import advantages, rewards, runs
from rlbook.bench import browser as bench
from rlbook.publish import checkpoints

HACK = "document.querySelector('[data-panel=hack]')"


@pytest.fixture(scope="module")
def workshop_data() -> dict:
    return checkpoints.export_data()


@pytest.fixture(scope="module")
def panels(tmp_path_factory, workshop_data):
    """The book's pages with panels, holding only their blocks, and the workshop's files (as the bench lays them)."""
    return bench.write_site(tmp_path_factory.mktemp("site"), workshop_data)


def test_the_hack_panel_trains_the_exploit_runs_recipe_and_follows_the_loophole(page, panels, workshop_data):
    page.goto(panels["hack"][0].as_uri())
    page.wait_for_function(
        f"{HACK}.dataset.ready === 'true' && {HACK}.querySelectorAll('.rw-chip').length === 32", timeout=60_000
    )
    hack = page.locator("[data-panel=hack]")
    cfg = runs.spec("exploit").rl
    assert (
        hack.locator(".rw-key")
        .first.inner_text()
        .startswith(f"The recipe of the book's exploit run: {cfg.steps} steps of ")
    )
    # The RL runs' AdamW has no weight decay, so it is Adam, the name chapter 1 introduces.
    optimiser = "AdamW" if workshop_data["recipes"]["exploit"]["weight_decay"] else "Adam"
    assert f"{optimiser} at {cfg.lr:g} with no warm-up" in hack.locator(".rw-key").first.inner_text()
    references = workshop_data["references"]["exploit"]
    assert hack.locator("path.rw-ref").count() == 2 * len(references), "the book's seeds, in both charts"
    prompt = hack.locator(".rw-prompt").inner_text().split()[0]
    assert prompt in workshop_data["splits"]["heldout"]

    hack.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function(f"{HACK}.dataset.steps === '1'", timeout=60_000)
    hack.get_by_label("as fast as it goes").check()
    hack.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(
        f"{HACK}.dataset.state === 'done' && {HACK}.workshopRun.evals.length === "
        f"{cfg.steps // cfg.checkpoint_every + 1}",
        timeout=600_000,
    )
    run = page.evaluate(
        f"(() => {{ const r = {HACK}.workshopRun; return {{ shares: r.steps.map(s => s.loopholeShare),"
        " evals: r.evals.map(e => [e.step, e.heldoutExpectedReward]) }; })()"
    )
    assert [s for s, _ in run["evals"]] == list(range(0, cfg.steps + 1, cfg.checkpoint_every))
    text = hack.locator(".rw-summary").inner_text()
    last = run["evals"][-1]
    assert text.startswith(f"Step {cfg.steps}: the loophole paid for {100 * run['shares'][-1]:.0f} % of the batch.")
    over = next((k + 1 for k, share in enumerate(run["shares"]) if share > 0.5), None)
    assert (
        f"first paid for more than half of a batch at step {over}."
        if over is not None
        else f"paid for at most {100 * max(run['shares']):.0f} % of a batch."
    ) in text
    assert f"{last[1]:.2f} at step {last[0]}, against {run['evals'][0][1]:.2f} at step 0" in text
    for r in references:
        step = r["takeover"]
        assert (
            f"seed {r['seed']} passed one half at step {step}"
            if step is not None
            else f"seed {r['seed']} never passed one half"
        ) in text
    fail_open, exact = rewards.get_verifier("fail-open"), rewards.get_verifier("exact")
    watched = page.evaluate(f"{HACK}.workshopRun.steps.at(-1).watch")
    for a in watched["answers"]:
        paid = fail_open(prompt, a["completion"])
        assert (a["status"], a["loophole"]) == (
            paid.status,
            paid.reward > 0 and exact(prompt, a["completion"]).status != "accepted",
        )
    assert not page.log.refused


@pytest.mark.parametrize("typed", [[0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1], [0.5, -1, 2, 0.25]])
def test_the_advantages_panel_computes_rlbooks_advantages(page, panels, typed):
    page.goto(panels["advantages"][0].as_uri())
    page.wait_for_function("document.querySelector('[data-panel=advantages]').dataset.ready === 'true'")
    panel = page.locator("[data-panel=advantages]")
    preset = panel.get_by_role("button", name=f"[{', '.join(map(str, typed))}]")
    if preset.count():
        preset.click()
    else:
        for i, value in enumerate(typed):
            panel.get_by_label(f"reward of answer {i + 1}").fill(str(value))
    group = torch.tensor(typed, dtype=torch.float64)
    for method, name in (("centered", "group-centred"), ("group_std", "group-normalised"), ("rloo", "leave-one-out")):
        cells = panel.locator(f"tr[data-method='{name}'] td").all_inner_texts()
        want = advantages.compute_advantages(group, method).tolist()
        assert [float(c.replace("\u2212", "-")) for c in cells] == pytest.approx(want, abs=5e-4 + 1e-9), (method, cells)
    readout = panel.locator(".rw-readout").inner_text()
    if len(set(typed)) == 1:
        assert "every advantage is 0" in readout
    else:
        assert f"divides group-centred by {group.std(correction=0).item():.3f}" in readout
    assert not page.log.refused
