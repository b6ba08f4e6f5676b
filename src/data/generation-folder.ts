import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { InputError } from "../errors.js";
import { findLog, readLog } from "../record/log.js";
import { instructionPool, type ReflectionInstruction } from "./instructions.js";
import { jsonValidator } from "./formats.js";
import type { ReflectionDataItem } from "./types.js";

/** The `config.json` of a `reflect data generate` folder, as far as curation and the dataset card read it. */
export interface GenerationConfig {
  command?: string;
  model?: string;
  model_spec?: string;
  argv?: string[];
  fingerprint: { own_instructions?: { id: string; text: string }[] } & Record<string, unknown>;
  [key: string]: unknown;
}

/** A generation folder read back: its items in file order, each with its 1-based line, and its configuration. */
export interface GenerationFolder {
  dir: string;
  samplesFile: string;
  items: { item: ReflectionDataItem; line: number }[];
  config: GenerationConfig;
  /** The instructions the items name, by id: the pool's and the user's own (from `config.json`). */
  instructions: ReadonlyMap<string, ReflectionInstruction>;
}

const callSchema = {
  type: "object",
  required: ["messages", "output"],
  properties: {
    messages: { type: "array", items: { type: "object", required: ["role", "content"], properties: { role: { enum: ["system", "user", "assistant"] }, content: { type: "string" } } } },
    output: { type: "string" },
  },
};
const verdictSchema = { type: "object", required: ["correct"], properties: { correct: { type: ["boolean", "null"] } } };

/** What curation and the statistics read of a `samples.jsonl` line; anything else in it is passed over. */
const itemSchema = {
  type: "object",
  required: ["id", "task", "model", "instructions", "reflections"],
  properties: {
    id: { type: "string" },
    task: { type: "string" },
    model: { type: "string" },
    first: { type: "object", required: ["call", "verdict"], properties: { call: callSchema, verdict: verdictSchema } },
    feedbackShown: { type: "string" },
    instructions: { type: "array", items: { type: "string" } },
    reflections: {
      type: "array",
      items: {
        type: "object",
        required: ["instruction", "sample", "reflection"],
        properties: { instruction: { type: "string" }, sample: { type: "integer", minimum: 0 }, reflection: callSchema, retry: callSchema, verdict: verdictSchema },
        dependencies: { retry: ["verdict"] },
      },
    },
  },
};
const checkItem = jsonValidator(itemSchema);

/**
 * Reads `<dir>/samples.jsonl` (or `samples.jsonl.gz`) and `<dir>/config.json` of a `reflect data generate` run. Every problem is an
 * InputError naming the file and the line: a line that is not JSON or not a reflection-data item, an instruction id
 * neither in the pool nor among the run's own instructions. A last line cut off by a kill is an error too (unlike a
 * resume, which drops it): curate a finished run. Blank lines are passed over.
 */
export async function readGenerationFolder(dir: string): Promise<GenerationFolder> {
  const samplesFile = findLog(dir, "samples") ?? path.join(dir, "samples.jsonl");
  const configFile = path.join(dir, "config.json");
  const config = (await readJsonFile(configFile, "a generation config")) as GenerationConfig;
  if (typeof config !== "object" || config === null || typeof config.fingerprint !== "object" || config.fingerprint === null) {
    throw new InputError("not the config.json of `reflect data generate` (no fingerprint)", configFile);
  }
  const instructions = new Map<string, ReflectionInstruction>(instructionPool().map((i) => [i.id, i]));
  for (const own of config.fingerprint.own_instructions ?? []) instructions.set(own.id, { id: own.id, text: own.text });
  if (!existsSync(samplesFile)) throw new InputError("no such file — run `reflect data generate --out DIR` first, then pass that DIR as --in", samplesFile);
  const items: GenerationFolder["items"] = [];
  const seen = new Set<string>();
  const samples = await readLog<unknown>(samplesFile, { noun: "sample" });
  if (samples.partialLastLine !== null) throw new InputError("the last line has no newline: the run is still going or was killed — rerun the same `reflect data generate` command to finish it", samplesFile, samples.partialLastLine);
  for (const [index, value] of samples.values.entries()) {
    const line = samples.lineNumbers[index] as number;
    const problem = checkItem(value);
    if (problem !== null) throw new InputError(`not a reflection-data item:\n${problem}`, samplesFile, line);
    const item = value as ReflectionDataItem;
    if (seen.has(item.id)) throw new InputError(`item id "${item.id}" appears twice`, samplesFile, line);
    seen.add(item.id);
    const unknown = item.reflections.find((s) => !instructions.has(s.instruction));
    if (unknown !== undefined) throw new InputError(`instruction "${unknown.instruction}" is neither in the pool nor among the own instructions of ${configFile}`, samplesFile, line);
    items.push({ item, line });
  }
  return { dir, samplesFile, items, config, instructions };
}

/** A JSON file, or an InputError naming it. */
export async function readJsonFile(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) — is ${path.dirname(file)} the right folder?`, file, undefined, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON: expected ${what} (${(error as Error).message})`, file);
  }
}
