"""Redraw the README's figure, the workshop of chapter 1, from the seed-0 ``base`` run.

Run from the repository root with ``make readme-figure`` (or
``python docs/readme_figure.py``). It calls the same functions as chapter 1,
so the picture in the README is the one the book prints.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from rlbook import plots, runs, workshop

OUT = Path(__file__).with_name("workshop.png")


def main() -> None:
    plots.style()
    base = runs.load("base", 0)
    samples = workshop.recorded_samples(base)
    picks = workshop.pick_workshop_sums(samples, base.policy(step=1))
    fig = workshop.plot_answers(samples, picks)
    fig.savefig(OUT, dpi=110, bbox_inches="tight")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
