import { RequestFieldError } from "../errors.js";
import { planRequestChecks, type RequestCheckPlan } from "../critics/request/isolated-checks.js";
import { measure, type RequestCheckBounds } from "../critics/request/spec-bounds.js";
import { dialectNamed, type DialectName } from "./dialects/index.js";
import { type ChatRequest, type RequestBounds } from "./loop-request.js";
import { isRecord } from "../util/is-record.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import { applyPolicy, policyFor, systemTextOf } from "./policy.js";

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
  /** The operator's policies as the request found them on arrival, and where the request stands for them. */
  policies?: PolicyScope;
  /**
   * On a gateway with several models: the models whose upstream takes this dialect raw, and the model of a body naming
   * none. A body is then relayed raw when the model it names (or the default) is one of `relayed`; `relay` is unread.
   */
  models?: { relayed: readonly string[]; defaultName: string };
}

/** What a request's policy is chosen by: the config captured at its arrival, its tenant and its route. */
export interface PolicyScope {
  config: GatewayConfig;
  tenant: string;
  route?: string;
  /** The model a body naming none (or an empty one) is looked up under: the default model's name, with several models. */
  defaultModel?: string;
}

/** A body as read: parsed; past pass-through, as a chat request with its checks planned. */
export interface ReadRequest {
  body: unknown;
  stream: boolean;
  /** The body's `model`, when it is a string. */
  model?: string;
  chat?: ChatRequest;
  plan?: RequestCheckPlan;
  /** The policy the request runs under (`policy.ts`), by name. */
  policy?: string;
  /** What a pass-through relays instead of the body as sent: the body without its `"reflect": false` (an opt-out). */
  relayBody?: Buffer;
}

/** A parsed body under its policy: its `reflect` the one it runs with, and the policy's name. */
export interface PolicedBody {
  body: unknown;
  policy?: string;
  /** The request sent `"reflect": false` and its policy let it opt out. */
  optedOut?: boolean;
}

/** `body` with the policy that applies to it applied (`applyPolicy`); unchanged without one. */
export function underPolicy(body: unknown, scope: PolicyScope | undefined): PolicedBody {
  if (scope === undefined || !isRecord(body)) return { body };
  const named = typeof body.model === "string" && body.model !== "" ? body.model : undefined;
  const model = named ?? scope.defaultModel;
  const policy = policyFor(scope.config, { tenant: scope.tenant, model, route: scope.route });
  if (policy === undefined) return { body };
  let reflect: unknown;
  try {
    reflect = applyPolicy(body.reflect, policy, { tenant: scope.tenant, model, route: scope.route, system: systemTextOf(body) });
  } catch (error) {
    throw refusedUnder(error, policy.name);
  }
  if (reflect !== undefined) return { body: { ...body, reflect }, policy: policy.name };
  const { reflect: _optedOut, ...rest } = body;
  return { body: rest, policy: policy.name, optedOut: true };
}

/** A body's `model`, when it is a string. */
function modelOf(body: unknown): string | undefined {
  return isRecord(body) && typeof body.model === "string" ? body.model : undefined;
}

/** Whether a body naming `model` is relayed raw, should it not ask for reflection (`ReadOptions.models`). */
function relays(model: string | undefined, { relay, models }: ReadOptions): boolean {
  if (models === undefined) return relay;
  return models.relayed.includes(model === undefined || model === "" ? models.defaultName : model);
}


/** A refusal made under `policy`: an answer under the policy too, which the gateway names (`policyOfRefusal`). */
function refusedUnder(error: unknown, policy: string | undefined): unknown {
  if (policy === undefined || typeof error !== "object" || error === null) return error;
  return Object.assign(error, { policy });
}

/** `read()`, its refusals named as made under `policy` (the body is read under it past `underPolicy`). */
function readUnder<T>(policy: string | undefined, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw refusedUnder(error, policy);
  }
}

/** The policy a refusal of a request's body was made under (`underPolicy` and what reads the body after it); undefined for any other error. */
export function policyOfRefusal(error: unknown): string | undefined {
  const policy = (error as { policy?: unknown } | undefined)?.policy;
  return typeof policy === "string" ? policy : undefined;
}

