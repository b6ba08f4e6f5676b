import { RequestFieldError } from "../errors.js";
import type { BudgetLimits } from "../loops/budget.js";
import { replyText } from "../loops/conversation.js";
import type { CallSampling } from "../loops/episode-run.js";
import type { FeedbackMode } from "../loops/feedback.js";
import type { StopCondition } from "../loops/stop.js";
import { requestMemoryLimits, type MemoryAsk } from "../loops/request-memory.js";
import { MEMORY_KEY } from "../memory/request-lesson-store.js";
import { resolveStrategy, StrategyOptionError, type ResolvedStrategy, type StrategyChoices, type StrategyOption } from "../loops/strategies.js";
import type { ChatMessage, ToolCall, ToolDefinition } from "../models/language-model.js";
import type { RecordedRequestOptions, RequestCheckSpec } from "../critics/request/request-task.js";
import { refuseInheritedNames } from "./field-names.js";
import { isRecord } from "../util/is-record.js";

/** What a request may ask of the reflected path at most; the server's `GatewayLimits` supply these. */
export interface RequestBounds {
  /** Largest `reflect.max_turns`. */
  maxTurns: number;
  /** Largest `reflect.budget.*` a request may ask; also the budget of a request that names none. */
  budget: { tokens: number; calls: number; seconds: number };
  /** `max_tokens` of a request that sets none. */
  defaultMaxTokens: number;
}

/** The `reflect` extension object of a request, validated. */
export interface ReflectOptions {
  /** Most attempts (`reflect.max_turns`, default 2). */
  maxTurns: number;
  /** `reflect.feedback`: `detailed` (default) or `binary`. */
  feedback: FeedbackMode;
  /** `reflect.stop` parsed; undefined leaves the cascade's default (`verified`); `none` is `[]`. */
  stopWhen?: StopCondition[];
  /** `reflect.budget`, each limit no larger than the gateway's cap, the caps where the request names none. */
  budget: BudgetLimits;
  /** `reflect.judge`: one of the judge specs the gateway was started with. */
  judge?: string;
  /** `reflect.reflection_max_tokens`: the token limit of a reflection (and of a judge's critique). */
  reflectionMaxTokens?: number;
  /**
   * `reflect.on_failure`: what the client gets when the returned attempt failed its checks — `return` (the default:
   * the attempt, with `reflect.passed: false` and `x-reflect-passed: false`) or `error` (a 422 naming the checks, as
   * Instructor raises after its last retry, so an application never mistakes a failed answer for one).
   */
  onFailure: "return" | "error";
  /** `reflect.stop` as the request wrote it (what a record keeps to replay it). */
  stopSpec?: string;
  /** `reflect.arm`: run on this arm whatever the canary says (`reflect replay --arm`). */
  arm?: "base" | "adapter";
  /** `reflect.arm_key`: what the canary hashes to pick the arm, so one user or conversation stays in one arm. */
  armKey?: string;
  /**
   * `reflect.memory: { key, lessons? }`: lessons recalled under the application's key join the conversation as quoted
   * notes before the first draft, and the episode's reflections are recorded under it (src/loops/request-memory.ts).
   */
  memory?: MemoryAsk;
}

/** A chat-completion request as the gateway runs it (reflected, or passed through to an embedded upstream). */
export interface ChatRequest {
  /** The conversation, text only: developer → system, tool results and assistant tool calls written as text. */
  messages: ChatMessage[];
  /** What every attempt asks for: sampling, and the request's output format and tools. */
  sampling: CallSampling;
  seed?: number;
  stream: boolean;
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The checks the request carries (`response_format` json_schema, `tools`, `reflect.task`/`tests`/`regex`). */
  checks: RequestCheckSpec;
  /** `tool_choice` is `required` or names a function: a reply without a tool call fails the tools check. */
  toolChoiceRequired: boolean;
  /** Present when the body has a `reflect` object: the request runs the cascade. */
  reflect?: ReflectOptions;
  /**
   * Request fields the dialect's answer repeats, as its `parse` read them (a Responses object echoes `instructions`,
   * `tools`, `temperature`, …); the gateway passes them on as `CompletionMeta.echo`. Absent on chat.
   */
  echo?: Readonly<Record<string, unknown>>;
}

