"""rlbook.book.bridge: the TRL appendix's wording (rlbook.book._bridge_words) says what happened, its TRL runs
enter the facts' key like runs (and follow the installed TRL), and its facts are left out where the trl extra is
missing."""

from __future__ import annotations

import pytest

from rlbook.book import _available, bridge, prefetch, store
from rlbook.book import _bridge_words as words
from rlbook.book.needs import Need
from rlbook.publish import prose


def said(sentence: str) -> str:
    assert not prose.degenerate(sentence), prose.degenerate(sentence)
    return sentence


def test_identical_logits_are_said_in_words_never_as_a_difference_of_zero():
    assert said(f"they {words.logits_phrase(0.0)}.") == "they give the same logits, bit for bit."
    assert "at most 2e-7" in said(f"they {words.logits_phrase(2.4e-7)}.")


@pytest.mark.parametrize(
    ("trl", "book", "said"),
    [
        ([0.2, 0.17, 0.12], [0.18, 0.15, 0.17], "TRL's on seeds 0 and 1, `rlbook`'s on seed 2"),
        ([0.2, 0.17, 0.18], [0.18, 0.15, 0.17], "TRL's on every seed"),
        ([0.1, 0.15, 0.12], [0.18, 0.15, 0.17], "`rlbook`'s on seeds 0 and 2, neither on seed 1"),
    ],
)
def test_who_gained_more_names_each_trainer_s_seeds(trl, book, said):
    assert words.who_gained_more(trl, book, (0, 1, 2)) == said


def test_who_gained_more_wants_one_gain_per_seed():
    with pytest.raises(ValueError, match="one gain per seed"):
        words.who_gained_more([0.1, 0.2], [0.1, 0.2, 0.3], (0, 1, 2))


def test_the_crosscheck_says_none_for_an_exact_agreement():
    rows = words.crosscheck_rows({"reward_mean": 0.0, "accepted_rate": 2.78e-8})
    assert rows == [["`reward_mean`", "none"], ["`accepted_rate`", "2.8e-08"]]


TORCHRUN = (
    "torchrun --standalone --nproc_per_node 2 -m rlbook.trl --steps 3 --prompts 4 --eval-every 0 "
    "--processes 2 --out trl-run"
)
ACCELERATE = (
    "accelerate launch --config_file multi_gpu.yaml --num_processes 8 -m rlbook.trl --steps 100 "
    "--processes 8 --out trl-run"
)


@pytest.mark.parametrize("command", [TORCHRUN, ACCELERATE])
def test_a_console_fits_the_code_box_and_its_command_still_runs_when_copied(command):
    shown = words.console(command, ["rank 0 of 2: " + "a long line of output " * 6])
    lines = shown.splitlines()
    assert all(len(line) <= words.WIDTH for line in lines)
    typed = [line for line in lines if line.startswith(("$", "    "))]
    rejoined = " ".join(line.removeprefix("$").strip().removesuffix("\\").strip() for line in typed)
    assert rejoined == command
    assert not any(line.rstrip("\\ ").split(" ")[-1].startswith("--") for line in typed[:-1]), (
        "an option is never parted from its value"
    )


def _needs(threads=1):
    return bridge.needs((0, 1, 2))


def test_the_trl_runs_are_needs_keyed_by_their_own_cache_keys():
    from rlbook import trl

    needs = _needs()
    runs = [n for n in needs if isinstance(n, Need)]
    cached = [n for n in needs if isinstance(n, bridge.Cached)]
    assert {(n.name, n.seed) for n in runs} == {(name, s) for name in ("base", "main") for s in (0, 1, 2)}
    assert {(n.name, n.seed) for n in cached} == {(trl.DEMO.name, s) for s in (0, 1, 2)} | {("trl-processes2", 0)}
    assert next(n for n in cached if n.seed == 1).key(1) == trl.run_key(trl.DEMO, 1, 1)


def test_the_facts_key_sorts_runs_and_trl_runs_together_and_follows_the_trl_versions(monkeypatch):
    key = store.facts_key("rlbook.book.bridge", (0, 1, 2), 1, _needs())
    ordered = sorted(_needs())  # runs and TRL runs sort among each other, by name then seed
    assert [(n.name, n.seed) for n in ordered] == sorted((n.name, n.seed) for n in _needs())
    monkeypatch.setattr("rlbook.trl.trainer.trl_versions", lambda: {"trl": "another"})
    monkeypatch.setattr("rlbook.trl.model.trl_versions", lambda: {"trl": "another"})
    assert store.facts_key("rlbook.book.bridge", (0, 1, 2), 1, _needs()) != key


def test_the_prefetch_trains_catalogue_runs_only():
    needed = prefetch.needed_runs(["bridge"])["bridge"]
    assert needed == {(name, s) for name in ("base", "main") for s in (0, 1, 2)}


def test_without_the_trl_extra_the_appendixs_facts_are_left_out(monkeypatch):
    monkeypatch.setattr(bridge, "have_trl", lambda: False)
    assert not _available.available("bridge") and "bridge" not in _available.available_topics()
    assert _available.available("loop") and "loop" in _available.available_topics()
    with pytest.raises(RuntimeError, match="TRL is not installed"):
        bridge.compute((0,))
    monkeypatch.setattr(bridge, "have_trl", lambda: True)
    assert "bridge" in _available.available_topics()
