"""Chapter 7's Exercise 7.2 on the book's runs: the reference passes on ``worked``'s facts, and the check prints,
seed by seed, the split taken the other way beside the one in the chapter's table."""

from __future__ import annotations

from rlbook import book
from rlbook.exercises import ch7


def test_the_split_on_the_runs_is_printed_beside_the_chapters_table_seed_by_seed():
    facts = book.load("working", check=False)
    seeds = list(facts.by_seed)
    result = ch7.check_gain_split(ch7.split_other_way, facts.exercise.split, seeds, predicted="switch")
    assert result.passed, result.message
    message = " ".join(result.message.split())
    for seed, (before, after), row in zip(seeds, facts.exercise.split, facts.tables.split.rows):
        switch, execution = ch7.split_other_way(dict(before), dict(after))
        assert row[0] == seed
        # the table's way, as the check prints it, is the chapter's own table row
        assert (
            f"seed {seed}: switch {switch:+.2f}, execution {execution:+.2f} (the table's: {row[2]} and {row[3]})"
            in (message)
        )
    assert "You predicted the switch" in message
