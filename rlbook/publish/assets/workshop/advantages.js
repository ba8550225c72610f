// Advantages: how much better each sampled answer did than the other answers
// to its prompt (rlbook.core.advantages, chapter 3). The trainer credits its
// batches with these functions, and chapter 3's "try it" panel shows them on
// rewards the reader types, so the page's lesson and the page's training share
// one implementation. tests/web compares every method with rlbook's.
//
// Rewards come as one flat array, group after group, `groupSize` answers each
// (the order in which the sampler lays out its rows).

/** The methods by the name a run configuration uses, and "none": the reward itself, with no baseline. */
export const METHODS = ["centered", "group_std", "batch_std", "rloo", "none"];

/** Population mean and standard deviation of rewards[from..from+size-1]. */
function moments(rewards, from, size) {
  const mean = sumOf(rewards, from, size) / size;
  let variance = 0;
  for (let k = 0; k < size; k++) variance += (rewards[from + k] - mean) ** 2;
  return [mean, Math.sqrt(variance / size)];
}

function sumOf(rewards, from, size) {
  let sum = 0;
  for (let k = 0; k < size; k++) sum += rewards[from + k];
  return sum;
}

/**
 * Advantages of `rewards` by `method` (rlbook.core.advantages.compute_advantages):
 * "centered" r - mean(group); "group_std" the same divided by the group's
 * population standard deviation plus `eps`; "batch_std" divided by the whole
 * batch's instead; "rloo" r minus the mean of the other answers of its group
 * (RLOO); "none" the reward itself (plain REINFORCE, no baseline).
 */
export function advantages(rewards, groupSize, method = "centered", eps = 1e-6) {
  const n = rewards.length, out = new Float64Array(n);
  if (!METHODS.includes(method)) throw new RangeError(`unknown advantage method ${method}`);
  if (groupSize < 1 || n % groupSize !== 0) throw new RangeError(`${n} rewards do not make groups of ${groupSize}`);
  if (method === "rloo" && groupSize < 2) throw new RangeError("leaving one out needs groups of at least 2");
  const batchStd = method === "batch_std" ? moments(rewards, 0, n)[1] : 0;
  for (let from = 0; from < n; from += groupSize) {
    const [mean, std] = moments(rewards, from, groupSize);
    for (let k = from; k < from + groupSize; k++) {
      const r = rewards[k];
      if (method === "none") out[k] = r;
      else if (method === "rloo") out[k] = r - (sumOf(rewards, from, groupSize) - r) / (groupSize - 1);
      else if (method === "group_std") out[k] = (r - mean) / (std + eps);
      else if (method === "batch_std") out[k] = (r - mean) / (batchStd + eps);
      else out[k] = r - mean;
    }
  }
  return out;
}

/** The share of groups whose rewards are all equal: groups that teach nothing (rlbook's zero_variance_frac). */
export function zeroVarianceFraction(rewards, groupSize) {
  let flat = 0;
  for (let from = 0; from < rewards.length; from += groupSize) {
    let equal = true;
    for (let k = from + 1; k < from + groupSize; k++) equal = equal && rewards[k] === rewards[from];
    if (equal) flat++;
  }
  return flat / (rewards.length / groupSize);
}
