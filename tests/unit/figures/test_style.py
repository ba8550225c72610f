"""The house style for figures (rlbook.figures.style): sizes, text as text, a palette every reader tells apart,
one vocabulary for verdicts, and SVGs that follow a dark page."""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import is_color_like

from rlbook.core.rewards import STATUSES
from rlbook.figures import style

WORKSHOP_DOM = Path(style.__file__).resolve().parents[1] / "publish" / "assets" / "workshop" / "dom.js"


@pytest.fixture
def saved_rc():
    """Run a test with the rcParams restored afterwards, so the style does not leak into other tests."""
    with matplotlib.rc_context():
        yield
    plt.close("all")


def _svg(fig) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg")
    return out.getvalue()


def test_style_sets_the_house_rcparams(saved_rc):
    plt.rcdefaults()
    assert plt.rcParams["axes.spines.top"] is True
    style.style()
    rc = plt.rcParams
    assert tuple(rc["figure.figsize"]) == style.PANEL
    assert rc["axes.spines.top"] is False and rc["axes.spines.right"] is False
    assert rc["axes.grid"] is True and rc["legend.frameon"] is False
    assert rc["svg.fonttype"] == "none" and rc["font.sans-serif"][0] == "DejaVu Sans"
    assert min(rc["xtick.labelsize"], rc["ytick.labelsize"], rc["legend.fontsize"], rc["font.size"]) >= style.MIN_FONT
    assert [c["color"] for c in rc["axes.prop_cycle"]] == list(style.SERIES)


def test_a_panel_in_the_house_style_is_written_with_its_text_as_text_no_smaller_than_min_font(saved_rc):
    style.style()
    fig, ax = style.panel()
    for name, colour in style.series_colours(["main", "ppo", "cispo"], reference="main").items():
        ax.plot([0, 1, 2], [0, 1, 0.5], color=colour, label=name)
    ax.set(xlabel="training step", ylabel="expected reward", title="three runs")
    ax.legend()
    svg = _svg(fig)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert {"training step", "expected reward", "three runs", "main", "ppo", "cispo"} <= set(texts)
    assert "font-family: 'DejaVu Sans', 'Bitstream Vera Sans'" in svg and "sans-serif" in svg
    sizes = style.text_sizes(svg)
    assert len(sizes) == len(texts) and min(sizes) == style.MIN_FONT


def test_a_log_axis_with_plain_tick_labels_keeps_every_label_at_min_font(saved_rc):
    style.style()
    fig, ax = style.panel()
    ax.plot([1, 10, 100], [0.001, 0.1, 10])
    ax.set_yscale("log")
    powers = _svg(fig)
    assert "<tspan" in powers and min(style.text_sizes(powers)) < style.MIN_FONT  # 10 to the power, drawn small
    style.plain_log_ticks(ax)
    plain = _svg(fig)
    assert min(style.text_sizes(plain)) == style.MIN_FONT
    assert {"0.001", "0.1", "10"} <= set(re.findall(r"<text[^>]*>([^<]*)</text>", plain))


def test_text_sizes_reads_text_drawn_as_glyph_outlines_too(saved_rc):
    style.style()
    plt.rcParams["svg.fonttype"] = "path"
    fig, ax = style.panel()
    ax.set_title("a title", fontsize=12)
    ax.set_xticks([0, 1])
    sizes = style.text_sizes(_svg(fig))
    assert "<text" not in _svg(fig) and max(sizes) == 12 and min(sizes) == style.MIN_FONT


def test_panel_and_figure_sizes(saved_rc):
    fig, ax = style.panel()
    assert tuple(fig.get_size_inches()) == pytest.approx(style.PANEL) and hasattr(ax, "plot")
    fig, axes = style.figure(width=8, height=3, ncols=2, sharey=True)
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 3)) and len(axes) == 2


def test_the_widest_panel_still_draws_min_font_at_9_px_in_the_narrowest_box():
    assert style.MAX_WIDTH * style.MIN_TEXT_PX / style.MIN_FONT == pytest.approx(style.NARROWEST_PX)
    # The narrowest box is a callout on a 390-px phone: the text column less borders and padding.
    assert 300 < style.NARROWEST_PX < 390 - 2 * 16


