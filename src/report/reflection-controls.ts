import path from "node:path";
import { bootstrapMean, bootstrapResamples, bootstrapSeed, itemScores, pairedDifference, scoreOf, type Estimate } from "../eval/paired-bootstrap.js";
import { reflectionModes } from "../loops/reflection-control.js";
import { reflectingStrategies } from "../loops/strategies.js";
import type { ReflectionMode } from "../loops/types.js";
import type { EvalRun, RunFolder } from "../data/run-folder.js";

/**
 * The reflection controls (`reflect eval --reflection model|none|placebo|placebo-other`) side by side: runs that differ only in
 * their reflection mode and their seed (the same task, items, model, strategy, sampling and turns) form one
 * comparison. Per mode: Acc@t1, Acc@tN and Δ = Acc@tN − Acc@t1, each item's score averaged over the mode's seeds, with
 * 95 % bootstrap intervals over items; then Δ(a) − Δ(b) for each pair of modes, paired by item. Δ(model) − Δ(placebo)
 * is what the reflection's content adds over a generic reflection; Δ(placebo) − Δ(none) what a reflection turn of any
 * content adds over a plain second try; Δ(model) − Δ(placebo-other) what this item's own reflection adds over a real
 * reflection of another item, and Δ(placebo-other) − Δ(placebo) what a real reflection of the model's adds over a generic one.
 */
export interface ControlComparison {
  /** What the runs share, in words: task · model · strategy · sampling · turns. */
  condition: string;
  task: string;
  model: string;
  strategy: string;
  turns: number;
  temperature: number;
  modes: ModeFigures[];
  differences: ModeDifference[];
}

export interface ModeFigures {
  mode: ReflectionMode;
  /** The run folders of this mode (one per seed). */
  runs: string[];
  seeds: number[];
  /** Items scored (present in every seed run of the mode). */
  items: number;
  /** Items left out because some seed run lacks them (unfinished runs). */
  dropped: number;
  acc_t1: Estimate | null;
  acc_tN: Estimate | null;
  delta: Estimate | null;
}

/** Δ(a) − Δ(b), and the differences in Acc@t1 and Acc@tN, paired by item over the items both modes scored. */
export interface ModeDifference {
  a: ReflectionMode;
  b: ReflectionMode;
  items: number;
  delta: Estimate | null;
  acc_t1: Estimate | null;
  acc_tN: Estimate | null;
}

/** The pairs reported, in this order, where both modes ran. */
export const modePairs: readonly (readonly [ReflectionMode, ReflectionMode])[] = [
  ["model", "none"],
  ["model", "placebo"],
  ["placebo", "none"],
  ["model", "placebo-other"],
  ["placebo-other", "placebo"],
];

