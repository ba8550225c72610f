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
