import path from "node:path";
import { ReflectkitError, UsageError } from "../errors.js";
import { durableRun } from "../record/durable-run.js";
import { writeFileWhole } from "../record/log.js";
import { Budget, type BudgetLimits } from "../loops/budget.js";
import { callModel, defaultAttemptSampling, defaultReflectionSampling, episodeError, verifyOutput, type CallSampling, type CallScope } from "../loops/episode-run.js";
import { afterFailure, retryTurn } from "../loops/conversation.js";
import { feedbackMessage, type FeedbackMode } from "../loops/feedback.js";
import type { CallRole, EpisodeError, ModelCall } from "../loops/types.js";
import type { ChatMessage, LanguageModel, SamplingParams } from "../models/language-model.js";
import type { Judgement, ReplyParts, Task, TaskItem, Verdict } from "../tasks/task.js";
import { noopTracer } from "../telemetry/tracer.js";
import { hash32 } from "../util/hash.js";
import { mulberry32, randomInt } from "../util/random.js";
import { instructionPool, type ReflectionInstruction } from "./instructions.js";
import type { ReflectionDataItem, ReflectionDataSummary, ReflectionSample } from "./types.js";

type Sampling = Omit<SamplingParams, "seed">;

export interface GenerateReflectionDataOptions<R> {
  model: LanguageModel;
  task: Task<R, Judgement>;
  items: readonly TaskItem<R>[];
  /** The run folder: `samples.jsonl`, `config.json`, `summary.json`. An existing folder of the same configuration is resumed. */
  outDir: string;
  /** Instructions drawn from the pool of 32 for each failed item (seeded, without replacement). Default 4. */
  instructionsPerItem?: number;
  /** The user's own instructions (`loadInstructions`): every failed item reflects with each of them too. */
  instructions?: readonly ReflectionInstruction[];
  /** Reflection-and-retry samples per instruction (rejection sampling). Default 2. */
  samples?: number;
  /** What the model is told about its failed first answer: `binary` (default) or `detailed` (the verifier's words). */
  feedback?: FeedbackMode;
  /** Sampling of the first answer, of reflections and of retries (default `defaultFirstSampling`, `defaultGenerationReflectionSampling`, `defaultRetrySampling`). */
  first?: Sampling;
  reflection?: Sampling;
  retry?: Sampling;
  /** Limits of each item's calls together; a spent budget ends the item with an `error`, keeping what it finished. */
  budget?: BudgetLimits;
  /** Run seed; the instructions drawn for an item and each call's sampling seed derive from it and the item id. */
  seed?: number;
  /** Items in flight at once. Default 1. */
  concurrency?: number;
  /** More of the resolved configuration for `config.json` (the CLI's flags). */
  config?: Record<string, unknown>;
  /** More of what determines results (the data file, the task mode), checked on resume with what the options determine. */
  fingerprint?: Record<string, unknown>;
  signal?: AbortSignal;
  onItem?: (item: ReflectionDataItem<R>, resumed: boolean) => void;
  now?: () => number;
  /**
   * First answers already made (a gateway record's first attempts, the deployed model's real failures): an item that
   * has one is not asked again; its recorded call is re-verified by the task, and the reflections continue its
   * conversation (the recorded messages, without the thought request).
   */
  firstAnswers?: (item: TaskItem<R>) => ModelCall | undefined;
  /** What the item's request asked of every answer (a JSON schema, tools), sent with its retries. */
  requestFormat?: (item: TaskItem<R>) => Pick<CallSampling, "responseFormat" | "tools">;
}

export interface GenerateReflectionDataResult<R> {
  summary: ReflectionDataSummary;
  /** Every item on disk, in input order. */
  items: ReflectionDataItem<R>[];
  /** Items found on disk from an earlier, interrupted run of the same configuration. */
  resumed: number;
}

/**
 * The data pipeline's sampling, derived from the loops' defaults (`defaultAttemptSampling`, `defaultReflectionSampling`):
 * the same token limits, so a reflection learned here fits what `reflect eval` lets a reflection write. The one
 * departure, and why: reflections and retries are sampled (temperature 0.7) where the loops are greedy, because
 * rejection sampling needs several different reflections of one failure to choose from.
 */
