/**
 * `reflectionMiddleware`: cascade reflection as AI SDK language-model middleware. The draft is checked with the call's
 * own constraints (the JSON schema of `generateObject` / `Output.object`, the tools' parameter schemas) plus the
 * caller's checks, then by an optional judge, and on failure reflected on and retried by `cascade`, the loop of
 * `reflect eval`. Streaming buffers: the whole episode runs first, then the selected attempt streams as one text block.
 */
import { randomUUID } from "node:crypto";
import type { JSONObject, LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4Middleware, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { CheckPool } from "../critics/request/check-pool.js";
import { defaultCheckPool, prepareRequestChecks } from "../critics/request/isolated-checks.js";
import type { Reply, RequestCheck } from "../critics/request/request-check.js";
import type { RequestCheckSpec, RequestRecord } from "../critics/request/request-task.js";
import { ModelCallError, UsageError } from "../errors.js";
import type { BudgetLimits } from "../loops/budget.js";
import type { RecordWriter } from "../record/record-writer.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { reflectionText } from "../loops/reflection-control.js";
import type { StopCondition } from "../loops/stop.js";
import { resolveStrategy, StrategyOptionError, type ResolvedStrategy, type StrategyOption } from "../loops/strategies.js";
import type { Check, Episode } from "../loops/types.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import type { AnswerOutcome } from "../loops/answer-decision.js";
import { runRequestEpisode } from "../loops/request-episode.js";
import { fromAISDK } from "./from-ai-sdk.js";
import { checkAsk, checkTenant, requestMemoryLimits, type MemoryAsk, type RequestMemory } from "../loops/request-memory.js";
import { LOCAL_TENANT } from "../core/tenant.js";
import type { LanguageModel } from "../models/language-model.js";
import { chatMessages, finishReasonV4, streamParts, usageV4 } from "./to-ai-sdk.js";

/** A caller's check: a request check (as the gateway builds them), or a plain function of the reply's text. */
export type MiddlewareCheck = RequestCheck | ((output: string, reply: Reply) => Check | Promise<Check>);

export interface ReflectionMiddlewareOptions {
  /** Checks after the call's own (schema, tools), cheapest first. */
  checks?: readonly MiddlewareCheck[];
  /** Most attempts (default: the cascade's in the strategies' registry, 2). */
  maxTurns?: number;
  /** Stop conditions, first that holds wins (default: the attempt passed every check); `maxTurns` always applies. */
  stopWhen?: readonly StopCondition[];
  /** What the reflection sees of a failed check (default: the cascade's, `detailed`). */
  feedback?: FeedbackMode;
  /** Limits of each call (never shared across calls). */
  budget?: BudgetLimits;
  /** Token limit of an attempt when the call sets none (default: the registry's, 256, as in `reflect eval`). */
  defaultMaxTokens?: number;
  /** Token limit of a reflection (default: the registry's, 128); reflections are greedy. A judge's is at least 160. */
  reflectionMaxTokens?: number;
  /** An LLM judge run after every deterministic check passed (a reflectkit model, or an AI SDK one via `fromAISDK`). */
  judge?: LanguageModel | LanguageModelV4;
  /** Called with every finished episode, before the result returns. */
  onEpisode?: (episode: Episode<RequestRecord>) => void | Promise<void>;
  /**
   * A durable record (`openRecordWriter`, as `reflect serve --record` uses): every episode is appended and synced
   * before the result returns; a failed write fails the call (RecordWriteError), so nothing unrecorded is returned.
   */
  recorder?: RecordWriter;
  /**
   * Where the call's own checks (its schema, its tools' parameters) compile and run: worker threads under deadlines,
   * so a catastrophic schema cannot hang the application — it is "cannot judge", naming the limit. Default: the
   * process-wide pool (`defaultCheckPool`, limits `defaultCheckPoolLimits`); a caller's own checks run in process.
   */
  checkPool?: CheckPool;
  /**
   * Request lessons, as the gateway's `reflect.memory`: before the first draft, up to `lessons` (default 3, at most 8)
   * lessons recalled under `key` join the prompt as quoted notes; after the call, its reflections are recorded under
   * `key` in the background. `key` may depend on the call (return undefined for a call that uses no memory).
   * `tenant` (default `LOCAL_TENANT`, "local") is whose lessons they are: an application that serves several clients
   * from one store names each client's tenant, so no client is shown, counts against, or evicts another's lessons
   * (a tenant's name: 1–64 letters, digits or `._-`; checked when the middleware is made).
   */
  memory?: { memory: RequestMemory; key: string | ((params: LanguageModelV4CallOptions) => string | undefined); lessons?: number; tenant?: string };
}

/** Options of the call that the loop's own settings do not replace, passed on to every model call. */
const PASSED_ON = ["providerOptions", "headers", "presencePenalty", "frequencyPenalty", "reasoning"] as const;

/** The option of the middleware each option the strategies' registry names is. */
const optionOf: Partial<Record<StrategyOption, string>> = { turns: "maxTurns", feedback: "feedback", stopWhen: "stopWhen", attemptMaxTokens: "defaultMaxTokens", reflectionMaxTokens: "reflectionMaxTokens" };

/**
 * The middleware's door onto the strategies' registry: its options (and the call's `maxOutputTokens`, which wins over
 * `defaultMaxTokens`) as the cascade's resolved options. Pure; a bad option is a UsageError naming it.
 */
export function resolveMiddlewareStrategy(options: ReflectionMiddlewareOptions, maxOutputTokens?: number): ResolvedStrategy {
  const attemptMaxTokens = maxOutputTokens ?? options.defaultMaxTokens;
  try {
    return resolveStrategy("cascade", {
      ...(options.maxTurns === undefined ? {} : { turns: options.maxTurns }),
      ...(options.feedback === undefined ? {} : { feedback: options.feedback }),
      ...(options.stopWhen === undefined ? {} : { stopWhen: options.stopWhen }),
      ...(attemptMaxTokens === undefined ? {} : { attemptMaxTokens }),
      ...(options.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: options.reflectionMaxTokens }),
    });
  } catch (error) {
    if (!(error instanceof StrategyOptionError)) throw error;
    throw new UsageError(`reflectionMiddleware: ${optionOf[error.option as StrategyOption] ?? error.option}: ${error.detail}`);
  }
}

