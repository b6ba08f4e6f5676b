/**
 * A request the gateway answers with an error status, and what each error that ends a request is answered with: one
 * place, so every route (and a kept-alive stream's error event) refuses alike.
 */
import { CheckPoolBusyError } from "../critics/request/check-pool.js";
import { ReflectkitError, RequestFieldError } from "../errors.js";
import type { Dialect, GatewayError } from "./dialects/index.js";
import { redactText, upstreamError } from "./pass-through.js";
import { redactJsonValue } from "./redact-stream.js";
import type { Secrets } from "./redact-secret.js";
import type { ErrorType, ReflectExtension } from "./response.js";

/** What a refusal says: its status and the error's fields, the headers it is sent with, and a failed answer's checks. */
export interface RefusalFields {
  status: number;
  message: string;
  type: ErrorType;
  param?: string | null;
  code?: string | null;
  headers?: Record<string, string>;
  /** The `reflect` extension of an answer refused for failing its checks (`reflect.on_failure: "error"`). */
  reflect?: ReflectExtension;
}

/** A request the gateway answers with an error status, in its dialect's shape (raised and caught within a request). */
export class Refusal extends ReflectkitError {
  override name = "Refusal";
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  readonly reflect?: ReflectExtension;

  constructor(fields: RefusalFields) {
    super(fields.message);
    this.status = fields.status;
    this.type = fields.type;
    this.param = fields.param ?? null;
    this.code = fields.code ?? null;
    this.headers = fields.headers ?? {};
    if (fields.reflect !== undefined) this.reflect = fields.reflect;
  }
}

/** The limits a refusal's message names. */
export interface RefusalLimits {
  retryAfterSeconds: number;
  requestTimeoutMs: number;
}

/** How a request ended: past its deadline, and whether its client had gone. */
export interface RequestEnd {
  timedOut: boolean;
  clientGone: boolean;
}

/** A 429 that asks the client to come back after `retryAfterSeconds`. */
export function busyRefusal(message: string, code: string, retryAfterSeconds: number): Refusal {
  return new Refusal({ status: 429, message: `${message} — retry after ${retryAfterSeconds} s`, type: "rate_limit_error", code, headers: { "retry-after": String(retryAfterSeconds) } });
}

/** What an error that ended a request is answered with. */
export function refusalOf(error: unknown, { timedOut, clientGone }: RequestEnd, limits: RefusalLimits): Refusal {
  if (error instanceof Refusal) return error;
  if (error instanceof CheckPoolBusyError) return busyRefusal(error.message, "checks_busy", limits.retryAfterSeconds);
  if (error instanceof RequestFieldError) return new Refusal({ status: 400, message: error.message, type: "invalid_request_error", param: error.field, code: "invalid_value" });
  // The client is gone: nobody reads this answer (499 for the observer, as nginx logs it).
  if (clientGone && !timedOut) return new Refusal({ status: 499, message: "the client closed the request", type: "invalid_request_error", code: "client_closed" });
  if (timedOut) return new Refusal({ status: 504, message: `the request did not finish within ${limits.requestTimeoutMs} ms`, type: "server_error", code: "upstream_timeout" });
  return upstreamRefusal(error, false, limits.retryAfterSeconds);
}

/**
 * A failed upstream call, in every dialect alike: a timeout 504, an upstream still rate-limiting after the model's own
 * retries (which honour its Retry-After) 429 with the gateway's Retry-After, anything else 502.
 */
export function upstreamRefusal(error: unknown, timedOut: boolean, retryAfterSeconds: number): Refusal {
  const failure = upstreamError(error, timedOut);
  if (failure.status === 502 && (error as { status?: unknown } | null)?.status === 429) {
    return busyRefusal(`the upstream is rate-limiting: ${(error as { message?: string }).message ?? "429"}`, "upstream_rate_limited", retryAfterSeconds);
  }
  return new Refusal({ status: failure.status, message: failure.message, type: "server_error", code: failure.status === 504 ? "upstream_timeout" : "upstream_error" });
}

/** Whether a refusal is the upstream's failure (a 502, a 504, or its rate limit), which the observer is told of. */
export function isUpstreamFailure(refusal: Refusal): boolean {
  return refusal.status === 502 || refusal.status === 504 || refusal.code === "upstream_rate_limited";
}

/**
 * A JSON body with the upstream key blanked, should an upstream have echoed it into a reply: in every string before
 * it is written (a key with a character JSON escapes would not show in the text as itself), then in the text.
 */
export function jsonReply(status: number, body: unknown, secret: Secrets, headers: Record<string, string> = {}): Response {
  return new Response(redactText(JSON.stringify(redactJsonValue(body, secret)), secret), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A refusal as the gateway's error, its message (and checks) with the upstream key blanked. */
export function gatewayErrorOf(refusal: Refusal, secret: Secrets): GatewayError {
  return {
    status: refusal.status,
    message: redactText(refusal.message, secret),
    type: refusal.type,
    param: refusal.param,
    code: refusal.code,
    ...(refusal.reflect === undefined ? {} : { reflect: redactJsonValue(refusal.reflect, secret) as ReflectExtension }),
  };
}

/** A refusal answered in the dialect's shape, with its headers. */
export function refusalReply(refusal: Refusal, dialect: Dialect, secret: Secrets): Response {
  return jsonReply(refusal.status, dialect.error(gatewayErrorOf(refusal, secret)), secret, refusal.headers);
}
