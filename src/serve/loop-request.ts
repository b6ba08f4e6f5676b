/**
 * The loop's request (`ChatRequest`) and what every dialect's parse ends in: the top-level field screen, the scalar
 * readers, the `reflect` extension, and `toLoopRequest`, which builds the loop's request from a dialect-neutral form.
 * A dialect (src/serve/dialects/) reads its own fields, naming each as its client wrote it, and hands the rest here.
 */
import { RequestFieldError } from "../errors.js";
import type { BudgetLimits } from "../loops/budget.js";
import type { CallSampling } from "../loops/episode-run.js";
import type { FeedbackMode } from "../loops/feedback.js";
import type { StopCondition } from "../loops/stop.js";
import { requestMemoryLimits, type MemoryAsk } from "../loops/request-memory.js";
import { MEMORY_KEY } from "../memory/request-lesson-store.js";
import { resolveStrategy, StrategyOptionError, type ResolvedStrategy, type StrategyChoices, type StrategyOption } from "../loops/strategies.js";
import type { ChatMessage, ToolChoice, ToolDefinition } from "../models/language-model.js";
import type { RequestCheckSpec } from "../critics/request/request-task.js";
import { refuseInheritedNames } from "./field-names.js";
import { isRecord } from "../util/is-record.js";

/** What a request may ask of the reflected path at most; the server's `GatewayLimits` supply these. */
export interface RequestBounds {
  /** Largest `reflect.max_turns`. */
  maxTurns: number;
  /** Largest `reflect.budget.*` a request may ask; also the budget of a request that names none. */
  budget: { tokens: number; calls: number; seconds: number };
  /** `max_tokens` of a request that sets none, where the operator set one; absent, such a request sends none upstream. */
  defaultMaxTokens?: number;
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

/** The loop's request: a request of any dialect as the gateway runs it (reflected, or passed through to an embedded upstream). */
export interface ChatRequest {
  /** The conversation: developer → system; assistant tool calls and tool results as structured turns (`ChatMessage`). */
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
  /**
   * How hard the client asked the model to think (chat's `reasoning_effort`, Responses' `reasoning.effort`, Messages'
   * `thinking.budget_tokens` or `output_config.effort`), on one scale. Also on the attempt's sampling, sent only to a
   * model configured to take it (`send: [reasoning]`): an OpenAI-compatible upstream that takes no `reasoning_effort`
   * would refuse it.
   */
  reasoningEffort?: ReasoningEffort;
  /** The end user the client names (chat's and Responses' `user`, Messages' `metadata.user_id`); sent only as `reasoningEffort` is (`send: [user]`). */
  user?: string;
  /**
   * Tools the request offered that no upstream the gateway speaks can run (hosted and server tools), as `type` or
   * `type:name`: left out of what the upstream sees, and named in the answer's `x-reflect-dropped-tools` header.
   */
  droppedTools?: readonly string[];
}

/** A request's reasoning effort on the scale chat's `reasoning_effort` uses. */
export type ReasoningEffort = "low" | "medium" | "high";

/**
 * OpenAI's `reasoning_effort` (chat) or `reasoning.effort` (Responses) on the loop's scale: `minimal` reads as `low`,
 * `xhigh` as `high`, `none` as no effort asked; anything else is refused naming `field`.
 */
export function openAiEffort(value: unknown, field: string): ReasoningEffort | undefined {
  if (value === undefined || value === null || value === "none") return undefined;
  if (value === "minimal" || value === "low") return "low";
  if (value === "medium") return "medium";
  if (value === "high" || value === "xhigh") return "high";
  throw new RequestFieldError(field, "must be none, minimal, low, medium, high or xhigh");
}

/** Longest end-user id (`user`, `metadata.user_id`) a request may name. */
export const USER_ID_CHARS = 256;

/** An end-user id: absent, or a string of at most `USER_ID_CHARS` characters, else refused naming `field`. */
export function optionalUserId(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.length > USER_ID_CHARS) throw new RequestFieldError(field, `must be a string of at most ${USER_ID_CHARS} characters`);
  // An identifier, sent on to an upstream that takes it: no line breaks or other control characters.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u.test(value)) throw new RequestFieldError(field, "must hold no control characters or line breaks");
  return value;
}

/** The header that names the tools a translated request left out (`ChatRequest.droppedTools`). */
export const DROPPED_TOOLS_HEADER = "x-reflect-dropped-tools";

/** A dropped tool's `type` and `name` as the header names it: both bounded to header-safe characters, or refused naming the field. */
export function droppedToolLabel(tool: Record<string, unknown>, at: string, nameField = "name"): string {
  const { type } = tool;
  const name = tool[nameField];
  if (typeof type !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/u.test(type)) throw new RequestFieldError(`${at}.type`, "must be 1–64 letters, digits, _, . or -");
  if (name === undefined || name === null) return type;
  if (typeof name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/u.test(name)) throw new RequestFieldError(`${at}.${nameField}`, "must be 1–64 letters, digits, _, . or -");
  return `${type}:${name}`;
}

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
 * A request as a dialect has read it, in the loop's terms: what `toLoopRequest` builds every dialect's `ChatRequest`
 * from. Each dialect fills it from its own fields, having named any problem as its client wrote the field.
 */