/** Top-level fields the gateway reads. */
const usedFields = new Set(["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "n", "stream", "stream_options", "response_format", "tools", "tool_choice", "reflect"]);
/** Fields accepted and ignored: they do not change what the model writes. */
const ignoredFields = new Set(["user", "metadata", "store", "parallel_tool_calls", "service_tier", "safety_identifier", "prompt_cache_key"]);
/** Fields with an effect the gateway cannot honour: accepted only at their neutral value. */
const neutralFields: FieldRules["neutral"] = new Map([
  ["frequency_penalty", { neutral: (v: unknown) => v === 0 }],
  ["presence_penalty", { neutral: (v: unknown) => v === 0 }],
  ["logprobs", { neutral: (v: unknown) => v === false }],
  ["logit_bias", { neutral: (v: unknown) => isRecord(v) && Object.keys(v).length === 0 }],
]);
const reflectFields = new Set(["max_turns", "feedback", "stop", "budget", "task", "item", "tests", "regex", "judge", "reflection_max_tokens", "on_failure", "memory", "arm", "arm_key"]);
/** Longest `reflect.arm_key` (and `x-reflect-arm-key` header). */
export const ARM_KEY_CHARS = 256;
const budgetFields = new Set(["tokens", "calls", "seconds"]);

/**
 * What a dialect says of the top-level fields of a body: read, ignored, accepted at a neutral value, or refused. Sets
 * and maps, never ordinary objects: a field named `constructor` or `__proto__` must find no rule (src/serve/field-names.ts).
 */
export interface FieldRules {
  used: ReadonlySet<string>;
  /** Accepted and ignored: they do not change what the model writes. */
  ignored: ReadonlySet<string>;
  /** Accepted only at their neutral value; `why` is the refusal otherwise (default: not supported but at neutral). */
  neutral?: ReadonlyMap<string, { neutral: (value: unknown) => boolean; why?: string }>;
  /** Refused whatever their value, with the reason (checked before `neutral`). */
  refused?: ReadonlyMap<string, string>;
}

/** Refuses the first top-level field `rules` do not accept (null counts as absent), naming it. */
export function screenFields(body: Record<string, unknown>, rules: FieldRules): void {
  for (const [key, value] of Object.entries(body)) {
    if (value === null || value === undefined || rules.used.has(key) || rules.ignored.has(key)) continue;
    const refused = rules.refused?.get(key);
    if (refused !== undefined) throw new RequestFieldError(key, refused);
    const rule = rules.neutral?.get(key);
    if (rule === undefined) throw new RequestFieldError(key, "is not supported by the gateway; remove it");
    if (!rule.neutral(value)) throw new RequestFieldError(key, rule.why ?? "is not supported by the gateway except at its neutral value; remove it");
  }
}

/**
 * Parses and validates a chat-completion body. Every problem is a `RequestFieldError` naming the field as the caller
 * wrote it (`messages[2].content[0]`, `reflect.budget.calls`), which the server answers with 400.
 */
export function parseChatRequest(body: unknown, bounds: RequestBounds): ChatRequest {
  if (!isRecord(body)) throw new RequestFieldError("body", "must be a JSON object");
  screenFields(body, { used: usedFields, ignored: ignoredFields, neutral: neutralFields });
  const messages = parseMessages(body.messages);
  const maxTokens = optionalInt(body, "max_completion_tokens", 1) ?? optionalInt(body, "max_tokens", 1) ?? bounds.defaultMaxTokens;
  const temperature = optionalNumber(body, "temperature", 0, 2);
  const topP = optionalNumber(body, "top_p", 0, 1);
  const seed = optionalInt(body, "seed", Number.MIN_SAFE_INTEGER);
  const stop = parseStop(body.stop);
  const n = optionalInt(body, "n", 1);
  if (n !== undefined && n !== 1) throw new RequestFieldError("n", "only n = 1 is supported by the gateway");
  const stream = optionalBoolean(body, "stream") ?? false;
  const includeUsage = parseStreamOptions(body.stream_options);
  const format = parseResponseFormat(body.response_format);
  const { tools, toolChoiceRequired } = parseTools(body.tools, body.tool_choice);
  const reflect = body.reflect === undefined || body.reflect === null ? undefined : parseReflect(body.reflect, bounds);
  const reflectSpec = isRecord(body.reflect) ? body.reflect : {};
  const checks: RequestCheckSpec = {
    ...(format.schema === undefined ? {} : { schema: format.schema }),
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoiceRequired ? { toolsRequired: true } : {}),
    ...checkFields(reflectSpec),
  };
  const sampling: CallSampling = {
    maxTokens,
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    ...(stop === undefined ? {} : { stop }),
    ...(format.responseFormat === undefined ? {} : { responseFormat: format.responseFormat }),
    ...(tools === undefined ? {} : { tools }),
  };
  return { messages, sampling, ...(seed === undefined ? {} : { seed }), stream, includeUsage, checks, toolChoiceRequired, ...(reflect === undefined ? {} : { reflect }) };
}

/** Whether a body asks for reflection (has a `reflect` object); anything else is passed through. */
export function asksForReflection(body: unknown): boolean {
  return isRecord(body) && body.reflect !== undefined && body.reflect !== null;
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw new RequestFieldError("messages", "must be a non-empty array of messages");
  return value.map((message, i) => parseMessage(message, `messages[${i}]`));
}

function parseMessage(value: unknown, field: string): ChatMessage {
  if (!isRecord(value)) throw new RequestFieldError(field, "must be an object with role and content");
  refuseInheritedNames(value, field);
  const role = value.role;
  const content = () => messageText(value.content, `${field}.content`);
  switch (role) {
    case "system":
    case "developer":
      return { role: "system", content: content() };
    case "user":
      return { role: "user", content: content() };
    case "assistant": {
      const calls = parseToolCalls(value.tool_calls, `${field}.tool_calls`);
      const text = value.content === null || value.content === undefined ? "" : content();
      // The same text form the loop gives its own tool calls when it writes an attempt back (`replyText`).
      return { role: "assistant", content: replyText({ output: text, toolCalls: calls }) };
    }
    case "tool": {
      const id = typeof value.tool_call_id === "string" ? ` id="${value.tool_call_id}"` : "";
      return { role: "user", content: `<tool_response${id}>\n${content()}\n</tool_response>` };
    }
    default:
      throw new RequestFieldError(`${field}.role`, "must be system, developer, user, assistant or tool");
  }
}

/** A message's content as text: a string, or an array of text parts. Images, audio and files are refused. */
function messageText(value: unknown, field: string): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) throw new RequestFieldError(field, "must be a string or an array of text parts");
  return value
    .map((part, j) => {
      const at = `${field}[${j}]`;
      if (!isRecord(part)) throw new RequestFieldError(at, "must be a content part object");
      refuseInheritedNames(part, at);
      if (part.type === "text" && typeof part.text === "string") return part.text;
      if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
      throw new RequestFieldError(at, `content parts of type ${JSON.stringify(part.type)} are not supported; send text parts only`);
    })
    .join("");
}

