import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { InputError, UsageError } from "../errors.js";
import { afterFailure } from "../loops/conversation.js";
import { reflectionRequest, retryRequest } from "../loops/feedback.js";
import type { ChatMessage, TextMessage } from "../models/language-model.js";
import { messageAsText } from "../models/prompted-tools.js";
import { jsonlText } from "../record/log.js";
import { readRecords } from "../tasks/records.js";
import { shellCommand, writeDatasetCard } from "./card.js";
import { curatedSets, type AttemptContext, type CuratedSet, type CurationReport, type DistillRow, type DPlusRow, type PairRow } from "./curate.js";
import type { ExportSplit, TrainingSetting } from "./export-options.js";
import { jsonValidator, parquetColumns, parquetIntColumns, type ExportFormat, type ParquetKind } from "./formats.js";
import { instructedReflectionRequest } from "./generate.js";
import { readJsonFile } from "./generation-folder.js";

export interface ExportReflectionDataOptions {
  /** A `reflect data curate` folder. */
  inDir: string;
  set: CuratedSet;
  format: ExportFormat;
  /** For d_plus and distill only; default `one-stage`. */
  setting?: TrainingSetting;
  /** Default `train`. */
  split?: ExportSplit;
  /** The exported file; its dataset card goes beside it (`cardFile`). */
  outFile: string;
}

export interface ExportResult {
  file: string;
  card: string;
  rows: number;
}

/** The message of a training conversation; assistant messages carry `weight` 1 (trained) or 0 (context only). */
export interface WeightedMessage extends TextMessage {
  weight?: 0 | 1;
}

export interface PreferenceConversation {
  prompt: ChatMessage[];
  chosen: [ChatMessage];
  rejected: [ChatMessage];
}

const sftFormats: readonly ExportFormat[] = ["trl-sft", "openai-sft"];
const dpoFormats: readonly ExportFormat[] = ["trl-dpo", "openai-dpo"];
const sftSets: readonly CuratedSet[] = ["d_plus", "distill"];

/** The kind of conversation a set makes: SFT (d_plus, distill) or preference pairs (d_pm, d_pref). */
export function setKind(set: CuratedSet): ParquetKind {
  return sftSets.includes(set) ? "sft" : "pair";
}

/** A UsageError naming the combinations that work, unless `set`, `format` and `setting` make one. */
export function checkCombination(set: CuratedSet, format: ExportFormat, setting: TrainingSetting | undefined): void {
  const works = "d_plus and distill export as trl-sft, openai-sft or parquet, with --setting one-stage, two-stage-reflection or two-stage-correction; d_pm and d_pref export as trl-dpo, openai-dpo or parquet, without --setting";
  const kind = setKind(set);
  if ((kind === "sft" && dpoFormats.includes(format)) || (kind === "pair" && sftFormats.includes(format))) throw new UsageError(`${set} cannot be exported as ${format}: ${works}`);
  if (kind === "pair" && setting !== undefined) throw new UsageError(`--setting does not apply to ${set} (a preference set trains the reflection only): ${works}`);
}

/**
 * Exports one curated set in one format, with a dataset card beside it (see `cardFile`). Formats: `trl-sft` and
 * `openai-sft` (d_plus, distill: a conversation per row, assistant messages weighted per `setting`), `trl-dpo` and
 * `openai-dpo` (d_pm, d_pref: prompt up to the reflection request, chosen and rejected reflections), `parquet` (any
 * set: one row per sample, the conversation as JSON text). Another combination is a UsageError naming those that work.
 */
export async function exportReflectionData(options: ExportReflectionDataOptions): Promise<ExportResult> {
  const { set, format } = options;
  checkCombination(set, format, options.setting);
  const setting = setKind(set) === "sft" ? (options.setting ?? "one-stage") : undefined;
  const split = options.split ?? "train";
  const curationFile = path.join(options.inDir, "curation.json");
  const curation = (await readJsonFile(curationFile, "a curation report")) as CurationReport;
  if (typeof curation?.options !== "object" || !Array.isArray(curation.statistics)) throw new InputError("not the curation.json of `reflect data curate` (no options or statistics)", curationFile);
  const all = await readCuratedSet(options.inDir, set, curation);
  const rows = split === "all" ? all : all.filter((row) => row.split === split);
  await mkdir(path.dirname(path.resolve(options.outFile)), { recursive: true });
  if (format === "parquet") await writeFile(options.outFile, await parquetBytes(set, rows, setting ?? "one-stage"));
  else await writeFile(options.outFile, jsonlText(rows.map((row) => exportRow(set, format, row, setting ?? "one-stage"))));
  const card = await writeDatasetCard({ file: options.outFile, set, format, ...(setting === undefined ? {} : { setting }), split, rows: rows.length, description: describeExport(set, format, setting), curation, command: exportCommand({ ...options, split, ...(setting === undefined ? {} : { setting }) }) });
  return { file: options.outFile, card, rows: rows.length };
}

