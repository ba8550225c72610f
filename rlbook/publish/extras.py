"""Pages that need an optional extra: which of them this machine can build, and the line that says why not.

Used by ``rlbook build``. A page names what it needs in its front matter::

    rlbook-needs:
      extra: trl
      packages: [trl, transformers, accelerate, datasets]

Where one of those packages cannot be imported, the pandoc backend builds the
book without the page and prints one line saying so (the page is never
published with holes); the Quarto backend, which renders every page that
``_quarto.yml`` lists, stops with that line instead. The book's TRL appendix
is such a page; ``make book`` installs its extra.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from rlbook.publish.config import Page
from rlbook.publish.qmd import front_matter

KEY = "rlbook-needs"


@dataclass(frozen=True)
class Unmet:
    """A page that cannot be built here: the extra it needs and the packages of it that are missing."""

    page: Page
    extra: str
    missing: tuple[str, ...]

    def line(self) -> str:
        """The one line ``rlbook build`` prints about the page."""
        return (
            f"{self.page.source} needs the {self.extra!r} extra, and {', '.join(self.missing)} "
            f"{'is' if len(self.missing) == 1 else 'are'} not installed "
            f'(pip install -e ".[{self.extra}]", see the README)'
        )


def unmet_needs(root: Path, pages: list[Page]) -> list[Unmet]:
    """The pages whose front matter names packages that this Python cannot import, in reading order.

    A malformed ``rlbook-needs`` entry raises ValueError naming the page.
    """
    unmet = []
    for page in pages:
        needs = front_matter((Path(root) / page.source).read_text(encoding="utf-8")).get(KEY)
        if needs is None:
            continue
        if (
            not isinstance(needs, dict)
            or not isinstance(needs.get("extra"), str)
            or not isinstance(needs.get("packages"), list)
            or not needs["packages"]
        ):
            raise ValueError(f"{page.source}: {KEY} must give an 'extra' name and a list of 'packages'")
        missing = tuple(str(name) for name in needs["packages"] if importlib.util.find_spec(str(name)) is None)
        if missing:
            unmet.append(Unmet(page, needs["extra"], missing))
    return unmet
