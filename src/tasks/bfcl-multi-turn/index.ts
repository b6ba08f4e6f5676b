/**
 * BFCL v3/v4 multi-turn (base, miss_func, miss_param, long_context) as an environment task: the package's own
 * executable backends hold the state, the actor's tool calls run against them, and the verdict is the package's
 * multi-turn check. Data, backends and checker come from the pinned `bfcl-eval` wheel (see package.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { InputError } from "../../errors.js";
import type { ChatMessage, ToolCall, ToolDefinition } from "../../models/language-model.js";
import type { BfclFunction, BfclSchema } from "../bfcl/types.js";
import { schemaType } from "../bfcl/schema-type.js";
import { unjudgedText, type EnvironmentSession, type EnvironmentTask, type Observation } from "../environment.js";
import type { TaskFamily } from "../task-family.js";
import type { Task, TaskItem, Verdict } from "../task.js";
import { ensureBfclPackage, type BfclPackageOptions } from "./package.js";
import { BfclWorker } from "./worker.js";

export { BFCL_WHEELS, bfclPackageDir, ensureBfclPackage, type BfclPackageOptions, type PinnedWheel } from "./package.js";
export { BfclWorker } from "./worker.js";

export const BFCL_MULTI_TURN_CATEGORIES = ["base", "miss_func", "miss_param", "long_context"] as const;
export type BfclMultiTurnCategory = (typeof BFCL_MULTI_TURN_CATEGORIES)[number];

/** BFCL's own step limit per user turn (`MAXIMUM_STEP_LIMIT`). */
export const BFCL_MULTI_TURN_STEPS = 20;

/** What BFCL's function-calling handlers say to the model on the turn that brings a held-out function. */
export const ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?";

/** One multi-turn entry with its ground truth (one list of call strings per user turn) and the function docs. */
export interface BfclMultiTurnRecord {
  id: string;
  category: string;
  question: { role: "user" | "system" | "assistant"; content: string }[][];
  initial_config: Record<string, unknown>;
  involved_classes: string[];
  /** miss_func: the held-out functions by the turn (as a string index) from which they are offered. */
  missed_function?: Record<string, string[]>;
  ground_truth: string[][];
  /** The docs of every function of the involved classes. */
  functions: BfclFunction[];
}

const DOC_FILES: Record<string, string> = {
  GorillaFileSystem: "gorilla_file_system.json",
  MathAPI: "math_api.json",
  MessageAPI: "message_api.json",
  TwitterAPI: "posting_api.json",
  TicketAPI: "ticket_api.json",
  TradingBot: "trading_bot.json",
  TravelAPI: "travel_booking.json",
  VehicleControlAPI: "vehicle_control.json",
};

function readJsonLines(file: string): { line: number; value: unknown }[] {
  const out: { line: number; value: unknown }[] = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (text.trim() === "") return;
      try {
        out.push({ line: i + 1, value: JSON.parse(text) });
      } catch (error) {
        throw new InputError(`not a JSON line (${(error as Error).message})`, file, i + 1);
      }
    });
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validates a question record (the ground truth and docs joined in), or throws with the reason. */
export function parseBfclMultiTurnRecord(value: unknown): BfclMultiTurnRecord {
  if (!isObject(value)) throw new Error("a record must be a JSON object");
  const { id, question, initial_config, involved_classes, ground_truth, functions } = value;
  if (typeof id !== "string") throw new Error('"id" must be a string');
  if (!Array.isArray(question) || !question.every((turn) => Array.isArray(turn) && turn.every((m) => isObject(m) && typeof m.content === "string")))
    throw new Error('"question" must be a list of turns, each a list of {role, content} messages');
  if (!isObject(initial_config)) throw new Error('"initial_config" must be an object');
  if (!Array.isArray(involved_classes) || !involved_classes.every((c) => typeof c === "string" && c in DOC_FILES))
    throw new Error(`"involved_classes" must name classes among ${Object.keys(DOC_FILES).join(", ")}`);
  if (!Array.isArray(ground_truth) || !ground_truth.every((turn) => Array.isArray(turn) && turn.every((c) => typeof c === "string")))
    throw new Error('"ground_truth" must be a list of turns, each a list of call strings');
  if (ground_truth.length !== question.length) throw new Error(`"ground_truth" has ${ground_truth.length} turns, "question" ${question.length}`);
  if (!Array.isArray(functions)) throw new Error('"functions" must be a list of function docs');
  const missed = value.missed_function;
  if (missed !== undefined && !(isObject(missed) && Object.values(missed).every((names) => Array.isArray(names) && names.every((n) => typeof n === "string"))))
    throw new Error('"missed_function" must map a turn to a list of names');
  const category = typeof value.category === "string" ? value.category : id.replace(/_\d+$/, "");
  return { ...(value as unknown as BfclMultiTurnRecord), category };
}

