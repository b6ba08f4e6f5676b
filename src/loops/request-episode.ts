/**
 * A request's episode, assembled once for every door that runs one (the gateway's reflected routes, the AI SDK
 * middleware): the request's checks as a task, the lessons recalled under its key as notes, the resolved strategy with
 * the reflection's and the judge's sampling, the record's note of the lessons shown, the lessons learnt after the
 * answer, and the record written. What only one door does stays in it: the gateway's arm lease (`model` as a pin), its
 * HTTP refusals and the mapping of a failed record write; the middleware's AI SDK shapes.
 */
import type { RequestCheck } from "../critics/request/request-check.js";
import { requestTask, type RequestRecord } from "../critics/request/request-task.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import type { LanguageModel } from "../models/language-model.js";
import type { SpanHandle, Tracer } from "../telemetry/tracer.js";
import { answerDecision, type AnswerOutcome } from "./answer-decision.js";
import type { BudgetLimits } from "./budget.js";
import type { CallSampling } from "./episode-run.js";
import type { MemoryAsk, RequestMemory } from "./request-memory.js";
import { runStrategy, type ResolvedStrategy } from "./strategies.js";
import type { Episode } from "./types.js";

/** A model held for one episode, released when the strategy is done with it (the gateway's arm: its adapter pinned). */
export interface PinnedModel {
  model: LanguageModel;
  release(): void;
}

/** One request as a door parsed it, and where its episode goes. */
export interface RequestEpisodeOptions {
  /** The request as its record keeps it: the conversation the caller sent and its checks' spec (a gateway adds its dialect and options). */
  request: RequestRecord;
  /** The request's checks, compiled, cheapest first. */
  checks: readonly RequestCheck[];
  /** The task's name in the record: `gateway` or `ai-sdk`. */
  door: string;
  /** The strategy the door resolved from the registry (`resolveGatewayStrategy`, `resolveMiddlewareStrategy`). */
  strategy: ResolvedStrategy;
  /** Sampling of attempts (with the request's output format and tools); reflections and judges take theirs from `strategy`. */
  attempt: CallSampling;
  seed?: number;
  budget?: BudgetLimits;
  /** The episode's id. */
  id: string;
  /**
   * The recorded episode this one replays: its id is the item's, so the calls draw the original's sampling seeds (they
   * derive from the item's id) — on a sampled model a replay repeats the original's calls, and both arms of a paired
   * replay share their random numbers.
   */
  replayOf?: string;
  /** The gateway's arm the episode runs on, named in the record. */
  arm?: "base" | "adapter";
  /** Whose lessons the request reads and files, named in the record. */
  tenant: string;
  /** The operator's policy the request ran under (the gateway's config), named in the record. */
  policy?: string;
  /** Request lessons: recalled under `ask.key` before the first draft, learnt after the answer. */
  memory?: { memory: RequestMemory; ask: MemoryAsk };
  /** An LLM judge run after every deterministic check passed. */
  judge?: LanguageModel;
  /** The model attempts and reflections run on, or a pin taken just before the strategy runs and released after it. */
  model: LanguageModel | (() => Promise<PinnedModel>);
  signal?: AbortSignal;
  tracer?: Tracer;
  /** The span the episode's span nests under (the gateway's `gateway.request`). */
  parentSpan?: SpanHandle;
  /** What lessons are learnt from: the episode with what must not be stored blanked (the gateway's upstream key). Default: the episode. */
  redactLessons?: (episode: Episode<RequestRecord>) => Episode;
  /** Writes the finished episode before the answer returns; a failure fails the request (nothing unrecorded is returned). */
  record?: (episode: Episode<RequestRecord>) => Promise<void>;
}

/** A request's episode, and what happened to the answer it returns (`answerDecision`). */
export interface RequestEpisode {
  episode: Episode<RequestRecord>;
  outcome: AnswerOutcome;
}

/**
 * Runs one request: task → recalled lessons → strategy → the lessons shown noted in the record → lessons learnt (in
 * the background: learning never delays the answer, nor fails it) → record. A recall that fails or times out runs
 * the request without lessons (`RequestMemory.recall`); a model error ends the episode, kept as its `error`.
 */
export async function runRequestEpisode(options: RequestEpisodeOptions): Promise<RequestEpisode> {
  const { request, strategy, memory, signal } = options;
  const recalled = memory === undefined ? undefined : await memory.memory.recall(options.tenant, memory.ask, request.messages, signal);
  const task = requestTask(options.checks, options.door);
  const pinned = typeof options.model === "function" ? await options.model() : { model: options.model, release: () => {} };
  const ran = await runStrategy<RequestRecord>(strategy, {
    model: pinned.model,
    task: memory === undefined || recalled === undefined ? task : memory.memory.task(task, recalled),
    item: { id: options.replayOf ?? options.id, record: request },
    critics: options.judge === undefined ? [] : [rubricJudge<RequestRecord>(options.judge, { sampling: { maxTokens: strategy.judgeMaxTokens, temperature: 0 } })],
    attempt: options.attempt,
    reflection: { maxTokens: strategy.reflectionMaxTokens, temperature: 0 },
    ...(options.budget === undefined ? {} : { budget: options.budget }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(signal === undefined ? {} : { signal }),
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.parentSpan === undefined ? {} : { parentSpan: options.parentSpan }),
  }).finally(() => pinned.release());
  const episode = memory === undefined || recalled === undefined ? ran : memory.memory.annotate(ran, recalled);
  episode.id = options.id;
  if (options.arm !== undefined) episode.arm = options.arm;
  episode.tenant = options.tenant;
  if (options.policy !== undefined) episode.policy = options.policy;
  if (options.replayOf !== undefined) episode.replayOf = options.replayOf;
  if (memory !== undefined) memory.memory.learn(options.tenant, memory.ask, request.messages, options.redactLessons?.(episode) ?? episode);
  await options.record?.(episode);
  return { episode, outcome: answerDecision(episode) };
}
