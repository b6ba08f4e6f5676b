import { wilsonInterval } from "../eval/estimate.js";
import { summarize } from "../eval/metrics.js";
import { attemptPassed } from "../loops/answer-decision.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import type { Episode } from "../loops/types.js";
import type { RunFolder } from "../data/run-folder.js";

/** The width of a time bucket; buckets are UTC hours or UTC days. */
export type TimeBucketSize = "hour" | "day";
export const timeBucketSizes: readonly TimeBucketSize[] = ["hour", "day"];

/** One bucket of a record's episodes by start time (`Episode.startedAt`). Pass rates read `attemptPassed` (the outcome the client was told) with Wilson intervals; tokens and calls come from `summarize`. */
export interface TimeBucket {
  /** The bucket's first instant (ISO, UTC). */
  start: string;
  /** `2026-11-25 10:00` (hours) or `2026-11-25` (days), UTC. */
  label: string;
  requests: number;
  /** First drafts that passed their checks (a judge's included), their share and its Wilson 95% interval. */
  firstPass: number;
  firstRate: number;
  firstCi95: [number, number];
  /** Returned answers (after reflection and any rollback) that passed their checks: `decision: verified`. */
  finalPass: number;
  finalRate: number;
  finalCi95: [number, number];
  /** finalRate − firstRate, in points. */
  liftPoints: number;
  /** Reflection calls made. */
  reflections: number;
  /** All tokens (prompt and completion, every role) and model calls, per request. */
  tokensPerRequest: number;
  callsPerRequest: number;
}

export interface TimeAxis {
  size: TimeBucketSize;
  /** Buckets that hold episodes, oldest first (empty hours or days between them are left out). */
  buckets: TimeBucket[];
  /** Episodes without a readable `startedAt` (written before it existed), left out of the buckets. */
  undated: number;
}

const HOUR_MS = 3_600_000;
/** Up to this many hours of traffic are shown by the hour, longer spans by the day (hours give 1…48 buckets). */
const MOST_HOURS = 48;

/**
 * A record's episodes by hour or by day of their start: per bucket the pass rates the client was told (`attemptPassed`)
 * and the tokens and calls `summarize` computes over the run's `turns`. Null when no episode has a `startedAt`.
 * Without `size`: by the hour when the episodes span at most 48 hours, else by the day.
 */
export function timeAxis(episodes: readonly Episode[], turns: number, size?: TimeBucketSize): TimeAxis | null {
  const dated = episodes.map((e) => ({ e, at: e.startedAt === undefined ? Number.NaN : Date.parse(e.startedAt) })).filter((d) => Number.isFinite(d.at));
  if (dated.length === 0) return null;
  const times = dated.map((d) => d.at);
  const first = Math.min(...times);
  const last = Math.max(...times);
  const chosen = size ?? (Math.floor(last / HOUR_MS) - Math.floor(first / HOUR_MS) < MOST_HOURS ? "hour" : "day");
  const width = chosen === "hour" ? HOUR_MS : 24 * HOUR_MS;
  const groups = new Map<number, Episode[]>();
  for (const { e, at } of dated) {
    const start = Math.floor(at / width) * width;
    const group = groups.get(start) ?? [];
    group.push(e);
    groups.set(start, group);
  }
  const buckets = [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, group]): TimeBucket => {
      const s = summarize(group, turns);
      const n = group.length;
      // Passed as the client was told (`attemptPassed`: every check, a judge's included), not the verifier's verdict.
      const firstPass = group.filter((e) => attemptPassed(e.attempts[0]) === true).length;
      const finalPass = group.filter((e) => attemptPassed(selectedAttempt(e)) === true).length;
      const firstRate = n === 0 ? 0 : firstPass / n;
      const finalRate = n === 0 ? 0 : finalPass / n;
      const iso = new Date(start).toISOString();
      return {
        start: iso,
        label: chosen === "hour" ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10),
        requests: n,
        firstPass,
        firstRate,
        firstCi95: wilsonInterval(firstPass, n),
        finalPass,
        finalRate,
        finalCi95: wilsonInterval(finalPass, n),
        liftPoints: 100 * (finalRate - firstRate),
        reflections: group.reduce((sum, e) => sum + (e.usageByRole?.reflection?.calls ?? 0), 0),
        tokensPerRequest: (s.tokens.prompt + s.tokens.completion) / n,
        callsPerRequest: s.model_calls_per_episode,
      };
    });
  return { size: chosen, buckets, undated: episodes.length - dated.length };
}

/**
 * The time axis of a record (a folder the record writer made: `reflect serve --record`, the middleware's writer);
 * null for `reflect eval` and data runs, whose episodes' times say when an experiment ran, not how traffic changed.
 */
export function recordTimeAxis(run: RunFolder, size?: TimeBucketSize): TimeAxis | null {
  return run.kind === "eval" && run.config.record_format !== undefined ? timeAxis(run.episodes, run.turns, size) : null;
}

const pct = (v: number) => `${(100 * v).toFixed(1)}%`;

/** The cells of the time table, shared by the printed table and the HTML report. */
export function timeAxisCells(axis: TimeAxis): { header: string[]; rows: string[][] } {
  return {
    header: [`${axis.size} (UTC)`, "requests", "first draft pass [95% CI]", "after reflection [95% CI]", "lift (points)", "reflections", "tokens / request", "calls / request"],
    rows: axis.buckets.map((b) => [
      b.label,
      String(b.requests),
      `${pct(b.firstRate)} [${pct(b.firstCi95[0])}, ${pct(b.firstCi95[1])}]`,
      `${pct(b.finalRate)} [${pct(b.finalCi95[0])}, ${pct(b.finalCi95[1])}]`,
      `${b.liftPoints >= 0 ? "+" : ""}${b.liftPoints.toFixed(1)}`,
      String(b.reflections),
      b.tokensPerRequest.toFixed(0),
      b.callsPerRequest.toFixed(2),
    ]),
  };
}
