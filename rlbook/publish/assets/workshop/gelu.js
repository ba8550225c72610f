// GELU, the MLP's activation: gelu(x) = x * Phi(x), with Phi the standard normal
// distribution function. PyTorch's nn.GELU() uses the exact erf form, not the
// tanh approximation, so we need erfc to float32 accuracy or better; JavaScript
// has no Math.erf.
//
// erfc(z) = t * exp(-z^2 + P(t)) with t = 1 / (1 + z / 2), for z >= 0. P is a
// Chebyshev series in 2t - 1 of degree 14, fitted by least squares to Python's
// math.erfc on z in [0, 26]; its largest error there is 5e-11, so erfc has a
// relative error of about 5e-11 (tests/web checks it on a fine grid).
const P = [-0.6513268664233174, 0.6419698052441568, 0.019476460852543384, -0.009561503273401223,
  -0.0009466057593386368, 0.00036684864693832054, 4.2515545877348446e-05, -2.027217315912174e-05,
  -1.6293691857081601e-06, 1.3075382111416339e-06, 1.2794578985336863e-08, -8.326167821236437e-08,
  5.239092418933653e-09, 5.858744021557285e-09, -1.4211128186639493e-09];

/** erfc(z) for z >= 0 (Clenshaw's recurrence sums the series). */
function erfcPositive(z) {
  const t = 1 / (1 + 0.5 * z);
  const u = 2 * t - 1;
  let b1 = 0, b2 = 0;
  for (let k = P.length - 1; k > 0; k--) {
    const b0 = 2 * u * b1 - b2 + P[k];
    b2 = b1;
    b1 = b0;
  }
  return t * Math.exp(-z * z + u * b1 - b2 + P[0]);
}

/** erfc(z) for any z: erfc(-z) = 2 - erfc(z). */
export function erfc(z) {
  return z >= 0 ? erfcPositive(z) : 2 - erfcPositive(-z);
}

/** Phi(x) = erfc(-x / sqrt 2) / 2, the standard normal distribution function. */
export function normalCdf(x) {
  return 0.5 * erfc(-x * Math.SQRT1_2);
}

// erfc costs an exp and a 15-term series, and the MLP applies GELU 256 times
// per character read, so Phi and the density phi come from a table instead:
// cubic Hermite interpolation between points 1/256 apart on [-8, 8] (each
// point holds Phi and phi, whose slopes are phi and -x phi); the error is
// below h^4 / 384 times the largest fourth derivative, about 1e-12. Beyond
// the table erfc is called.
const H = 1 / 256, EDGE = 8, INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
const POINTS = 2 * EDGE / H + 1;
const CDF = new Float64Array(POINTS), PDF = new Float64Array(POINTS);
for (let k = 0; k < POINTS; k++) {
  const x = -EDGE + k * H;
  CDF[k] = normalCdf(x);
  PDF[k] = INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}
const scratch = new Float64Array(2);

/** Phi(x) into scratch[0] and phi(x) into scratch[1], by the table where it reaches. */
function normal(x) {
  if (!(x > -EDGE && x < EDGE)) {
    scratch[0] = normalCdf(x);
    scratch[1] = INV_SQRT_2PI * Math.exp(-0.5 * x * x);
    return;
  }
  const at = (x + EDGE) / H, k = Math.floor(at), t = at - k, x0 = -EDGE + k * H, x1 = x0 + H;
  const t2 = t * t, t3 = t2 * t;
  const h00 = 2 * t3 - 3 * t2 + 1, h10 = (t3 - 2 * t2 + t) * H, h01 = 3 * t2 - 2 * t3, h11 = (t3 - t2) * H;
  const p0 = PDF[k], p1 = PDF[k + 1];
  scratch[0] = h00 * CDF[k] + h10 * p0 + h01 * CDF[k + 1] + h11 * p1;
  scratch[1] = h00 * p0 - h10 * x0 * p0 + h01 * p1 - h11 * x1 * p1;
}

/** gelu(x) = x Phi(x). */
export function gelu(x) {
  normal(x);
  return x * scratch[0];
}

/** d gelu / dx = Phi(x) + x phi(x): the backward pass needs it. */
export function geluGrad(x) {
  normal(x);
  return scratch[0] + x * scratch[1];
}
