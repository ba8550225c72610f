"""The book's house style for figures: one palette, one vocabulary, panels sized to be read on any screen.

Every figure of every chapter is drawn in this style (each chapter's first
cell calls :func:`style`), and the site (:mod:`rlbook.publish.markdown`)
gives every SVG it publishes a dark variant with :func:`themed_svg`.

- **Panels.** A figure is one or more panels of :data:`PANEL` size, each its
  own image: on a wide screen a figure's panels sit side by side across the
  text column and its margin (about 900 px at 1280 px); on a phone they
  stack, each shrunk to the width of its box. No text is smaller than
  :data:`MIN_FONT` points, and no saved panel is wider than
  :data:`MAX_WIDTH` points, so that even shrunk into the narrowest box the
  site has (:data:`NARROWEST_PX`, a callout on a phone) a panel's text is
  drawn at :data:`MIN_TEXT_PX` CSS pixels or more: :func:`unreadable` says
  which panel breaks either rule (the figure tests run it on every panel
  they draw; the site's browser tests measure the built pages).
- **Text as text.** SVGs keep their text as ``<text>`` (``svg.fonttype:
  none``), so it stays sharp, the browser can measure it and search engines
  could read it; the fonts are a stack led by DejaVu Sans, the font
  matplotlib measures with, whose wide letters mean that a narrower
  fallback never overflows a label.
- **Colours.** The series colours are Okabe and Ito's colour-blind-safe
  palette: at most :data:`MAX_SERIES` series in a panel, each told apart
  from the others and from the page under every kind of colour blindness
  (:func:`distinguishable` checks it with the simulation of Machado et
  al. 2009). Verdicts have fixed colours (:data:`STATUS_COLOURS`) and words
  (:data:`rlbook.core.verdicts.VERDICT_WORDS`) that figures, tables and the
  workshop share.
- **Dark mode.** In a dark page, an SVG's greys are inverted (black ink
  becomes light, white paper becomes the page's dark background) and the
  palette colours that would be too dark there take lighter variants
  (:data:`DARK`); every other colour is kept. So text is never drawn in a
  fixed colour on a solid tile, which would keep its colour while the text
  turned light: a tile under text is a palette colour at :data:`TILE_ALPHA`
  over the page, pale under black ink on a light page and dark under light
  ink on a dark one (:func:`tile_contrast` checks both).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence

import numpy as np

# ---------------------------------------------------------------- the palette

BLUE, ORANGE, TEAL, PURPLE, RED = "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00"
"""Okabe and Ito's blue, orange, bluish green, reddish purple and vermillion."""
GREY = "#606060"
"""Context: the base policy, a prompt, an excluded batch."""
INK = "#000000"
"""Text, axes and a reference series (``main`` against its variants); light grey on a dark page."""
PAPER = "#ffffff"
"""The figure's background; the page's own background on a dark page."""

SERIES = (BLUE, ORANGE, TEAL, PURPLE, RED)
"""The colours of a panel's series, in the order they are given out (:func:`series_colours`)."""
MAX_SERIES = len(SERIES)
"""The most series one panel may draw in colour: beyond it, split the panel or label lines directly."""

LIGHT_GREY = "#b9b9b9"
"""For what a figure groups rather than shows one by one (the rarest answers of a sum)."""
STATUS_COLOURS = {
    "accepted": TEAL,
    "incorrect": ORANGE,
    "malformed": PURPLE,
    "incomplete": GREY,
    "unverifiable": RED,
    "duplicate": BLUE,
}
"""Colour of each verifier status (and of duplicates in the exploration audit)."""

DARK = {BLUE: "#56b4e9", GREY: "#c0c0c0"}
"""The palette colours that a dark page shows lighter (Okabe and Ito's sky blue for blue); the rest stay."""
DARK_PAGE, DARK_INK = "#15181c", "#e3e6ea"
"""The site's dark background and text colour (``assets/book.css``): what white paper and black ink become."""

TILE_ALPHA = 0.4
"""How opaque a tile with text on it is (a box of a diagram, a cell of chapter 3's credit figure): its colour,
laid over the page at this opacity, is a pale tint on a light page and a dark one on a dark page, and the text
keeps the default ink, which follows the page, so it stays readable in both (:func:`tile_contrast`)."""
MIN_CONTRAST = 4.5
"""The least contrast between text and what it is drawn on (WCAG 2's level AA for text, as ``assets/book.css``)."""

# ---------------------------------------------------------------- sizes and the matplotlib style

