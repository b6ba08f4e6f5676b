/**
 * `fromAISDK`: any AI SDK language model (specification v4, the provider spec of `ai@7`, or v3, that of `ai@6`) as a
 * reflectkit `LanguageModel`, so every strategy, critic and judge runs on the providers the AI SDK reaches.
 *
 * It lives with the models, not in `ai-sdk/`, because `openModel` opens `PROVIDER:MODEL` specs through it and `ai-sdk/`
 * already imports `models/` (the reverse import would be a cycle between the folders). It imports only types from
 * `@ai-sdk/provider`, so the main entry and the gateway load no AI SDK package until such a spec is named;
 * `reflectkit/ai-sdk` re-exports it.
 */
import type { LanguageModelV3, LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FinishReason, LanguageModelV4GenerateResult, LanguageModelV4Prompt, LanguageModelV4StreamPart, LanguageModelV4StreamResult, LanguageModelV4Usage } from "@ai-sdk/provider";
import { ModelCallError, UsageError } from "../errors.js";
import { raceAbort } from "../util/abortable.js";
import { reasoningBudgetTokens, type FinishReason, type GenerateRequest, type GenerateResult, type LanguageModel, type StreamPart, type TokenLogprob, type TokenUsage, type ToolCall } from "./language-model.js";
import { alignTokenLogprobs } from "./token-texts.js";

export interface FromAISDKOptions {
  /** Most requests in flight at once that callers should keep (default 4, as for the HTTP backend). */
  maxConcurrency?: number;
  /** Id for reports (default `ai-sdk:<provider>#<modelId>`). */
  modelId?: string;
}

const DEFAULT_CONCURRENCY = 4;

/**
 * Wraps an AI SDK model. Messages become the v4 prompt, sampling maps to the call options, a JSON response format
 * becomes the provider's structured output (`responseFormat: {type: "json", schema}`), tools become function tools and
 * the reply's tool calls come back in `toolCalls`. The abort signal is passed to the provider and also raced, so a
 * provider that ignores it still rejects at once. `includeStop` cannot be honoured: providers do not say which stop
 * string matched, so `text` never ends with it.
 */
export function fromAISDK(model: LanguageModelV4 | LanguageModelV3, options: FromAISDKOptions = {}): LanguageModel {
  const version: unknown = model?.specificationVersion;
  if (version !== "v4" && version !== "v3") {
    throw new UsageError(`fromAISDK takes an AI SDK language model of specification v4 (ai@7) or v3 (ai@6); got ${describeVersion(model)} — upgrade the provider package to the version that matches ai@7`);
  }
  const maxConcurrency = options.maxConcurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new UsageError(`maxConcurrency must be a positive integer; got ${maxConcurrency}`);
  return {
    specificationVersion: "v1",
    modelId: options.modelId ?? `ai-sdk:${model.provider}#${model.modelId}`,
    maxConcurrency,
    async doGenerate(request) {
      return generateResult(await providerCall<LanguageModelV4GenerateResult>(model, "doGenerate", request), request);
    },
    async *doStream(request) {
      const opened = await providerCall<LanguageModelV4StreamResult>(model, "doStream", request);
      yield* streamParts(model, opened.stream, request.signal);
    },
    async close() {},
  };
}

/**
 * One call of the provider's `doGenerate` or `doStream` on a reflectkit request, raced against its signal; a failure is
 * the provider's error as a ModelCallError (`callError`), an abort the signal's reason. v3's call options and results
 * are the subset of v4's used here (v4 added `reasoning`, which is not set).
 */
async function providerCall<T>(model: LanguageModelV4 | LanguageModelV3, method: "doGenerate" | "doStream", request: GenerateRequest): Promise<T> {
  const signal = request.signal;
  signal?.throwIfAborted();
  try {
    const call = model[method] as (options: LanguageModelV4CallOptions) => PromiseLike<T>;
    return await raceAbort(Promise.resolve(call.call(model, callOptions(request))), signal);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw callError(model, error);
  }
}

/** The v4 call options of a reflectkit request. */
export function callOptions(request: GenerateRequest): LanguageModelV4CallOptions {
  const prompt = toPrompt(request.messages);
  return {
    prompt,
    maxOutputTokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { topP: request.topP }),
    ...(request.topK === undefined ? {} : { topK: request.topK }),
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.stop === undefined || request.stop.length === 0 ? {} : { stopSequences: [...request.stop] }),
    ...(request.responseFormat === undefined ? {} : { responseFormat: { type: "json", schema: request.responseFormat.schema } }),
    ...(request.tools === undefined || request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((t) => ({
            type: "function" as const,
            name: t.name,
            ...(t.description === undefined ? {} : { description: t.description }),
            inputSchema: t.parameters ?? { type: "object", properties: {} },
            ...(t.strict === undefined ? {} : { strict: t.strict }),
          })),
          ...(request.toolChoice === undefined ? {} : { toolChoice: request.toolChoice.type === "tool" ? { type: "tool" as const, toolName: request.toolChoice.name } : { type: "required" as const } }),
        }),
    // OpenAI's providers (chat and responses) return them in `providerMetadata.openai.logprobs` when asked so.
    ...providerOptionsOf(request),
    ...(request.signal === undefined ? {} : { abortSignal: request.signal }),
  };
}