function parseToolCalls(value: unknown, field: string): ToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new RequestFieldError(field, "must be an array");
  return value.map((call, i) => {
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string") {
      throw new RequestFieldError(`${field}[${i}]`, "must be { id, type: \"function\", function: { name, arguments } }");
    }
    refuseInheritedNames(call, `${field}[${i}]`);
    refuseInheritedNames(fn, `${field}[${i}].function`);
    return { id: typeof call.id === "string" ? call.id : `call_${i}`, name: fn.name, arguments: fn.arguments };
  });
}

function parseStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === "string" && s !== "")) {
    throw new RequestFieldError("stop", "must be a non-empty string or an array of up to 4 non-empty strings");
  }
  return list as string[];
}

function parseStreamOptions(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (!isRecord(value)) throw new RequestFieldError("stream_options", "must be an object");
  refuseInheritedNames(value, "stream_options");
  const include = value.include_usage;
  if (include !== undefined && typeof include !== "boolean") throw new RequestFieldError("stream_options.include_usage", "must be a boolean");
  return include === true;
}

function parseResponseFormat(value: unknown): { schema?: RequestCheckSpec["schema"]; responseFormat?: CallSampling["responseFormat"] } {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new RequestFieldError("response_format", "must be an object with a type");
  refuseInheritedNames(value, "response_format");
  if (value.type === "text") return {};
  // JSON mode: any JSON object; the upstream is asked for it, and no schema check applies.
  if (value.type === "json_object") return { responseFormat: { type: "json", schema: { type: "object" } } };
  if (value.type !== "json_schema") throw new RequestFieldError("response_format.type", "must be text, json_object or json_schema");
  const spec = value.json_schema;
  if (!isRecord(spec)) throw new RequestFieldError("response_format.json_schema", "must be an object { name, schema }");
  // The schema itself is free-form: a property may be called `constructor`.
  refuseInheritedNames(spec, "response_format.json_schema");
  if (!isRecord(spec.schema)) throw new RequestFieldError("response_format.json_schema.schema", "must be a JSON schema object");
  if (spec.name !== undefined && typeof spec.name !== "string") throw new RequestFieldError("response_format.json_schema.name", "must be a string");
  const schema = spec.schema;
  return { schema: { ...(spec.name === undefined ? {} : { name: spec.name as string }), schema }, responseFormat: { type: "json", schema } };
}

