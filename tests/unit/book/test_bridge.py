"""rlbook.book.bridge: the TRL appendix's choices (rlbook.book._bridge_words) pick what happened and the page words
every case, its TRL runs enter the facts' key like runs (and follow the installed TRL), and its facts are left out
where the trl extra is missing."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rlbook.book import _available, bridge, prefetch, store, wording
from rlbook.book import _bridge_words as words
from rlbook.book.facts import Num
from rlbook.book.needs import Need
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def test_identical_logits_are_a_case_of_their_own_never_a_difference_of_zero():
    assert words.logits(0.0) == choice("same", words.LOGITS)
    differ = words.logits(2.4e-7)
    assert differ["case"] == "differ" and str(differ["values"]["gap"]) == "2e-7"


def test_the_order_of_the_trainers_ends_is_level_within_the_tolerance():
    assert words.order(0.41, Num(0.39)) == choice("above", words.ORDER, book_end=0.39)
    assert words.order(0.37, Num(0.39)) == choice("below", words.ORDER, book_end=0.39)
    assert words.order(0.392, Num(0.39)) == choice("level", words.ORDER, book_end=0.39)


@pytest.mark.parametrize(
    ("trl", "book", "made"),
    [
        ([0.2, 0.17, 0.12], [0.18, 0.15, 0.17], choice("trl_book", words.LARGER, trl="seeds 0 and 1", book="seed 2")),
        ([0.2, 0.17, 0.18], [0.18, 0.15, 0.17], choice("trl", words.LARGER, trl="every seed")),
        (
            [0.1, 0.15, 0.12],
            [0.18, 0.15, 0.17],
            choice("book_neither", words.LARGER, book="seeds 0 and 2", neither="seed 1"),
        ),
    ],
)
def test_larger_names_each_trainer_s_seeds(trl, book, made):
    assert words.larger(trl, book, SEEDS) == made


def test_larger_wants_one_gain_per_seed():
    with pytest.raises(ValueError, match="one gain per seed"):
        words.larger([0.1, 0.2], [0.1, 0.2, 0.3], SEEDS)


@pytest.mark.parametrize(
    ("trl", "book", "case"),
    [
        ([0.20, 0.25, 0.30], [0.22, 0.35, 0.40], "overlap"),
        ([0.20, 0.25, 0.30], [0.30, 0.35, 0.40], "overlap"),  # a shared end point is an overlap
        ([0.31, 0.35, 0.40], [0.20, 0.25, 0.30], "trl_above"),
        ([0.20, 0.25, 0.30], [0.31, 0.35, 0.40], "book_above"),
    ],
)
def test_ranges_say_whether_the_trainers_gains_overlap_or_which_lies_above(trl, book, case):
    assert words.ranges(trl, book) == choice(case, words.RANGES)


def test_every_case_of_every_choice_is_worded_by_the_page_and_reads_clean():
    page = page_wordings((ROOT / bridge.PAGE).read_text(encoding="utf-8"))
    gains = {"trl": (0.2, 0.1), "book": (0.1, 0.2), "neither": (0.15, 0.15)}
    made = {
        "logits": [words.logits(0.0), words.logits(2.4e-7)],
        "order": [words.order(end, Num(0.39)) for end in (0.45, 0.3, 0.39)],
        "larger": [
            words.larger([a for a, _ in sides], [b for _, b in sides], SEEDS)
            for sides in itertools.product(gains.values(), repeat=len(SEEDS))
        ],
        "ranges": [words.ranges([0.2, 0.3], [0.25, 0.4]), words.ranges([0.5], [0.1]), words.ranges([0.1], [0.5])],
    }
    chosen = (("logits", words.LOGITS), ("order", words.ORDER), ("larger", words.LARGER), ("ranges", words.RANGES))
    for name, cases in chosen:
        assert set(page[name]) == set(cases) == {m["case"] for m in made[name]}, name
        assert not any(prose.degenerate(w) for w in page[name].values()), name
        for m in made[name]:
            assert not prose.degenerate(wording.say(name, m, page[name])), name


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


def test_the_record_table_sets_the_step_0_hash_under_the_base_s_and_shows_the_rollout_counts():
    record = {
        "run_name": "trl-main",
        "base_policy": {"name": "base", "version": "base@sft", "weights_hash": "abc"},
        "checkpoints": [
            {"step": 0, "policy_version": 0, "path": "trl-run#checkpoints[0]", "weights_hash": "abc"},
            {"step": 10, "policy_version": 10, "path": "trl-run#checkpoints[1]", "weights_hash": "def"},
        ],
        "rollouts_before_filtering": 320,
        "rollouts_used": 320,
    }
    assert bridge.record_rows(record) == [
        ["`base_policy.name`", "base"],
        ["`base_policy.version`", "base@sft"],
        ["`base_policy.weights_hash`", "abc"],
        ["`checkpoints[0].weights_hash`", "abc"],
        ["`rollouts_before_filtering`", "320"],
        ["`rollouts_used`", "320"],
    ]


def test_the_translation_notes_write_a_product_with_the_multiplication_sign_and_leave_words_alone():
    assert words.times("rlbook's -A x logp, TRL's -A x ratio") == "rlbook's -A × logp, TRL's -A × ratio"
    assert words.times("16/15 x rlbook's under rloo") == "16/15 × rlbook's under rloo"
    assert words.times("max x y and an x-axis") == "max × y and an x-axis"