PANEL = (4.6, 3.2)
"""Width and height of one panel in inches: about 310 points (415 CSS px) once matplotlib trims it, two fill a
wide screen."""
MIN_FONT = 9
"""The smallest text of any figure, in points: tick labels and legends. Labels and titles are larger. Math text
(``$...$``, and the powers of ten of a log axis) draws its scripts at 70 % of this: write plain text instead
(:func:`plain_log_ticks`, "√" rather than ``\\sqrt``)."""
PX_PER_PT = 4 / 3
"""CSS pixels per point: a page draws an SVG that is not shrunk at this scale (96 px to 72 pt)."""
MIN_TEXT_PX = 9
"""The smallest text a reader is shown, in CSS pixels at the size a figure is drawn (ARCHITECTURE.md, section 6)."""
NARROWEST_PX = 325
"""The narrowest box the site draws a figure in, in CSS pixels: a callout's body on a 390-px phone (the 356-px
text column less the callout's borders and padding, ``assets/book.css``). A panel wider than its box is shrunk
to fit it."""
MAX_WIDTH = NARROWEST_PX * MIN_FONT / MIN_TEXT_PX
"""The widest a saved panel may be, in points (as ``savefig.bbox: tight`` trims it, with its padding): shrunk
into :data:`NARROWEST_PX`, its :data:`MIN_FONT` text is still :data:`MIN_TEXT_PX`. A full :data:`PANEL` is
wider: a panel's own trimmed margins, or a narrower panel, keep it under."""
FONTS = ["DejaVu Sans", "Bitstream Vera Sans", "Verdana", "Liberation Sans", "Arial", "Helvetica", "sans-serif"]
"""The font stack written into every SVG: matplotlib measures with the first; a reader's browser takes the
first it has, each no wider than the one before, so a label never outgrows the room it was given."""


def rc() -> dict:
    """The house style as matplotlib rcParams (what :func:`style` applies)."""
    return {
        "figure.figsize": PANEL,
        "figure.dpi": 110,
        "figure.facecolor": PAPER,
        "axes.facecolor": PAPER,
        "savefig.facecolor": PAPER,
        "savefig.bbox": "tight",
        "svg.fonttype": "none",
        "svg.hashsalt": "rlbook",
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "font.size": 10,
        "axes.titlesize": 10.5,
        "axes.labelsize": 10,
        "xtick.labelsize": MIN_FONT,
        "ytick.labelsize": MIN_FONT,
        "legend.fontsize": MIN_FONT,
        "legend.title_fontsize": MIN_FONT,
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": INK,
        "xtick.color": INK,
        "ytick.color": INK,
        "axes.prop_cycle": _cycler(SERIES),
    }


def style() -> None:
    """Apply the house style to every later figure (called by each chapter's first cell)."""
    import matplotlib.pyplot as plt

    plt.rcParams.update(rc())


def panel(width: float = PANEL[0], height: float = PANEL[1], **kwargs):
    """One new panel (a figure with one axes) in the house style: ``(fig, ax)``."""
    import matplotlib.pyplot as plt

    return plt.subplots(1, 1, figsize=(width, height), **kwargs)


def figure(width: float = 7, height: float = 3.6, ncols: int = 1, **kwargs):
    """A new figure with ``ncols`` axes side by side, in the house style (figures not yet split into panels)."""
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(width, height), **kwargs)


