// A seeded random stream for sampling. The page cannot replay PyTorch's
// generator, so every run here is a new random draw of the book's recipe; a
// seed of its own still makes a run repeatable (the same seed gives the same
// run) and lets the checkpoint evaluations draw from streams apart from the
// training stream, as rlbook's do.
//
// xoshiro128** (Blackman and Vigna 2018): 128 bits of state, 32-bit outputs,
// fast in plain 32-bit integer arithmetic. splitmix32 spreads the seed over the
// state so that nearby seeds give unrelated streams.

function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A function returning uniform numbers in [0, 1), one stream per integer seed. */
export function makeRng(seed) {
  const mix = splitmix32(seed);
  let a = mix(), b = mix(), c = mix(), d = mix();
  return () => {
    const out = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t;
    d = rotl(d, 11);
    return out / 4294967296;
  };
}

function rotl(x, k) {
  return (x << k) | (x >>> (32 - k));
}