export interface LoopRequestParts {
  /** The conversation (a dialect's system prompt as a system turn, tool calls and tool results as structured turns). */
  messages: ChatMessage[];
  /** The token limit the request asks for; absent, the operator's default (`RequestBounds.defaultMaxTokens`) or none. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  /** The output format: the schema the reply is checked against, and what the upstream is asked for. */
  format: { schema?: RequestCheckSpec["schema"]; responseFormat?: CallSampling["responseFormat"] };
  /** The tools the upstream is offered and the tools check holds a call to. */
  tools?: ToolDefinition[];
  /**
   * The request's tool choice when it forces a call: the upstream is asked for it, and a reply without a call fails the
   * tools check. Absent: `auto` (or `none`, with no tools).
   */
  toolChoice?: ToolChoice;
  stream: boolean;
  includeUsage: boolean;
  /** The body's `reflect` member as sent; absent or null, the request is not reflected. */
  reflect: unknown;
  /** Request fields the dialect's answer repeats (`ChatRequest.echo`). */
  echo?: Readonly<Record<string, unknown>>;
  /** `ChatRequest.reasoningEffort`. */
  reasoningEffort?: ReasoningEffort;
  /** `ChatRequest.user`. */
  user?: string;
  /** `ChatRequest.droppedTools`; empty is the same as absent. */
  droppedTools?: readonly string[];
}

/**
 * The loop's request from a dialect's reading: sampling and checks from the format and tools, the `reflect` extension
 * validated (`parseReflect`, its fields named `reflect.*` in every dialect) and its check fields. The one assembly the
 * three dialects end in.
 */
export function toLoopRequest(parts: LoopRequestParts, bounds: RequestBounds): ChatRequest {
  const { format, tools, toolChoice, seed, echo, reasoningEffort, user, droppedTools } = parts;
  const toolChoiceRequired = toolChoice !== undefined;
  const maxTokens = parts.maxTokens ?? bounds.defaultMaxTokens;
  const reflect = parts.reflect === undefined || parts.reflect === null ? undefined : parseReflect(parts.reflect, bounds);
  const checks: RequestCheckSpec = {
    ...(format.schema === undefined ? {} : { schema: format.schema }),
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoiceRequired ? { toolsRequired: true } : {}),
    ...checkFields(isRecord(parts.reflect) ? parts.reflect : {}),
  };
  const sampling: CallSampling = {
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(parts.temperature === undefined ? {} : { temperature: parts.temperature }),
    ...(parts.topP === undefined ? {} : { topP: parts.topP }),
    ...(parts.stop === undefined ? {} : { stop: parts.stop }),
    ...(format.responseFormat === undefined ? {} : { responseFormat: format.responseFormat }),
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoice === undefined || tools === undefined ? {} : { toolChoice }),
    // On the attempt's call only; each model's upstream sends them only where its config says it takes them (`send`).
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(user === undefined ? {} : { user }),
  };
  return {
    messages: parts.messages,
    sampling,
    ...(seed === undefined ? {} : { seed }),
    stream: parts.stream,
    includeUsage: parts.includeUsage,
    checks,
    toolChoiceRequired,
    ...(reflect === undefined ? {} : { reflect }),
    ...(echo === undefined ? {} : { echo }),
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(user === undefined ? {} : { user }),
    ...(droppedTools === undefined || droppedTools.length === 0 ? {} : { droppedTools }),
  };
}

/** Whether a body asks for reflection (has a `reflect` object); anything else is passed through. */
export function asksForReflection(body: unknown): boolean {
  return isRecord(body) && body.reflect !== undefined && body.reflect !== null;
}

/** The `reflect` extension object, validated against the gateway's bounds; every problem names its `reflect.*` field. */
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

/** The cascade resolved from a request's choices; a registry refusal is a `RequestFieldError` naming the request field. */
export function gatewayResolve(choices: StrategyChoices): ResolvedStrategy {
  try {
    return resolveStrategy("cascade", choices);
  } catch (error) {
    if (!(error instanceof StrategyOptionError)) throw error;
    throw new RequestFieldError(fieldOf[error.option as StrategyOption] ?? "reflect", error.detail);
  }
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

/**
 * Content as text: a string, or an array of text parts, each of one of `textTypes` (its `text`) or a refusal (its
 * `refusal`). Any other part (an image, audio, a file) is refused naming it and `accepted`, the parts to send instead.
 */
export function textOfParts(value: unknown, field: string, textTypes: readonly string[], accepted: string): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) throw new RequestFieldError(field, "must be a string or an array of text parts");
  return value
    .map((part, j) => {
      const at = `${field}[${j}]`;
      if (!isRecord(part)) throw new RequestFieldError(at, "must be a content part object");
      refuseInheritedNames(part, at);
      if (typeof part.type === "string" && textTypes.includes(part.type) && typeof part.text === "string") return part.text;
      if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
      throw new RequestFieldError(at, `content parts of type ${JSON.stringify(part.type)} are not supported${accepted}`);
    })
    .join("");
}
