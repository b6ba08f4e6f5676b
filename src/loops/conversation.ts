import type { ChatMessage, ToolCall } from "../models/language-model.js";
import { callsAsText } from "../models/prompted-tools.js";
import { reflectionRequest, retryRequest } from "./feedback.js";
import { retryWithoutReflectionAsk } from "./reflection-control.js";

/**
 * The conversation a model sees after a failed attempt, built in one place for every caller: the loops
 * (reflect-retry, cascade), data generation and RRR training. Training on a prompt the evaluation never shows would
 * be a silent bug, so none of them assembles these turns itself.
 */

/** A model's reply as the next turn of its conversation keeps it: the text and the tool calls it made, if any. */
export interface Reply {
  output: string;
  toolCalls?: readonly ToolCall[] | undefined;
}

/**
 * An attempt as the next turn of its conversation sees it: the text, then its tool calls written out. The calls go
 * back as text, not as `tool_calls`: an API that receives tool calls expects tool results next, and there are none.
 */
export function replyText(reply: Reply): string {
  return callsAsText(reply.output, reply.toolCalls);
}

/**
 * Where the feedback on a failed attempt enters the conversation (`--feedback-as`); reported to move self-correction
 * by tens of points, so it is a condition of a run, never a detail of a prompt.
 * - `user` (the default, and the only placement before the control): the feedback opens the user message that asks
 *   for the reflection (or, with no reflection, for the retry).
 * - `tool`: the feedback as a checker's tool result after the attempt. Departure: not a `tool` turn, which neither
 *   backend can take honestly here — Chat Completions accepts a tool message only as the answer to an assistant
 *   `tool_calls` entry the attempt never made, and node-llama-cpp's chat history has no tool-result item
 *   outside a function call of the model's. So the result is a delimited `<tool_result name="checker">` block that
 *   opens the user turn, the same bytes on every backend.
 * - `system`: the feedback alone as a system message, then the user message with the request. A system message after
 *   the first is rendered as such by ChatML templates (SmolLM2, Qwen); node-llama-cpp folds it into a user turn for a
 *   template that refuses one, and an HTTP server with such a template may reject the request.
 */
export type FeedbackPlacement = "user" | "tool" | "system";

export const feedbackPlacements: readonly FeedbackPlacement[] = ["user", "tool", "system"];

/** The feedback as the checker's tool result (`tool` placement); tags in it that would close the block are dropped. */
export function toolResult(feedbackShown: string): string {
  return `<tool_result name="checker">\n${feedbackShown.replace(/<\/?tool_result\b[^>]*>/giu, "")}\n</tool_result>`;
}

/**
 * The messages after a failed attempt that carry its feedback and `ask` (the request without the feedback: to reflect,
 * to write a lesson, to retry), by placement (see `FeedbackPlacement`). `user`: one message, the feedback, a blank
 * line, the ask — the bytes every run before the control saw.
 */
export function feedbackTurn(feedbackShown: string, ask: string, placement: FeedbackPlacement = "user"): ChatMessage[] {
  switch (placement) {
    case "user":
      return [{ role: "user", content: `${feedbackShown}\n\n${ask}` }];
    case "tool":
      return [{ role: "user", content: `${toolResult(feedbackShown)}\n\n${ask}` }];
    case "system":
      return [{ role: "system", content: feedbackShown }, { role: "user", content: ask }];
  }
}

/**
 * The conversation after a failed attempt with the feedback placed (`feedbackTurn`): the conversation the attempt
 * answered, the attempt (tool calls included, `replyText`), then the feedback and `ask`. The loops build their
 * reflection, lesson and retry requests through it.
 */
export function afterFeedback(conversation: readonly ChatMessage[], attempt: Reply, feedbackShown: string, ask: string, placement: FeedbackPlacement = "user"): ChatMessage[] {
  return [...conversation, { role: "assistant", content: replyText(attempt) }, ...feedbackTurn(feedbackShown, ask, placement)];
}

/**
 * The conversation after a failed attempt, up to the model's reflection: the conversation the attempt answered, the
 * attempt (tool calls included, `replyText`), then `request` — by default the reflection request opened by the
 * feedback (`reflectionRequest`); data generation passes its instructed variant. The `user` placement of
 * `afterFeedback`, for a request that already carries its feedback.
 */
export function afterFailure(conversation: readonly ChatMessage[], attempt: Reply, feedbackShown: string, request: string = reflectionRequest(feedbackShown)): ChatMessage[] {
  return [...conversation, { role: "assistant", content: replyText(attempt) }, { role: "user", content: request }];
}

/** The conversation of the retry: the reflection conversation, the reflection's text, then the retry request. */
export function retryTurn(reflectionConversation: readonly ChatMessage[], reflection: string, taskPrompt: readonly ChatMessage[]): ChatMessage[] {
  return [...reflectionConversation, { role: "assistant", content: reflection }, { role: "user", content: retryRequest(taskPrompt) }];
}

/**
 * The retry's conversation when no reflection is made (`--reflection none`): the attempt, then the feedback and the
 * retry request — with the `user` placement one user message, `retryWithoutReflection`.
 */
export function retryWithoutReflectionTurn(conversation: readonly ChatMessage[], attempt: Reply, feedbackShown: string, taskPrompt: readonly ChatMessage[], placement: FeedbackPlacement = "user"): ChatMessage[] {
  return afterFeedback(conversation, attempt, feedbackShown, retryWithoutReflectionAsk(taskPrompt), placement);
}