function parseTools(value: unknown, choice: unknown): { tools?: ToolDefinition[]; toolChoiceRequired: boolean } {
  if (value === undefined || value === null) {
    if (choice !== undefined && choice !== null && choice !== "none" && choice !== "auto") throw new RequestFieldError("tool_choice", "needs tools");
    return { toolChoiceRequired: false };
  }
  if (!Array.isArray(value)) throw new RequestFieldError("tools", "must be an array of { type: \"function\", function: { name, parameters } }");
  const tools = value.map((tool, i): ToolDefinition => {
    const at = `tools[${i}]`;
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(tool.function)) throw new RequestFieldError(at, "must be { type: \"function\", function: { name, description?, parameters? } }");
    const fn = tool.function;
    refuseInheritedNames(tool, at);
    refuseInheritedNames(fn, `${at}.function`);
    if (typeof fn.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/u.test(fn.name)) throw new RequestFieldError(`${at}.function.name`, "must be 1–64 letters, digits, _ or -");
    if (fn.description !== undefined && typeof fn.description !== "string") throw new RequestFieldError(`${at}.function.description`, "must be a string");
    if (fn.parameters !== undefined && !isRecord(fn.parameters)) throw new RequestFieldError(`${at}.function.parameters`, "must be a JSON schema object");
    return { name: fn.name, ...(fn.description === undefined ? {} : { description: fn.description as string }), ...(fn.parameters === undefined ? {} : { parameters: fn.parameters as Record<string, unknown> }) };
  });
  if (choice === undefined || choice === null || choice === "auto") return { tools, toolChoiceRequired: false };
  // No tools offered: the model answers in text and no tools check applies.
  if (choice === "none") return { toolChoiceRequired: false };
  if (choice === "required") return { tools, toolChoiceRequired: true };
  if (isRecord(choice)) refuseInheritedNames(choice, "tool_choice");
  if (isRecord(choice) && isRecord(choice.function)) refuseInheritedNames(choice.function, "tool_choice.function");
  const name = isRecord(choice) && choice.type === "function" && isRecord(choice.function) ? choice.function.name : undefined;
  const named = tools.filter((t) => t.name === name);
  if (named.length === 0) throw new RequestFieldError("tool_choice", "must be none, auto, required or { type: \"function\", function: { name } } naming one of tools");
  // A forced function: it is the only one offered, and the reply must call it.
  return { tools: named, toolChoiceRequired: true };
}

