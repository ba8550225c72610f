"""rlbook.book.check: the audit's tallies, its seed triples, its table, and how it reads seeds."""

from __future__ import annotations

import pytest

from rlbook.book import check
from rlbook.book.check import Tally


def test_triples_are_disjoint_groups_of_three():
    assert check.triples(range(10)) == [(0, 1, 2), (3, 4, 5), (6, 7, 8)]
    assert check.triples([0, 1]) == []


def test_a_tally_reads_as_seeds_or_triples_and_knows_whether_it_held_everywhere():
    per_seed = Tally("loop", "x", "law", list(range(10)), [0, 1, 2, 3, 4, 5, 6, 7, 8])
    whole = Tally("loop", "y", "law", list(range(10)), None, [True, True, True])
    broken = Tally("loop", "z", "law", list(range(10)), None, None, "ValueError: no")
    assert (per_seed.rate, per_seed.everywhere) == ("9/10", False)
    assert (whole.rate, whole.everywhere) == ("3/3 triples", True)
    assert (broken.rate, broken.everywhere) == ("facts failed", False)


def test_the_report_counts_laws_and_names_a_law_that_failed():
    results = {
        "pinned": [Tally("loop", "x", "law", [0, 1, 2], [0, 1]), Tally("loop", "y", "finding", [0, 1, 2], [0])],
        "native": [Tally("loop", "x", "law", [0, 1, 2], [0, 1, 2]), Tally("loop", "y", "finding", [0, 1, 2], [2])],
    }
    text = check.report(results, "rlbook claims --seeds 0-2", "2026-12-06")
    assert "2 claims: 1 laws and 1 findings. 1 law(s) failed somewhere: x." in text
    assert "| loop | `x` | law | 2/3 | 3/3 | LAW THAT FAILS" in text
    data = check.audit_data(results, "rlbook claims --seeds 0-2", "2026-12-06")
    assert data["claims"][0] == {
        "topic": "loop",
        "name": "x",
        "kind": "law",
        "rates": {"pinned": "2/3", "native": "3/3"},
        "everywhere": False,
    }


@pytest.mark.parametrize(("text", "seeds"), [("0-9", tuple(range(10))), ("0,1,5", (0, 1, 5)), ("0-2,7", (0, 1, 2, 7))])
def test_seeds_are_read_as_ranges_and_lists(text, seeds):
    assert check.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a-b", "5-2", "0-5000", "-1"])
def test_bad_seeds_are_refused(text):
    with pytest.raises(ValueError):
        check.parse_seeds(text)