type CuratedRow = DPlusRow | PairRow | DistillRow;

/** One curated row in a JSONL format. */
function exportRow(set: CuratedSet, format: ExportFormat, row: CuratedRow, setting: TrainingSetting): unknown {
  if (setKind(set) === "sft") return { messages: set === "distill" ? distillConversation(row as DistillRow, setting) : sftConversation(row as DPlusRow, setting) };
  const pair = preferenceConversation(row as PairRow);
  return format === "openai-dpo" ? { input: { messages: pair.prompt }, preferred_output: pair.chosen, non_preferred_output: pair.rejected } : pair;
}

/**
 * A D+ row as a training conversation: the question, the first answer (weight 0), the feedback and instruction, the
 * reflection, the retry request and the corrected answer. `one-stage` trains the reflection and the corrected answer;
 * `two-stage-reflection` ends at the reflection and trains it; `two-stage-correction` keeps the reflection as context
 * and trains the corrected answer.
 */
export function sftConversation(row: DPlusRow, setting: TrainingSetting): WeightedMessage[] {
  const upToReflection: WeightedMessage[] = [...row.question.map(plain), { role: "assistant", content: row.first_answer, weight: 0 }, { role: "user", content: row.reflection_request }];
  if (setting === "two-stage-reflection") return [...upToReflection, { role: "assistant", content: row.reflection, weight: 1 }];
  return [...upToReflection, { role: "assistant", content: row.reflection, weight: setting === "one-stage" ? 1 : 0 }, { role: "user", content: row.retry_request }, { role: "assistant", content: row.second_answer, weight: 1 }];
}

/**
 * A distilled triple as a single-pass conversation (one user turn, one trained answer), reflectkit's choice:
 * `one-stage` — the question → the refined answer (the loop's result distilled into a first answer; no critique);
 * `two-stage-reflection` — the question, the draft, the feedback and the instruction in one user message → the critique;
 * `two-stage-correction` — the draft, the feedback and the critique, then the retry request (which restates the
 * question) in one user message → the refined answer.
 */
export function distillConversation(row: DistillRow, setting: TrainingSetting): WeightedMessage[] {
  const context = row.question.slice(0, -1).map(plain);
  const question = row.question.at(-1)?.content ?? "";
  const draft = `Your previous answer:\n${row.draft}`;
  const user =
    setting === "one-stage"
      ? question
      : setting === "two-stage-reflection"
        ? `${question}\n\n${draft}\n\n${instructedReflectionRequest(row.feedback, row.instruction)}`
        : `${draft}\n\n${row.feedback}\n\nYour reflection on it:\n${row.critique}\n\n${retryRequest(row.question)}`;
  return [...context, { role: "user", content: user }, { role: "assistant", content: setting === "two-stage-reflection" ? row.critique : row.refined, weight: 1 }];
}

/**
 * A pair as TRL's conversational preference format: the question, the first answer and the reflection request as the
 * prompt; the two reflections as the chosen and the rejected completions. The prompt must be the same for both: when
 * they were written under one instruction it is that instruction's request; otherwise reflect-retry's plain
 * reflection request (the feedback, no instruction), which is also what `reflect eval` asks a trained model.
 */
export function preferenceConversation(row: PairRow): PreferenceConversation {
  const { chosen, rejected } = row;
  const request = chosen.reflection_request === rejected.reflection_request ? chosen.reflection_request : reflectionRequest(row.feedback);
  return {
    prompt: afterFailure(row.question.map(plain), { output: row.first_answer }, row.feedback, request),
    chosen: [{ role: "assistant", content: chosen.reflection }],
    rejected: [{ role: "assistant", content: rejected.reflection }],
  };
}

