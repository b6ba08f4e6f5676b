/**
 * A gateway record by arm (`reflect serve --lora/--canary`): per arm, the first-draft and final pass rates with Wilson
 * 95 % intervals, reflections, calls and tokens per request with the report's bootstrap intervals, and the median
 * latency with an order-statistic interval; where one request ran on both arms (`reflect replay --arm` twice, or a
 * replay beside its original), the paired differences adapter − base over those requests.
 */
import type { Estimate } from "../eval/bootstrap.js";
import { meanEstimate, wilsonInterval, type MeanEstimate, type RateEstimate } from "../eval/estimate.js";
import { pairedDifference } from "../eval/paired-bootstrap.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import { attemptPassed } from "../loops/answer-decision.js";
import type { Episode } from "../loops/types.js";
import type { RunFolder } from "../data/run-folder.js";
import { LOCAL_TENANT } from "../core/tenant.js";

export type ArmLabel = "base" | "adapter";
const ARMS: readonly ArmLabel[] = ["base", "adapter"];

export interface ArmRow {
  arm: ArmLabel;
  /** Episodes of the arm. */
  requests: number;
  /** Among episodes with at least one attempt: the first draft passed its checks; the returned attempt did (`attemptPassed`, a judge's check included: what the client was told; unjudged counts as not passed, as in the metrics). */
  firstPass: RateEstimate;
  finalPass: RateEstimate;
  reflectionsPerRequest: MeanEstimate;
  callsPerRequest: MeanEstimate;
  tokensPerRequest: MeanEstimate;
  /** Median of the episodes' `ms`, with a distribution-free 95 % interval (null when too few episodes give one). */
  p50Ms: number;
  p50Ci95: [number, number] | null;
}

/** Adapter − base over requests both arms answered, each a mean of per-request differences with its bootstrap interval. */
export interface ArmPairs {
  pairs: number;
  firstPass: Estimate;
  finalPass: Estimate;
  reflections: Estimate;
  calls: Estimate;
  tokens: Estimate;
  ms: Estimate;
}

export interface ArmReport {
  rows: ArmRow[];
  paired: ArmPairs | null;
  /**
   * Replays whose `replayOf` names an episode of this record recorded for another tenant: never paired (a pairing is
   * looked up under the tenant and the id), counted so the report says so. Their rows still count on their arm.
   */
  unpairedOtherTenant: number;
}

interface Figures {
  attempted: boolean;
  first: number;
  final: number;
  reflections: number;
  calls: number;
  tokens: number;
  ms: number;
}

function figures(e: Episode): Figures {
  const first = e.attempts[0];
  return {
    attempted: first !== undefined,
    first: attemptPassed(first) === true ? 1 : 0,
    final: attemptPassed(selectedAttempt(e)) === true ? 1 : 0,
    reflections: e.usageByRole?.reflection?.calls ?? 0,
    calls: e.usage.calls,
    tokens: e.usage.promptTokens + e.usage.completionTokens,
    ms: e.ms,
  };
}

function rate(k: number, n: number): RateEstimate {
  return { available: true, n, k, value: n === 0 ? 0 : k / n, ci95: wilsonInterval(k, n) };
}

/**
 * The median of `values` and the distribution-free 95 % interval between the order statistics of ranks
 * ⌊n/2 − 0.98√n⌋ and ⌈n/2 + 1 + 0.98√n⌉ (1-based; the normal approximation to the binomial(n, ½), Conover,
 * Practical Nonparametric Statistics, 3.2); null below 6 values, where those ranks fall outside the sample.
 * A median is no mean, so the report's bootstrap of means does not apply.
 */
export function medianInterval(values: readonly number[]): { median: number; ci95: [number, number] | null } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) throw new RangeError("medianInterval needs at least one value");
  const median = n % 2 === 1 ? (sorted[(n - 1) / 2] as number) : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2;
  const lo = Math.floor(n / 2 - 0.98 * Math.sqrt(n));
  const hi = Math.ceil(n / 2 + 1 + 0.98 * Math.sqrt(n));
  return { median, ci95: lo < 1 || hi > n ? null : [sorted[lo - 1] as number, sorted[hi - 1] as number] };
}

/** Which arm an episode ran on; `base` for a gateway episode that names none (a gateway without arms runs only the base). */
const armOf = (e: Episode): ArmLabel => (e.arm === "adapter" ? "adapter" : "base");

/** The tenant an episode was recorded for; `local` for one written before tenants. */
const tenantOf = (e: Episode): string => e.tenant ?? LOCAL_TENANT;

/**
 * The key an episode pairs under: its tenant and the request it answers — a replay's `replayOf`, else its own id (an
 * original a replay repeats). Null for a replay whose `replayOf` names an episode recorded here for another tenant
 * only: `x-reflect-replay-of` is honoured for the sender's own episodes, so it pairs with nothing.
 */
function pairKey(e: Episode, tenantsById: ReadonlyMap<string, ReadonlySet<string>>): string | null {
  const tenant = tenantOf(e);
  if (e.replayOf !== undefined) {
    const owners = tenantsById.get(e.replayOf);
    if (owners !== undefined && !owners.has(tenant)) return null;
  }
  return JSON.stringify([tenant, e.replayOf ?? e.id]);
}

/**
 * The record's episodes by arm; null when no episode names an arm. Episodes pair by tenant and the request they answer
 * (`pairKey`); the first episode of each arm per request counts.
 */