/**
 * Loads a multi-turn question file (JSON lines) with its ground truth from `possible_answer/<same name>` beside it and
 * the function docs from `multi_turn_func_doc/` beside it, as the package lays them out. A bad line is named by file:line.
 */
export function loadBfclMultiTurnFile(file: string): TaskItem<BfclMultiTurnRecord>[] {
  const dir = path.dirname(file);
  const answers = path.join(dir, "possible_answer", path.basename(file));
  if (!existsSync(answers)) throw new InputError(`its ground truth ${answers} is absent`, file);
  const truth = new Map<string, unknown>();
  for (const { line, value } of readJsonLines(answers)) {
    if (!isObject(value) || typeof value.id !== "string") throw new InputError('a record needs an "id"', answers, line);
    truth.set(value.id, value.ground_truth);
  }
  const docs = new Map<string, BfclFunction[]>();
  const docsOf = (cls: string): BfclFunction[] => {
    let list = docs.get(cls);
    if (list === undefined) {
      const docFile = path.join(dir, "multi_turn_func_doc", DOC_FILES[cls] as string);
      list = readJsonLines(docFile).map(({ value }) => value as BfclFunction);
      docs.set(cls, list);
    }
    return list;
  };
  return readJsonLines(file).map(({ line, value }) => {
    try {
      if (!isObject(value)) throw new Error("a record must be a JSON object");
      if (!truth.has(value.id as string)) throw new Error(`no ground truth for "${String(value.id)}" in ${answers}`);
      const classes = Array.isArray(value.involved_classes) ? value.involved_classes.filter((c): c is string => typeof c === "string" && c in DOC_FILES) : [];
      const record = parseBfclMultiTurnRecord({ ...value, ground_truth: truth.get(value.id as string), functions: classes.flatMap(docsOf) });
      return { id: record.id, record };
    } catch (error) {
      throw new InputError((error as Error).message, file, line);
    }
  });
}

/** A category's entries from the pinned package's own data (fetched on first use). */
export async function loadBfclMultiTurn(category: BfclMultiTurnCategory, options: BfclPackageOptions = {}): Promise<TaskItem<BfclMultiTurnRecord>[]> {
  const [bfcl] = await ensureBfclPackage(options);
  return loadBfclMultiTurnFile(path.join(bfcl as string, "bfcl_eval", "data", `BFCL_v4_multi_turn_${category}.json`));
}

/** A BFCL parameter schema as JSON Schema: `dict` → `object`, `float` → `number`, `tuple` → `array`, `any` untyped. */
export function jsonSchemaOf(schema: BfclSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type") continue;
    if (key === "properties" && isObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchemaOf(v as BfclSchema)]));
    else if (key === "items" && isObject(value)) out.items = jsonSchemaOf(value as BfclSchema);
    else out[key] = value;
  }
  const type = schemaType(schema);
  const names: Record<string, string | undefined> = { string: "string", integer: "integer", float: "number", boolean: "boolean", array: "array", tuple: "array", dict: "object", any: undefined };
  const name = names[type];
  if (name !== undefined) out.type = name;
  return out;
}