/** What a row of an export holds, for the dataset card. */
export function describeExport(set: CuratedSet, format: ExportFormat, setting: TrainingSetting | undefined): string {
  const sets: Record<CuratedSet, string> = {
    d_plus: "D+: a reflection whose retry the task's verifier judged correct, with the question, the first (wrong) answer and the feedback shown.",
    d_pm: "D±: on the same question and first answer, a reflection whose retry was judged correct (chosen) against one whose retry was judged wrong (rejected).",
    d_pref: "D_pref: two reflections on the same question and first answer, ordered by a judge model that preferred the same one when asked in both orders.",
    distill: "Distilled triples from D+: the draft (first answer), the critique (reflection) and the refined (corrected) answer.",
  };
  const settings: Record<TrainingSetting, string> = {
    "one-stage": set === "distill" ? "the question → the refined answer (weight 1); the critique is not in the conversation (single-pass)." : "the question → the first answer (weight 0) → the feedback and the instruction → the reflection (weight 1) → the retry request → the corrected answer (weight 1): ReflectEvo's one-stage SFT.",
    "two-stage-reflection": set === "distill" ? "one user message with the question, the draft, the feedback and the instruction → the critique (weight 1)." : "the question → the first answer (weight 0) → the feedback and the instruction → the reflection (weight 1): stage 1 of ReflectEvo's two-stage SFT.",
    "two-stage-correction": set === "distill" ? "one user message with the draft, the feedback, the critique and the retry request (restating the question) → the refined answer (weight 1)." : "the question → the first answer (weight 0) → the feedback and the instruction → the reflection (weight 0) → the retry request → the corrected answer (weight 1): stage 2 of ReflectEvo's two-stage SFT.",
  };
  const pairs = "The prompt is the question, the first answer and the reflection request; the completions are the two reflections. Where the two were written under different instructions, the request is reflect-retry's plain one (the feedback, no instruction), so that both share the prompt.";
  const layouts: Record<ExportFormat, string> = {
    "trl-sft": 'TRL conversational format: `{"messages": [{"role", "content", "weight"?}]}`; every assistant message has `weight` 1 (trained) or 0 (context only) — mask the loss by it.',
    "openai-sft": 'OpenAI chat fine-tuning format: `{"messages": [...]}` with `weight` 0 or 1 on assistant messages.',
    "trl-dpo": 'TRL conversational preference format: `{"prompt": [...], "chosen": [{"role": "assistant", ...}], "rejected": [...]}`.',
    "openai-dpo": 'OpenAI preference fine-tuning format: `{"input": {"messages": [...]}, "preferred_output": [...], "non_preferred_output": [...]}`.',
    parquet: `Parquet, one row per sample; columns ${parquetColumns[setKind(set)].map((c) => `\`${c}\``).join(", ")} — plain strings, \`sample\` an int, ${setKind(set) === "sft" ? "`messages` the training conversation as JSON text (TRL's format with weights)" : "`prompt`, `chosen` and `rejected` TRL's preference format as JSON text"}.`,
  };
  return [sets[set], layouts[format], setting === undefined ? pairs : `Setting \`${setting}\`: ${settings[setting]}`].join("\n\n");
}

async function parquetBytes(set: CuratedSet, rows: readonly CuratedRow[], setting: TrainingSetting): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await import("hyparquet-writer");
  const kind = setKind(set);
  const records = rows.map((row) => (kind === "sft" ? sftParquetRow(set, row as DPlusRow | DistillRow, setting) : pairParquetRow(row as PairRow)));
  const columnData = parquetColumns[kind].map((name) => ({ name, data: records.map((r) => r[name as keyof typeof r]), type: parquetIntColumns.has(name) ? ("INT32" as const) : ("STRING" as const), nullable: false }));
  return new Uint8Array(parquetWriteBuffer({ columnData, createdBy: "reflectkit" }));
}