export const GENERATION_TEMPERATURE = 0.7;
export const defaultFirstSampling = { maxTokens: defaultAttemptSampling.maxTokens, temperature: defaultAttemptSampling.temperature } as const;
export const defaultGenerationReflectionSampling = { maxTokens: defaultReflectionSampling.maxTokens, temperature: GENERATION_TEMPERATURE } as const;
export const defaultRetrySampling = { maxTokens: defaultAttemptSampling.maxTokens, temperature: GENERATION_TEMPERATURE } as const;

/**
 * ReflectEvo's reflection-data generation (Li et al. 2025): a first answer to each item; for each item it gets wrong,
 * k instructions drawn from the pool (plus the user's own) and, per instruction, n samples of a reflection and of the
 * retry that follows it, each retry judged by the task's verifier. The samples go to `<out>/samples.jsonl`, one line
 * per item, appended and synced as each item finishes: killed at any moment, the same call resumes with nothing lost
 * or repeated. A model failure (after the backend's retries) ends its item with an `error`, not the run.
 *
 * Departures from the paper: the first answer is a thought followed by the task's own answer format rather than
 * ReAct's Thought/Action steps (the tasks here are single-turn); an item the verifier cannot judge is recorded and
 * not reflected on; the retry request restates the question, as reflect-retry's does.
 */