function toolOf(fn: BfclFunction): ToolDefinition {
  return { name: fn.name, ...(fn.description === undefined ? {} : { description: fn.description }), parameters: jsonSchemaOf(fn.parameters) };
}

function heldOut(record: BfclMultiTurnRecord): Map<string, number> {
  const out = new Map<string, number>();
  for (const [turn, names] of Object.entries(record.missed_function ?? {})) for (const name of names) out.set(name, Number(turn));
  return out;
}

function turnMessage(record: BfclMultiTurnRecord, turn: number): ChatMessage {
  const messages = record.question[turn] ?? [];
  if (messages.length === 0) return { role: "user", content: ADDED_FUNCTIONS_PROMPT };
  return { role: "user", content: messages.map((m) => m.content).join("\n\n") };
}

/** The failure of the package's check, in words. */
function feedbackOf(failure: Record<string, unknown> | null, valid: boolean): string {
  if (valid) return "every user turn's state and results match the ground truth";
  if (failure === null) return "the trajectory ended before its last user turn";
  const extra = failure.differences ?? failure.missing;
  return `${String(failure.error_type)}: ${String(failure.error_message)}${extra === undefined ? "" : ` ${String(extra)}`}`;
}

let trialCounter = 0;

class BfclSession implements EnvironmentSession {
  readonly opening: readonly ChatMessage[];
  private turn = 0;
  private closed = false;
  private readonly held: Map<string, number>;

  constructor(
    private readonly worker: BfclWorker,
    private readonly trial: number,
    private readonly record: BfclMultiTurnRecord,
  ) {
    this.held = heldOut(record);
    this.opening = [turnMessage(record, 0)];
  }

  tools(): readonly ToolDefinition[] {
    return this.record.functions.filter((fn) => (this.held.get(fn.name) ?? 0) <= this.turn).map(toolOf);
  }

  async act(calls: readonly ToolCall[], signal?: AbortSignal): Promise<Observation[]> {
    const offered = this.tools().map((tool) => tool.name);
    // The arguments travel as the model wrote them and are read by Python's json, as BFCL's handlers read them.
    const sent = calls.map((call) => ({ name: call.name, arguments: call.arguments }));
    const answer = await this.worker.request("act", { trial: this.trial, calls: sent, offered }, signal);
    return (answer.observations as { content: string; isError: boolean }[]).map((o, i) => ({ callId: (calls[i] as ToolCall).id, content: o.content, isError: o.isError }));
  }

  async next(_reply: string, signal?: AbortSignal): Promise<ChatMessage | null> {
    await this.worker.request("next", { trial: this.trial }, signal);
    this.turn++;
    return this.turn < this.record.question.length ? turnMessage(this.record, this.turn) : null;
  }

  async verdict(signal?: AbortSignal): Promise<Verdict> {
    const answer = await this.worker.request("verdict", { trial: this.trial }, signal);
    const valid = answer.valid === true;
    return { correct: valid, score: valid ? 1 : 0, feedback: feedbackOf(answer.failure as Record<string, unknown> | null, valid), answer: null };
  }

  /** The ground truth as tool calls per user turn (arguments named by the backends' signatures), for replays. */
  async goldCalls(signal?: AbortSignal): Promise<{ name: string; arguments: string }[][]> {
    const answer = await this.worker.request("gold", { trial: this.trial }, signal);
    return answer.turns as { name: string; arguments: string }[][];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.worker.alive) await this.worker.request("close", { trial: this.trial }).catch(() => undefined);
  }
}

export type BfclMultiTurnSession = BfclSession;

export interface BfclMultiTurnTask extends EnvironmentTask<BfclMultiTurnRecord> {
  environment(record: BfclMultiTurnRecord, options?: { signal?: AbortSignal }): Promise<BfclSession>;
  /** The environment process the sessions share, started on the first session; a dead one is replaced by the next. */
  worker(): Promise<BfclWorker>;
  /** Ends the shared environment process. */
  shutdown(): void;
}

