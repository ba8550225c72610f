// Line charts of the panels, drawn as SVG: steps along x, a share from 0 to 1
// up y, the legend in HTML under the chart so that it wraps on a phone. Each
// update redraws a few paths, which takes well under a millisecond, so the page
// can redraw after every training step.

import { el } from "./dom.js";

const W = 320, H = 140, LEFT = 30, RIGHT = 8, TOP = 8, BOTTOM = 22;

export class LineChart {
  /**
   * A chart titled `title` over steps 0..`steps`. Each of `series` gives a
   * line's key, CSS class and legend label (none: no legend entry) and
   * whether its points are marked.
   */
  constructor(title, steps, series) {
    this.x = (s) => LEFT + (s / steps) * (W - LEFT - RIGHT);
    this.y = (v) => TOP + (1 - v) * (H - TOP - BOTTOM);
    this.lines = {};
    const grid = [0, 0.5, 1].map((v) => [
      el("svg:line", { x1: LEFT, x2: W - RIGHT, y1: this.y(v), y2: this.y(v), class: "rw-grid" }),
      el("svg:text", { x: LEFT - 4, y: this.y(v) + 3, class: "rw-tick", "text-anchor": "end", text: v.toFixed(1) })]);
    const ticks = [0, steps / 2, steps].map((s) =>
      el("svg:text", { x: this.x(s), y: H - 6, class: "rw-tick", "text-anchor": "middle", text: String(s) }));
    const legend = [];
    for (const { key, label, cls, dots } of series) {
      this.lines[key] = { path: el("svg:path", { class: `rw-line ${cls}`, d: "" }),
        dots: dots ? el("svg:g", { class: cls }) : null };
      if (!label) continue;
      legend.push(el("span", { class: "rw-legend-item" },
        el("svg:svg", { viewBox: "0 0 16 6", class: "rw-legend-line", "aria-hidden": "true" },
          el("svg:line", { x1: 0, x2: 16, y1: 3, y2: 3, class: `rw-line ${cls}` })), label));
    }
    this.node = el("figure", { class: "rw-chart" },
      el("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title }, grid, ticks,
        Object.values(this.lines).flatMap(({ path, dots }) => [path, dots])),
      el("figcaption", {}, el("span", { class: "rw-chart-title", text: title }),
        el("span", { class: "rw-legend" }, legend)));
  }

  /** Draw the line `key` through points [[step, value], ...]. */
  draw(key, points) {
    const { path, dots } = this.lines[key];
    path.setAttribute("d", points.map(([s, v], i) => `${i ? "L" : "M"}${this.x(s).toFixed(1)},${this.y(v).toFixed(1)}`).join(""));
    if (dots) dots.replaceChildren(...points.map(([s, v]) => el("svg:circle", { cx: this.x(s), cy: this.y(v), r: 2.5 })));
  }
}
