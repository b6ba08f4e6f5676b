import { bootstrapMean } from "./bootstrap.js";

/** Why a figure could not be computed (no log-probs, no judge, no retries, …): reported as such, never as zero. */
export interface Unavailable {
  available: false;
  reason: string;
}

/** A share k/n with its Wilson 95% interval. */
export interface RateEstimate {
  available: true;
  n: number;
  k: number;
  value: number;
  ci95: [number, number];
}

/** A mean of n values with a 95% percentile-bootstrap interval; `ci95` is null when n = 1 (one value has no spread). */
export interface MeanEstimate {
  available: true;
  n: number;
  value: number;
  ci95: [number, number] | null;
}

/** A difference of two shares (a − b) with Newcombe's hybrid Wilson 95% interval. */
export interface DifferenceEstimate {
  available: true;
  value: number;
  ci95: [number, number];
}

export { bootstrapResamples as BOOTSTRAP_RESAMPLES, bootstrapSeed as BOOTSTRAP_SEED } from "./bootstrap.js";

/** Wilson score interval for k successes in n trials (z = 1.96 for 95%). [0, 0] when n = 0. */
export function wilsonInterval(k: number, n: number, z = 1.959963984540054): [number, number] {
  if (n === 0) return [0, 0];
  const p = k / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * The mean of `values` and its 95% percentile-bootstrap interval, as a `MeanEstimate`: the project's one bootstrap
 * (`bootstrapMean` in bootstrap.ts, a fixed seed, so the same values always give the same interval). The
 * caller passes one value per episode, so resampling values is resampling episodes. No interval for one value.
 */
export function meanEstimate(values: readonly number[]): MeanEstimate {
  const estimate = bootstrapMean(values);
  if (estimate === null) throw new RangeError("meanEstimate needs at least one value");
  return { available: true, n: estimate.n, value: estimate.mean, ci95: values.length < 2 ? null : [estimate.lo, estimate.hi] };
}

/**
 * Newcombe's (1998, method 10) interval for the difference of two independent proportions, from each one's Wilson
 * interval: a − b, lower a − b − √((a − lₐ)² + (u_b − b)²), upper a − b + √((uₐ − a)² + (b − l_b)²).
 */
export function newcombeDifference(a: RateEstimate, b: RateEstimate): DifferenceEstimate {
  const d = a.value - b.value;
  const [la, ua] = a.ci95;
  const [lb, ub] = b.ci95;
  return { available: true, value: d, ci95: [Math.max(-1, d - Math.sqrt((a.value - la) ** 2 + (ub - b.value) ** 2)), Math.min(1, d + Math.sqrt((ua - a.value) ** 2 + (b.value - lb) ** 2))] };
}
