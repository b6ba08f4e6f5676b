import type { EventWriter, ReplyPart } from "./dialects/event-writer.js";
import { openAiUsage, type CompletionMeta, type ReflectExtension } from "./response.js";

/** Headers of an OpenAI server-sent event stream. */
export const sseHeaders = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } as const;

/**
 * OpenAI's streamed chat completion, part by part: a role chunk first, a chunk per text delta, a chunk per tool-call
 * piece (`tool_calls[{ index, id, type, function: { name, arguments } }]`, the id, type and name on a call's first
 * piece only), then a chunk with the finish reason (`tool_calls` when the reply called tools, `length` when it was
 * cut, else `stop`; and the `reflect` extension on a reflected request), a usage chunk when the client asked
 * (`stream_options.include_usage`), and `data: [DONE]`.
 */
export function completionWriter(meta: CompletionMeta, includeUsage: boolean, reflect?: ReflectExtension): EventWriter {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices, ...extra })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ index: 0, delta: d, logprobs: null, finish_reason: finish });
  let opened = false;
  let called = false;
  return {
    write(part: ReplyPart): string {
      const head = opened ? "" : chunk([delta({ role: "assistant", content: "", refusal: null })]);
      opened = true;
      if (part.type === "text-delta") return head + (part.text === "" ? "" : chunk([delta({ content: part.text })]));
      if (part.type === "tool-call-delta") {
        called = true;
        const fn = { ...(part.name === undefined ? {} : { name: part.name }), arguments: part.argumentsDelta };
        return head + chunk([delta({ tool_calls: [{ index: part.index, ...(part.id === undefined ? {} : { id: part.id, type: "function" }), function: fn }] })]);
      }
      const finish = called ? "tool_calls" : part.finishReason === "length" ? "length" : "stop";
      const usage = includeUsage ? chunk([], { usage: openAiUsage(part.usage) }) : "";
      return head + chunk([delta({}, finish)], reflect === undefined ? {} : { reflect }) + usage + "data: [DONE]\n\n";
    },
  };
}
