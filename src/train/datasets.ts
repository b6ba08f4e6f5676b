import { InputError } from "../errors.js";
import { validateExportRow } from "../data/formats.js";
import { readRecords, recordError, type SourceRecord } from "../tasks/records.js";
import { hash32 } from "../util/hash.js";
import { mulberry32 } from "../util/random.js";
import { messageWeights } from "./masks.js";
import type { TrainerBackend, WeightedDatum } from "./types.js";

interface Message {
  role: "system" | "user" | "assistant";
  content: string;
  weight?: number;
}

/** A training conversation and which of its messages carry loss. */
export interface SftRow {
  line: number;
  messages: Message[];
  trained: number[];
}

export interface PreferenceRow {
  line: number;
  prompt: Message[];
  chosen: Message;
  rejected: Message;
}

/** A training file read and checked whole: objectives take it so that bad data fails before anything starts. */
export interface Dataset<Row> {
  file: string;
  rows: Row[];
}

/**
 * Reads TRL-style conversational SFT JSONL (`reflect data export --format trl-sft` or `openai-sft`): assistant
 * messages with `weight` 1 carry loss, 0 are context. A file without any `weight` trains every assistant message,
 * as TRL's assistant-only loss does. A bad line is an InputError naming the file and line.
 */
export async function readSftData(file: string): Promise<Dataset<SftRow>> {
  const rows = (await readJsonl(file)).map(({ value, line }) => {
    const row = value as { messages?: Message[] };
    const weighted = Array.isArray(row.messages) && row.messages.some((m) => m !== null && typeof m === "object" && "weight" in m);
    const problem = weighted
      ? validateExportRow("trl-sft", value)
      : validateExportRow("trl-sft", { messages: Array.isArray(row.messages) ? row.messages.map((m) => (m?.role === "assistant" ? { ...m, weight: 1 } : m)) : row.messages });
    if (problem !== null) throw recordError(file, line, `not a conversational SFT row: ${problem}`);
    const messages = (row.messages as Message[]).map(({ role, content }) => ({ role, content }));
    const trained = (row.messages as Message[]).flatMap((m, i) => (m.role === "assistant" && (!weighted || m.weight === 1) ? [i] : []));
    return { line, messages, trained };
  });
  return { file, rows };
}

/** Reads TRL-style conversational preference JSONL (`--format trl-dpo`): `prompt`, `chosen`, `rejected`. */
export async function readPreferenceData(file: string): Promise<Dataset<PreferenceRow>> {
  const rows = (await readJsonl(file)).map(({ value, line }) => {
    const problem = validateExportRow("trl-dpo", value);
    if (problem !== null) throw recordError(file, line, `not a conversational preference row: ${problem}`);
    const row = value as { prompt: Message[]; chosen: Message[]; rejected: Message[] };
    return { line, prompt: row.prompt, chosen: row.chosen[0] as Message, rejected: row.rejected[0] as Message };
  });
  return { file, rows };
}

async function readJsonl(file: string): Promise<SourceRecord[]> {
  const rows = await readRecords(file, { otherwise: "jsonl" });
  if (rows.length === 0) throw new InputError("no rows: the file is empty — export one with `reflect data export`", file);
  return rows;
}

/**
 * Renders conversations with the model's chat template and weights the chosen messages (content and end-of-turn
 * token). Rows longer than `maxLength` tokens are left out and counted — never cut, which would train a message
 * without its end.
 */
export async function renderWeighted(backend: TrainerBackend, rows: readonly { messages: Message[]; trained: number[] }[], maxLength: number): Promise<{ datums: (WeightedDatum | null)[]; tooLong: number }> {
  const datums: (WeightedDatum | null)[] = [];
  let tooLong = 0;
  for (let start = 0; start < rows.length; start += 64) {
    const chunk = rows.slice(start, start + 64);
    const rendered = await backend.renderChat(chunk.map((r) => r.messages), false);
    rendered.forEach((r, i) => {
      if (r.tokens.length > maxLength) {
        tooLong++;
        datums.push(null);
        return;
      }
      datums.push({ tokens: r.tokens, weights: messageWeights(r, chunk[i]!.trained, true) });
    });
  }
  return { datums, tooLong };
}

/** The dataset indices of step `n` (1-based): a seeded shuffle per epoch, `batchSize` items a step across epochs. */
export function stepIndices(size: number, batchSize: number, n: number, seed: number): number[] {
  const out: number[] = [];
  for (let k = (n - 1) * batchSize; k < n * batchSize; k++) {
    const epoch = Math.floor(k / size);
    out.push(epochOrder(size, seed, epoch)[k % size] as number);
  }
  return out;
}

const orders = new Map<string, number[]>();
function epochOrder(size: number, seed: number, epoch: number): number[] {
  const key = `${size}:${seed}:${epoch}`;
  let order = orders.get(key);
  if (order === undefined) {
    order = Array.from({ length: size }, (_, i) => i);
    const random = mulberry32(hash32(`${seed}:${epoch}`));
    for (let i = size - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    if (orders.size > 16) orders.clear();
    orders.set(key, order);
  }
  return order;
}
