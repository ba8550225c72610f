"""rlbook.book.phrasing: outcome-dependent words that never offer a degenerate quantity."""

from __future__ import annotations

import pytest

from rlbook.book import phrasing


def test_number_words():
    assert [phrasing.number_word(n) for n in (0, 3, 12, 13, 1024)] == ["zero", "three", "twelve", "13", "1,024"]
    with pytest.raises(ValueError):
        phrasing.number_word(-1)


def test_listing_joins_and_refuses_empty_or_repeated_lists():
    assert phrasing.listing([1]) == "1"
    assert phrasing.listing([0, 2]) == "0 and 2"
    assert phrasing.listing(["a", "b", "c"], "or") == "a, b or c"
    with pytest.raises(ValueError):
        phrasing.listing([])
    with pytest.raises(ValueError, match="repeats"):
        phrasing.listing(["#", "#", "#"])


@pytest.mark.parametrize(
    ("where", "of", "said"),
    [
        ((0, 1, 2), (0, 1, 2), "every seed"),
        ((), (0, 1, 2), "none of the three seeds"),
        ((1,), (0, 1, 2), "seed 1"),
        ((2, 0), (0, 1, 2), "seeds 0 and 2"),
        ((0,), (0,), "seed 0"),
        ((), (0,), "not seed 0"),
    ],
)
def test_seeds(where, of, said):
    assert phrasing.seeds(where, of) == said


def test_seeds_refuses_a_seed_outside_the_set():
    with pytest.raises(ValueError):
        phrasing.seeds([3], [0, 1, 2])


@pytest.mark.parametrize(
    ("k", "n", "said"),
    [
        (3, 3, "all three seeds"),
        (2, 3, "two of the three seeds"),
        (0, 3, "none of the three seeds"),
        (1, 1, "the one seed"),
    ],
)
def test_share(k, n, said):
    assert phrasing.share(k, n, "seeds" if n > 1 else "seed") == said


def test_span_collapses_a_range_whose_ends_read_the_same():
    assert phrasing.span([0.48, 0.55, 0.5]) == "0.48–0.55"
    assert phrasing.span([0.501, 0.499]) == "0.50"
    assert phrasing.span([0.1, 0.3], ".0%") == "10%–30%"
    with pytest.raises(ValueError):
        phrasing.span([])


def test_direction():
    assert phrasing.direction(0.7, 0.5) == "above"
    assert phrasing.direction(0.3, 0.5) == "below"
    assert phrasing.direction(0.51, 0.5, tolerance=0.02) == "level with"


@pytest.mark.parametrize(
    ("x", "said"),
    [
        (2.3e6, "about two million"),
        (23e6, "about 20 million"),
        (8_340, "about 8,300"),
        (57.4, "about 57"),
        (1.6e9, "about two billion"),
        (4.2, "about 4.2"),
    ],
)
def test_approximately(x, said):
    assert phrasing.approximately(x) == said


def test_by_side_groups_the_seeds_by_where_each_value_lies():
    assert phrasing.by_side([0.5, 0.2, 0.3], [0.4, 0.4, 0.3], (0, 1, 2), "above", "below", "level") == (
        "above on seed 0, below on seed 1, level on seed 2"
    )
    assert phrasing.by_side([0.5, 0.6], [0.4, 0.4], (0, 1), "above", "below") == "above on every seed"
    # Without a word for "level", an equal seed goes with the values below.
    assert phrasing.by_side([0.5, 0.4], [0.4, 0.4], (0, 1), "ahead", "not ahead", joiner=" and ") == (
        "ahead on seed 0 and not ahead on seed 1"
    )
    with pytest.raises(ValueError, match="one value per seed"):
        phrasing.by_side([0.5], [0.4, 0.4], (0, 1), "above", "below")


def test_values_in_seed_order_keep_their_repeats():
    assert phrasing.in_order(["0.47", "0.47", "0.57"]) == "0.47, 0.47 and 0.57"
    assert phrasing.in_order([0.5]) == "0.5"
    with pytest.raises(ValueError, match="empty"):
        phrasing.in_order([])
