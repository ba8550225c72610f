"""Chapter 3's advantages panel says what is wrong with rewards it cannot show, and never rounds an advantage to 0."""

from __future__ import annotations


def test_the_panel_shows_three_rows_that_sum_to_zero(node):
    shown = node({"advantagesPanel": [[0, 0, 0, 1]], "data": {}})["advantagesPanel"][0]
    assert [row[0] for row in shown["rows"]] == ["group-centred", "group-normalised", "leave-one-out"]
    assert all(abs(sum(row[2])) < 1e-12 for row in shown["rows"])
    assert shown["readout"].startswith("Mean reward 0.250, standard deviation (sd) 0.433.")


def test_rewards_too_large_to_compute_are_named_not_shown_as_infinity(node):
    shown = node({"advantagesPanel": [[1e308] * 4, [1e308, -1e308, 0, 1], [1e200, 0, 0, 0]], "data": {}})
    for answer in shown["advantagesPanel"]:
        assert answer["rows"] is None and "too large to compute with" in answer["readout"]
        assert "Infinity" not in answer["readout"] and "NaN" not in answer["readout"]


def test_an_empty_or_unreadable_box_asks_for_a_number(node):
    shown = node({"advantagesPanel": [[0, None, 1, 1], [0, 0, 1]], "data": {}})["advantagesPanel"]
    assert all(a["rows"] is None and a["readout"] == "Type a number into each of the four boxes." for a in shown)


def test_a_tiny_advantage_is_not_printed_as_zero(node):
    assert node({"signed": [7.5e-10, -2.5e-10, 0, 0.25, -0.5], "data": {}})["signed"] == [
        "+7.50e-10",
        "−2.50e-10",
        "0.000",
        "+0.250",
        "−0.500",
    ]
