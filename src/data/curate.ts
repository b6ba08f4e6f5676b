import { mkdir } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { InputError, UsageError } from "../errors.js";
import { jsonlText, writeFileWhole } from "../record/log.js";
import { Budget } from "../loops/budget.js";
import { replyText } from "../loops/conversation.js";
import type { ModelCall } from "../loops/types.js";
import type { ChatMessage, LanguageModel, SamplingParams } from "../models/language-model.js";
import { noopTracer } from "../telemetry/tracer.js";
import { hash32 } from "../util/hash.js";
import { mulberry32 } from "../util/random.js";
import { instructionEfficacy, type InstructionEfficacy } from "./efficacy.js";
import { readGenerationFolder, type GenerationConfig } from "./generation-folder.js";
import type { ReflectionInstruction } from "./instructions.js";
import { compareReflections, type Preference } from "./preference-judge.js";
import { dPlusKey, reflectionStatistics, type TaskStatistics } from "./stats.js";
import type { ReflectionDataItem } from "./types.js";

export type Split = "train" | "test";
export const curatedSets = ["d_plus", "d_pm", "d_pref", "distill"] as const;
export type CuratedSet = (typeof curatedSets)[number];

/** The first attempt of an item, which every row made from the item repeats. */
export interface AttemptContext {
  split: Split;
  /** The task item's id: all rows of an item share it, and its split. */
  id: string;
  task: string;
  model: string;
  /** The prompt of the first answer, as the model saw it (the task's prompt and the thought request). */
  question: ChatMessage[];
  /** The first answer as the reflection's conversation holds it: its text, then its tool calls (`replyText`). */
  first_answer: string;
  /** What the model was told about its wrong first answer. */
  feedback: string;
}

/** One reflection on the first answer and the retry it led to. */
export interface ReflectionTurn {
  instruction: { id: string; text: string };
  /** 0-based, among the samples of this instruction. */
  sample: number;
  /** The user message that asked for the reflection: the feedback, then the instruction. */
  reflection_request: string;
  reflection: string;
  /** The user message that asked for the retry. */
  retry_request: string;
  second_answer: string;
  /** The verifier's verdict on the second answer; null: it could not judge. */
  second_correct: boolean | null;
}

/** A row of D+: a reflection whose retry was judged correct, with everything before it. */
export type DPlusRow = AttemptContext & ReflectionTurn;

/** A row of D±: on the same item and first answer, a reflection whose retry was correct (chosen) and one whose retry was wrong (rejected). */
export interface PairRow extends AttemptContext {
  chosen: ReflectionTurn;
  rejected: ReflectionTurn;
}

/** A row of D_pref: two reflections on the same item, ordered by a judge that preferred the same one in both orders. */
export interface PreferenceRow extends PairRow {
  judge: { model: string; reasons: [string, string] };
}

/** A D+ row as a triple for single-pass training: the draft (first answer), the critique (reflection), the refined (corrected) answer. */
export interface DistillRow extends Omit<AttemptContext, "first_answer"> {
  instruction: { id: string; text: string };
  sample: number;
  draft: string;
  critique: string;
  refined: string;
}

export interface CurateReflectionDataOptions {
  /** A `reflect data generate` folder: `samples.jsonl` and `config.json`. */
  inDir: string;
  /** Where the sets go: `d_plus.jsonl`, `d_pm.jsonl`, `d_pref.jsonl` (with a judge), `distill.jsonl`, `curation.json` (and `judge.jsonl`). */
  outDir: string;
  /** Share of the items in the test split. Default 0.1. */
  testShare?: number;
  /** Seeds the split and the choice of pairs. Default 0. */
  seed?: number;
  /** At most this many D± pairs, and D_pref comparisons, per item. Default 4. */
  maxPairsPerItem?: number;
  /** A judge model: D_pref is made only with one. */
  judge?: LanguageModel;
  judgeSampling?: Omit<SamplingParams, "seed">;
  /** Judge calls in flight. Default: the judge's `maxConcurrency`. */
  concurrency?: number;
  /** More of the resolved configuration for `curation.json` (the CLI's flags). */
  config?: Record<string, unknown>;
  signal?: AbortSignal;
  now?: () => number;
}

