import { RequestFieldError } from "../errors.js";
import { planRequestChecks, type RequestCheckPlan } from "../critics/request/isolated-checks.js";
import { measure, type RequestCheckBounds } from "../critics/request/spec-bounds.js";
import { dialectNamed, type DialectName } from "./dialects/index.js";
import { type ChatRequest, type RequestBounds } from "./loop-request.js";
import { isRecord } from "../util/is-record.js";

/** What reading a request body is bounded by: the chat request's own bounds, and the body's shape. */
export interface ReadBounds extends RequestBounds {
  /** Deepest nesting of objects and arrays in a body that is read as a chat request. */
  bodyDepth: number;
  /** Most values (array elements and object members) in such a body. */
  bodyNodes: number;
  requestChecks: RequestCheckBounds;
}

export interface ReadOptions {
  bounds: ReadBounds;
  /** The dialect the body is written in (the route it came to). */
  dialect: DialectName;
  /** An HTTP upstream takes pass-through raw: a body without `reflect` is not read past that. */
  relay: boolean;
  /** Plan the request's checks (false when the caller builds them its own way). */
  plan: boolean;
}

/** A body as read: parsed; past pass-through, as a chat request with its checks planned. */
export interface ReadRequest {
  body: unknown;
  stream: boolean;
  chat?: ChatRequest;
  plan?: RequestCheckPlan;
}

/**
 * Reads a request body in its dialect: parses it; when it asks for reflection (or no HTTP upstream takes pass-through),
 * bounds its depth and size in values first — records and checks recurse, and what the event loop parses again must
 * stay small — then validates it as a chat request and plans its checks (bounded and split). Throws RequestFieldError
 * naming the field. Synchronous and linear in the body; the gateway runs it in a worker first for a large body.
 */
export function readRequest(bytes: Uint8Array, options: ReadOptions): ReadRequest {
  const body = parseJson(bytes);
  const stream = isRecord(body) && body.stream === true;
  const reflected = dialectNamed(options.dialect).asksForReflection(body);
  if (!reflected && options.relay) return { body, stream };
  const { bounds } = options;
  const shape = measure(body, bounds.bodyDepth, bounds.bodyNodes);
  if (shape.depth > bounds.bodyDepth) throw new RequestFieldError("body", `is nested deeper than ${bounds.bodyDepth} levels`);
  if (shape.nodes > bounds.bodyNodes) throw new RequestFieldError("body", `has more than ${bounds.bodyNodes} values (array elements and object members)`);
  return readChat(body, stream, options);
}

/** The chat request of a body already bounded (by `readRequest`, here or in a worker): no second walk. */
export function readChat(body: unknown, stream: boolean, options: ReadOptions, plan?: RequestCheckPlan): ReadRequest {
  const chat = dialectNamed(options.dialect).parse(body, options.bounds);
  let planned = plan;
  try {
    planned ??= chat.reflect === undefined || !options.plan ? undefined : planRequestChecks(chat.checks, { bounds: options.bounds.requestChecks, toolChoiceRequired: chat.toolChoiceRequired });
  } catch (error) {
    throw inDialect(error, options.dialect);
  }
  return { body, stream, chat, ...(planned === undefined ? {} : { plan: planned }) };
}

/**
 * A refusal of the request's checks, which name fields in Chat Completions' words, with the field as the client of
 * `dialect` wrote it (`Dialect.checkField`); anything else unchanged.
 */
export function inDialect(error: unknown, dialect: DialectName): unknown {
  if (!(error instanceof RequestFieldError)) return error;
  const field = dialectNamed(dialect).checkField(error.field);
  return field === error.field ? error : new RequestFieldError(field, error.detail, { cause: error });
}

/** What a worker tells the gateway of a body it read: whether it is passed through, and the checks it planned. */
export interface Screened {
  passThrough: boolean;
  stream: boolean;
  plan?: RequestCheckPlan;
}

/** `readRequest` as a worker runs it: only what crosses back to the gateway's thread (plain data). */
export function screenRequest(bytes: Uint8Array, options: ReadOptions): Screened {
  const read = readRequest(bytes, options);
  return { passThrough: read.chat === undefined, stream: read.stream, ...(read.plan === undefined ? {} : { plan: read.plan }) };
}

export function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    throw new RequestFieldError("body", "is not valid JSON");
  }
}
