/** OpenAI Chat Completions (`POST /v1/chat/completions`): the gateway's first dialect. */
import { asksForReflection, parseChatRequest } from "../request.js";
import { chatCompletion, openAiUsage } from "../response.js";
import { completionEvents } from "../sse.js";
import type { Dialect, GatewayError } from "./dialect.js";

/** An error in OpenAI's shape, `{ error: { message, type, param, code } }`, with `reflect` on a 422 of failed checks. */
export function errorBody(error: GatewayError): Record<string, unknown> {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code }, ...(error.reflect === undefined ? {} : { reflect: error.reflect }) };
}

export const chatDialect: Dialect = {
  name: "chat",
  route: "/v1/chat/completions",
  upstreamPath: "/chat/completions",
  idPrefix: "chatcmpl-",
  parse: parseChatRequest,
  asksForReflection,
  answer: (meta, reply, usage, reflect) => chatCompletion(meta, reply, openAiUsage(usage), reflect),
  events: (meta, reply, usage, request, reflect) => completionEvents(meta, reply, request.includeUsage ? openAiUsage(usage) : undefined, reflect),
  error: errorBody,
  // OpenAI's clients raise an `error` member in a streamed chunk as an APIError.
  errorEvent: (error) => `data: ${JSON.stringify(errorBody(error))}\n\n`,
  keepAlive: ": keep-alive\n\n",
  checkField: (field) => field,
};