/** `curation.json`. */
export interface CurationReport {
  source: string;
  options: { test_share: number; seed: number; max_pairs_per_item: number; judge_model: string | null };
  /** Items read, items with a wrong first answer and reflections, and those in each split. */
  items: { total: number; reflected: number; train: number; test: number };
  /** Rows per set and split; d_pref only with a judge. */
  counts: Partial<Record<CuratedSet, Record<Split, number>>>;
  /**
   * Dropped as duplicates: d_plus, rows with the same item, reflection and second answer as an earlier one; d_pm,
   * identical pairs (same item, instructions and reflection texts); d_pref, reflections whose text repeats an earlier
   * one of the same item (never compared twice).
   */
  duplicates_dropped: { d_plus: number; d_pm: number; d_pref: number };
  /** Candidate D± pairs whose two reflections are the same text (the retries differed): no preference to learn. */
  same_reflection_pairs_dropped: number;
  judge: JudgeAgreement | null;
  statistics: TaskStatistics[];
  efficacy: InstructionEfficacy[];
  /** The instructions the reflections were written under, in order of first use. */
  instructions: { id: string; text: string }[];
  /** The generation folder's `config.json`. */
  generation: GenerationConfig;
  config: Record<string, unknown>;
}

export interface JudgeAgreement {
  model: string;
  /** Pairs asked in both orders. */
  pairs_compared: number;
  /** Both orders named the same reflection: the pair is kept. */
  agreed: number;
  /** The orders named different reflections (position bias): dropped. */
  disagreed: number;
  /** A reply could not be read: dropped. */
  unreadable: number;
  /** `agreed / (agreed + disagreed)`, or null. */
  agreement: number | null;
  /** Of the readable replies, the share that chose the reflection shown first. */
  first_position_share: number | null;
}

export interface CurationResult {
  report: CurationReport;
  sets: { d_plus: DPlusRow[]; d_pm: PairRow[]; d_pref?: PreferenceRow[]; distill: DistillRow[] };
}

/**
 * ReflectEvo's data curation (Li et al. 2025) over a generation folder: D+ (reflections whose retry the verifier
 * judged correct), D± (on the same item, a reflection whose retry was correct against one whose retry was wrong) and,
 * with a judge, D_pref (two reflections on the same item ordered by the judge, kept only when it prefers the same one
 * in both orders); and from D+ the distilled triples (draft, critique, refined) for single-pass training.
 *
 * Every row carries its split, drawn from a hash of the item id and the seed, so all rows of an item fall in the same
 * split and no question is in both. Duplicates are kept once (see `CurationReport.duplicates_dropped`). Of an item's
 * candidate pairs at most `maxPairsPerItem` are kept, those written under one instruction first (their prompts are the
 * same), then in an order drawn from the seed.
 *
 * Departures from the paper: D_pref's judge is any model (the paper asks GPT-4o) and is checked for position bias;
 * an unjudged retry (verifier "cannot judge") is in neither D+ nor a D± pair.
 */