export function parseReflect(value: unknown, bounds: RequestBounds): ReflectOptions {
  if (!isRecord(value)) throw new RequestFieldError("reflect", "must be an object (send {} for the defaults)");
  for (const key of Object.keys(value)) {
    if (!reflectFields.has(key)) throw new RequestFieldError(`reflect.${key}`, `is not a reflect option; use ${[...reflectFields].join(", ")}`);
  }
  const turns = optionalInt(value, "max_turns", 1, "reflect.");
  if (turns !== undefined && turns > bounds.maxTurns) throw new RequestFieldError("reflect.max_turns", `is at most ${bounds.maxTurns} on this gateway`);
  if (value.feedback !== undefined && typeof value.feedback !== "string") throw new RequestFieldError("reflect.feedback", "must be detailed or binary");
  if (value.stop !== undefined && typeof value.stop !== "string") throw new RequestFieldError("reflect.stop", "must be a comma-separated list: verified, score>=T, unchanged, score-dropped, budget, or none");
  const reflectionMaxTokens = optionalInt(value, "reflection_max_tokens", 1, "reflect.");
  if (value.on_failure !== undefined && value.on_failure !== "return" && value.on_failure !== "error") throw new RequestFieldError("reflect.on_failure", "must be return (the failed attempt, marked passed: false) or error (a 422 with the checks)");
  // Defaults and checks are the strategies' registry's; the gateway only names its fields.
  const resolved = gatewayResolve({
    ...(turns === undefined ? {} : { turns }),
    ...(value.feedback === undefined ? {} : { feedback: value.feedback as FeedbackMode }),
    ...(value.stop === undefined ? {} : { stopWhen: value.stop as string }),
    ...(reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens }),
  });
  if (value.judge !== undefined && typeof value.judge !== "string") throw new RequestFieldError("reflect.judge", "must be a judge model spec the gateway offers (GET /v1/models)");
  if (value.task !== undefined && typeof value.task !== "string") throw new RequestFieldError("reflect.task", "must be a registered task name");
  if (value.task !== undefined && value.item === undefined) throw new RequestFieldError("reflect.item", "is required with reflect.task: the task's record to verify against");
  if (value.task === undefined && value.item !== undefined) throw new RequestFieldError("reflect.task", "is required with reflect.item");
  const tests = value.tests;
  if (tests !== undefined && typeof tests !== "string" && !(Array.isArray(tests) && tests.every((t) => typeof t === "string"))) throw new RequestFieldError("reflect.tests", "must be a string or an array of strings of Python asserts");
  const regex = value.regex;
  if (isRecord(regex)) refuseInheritedNames(regex, "reflect.regex");
  if (regex !== undefined && typeof regex !== "string" && !(isRecord(regex) && typeof regex.pattern === "string" && (regex.flags === undefined || typeof regex.flags === "string"))) {
    throw new RequestFieldError("reflect.regex", "must be a pattern string or { pattern, flags }");
  }
  if (value.arm !== undefined && value.arm !== "base" && value.arm !== "adapter") throw new RequestFieldError("reflect.arm", "must be base or adapter");
  if (value.arm_key !== undefined && (typeof value.arm_key !== "string" || value.arm_key === "" || value.arm_key.length > ARM_KEY_CHARS)) throw new RequestFieldError("reflect.arm_key", `must be a non-empty string of at most ${ARM_KEY_CHARS} characters`);
  return {
    maxTurns: resolved.turns,
    feedback: resolved.feedback,
    ...(value.stop === undefined ? {} : { stopWhen: resolved.stopWhen, stopSpec: value.stop as string }),
    budget: parseBudget(value.budget, bounds.budget),
    ...(value.judge === undefined ? {} : { judge: value.judge as string }),
    ...(reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens }),
    onFailure: value.on_failure === "error" ? "error" : "return",
    ...(value.arm === undefined ? {} : { arm: value.arm as "base" | "adapter" }),
    ...(value.arm_key === undefined ? {} : { armKey: value.arm_key as string }),
    ...(value.memory === undefined || value.memory === null ? {} : { memory: parseMemory(value.memory) }),
  };
}

/** `reflect.memory`: `{ key, lessons? }`, the key bounded in length and characters, the count in 0…`maxLessons`. */
function parseMemory(value: unknown): MemoryAsk {
  if (!isRecord(value)) throw new RequestFieldError("reflect.memory", "must be an object { key, lessons? }");
  for (const field of Object.keys(value)) if (field !== "key" && field !== "lessons") throw new RequestFieldError(`reflect.memory.${field}`, "is not a memory option; use key or lessons");
  if (typeof value.key !== "string" || !MEMORY_KEY.test(value.key)) {
    throw new RequestFieldError("reflect.memory.key", "must be 1–128 letters, digits or ._:@/+- starting with a letter or digit: the name the application files this request's lessons under");
  }
  const lessons = value.lessons ?? requestMemoryLimits.defaultLessons;
  if (typeof lessons !== "number" || !Number.isSafeInteger(lessons) || lessons < 0 || lessons > requestMemoryLimits.maxLessons) {
    throw new RequestFieldError("reflect.memory.lessons", `must be an integer from 0 to ${requestMemoryLimits.maxLessons}`);
  }
  return { key: value.key, lessons };
}

/** The request field of each option the strategies' registry names (the gateway runs the cascade). */
const fieldOf: Partial<Record<StrategyOption, string>> = {
  turns: "reflect.max_turns",
  feedback: "reflect.feedback",
  stopWhen: "reflect.stop",
  reflectionMaxTokens: "reflect.reflection_max_tokens",
  attemptMaxTokens: "max_tokens",
};

function gatewayResolve(choices: StrategyChoices): ResolvedStrategy {
  try {
    return resolveStrategy("cascade", choices);
  } catch (error) {
    if (!(error instanceof StrategyOptionError)) throw error;
    throw new RequestFieldError(fieldOf[error.option as StrategyOption] ?? "reflect", error.detail);
  }
}

/**
 * The gateway's door onto the strategies' registry: a parsed reflected request as the cascade's resolved options.
 * The attempt's limit is the request's `max_tokens`, or the gateway's own default (`gatewayCaps.attemptMaxTokens`)
 * where it sets none — the one place the gateway departs from the registry's defaults. Pure.
 */