export function reflectionMiddleware(options: ReflectionMiddlewareOptions = {}): LanguageModelV4Middleware {
  // Checked once, when the middleware is made: a bad option fails here, not on the first call.
  resolveMiddlewareStrategy(options);
  if (typeof options.memory?.key === "string") memoryAsk(options.memory, {} as LanguageModelV4CallOptions);
  const tenant = memoryTenant(options.memory);
  const custom = (options.checks ?? []).map(requestCheckOf);
  const judge = options.judge === undefined ? undefined : options.judge.specificationVersion === "v4" ? fromAISDK(options.judge) : options.judge;

  async function reflect(params: LanguageModelV4CallOptions, model: LanguageModelV4): Promise<LanguageModelV4GenerateResult> {
    const spec = checkSpec(params);
    const own = await prepareRequestChecks(spec, { pool: options.checkPool ?? defaultCheckPool(), toolChoiceRequired: spec.toolsRequired === true, client: "app", ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }) });
    const checks = [...own, ...custom];
    const resolved = resolveMiddlewareStrategy(options, params.maxOutputTokens);
    const memory = options.memory?.memory;
    const ask = memoryAsk(options.memory, params);
    const { recorder } = options;
    const { episode, outcome } = await runRequestEpisode({
      request: { messages: chatMessages(params.prompt), checks: spec },
      checks,
      door: "ai-sdk",
      strategy: resolved,
      attempt: {
        maxTokens: resolved.attemptMaxTokens,
        ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
        ...(params.topP === undefined ? {} : { topP: params.topP }),
        ...(params.topK === undefined ? {} : { topK: params.topK }),
        ...(params.stopSequences === undefined ? {} : { stop: params.stopSequences }),
        ...(spec.schema === undefined ? {} : { responseFormat: { type: "json" as const, schema: spec.schema.schema } }),
        ...(spec.tools === undefined ? {} : { tools: spec.tools }),
      },
      ...(params.seed === undefined ? {} : { seed: params.seed }),
      ...(options.budget === undefined ? {} : { budget: options.budget }),
      id: randomUUID(),
      tenant,
      ...(memory === undefined || ask === undefined ? {} : { memory: { memory, ask } }),
      ...(judge === undefined ? {} : { judge }),
      model: fromAISDK(withCallSettings(model, params)),
      ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      ...(recorder === undefined ? {} : { record: (e) => recorder.append(e) }),
    });
    await options.onEpisode?.(episode);
    const selected = selectedAttempt(episode);
    if (selected === undefined) {
      params.abortSignal?.throwIfAborted();
      throw new ModelCallError(`reflection middleware: no attempt to return (${episode.error?.message ?? episode.stoppedBy})`, episode.error?.status, false);
    }
    const call = selected.call;
    const content: LanguageModelV4Content[] = [{ type: "text", text: call.output }];
    for (const c of call.toolCalls ?? []) content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.arguments });
    return {
      content,
      finishReason: finishReasonV4({ text: call.output, finishReason: call.finishReason, usage: call.usage, ...(call.toolCalls === undefined ? {} : { toolCalls: call.toolCalls }) }),
      // The total of every call of the episode: attempts, reflections, the judge.
      usage: usageV4({ text: "", finishReason: "stop", usage: episode.usage }),
      providerMetadata: { reflectkit: episodeMetadata(episode, outcome) },
      warnings: [],
    };
  }

  return {
    specificationVersion: "v4",
    wrapGenerate: ({ params, model }) => reflect(params, model),
    async wrapStream({ params, model }) {
      const parts = streamParts(await reflect(params, model));
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

/** Whose lessons the middleware's calls read and file: the option's tenant, checked, or the local tenant. */
function memoryTenant(option: ReflectionMiddlewareOptions["memory"]): string {
  const tenant = option?.tenant ?? LOCAL_TENANT;
  try {
    checkTenant(tenant);
  } catch (error) {
    throw new UsageError(`reflectionMiddleware: memory: ${(error as Error).message}`);
  }
  return tenant;
}

/** What the call asks of memory, or undefined when it uses none; a bad key or count is a UsageError. */
function memoryAsk(option: ReflectionMiddlewareOptions["memory"], params: LanguageModelV4CallOptions): MemoryAsk | undefined {
  if (option === undefined) return undefined;
  const key = typeof option.key === "function" ? option.key(params) : option.key;
  if (key === undefined) return undefined;
  const ask = { key, lessons: option.lessons ?? requestMemoryLimits.defaultLessons };
  try {
    checkAsk(ask);
  } catch (error) {
    throw new UsageError(`reflectionMiddleware: memory: ${(error as Error).message}`);
  }
  return ask;
}

/** The checks the call itself implies: its JSON schema and its function tools. */
function checkSpec(params: LanguageModelV4CallOptions): RequestCheckSpec {
  const spec: RequestCheckSpec = {};
  if (params.responseFormat?.type === "json" && params.responseFormat.schema !== undefined) {
    spec.schema = { ...(params.responseFormat.name === undefined ? {} : { name: params.responseFormat.name }), schema: params.responseFormat.schema as Record<string, unknown> };
  }
  const tools = (params.tools ?? []).flatMap((t) => (t.type === "function" ? [{ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.inputSchema as Record<string, unknown> }] : []));
  if (tools.length > 0) spec.tools = tools;
  if (tools.length > 0 && (params.toolChoice?.type === "required" || params.toolChoice?.type === "tool")) spec.toolsRequired = true;
  return spec;
}

/** `model`, with the call's settings that the loop does not set (provider options, headers, tool choice) added to each call. */
function withCallSettings(model: LanguageModelV4, params: LanguageModelV4CallOptions): LanguageModelV4 {
  const passed: Partial<LanguageModelV4CallOptions> = {};
  for (const key of PASSED_ON) if (params[key] !== undefined) Object.assign(passed, { [key]: params[key] });
  return {
    specificationVersion: "v4",
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (call) => model.doGenerate({ ...passed, ...(call.tools !== undefined && params.toolChoice !== undefined ? { toolChoice: params.toolChoice } : {}), ...call }),
    doStream: (call) => model.doStream({ ...passed, ...call }),
  };
}

function requestCheckOf(check: MiddlewareCheck, index: number): RequestCheck {
  if (typeof check !== "function") return check;
  return { source: "custom", name: check.name === "" ? `check ${index + 1}` : check.name, run: (reply) => check(reply.text, reply) };
}

/**
 * The episode as JSON for `providerMetadata.reflectkit`: what happened to the returned answer in the gateway's words
 * (`decision`: `verified`, `failed` or `unjudged`; `passed`; `rolledBack`), then attempts with their checks,
 * reflections and the loop's own per-attempt decisions (`accept`, `continue`, `rollback`), and usage.
 */
function episodeMetadata(episode: Episode<RequestRecord>, outcome: AnswerOutcome): JSONObject {
  return JSON.parse(
    JSON.stringify({
      id: episode.id,
      strategy: episode.strategy,
      model: episode.model,
      decision: outcome.decision,
      passed: outcome.passed,
      rolledBack: outcome.rolledBack,
      selected: episode.selected,
      correct: episode.correct,
      solvedAt: episode.solvedAt,
      stoppedBy: episode.stoppedBy,
      ...(episode.error === undefined ? {} : { error: episode.error }),
      attempts: episode.attempts.map((a) => ({
        turn: a.turn,
        output: a.call.output,
        ...(a.call.toolCalls === undefined ? {} : { toolCalls: a.call.toolCalls }),
        checks: a.checks.map((c) => ({ source: c.source, pass: c.pass, score: c.score, feedback: c.feedback })),
        ...(a.reflection === undefined ? {} : { reflection: reflectionText(a.reflection) }),
        decision: a.decision,
      })),
      usage: episode.usage,
      usageByRole: episode.usageByRole,
      ms: episode.ms,
    }),
  ) as JSONObject;
}
