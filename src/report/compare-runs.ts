import path from "node:path";
import { UsageError } from "../errors.js";
import type { EvalRun, RunFolder } from "../data/run-folder.js";
import { unfinished } from "../data/run-folder.js";
import { attemptVote, type AttemptVote, type VoteScope } from "../eval/attempt-vote.js";
import { correctAfter } from "../eval/metrics.js";
import { bootstrapResamples, bootstrapSeed, pairedDifference, type Estimate } from "../eval/paired-bootstrap.js";
import { oracleInLoop, protocolOfConfig, type RunProtocol } from "../eval/protocol.js";
import { formatEstimate } from "./reflection-controls.js";

/**
 * Runs of one task, items and model side by side at the compute each spent (`reflect compare`): a reflective loop
 * against its baselines — the resampling baseline (`--reflection resample`, best-of-k by the feedback), the controls
 * (`none`, `placebo`), another strategy. The literature asks for baselines at equal compute ("Are retrials all you
 * need?"): each row says what it spent (model calls and tokens per episode), and the notes say when the calls differ
 * by more than 10 %. Final accuracy is compared with the first run's item by item.
 */
export interface RunComparison {
  task: string;
  model: string;
  /** The items the runs were started on (the fingerprint's count). */
  items: number | null;
  runs: ComparedRun[];
  /** What the table's figures mean, and what a reader must know of the runs (equal compute, the oracle, pass@k). */
  notes: string[];
}

export interface ComparedRun {
  label: string;
  dir: string;
  strategy: string;
  /** The reflection mode (`model`, `none`, `placebo`, `resample`); `—` for the strategies without one. */
  reflection: string;
  protocol: RunProtocol;
  oracleInLoop: boolean;
  /** Episodes in the run. */
  n: number;
  turns: number;
  accT1: number;
  /** Acc@t`turns`: the answer the loop returned. */
  final: number;
  /** Wilson 95 % interval of `final`. */
  finalCi95: [number, number];
  callsPerEpisode: number;
  /** Prompt and completion tokens per episode. */
  tokensPerEpisode: number;
  /** Set for every run after the first: final accuracy against the first run's, over the items both ran. */
  vsFirst: PairedAgainstFirst | null;
  /** Solved at any turn: for a resample run pass@k by the scorer, an oracle figure (never the run's answer). */
  solvedAny: number;
  /** A resample run's majority vote over each episode's attempts, when the caller gave the task's vote scope. */
  vote?: AttemptVote;
}

export interface PairedAgainstFirst {
  /** Items both runs have. */
  items: number;
  /** Mean over those items of this run's final correctness minus the first run's, with its paired bootstrap interval. */
  difference: Estimate | null;
  /** Items the first run's final answer got right and this run's got wrong. */
  rightToWrong: number;
  wrongToRight: number;
}

/** How far calls per episode may differ from the first run's before the runs are not at equal compute. */
export const equalComputeTolerance = 0.1;

/**
 * The comparison of `runs`, the first as the baseline. Refused (a UsageError naming the runs) unless every run is a
 * `reflect eval` folder of the same task, model and items: the same item count, the same records under shared ids
 * (generated items differ by seed), at least one item in common with the first.
 */