/**
 * The provider options of a request, each under its provider's name (a provider reads only its own): OpenAI's
 * log-probs, reasoning effort and end user; Anthropic's thinking for an effort, with `reasoningBudgetTokens` of it when
 * the request's `maxTokens` is above the budget and no tool call is forced (Anthropic refuses thinking beside one) —
 * else no thinking. The provider sends the budget on top of `maxTokens`, so the answer keeps its own room.
 */
function providerOptionsOf(request: GenerateRequest): Pick<LanguageModelV4CallOptions, "providerOptions"> {
  const openai = {
    ...(request.logprobs === true ? { logprobs: true } : {}),
    ...(request.reasoningEffort === undefined ? {} : { reasoningEffort: request.reasoningEffort }),
    ...(request.user === undefined ? {} : { user: request.user }),
  };
  const budget = request.reasoningEffort === undefined ? undefined : reasoningBudgetTokens[request.reasoningEffort];
  // Anthropic refuses thinking beside a forced tool choice.
  const thinks = budget !== undefined && request.maxTokens !== undefined && request.maxTokens > budget && request.toolChoice === undefined;
  const options = {
    ...(Object.keys(openai).length === 0 ? {} : { openai }),
    ...(thinks ? { anthropic: { thinking: { type: "enabled", budgetTokens: budget } } } : {}),
  };
  return Object.keys(options).length === 0 ? {} : { providerOptions: options };
}

/**
 * The v4 prompt of a conversation: an assistant turn's tool calls as `tool-call` parts (arguments parsed, or the string
 * the model wrote when they are not JSON), a tool turn as a `tool` message with one `tool-result` part, named after the
 * call it answers (`unknown` when no earlier call has its id).
 */
function toPrompt(messages: GenerateRequest["messages"]): LanguageModelV4Prompt {
  const names = new Map<string, string>();
  return messages.map((m): LanguageModelV4Prompt[number] => {
    switch (m.role) {
      case "system":
        return { role: "system", content: m.content };
      case "user":
        return { role: "user", content: [{ type: "text", text: m.content }] };
      case "assistant": {
        const calls = (m.toolCalls ?? []).map((call) => {
          names.set(call.id, call.name);
          return { type: "tool-call" as const, toolCallId: call.id, toolName: call.name, input: parsedArguments(call.arguments) };
        });
        return { role: "assistant", content: [...(m.content === "" && calls.length > 0 ? [] : [{ type: "text" as const, text: m.content }]), ...calls] };
      }
      case "tool":
        return { role: "tool", content: [{ type: "tool-result", toolCallId: m.toolCallId, toolName: names.get(m.toolCallId) ?? "unknown", output: { type: m.isError === true ? "error-text" : "text", value: m.content } }] };
    }
  });
}

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function generateResult(result: LanguageModelV4GenerateResult, request: GenerateRequest): GenerateResult {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const part of result.content) {
    if (part.type === "text") texts.push(part.text);
    // A call the provider ran itself is not the caller's to check or run.
    else if (part.type === "tool-call" && part.providerExecuted !== true) toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
  }
  const text = request.responseFormat !== undefined && result.structuredOutputText !== undefined ? result.structuredOutputText : texts.join("");
  const logprobs = request.logprobs === true ? providerLogprobs(result.providerMetadata?.openai?.logprobs, text) : undefined;
  return {
    text,
    finishReason: mapFinishReason(result.finishReason),
    usage: mapUsage(result.usage),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    ...(logprobs === undefined ? {} : { logprobs }),
  };
}

/**
 * A provider's stream as reflectkit's parts: text deltas as they come; a tool call's input pieces (`tool-input-start`
 * and `-delta`, its first piece with id and name), or a whole `tool-call` the provider sent without pieces; the finish
 * last. Calls the provider ran itself, reasoning and metadata are left out; an `error` part is a `ModelCallError`.
 * Leaving the iteration early cancels the provider's stream.
 */
