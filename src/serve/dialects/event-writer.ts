/**
 * A door's event writer: a reply's parts (text as it comes, a tool call's pieces, the finish) written as that door's
 * server-sent events, event by event. A streamed translation runs it over the upstream's parts as they come
 * (`LanguageModel.doStream`); a settled answer runs it over the one reply, in the same parts (`settledEvents`), so a
 * door's stream is written one way whether its reply arrived whole or in pieces.
 */
import type { FinishReason, StreamPart, TokenUsage } from "../../models/language-model.js";
import type { CompletionReply } from "../response.js";

/** Tokens over every call a request caused (the loop's `Episode.usage`, or one call's `TokenUsage`). */
export type DialectUsage = Pick<TokenUsage, "promptTokens" | "completionTokens"> & { evaluatedPromptTokens?: number };

/** One part a writer writes: a stream's text and tool-call pieces, and its finish with the usage over the request. */
export type ReplyPart = Exclude<StreamPart, { type: "finish" }> | { type: "finish"; finishReason: FinishReason; usage: DialectUsage };

export interface EventWriter {
  /** The events of one part, whole (blank line included); the stream's opening events come before the first part's. */
  write(part: ReplyPart): string;
}

/**
 * A settled reply as parts: its text as one delta (none when empty), each tool call as one piece (its id, name and
 * whole arguments, as `toolArguments` writes them for the door), then the finish.
 */
export function settledParts(reply: CompletionReply, usage: DialectUsage, toolArguments: (args: string) => string = (args) => args): ReplyPart[] {
  const parts: ReplyPart[] = reply.text === "" ? [] : [{ type: "text-delta", text: reply.text }];
  (reply.toolCalls ?? []).forEach((call, index) => parts.push({ type: "tool-call-delta", index, id: call.id, name: call.name, argumentsDelta: toolArguments(call.arguments) }));
  parts.push({ type: "finish", finishReason: reply.finishReason, usage });
  return parts;
}

/** A writer's events over every part of a settled reply. */
export function settledEvents(writer: EventWriter, parts: readonly ReplyPart[]): string {
  return parts.map((part) => writer.write(part)).join("");
}
