import type { ChatMessage, ToolCall } from "../models/language-model.js";
import { reflectionRequest, retryRequest } from "./feedback.js";
import { retryWithoutReflection } from "./reflection-control.js";

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
  if (reply.toolCalls === undefined || reply.toolCalls.length === 0) return reply.output;
  const calls = reply.toolCalls.map((c) => `<tool_call>${JSON.stringify({ name: c.name, arguments: c.arguments })}</tool_call>`).join("\n");
  return reply.output === "" ? calls : `${reply.output}\n${calls}`;
}

/**
 * The conversation after a failed attempt, up to the model's reflection: the conversation the attempt answered, the
 * attempt (tool calls included, `replyText`), then `request` — by default the reflection request opened by the
 * feedback (`reflectionRequest`); data generation passes its instructed variant.
 */
export function afterFailure(conversation: readonly ChatMessage[], attempt: Reply, feedbackShown: string, request: string = reflectionRequest(feedbackShown)): ChatMessage[] {
  return [...conversation, { role: "assistant", content: replyText(attempt) }, { role: "user", content: request }];
}

/** The conversation of the retry: the reflection conversation, the reflection's text, then the retry request. */
export function retryTurn(reflectionConversation: readonly ChatMessage[], reflection: string, taskPrompt: readonly ChatMessage[]): ChatMessage[] {
  return [...reflectionConversation, { role: "assistant", content: reflection }, { role: "user", content: retryRequest(taskPrompt) }];
}

/**
 * The retry's conversation when no reflection is made (`--reflection none`): the attempt, then one user message with
 * the feedback and the retry request.
 */
export function retryWithoutReflectionTurn(conversation: readonly ChatMessage[], attempt: Reply, feedbackShown: string, taskPrompt: readonly ChatMessage[]): ChatMessage[] {
  return [...conversation, { role: "assistant", content: replyText(attempt) }, { role: "user", content: retryWithoutReflection(feedbackShown, taskPrompt) }];
}