export async function generateReflectionData<R>(options: GenerateReflectionDataOptions<R>): Promise<GenerateReflectionDataResult<R>> {
  const started = performance.now();
  const { model, task } = options;
  const pool = instructionPool();
  const own = options.instructions ?? [];
  const k = options.instructionsPerItem ?? 4;
  const samples = options.samples ?? 2;
  if (!Number.isInteger(k) || k < 0 || k > pool.length) throw new UsageError(`instructions per item must be an integer from 0 to ${pool.length}, got ${k}`);
  if (!Number.isInteger(samples) || samples < 1) throw new UsageError(`samples per instruction must be a positive integer, got ${samples}`);
  if (k + own.length === 0) throw new UsageError("no instructions to reflect with — draw some from the pool (--instructions-per-item) or give your own (--instructions FILE)");
  const ids = new Set(pool.map((i) => i.id));
  for (const instruction of own) {
    if (ids.has(instruction.id)) throw new UsageError(`instruction id "${instruction.id}" is used twice (the pool's ids are <verify>/<focus>/<plan>)`);
    ids.add(instruction.id);
  }
  const setup: ItemSetup<R> = {
    model,
    task,
    pool,
    own,
    k,
    samples,
    feedback: options.feedback ?? "binary",
    first: options.first ?? defaultFirstSampling,
    reflection: options.reflection ?? defaultGenerationReflectionSampling,
    retry: options.retry ?? defaultRetrySampling,
    budget: options.budget ?? {},
    seed: options.seed ?? 0,
    now: options.now ?? performance.now.bind(performance),
    firstAnswers: options.firstAnswers,
    requestFormat: options.requestFormat,
  };
  const fingerprint = {
    task: task.name,
    model: model.modelId,
    items: options.items.length,
    seed: setup.seed,
    instructions_per_item: k,
    samples,
    feedback: setup.feedback,
    first: setup.first,
    reflection: setup.reflection,
    retry: setup.retry,
    instruction_pool: hash32(JSON.stringify(pool)).toString(16),
    own_instructions: own.map(({ id, text }) => ({ id, text })),
    ...(Object.keys(setup.budget).length === 0 ? {} : { budget: setup.budget }),
    ...options.fingerprint,
  };
  const concurrency = options.concurrency ?? 1;
  const { lines, resumed } = await durableRun<TaskItem<R>, ReflectionDataItem<R>>({
    items: options.items,
    outDir: options.outDir,
    file: "samples.jsonl",
    noun: "sample",
    check: checkItemLine,
    config: { command: "data generate", ...fingerprint, concurrency, ...options.config },
    fingerprint,
    concurrency,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onResumed: (line) => options.onItem?.(line, true),
    onLine: (line) => options.onItem?.(line, false),
    work: (item, signal) => generateItem(setup, item, signal),
  });
  const summary = summarizeReflectionData(lines, { wallSeconds: (performance.now() - started) / 1000, resumed });
  await writeFileWhole(path.join(options.outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return { summary, items: lines, resumed };
}

interface ItemSetup<R> {
  model: LanguageModel;
  task: Task<R, Judgement>;
  pool: readonly ReflectionInstruction[];
  own: readonly ReflectionInstruction[];
  k: number;
  samples: number;
  feedback: FeedbackMode;
  first: Sampling;
  reflection: Sampling;
  retry: Sampling;
  budget: BudgetLimits;
  seed: number;
  now: () => number;
  firstAnswers: ((item: TaskItem<R>) => ModelCall | undefined) | undefined;
  requestFormat: ((item: TaskItem<R>) => Pick<CallSampling, "responseFormat" | "tools">) | undefined;
}

/** A call's place in a run, from which its sampling seed derives: the first answer has no instruction or sample. */
interface CallPlace {
  instruction: string | null;
  sample: number | null;
  role: "first" | "reflection" | "retry";
}

/** The sampling seed of a call: a hash of the run seed, the item id, the instruction id, the sample index and the role. */
export function callSeed(runSeed: number, itemId: string, place: CallPlace): number {
  return hash32(JSON.stringify([runSeed, itemId, place.instruction, place.sample, place.role]));
}

/** `k` instructions of the pool drawn without replacement, seeded by the run seed and the item id (so a resume draws the same). */
export function sampleInstructions(pool: readonly ReflectionInstruction[], k: number, runSeed: number, itemId: string): ReflectionInstruction[] {
  const random = mulberry32(hash32(JSON.stringify([runSeed, itemId, "instructions"])));
  const order = [...pool];
  for (let i = 0; i < Math.min(k, order.length); i++) {
    const j = randomInt(random, i, order.length - 1);
    [order[i], order[j]] = [order[j] as ReflectionInstruction, order[i] as ReflectionInstruction];
  }
  return order.slice(0, k);
}

/** The line appended to the task's prompt for a first answer: think, then answer in the task's own format. */
export const thoughtRequest = 'Think first: write "Thought:" and your reasoning, then give your answer in the format asked for above.';

/** The task's prompt with `thoughtRequest` added to its last user message. */
export function firstAnswerPrompt(taskPrompt: readonly ChatMessage[]): ChatMessage[] {
  const last = taskPrompt.findLastIndex((m) => m.role === "user");
  return taskPrompt.map((m, i) => (i === last ? { ...m, content: `${m.content}\n\n${thoughtRequest}` } : { ...m }));
}

/** The user message after a failed first answer: the failure signal, then the instruction. */
export function instructedReflectionRequest(feedbackShown: string, instruction: ReflectionInstruction): string {
  return `${feedbackShown}\n\nReflect on what went wrong, following this instruction:\n${instruction.text}`;
}

async function generateItem<R>(setup: ItemSetup<R>, item: TaskItem<R>, signal: AbortSignal): Promise<ReflectionDataItem<R>> {
  const { model, task } = setup;
  const started = setup.now();
  const scope: CallScope = { budget: new Budget(setup.budget, { now: setup.now, scope: "item" }), tracer: noopTracer, signal, now: setup.now };
  const calls: ModelCall[] = [];
  const call = async (role: CallRole, place: CallPlace, messages: readonly ChatMessage[], sampling: CallSampling, conversation: string, extends_?: ModelCall): Promise<ModelCall> => {
    const result = await callModel({ model, role, messages, sampling, seed: callSeed(setup.seed, item.id, place), sessionKey: `${item.id}#${conversation}`, spanName: place.role, extends: extends_ }, scope);
    calls.push(result);
    return result;
  };
  let first: { call: ModelCall; verdict: Verdict } | undefined;
  let feedbackShown: string | undefined;
  let instructions: ReflectionInstruction[] = [];
  const reflections: ReflectionSample[] = [];
  let error: EpisodeError | undefined;
  try {
    const recorded = setup.firstAnswers?.(item);
    const prompt = recorded?.messages.map((m) => ({ ...m })) ?? firstAnswerPrompt(task.prompt(item.record));
    const firstCall = recorded ?? (await call("attempt", { instruction: null, sample: null, role: "first" }, prompt, setup.first, "first"));
    first = { call: firstCall, verdict: await verifyOutput(task, item.record, firstCall.output, partsOf(firstCall)) };
    if (first.verdict.correct === false) {
      feedbackShown = feedbackMessage({ pass: false, feedback: first.verdict.feedback }, setup.feedback);
      instructions = [...sampleInstructions(setup.pool, setup.k, setup.seed, item.id), ...setup.own];
      for (const instruction of instructions) {
        for (let sample = 0; sample < setup.samples; sample++) {
          // Each sample is its own conversation (and KV-cache session): the embedded model's outputs then do not
          // depend on which sample ran before it.
          const conversation = `${instruction.id}#${sample}`;
          const messages = afterFailure(prompt, firstCall, feedbackShown, instructedReflectionRequest(feedbackShown, instruction));
          const reflection = await call("reflection", { instruction: instruction.id, sample, role: "reflection" }, messages, setup.reflection, conversation, firstCall);
          const entry: ReflectionSample = { instruction: instruction.id, sample, reflection };
          reflections.push(entry);
          entry.retry = await call("attempt", { instruction: instruction.id, sample, role: "retry" }, retryTurn(messages, reflection.output, prompt), { ...setup.retry, ...setup.requestFormat?.(item) }, conversation, reflection);
          entry.verdict = await verifyOutput(task, item.record, entry.retry.output, partsOf(entry.retry));
        }
      }
    }
  } catch (caught) {
    // Interruptions and bugs end the run; a model failure or a spent budget is this item's outcome.
    if (signal.aborted || !ReflectkitError.isInstance(caught)) throw caught;
    error = episodeError(caught);
  }
  return {
    id: item.id,
    task: task.name,
    model: model.modelId,
    record: item.record,
    ...(first === undefined ? {} : { first }),
    ...(feedbackShown === undefined ? {} : { feedbackShown }),
    instructions: instructions.map((i) => i.id),
    reflections,
    ...(error === undefined ? {} : { error }),
    usage: {
      promptTokens: sum(calls, (c) => c.usage.promptTokens),
      evaluatedPromptTokens: sum(calls, (c) => c.usage.evaluatedPromptTokens),
      completionTokens: sum(calls, (c) => c.usage.completionTokens),
      calls: calls.length,
    },
    ms: setup.now() - started,
  };
}

/** The parts of a reply a verifier judges besides its text: its tool calls, when it made any. */
function partsOf(call: ModelCall): ReplyParts | undefined {
  return call.toolCalls === undefined ? undefined : { toolCalls: call.toolCalls };
}

function checkItemLine(value: unknown): void {
  const line = value as Partial<ReflectionDataItem> | null;
  if (typeof line?.id !== "string" || !Array.isArray(line.reflections) || !Array.isArray(line.instructions)) throw new Error("not a reflection-data item (no id, instructions or reflections)");
}

/** The figures of `summary.json` over the items of a run. */
export function summarizeReflectionData(items: readonly ReflectionDataItem[], timing: { wallSeconds: number; resumed: number }): ReflectionDataSummary {
  const firstCorrect = items.filter((i) => i.first?.verdict.correct === true).length;
  const samples = items.flatMap((i) => i.reflections);
  const retried = samples.filter((s) => s.verdict !== undefined);
  const retriesCorrect = retried.filter((s) => s.verdict?.correct === true).length;
  const byInstruction: Record<string, { correct: number; total: number }> = {};
  for (const sample of retried) {
    const entry = (byInstruction[sample.instruction] ??= { correct: 0, total: 0 });
    entry.total++;
    if (sample.verdict?.correct === true) entry.correct++;
  }
  return {
    items: items.length,
    first_correct: firstCorrect,
    first_accuracy: items.length === 0 ? 0 : firstCorrect / items.length,
    failures: items.filter((i) => i.first?.verdict.correct === false).length,
    unjudged: items.filter((i) => i.first !== undefined && i.first.verdict.correct === null).length,
    errors: items.filter((i) => i.error !== undefined).length,
    reflections: samples.length,
    retries: retried.length,
    retries_correct: retriesCorrect,
    retries_correct_share: retried.length === 0 ? null : retriesCorrect / retried.length,
    by_instruction: Object.fromEntries(Object.entries(byInstruction).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    usage: {
      prompt_tokens: sum(items, (i) => i.usage.promptTokens),
      evaluated_prompt_tokens: sum(items, (i) => i.usage.evaluatedPromptTokens),
      completion_tokens: sum(items, (i) => i.usage.completionTokens),
      calls: sum(items, (i) => i.usage.calls),
    },
    wall_seconds: timing.wallSeconds,
    resumed_items: timing.resumed,
  };
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}
