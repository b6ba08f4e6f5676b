import { readFile } from "node:fs/promises";
import type { Ajv, ValidateFunction } from "ajv";
import { InputError } from "../errors.js";
import { ajvModules } from "../tasks/json/ajv.js";
import { describeViolations } from "../tasks/json/violations.js";
import { parseJsonLines } from "../tasks/records.js";

/**
 * The export formats of curated reflection data, their JSON Schemas and validators. Each JSONL format is one JSON
 * object a line; an empty file is a valid export of an empty set.
 *
 * - `trl-sft`: TRL's conversational language-modeling format, `{"messages": [...]}`, every assistant message with a
 *   `weight` of 1 (trained) or 0 (context only), as OpenAI's format has it.
 * - `openai-sft`: OpenAI's chat fine-tuning format, `{"messages": [...]}` with `weight` 0/1 on assistant messages.
 * - `trl-dpo`: TRL's conversational preference format, `{"prompt": [...], "chosen": [assistant], "rejected": [assistant]}`.
 * - `openai-dpo`: OpenAI's preference fine-tuning format, `{"input": {"messages": [...]}, "preferred_output": [...],
 *   "non_preferred_output": [...]}`.
 * - `parquet`: one row per sample, plain string and int columns, the conversation as JSON text (`parquetColumns`).
 */
export const exportFormats = ["trl-sft", "trl-dpo", "openai-sft", "openai-dpo", "parquet"] as const;
export type ExportFormat = (typeof exportFormats)[number];
export type JsonlFormat = Exclude<ExportFormat, "parquet">;

let ajv: Ajv | undefined;

/**
 * A JSON Schema validator: the violations of a value as readable lines, or null when it conforms. The schema is
 * compiled on the first validation, so that the validators this folder defines cost nothing until data is checked.
 */
export function jsonValidator(schema: Record<string, unknown>): (value: unknown) => string | null {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= (ajv ??= new (ajvModules().draft07.Ajv)({ allErrors: true, strict: true, strictRequired: false, logger: false })).compile(schema);
    return validate(value) ? null : describeViolations(validate.errors ?? []);
  };
}

const role = { enum: ["system", "user", "assistant"] };
/** A message of a training conversation: an assistant message carries `weight` 0 or 1, no other message does. */
const weightedMessage = {
  type: "object",
  required: ["role", "content"],
  additionalProperties: false,
  properties: { role, content: { type: "string" }, weight: { enum: [0, 1] } },
  if: { properties: { role: { const: "assistant" } } },
  then: { required: ["weight"] },
  else: { not: { required: ["weight"] } },
};
const plainMessage = { type: "object", required: ["role", "content"], additionalProperties: false, properties: { role, content: { type: "string" } } };
const completion = {
  type: "array",
  minItems: 1,
  maxItems: 1,
  items: { type: "object", required: ["role", "content"], additionalProperties: false, properties: { role: { const: "assistant" }, content: { type: "string", minLength: 1 } } },
};
const sftMessages = { type: "array", minItems: 2, items: weightedMessage };
const prompt = { type: "array", minItems: 1, items: plainMessage };

export const formatSchemas: Record<JsonlFormat, Record<string, unknown>> = {
  "trl-sft": { type: "object", required: ["messages"], additionalProperties: false, properties: { messages: sftMessages } },
  "openai-sft": { type: "object", required: ["messages"], additionalProperties: false, properties: { messages: sftMessages } },
  "trl-dpo": { type: "object", required: ["prompt", "chosen", "rejected"], additionalProperties: false, properties: { prompt, chosen: completion, rejected: completion } },
  "openai-dpo": {
    type: "object",
    required: ["input", "preferred_output", "non_preferred_output"],
    additionalProperties: false,
    properties: {
      input: { type: "object", required: ["messages"], additionalProperties: false, properties: { messages: prompt } },
      preferred_output: completion,
      non_preferred_output: completion,
    },
  },
};

interface Message {
  role: string;
  content: string;
  weight?: number;
}

/** What a schema cannot say: an SFT conversation ends with a trained assistant message; a DPO prompt ends with the user, and its two answers differ. */
const sftProblem = (row: unknown) => endsTrained((row as { messages: Message[] }).messages);
const semanticChecks: Record<JsonlFormat, (row: unknown) => string | null> = {
  "trl-sft": sftProblem,
  "openai-sft": sftProblem,
  "trl-dpo": (row) => {
    const r = row as { prompt: Message[]; chosen: Message[]; rejected: Message[] };
    return pairProblem(r.prompt, r.chosen, r.rejected);
  },
  "openai-dpo": (row) => {
    const r = row as { input: { messages: Message[] }; preferred_output: Message[]; non_preferred_output: Message[] };
    return pairProblem(r.input.messages, r.preferred_output, r.non_preferred_output);
  },
};

function endsTrained(messages: readonly Message[]): string | null {
  const last = messages.at(-1);
  return last?.role === "assistant" && last.weight === 1 ? null : "/messages: the last message must be an assistant message with weight 1";
}