def test_drawn_text_px_scales_points_to_pixels_and_shrinks_a_panel_wider_than_its_box(saved_rc):
    style.style()
    fig, ax = style.panel(3, 2)
    ax.set_xticks([0, 1])
    svg = _svg(fig)
    assert style.drawn_text_px(svg) == pytest.approx(style.MIN_FONT * style.PX_PER_PT)  # drawn at full size
    assert style.drawn_text_px(svg, box_px=100) < style.MIN_TEXT_PX  # shrunk into a narrow box
    assert style.unreadable(svg) is None
    assert style.drawn_text_px('<svg viewBox="0 0 10 10"></svg>') is None


def test_unreadable_names_a_panel_too_wide_and_math_text_too_small(saved_rc):
    style.style()
    fig, ax = style.panel(6, 3)
    ax.plot([1, 10, 100], [1, 2, 3], label=r"$\sqrt{p(1-p)/n}$")
    ax.set_xscale("log")
    ax.legend()
    problem = style.unreadable(_svg(fig))
    assert "wide, over 325 pt" in problem and "pt, under 9 pt" in problem


def test_fit_narrows_a_panel_with_long_labels_to_the_widest_allowed_and_keeps_its_text_size(saved_rc):
    style.style()
    fig, ax = style.panel()
    ax.barh([0, 1], [1, 2])
    ax.set_yticks([0, 1], ["a label long enough to push the panel wide", "short"])
    assert style.unreadable(_svg(fig)) is not None
    style.fit(fig)
    svg = _svg(fig)
    width = float(re.search(r'viewBox="0 0 ([\d.]+)', svg).group(1))
    assert width <= style.MAX_WIDTH and min(style.text_sizes(svg)) == style.MIN_FONT
    assert style.unreadable(svg) is None and fig.get_figwidth() < style.PANEL[0]


# ---------------------------------------------------------------- colours and colour vision


def test_the_simulation_keeps_white_black_and_greys_and_moves_a_red_green_pair_together():
    assert style.seen_as("#ffffff") == pytest.approx([100, 0, 0], abs=0.1)
    assert style.seen_as("#000000") == pytest.approx([0, 0, 0], abs=0.1)
    for vision in style.VISIONS:
        # A grey stays a grey of the same lightness under every simulated vision.
        grey = style.seen_as("#808080", vision)
        assert grey[0] == pytest.approx(53.6, abs=1) and abs(grey[1]) < 2 and abs(grey[2]) < 2
    red, green = "#d62728", "#2ca02c"  # matplotlib's default red and green
    assert style.distance(red, green) > 60
    assert style.distance(red, green, "deuteranopia") < style.MIN_DISTANCE
    assert style.distinguishable([red, green]) and not style.distinguishable([style.BLUE, style.ORANGE])


def test_the_series_colours_are_told_apart_by_every_reader_on_a_light_and_a_dark_page():
    assert len(style.SERIES) == style.MAX_SERIES <= 5 and all(is_color_like(c) for c in style.SERIES)
    assert style.distinguishable([*style.SERIES, style.INK], style.PAPER) == []
    on_dark = [style.dark_variant(c) for c in (*style.SERIES, style.INK)]
    assert style.distinguishable(on_dark, style.DARK_PAGE) == []


def test_the_old_run_colours_were_not_told_apart_which_is_why_a_panel_draws_at_most_five():
    old = ["#d4589a", "#7655a6", "#b8403a", "#f28e2b", "#24527a", "#8fb3d9"]  # Fig. 3.5's pinks, reds and blues
    assert style.distinguishable(old)


def test_every_verifier_status_has_its_own_colour_told_apart_on_both_pages():
    assert set(STATUSES) <= set(style.STATUS_COLOURS)
    assert style.STATUS_COLOURS["accepted"] == style.TEAL and style.STATUS_COLOURS["incorrect"] == style.ORANGE
    colours = list(style.STATUS_COLOURS.values())
    assert len(set(colours)) == len(colours)
    assert style.distinguishable(colours) == []
    assert style.distinguishable([style.dark_variant(c) for c in colours], style.DARK_PAGE) == []


def test_series_colours_give_the_reference_ink_and_refuse_a_crowded_panel():
    colours = style.series_colours(["main", "pg", "ppo"], reference="main")
    assert colours == {"main": style.INK, "pg": style.SERIES[0], "ppo": style.SERIES[1]}
    assert style.series_colours(["a", "b"]) == {"a": style.BLUE, "b": style.ORANGE}
    with pytest.raises(ValueError, match="at most 5"):
        style.series_colours([f"run{i}" for i in range(6)])