/** What a pass-through under a policy relays: the body without its opt-out, else the bytes as sent. */
function relayedBody({ body, optedOut }: PolicedBody): Buffer | undefined {
  return optedOut === true ? Buffer.from(JSON.stringify(body), "utf8") : undefined;
}

/**
 * Reads a request body in its dialect: parses it; when it asks for reflection (or no HTTP upstream takes pass-through),
 * bounds its depth and size in values first — records and checks recurse, and what the event loop parses again must
 * stay small — then validates it as a chat request and plans its checks (bounded and split). Throws RequestFieldError
 * naming the field. Synchronous and linear in the body; the gateway runs it in a worker first for a large body.
 */
export function readRequest(bytes: Uint8Array, options: ReadOptions): ReadRequest {
  const policed = underPolicy(parseJson(bytes), options.policies);
  const { body, policy } = policed;
  const named: { policy?: string; model?: string } = policy === undefined ? {} : { policy };
  const stream = isRecord(body) && body.stream === true;
  const model = modelOf(body);
  if (model !== undefined) named.model = model;
  const reflected = dialectNamed(options.dialect).asksForReflection(body);
  if (!reflected && relays(model, options)) {
    const relayBody = relayedBody(policed);
    return { body, stream, ...named, ...(relayBody === undefined ? {} : { relayBody }) };
  }
  return readUnder(policy, () => {
    const { bounds } = options;
    const shape = measure(body, bounds.bodyDepth, bounds.bodyNodes);
    if (shape.depth > bounds.bodyDepth) throw new RequestFieldError("body", `is nested deeper than ${bounds.bodyDepth} levels`);
    if (shape.nodes > bounds.bodyNodes) throw new RequestFieldError("body", `has more than ${bounds.bodyNodes} values (array elements and object members)`);
    return { ...readChat(body, stream, options), ...named };
  });
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
  /** The policy the body was read under (`ReadRequest.policy`). */
  policy?: string;
  /** A pass-through whose `"reflect": false` its policy took as an opt-out: the gateway relays it without the field. */
  optedOut?: boolean;
  /** The body's `model` (`ReadRequest.model`). */
  model?: string;
  /** The body was refused under its policy (`policy`): the field and why, for the gateway to answer with. */
  refused?: { field: string; detail: string };
}

/**
 * `readRequest` as a worker runs it: only what crosses back to the gateway's thread (plain data). A body refused under
 * a policy comes back as `refused`, its policy beside it, for the gateway to name in its answer; any other refusal
 * is thrown.
 */
export function screenRequest(bytes: Uint8Array, options: ReadOptions): Screened {
  let read: ReadRequest;
  try {
    read = readRequest(bytes, options);
  } catch (error) {
    const policy = policyOfRefusal(error);
    if (!(error instanceof RequestFieldError) || policy === undefined) throw error;
    return { passThrough: false, stream: false, policy, refused: { field: error.field, detail: error.detail } };
  }
  return { passThrough: read.chat === undefined, stream: read.stream, ...(read.plan === undefined ? {} : { plan: read.plan }), ...(read.policy === undefined ? {} : { policy: read.policy }), ...(read.relayBody === undefined ? {} : { optedOut: true }), ...(read.model === undefined ? {} : { model: read.model }) };
}

/**
 * The rest of a large body's reading, on the gateway's thread once a worker screened it (`screenRequest`): the body
 * parsed again and its policy applied again (the same config, so the same outcome), then its chat request, or, for a
 * pass-through, what is relayed.
 */
export function readScreened(bytes: Uint8Array, screened: Screened, options: ReadOptions): ReadRequest {
  const named = { ...(screened.policy === undefined ? {} : { policy: screened.policy }), ...(screened.model === undefined ? {} : { model: screened.model }) };
  if (screened.passThrough) {
    const relayBody = screened.optedOut === true ? relayedBody(underPolicy(parseJson(bytes), options.policies)) : undefined;
    return { body: undefined, stream: screened.stream, ...named, ...(relayBody === undefined ? {} : { relayBody }) };
  }
  if (screened.refused !== undefined) throw refusedUnder(new RequestFieldError(screened.refused.field, screened.refused.detail), screened.policy);
  return readUnder(screened.policy, () => ({ ...readChat(underPolicy(parseJson(bytes), options.policies).body, screened.stream, options, screened.plan), ...named }));
}

export function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    throw new RequestFieldError("body", "is not valid JSON");
  }
}