export function resolveGatewayStrategy(chat: Pick<ChatRequest, "reflect" | "sampling">): ResolvedStrategy {
  const reflect = chat.reflect;
  if (reflect === undefined) throw new RequestFieldError("reflect", "is absent: the request is passed through, not reflected");
  return gatewayResolve({
    turns: reflect.maxTurns,
    feedback: reflect.feedback,
    ...(reflect.stopWhen === undefined ? {} : { stopWhen: reflect.stopWhen }),
    ...(reflect.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: reflect.reflectionMaxTokens }),
    attemptMaxTokens: chat.sampling.maxTokens,
  });
}

function parseBudget(value: unknown, caps: RequestBounds["budget"]): BudgetLimits {
  if (value !== undefined && !isRecord(value)) throw new RequestFieldError("reflect.budget", "must be an object { tokens?, calls?, seconds? }");
  const spec = value ?? {};
  for (const key of Object.keys(spec)) if (!budgetFields.has(key)) throw new RequestFieldError(`reflect.budget.${key}`, "is not a budget; use tokens, calls or seconds");
  const limit = (key: "tokens" | "calls" | "seconds"): number => {
    const asked = optionalInt(spec, key, 1, "reflect.budget.");
    if (asked !== undefined && asked > caps[key]) throw new RequestFieldError(`reflect.budget.${key}`, `is at most ${caps[key]} on this gateway`);
    return asked ?? caps[key];
  };
  return { tokens: limit("tokens"), calls: limit("calls"), ms: limit("seconds") * 1000 };
}

/** The check fields of the `reflect` object, as the `RequestCheckSpec` carries them. */
export function checkFields(reflect: Record<string, unknown>): RequestCheckSpec {
  const { task, item, tests, regex } = reflect;
  return {
    ...(typeof task === "string" ? { task: { name: task, item } } : {}),
    ...(tests === undefined ? {} : { tests: typeof tests === "string" ? [tests] : (tests as string[]) }),
    ...(regex === undefined ? {} : { regex: typeof regex === "string" ? { pattern: regex } : (regex as { pattern: string; flags?: string }) }),
  };
}

export function optionalInt(body: Record<string, unknown>, key: string, min: number, prefix = ""): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) throw new RequestFieldError(`${prefix}${key}`, `must be an integer ≥ ${min}`);
  return value;
}

export function optionalNumber(body: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) throw new RequestFieldError(key, `must be a number from ${min} to ${max}`);
  return value;
}

export function optionalBoolean(body: Record<string, unknown>, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new RequestFieldError(key, "must be true or false");
  return value;
}

/** A reflected request's options as its record keeps them (`RequestRecord.options`), under their Chat Completions names. */
export function recordedOptions(chat: Pick<ChatRequest, "sampling" | "seed" | "checks" | "reflect">): RecordedRequestOptions {
  const reflect = chat.reflect;
  if (reflect === undefined) throw new RequestFieldError("reflect", "is absent: only a reflected request is recorded");
  const { sampling } = chat;
  return {
    max_tokens: sampling.maxTokens,
    ...(sampling.temperature === undefined ? {} : { temperature: sampling.temperature }),
    ...(sampling.topP === undefined ? {} : { top_p: sampling.topP }),
    ...(sampling.stop === undefined ? {} : { stop: [...sampling.stop] }),
    ...(chat.seed === undefined ? {} : { seed: chat.seed }),
    ...(sampling.responseFormat !== undefined && chat.checks.schema === undefined ? { json_object: true } : {}),
    reflect: {
      max_turns: reflect.maxTurns,
      feedback: reflect.feedback,
      ...(reflect.stopSpec === undefined ? {} : { stop: reflect.stopSpec }),
      budget: {
        ...(reflect.budget.tokens === undefined ? {} : { tokens: reflect.budget.tokens }),
        ...(reflect.budget.calls === undefined ? {} : { calls: reflect.budget.calls }),
        ...(reflect.budget.ms === undefined ? {} : { seconds: Math.ceil(reflect.budget.ms / 1000) }),
      },
      ...(reflect.judge === undefined ? {} : { judge: reflect.judge }),
      ...(reflect.reflectionMaxTokens === undefined ? {} : { reflection_max_tokens: reflect.reflectionMaxTokens }),
      on_failure: reflect.onFailure,
      ...(reflect.memory === undefined ? {} : { memory: { key: reflect.memory.key, lessons: reflect.memory.lessons } }),
    },
  };
}