# ---------------------------------------------------------------- dark mode


def test_dark_variants_invert_greys_lighten_dark_palette_colours_and_keep_the_rest():
    assert style.dark_variant("#000000") == style.DARK_INK and style.dark_variant("#FFFFFF") == style.DARK_PAGE
    assert style.dark_variant(style.BLUE) == "#56b4e9" and style.dark_variant(style.GREY) == "#c0c0c0"
    assert style.dark_variant(style.ORANGE) == style.ORANGE and style.dark_variant("#8b1e3f") == "#8b1e3f"
    # A faintly tinted grey (a prompt cell's background) turns dark; a pale colour (a sky blue) stays.
    assert style.distance(style.dark_variant("#e6e8ea"), style.DARK_PAGE) < 10
    assert style.dark_variant("#8fb3d9") == "#8fb3d9"
    # matplotlib's grid grey sits as far from the dark page as it did from white paper: as faint, not brighter.
    grid_on_dark = style.distance(style.dark_variant("#b0b0b0"), style.DARK_PAGE)
    assert grid_on_dark == pytest.approx(style.distance("#b0b0b0", style.PAPER), abs=3)


def test_text_on_a_tile_keeps_its_contrast_on_a_light_page_and_a_dark_one():
    for colour in (*style.SERIES, style.GREY, *style.STATUS_COLOURS.values()):
        seen = style.tile_contrast(colour)
        assert min(seen.values()) >= style.MIN_CONTRAST, (colour, seen)
    # A solid tile keeps its colour on a dark page while the ink turns light: near-white on orange (issue 57).
    assert style.tile_contrast(style.ORANGE, alpha=1.0)["dark"] < 2 < style.MIN_CONTRAST
    # A white tile turns dark with the page, as the ink turns light: read on both pages even solid.
    assert min(style.tile_contrast(style.PAPER, alpha=1.0).values()) > 14


def test_a_themed_svg_is_unchanged_on_a_light_page_and_switches_its_greys_on_a_dark_one(saved_rc):
    style.style()
    fig, ax = style.panel()
    ax.plot([0, 1], [0, 1], color=style.BLUE)
    ax.plot([0, 1], [1, 0], color=style.ORANGE)
    ax.set_xlabel("step")
    original = _svg(fig)
    themed = style.themed_svg(original)
    light = dict(re.findall(r"(--rlbook-\w+): (#\w+);", themed.split("@media")[0]))
    dark = dict(re.findall(r"(--rlbook-\w+): (#\w+);", themed.split("@media")[1]))
    assert light["--rlbook-ffffff"] == "#ffffff" and dark["--rlbook-ffffff"] == style.DARK_PAGE
    assert light["--rlbook-0072b2"] == style.BLUE and dark["--rlbook-0072b2"] == "#56b4e9"
    assert "--rlbook-e69f00" not in light and "stroke: #e69f00" in themed  # orange reads on both pages
    assert f'text, g[id^="text_"] {{ fill: {style.DARK_INK}; }}' in themed.split("@media")[1]
    # On a light page every variable holds the colour it replaced: the drawing is the original one.
    restored = re.sub(r"var\((--rlbook-\w+)\)", lambda m: light[m.group(1)], themed)
    assert re.sub(r"\n<style>svg \{.*?</style>", "", restored, flags=re.DOTALL) == original


def test_themed_svg_refuses_what_is_not_an_svg():
    with pytest.raises(ValueError, match="not an SVG"):
        style.themed_svg("<html><body>no drawing</body></html>")


def test_a_log_axis_with_one_power_of_ten_labels_its_twos_and_fives_and_a_longer_one_only_its_powers():
    fig, (short, long) = plt.subplots(1, 2)
    for ax, (low, high) in ((short, (0.03, 0.3)), (long, (0.001, 10))):
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        style.plain_log_ticks(ax)
    fig.canvas.draw()
    minor = {ax: {t.get_text() for t in ax.get_yticklabels(minor=True)} - {""} for ax in (short, long)}
    plt.close(fig)
    assert {"0.05", "0.2"} <= minor[short] and not minor[long]