/** The comparisons among `runs`: every group of eval runs with the same condition and at least two reflection modes. */
export function reflectionControls(runs: readonly RunFolder[]): ControlComparison[] {
  const groups = new Map<string, EvalRun[]>();
  for (const run of runs) {
    if (run.kind !== "eval" || !reflectingStrategies.includes(run.strategy)) continue;
    const fingerprint = run.config.fingerprint as Record<string, unknown> | undefined;
    if (fingerprint === undefined) continue;
    // Reflexion's lesson store is a file of each run's own: where it lies is not part of the condition; nor is the
    // donor run of `placebo-other`, which is part of its mode.
    const { seed: _seed, reflection_mode: _mode, memory: _memory, placebo_from: _donors, data, ...condition } = fingerprint;
    // The data file by name, as item ids name it (`items.jsonl:1`): the same items read from another checkout (an
    // absolute path elsewhere) are the same condition.
    const key = JSON.stringify({ ...condition, data: typeof data === "string" ? path.basename(data) : data, strategy: run.strategy });
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const comparisons: ControlComparison[] = [];
  for (const group of groups.values()) {
    const byMode = new Map<ReflectionMode, EvalRun[]>();
    for (const run of group) byMode.set(modeOf(run), [...(byMode.get(modeOf(run)) ?? []), run]);
    if (byMode.size < 2) continue;
    const first = group[0] as EvalRun;
    const scored = new Map([...byMode].map(([mode, rs]) => [mode, itemScores(rs.map((r) => r.episodes), first.turns)]));
    const modes = reflectionModes.filter((m) => byMode.has(m)).map((mode): ModeFigures => {
      const { scores, dropped } = scored.get(mode) as ReturnType<typeof itemScores>;
      const rs = byMode.get(mode) as EvalRun[];
      return {
        mode,
        runs: rs.map((r) => r.dir),
        seeds: rs.map((r) => Number((r.config.fingerprint as Record<string, unknown>).seed)),
        items: scores.size,
        dropped,
        acc_t1: bootstrapMean([...scoreOf(scores, "t1").values()]),
        acc_tN: bootstrapMean([...scoreOf(scores, "tN").values()]),
        delta: bootstrapMean([...scoreOf(scores, "delta").values()]),
      };
    });
    const differences = modePairs
      .filter(([a, b]) => scored.has(a) && scored.has(b))
      .map(([a, b]): ModeDifference => {
        const sa = (scored.get(a) as ReturnType<typeof itemScores>).scores;
        const sb = (scored.get(b) as ReturnType<typeof itemScores>).scores;
        const delta = pairedDifference(scoreOf(sa, "delta"), scoreOf(sb, "delta"));
        return { a, b, items: delta?.n ?? 0, delta, acc_t1: pairedDifference(scoreOf(sa, "t1"), scoreOf(sb, "t1")), acc_tN: pairedDifference(scoreOf(sa, "tN"), scoreOf(sb, "tN")) };
      });
    const temperature = Number(((first.config.fingerprint as Record<string, unknown>).attempt as { temperature?: unknown } | undefined)?.temperature ?? 0);
    comparisons.push({
      condition: `${first.task} · ${first.model} · ${first.strategy} · ${temperature === 0 ? "greedy" : `T=${temperature}`} · ${first.turns} turns`,
      task: first.task,
      model: first.model,
      strategy: first.strategy,
      turns: first.turns,
      temperature,
      modes,
      differences,
    });
  }
  return comparisons;
}

/** A run's reflection mode: its fingerprint's (set when not `model`), else its episodes', else `model`. */
function modeOf(run: EvalRun): ReflectionMode {
  const fingerprint = run.config.fingerprint as Record<string, unknown> | undefined;
  const mode = fingerprint?.reflection_mode ?? run.config.reflection_mode ?? run.episodes[0]?.reflectionMode ?? "model";
  return reflectionModes.includes(mode as ReflectionMode) ? (mode as ReflectionMode) : "model";
}

const points = (x: number, sign: boolean) => {
  const text = (100 * x).toFixed(1).replace(/^-0\.0$/, "0.0");
  return sign && !text.startsWith("-") ? `+${text}` : text;
};

/** `mean [lo, hi]` in points (a difference's mean signed, as bench/sampled-table.mjs prints it), or "n/a". */
export function formatEstimate(e: Estimate | null, sign = false): string {
  return e === null ? "n/a" : `${points(e.mean, sign)} [${points(e.lo, false)}, ${points(e.hi, false)}]`;
}

/** The comparison as two tables of cells (per mode, and the paired differences), for the terminal and the HTML report. */
export function controlTables(c: ControlComparison): { modes: { header: string[]; rows: string[][] }; differences: { header: string[]; rows: string[][] } } {
  const N = c.turns;
  return {
    modes: {
      header: ["reflection", "seeds", "items", "Acc@t1 [95% CI]", `Acc@t${N} [95% CI]`, `Δ = t${N} − t1 [95% CI]`],
      rows: c.modes.map((m) => [m.mode, m.seeds.join(","), m.dropped > 0 ? `${m.items} (${m.dropped} left out)` : String(m.items), formatEstimate(m.acc_t1), formatEstimate(m.acc_tN), formatEstimate(m.delta, true)]),
    },
    differences: {
      header: ["paired by item", "items", "Δ difference [95% CI]", "Acc@t1 difference [95% CI]", `Acc@t${N} difference [95% CI]`],
      rows: c.differences.map((d) => [`Δ(${d.a}) − Δ(${d.b})`, String(d.items), formatEstimate(d.delta, true), formatEstimate(d.acc_t1, true), formatEstimate(d.acc_tN, true)]),
    },
  };
}

/** What the JSON file holds: the comparisons, and how the intervals were made. */
export function controlsJson(comparisons: readonly ControlComparison[]): string {
  return `${JSON.stringify({ method: `items are the unit: each item's score averaged over its seeds; 95% percentile bootstrap over items, ${bootstrapResamples} resamples, seed ${bootstrapSeed}; differences paired by item; figures are shares (0.05 = 5 points)`, comparisons }, null, 2)}\n`;
}