def fit(fig, width: float = MAX_WIDTH):
    """Narrow ``fig`` until it saves at most ``width`` points wide (:data:`MAX_WIDTH`): its axes give up the room,
    its text keeps its size. Returns ``fig``.

    For a panel whose labels come from the facts (long tick labels beside a
    bar chart), whose width the drawing code cannot know in advance.
    """
    import io

    for _ in range(8):
        out = io.StringIO()
        fig.savefig(out, format="svg")  # measured as saved: text is measured at the SVG's own 72 dpi
        found = _SVG_WIDTH.search(out.getvalue())
        assert found is not None  # matplotlib's SVG always has a viewBox
        saved = float(found.group(1))
        if saved <= width:
            break
        fig.set_figwidth(fig.get_figwidth() - (saved - width + 1) / 72)
    return fig


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Label the ticks of a log axis as plain numbers (0.01, 0.1, 1) in the size of every other tick label.

    matplotlib's default labels are powers of ten whose exponents it draws at
    70 % of the label's size, under :data:`MIN_FONT`; the same holds for any
    sub- or superscript of math text, so a label with math needs a size of
    at least 11 points to keep its scripts readable on a phone.

    An axis on which fewer than two powers of ten fall would show one label
    or none, so there the minor ticks at 2 and 5 times a power of ten are
    labelled as well (0.02, 0.05).
    """
    from matplotlib.ticker import FuncFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis

    def minor(value: float, _position) -> str:
        low, high = sorted(target.get_view_interval())
        if low <= 0 or math.floor(math.log10(high)) - math.ceil(math.log10(low)) >= 1:  # two powers of ten or more
            return ""
        mantissa = round(value / 10 ** math.floor(math.log10(value) + 1e-9), 6)
        return f"{value:g}" if mantissa in (2.0, 5.0) else ""

    target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(FuncFormatter(minor))


def series_colours(names: Sequence[str], reference: str | None = None) -> dict[str, str]:
    """A colour for each of a panel's series: :data:`SERIES` in order, and :data:`INK` for ``reference``.

    ValueError when the panel has more than :data:`MAX_SERIES` coloured
    series: no reader tells that many apart.
    """
    coloured = [name for name in names if name != reference]
    if len(coloured) > MAX_SERIES:
        raise ValueError(
            f"{len(coloured)} coloured series in one panel ({', '.join(coloured)}); at most "
            f"{MAX_SERIES}: split the panel, or label the lines directly"
        )
    colours = dict(zip(coloured, SERIES))
    return {name: INK if name == reference else colours[name] for name in names}


def _cycler(colours: Iterable[str]):
    from cycler import cycler

    return cycler(color=list(colours))


# ---------------------------------------------------------------- colour vision

_MACHADO = {  # Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
VISIONS = ("normal", *_MACHADO)
"""The colour visions a palette is checked under."""
MIN_DISTANCE = 15.0
"""The smallest CIE76 colour difference (Delta E in CIELAB) at which two colours count as told apart."""


def _linear(colour: str) -> np.ndarray:
    rgb = np.array([int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def seen_as(colour: str, vision: str = "normal") -> np.ndarray:
    """The CIELAB coordinates (D65) of ``colour`` (``#rrggbb``) as a reader with ``vision`` sees it."""
    linear = _linear(colour)
    if vision != "normal":
        linear = np.clip(np.array(_MACHADO[vision]) @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def distance(a: str, b: str, vision: str = "normal") -> float:
    """How far apart colours ``a`` and ``b`` look to a reader with ``vision`` (CIE76 Delta E)."""
    return float(np.linalg.norm(seen_as(a, vision) - seen_as(b, vision)))


def distinguishable(colours: Sequence[str], background: str = PAPER) -> list[str]:
    """Every pair of ``colours`` (and each colour against ``background``) that some reader cannot tell apart.

    Empty when every pair is at least :data:`MIN_DISTANCE` apart under
    every vision of :data:`VISIONS`; otherwise one line per failing pair,
    naming the vision and the distance.
    """
    problems = []
    pairs = list(itertools.combinations(colours, 2)) + [(c, background) for c in colours]
    for (a, b), vision in itertools.product(pairs, VISIONS):
        seen = distance(a, b, vision)
        if seen < MIN_DISTANCE:
            problems.append(f"{a} and {b} under {vision}: {seen:.1f} apart (at least {MIN_DISTANCE:g})")
    return problems


def tile_contrast(colour: str, alpha: float = TILE_ALPHA) -> dict[str, float]:
    """The contrast (WCAG 2's ratio, 1 to 21) of text on a tile of ``colour`` drawn at opacity ``alpha`` over the
    page, on a light page and on a dark one: the text in the default ink of each (:data:`INK`,
    :data:`DARK_INK`), the tile in the colour it takes there (:func:`dark_variant`) over the page's background.
    The figures with text on tiles (chapters 1, 2 and 3) need both at :data:`MIN_CONTRAST` or more."""

    def luminance(rgb: np.ndarray) -> float:
        channels = rgb / 255
        linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
        return float(linear @ np.array([0.2126, 0.7152, 0.0722]))

    def rgb(c: str) -> np.ndarray:
        return np.array([int(c[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)

    found = {}
    for page, paper, ink, tile in (("light", PAPER, INK, colour), ("dark", DARK_PAGE, DARK_INK, dark_variant(colour))):
        low, high = sorted((luminance((1 - alpha) * rgb(paper) + alpha * rgb(tile)), luminance(rgb(ink))))
        found[page] = (high + 0.05) / (low + 0.05)
    return found


# ---------------------------------------------------------------- dark mode for a published SVG

DEFAULT_BLACK = 'text, g[id^="text_"]'
"""What matplotlib leaves black by default: text, as ``<text>`` or as glyph outlines (``svg.fonttype: path``)."""
_COLOUR = re.compile(r"((?:fill|stroke|stop-color|color)(?::\s*|=\"))(#[0-9a-fA-F]{6})\b")


GREY_TINT = 16
"""How far apart a colour's red, green and blue may be (of 255) for it to count as a grey: a faint tint such
as a cell's ``#e6e8ea`` background is a grey to invert, not a colour to keep."""


def dark_variant(colour: str) -> str:
    """What ``colour`` becomes on a dark page: greys (:data:`GREY_TINT`) inverted between :data:`DARK_INK` and
    :data:`DARK_PAGE`, the palette's dark colours lightened (:data:`DARK`), every other colour kept."""
    colour = colour.lower()
    if colour in DARK:
        return DARK[colour]
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    if max(r, g, b) - min(r, g, b) > GREY_TINT:
        return colour
    paper = (r + g + b) / 3 / 255  # 0 for black ink, 1 for white paper
    ends = [(int(DARK_INK[i : i + 2], 16), int(DARK_PAGE[i : i + 2], 16)) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(ink + (page - ink) * paper):02x}" for ink, page in ends)


def themed_svg(svg: str) -> str:
    """A matplotlib SVG that follows the page's colour scheme: unchanged on a light page, dark on a dark one.

    Each colour whose :func:`dark_variant` differs becomes a CSS variable
    that a ``prefers-color-scheme: dark`` rule in the SVG's own style sheet
    switches, as does the default black of text (:data:`DEFAULT_BLACK`); a
    browser applies it to an SVG shown with ``<img>`` too.
    """
    names: dict[str, str] = {}

    def swap(match: re.Match) -> str:
        colour = match.group(2).lower()
        if dark_variant(colour) == colour:
            return match.group(0)
        names.setdefault(colour, f"--rlbook-{colour[1:]}")
        return f"{match.group(1)}var({names[colour]})"

    body = _COLOUR.sub(swap, svg)
    light = "".join(f"{name}: {colour}; " for colour, name in names.items())
    dark = "".join(f"{name}: {dark_variant(colour)}; " for colour, name in names.items())
    sheet = (
        f"<style>svg {{ {light}}} @media (prefers-color-scheme: dark) {{ svg {{ {dark}}} "
        f"{DEFAULT_BLACK} {{ fill: {DARK_INK}; }} }}</style>"
    )
    opening = re.search(r"<svg\b[^>]*>", body)
    if opening is None:
        raise ValueError("not an SVG document: no <svg> element")
    return body[: opening.end()] + "\n" + sheet + body[opening.end() :]


_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px|font:[^;\"]*?([\d.]+)px")
_GLYPH_SCALE = re.compile(r"<g id=\"text_\d+\">\s*(?:<!--.*?-->\s*)?<g transform=\"[^\"]*scale\(([\d.e-]+)")


def text_sizes(svg: str) -> list[float]:
    """Every text size of a matplotlib SVG in its own units (points): ``<text>`` and text drawn as glyphs."""
    sizes = [float(a or b) for a, b in _FONT_SIZE.findall(svg)]
    return sizes + [100 * abs(float(s)) for s in _GLYPH_SCALE.findall(svg)]


_SVG_WIDTH = re.compile(r"<svg\b[^>]*?\bviewBox=\"[-\d.e]+[\s,]+[-\d.e]+[\s,]+([\d.e]+)")


def drawn_text_px(svg: str, box_px: float = NARROWEST_PX) -> float | None:
    """The smallest text of a matplotlib SVG in CSS pixels as the site draws it in a box ``box_px`` wide.

    The page draws the SVG at :data:`PX_PER_PT` pixels a point, shrunk to
    ``box_px`` if it is wider (``img { max-width: 100% }``). None for an SVG
    without text.
    """
    sizes = text_sizes(svg)
    width = _SVG_WIDTH.search(svg)
    if not sizes or width is None:
        return None
    return min(sizes) * min(PX_PER_PT, box_px / float(width.group(1)))


def unreadable(svg: str) -> str | None:
    """Why a panel's text would be drawn under :data:`MIN_TEXT_PX` in the narrowest box, or None when it is not.

    Names both causes: text smaller than :data:`MIN_FONT` points (math text's
    scripts), and a panel wider than :data:`MAX_WIDTH` points. Used by the
    chapters' figure tests on every panel they draw.
    """
    drawn = drawn_text_px(svg)
    if drawn is None or drawn >= MIN_TEXT_PX - 1e-6:
        return None
    found = _SVG_WIDTH.search(svg)
    assert found is not None  # drawn_text_px gives None for an SVG without a width
    width = float(found.group(1))
    causes = []
    if min(text_sizes(svg)) < MIN_FONT:
        causes.append(f"text of {min(text_sizes(svg)):.1f} pt, under {MIN_FONT} pt")
    if width > MAX_WIDTH:
        causes.append(f"{width:.0f} pt wide, over {MAX_WIDTH:.0f} pt")
    return f"text drawn at {drawn:.1f} px in a {NARROWEST_PX}-px box ({'; '.join(causes)})"