export async function curateReflectionData(options: CurateReflectionDataOptions): Promise<CurationResult> {
  const testShare = options.testShare ?? 0.1;
  const seed = options.seed ?? 0;
  const maxPairs = options.maxPairsPerItem ?? 4;
  if (!(testShare >= 0 && testShare <= 1)) throw new UsageError(`the test share must be between 0 and 1, got ${testShare}`);
  if (!Number.isInteger(maxPairs) || maxPairs < 1) throw new UsageError(`pairs per item must be a positive integer, got ${maxPairs}`);
  const folder = await readGenerationFolder(options.inDir);
  const items = folder.items.map(({ item }) => item);
  const dPlus: DPlusRow[] = [];
  const dPm: PairRow[] = [];
  const duplicates = { d_plus: 0, d_pm: 0, d_pref: 0 };
  let sameReflection = 0;
  const used = new Map<string, { id: string; text: string }>();
  const judgeWork: { context: AttemptContext; x: ReflectionTurn; y: ReflectionTurn }[] = [];
  const splits = { train: 0, test: 0 };
  let reflected = 0;

  for (const { item, line } of folder.items) {
    const turns = itemTurns(item, folder.instructions, folder.samplesFile, line);
    if (turns.length === 0) continue;
    reflected++;
    const first = item.first as NonNullable<ReflectionDataItem["first"]>;
    const context: AttemptContext = { split: splitOf(item.id, seed, testShare), id: item.id, task: item.task, model: item.model, question: first.call.messages, first_answer: replyText(first.call), feedback: item.feedbackShown ?? "" };
    splits[context.split]++;
    for (const turn of turns) if (!used.has(turn.instruction.id)) used.set(turn.instruction.id, turn.instruction);

    const right = unique(turns.filter((t) => t.second_correct === true), (t) => dPlusKey(item.id, t.reflection, t.second_answer));
    const wrong = unique(turns.filter((t) => t.second_correct === false), (t) => dPlusKey(item.id, t.reflection, t.second_answer));
    duplicates.d_plus += right.dropped;
    for (const turn of right.kept) dPlus.push({ ...context, ...turn });

    const candidates = right.kept.flatMap((chosen) => wrong.kept.map((rejected) => ({ chosen, rejected })));
    const distinct = candidates.filter(({ chosen, rejected }) => chosen.reflection !== rejected.reflection);
    sameReflection += candidates.length - distinct.length;
    const pairs = unique(distinct, ({ chosen, rejected }) => JSON.stringify([chosen.instruction.id, chosen.reflection, rejected.instruction.id, rejected.reflection]));
    duplicates.d_pm += pairs.dropped;
    for (const pair of firstPairs(pairs.kept, maxPairs, seed, item.id)) dPm.push({ ...context, ...pair });

    if (options.judge !== undefined) {
      const reflections = unique(turns, (t) => t.reflection);
      duplicates.d_pref += reflections.dropped;
      const unordered = reflections.kept.flatMap((x, i) => reflections.kept.slice(i + 1).map((y) => ({ chosen: x, rejected: y })));
      for (const { chosen, rejected } of firstPairs(unordered, maxPairs, seed, item.id)) judgeWork.push({ context, x: chosen, y: rejected });
    }
  }

  const distill = dPlus.map((r): DistillRow => ({ split: r.split, id: r.id, task: r.task, model: r.model, question: r.question, feedback: r.feedback, instruction: r.instruction, sample: r.sample, draft: r.first_answer, critique: r.reflection, refined: r.second_answer }));
  const judged = options.judge === undefined ? undefined : await judgePairs(options.judge, judgeWork, { ...options, seed });
  const sets = { d_plus: dPlus, d_pm: dPm, ...(judged === undefined ? {} : { d_pref: judged.rows }), distill };
  const report: CurationReport = {
    source: path.resolve(options.inDir),
    options: { test_share: testShare, seed, max_pairs_per_item: maxPairs, judge_model: options.judge?.modelId ?? null },
    items: { total: items.length, reflected, ...splits },
    counts: Object.fromEntries(Object.entries(sets).map(([name, rows]) => [name, countSplits(rows)])),
    duplicates_dropped: duplicates,
    same_reflection_pairs_dropped: sameReflection,
    judge: judged?.agreement ?? null,
    statistics: reflectionStatistics(items),
    efficacy: instructionEfficacy(items),
    instructions: [...used.values()],
    generation: folder.config,
    config: options.config ?? {},
  };
  await mkdir(options.outDir, { recursive: true });
  for (const [name, rows] of Object.entries(sets)) await writeFileWhole(path.join(options.outDir, `${name}.jsonl`), jsonlText(rows));
  if (judged !== undefined) await writeFileWhole(path.join(options.outDir, "judge.jsonl"), jsonlText(judged.log));
  await writeFileWhole(path.join(options.outDir, "curation.json"), `${JSON.stringify(report, null, 2)}\n`);
  return { report, sets };
}

/** The split of an item: a draw from a hash of the seed and the item id, so every row of the item lands in it. */
export function splitOf(itemId: string, seed: number, testShare: number): Split {
  return mulberry32(hash32(JSON.stringify([seed, itemId, "split"])))() < testShare ? "test" : "train";
}

/** The item's reflections whose retry was made, as turns; a wrong first answer without its feedback is damaged input. */
function itemTurns(item: ReflectionDataItem, instructions: ReadonlyMap<string, ReflectionInstruction>, file: string, line: number): ReflectionTurn[] {
  const retried = item.reflections.filter((s) => s.retry !== undefined && s.verdict !== undefined);
  if (retried.length === 0) return [];
  if (item.first?.verdict.correct !== false || item.feedbackShown === undefined) throw new InputError("reflections on an item without a wrong first answer and the feedback shown", file, line);
  return retried.map((s) => ({
    // readGenerationFolder has checked that every instruction id is known.
    instruction: { id: s.instruction, text: instructions.get(s.instruction)?.text ?? "" },
    sample: s.sample,
    reflection_request: s.reflection.messages.at(-1)?.content ?? "",
    reflection: s.reflection.output,
    retry_request: s.retry?.messages.at(-1)?.content ?? "",
    second_answer: s.retry?.output ?? "",
    second_correct: s.verdict?.correct ?? null,
  }));
}

