"""Every document the code cites is in the repository (a clean clone holds them all)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"\b([A-Z][A-Z_]+\.md)\b(?:, section (\d+))?")


def citations() -> list[tuple[str, str, str | None]]:
    found = []
    for path in sorted([*ROOT.joinpath("rlbook").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]):
        for match in CITED.finditer(path.read_text(encoding="utf-8")):
            found.append((str(path.relative_to(ROOT)), match.group(1), match.group(2)))
    return found


def test_every_cited_document_and_section_exists():
    assert citations(), "the code cites no document at all: this test would check nothing"
    for where, document, section in citations():
        path = ROOT / document
        assert path.is_file(), f"{where} cites {document}, which the repository lacks"
        if section:
            headings = re.findall(r"^## (\d+)\.", path.read_text(encoding="utf-8"), re.MULTILINE)
            assert section in headings, f"{where} cites {document}, section {section}, which it does not have"