export function armReport(episodes: readonly Episode[]): ArmReport | null {
  if (!episodes.some((e) => e.arm !== undefined)) return null;
  const rows: ArmRow[] = [];
  for (const arm of ARMS) {
    const mine = episodes.filter((e) => armOf(e) === arm).map(figures);
    if (mine.length === 0) continue;
    const attempted = mine.filter((f) => f.attempted);
    const latency = medianInterval(mine.map((f) => f.ms));
    rows.push({
      arm,
      requests: mine.length,
      firstPass: rate(attempted.reduce((s, f) => s + f.first, 0), attempted.length),
      finalPass: rate(attempted.reduce((s, f) => s + f.final, 0), attempted.length),
      reflectionsPerRequest: meanEstimate(mine.map((f) => f.reflections)),
      callsPerRequest: meanEstimate(mine.map((f) => f.calls)),
      tokensPerRequest: meanEstimate(mine.map((f) => f.tokens)),
      p50Ms: latency.median,
      p50Ci95: latency.ci95,
    });
  }
  const tenantsById = new Map<string, Set<string>>();
  for (const e of episodes) tenantsById.set(e.id, (tenantsById.get(e.id) ?? new Set()).add(tenantOf(e)));
  const byRequest = new Map<string, Partial<Record<ArmLabel, Figures>>>();
  let unpairedOtherTenant = 0;
  for (const e of episodes) {
    const key = pairKey(e, tenantsById);
    if (key === null) {
      unpairedOtherTenant++;
      continue;
    }
    const entry = byRequest.get(key) ?? {};
    entry[armOf(e)] ??= figures(e);
    byRequest.set(key, entry);
  }
  const both = [...byRequest].filter(([, v]) => v.base !== undefined && v.adapter !== undefined) as Array<[string, Record<ArmLabel, Figures>]>;
  if (both.length === 0) return { rows, paired: null, unpairedOtherTenant };
  const side = (arm: ArmLabel, field: keyof Omit<Figures, "attempted">) => new Map(both.map(([k, v]) => [k, v[arm][field]]));
  const diff = (field: keyof Omit<Figures, "attempted">) => pairedDifference(side("adapter", field), side("base", field)) as Estimate;
  return { rows, paired: { pairs: both.length, firstPass: diff("first"), finalPass: diff("final"), reflections: diff("reflections"), calls: diff("calls"), tokens: diff("tokens"), ms: diff("ms") }, unpairedOtherTenant };
}

/** A record's arm report; null for `reflect eval` and data runs, and for records whose episodes name no arm. */
export function recordArmReport(run: RunFolder): ArmReport | null {
  return run.kind === "eval" && run.config.record_format !== undefined ? armReport(run.episodes) : null;
}

const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
const num = (v: number, digits: number) => v.toFixed(digits);
const meanCell = (m: MeanEstimate, digits: number) => `${num(m.value, digits)}${m.ci95 === null ? "" : ` [${num(m.ci95[0], digits)}, ${num(m.ci95[1], digits)}]`}`;
const signed = (v: number, digits: number) => `${v >= 0 ? "+" : ""}${v.toFixed(digits)}`;
const diffCell = (d: Estimate, scale: number, digits: number) => `${signed(scale * d.mean, digits)} [${signed(scale * d.lo, digits)}, ${signed(scale * d.hi, digits)}]`;

/** The sentence under the arm tables when replays named another tenant's episodes; null when none did. */
export function unpairedNote(report: ArmReport): string | null {
  const n = report.unpairedOtherTenant;
  return n === 0 ? null : `${n} replay${n === 1 ? "" : "s"} named another tenant's episode (x-reflect-replay-of) and ${n === 1 ? "was" : "were"} left unpaired`;
}

/** The cells of the arm table and of the paired table, shared by the printed report and the HTML one. */
export function armCells(report: ArmReport): { header: string[]; rows: string[][]; paired: { header: string[]; rows: string[][] } | null; note: string | null } {
  return {
    note: unpairedNote(report),
    header: ["arm", "requests", "first draft pass [95% CI]", "final pass [95% CI]", "reflections / request", "calls / request", "tokens / request", "p50 latency ms [95% CI]"],
    rows: report.rows.map((r) => [
      r.arm,
      String(r.requests),
      `${pct(r.firstPass.value)} [${pct(r.firstPass.ci95[0])}, ${pct(r.firstPass.ci95[1])}] (${r.firstPass.k}/${r.firstPass.n})`,
      `${pct(r.finalPass.value)} [${pct(r.finalPass.ci95[0])}, ${pct(r.finalPass.ci95[1])}] (${r.finalPass.k}/${r.finalPass.n})`,
      meanCell(r.reflectionsPerRequest, 2),
      meanCell(r.callsPerRequest, 2),
      meanCell(r.tokensPerRequest, 0),
      `${num(r.p50Ms, 0)}${r.p50Ci95 === null ? "" : ` [${num(r.p50Ci95[0], 0)}, ${num(r.p50Ci95[1], 0)}]`}`,
    ]),
    paired:
      report.paired === null
        ? null
        : {
            header: ["adapter − base, paired", "requests", "first draft pass (points)", "final pass (points)", "reflections", "calls", "tokens", "latency ms"],
            rows: [["mean [95% CI]", String(report.paired.pairs), diffCell(report.paired.firstPass, 100, 1), diffCell(report.paired.finalPass, 100, 1), diffCell(report.paired.reflections, 1, 2), diffCell(report.paired.calls, 1, 2), diffCell(report.paired.tokens, 1, 0), diffCell(report.paired.ms, 1, 0)]],
          },
  };
}
