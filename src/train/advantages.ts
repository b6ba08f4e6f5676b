/**
 * GRPO's group-normalised advantages (Shao et al. 2024): within a group of G samples for one prompt,
 * A_i = (r_i − mean(r)) / (std(r) + eps). A group whose rewards are all equal teaches nothing: every A_i is 0.
 * `std` is the population standard deviation, as in the GRPO paper and TRL.
 */
export function groupAdvantages(rewards_G: readonly number[], eps = 1e-4): number[] {
  if (rewards_G.length === 0) return [];
  const mean = rewards_G.reduce((a, b) => a + b, 0) / rewards_G.length;
  const variance = rewards_G.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards_G.length;
  const std = Math.sqrt(variance);
  return rewards_G.map((r) => (std === 0 ? 0 : (r - mean) / (std + eps)));
}

/**
 * Spreads a sequence's advantage over its reinforced tokens: A / n on each of its n tokens, divided by the number
 * of sequences in the batch — GRPO's per-sequence token mean, then the mean over sequences, written into the
 * per-token advantages because the worker's loss is a plain sum.
 */
export function tokenAdvantages(mask: readonly number[], advantage: number, sequencesInBatch: number): number[] {
  const n = mask.filter((m) => m !== 0).length;
  if (n === 0) return mask.map(() => 0);
  return mask.map((m) => (m !== 0 ? advantage / n / sequencesInBatch : 0));
}
