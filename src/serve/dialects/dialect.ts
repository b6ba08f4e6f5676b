/**
 * A dialect is a door onto the gateway: how one API's requests become the loop's request (`ChatRequest`) and how the
 * loop's answer, usage, `reflect` extension and errors go back in that API's shape. Everything between — admission,
 * checks, budgets, the strategy, records, metrics and spans — is the gateway's, shared by every dialect
 * (src/serve/server.ts). A dialect holds no state and does no I/O: each function is pure, so each is unit-tested alone;
 * its event writer keeps only what one stream has written so far.
 */
import type { ChatRequest, RequestBounds } from "../loop-request.js";
import type { DialectUsage, EventWriter } from "./event-writer.js";
import type { CompletionMeta, CompletionReply, ErrorType, ReflectExtension } from "../response.js";

/** The dialects the gateway speaks: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages. */
export type DialectName = "chat" | "responses" | "messages";

/** An error as the gateway raises it; each dialect writes it in its own shape. */
export interface GatewayError {
  status: number;
  message: string;
  /** In OpenAI's vocabulary; a dialect maps it to its own (Anthropic's `invalid_request_error`, `overloaded_error`, …). */
  type: ErrorType;
  /** The request field at fault, as the client wrote it (`input[2].content`), or null. */
  param: string | null;
  /** The gateway's own code (`checks_failed`, `queue_full`, …), or null. */
  code: string | null;
  /** A 422 for `reflect.on_failure: "error"` carries the checks. */
  reflect?: ReflectExtension;
}

export type { DialectUsage } from "./event-writer.js";

export interface Dialect {
  readonly name: DialectName;
  /** The route clients POST to, e.g. `/v1/responses`. */
  readonly route: string;
  /** Where a raw pass-through goes on an upstream that speaks this dialect, after its base URL (`…/v1`), e.g. `/responses`. */
  readonly upstreamPath: string;
  /** The prefix of the ids the gateway gives its answers: `chatcmpl-`, `resp_`, `msg_`. */
  readonly idPrefix: string;
  /**
   * A body as the loop's request: the conversation as messages (tool calls and results as structured turns), sampling, output format and tools, the checks,
   * `stream`, and `reflect` when the body has a `reflect` object. Throws `RequestFieldError` naming the field as the
   * client wrote it in this dialect.
   */
  parse(body: unknown, bounds: RequestBounds): ChatRequest;
  /** Whether a body asks for reflection (has a `reflect` object); anything else is passed through. */
  asksForReflection(body: unknown): boolean;
  /** The answer as a JSON body, with `reflect` on a reflected request. */
  answer(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, reflect?: ReflectExtension): Record<string, unknown>;
  /**
   * A settled answer as this dialect's whole server-sent event sequence: `writer` over the reply's parts
   * (src/serve/dialects/event-writer.ts). `request` says what the client asked of the stream (Chat Completions'
   * `stream_options.include_usage`).
   */
  events(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, request: Pick<ChatRequest, "includeUsage">, reflect?: ReflectExtension): string;
  /**
   * A writer of this dialect's events, part by part as a reply comes: a streamed translation's events as the upstream
   * sends its parts. `known` is what is known before the first part: the `reflect` extension, and the usage of a
   * settled reply (Anthropic's `message_start` tells the input tokens).
   */
  writer(meta: CompletionMeta, request: Pick<ChatRequest, "includeUsage">, known?: { reflect?: ReflectExtension; usage?: DialectUsage }): EventWriter;
  /** An error body in this dialect's shape. */
  error(error: GatewayError): Record<string, unknown>;
  /**
   * An error as one server-sent event, for a stream already under way (keep-alive bytes were sent, so the status is
   * 200): it ends the stream, and the client's SDK raises it.
   */
  errorEvent(error: GatewayError): string;
  /** What keeps a stream alive through proxies while the loop settles: an SSE comment, or Anthropic's `ping` event. */
  readonly keepAlive: string;
  /**
   * A field of the request's checks, which the checks name in Chat Completions' words (`response_format.json_schema.schema`,
   * `tools[1].function.parameters`), as this dialect's client wrote it (`text.format.schema`, `tools[1].input_schema`).
   */
  checkField(field: string): string;
}
