// The interval the workshop puts on its estimate (rlbook.stats.wilson_interval).

/**
 * The 95 % Wilson score interval of a success probability from `successes` of
 * `n` trials (Wilson 1927): unlike p +- z sqrt(p (1 - p) / n) it stays inside
 * [0, 1] and does not shrink to a point at 0 of n or n of n.
 */
export function wilsonInterval(successes, n, z = 1.96) {
  const p = successes / n, z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
