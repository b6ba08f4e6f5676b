import { answerDecision, type AnswerDecision } from "../loops/answer-decision.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import type { Episode, ModelCall } from "../loops/types.js";
import type { FinishReason, TokenUsage, ToolCall } from "../models/language-model.js";

/** OpenAI's error types; the gateway uses these four. */
export type ErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "server_error";

/** What identifies a completion: its id, creation time (epoch seconds) and the model that wrote it. */
export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
  /** The request fields a dialect's answer repeats, from `ChatRequest.echo` (the Responses object's `tools`, `instructions`, …). */
  echo?: Readonly<Record<string, unknown>>;
}

/** The reply a completion carries: the text, the tool calls, why generation ended. */
export interface CompletionReply {
  text: string;
  toolCalls?: readonly ToolCall[] | undefined;
  finishReason: FinishReason;
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** The `reflect` extension object of a reflected response (and of the last chunk of a streamed one). */
export interface ReflectExtension {
  /** Attempts made. */
  attempts: number;
  /**
   * What happened to the returned answer (`answerDecision`, the words of every door): `verified` (it passed its
   * checks), `failed` (no attempt passed; it is the best failing attempt, the earlier on a tie), `unjudged` (no check
   * could judge it).
   */
  decision: AnswerDecision;
  /** An earlier attempt than the last was returned. */
  rolled_back: boolean;
  /** Why the loop stopped: `verified`, `turns:N`, `budget:<kind>`, `error`, … */
  stopped_by: string;
  /** The turn of the returned attempt. */
  selected: number;
  /** Whether the returned attempt passed its checks: true, false, or null (cannot judge). */
  passed: boolean | null;
  /** Every check the loop ran, in order, per attempt. */
  checks: Array<{ turn: number; source: string; pass: boolean | null; score: number; feedback: string }>;
  /** Tokens and calls by role: `attempt`, `reflection`, `critique` (the judge). */
  usage_by_role: Episode["usageByRole"];
  /** Set when a call failed after the returned attempt (the loop kept what it had). */
  error?: string;
}

export function chatCompletion(meta: CompletionMeta, reply: CompletionReply, usage: OpenAiUsage, reflect?: ReflectExtension): Record<string, unknown> {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message: assistantMessage(reply), logprobs: null, finish_reason: finishReason(reply) }],
    usage,
    ...(reflect === undefined ? {} : { reflect }),
  };
}

export function assistantMessage(reply: CompletionReply): Record<string, unknown> {
  const calls = reply.toolCalls ?? [];
  return {
    role: "assistant",
    content: calls.length > 0 && reply.text === "" ? null : reply.text,
    refusal: null,
    ...(calls.length === 0 ? {} : { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }),
  };
}

/** OpenAI's finish reasons: `tool_calls` when the reply called tools, `length` when it was cut, else `stop`. */
export function finishReason(reply: CompletionReply): "stop" | "length" | "tool_calls" {
  if (reply.toolCalls !== undefined && reply.toolCalls.length > 0) return "tool_calls";
  return reply.finishReason === "length" ? "length" : "stop";
}

export function openAiUsage(usage: Pick<TokenUsage, "promptTokens" | "completionTokens"> & { evaluatedPromptTokens?: number }): OpenAiUsage {
  const cached = usage.evaluatedPromptTokens === undefined ? 0 : Math.max(0, usage.promptTokens - usage.evaluatedPromptTokens);
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens, prompt_tokens_details: { cached_tokens: cached } };
}

/** The returned attempt's call of a finished episode, or undefined when it made none. */
export function selectedCall(episode: Episode): ModelCall | undefined {
  return selectedAttempt(episode)?.call;
}

/** The `reflect` extension of an episode that returned an attempt. */
export function reflectExtension(episode: Episode): ReflectExtension {
  const outcome = answerDecision(episode);
  return {
    attempts: episode.attempts.length,
    decision: outcome.decision,
    rolled_back: outcome.rolledBack,
    stopped_by: episode.stoppedBy,
    selected: episode.selected ?? 0,
    passed: outcome.passed,
    checks: episode.attempts.flatMap((a) => a.checks.map((c) => ({ turn: a.turn, source: c.source, pass: c.pass, score: c.score, feedback: c.feedback }))),
    usage_by_role: episode.usageByRole,
    ...(episode.error === undefined ? {} : { error: episode.error.message }),
  };
}

/**
 * `x-reflect-attempts`, `x-reflect-decision` (the body's `decision`: `verified`, `failed` or `unjudged`) and
 * `x-reflect-passed` (`true`, `false`, or `null` when no check could judge), for clients that drop unknown body fields.
 */
export function reflectHeaders(reflect: ReflectExtension): Record<string, string> {
  return { "x-reflect-attempts": String(reflect.attempts), "x-reflect-decision": reflect.decision, "x-reflect-passed": String(reflect.passed) };
}

/** The failed checks of the returned attempt, as one sentence for an error message. */
export function failedChecksMessage(reflect: ReflectExtension): string {
  const failed = reflect.checks.filter((c) => c.turn === reflect.selected && c.pass === false);
  const reasons = failed.map((c) => `${c.source}: ${c.feedback}`).join("; ");
  return `the answer failed its checks after ${reflect.attempts} attempt${reflect.attempts === 1 ? "" : "s"}${reasons === "" ? "" : ` — ${reasons}`}`;
}
