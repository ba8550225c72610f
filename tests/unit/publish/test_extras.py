"""rlbook.publish.extras: the pages whose optional extra is missing, and the line that says so."""

from __future__ import annotations

import pytest

from rlbook.publish.config import Page
from rlbook.publish.extras import unmet_needs

NEEDS = """---
rlbook-needs:
  extra: {extra}
  packages: [{packages}]
---

# A page {{#sec-page}}
"""


def _pages(root, **texts) -> list[Page]:
    pages = []
    for stem, text in texts.items():
        (root / f"{stem}.qmd").write_text(text)
        pages.append(Page(f"{stem}.qmd", "main", "1", stem))
    return pages


def test_a_page_whose_packages_import_is_built_and_one_whose_packages_are_missing_is_named(tmp_path):
    pages = _pages(
        tmp_path,
        plain="# Plain\n",
        met=NEEDS.format(extra="dev", packages="pytest, yaml"),
        unmet=NEEDS.format(extra="ghost", packages="yaml, no_such_package_here"),
    )
    unmet = unmet_needs(tmp_path, pages)
    assert [(u.page.stem, u.extra, u.missing) for u in unmet] == [("unmet", "ghost", ("no_such_package_here",))]
    assert unmet[0].line() == (
        "unmet.qmd needs the 'ghost' extra, and no_such_package_here is not installed "
        '(pip install -e ".[ghost]", see the README)'
    )


def test_a_malformed_entry_names_the_page(tmp_path):
    pages = _pages(tmp_path, bad="---\nrlbook-needs: [trl]\n---\n\n# Bad\n")
    with pytest.raises(ValueError, match="bad.qmd: rlbook-needs must give an 'extra' name and a list of 'packages'"):
        unmet_needs(tmp_path, pages)
