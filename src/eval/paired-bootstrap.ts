import type { Episode } from "../loops/types.js";
import { correctAfter } from "./metrics.js";

/**
 * Paired comparison of runs over the same items, the method of the sampled benchmarks (bench/sampled-table.mjs): an
 * item's score is averaged over its seeds first (the seeds of one item are not independent, so items are the unit),
 * then a mean over items gets a 95 % percentile-bootstrap interval (4000 resamples of items, a fixed seed, so the
 * interval is reproducible). Two runs are compared item by item on the items both have.
 */

export { bootstrapMean, bootstrapResamples, bootstrapSeed, type Estimate } from "./bootstrap.js";
import { bootstrapMean, type Estimate } from "./bootstrap.js";

/** An item's scores averaged over the seeds: Acc@t1, Acc@t`turns` (the loop's answer after t attempts) and their difference. */
export interface ItemScore {
  t1: number;
  tN: number;
  delta: number;
}

/**
 * Per item, Acc@t1 and Acc@t`turns` averaged over seed runs (`correctAfter`, as `summarize` counts them). Only items
 * every seed run has are scored (a run killed part-way would otherwise weigh its items differently); `dropped`
 * counts the others.
 */
export function itemScores(seedRuns: readonly (readonly Episode[])[], turns: number): { scores: Map<string, ItemScore>; dropped: number } {
  const byRun = seedRuns.map((episodes) => new Map(episodes.map((e) => [e.id, e])));
  const ids = new Set(byRun.flatMap((m) => [...m.keys()]));
  const scores = new Map<string, ItemScore>();
  for (const id of ids) {
    const episodes = byRun.map((m) => m.get(id));
    if (episodes.some((e) => e === undefined)) continue;
    const t1 = average(episodes.map((e) => (correctAfter(e as Episode, 1) ? 1 : 0)));
    const tN = average(episodes.map((e) => (correctAfter(e as Episode, turns) ? 1 : 0)));
    scores.set(id, { t1, tN, delta: tN - t1 });
  }
  return { scores, dropped: ids.size - scores.size };
}

/** Mean of a − b over the items both have, with its bootstrap interval; null when they share none. */
export function pairedDifference(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Estimate | null {
  return bootstrapMean([...a.keys()].filter((id) => b.has(id)).map((id) => (a.get(id) as number) - (b.get(id) as number)));
}

/** One score of every item (`t1`, `tN` or `delta`), for `bootstrapMean` and `pairedDifference`. */
export function scoreOf(scores: ReadonlyMap<string, ItemScore>, key: keyof ItemScore): Map<string, number> {
  return new Map([...scores].map(([id, s]) => [id, s[key]]));
}

function average(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
