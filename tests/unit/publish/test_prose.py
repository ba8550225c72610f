"""rlbook.publish.prose: the degenerate sentences issue 45 quoted are caught, sound ones are not; counts."""

from __future__ import annotations

import pytest

from rlbook.publish import prose

QUOTED = [  # issue 45's examples, as this build once printed them
    "On any seed where it did not take over (0 of them here), held-out accuracy recovers.",
    "Of the 3 seeds, the loophole took over on 3 of them (seeds 0, 1, 2): finding an exploit is not guaranteed.",
    "The answers were seed 0: '#'; seed 1: '#'; seed 2: '#'.",
    "Its greedy answer is right for at least 100% of the 40 held-out sums.",
    "Swapping the verifier moves the gain by +0.0000 on this run.",
    "The batch reward went from 0.55 at the first step to its lowest, 0.55, at step 1.",
    "On 5+5 the answer the policy finds most likely is 10 (the right one is 10).",
    "Of the 6 sampled answers with a negative advantage, 0 nonetheless gained probability.",
    # issue 57's examples
    "The book's exploit run ended between 0.00 and 0.00 (seeds 0: 0.00, 1: 0.00, 2: 0.00).",
    "New right answers, late: 0.062 / 0.062 / 0.062.",
    "The shaped run had higher accuracy on seeds 0 and 2, by margins from -0.020 to +0.011.",
    "Of the 40, 13 are confidently right, 8 confidently wrong and 9 uncertain.",
    "Follow seed 0: held-out accuracy never again rose above 0.00, down from 0.34 at the start.",
    "At those settings, fewer seeds saw the loophole take over than in exploit: it took over on none of the three seeds.",
    "At main's settings the loophole took over on none of the three seeds, fewer seeds than in exploit.",
    "Its held-out accuracy was at most 0.000 after step 20.",
]

SOUND = [
    "The held-out expected reward rises from 0.48 to 0.72 on average.",
    "A reward of 0 for a wrong answer and 1 for a right one.",
    "Its greedy answer is 14, where the right one is 15.",
    "Two of the three answers with a negative advantage gained probability.",
    "The loophole took over on every seed, at steps 3, 4 and 3.",
    "Seed 0: 0.48; seed 1: 0.52; seed 2: 0.44.",
    "The KL rose from 0.05 at step 10 to 0.31 at step 20 and stayed there.",
    "Chapter 3 derives it in Section 3.2, and Exercise 1.1 asks for it.",
    "The exploit run ended between 0.02 and 0.10 (seeds 0: 0.02, 1: 0.10, 2: 0.05).",
    "New right answers, late: 0.062 / 0.031 / 0.044.",
    "The shaped run had higher accuracy on every seed, by margins from +0.020 to +0.051.",
    "The gap went from -0.02 to +0.05 over training.",
    "Of the 40, 5 are confidently right, 16 uncertain, 6 rarely right and 13 never right.",
    "Of the 40 sums, 5 are right and 13 never right.",
    "Of the 3 seeds, the mean was 0.48, 0.52 and 0.44 at the end.",
    "Its held-out accuracy fell from 0.30 at the start to 0.00 by step 20 and stayed there.",
    "The advantage is never above 0 for a wrong answer in a group with a right one.",
    "At those settings the loophole took over on none of the three seeds, against every seed in exploit.",
    "The loophole took over on fewer seeds at main's settings: on seed 1, against every seed in exploit.",
]


@pytest.mark.parametrize("sentence", QUOTED)
def test_every_quoted_degenerate_sentence_is_caught(sentence):
    assert prose.degenerate(sentence, "page"), sentence


@pytest.mark.parametrize("sentence", SOUND)
def test_sound_sentences_pass(sentence):
    assert not prose.degenerate(sentence, "page"), [str(p) for p in prose.degenerate(sentence, "page")]


def test_a_problem_names_page_and_sentence():
    (problem,) = prose.degenerate("It moved by +0.0000 here.", "chapters/05.qmd")
    assert str(problem).startswith("chapters/05.qmd: a change of zero") and "+0.0000" in str(problem)


def test_prose_text_drops_code_math_tables_and_citations():
    markdown = (
        "Text with `code_span` and $x^2$ math [@key; @other] and @fig-one.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```\n\n::: {.callout-note}\nInside.\n:::\n"
    )
    text = prose.prose_text(markdown)
    assert "code_span" not in text and "x^2" not in text and "key" not in text
    assert "| 1 |" not in text and "x = 1" not in text and "Inside." in text