function unique<T>(values: readonly T[], key: (value: T) => string): { kept: T[]; dropped: number } {
  const seen = new Set<string>();
  const kept: T[] = [];
  for (const value of values) {
    const k = key(value);
    if (seen.has(k)) continue;
    seen.add(k);
    kept.push(value);
  }
  return { kept, dropped: values.length - kept.length };
}

/** At most `n` pairs: those written under one instruction first (their prompts are the same), then in a seeded order. */
function firstPairs<P extends { chosen: ReflectionTurn; rejected: ReflectionTurn }>(pairs: readonly P[], n: number, seed: number, itemId: string): P[] {
  const rank = (p: P) => [p.chosen.instruction.id === p.rejected.instruction.id ? 0 : 1, hash32(JSON.stringify([seed, itemId, p.chosen.instruction.id, p.chosen.sample, p.rejected.instruction.id, p.rejected.sample]))] as const;
  return pairs
    .map((pair) => ({ pair, rank: rank(pair) }))
    .sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1])
    .slice(0, n)
    .map(({ pair }) => pair);
}

interface JudgeLogLine {
  id: string;
  split: Split;
  x: { instruction: string; sample: number };
  y: { instruction: string; sample: number };
  verdicts: [Preference | null, Preference | null];
  preferred: "x" | "y" | null;
  calls: [ModelCall, ModelCall];
}

async function judgePairs(
  judge: LanguageModel,
  work: readonly { context: AttemptContext; x: ReflectionTurn; y: ReflectionTurn }[],
  options: Pick<CurateReflectionDataOptions, "judgeSampling" | "concurrency" | "signal" | "now"> & { seed: number },
): Promise<{ rows: PreferenceRow[]; log: JudgeLogLine[]; agreement: JudgeAgreement }> {
  const now = options.now ?? performance.now.bind(performance);
  const scope = { budget: new Budget({}, { now }), tracer: noopTracer, signal: options.signal, now };
  const limit = pLimit(Math.max(1, options.concurrency ?? judge.maxConcurrency));
  const log = await Promise.all(
    work.map(({ context, x, y }) =>
      limit(async (): Promise<JudgeLogLine> => {
        const comparison = await compareReflections(judge, scope, context, x.reflection, y.reflection, { seed: options.seed, ...(options.judgeSampling === undefined ? {} : { sampling: options.judgeSampling }) });
        const place = (t: ReflectionTurn) => ({ instruction: t.instruction.id, sample: t.sample });
        return { id: context.id, split: context.split, x: place(x), y: place(y), ...comparison };
      }),
    ),
  );
  const rows = work.flatMap(({ context, x, y }, i): PreferenceRow[] => {
    const { preferred, verdicts } = log[i] as JudgeLogLine;
    if (preferred === null) return [];
    const [chosen, rejected] = preferred === "x" ? [x, y] : [y, x];
    return [{ ...context, chosen, rejected, judge: { model: judge.modelId, reasons: [verdicts[0]?.reason ?? "", verdicts[1]?.reason ?? ""] } }];
  });
  const readable = log.flatMap((l) => l.verdicts).filter((v): v is Preference => v !== null);
  const unreadable = log.filter((l) => l.verdicts.includes(null)).length;
  const disagreed = log.length - rows.length - unreadable;
  return {
    rows,
    log,
    agreement: {
      model: judge.modelId,
      pairs_compared: log.length,
      agreed: rows.length,
      disagreed,
      unreadable,
      agreement: rows.length + disagreed === 0 ? null : rows.length / (rows.length + disagreed),
      first_position_share: readable.length === 0 ? null : readable.filter((v) => v.better === "A").length / readable.length,
    },
  };
}

function countSplits(rows: readonly { split: Split }[]): Record<Split, number> {
  return { train: rows.filter((r) => r.split === "train").length, test: rows.filter((r) => r.split === "test").length };
}