/**
 * The task. One Python process serves every session of the task (each session its own backend instances in it);
 * when that process dies, the sessions on it reject their calls and the next session starts a fresh one.
 */
export function bfclMultiTurnTask(options: BfclPackageOptions = {}): BfclMultiTurnTask {
  let current: BfclWorker | null = null;
  const worker = async (): Promise<BfclWorker> => {
    if (current !== null && current.alive) return current;
    current = new BfclWorker(await ensureBfclPackage(options), options.python);
    return current;
  };
  return {
    name: "bfcl-multi-turn",
    defaultSteps: BFCL_MULTI_TURN_STEPS,
    prompt: (record) => [turnMessage(record, 0)],
    verify: () => unjudgedText("bfcl-multi-turn"),
    parseRecord: parseBfclMultiTurnRecord,
    reference: (record) => JSON.stringify(record.ground_truth),
    worker,
    shutdown: () => {
      current?.kill();
      current = null;
    },
    async environment(record, opts) {
      const w = await worker();
      const trial = ++trialCounter;
      const entry = { id: record.id, category: record.category, initial_config: record.initial_config, involved_classes: record.involved_classes };
      await w.request("reset", { trial, entry, ground_truth: record.ground_truth }, opts?.signal);
      return new BfclSession(w, trial, record);
    },
  };
}

/**
 * An entry cut to its first `turns` user turns, ground truth and held-out functions with them: the same checks on a
 * shorter trajectory (`--data base@1` runs the first user turn of every base entry).
 */
export function firstUserTurns(record: BfclMultiTurnRecord, turns: number): BfclMultiTurnRecord {
  if (!Number.isInteger(turns) || turns < 1) throw new Error(`a number of user turns must be a whole number from 1, not ${turns}`);
  if (turns >= record.question.length) return record;
  const missed = record.missed_function === undefined ? {} : { missed_function: Object.fromEntries(Object.entries(record.missed_function).filter(([turn]) => Number(turn) < turns)) };
  return { ...record, question: record.question.slice(0, turns), ground_truth: record.ground_truth.slice(0, turns), ...missed };
}

/** `base`, `base@2` (a category, cut to its first two user turns) or a question file, possibly with `@N`. */
export function parseDataSpec(spec: string): { source: string; turns: number | null } {
  const at = /^(.*)@([^@/]*)$/.exec(spec);
  if (at === null) return { source: spec, turns: null };
  const turns = Number(at[2]);
  if (!/^[1-9][0-9]{0,2}$/.test(at[2] as string))
    throw new InputError(`"@${at[2]}" must name how many user turns of each entry to keep, a whole number from 1 to 999 (e.g. base@1)`, spec);
  return { source: at[1] as string, turns };
}

async function loadBfclData(spec: string): Promise<TaskItem<BfclMultiTurnRecord>[]> {
  const { source, turns } = parseDataSpec(spec);
  const name = path.basename(source) as BfclMultiTurnCategory;
  const items = !existsSync(source) && (BFCL_MULTI_TURN_CATEGORIES as readonly string[]).includes(name) ? await loadBfclMultiTurn(name) : loadBfclMultiTurnFile(source);
  return turns === null ? items : items.map((item) => ({ ...item, record: firstUserTurns(item.record, turns) }));
}

export const bfclMultiTurnFamily: TaskFamily = {
  name: "bfcl-multi-turn",
  description:
    "BFCL v4 multi-turn (--data base, miss_func, miss_param or long_context from the pinned bfcl-eval wheel, or a question file; @N keeps the first N user turns of each entry, e.g. base@1), an environment of the package's backends, its state and response checks",
  scorer: "the environment's state and results against the ground truth",
  create: () => bfclMultiTurnTask() as unknown as Task<unknown>,
  load: loadBfclData,
};