function sftParquetRow(set: CuratedSet, row: DPlusRow | DistillRow, setting: TrainingSetting): Record<(typeof parquetColumns.sft)[number], string | number> {
  const distill = set === "distill" ? (row as DistillRow) : undefined;
  const plus = row as DPlusRow;
  return {
    ...meta(row),
    instruction: row.instruction.id,
    sample: row.sample,
    first_answer: distill?.draft ?? plus.first_answer,
    reflection: distill?.critique ?? plus.reflection,
    second_answer: distill?.refined ?? plus.second_answer,
    messages: JSON.stringify(distill === undefined ? sftConversation(plus, setting) : distillConversation(distill, setting)),
  };
}

function pairParquetRow(row: PairRow): Record<(typeof parquetColumns.pair)[number], string> {
  const pair = preferenceConversation(row);
  return {
    ...meta(row),
    first_answer: row.first_answer,
    chosen_instruction: row.chosen.instruction.id,
    chosen_reflection: row.chosen.reflection,
    chosen_second_answer: row.chosen.second_answer,
    rejected_instruction: row.rejected.instruction.id,
    rejected_reflection: row.rejected.reflection,
    rejected_second_answer: row.rejected.second_answer,
    prompt: JSON.stringify(pair.prompt),
    chosen: JSON.stringify(pair.chosen),
    rejected: JSON.stringify(pair.rejected),
  };
}

function meta(row: Omit<AttemptContext, "first_answer">): { id: string; split: string; task: string; model: string; question: string; feedback: string } {
  return { id: row.id, split: row.split, task: row.task, model: row.model, question: row.question.map((m) => m.content).join("\n\n"), feedback: row.feedback };
}

function plain(message: ChatMessage): TextMessage {
  return messageAsText(message);
}

// The curated rows, as export reads them back: a hand-edited or damaged set is an InputError naming the line.
const message = { type: "object", required: ["role", "content"], properties: { role: { enum: ["system", "user", "assistant"] }, content: { type: "string" } } };
const instruction = { type: "object", required: ["id", "text"], properties: { id: { type: "string" }, text: { type: "string" } } };
const context = {
  split: { enum: ["train", "test"] },
  id: { type: "string" },
  task: { type: "string" },
  model: { type: "string" },
  question: { type: "array", minItems: 1, items: message },
  feedback: { type: "string" },
};
const turn = {
  instruction,
  sample: { type: "integer", minimum: 0 },
  reflection_request: { type: "string" },
  reflection: { type: "string" },
  retry_request: { type: "string" },
  second_answer: { type: "string" },
  second_correct: { type: ["boolean", "null"] },
};
const object = (properties: Record<string, unknown>) => ({ type: "object", required: Object.keys(properties), properties });
const pairRow = { ...context, first_answer: { type: "string" }, chosen: object(turn), rejected: object(turn) };
const rowChecks: Record<CuratedSet, (value: unknown) => string | null> = {
  d_plus: jsonValidator(object({ ...context, first_answer: { type: "string" }, ...turn })),
  d_pm: jsonValidator(object(pairRow)),
  d_pref: jsonValidator(object({ ...pairRow, judge: object({ model: { type: "string" }, reasons: { type: "array", items: { type: "string" } } }) })),
  distill: jsonValidator(object({ ...context, instruction, sample: turn.sample, draft: { type: "string" }, critique: { type: "string" }, refined: { type: "string" } })),
};

async function readCuratedSet(dir: string, set: CuratedSet, curation: CurationReport): Promise<CuratedRow[]> {
  if (!curatedSets.includes(set)) throw new UsageError(`unknown set "${set}" — one of ${curatedSets.join(", ")}`);
  const file = path.join(dir, `${set}.jsonl`);
  if (set === "d_pref" && curation.options.judge_model === null) throw new UsageError(`${dir} has no D_pref: it is made only with a judge — run \`reflect data curate\` with --judge-model`);
  return (await readRecords(file)).map(({ value, line }) => {
    const problem = rowChecks[set](value);
    if (problem !== null) throw new InputError(`not a ${set} row:\n${problem}`, file, line);
    return value as CuratedRow;
  });
}

/** The `reflect data export` command that makes this export, for the dataset card. */
export function exportCommand(options: ExportReflectionDataOptions & { split: ExportSplit }): string {
  const args = ["data", "export", "--in", path.resolve(options.inDir), "--set", options.set, "--format", options.format, ...(options.setting === undefined ? [] : ["--setting", options.setting]), "--split", options.split, "--out", path.resolve(options.outFile)];
  return shellCommand(["reflect", ...args]);
}
