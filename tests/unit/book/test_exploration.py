"""Chapter 6's outcome-dependent numbers and choices (rlbook.book._exploration_words): each selector picks what
happened, and the page words every case."""

from __future__ import annotations

from pathlib import Path

from rlbook.book import _exploration_words as words
from rlbook.book import exploration
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def test_the_greedy_answer_never_reads_as_a_bound_that_says_nothing():
    assert words.greedy_right([{"greedy": 1.0}] * 3, 40) == choice("all", words.GREEDY, n=40)
    assert words.greedy_right([{"greedy": 0.9}, {"greedy": 1.0}, {"greedy": 0.95}], 40) == choice(
        "some", words.GREEDY, n=40, right="36–40"
    )


def _sums(never: int, widened: int, narrowed: int) -> dict:
    return {"never_before": never, "widened": widened, "narrowed": narrowed}


def test_the_sums_base_never_solved_are_counted_seed_by_seed_with_their_total():
    pk = [_sums(5, 5, 1), _sums(5, 4, 0), _sums(2, 2, 2)]
    made = words.widened(pk, SEEDS, 40)
    assert made == choice(
        "seeds_some",
        words.WIDENED,
        n=40,
        never="5, 5 and 2",
        where="seeds 0, 1 and 2",
        total=12,
        count="three",
        widened="5, 4 and 2",
        solved=11,
    )
    assert words.narrowed(pk, SEEDS) == choice("seeds", words.NARROWED, lost="1, 0 and 2", total=3, count="three")


def test_what_main_did_on_base_s_unsolved_sums_is_said_only_where_it_happened():
    assert words.narrowed([_sums(2, 1, 0)] * 3, SEEDS) == choice("none", words.NARROWED)
    assert words.widened([_sums(2, 0, 0)] * 3, SEEDS, 40)["case"] == "seeds_none"
    assert words.widened([_sums(0, 0, 0)] * 3, SEEDS, 40) == choice(
        "solved_all", words.WIDENED, n=40, seeds="every seed"
    )
    one = {"n": 40, "never": "3", "where": "seed 0"}
    assert words.widened([_sums(3, 1, 0)], (0,), 40) == choice("one_seed_some", words.WIDENED, **one, solved=1)
    assert words.widened([_sums(3, 0, 0)], (0,), 40) == choice("one_seed_none", words.WIDENED, **one, solved=0)
    assert words.narrowed([_sums(3, 1, 2)], (0,)) == choice("one_seed", words.NARROWED, lost=2)


def test_accepted_only_against_main_gives_both_finals_and_the_side_of_each_seed():
    made = words.rft_versus([0.4617, 0.4797, 0.518], [0.4508, 0.4906, 0.4961], SEEDS)
    finals = {"picky": "0.46, 0.48 and 0.52", "main": "0.45, 0.49 and 0.50", "where": "seeds 0, 1 and 2"}
    assert made == choice("above_below", words.RFT, **finals, above="seeds 0 and 2", below="seed 1")
    level = words.rft_versus([0.501, 0.6], [0.499, 0.5], (0, 1))
    assert level["case"] == "above_level" and level["values"]["level"] == "seed 0"


def test_the_loss_of_the_pretraining_format_is_split_between_sft_and_rl():
    own = [
        {"own": 0.86, "own_sft": 0.75, "own_after": 0.56, "greedy": 1.0, "greedy_sft": 0.9, "greedy_after": 0.8},
        {"own": 0.86, "own_sft": 0.60, "own_after": 0.55, "greedy": 1.0, "greedy_sft": 0.9, "greedy_after": 0.8},
    ]
    assert words.own_lost(own, (0, 1)) == choice("rl_sft", words.LOST, rl="seed 0", sft="seed 1")
    stages = words.own_stages(own[0])
    assert [str(stages[k]) for k in ("own", "own_sft", "own_after")] == ["0.86", "0.75", "0.56"]
    assert [str(stages[k]) for k in ("greedy", "greedy_sft", "greedy_after")] == ["1.00", "0.90", "0.80"]


def test_pass_at_one_is_given_for_the_shown_seed_as_the_table_prints_it():
    made = words.pass1({"before": [0.334, 0.7, 0.82], "after": [0.506, 0.8, 0.82]})
    assert (str(made["before"]), str(made["after"])) == ("0.33", "0.51")


