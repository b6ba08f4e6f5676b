// The benchmarks' median and its bootstrap interval, shared by bench/gateway.mjs and bench/ai-sdk-middleware.mjs.
// The generator is the project's mulberry32 (dist/util/random.js), so intervals are reproducible from the seed.
const { mulberry32 } = await import(new URL("../dist/util/random.js", import.meta.url).href);

/** Median of an ascending-sorted array. */
export function median(sorted) {
  const n = sorted.length;
  return n % 2 === 1 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/** Median of an unsorted array (copied, not sorted in place). */
export function medianOf(xs) {
  return median(Float64Array.from(xs).sort());
}

/** Percentile-bootstrap 95 % interval of median(b) − median(a), resampling each side independently. */
export function medianDifferenceInterval(a, b, seed, resamples = 2000) {
  const random = mulberry32(seed);
  const resample = (xs) => Float64Array.from({ length: xs.length }, () => xs[Math.floor(random() * xs.length)]).sort();
  const diffs = Float64Array.from({ length: resamples }, () => median(resample(b)) - median(resample(a))).sort();
  return [diffs[Math.floor(0.025 * resamples)], diffs[Math.ceil(0.975 * resamples) - 1]];
}