function pairProblem(promptMessages: readonly Message[], chosen: readonly Message[], rejected: readonly Message[]): string | null {
  if (promptMessages.at(-1)?.role !== "user") return "the prompt must end with a user message";
  if (chosen[0]?.content === rejected[0]?.content) return "the chosen and the rejected answers are the same text";
  return null;
}

const rowValidators = Object.fromEntries(
  (Object.keys(formatSchemas) as JsonlFormat[]).map((format) => {
    const schema = jsonValidator(formatSchemas[format]);
    return [format, (row: unknown) => schema(row) ?? semanticChecks[format](row)];
  }),
) as Record<JsonlFormat, (row: unknown) => string | null>;

/** The problems of one row of a JSONL export, or null when it is a valid row of `format`. */
export function validateExportRow(format: JsonlFormat, row: unknown): string | null {
  return rowValidators[format](row);
}

/**
 * The Parquet columns of an export, by the kind of set: `sft` (d_plus and distill, whose `messages` column holds the
 * training conversation of the chosen setting as JSON) or `pair` (d_pm and d_pref, whose `prompt`, `chosen` and
 * `rejected` columns hold TRL's conversational preference format as JSON). `sample` is the only int column.
 */
export const parquetColumns = {
  sft: ["id", "split", "task", "model", "instruction", "sample", "question", "first_answer", "feedback", "reflection", "second_answer", "messages"],
  pair: ["id", "split", "task", "model", "question", "first_answer", "feedback", "chosen_instruction", "chosen_reflection", "chosen_second_answer", "rejected_instruction", "rejected_reflection", "rejected_second_answer", "prompt", "chosen", "rejected"],
} as const;
export type ParquetKind = keyof typeof parquetColumns;
export const parquetIntColumns: ReadonlySet<string> = new Set(["sample"]);

const parquetRowValidators: Record<ParquetKind, (row: unknown) => string | null> = {
  sft: parquetRowValidator("sft", (row) => rowValidators["trl-sft"]({ messages: parseJson(row.messages) })),
  pair: parquetRowValidator("pair", (row) => rowValidators["trl-dpo"]({ prompt: parseJson(row.prompt), chosen: parseJson(row.chosen), rejected: parseJson(row.rejected) })),
};

function parquetRowValidator(kind: ParquetKind, conversation: (row: Record<string, string>) => string | null): (row: unknown) => string | null {
  const columns = parquetColumns[kind];
  const schema = jsonValidator({
    type: "object",
    required: [...columns],
    additionalProperties: false,
    properties: Object.fromEntries(columns.map((c) => [c, parquetIntColumns.has(c) ? { type: "integer", minimum: 0 } : { type: "string" }])),
  });
  return (row) => {
    const problem = schema(row);
    if (problem !== null) return problem;
    try {
      return conversation(row as Record<string, string>);
    } catch (error) {
      return `a JSON column is not valid JSON (${(error as Error).message})`;
    }
  };
}

function parseJson(text: string | undefined): unknown {
  return JSON.parse(text ?? "");
}

/**
 * Validates an exported file: each line of a JSONL format, or each row of a Parquet file (whose columns must be one
 * of `parquetColumns`' layouts, whose JSON columns must hold a valid conversation). An empty file is a valid export
 * of an empty set. A problem is an InputError naming the file and the line (Parquet: the row).
 */
export async function validateExportFile(file: string, format: ExportFormat): Promise<{ rows: number }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, file, undefined, { cause: error });
  }
  if (format === "parquet") return validateParquet(file, bytes);
  const records = parseJsonLines(file, bytes.toString("utf8"));
  for (const { value, line } of records) {
    const problem = validateExportRow(format, value);
    if (problem !== null) throw new InputError(`not a valid ${format} row:\n${problem}`, file, line);
  }
  const rows = records.length;
  return { rows };
}

async function validateParquet(file: string, bytes: Buffer): Promise<{ rows: number }> {
  const { parquetMetadata, parquetReadObjects } = await import("hyparquet");
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let names: string[];
  let rows: Record<string, unknown>[];
  try {
    names = parquetMetadata(buffer).schema.slice(1).map((element) => element.name);
    rows = await parquetReadObjects({ file: buffer });
  } catch (error) {
    throw new InputError(`not a readable Parquet file (${(error as Error).message})`, file, undefined, { cause: error });
  }
  const kind = (Object.keys(parquetColumns) as ParquetKind[]).find((k) => JSON.stringify(parquetColumns[k]) === JSON.stringify(names));
  if (kind === undefined) throw new InputError(`columns ${names.join(", ")} are neither the sft layout (${parquetColumns.sft.join(", ")}) nor the pair layout (${parquetColumns.pair.join(", ")})`, file);
  rows.forEach((row, index) => {
    const problem = parquetRowValidators[kind](row);
    if (problem !== null) throw new InputError(`row ${index + 1}: not a valid ${kind} row:\n${problem}`, file);
  });
  return { rows: rows.length };
}