def test_where_rl_ended_against_the_own_format_mark_names_the_seeds():
    assert words.own_mark([0, 1, 2], SEEDS) == choice("below", words.BELOW, below="every seed")
    assert words.own_mark([], SEEDS) == choice("above", words.BELOW, above="every seed")
    assert words.own_mark([0, 2], SEEDS) == choice("below_above", words.BELOW, below="seeds 0 and 2", above="seed 1")


def test_two_runs_are_ordered_only_when_their_seeds_do_not_overlap():
    assert words.versus([0.3, 0.35], [0.45, 0.5]) == choice("below", words.VERSUS)
    assert words.versus([0.6, 0.7], [0.45, 0.5]) == choice("above", words.VERSUS)
    assert words.versus([0.4, 0.6], [0.45, 0.5]) == choice("overlap", words.VERSUS)


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / exploration.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("greedy", words.GREEDY),
        ("widened", words.WIDENED),
        ("narrowed", words.NARROWED),
        ("below", words.BELOW),
        ("own_lost", words.LOST),
        ("stale_versus", words.VERSUS),
        ("stale_start", words.STALE_START),
        ("rft_versus", words.RFT),
        ("main_clip_seeds", words.MAIN_CLIP),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name


def test_where_stale_ended_below_its_own_start_is_said_with_the_first_such_seed():
    up, down = [0.30, 0.40], [0.355, 0.330]
    assert words.stale_start([up, up, up], SEEDS) == choice("above", words.STALE_START)
    assert words.stale_start([up, up, down], SEEDS) == choice(
        "one_below", words.STALE_START, seed=2, start=0.355, end=0.330
    )
    assert words.stale_start([up, down, down], SEEDS) == choice(
        "some_below", words.STALE_START, where="seeds 1 and 2", seed=1, start=0.355, end=0.330
    )
    assert words.stale_start([down, down, down], SEEDS)["case"] == "all_below"


def _collection(main_clip: list[float]) -> dict:
    """One seed's collection measurements, as exploration._collection gives them, with made-up clipped shares."""
    return {
        "main": {"clip": main_clip, "heldout": [0.3, 0.5]},
        "stale": {"clip": [None, 0.06, 0.07], "heldout": [0.3, 0.4]},
    }


def test_main_s_clipped_share_is_said_once_and_has_no_column_where_every_seed_prints_the_same():
    col = {s: _collection([0.0, 0.0, 0.0]) for s in SEEDS}
    assert words.main_clip(words.clipped(list(col.values()), "main", 1), SEEDS) == choice(
        "same", words.MAIN_CLIP, share="0.0%", where="every seed"
    )
    table = exploration._stale_table(col, SEEDS, 1)
    assert table["header"] == ["seed", "tokens clipped, stale", "held-out, stale", "held-out, main"]
    assert table["rows"][0] == [0, "6.5%", "0.40", "0.50"]


def test_main_s_clipped_share_is_given_seed_by_seed_with_its_column_where_the_seeds_differ():
    col = {0: _collection([0.0, 0.0, 0.0]), 1: _collection([0.0, 0.002, 0.0]), 2: _collection([0.0, 0.0, 0.0])}
    assert words.main_clip(words.clipped(list(col.values()), "main", 1), SEEDS) == choice(
        "differs", words.MAIN_CLIP, shares="0.0%, 0.1% and 0.0%", where="seeds 0, 1 and 2"
    )
    table = exploration._stale_table(col, SEEDS, 1)
    assert table["header"][2] == "tokens clipped, main"
    assert [row[2] for row in table["rows"]] == ["0.0%", "0.1%", "0.0%"]


def test_a_range_over_seeds_reads_as_one_value_when_its_ends_agree():
    assert words.seed_range([0.981, 0.979], ".0%") == "98%"
    assert words.seed_range([7, 10, 8], "d") == "7–10"


def test_a_range_in_a_table_is_joined_to_its_ends_so_a_narrow_column_never_breaks_it():
    assert words.seed_range([0.31, 0.4], ".2f", exploration.TABLE_DASH) == "0.31\u2060–\u20600.40"