async function* streamParts(model: LanguageModelV4 | LanguageModelV3, stream: ReadableStream<LanguageModelV4StreamPart>, signal: AbortSignal | undefined): AsyncGenerator<StreamPart> {
  const reader = stream.getReader();
  const calls = new Map<string, number>();
  const skipped = new Set<string>();
  let finish: StreamPart | undefined;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await raceAbort(reader.read(), signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw callError(model, error);
      }
      if (next.done) break;
      const part = next.value;
      if (part.type === "text-delta") {
        if (part.delta !== "") yield { type: "text-delta", text: part.delta };
      } else if (part.type === "tool-input-start") {
        if (part.providerExecuted === true) skipped.add(part.id);
        else {
          calls.set(part.id, calls.size);
          yield { type: "tool-call-delta", index: calls.size - 1, id: part.id, name: part.toolName, argumentsDelta: "" };
        }
      } else if (part.type === "tool-input-delta") {
        const index = calls.get(part.id);
        if (index !== undefined && part.delta !== "") yield { type: "tool-call-delta", index, argumentsDelta: part.delta };
      } else if (part.type === "tool-call") {
        if (part.providerExecuted === true || skipped.has(part.toolCallId) || calls.has(part.toolCallId)) continue;
        calls.set(part.toolCallId, calls.size);
        yield { type: "tool-call-delta", index: calls.size - 1, id: part.toolCallId, name: part.toolName, argumentsDelta: part.input };
      } else if (part.type === "error") throw callError(model, part.error);
      else if (part.type === "finish") finish = { type: "finish", finishReason: mapFinishReason(part.finishReason), usage: mapUsage(part.usage) };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  if (finish === undefined) throw new ModelCallError(`AI SDK model ${model.provider}#${model.modelId} ended its stream without a finish; the reply is incomplete`, undefined, false);
  yield finish;
}

/**
 * The log-probs an OpenAI provider put in its metadata: `[{token, logprob}]` (chat completions) or one such list per
 * text part (responses). Undefined when there are none, they are not of that shape, or their tokens do not spell the
 * reply: other providers give none, and callers then report "not available".
 */
export function providerLogprobs(raw: unknown, text: string): TokenLogprob[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const entries: unknown[] = raw.every(Array.isArray) ? raw.flat() : raw;
  let spelled = "";
  const decoded: string[] = [];
  const logprobs: number[] = [];
  for (const entry of entries) {
    if (typeof entry !== "object" || entry === null) return undefined;
    const { token, logprob } = entry as { token?: unknown; logprob?: unknown };
    if (typeof token !== "string" || typeof logprob !== "number" || !(logprob <= 0)) return undefined;
    decoded.push((spelled += token));
    logprobs.push(logprob);
  }
  return entries.length === 0 ? undefined : alignTokenLogprobs(text, decoded, logprobs);
}

/** As the HTTP backend does: a turn ended by tool calls is "other"; content filters and interruptions too. */
export function mapFinishReason(reason: LanguageModelV4FinishReason): FinishReason {
  switch (reason.unified) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "error":
      return "error";
    default:
      return "other";
  }
}

/** Missing counts are reported as 0 rather than guessed; cache reads are prompt tokens not evaluated. */
export function mapUsage(usage: LanguageModelV4Usage): TokenUsage {
  const promptTokens = count(usage.inputTokens.total);
  const evaluated = usage.inputTokens.noCache ?? promptTokens - count(usage.inputTokens.cacheRead);
  return { promptTokens, evaluatedPromptTokens: Math.max(0, count(evaluated)), completionTokens: count(usage.outputTokens.total) };
}

function count(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

function callError(model: LanguageModelV4 | LanguageModelV3, error: unknown): ModelCallError {
  const where = `AI SDK model ${model.provider}#${model.modelId}`;
  const detail = error instanceof Error ? error.message : String(error);
  if (isAPICallError(error)) {
    return new ModelCallError(`${where} failed (${error.statusCode ?? "no status"}): ${detail}`, error.statusCode, error.isRetryable, { cause: error });
  }
  return new ModelCallError(`${where} failed: ${detail}`, undefined, false, { cause: error });
}

/**
 * `APICallError.isInstance` of `@ai-sdk/provider`, which is this test of the marker the error class sets under
 * `Symbol.for`: it holds across copies of the package (a provider may bring its own), and needs no runtime import.
 */
function isAPICallError(error: unknown): error is Error & { statusCode?: number; isRetryable: boolean } {
  const marker = Symbol.for("vercel.ai.error.AI_APICallError");
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

function describeVersion(model: unknown): string {
  if (typeof model !== "object" || model === null) return String(model);
  const version = (model as { specificationVersion?: unknown }).specificationVersion;
  return version === undefined ? "an object without specificationVersion" : `specification ${String(version)}`;
}