export function compareRuns(runs: readonly RunFolder[], options: { vote?: VoteScope } = {}): RunComparison {
  if (runs.length < 2) throw new UsageError("reflect compare takes two or more run folders (the first is the baseline)");
  const evals = runs.map((run): EvalRun => {
    if (run.kind !== "eval") throw new UsageError(`${run.dir} is a \`reflect data generate\` folder; reflect compare takes \`reflect eval\` run folders`);
    return run;
  });
  const first = evals[0] as EvalRun;
  for (const run of evals.slice(1)) checkComparable(first, run);
  const finalOf = (run: EvalRun) => new Map(run.episodes.map((e) => [e.id, correctAfter(e, run.turns) ? 1 : 0]));
  const baseline = finalOf(first);
  const compared = evals.map((run, index): ComparedRun => {
    const { summary } = run;
    const protocol = protocolOfConfig(run.config);
    const finals = finalOf(run);
    const shared = [...finals.keys()].filter((id) => baseline.has(id));
    const tokens = summary.tokens.prompt + summary.tokens.completion;
    const reflection = reflectionOf(run);
    return {
      label: run.label,
      dir: run.dir,
      strategy: run.strategy,
      reflection,
      protocol,
      oracleInLoop: oracleInLoop(protocol),
      n: summary.n,
      turns: run.turns,
      accT1: summary.accuracy[0] ?? 0,
      final: summary.accuracy.at(-1) ?? 0,
      finalCi95: summary.accuracy_ci95.at(-1) ?? [0, 0],
      callsPerEpisode: summary.model_calls_per_episode,
      tokensPerEpisode: summary.n === 0 ? 0 : tokens / summary.n,
      vsFirst:
        index === 0
          ? null
          : {
              items: shared.length,
              difference: pairedDifference(finals, baseline),
              rightToWrong: shared.filter((id) => baseline.get(id) === 1 && finals.get(id) === 0).length,
              wrongToRight: shared.filter((id) => baseline.get(id) === 0 && finals.get(id) === 1).length,
            },
      solvedAny: summary.solved_any,
      ...(reflection === "resample" && options.vote !== undefined ? { vote: attemptVote(run.episodes, options.vote) } : {}),
    };
  });
  return { task: first.task, model: first.model, items: first.plannedItems, runs: compared, notes: comparisonNotes(evals, compared) };
}

/** Refuses a run of another task, model or item set than the first, naming both. */
function checkComparable(first: EvalRun, run: EvalRun): void {
  const differ = (what: string, a: unknown, b: unknown) => {
    throw new UsageError(`reflect compare: ${first.label} and ${run.label} differ in ${what} (${JSON.stringify(a)} and ${JSON.stringify(b)}); compare runs of one task, one item set and one model`);
  };
  if (first.task !== run.task) differ("task", first.task, run.task);
  if (first.model !== run.model) differ("model", first.model, run.model);
  const fa = fingerprintOf(first);
  const fb = fingerprintOf(run);
  if (fa.mode !== undefined && fb.mode !== undefined && fa.mode !== fb.mode) differ("task mode", fa.mode, fb.mode);
  const da = dataName(fa.data);
  const db = dataName(fb.data);
  if (da !== db) differ("data file", da, db);
  if (first.plannedItems !== null && run.plannedItems !== null && first.plannedItems !== run.plannedItems) differ("item count", first.plannedItems, run.plannedItems);
  const records = new Map(first.episodes.map((e) => [e.id, JSON.stringify(e.record)]));
  let shared = 0;
  for (const episode of run.episodes) {
    const record = records.get(episode.id);
    if (record === undefined) continue;
    shared++;
    if (record !== JSON.stringify(episode.record)) differ(`item ${episode.id}`, JSON.parse(record), episode.record);
  }
  if (shared === 0 && first.episodes.length > 0 && run.episodes.length > 0) throw new UsageError(`reflect compare: ${first.label} and ${run.label} share no item; compare runs of one item set`);
}

function fingerprintOf(run: EvalRun): Record<string, unknown> {
  return (run.config.fingerprint ?? {}) as Record<string, unknown>;
}

/** The data file by name (item ids name it so): the same items read from another checkout are the same items. */
function dataName(data: unknown): string | null {
  return typeof data === "string" ? path.basename(data) : null;
}

