"""rlbook.publish.glossary: each term defined once, where a reader first meets it, linked both ways."""

from __future__ import annotations

from pathlib import Path

import yaml

from rlbook.publish import glossary

TERMS = (("policy", "what writes"), ("reward hacking", "gaming the reward"))


def book(root: Path, first: str, second: str) -> Path:
    (root / "chapters").mkdir(parents=True)
    config = {
        "project": {"type": "book"},
        "book": {
            "title": "T",
            "chapters": ["index.qmd", "chapters/glance.qmd", "chapters/01-a.qmd", "chapters/02-b.qmd"],
        },
    }
    (root / "_quarto.yml").write_text(yaml.safe_dump(config))
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nA policy and reward hacking, before any chapter.\n")
    (root / "chapters" / "glance.qmd").write_text("# Glance {.unnumbered}\n")
    (root / "chapters" / "01-a.qmd").write_text(first)
    (root / "chapters" / "02-b.qmd").write_text(second)
    return root


FIRST = "# A {#sec-a}\n\n## Words {#sec-words}\n\nA [*policy*](glance.qmd#gloss-policy){#def-policy} writes\nanswers.\n"
SECOND = "# B {#sec-b}\n\nThe [*reward\nhacking*](glance.qmd#gloss-reward-hacking){#def-reward-hacking} of a\npolicy.\n"


def test_a_book_that_defines_each_term_once_and_first_is_clean(tmp_path):
    root = book(tmp_path, FIRST, SECOND)
    assert glossary.glossary_problems(root, TERMS) == []
    found = glossary.definitions(root)
    assert found["policy"][0].section == "sec-words" and found["reward-hacking"][0].line == 3
    table = glossary.glossary_markdown(root, TERMS)
    assert "| [policy](01-a.qmd#def-policy){#gloss-policy} | what writes | @sec-words |" in table
    assert "[reward hacking](02-b.qmd#def-reward-hacking){#gloss-reward-hacking}" in table


def test_a_term_used_before_the_chapter_that_defines_it_is_named(tmp_path):
    root = book(tmp_path, FIRST + "\nSome reward hacking here.\n", SECOND)
    assert glossary.glossary_problems(root, TERMS) == [
        "chapters/01-a.qmd: uses 'reward hacking', which chapters/02-b.qmd defines later"
    ]


def test_missing_twice_defined_unknown_and_mislinked_definitions_are_named(tmp_path):
    second = (
        SECOND.replace("gloss-reward-hacking", "gloss-policy") + "\n[*policy*](glance.qmd#gloss-policy){#def-policy}\n"
    )
    root = book(tmp_path, FIRST + "\n[*other*](glance.qmd#gloss-other){#def-other}\n", second)
    problems = glossary.glossary_problems(root, TERMS)
    assert any("#def-other defines no term" in p for p in problems)
    assert any("'policy' is defined 2 times" in p for p in problems)
    assert any("#def-reward-hacking links to #gloss-policy" in p for p in problems)
    assert "[policy]{#gloss-policy}" not in glossary.glossary_markdown(root, TERMS)


def test_slugs():
    assert [glossary.slug(t) for t in ("pass@k", "KL penalty", "reward-model over-optimisation")] == [
        "pass-k",
        "kl-penalty",
        "reward-model-over-optimisation",
    ]
