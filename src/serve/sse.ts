import { assistantMessage, finishReason, type CompletionMeta, type CompletionReply, type OpenAiUsage, type ReflectExtension } from "./response.js";

/** Headers of an OpenAI server-sent event stream. */
export const sseHeaders = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } as const;

/**
 * A finished reply as OpenAI's streamed chat completion: a role chunk, the content, the tool calls, a last chunk with
 * the finish reason (and the `reflect` extension on a reflected request), a usage chunk when the client asked
 * (`stream_options.include_usage`), then `data: [DONE]`. The reply is complete before the first byte is sent: an
 * embedded upstream's pass-through and a reflected request stream the settled answer, not tokens as they come.
 */
export function completionEvents(meta: CompletionMeta, reply: CompletionReply, usage: OpenAiUsage | undefined, reflect?: ReflectExtension): string {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices, ...extra })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ index: 0, delta: d, logprobs: null, finish_reason: finish });
  const message = assistantMessage(reply);
  const events = [chunk([delta({ role: "assistant", content: "", refusal: null })])];
  if (reply.text !== "") events.push(chunk([delta({ content: reply.text })]));
  const calls = (message.tool_calls as Array<Record<string, unknown>> | undefined) ?? [];
  if (calls.length > 0) events.push(chunk([delta({ tool_calls: calls.map((c, index) => ({ index, ...c })) })]));
  events.push(chunk([delta({}, finishReason(reply))], reflect === undefined ? {} : { reflect }));
  if (usage !== undefined) events.push(chunk([], { usage }));
  events.push("data: [DONE]\n\n");
  return events.join("");
}