/** A run's reflection mode: its fingerprint's, its config's, its episodes', else `model`; `—` for debate and alternatives. */
function reflectionOf(run: EvalRun): string {
  if (run.strategy === "debate" || run.strategy === "alternatives") return "—";
  const mode = fingerprintOf(run).reflection_mode ?? run.config.reflection_mode ?? run.episodes[0]?.reflectionMode ?? "model";
  return typeof mode === "string" ? mode : "model";
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const points = (x: number) => (100 * x).toFixed(1);

function comparisonNotes(runs: readonly EvalRun[], compared: readonly ComparedRun[]): string[] {
  const notes = [
    `Acc@t1 and final: shares of each run's episodes; final is the answer the loop returned after its last turn, with a Wilson 95% interval. Δ: final correctness minus ${compared[0]?.label}'s, paired by item over the items both ran (95% percentile bootstrap over items, ${bootstrapResamples} resamples, seed ${bootstrapSeed}); flips count those items.`,
  ];
  const base = compared[0] as ComparedRun;
  const apart = compared.slice(1).filter((c) => base.callsPerEpisode > 0 && Math.abs(c.callsPerEpisode / base.callsPerEpisode - 1) > equalComputeTolerance);
  if (apart.length > 0) {
    const each = apart.map((c) => `${c.label} ${c.callsPerEpisode.toFixed(2)} (${signedPercent(c.callsPerEpisode / base.callsPerEpisode - 1)})`).join(", ");
    notes.push(`NOT EQUAL COMPUTE: calls per episode differ from ${base.label}'s ${base.callsPerEpisode.toFixed(2)} by more than ${100 * equalComputeTolerance}%: ${each}.`);
  }
  const oracle = compared.filter((c) => c.oracleInLoop);
  if (oracle.length > 0) notes.push(`ORACLE IN THE LOOP for ${oracle.map((c) => c.label).join(", ")}: the scorer's verdict told the model, stopped the loop or chose the answer kept, so accuracy after turn 1 is what the model does with the truth (for a resample run, best-of-k by the truth), not self-correction.`);
  for (const c of compared) {
    if (c.reflection !== "resample") continue;
    const vote = c.vote === undefined ? "" : c.vote.applicable ? `; majority vote over its attempts ${pct(c.vote.accuracy)} [${points(c.vote.ci95[0])}, ${points(c.vote.ci95[1])}] (${c.vote.answered} of ${c.vote.n} episodes with an answer)` : `; majority vote ${c.vote.reason}`;
    notes.push(`${c.label} resamples: attempts after the first are fresh samples shown no feedback, and its final is best-of-k selected by the feedback (${c.protocol.feedback}); solved at any turn, pass@k by the scorer (an oracle figure, not its answer accuracy), ${pct(c.solvedAny)}${vote}.`);
  }
  for (const run of runs) {
    const short = unfinished(run);
    if (short !== null) notes.push(`${run.label} is unfinished: ${short.done} of ${short.planned} episodes; its paired figures use the items it ran.`);
  }
  return notes;
}

function signedPercent(x: number): string {
  const text = `${Math.round(100 * x)}%`;
  return x >= 0 ? `+${text}` : text.replace("-", "−");
}

/** The comparison as one table of cells, a row per run, for the terminal. */
export function comparisonCells(c: RunComparison): { header: string[]; rows: string[][] } {
  return {
    header: ["run", "strategy", "reflection", "feedback", "oracle in loop", "episodes", "Acc@t1", "final [95% Wilson]", "calls/ep", "tokens/ep", "Δ final vs first, points [95% CI]", "right→wrong vs first", "wrong→right vs first"],
    rows: c.runs.map((r) => [
      r.label,
      r.strategy,
      r.reflection,
      r.protocol.resample === true ? `${r.protocol.feedback} (not shown)` : r.protocol.feedback,
      r.oracleInLoop ? "YES" : "no",
      String(r.n),
      pct(r.accT1),
      `${pct(r.final)} [${points(r.finalCi95[0])}, ${points(r.finalCi95[1])}]`,
      r.callsPerEpisode.toFixed(2),
      r.tokensPerEpisode.toFixed(1),
      r.vsFirst === null ? "(baseline)" : `${formatEstimate(r.vsFirst.difference, true)} n=${r.vsFirst.items}`,
      r.vsFirst === null ? "—" : String(r.vsFirst.rightToWrong),
      r.vsFirst === null ? "—" : String(r.vsFirst.wrongToRight),
    ]),
  };
}
