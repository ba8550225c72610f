"""The real book's glossary: at least 25 terms, each defined once where a reader first meets it, linked both ways."""

from __future__ import annotations

from pathlib import Path

from rlbook.publish import glossary

ROOT = Path(__file__).resolve().parents[2]


def test_the_glossary_has_at_least_25_terms_and_the_book_keeps_its_rules():
    assert len(glossary.TERMS) >= 25
    assert glossary.glossary_problems(ROOT) == []