def test_counts_words_minutes_and_numbers_without_labels():
    cell = (
        "Chapter 3 and Figure 1.2 name things; seeds 0 and 2 too. The rate is 0.48, "
        "up from 0.31 with 95 % confidence.\n\n## Exercises\n\nNot read: 1 2 3 4 5."
    )
    text = prose.reading_text([cell])
    counts = prose.count("p", text)
    assert counts.numbers == 3 and counts.words == 15
    assert counts.numbers_per_100 == pytest.approx(20)
    assert not counts.problems()  # too short to have a density
    assert any("numbers per 100" in p for p in prose.Counts("p", words=600, numbers=30).problems())


def test_a_collapsed_box_is_not_read_even_when_its_fences_lie_in_different_cells():
    cells = [
        'Read this.\n\n::: {.callout-note collapse="true"}\n## For the referee\n\nSkipped words here.\n',
        "::: {.inner}\nStill skipped.\n:::\n\nAfter the code cell, still inside.\n:::\n\nRead that too.",
        "::: {.callout-note}\nAn open box is read.\n:::",
    ]
    assert prose.reading_text(cells).split() == [
        "Read",
        "this.",
        "Read",
        "that",
        "too.",
        "An",
        "open",
        "box",
        "is",
        "read.",
    ]


def test_a_long_chapter_is_over_its_sitting():
    counts = prose.Counts("p", words=6000, numbers=10)
    assert counts.minutes == pytest.approx(6000 / prose.WORDS_PER_MINUTE)
    assert any("minutes of reading" in p for p in counts.problems())
    assert "words" in prose.table([counts])


def test_chapter_problems_reads_executed_notebooks_and_prints_the_table():
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": "It moved by +0.0000 here. " + "a word 7 " * 260},
            {"cell_type": "code", "source": "x = 0 of them"},
        ]
    }
    printed = []
    problems = prose.chapter_problems([("chapters/01.qmd", nb)], printed.append)
    assert any("a change of zero" in p for p in problems) and any("numbers per 100" in p for p in problems)
    assert "chapters/01.qmd" in printed[0]


def test_each_new_kind_names_what_is_wrong():
    (partition,) = prose.degenerate("Of the 40, 13 are right, 8 never right and 9 uncertain.", "p")
    assert "add up to 30, not to the whole, 40" in partition.why
    (fewer,) = prose.degenerate("Fewer seeds saw it: none of the three.", "p")
    assert "count of zero" in fewer.why
    (bound,) = prose.degenerate("It never again rose above 0.00.", "p")
    assert "bound of zero" in bound.why


HEDGED = [  # issue 57's draw-proof wordings of chapters 6 and 7 and the lab
    "`base` never solved 2–5 of the 40 sums; `main` solved 2–5 of them.",
    (
        "Before RL the worked answers had a smaller edge than under `worked` on seed 2 and an edge at least as large "
        "as under `worked` on seeds 0 and 1."
    ),
    (
        "None of the 5 answers listed had a non-zero advantage in this step's group. The other 5 moved only because "
        "the update moved other answers."
    ),
]
NOT_HEDGED = [
    "`base` never solved 7, 10 and 8 of the 40 sums on seeds 0, 1 and 2, 25 over the three seeds.",
    "`main` solved 3, 3 and 2 of them at least once, 8 of the 25.",
    "The edge was +0.26, +0.28 and +0.14 on seeds 0, 1 and 2, against +0.18, +0.28 and +0.22 under `worked`.",
    "2 of the 5 answers listed had a non-zero advantage. The other 3 moved only because the update moved others.",
    "None of the 5 answers listed had a non-zero advantage in this step's group, and none of them moved.",
    "It leaves at least as many sums unsolved as temperature 1 does.",
]


@pytest.mark.parametrize("sentence", HEDGED)
def test_wording_that_survives_any_outcome_is_caught(sentence):
    assert prose.degenerate(sentence, "page"), sentence


@pytest.mark.parametrize("sentence", NOT_HEDGED)
def test_counts_per_seed_values_and_a_true_remainder_pass(sentence):
    assert not prose.degenerate(sentence, "page"), [str(p) for p in prose.degenerate(sentence, "page")]


def test_each_hedge_names_what_to_say_instead():
    (ranges,) = prose.degenerate(HEDGED[0], "p")
    assert "each seed's count and the total" in ranges.why
    (both,) = prose.degenerate(HEDGED[1], "p")
    assert "whichever way it came out" in both.why
    (other,) = prose.degenerate(HEDGED[2], "p")
    assert "'the other 5' after none of the 5" in other.why and other.sentence.startswith("The other 5")
