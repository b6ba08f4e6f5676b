/**
 * `POST /v1/messages/count_tokens`: relayed raw to an upstream that speaks Messages; counted by an upstream that can
 * count without generating (the embedded engine); otherwise a 400 saying the upstream cannot count.
 */
import type { Secrets } from "./redact-secret.js";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { measure } from "../critics/request/spec-bounds.js";
import { RequestFieldError } from "../errors.js";
import type { LanguageModel } from "../models/language-model.js";
import type { SerialLane } from "../util/serial-lane.js";
import type { Dialect, DialectName } from "./dialects/index.js";
import type { Env, GatewayLimits } from "./gateway-options.js";
import { dialectError, upstreamSpeaks, type UpstreamHttp, type UpstreamRelay } from "./pass-through.js";
import { ClientGone, readBody } from "./read-body.js";
import { parseJson, readChat, type ReadOptions } from "./read-request.js";
import { jsonReply, Refusal, refusalOf, refusalReply } from "./refusal.js";

/** The largest body `count_tokens` reads (on the event loop, in the serial lane) when it counts rather than relays. */
const COUNT_TOKENS_BYTES = 1024 * 1024;

/** What count_tokens needs of the gateway. */
export interface CountTokensContext {
  limits: Pick<GatewayLimits, "bodyBytes" | "bodyTimeoutMs" | "bodyDepth" | "bodyNodes" | "retryAfterSeconds" | "requestTimeoutMs">;
  upstream: LanguageModel;
  upstreamHttp: UpstreamHttp | undefined;
  /** The upstream's model name, for the message of an upstream that cannot count. */
  modelName: string;
  relay: UpstreamRelay | undefined;
  /** Where a body is read one at a time on the event loop. */
  lane: SerialLane;
  readingOf: (dialect: DialectName) => ReadOptions;
  /** The upstream's key, blanked in what an answer says. */
  secret: () => Secrets;
}

/** The count of the Messages request `c` carries, or its refusal in `dialect`. */
export async function countTokens(c: Context<Env>, dialect: Dialect, context: CountTokensContext): Promise<Response> {
  const { limits, upstream, relay, lane, secret } = context;
  if (c.env?.incoming === undefined) return dialectError(dialect, { status: 500, message: "the gateway runs on Node's http server", type: "server_error", param: null, code: "not_node_server" });
  try {
    const { incoming, outgoing } = c.env;
    const bytes = await readBody(incoming, limits.bodyBytes, limits.bodyTimeoutMs);
    if (relay !== undefined && upstreamSpeaks(context.upstreamHttp, dialect.name)) {
      const relayed = await relay.send({ body: bytes, incoming, outgoing }, () => {}, { ...dialect, upstreamPath: `${dialect.upstreamPath}/count_tokens` });
      return relayed ?? RESPONSE_ALREADY_SENT;
    }
    const count = upstream.countTokens?.bind(upstream);
    if (count === undefined) throw new Refusal({ status: 400, message: `the gateway's upstream (${context.modelName}) cannot count tokens without generating: count_tokens is answered by an embedded model, or relayed to an upstream that speaks Messages (--upstream-api messages)`, type: "invalid_request_error", code: "cannot_count" });
    // Parsed here, not in a worker: so its size is bounded tighter than a message's, and its shape as a message's is.
    if (bytes.byteLength > COUNT_TOKENS_BYTES) throw new Refusal({ status: 413, message: `a count_tokens body is at most ${COUNT_TOKENS_BYTES} bytes on this gateway`, type: "invalid_request_error", code: "request_too_large" });
    const body = parseJson(bytes);
    const shape = measure(body, limits.bodyDepth, limits.bodyNodes);
    if (shape.depth > limits.bodyDepth || shape.nodes > limits.bodyNodes) throw new RequestFieldError("body", `is nested deeper than ${limits.bodyDepth} levels or holds more than ${limits.bodyNodes} values`);
    // The same reading as a message's; count_tokens bodies carry no max_tokens, which a message needs.
    const request = (await lane.run(() => readChat(typeof body === "object" && body !== null && !Array.isArray(body) ? { ...body, max_tokens: 1 } : body, false, { ...context.readingOf(dialect.name), plan: false }))).chat;
    if (request === undefined) throw new Error("count_tokens read no request");
    const { tools, toolChoice } = request.sampling;
    return jsonReply(200, { input_tokens: await count({ messages: request.messages, ...(tools === undefined ? {} : { tools }), ...(toolChoice === undefined ? {} : { toolChoice }) }) }, secret());
  } catch (error) {
    return refusalReply(refusalOf(error, { timedOut: false, clientGone: error instanceof ClientGone }, limits), dialect, secret());
  }
}
