/**
 * The gateway: an OpenAI-compatible HTTP door onto the cascade. One request path, in this file:
 * parse and validate → build options → run the loop → shape the response. A request without `reflect` is passed
 * through to the upstream unchanged.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { IncomingMessage } from "node:http";
import { serve, type HttpBindings } from "@hono/node-server";
// Imported before `serve` replaces the global Response: the marker must be a plain Response for the server library.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono, type Context } from "hono";
import { CheckBudget, CheckPool, CheckPoolBusyError, defaultCheckPoolLimits, type CheckPoolLimits, type JobOutcome } from "../critics/request/check-pool.js";
import { compileRequestChecks, type RequestCheckPlan } from "../critics/request/isolated-checks.js";
import type { RequestCheck } from "../critics/request/request-check.js";
import { requestTask, type RequestCheckSpec, type RequestRecord } from "../critics/request/request-task.js";
import { defaultRequestCheckBounds, measure, type RequestCheckBounds } from "../critics/request/spec-bounds.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import { ReflectkitError, RequestFieldError, UsageError } from "../errors.js";
import type { RecordWriter } from "../record/record-writer.js";
import { parseStopReason } from "../loops/stop-reason.js";
import type { RequestMemory } from "../loops/request-memory.js";
import { runStrategy } from "../loops/strategies.js";
import type { Episode } from "../loops/types.js";
import type { LanguageModel } from "../models/language-model.js";
import { noopTracer, type SpanHandle, type Tracer } from "../telemetry/tracer.js";
import { raceAbort } from "../util/abortable.js";
import { SerialLane } from "../util/serial-lane.js";
import { Admission } from "./admission.js";
import { armOf, type ArmName, type GatewayArms } from "./arms.js";
import { bodyDeadline, nodeRequestTimeout } from "./body-deadline.js";
import { hostGuard } from "./host-guard.js";
import { noopObserver, type GatewayObserver, type RequestOutcome } from "./observer.js";
import { chatDialect } from "./dialects/chat.js";
import { dialectOfRoute, dialects, type Dialect, type DialectName, type GatewayError } from "./dialects/index.js";
import { dialectError, generateOnce, openRelay, redactText, upstreamError, upstreamSpeaks, withModel, type UpstreamHttp } from "./pass-through.js";
import { redactJsonValue } from "./redact-stream.js";
import { endRequestSpan, startRequestSpan } from "./request-span.js";
import { inDialect, parseJson, readChat, readRequest, type ReadOptions, type ReadRequest, type Screened } from "./read-request.js";
import { ARM_KEY_CHARS, recordedOptions, resolveGatewayStrategy, type ChatRequest } from "./request.js";
import { failedChecksMessage, reflectExtension, reflectHeaders, selectedCall, type CompletionMeta, type CompletionReply, type ErrorType, type ReflectExtension } from "./response.js";
import { sseHeaders } from "./sse.js";
import { tenantsOfKeys, type TenantKey } from "./tenants.js";
import { isTenantName, LOCAL_TENANT } from "../core/tenant.js";
import { isRecord } from "../util/is-record.js";

/** What one request may take of the gateway. */
export interface GatewayLimits {
  /** Most bytes of a request body; a larger one is answered 413. */
  bodyBytes: number;
  /** Requests running the model in this process at once (reflected, and passed through to an embedded upstream). */
  parallel: number;
  /** Such requests waiting beyond `parallel`; one more is answered 429 with `Retry-After: retryAfterSeconds`. */
  maxQueue: number;
  retryAfterSeconds: number;
  /** Wall-clock limit of a request, from arrival (queueing included) to its answer: 504 beyond. */
  requestTimeoutMs: number;
  /** Largest `reflect.max_turns`. */
  maxTurns: number;
  /** Largest `reflect.budget` a request may ask (400 beyond); the budget of a reflected request that names none. */
  budget: { tokens: number; calls: number; seconds: number };
  /** `max_tokens` of a request that sets none. */
  defaultMaxTokens: number;
  /** Deepest nesting of objects and arrays in a reflected request's body: 400 beyond, before anything else is read. */
  bodyDepth: number;
  /** Most values (array elements and object members) in a reflected request's body: 400 beyond. */
  bodyNodes: number;
  /** Sizes of the checks a request carries (schemas, tools, tool calls read, `reflect.item`): 400 beyond, before any work. */
  requestChecks: RequestCheckBounds;
  /** The check workers that compile and run a request's checks off the event loop: threads, queue, deadlines, heap. */
  checks: CheckPoolLimits;
  /**
   * Requests one client — a key of the gateway's, or a client address on a gateway without a key — may have running
   * and waiting at once; beyond, 429. Undefined: `parallel − 1` running (at least 1) and half of `maxQueue` waiting, so
   * one client cannot hold every slot. Its checks likewise hold at most `checks.perClient` workers.
   */
  perClient?: { running: number; queued: number };
  /**
   * Requests of one tenant in flight at once, of every kind — pass-through relays too, which take no model slot — so
   * one tenant cannot hold every upstream connection; one more is answered 429 (`tenant_in_flight_full`). Default 128.
   */
  perTenantInFlight: number;
  /** Node's server: most time to receive a request's headers, and its whole body (408 and the connection closed). */
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
  /** Open connections at once; at the cap a new one closes the oldest idle one (or, if none is idle, itself). */
  maxConnections: number;
  /**
   * A reflected stream not settled within this many ms starts its answer (200, the dialect's event stream) and sends
   * the dialect's keep-alive every as many ms until it settles, so a proxy's idle timeout does not cut it; a failure
   * after that point goes out as the dialect's error event. One settled sooner is answered as usual.
   */
  streamKeepAliveMs: number;
}

/**
 * Where the gateway departs from the strategies' defaults (loops/strategies.ts), in one place. A request that sets no
 * `max_tokens` gets 512 tokens for an attempt, not an eval's 256: an application's replies (JSON objects, tool calls)
 * run longer than a task's answer. Every reflected request runs under a budget — these caps, or less where it asks —
 * and may ask at most 5 turns. Everything else (turns, feedback, stop conditions, the reflection's and the judge's
 * token limits) is the registry's, as in `reflect eval` and the AI SDK middleware.
 */
export const gatewayCaps = Object.freeze({
  attemptMaxTokens: 512,
  maxTurns: 5,
  budget: Object.freeze({ tokens: 32_768, calls: 16, seconds: 240 }),
});

export const defaultGatewayLimits: GatewayLimits = Object.freeze({
  bodyBytes: 4 * 1024 * 1024,
  parallel: 4,
  maxQueue: 32,
  retryAfterSeconds: 1,
  requestTimeoutMs: 300_000,
  maxTurns: gatewayCaps.maxTurns,
  budget: gatewayCaps.budget,
  defaultMaxTokens: gatewayCaps.attemptMaxTokens,
  bodyDepth: 64,
  bodyNodes: 100_000,
  requestChecks: defaultRequestCheckBounds,
  checks: defaultCheckPoolLimits,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  streamKeepAliveMs: 10_000,
  perTenantInFlight: 128,
});

/** What a request's checks are built with: its tool choice, the client whose share it counts against, its signal. */
export interface BuildChecksContext {
  toolChoiceRequired: boolean;
  client: string;
  signal: AbortSignal;
}

/**
 * The request checks of a spec; throws RequestFieldError. Without one, the gateway plans them as it reads the body and
 * compiles and runs them in its check workers (src/critics/request/isolated-checks.ts).
 */
export type BuildRequestChecks = (spec: RequestCheckSpec, context: BuildChecksContext) => readonly RequestCheck[] | Promise<readonly RequestCheck[]>;

export interface GatewayOptions {
  /** The model every request runs on (opened with `openModel`). */
  upstream: LanguageModel;
  /** When the upstream is an OpenAI-compatible endpoint: where pass-through requests go, raw. */
  upstreamHttp?: UpstreamHttp;
  /** Turns a request's check spec into checks (default: in the gateway's check workers, under `limits.checks`). */
  buildChecks?: BuildRequestChecks;
  /** The judges a request may name in `reflect.judge`, by the spec given at start (an allowlist). */
  judges?: ReadonlyMap<string, LanguageModel>;
  /** Told of every chat-completion request once, however it ended. */
  observer?: GatewayObserver;
  /** Every reflected request's episode is appended, and synced, before its response is sent. */
  recorder?: RecordWriter;
  /**
   * The lessons a request with `reflect.memory` is shown, and records (`--memory FILE`, `--store postgres://…`).
   * Without it such a request is refused (400). The caller closes it.
   */
  memory?: RequestMemory;
  tracer?: Tracer;
  /**
   * When set, every route but `/healthz` needs `Authorization: Bearer <key>` (or `x-api-key`) with one of these keys
   * (401 otherwise). Each key is a tenant (src/serve/tenants.ts): the only key `local`, each of several named after its
   * digest. `tenants` names them.
   */
  apiKey?: string | readonly string[];
  /**
   * The client keys with their tenants' names (`REFLECT_GATEWAY_KEY=team-a:KEY1,team-b:KEY2`, or a keys file); with
   * `apiKey`, both count. A tenant's lessons, episodes, replay pairings and quotas are its own; each tenant is a client
   * of its own for `limits.perClient` and `limits.perTenantInFlight`.
   */
  tenants?: readonly TenantKey[];
  /**
   * The key of `GET /metrics` (`REFLECT_METRICS_KEY`), never a client's. On a gateway with client keys, `/metrics`
   * answers only this key or the admin key — its series move with every tenant's traffic — and is off without either.
   */
  metricsKey?: string;
  /**
   * Without `apiKey`: names besides the bound address's that a request's Host (and Origin) may carry, e.g. a DNS name
   * in front of the gateway. Other names are answered 403, and a POST that is not JSON 415 (src/serve/host-guard.ts).
   */
  allowedHosts?: readonly string[];
  /** The address the gateway listens on, whose names a keyless gateway answers (`startGateway` sets it; default 127.0.0.1). */
  boundHost?: string;
  limits?: Partial<GatewayLimits>;
  /**
   * The arms: `base` and `adapter` (the base with a LoRA adapter), a canary share of reflected requests on the adapter
   * (src/serve/arms.ts). Without it every request runs on `upstream`, as the `base` arm.
   */
  arms?: GatewayArms;
  /**
   * The key of `POST /admin/lora` (`Authorization: Bearer <key>`), which loads or replaces the adapter; never one of
   * `apiKey`. Without it the admin route is off (404).
   */
  adminKey?: string;
  /** `GET /metrics` (404 without it). */
  metricsText?: () => Promise<{ contentType: string; body: string }>;
  /** Answer and episode ids (default the dialect's prefix and a uuid: `chatcmpl-…`, `resp_…`, `msg_…`). */
  newId?: (dialect: Dialect) => string;
  /** Epoch milliseconds, for `created` (default `Date.now`). */
  now?: () => number;
}

/** A request the gateway answers with an error status, in its dialect's shape (raised and caught within a request). */
class Refusal extends ReflectkitError {
  override name = "Refusal";
  constructor(
    readonly status: number,
    message: string,
    readonly type: ErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly headers: Record<string, string> = {},
    readonly reflect?: ReflectExtension,
  ) {
    super(message);
  }
}

/** The largest body `count_tokens` reads (on the event loop, in the serial lane) when it counts rather than relays. */
const COUNT_TOKENS_BYTES = 1024 * 1024;

/** The largest body of `POST /admin/lora` (a path and a scale). */
const ADMIN_BODY_BYTES = 64 * 1024;

/** Bodies over this many bytes are read by a worker first, then (past pass-through) in the gateway's serial lane. */
const LANE_BYTES = 64 * 1024;

/** What the gateway is doing now, for metrics gauges. */
export interface GatewayLoad {
  /** Chat-completion requests being answered (a streamed pass-through until its body ends). */
  inFlight: number;
  /** Requests waiting for a model slot (`limits.parallel`). */
  queued: number;
  /** The check workers: jobs waiting, workers busy, workers replaced since start (zero without them). */
  checks: { queued: number; busy: number; replaced: number };
  /** Each tenant's requests being answered now (tenants with none are left out). */
  tenants: Record<string, number>;
}

/** The Node request and response behind a Hono request (`@hono/node-server`), and who the client is. */
type Env = { Bindings: HttpBindings; Variables: { client: string; tenant: string } };

/**
 * The gateway's Hono app, served by `@hono/node-server` (pass-through relays on its Node request and response);
 * `load()` reads its gauges (`createGatewayMetrics({ inFlight, queued })`); `close()` closes the upstream connections.
 */
export type GatewayApp = Hono<Env> & { load(): GatewayLoad; close(): void };

/** The gateway's app; serve it with `startGateway` (or `@hono/node-server`'s `serve`): it reads the Node request. */
export function createGateway(options: GatewayOptions): GatewayApp {
  const limits: GatewayLimits = { ...defaultGatewayLimits, ...options.limits };
  const judges = options.judges ?? new Map<string, LanguageModel>();
  const observer = options.observer ?? noopObserver;
  const tracer = options.tracer ?? noopTracer;
  const newId = options.newId ?? ((dialect: Dialect) => `${dialect.idPrefix}${randomUUID().replaceAll("-", "")}`);
  const now = options.now ?? Date.now;
  const perClient = limits.perClient ?? { running: Math.max(1, limits.parallel - 1), queued: Math.max(1, Math.ceil(limits.maxQueue / 2)) };
  const admission = new Admission(limits.parallel, limits.maxQueue, perClient);
  const tenantKeys = [...(options.tenants ?? []), ...tenantsOfKeys(options.apiKey)];
  const keys = tenantKeys.map((t) => t.key);
  const keyDigests = keys.map(digest);
  if (new Set(keys).size !== keys.length) throw new UsageError("a client key is given twice — a key is one tenant's");
  for (const { tenant } of tenantKeys) if (!isTenantName(tenant)) throw new UsageError(`tenant ${JSON.stringify(tenant)}: a tenant's name is 1–64 letters, digits or ._- starting with a letter or digit`);
  const inFlightBy = new Map<string, number>();
  const pool = options.buildChecks === undefined ? new CheckPool(limits.checks, new URL("./gateway-worker.js", import.meta.url)) : undefined;
  const lane = new SerialLane();
  const adminDigest = options.adminKey === undefined || options.adminKey === "" ? undefined : digest(options.adminKey);
  if (adminDigest !== undefined && keys.includes(options.adminKey as string)) throw new UsageError("the admin key is also a client key — give REFLECT_ADMIN_KEY a value of its own, so no client can load adapters");
  const metricsDigest = options.metricsKey === undefined || options.metricsKey === "" ? undefined : digest(options.metricsKey);
  if (metricsDigest !== undefined && keys.includes(options.metricsKey as string)) throw new UsageError("the metrics key is also a client key — give REFLECT_METRICS_KEY a value of its own, so no tenant reads another's traffic");


  /**
   * The body read (`readRequest`). A large one is first read by a worker, where a hostile one is refused without this
   * thread parsing it; then, if it is not passed through, parsed here in the lane (one at a time, with a turn of the
   * event loop between two), its shape now known to be bounded.
   */
  async function readLarge(bytes: Buffer, reading: ReadOptions, client: string, signal: () => AbortSignal): Promise<ReadRequest> {
    if (pool === undefined) return lane.run(() => readRequest(bytes, reading));
    let outcome: JobOutcome;
    try {
      outcome = await pool.submit({ screen: bytes, options: reading }, "", { client, budget: new CheckBudget(limits.checks.requestMs), signal: signal() });
    } catch (error) {
      if (error instanceof CheckPoolBusyError) throw error;
      throw new ClientGone("the client closed the request", { cause: error });
    }
    if (outcome.kind === "invalid") throw new RequestFieldError(outcome.field, outcome.detail);
    if (outcome.kind === "stopped") throw new RequestFieldError("body", `could not be read within the gateway's ${outcome.limit} (${outcome.limitValue} ${outcome.unit})`);
    if (outcome.kind === "failed") throw new Error(`reading the body failed: ${outcome.message}`);
    const screened = outcome.result as Screened;
    if (screened.passThrough) return { body: undefined, stream: screened.stream };
    return lane.run(() => readChat(parseJson(bytes), screened.stream, reading, screened.plan));
  }
  const modelName = options.upstreamHttp?.model ?? options.upstream.modelId;
  const secret = (): string | undefined => (options.upstreamHttp === undefined ? undefined : process.env[options.upstreamHttp.apiKeyEnv]);
  /**
   * A JSON body with the upstream key blanked, should an upstream have echoed it into a reply: in every string before
   * it is written (a key with a character JSON escapes would not show in the text as itself), then in the text.
   */
  const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
    new Response(redactText(JSON.stringify(redactJsonValue(body, secret())), secret()), { status, headers: { "content-type": "application/json", ...headers } });
  /** A refusal as the gateway's error, its message (and checks) with the upstream key blanked. */
  const gatewayError = (r: Refusal): GatewayError => ({
    status: r.status,
    message: redactText(r.message, secret()),
    type: r.type,
    param: r.param,
    code: r.code,
    ...(r.reflect === undefined ? {} : { reflect: redactJsonValue(r.reflect, secret()) as ReflectExtension }),
  });
  const refuse = (r: Refusal, dialect: Dialect): Response => json(r.status, dialect.error(gatewayError(r)), r.headers);

  const relay = options.upstreamHttp === undefined ? undefined : openRelay(options.upstreamHttp, limits.requestTimeoutMs);
  /** How a body to each dialect's route is read: raw past pass-through only where the upstream speaks the dialect. */
  const readingOf = (dialect: DialectName): ReadOptions => ({ bounds: limits, relay: relay !== undefined && upstreamSpeaks(options.upstreamHttp, dialect), plan: options.buildChecks === undefined, dialect });
  const app = new Hono<Env>();
  // A keyless gateway is open to any web page the user visits (DNS rebinding, cross-site POSTs): refuse what no
  // client program sends. A keyed one is not: the page does not know the key. `/healthz` reveals nothing, and load
  // balancers probe it by IP.
  const guard = keys.length === 0 ? hostGuard({ boundHost: options.boundHost ?? "127.0.0.1", allowedHosts: options.allowedHosts ?? [], remedy: (name) => `start the gateway with --allowed-host ${name}` }) : undefined;
  // One middleware for who may ask, on the Node request's own headers (a plain object: no Request is built for it).
  app.use("*", async (c, next) => {
    if (c.req.path === "/healthz") return next();
    // A refusal here is in the dialect of the route asked (OpenAI's shape elsewhere), and a dialect's request is told.
    const routed = dialectOfRoute(c.req.path);
    const dialect = routed ?? chatDialect;
    const headers = c.env?.incoming?.headers ?? Object.fromEntries(c.req.raw.headers);
    const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
    if (guard !== undefined) {
      const refusal = guard({ host: first(headers.host), origin: first(headers.origin), "sec-fetch-site": first(headers["sec-fetch-site"]), "sec-fetch-mode": first(headers["sec-fetch-mode"]), "content-type": first(headers["content-type"]) }, c.req.method);
      if (refusal !== null) {
        if (routed !== undefined) observer.request({ kind: "rejected", status: refusal.status, ms: 0, stream: false, dialect: routed.name });
        return dialectError(dialect, { status: refusal.status, message: refusal.message, type: "invalid_request_error", param: null, code: refusal.code });
      }
      return next();
    }
    // The admin route and, on a gateway with tenants, the metrics route check their own keys, never a client's.
    if (c.req.path.startsWith("/admin/") || c.req.path === "/metrics") return next();
    // `Authorization: Bearer <key>` (OpenAI's clients), or `x-api-key: <key>` (Anthropic's).
    const key = keyIndex(keyDigests, first(headers.authorization) ?? (headers["x-api-key"] === undefined ? undefined : `Bearer ${first(headers["x-api-key"])}`));
    if (key >= 0) {
      // The tenant, and the client its shares count against: the tenant's name, never the key.
      const tenant = (tenantKeys[key] as TenantKey).tenant;
      c.set("tenant", tenant);
      c.set("client", `tenant:${tenant}`);
      return next();
    }
    // A rejected request to a dialect's route is still a request the observer hears of.
    if (routed !== undefined) observer.request({ kind: "rejected", status: 401, ms: 0, stream: false, dialect: routed.name });
    return dialectError(dialect, { status: 401, message: "missing or wrong API key — send Authorization: Bearer <the gateway's REFLECT_GATEWAY_KEY> (or x-api-key: <it>)", type: "authentication_error", param: null, code: "invalid_api_key" });
  });
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/v1/models", (c) =>
    c.json({
      object: "list",
      data: [
        { id: modelName, object: "model", created: 0, owned_by: "reflectkit-upstream" },
        ...[...judges.keys()].map((spec) => ({ id: spec, object: "model", created: 0, owned_by: "reflectkit-judge" })),
      ],
    }),
  );
  app.get("/metrics", async (c) => {
    if (options.metricsText === undefined) return dialectError(chatDialect, { status: 404, message: "metrics are not enabled on this gateway", type: "invalid_request_error", param: null, code: "not_found" });
    // On a gateway with tenants every series moves with every tenant's traffic: only the operator's keys read them.
    if (keys.length > 0) {
      const readers = [metricsDigest, adminDigest].filter((d): d is Buffer => d !== undefined);
      if (readers.length === 0) return dialectError(chatDialect, { status: 404, message: "metrics are off on a gateway with client keys until it has a key of its own — start it with REFLECT_METRICS_KEY (or REFLECT_ADMIN_KEY) set", type: "invalid_request_error", param: null, code: "not_found" });
      if (keyIndex(readers, c.req.header("authorization")) < 0) return dialectError(chatDialect, { status: 401, message: "missing or wrong metrics key — send Authorization: Bearer <the gateway's REFLECT_METRICS_KEY or REFLECT_ADMIN_KEY>; a client key does not read metrics", type: "authentication_error", param: null, code: "invalid_metrics_key" });
    }
    const { contentType, body } = await options.metricsText();
    return c.body(body, 200, { "content-type": contentType });
  });
  app.post("/admin/lora", (c) => adminLora(c));
  const served = Object.values(dialects);
  for (const dialect of served) app.post(dialect.route, (c) => answer(c, dialect));
  const messages = dialects.messages;
  if (messages !== undefined) app.post(`${messages.route}/count_tokens`, (c) => countTokens(c, messages));
  const routes = served.map((d) => `POST ${d.route}`).join(", ");
  app.notFound((c) => dialectError(dialectOfRoute(c.req.path) ?? chatDialect, { status: 404, message: `no route ${c.req.method} ${c.req.path} — the gateway serves ${routes}, GET /v1/models, /healthz, /metrics`, type: "invalid_request_error", param: null, code: "not_found" }));
  app.onError((_error, c) => dialectError(dialectOfRoute(c.req.path) ?? chatDialect, { status: 500, message: "the gateway failed on this request", type: "server_error", param: null, code: "internal_error" }));

  let inFlight = 0;
  /** One request to a dialect's route, whatever the dialect: one path, the dialect only reads and writes its shape. */
  async function answer(c: Context<Env>, dialect: Dialect): Promise<Response> {
    if (c.env?.incoming === undefined) return dialectError(dialect, { status: 500, message: "the gateway runs on Node's http server — serve it with startGateway (or @hono/node-server's serve), not app.fetch alone", type: "server_error", param: null, code: "not_node_server" });
    const started = performance.now();
    // The tenant its key names (the middleware set it); a keyless gateway has one, `local`.
    const tenant = c.get("tenant") ?? LOCAL_TENANT;
    inFlight += 1;
    const tenantInFlight = (inFlightBy.get(tenant) ?? 0) + 1;
    inFlightBy.set(tenant, tenantInFlight);
    let told = false;
    /** Tells the observer how the request ended, once: at the response, or at the end of a relayed stream. */
    const tell = (outcome: Omit<RequestOutcome, "ms">): void => {
      if (told) return;
      told = true;
      inFlight -= 1;
      const left = (inFlightBy.get(tenant) ?? 1) - 1;
      if (left === 0) inFlightBy.delete(tenant);
      else inFlightBy.set(tenant, left);
      const arm = outcome.episode?.arm ?? outcome.arm;
      observer.request({ ...outcome, ms: performance.now() - started, dialect: dialect.name, tenant, ...(arm === undefined ? {} : { arm }) });
    };
    // The request's own AbortSignals are made only past pass-through, which needs none.
    let deadline: AbortSignal | undefined;
    let kind: RequestOutcome["kind"] = "rejected";
    let stream = false;
    try {
      // A tenant's requests in flight, pass-through included, are bounded before its body is read.
      if (tenantInFlight > limits.perTenantInFlight) throw new Refusal(429, `this tenant has ${limits.perTenantInFlight} requests in flight, its share of the gateway — retry after ${limits.retryAfterSeconds} s`, "rate_limit_error", null, "tenant_in_flight_full", { "retry-after": String(limits.retryAfterSeconds) });
      // 1. Parse and validate.
      const { incoming, outgoing } = c.env;
      const bytes = await readBody(incoming, limits.bodyBytes, limits.bodyTimeoutMs);
      // The request's AbortSignal only where needed: making it builds a whole Request, which pass-through does without.
      // The client of a keyless gateway is its address, read only when a share needs it.
      const who = (): string => c.get("client") ?? `addr:${incoming.socket.remoteAddress ?? "unknown"}`;
      const reading = readingOf(dialect.name);
      const { body, chat, plan, stream: streamed } = bytes.byteLength <= LANE_BYTES ? readRequest(bytes, reading) : await readLarge(bytes, reading, who(), () => c.req.raw.signal);
      stream = streamed;
      if (chat === undefined && relay !== undefined) {
        // 2–4 for an HTTP upstream's pass-through: relayed on Node streams, answered here only if the upstream is not.
        kind = "pass-through";
        // With arms, the canary picks this request's arm too; the adapter arm is the adapter's model name on the upstream.
        // The relay pins the adapter until its body ends, so a replacement does not unload it under the relayed call.
        const lease = passThroughArm(incoming, bytes) === "adapter" ? await options.arms?.pin("adapter") : undefined;
        const adapter = lease?.served;
        if (adapter === undefined) lease?.release();
        const passArm = options.arms === undefined ? undefined : adapter === undefined ? "base" : "adapter";
        if (passArm !== undefined) outgoing.setHeader("x-reflect-arm", passArm);
        // A large body is rewritten in the lane, as a large reflected body is parsed: one at a time, between turns.
        let relayed: Response | undefined;
        try {
          const sent = adapter === undefined ? bytes : bytes.byteLength <= LANE_BYTES ? withModel(bytes, adapter) : await lane.run(() => withModel(bytes, adapter));
          relayed = await relay.send(
            { body: sent, incoming, outgoing },
            (status, failure) => {
              lease?.release();
              tell({ kind: "pass-through", status, stream, ...(failure === undefined ? {} : { upstreamFailure: failure }), ...(passArm === undefined ? {} : { arm: passArm }) });
            },
            dialect,
          );
        } catch (error) {
          lease?.release();
          throw error;
        }
        return relayed ?? RESPONSE_ALREADY_SENT;
      }
      const client = c.req.raw.signal;
      deadline = AbortSignal.timeout(Math.max(0, Math.round(limits.requestTimeoutMs - (performance.now() - started))));
      if (chat === undefined) throw new Error("a request without a chat request past pass-through");
      const judge = chat.reflect?.judge === undefined ? undefined : judges.get(chat.reflect.judge);
      if (chat.reflect?.judge !== undefined && judge === undefined) throw new RequestFieldError("reflect.judge", `is not a judge of this gateway; use one of: ${[...judges.keys()].join(", ") || "(none — start it with --judge SPEC)"}`);
      if (chat.reflect?.memory !== undefined && options.memory === undefined) throw new RequestFieldError("reflect.memory", "this gateway keeps no lessons — start it with --memory FILE (a SQLite file) or --store postgres://… (shared by several gateways)");
      const asker = who();
      const arm = chat.reflect === undefined ? passThroughArm(incoming, bytes) : armFor(chat, incoming, bytes);
      const replayOf = replayOfHeader(incoming);
      const signal = AbortSignal.any([client, deadline]);
      // Without `options.buildChecks`, every reflected request was planned as it was read (`reading.plan`).
      // A check that does not compile names its field as this dialect's client wrote it.
      const checks =
        chat.reflect === undefined
          ? []
          : await Promise.resolve(options.buildChecks !== undefined ? options.buildChecks(chat.checks, { toolChoiceRequired: chat.toolChoiceRequired, client: asker, signal }) : compileRequestChecks(plan as RequestCheckPlan, { pool: pool as CheckPool, client: asker, signal })).catch((error: unknown) => {
              throw inDialect(error, dialect.name);
            });
      const slot = admission.enter(client, asker);
      if (slot === null) throw new Refusal(429, `the gateway is at capacity (${limits.parallel} running, ${limits.maxQueue} queued) — retry after ${limits.retryAfterSeconds} s`, "rate_limit_error", null, "queue_full", { "retry-after": String(limits.retryAfterSeconds) });
      if (slot === "client-full") throw new Refusal(429, `this client has ${perClient.running} requests running and ${perClient.queued} waiting, its share of the gateway — retry after ${limits.retryAfterSeconds} s`, "rate_limit_error", null, "client_share_full", { "retry-after": String(limits.retryAfterSeconds) });
      const meta: CompletionMeta = { id: newId(dialect), created: Math.floor(now() / 1000), model: modelName, ...(chat.echo === undefined ? {} : { echo: chat.echo }) };
      const model = typeof (body as { model?: unknown }).model === "string" ? (body as { model: string }).model : undefined;
      /** 2–4 once the request has its slot: the answer, or a throw that `refusalOf` turns into one. */
      const settle = async (): Promise<{ response: Response; episode?: Episode }> => {
        try {
          await raceAbort(slot.ready, signal);
          kind = chat.reflect === undefined ? "pass-through" : "reflected";
          // 2–4 for an embedded upstream's pass-through, or one that does not speak the dialect: one call, in the dialect.
          // On an engine that takes turns between arms, a pass-through runs in its arm's turn (src/serve/arms.ts).
          if (chat.reflect === undefined) {
            const response = await generateOnce(options.arms?.model(arm ?? "base") ?? options.upstream, chat, { meta, signal, dialect, secret: secret() });
            if (arm !== undefined) response.headers.set("x-reflect-arm", arm);
            return { response };
          }
          // 2. Build options, 3. run the loop.
          const span = startRequestSpan(tracer, { method: "POST", route: dialect.route, ...(model === undefined ? {} : { model }), stream: chat.stream, tenant, ...(arm === undefined ? {} : { arm }) });
          let episode: Episode<RequestRecord>;
          try {
            // A replay draws the original's sampling seeds (they derive from the item's id), so on a sampled model
            // it repeats the original's calls and both arms of a paired replay share their random numbers.
            episode = await runReflected({ chat, checks, judge, id: replayOf ?? meta.id, signal, span, dialect: dialect.name, arm: arm ?? "base", tenant });
            episode.id = meta.id;
            episode.arm = arm ?? "base";
            episode.tenant = tenant;
            if (replayOf !== undefined) episode.replayOf = replayOf;
            // In the background, after the answer: recording a lesson never delays it, nor fails it.
            // The lessons are the tenant's, and hold no upstream key an upstream echoed into a reflection.
            if (chat.reflect.memory !== undefined) options.memory?.learn(tenant, chat.reflect.memory, chat.messages, redactJsonValue(episode, secret()));
            await options.recorder?.append(episode).catch((error: unknown) => {
              throw new Refusal(500, `the request ran but its record could not be written (${(error as Error).message}); it is not acknowledged — check the --record folder`, "server_error", null, "record_failed");
            });
          } catch (error) {
            endRequestSpan(span, error instanceof Error ? error : new Error(String(error)), refusalOf(error, deadline?.aborted === true, client.aborted).status);
            throw error;
          }
          // 4. Shape the response.
          try {
            const response = shapeReflected(chat, episode, meta, dialect);
            response.headers.set("x-reflect-arm", episode.arm ?? "base");
            endRequestSpan(span, episode, response.status);
            return { response, episode };
          } catch (error) {
            endRequestSpan(span, episode, error instanceof Refusal ? error.status : 500);
            (error as { episode?: Episode }).episode = episode;
            throw error;
          }
        } finally {
          slot.release();
        }
      };
      const settling = settle();
      if (chat.stream && chat.reflect !== undefined) {
        const early = await Promise.race([settling, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), limits.streamKeepAliveMs).unref())]);
        if (early === undefined) return keptAlive(settling, dialect, () => deadline?.aborted === true, (status, episode, failure) => tell({ kind, status, stream, ...(episode === undefined ? {} : { episode }), ...(failure === undefined ? {} : { upstreamFailure: failure }) }));
      }
      const { response, episode } = await settling;
      tell({ kind, status: response.status, stream, ...(episode === undefined ? {} : { episode }), ...(arm === undefined ? {} : { arm }), ...(response.status >= 500 && episode !== undefined ? { upstreamFailure: upstreamError(episode.error ?? { message: "timed out", name: "Error" }, false).failure } : {}) });
      return response;
    } catch (error) {
      const timedOut = deadline?.aborted === true;
      const refusal = refusalOf(error, timedOut, error instanceof ClientGone || c.req.raw.signal.aborted);
      const episode = (error as { episode?: Episode } | undefined)?.episode;
      tell({ kind, status: refusal.status, stream, ...(episode === undefined ? {} : { episode }), ...(refusal.status === 502 || refusal.status === 504 || refusal.code === "upstream_rate_limited" ? { upstreamFailure: upstreamError(episode?.error ?? error, timedOut).failure } : {}) });
      return refuse(refusal, dialect);
    }
  }

  /**
   * `POST /v1/messages/count_tokens`: relayed raw to an upstream that speaks Messages; counted by an upstream that can
   * count without generating (the embedded engine); otherwise a 400 saying the upstream cannot count.
   */
  async function countTokens(c: Context<Env>, dialect: Dialect): Promise<Response> {
    if (c.env?.incoming === undefined) return dialectError(dialect, { status: 500, message: "the gateway runs on Node's http server", type: "server_error", param: null, code: "not_node_server" });
    try {
      const { incoming, outgoing } = c.env;
      const bytes = await readBody(incoming, limits.bodyBytes, limits.bodyTimeoutMs);
      if (relay !== undefined && upstreamSpeaks(options.upstreamHttp, dialect.name)) {
        const relayed = await relay.send({ body: bytes, incoming, outgoing }, () => {}, { ...dialect, upstreamPath: `${dialect.upstreamPath}/count_tokens` });
        return relayed ?? RESPONSE_ALREADY_SENT;
      }
      const count = options.upstream.countTokens?.bind(options.upstream);
      if (count === undefined) throw new Refusal(400, `the gateway's upstream (${modelName}) cannot count tokens without generating: count_tokens is answered by an embedded model, or relayed to an upstream that speaks Messages (--upstream-api messages)`, "invalid_request_error", null, "cannot_count");
      // Parsed here, not in a worker: so its size is bounded tighter than a message's, and its shape as a message's is.
      if (bytes.byteLength > COUNT_TOKENS_BYTES) throw new Refusal(413, `a count_tokens body is at most ${COUNT_TOKENS_BYTES} bytes on this gateway`, "invalid_request_error", null, "request_too_large");
      const body = parseJson(bytes);
      const shape = measure(body, limits.bodyDepth, limits.bodyNodes);
      if (shape.depth > limits.bodyDepth || shape.nodes > limits.bodyNodes) throw new RequestFieldError("body", `is nested deeper than ${limits.bodyDepth} levels or holds more than ${limits.bodyNodes} values`);
      // The same reading as a message's; count_tokens bodies carry no max_tokens, which a message needs.
      const request = (await lane.run(() => readChat(typeof body === "object" && body !== null && !Array.isArray(body) ? { ...body, max_tokens: 1 } : body, false, { ...readingOf(dialect.name), plan: false }))).chat;
      if (request === undefined) throw new Error("count_tokens read no request");
      const tools = request.sampling.tools;
      return json(200, { input_tokens: await count({ messages: request.messages, ...(tools === undefined ? {} : { tools }) }) });
    } catch (error) {
      return refuse(refusalOf(error, false, error instanceof ClientGone), dialect);
    }
  }

  /**
   * A reflected stream that did not settle within `limits.streamKeepAliveMs`: answered now, 200 and the dialect's event
   * stream, with its keep-alive at once and every `streamKeepAliveMs` until the answer settles; then the answer's
   * events, or the dialect's error event (the status is sent already). A client that goes away cancels the stream,
   * which aborts the request's signal (the server library's), and with it the episode and its upstream calls.
   */
  function keptAlive(settling: Promise<{ response: Response; episode?: Episode }>, dialect: Dialect, timedOut: () => boolean, tell: (status: number, episode: Episode | undefined, failure: RequestOutcome["upstreamFailure"]) => void): Response {
    const encoder = new TextEncoder();
    let timer: NodeJS.Timeout | undefined;
    let open = true;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (text: string): void => {
          if (open) controller.enqueue(encoder.encode(text));
        };
        send(dialect.keepAlive);
        timer = setInterval(() => send(dialect.keepAlive), limits.streamKeepAliveMs);
        settling.then(
          async ({ response, episode }) => {
            clearInterval(timer);
            // Every failure is thrown (`shapeReflected`, `generateOnce`); a settled answer is the stream's events.
            if (response.ok) send(await response.text());
            else send(dialect.errorEvent({ status: response.status, message: "the gateway failed on this request", type: "server_error", param: null, code: "internal_error" }));
            tell(response.status, episode, undefined);
          },
          (error: unknown) => {
            clearInterval(timer);
            const refusal = refusalOf(error, timedOut(), !open);
            send(dialect.errorEvent(gatewayError(refusal)));
            const episode = (error as { episode?: Episode } | undefined)?.episode;
            tell(refusal.status, episode, refusal.status === 502 || refusal.status === 504 || refusal.code === "upstream_rate_limited" ? upstreamError(episode?.error ?? error, false).failure : undefined);
          },
        ).finally(() => {
          if (!open) return;
          open = false;
          controller.close();
        });
      },
      cancel() {
        open = false;
        clearInterval(timer);
      },
    });
    return new Response(body, { status: 200, headers: { ...sseHeaders } });
  }

  /**
   * The cascade on the request, the same loop as `reflect eval`, inside the request's `gateway.request` span; with
   * `reflect.memory`, the lessons recalled under its key are quoted notes in its prompt and named in its record.
   */
  async function runReflected(request: { chat: ChatRequest; checks: readonly RequestCheck[]; judge: LanguageModel | undefined; id: string; signal: AbortSignal; span: SpanHandle; dialect: DialectName; arm: ArmName; tenant: string }): Promise<Episode<RequestRecord>> {
    const { chat, checks, judge, id, signal, span } = request;
    const reflect = chat.reflect as NonNullable<ChatRequest["reflect"]>;
    const resolved = resolveGatewayStrategy(chat);
    const reflection = { maxTokens: resolved.reflectionMaxTokens, temperature: 0 };
    const memory = reflect.memory === undefined ? undefined : options.memory;
    const recalled = memory === undefined || reflect.memory === undefined ? undefined : await memory.recall(request.tenant, reflect.memory, chat.messages, signal);
    const task = requestTask(checks);
    // The episode pins its arm's adapter: one loaded meanwhile never takes its later calls (src/serve/arms.ts).
    const lease = request.arm === "base" ? undefined : await options.arms?.pin(request.arm, signal);
    const episode = await runStrategy<RequestRecord>(resolved, {
      model: lease?.model ?? options.arms?.model("base") ?? options.upstream,
      task: memory === undefined || recalled === undefined ? task : memory.task(task, recalled),
      item: { id, record: { messages: chat.messages, checks: chat.checks, dialect: request.dialect, options: recordedOptions(chat) } },
      critics: judge === undefined ? [] : [rubricJudge<RequestRecord>(judge, { sampling: { maxTokens: resolved.judgeMaxTokens, temperature: 0 } })],
      budget: reflect.budget,
      attempt: chat.sampling,
      reflection,
      ...(chat.seed === undefined ? {} : { seed: chat.seed }),
      signal,
      tracer,
      parentSpan: span,
    }).finally(() => lease?.release());
    return memory === undefined || recalled === undefined ? episode : memory.annotate(episode, recalled);
  }

  /**
   * The arm of a reflected request: the one it forces (`reflect.arm`), else the canary's pick by the hash of
   * `reflect.arm_key`, the `x-reflect-arm-key` header, or the body's bytes. The base while no adapter is loaded.
   */
  function armFor(chat: ChatRequest, incoming: IncomingMessage, bytes: Buffer): ArmName {
    const reflect = chat.reflect as NonNullable<ChatRequest["reflect"]>;
    const loaded = options.arms?.model("adapter") !== undefined;
    if (reflect.arm !== undefined) {
      if (reflect.arm === "adapter" && !loaded) throw new RequestFieldError("reflect.arm", "is adapter, but this gateway has no adapter loaded (start it with --lora FILE, or load one with POST /admin/lora)");
      return reflect.arm;
    }
    if (options.arms === undefined || !loaded || options.arms.canaryPercent === 0) return "base";
    return armOf(reflect.armKey ?? canaryKey(incoming, bytes), options.arms.canaryPercent);
  }

  /**
   * The arm of a pass-through request, by the same canary: the hash of the `x-reflect-arm-key` header or of the body's
   * bytes. Undefined on a gateway without arms; the base while no adapter is loaded.
   */
  function passThroughArm(incoming: IncomingMessage, bytes: Buffer): ArmName | undefined {
    if (options.arms === undefined) return undefined;
    if (options.arms.model("adapter") === undefined || options.arms.canaryPercent === 0) return "base";
    return armOf(canaryKey(incoming, bytes), options.arms.canaryPercent);
  }

  /** What the canary hashes when the request names no `reflect.arm_key`: the `x-reflect-arm-key` header, else the body. */
  function canaryKey(incoming: IncomingMessage, bytes: Buffer): string {
    const header = incoming.headers["x-reflect-arm-key"];
    const fromHeader = Array.isArray(header) ? header[0] : header;
    if (fromHeader !== undefined && (fromHeader === "" || fromHeader.length > ARM_KEY_CHARS)) throw new RequestFieldError("x-reflect-arm-key", `must be a non-empty header of at most ${ARM_KEY_CHARS} characters`);
    return fromHeader ?? `body:${createHash("sha256").update(bytes).digest("hex")}`;
  }

  /** `x-reflect-replay-of`: the recorded episode a replayed request repeats (`reflect replay` sends it). */
  function replayOfHeader(incoming: IncomingMessage): string | undefined {
    const header = incoming.headers["x-reflect-replay-of"];
    const value = Array.isArray(header) ? header[0] : header;
    if (value === undefined) return undefined;
    if (!/^[A-Za-z0-9._:-]{1,128}$/u.test(value)) throw new RequestFieldError("x-reflect-replay-of", "must be an episode id: 1–128 letters, digits, . _ : or -");
    return value;
  }

  /**
   * `POST /admin/lora {path, scale?}`: loads or replaces the adapter arm's adapter, without a restart. Needs the admin
   * key (never a client's): 404 when the gateway has none, 401 without it or with another key.
   */
  async function adminLora(c: Context<Env>): Promise<Response> {
    const error = (status: number, message: string, code: string): Response => json(status, { error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", param: null, code } });
    if (adminDigest === undefined) return error(404, "the admin route is off on this gateway — start it with REFLECT_ADMIN_KEY set", "not_found");
    if (keyIndex([adminDigest], c.req.header("authorization")) !== 0) return error(401, "missing or wrong admin key — send Authorization: Bearer <the gateway's REFLECT_ADMIN_KEY>", "invalid_admin_key");
    if (options.arms === undefined) return error(409, "this gateway has no adapter arm — start it with --lora FILE or --canary P", "no_adapter_arm");
    let body: unknown;
    try {
      body = JSON.parse((c.env?.incoming === undefined ? Buffer.from(await c.req.arrayBuffer()) : await readBody(c.env.incoming, ADMIN_BODY_BYTES, limits.bodyTimeoutMs)).toString("utf8"));
    } catch (failure) {
      if (failure instanceof Refusal) {
        // A 408's `connection: close` included: the rest of that body never comes.
        const refused = error(failure.status, failure.message, failure.code ?? "invalid_value");
        for (const [name, value] of Object.entries(failure.headers)) refused.headers.set(name, value);
        return refused;
      }
      return error(400, "the body must be JSON: { \"path\": \"<adapter file or folder on the gateway's machine>\", \"scale\"?: number }", "invalid_json");
    }
    if (!isRecord(body) || typeof body.path !== "string" || body.path === "") return error(400, "path: must be the adapter's file (a GGUF LoRA) or, for a vLLM upstream, its PEFT folder", "invalid_value");
    if (body.scale !== undefined && (typeof body.scale !== "number" || !Number.isFinite(body.scale))) return error(400, "scale: must be a finite number", "invalid_value");
    try {
      const loaded = await options.arms.load({ path: body.path, ...(body.scale === undefined ? {} : { scale: body.scale as number }) });
      return json(200, { arm: "adapter", model: loaded.model, canary_percent: options.arms.canaryPercent, ...(loaded.note === undefined ? {} : { note: loaded.note }) });
    } catch (failure) {
      return error(failure instanceof ReflectkitError && !(failure as { isRetryable?: boolean }).isRetryable ? 400 : 502, `the adapter was not loaded: ${redactText((failure as Error).message, secret())}`, "adapter_not_loaded");
    }
  }

  /**
   * The selected attempt in the dialect, with the `reflect` extension and its headers; throws a Refusal for an episode
   * that made no attempt (its failure) and, with `reflect.on_failure: "error"`, for an answer that failed its checks.
   */
  function shapeReflected(chat: ChatRequest, episode: Episode, meta: CompletionMeta, dialect: Dialect): Response {
    const call = selectedCall(episode);
    if (call === undefined) {
      // A budget stop keeps its error only when the budget could not fit one call (`runEpisode`): the request's fault.
      if (episode.error !== undefined && parseStopReason(episode.stoppedBy).kind === "budget") throw new Refusal(400, `reflect.budget: ${episode.error.message}`, "invalid_request_error", "reflect.budget", "budget_too_small");
      if (episode.error === undefined) throw new Refusal(504, `the request's budget (${episode.stoppedBy}) ran out before any attempt`, "server_error", null, "upstream_timeout");
      throw upstreamRefusal(episode.error, false);
    }
    const reflect = redactJsonValue(reflectExtension(episode), secret()) as ReflectExtension;
    const headers = reflectHeaders(reflect);
    // Settled before any byte, so a streamed request gets the same error: a failed answer is never sent as one.
    if (chat.reflect?.onFailure === "error" && reflect.passed === false) throw new Refusal(422, failedChecksMessage(reflect), "invalid_request_error", null, "checks_failed", headers, reflect);
    const reply = redactJsonValue({ text: call.output, toolCalls: call.toolCalls, finishReason: call.finishReason }, secret()) as CompletionReply;
    if (!chat.stream) return json(200, dialect.answer(meta, reply, episode.usage, reflect), headers);
    return new Response(redactText(dialect.events(meta, reply, episode.usage, chat, reflect), secret()), { headers: { ...sseHeaders, ...headers } });
  }

  /** What an error that ended a request is answered with. */
  function refusalOf(error: unknown, timedOut: boolean, clientGone: boolean): Refusal {
    if (error instanceof Refusal) return error;
    if (error instanceof CheckPoolBusyError) return new Refusal(429, `${error.message} — retry after ${limits.retryAfterSeconds} s`, "rate_limit_error", null, "checks_busy", { "retry-after": String(limits.retryAfterSeconds) });
    if (error instanceof RequestFieldError) return new Refusal(400, error.message, "invalid_request_error", error.field, "invalid_value");
    // The client is gone: nobody reads this answer (499 for the observer, as nginx logs it).
    if (clientGone && !timedOut) return new Refusal(499, "the client closed the request", "invalid_request_error", null, "client_closed");
    if (timedOut) return new Refusal(504, `the request did not finish within ${limits.requestTimeoutMs} ms`, "server_error", null, "upstream_timeout");
    return upstreamRefusal(error, false);
  }

  /**
   * A failed upstream call, in every dialect alike: a timeout 504, an upstream still rate-limiting after the model's own
   * retries (which honour its Retry-After) 429 with the gateway's Retry-After, anything else 502.
   */
  function upstreamRefusal(error: unknown, timedOut: boolean): Refusal {
    const failure = upstreamError(error, timedOut);
    if (failure.status === 502 && (error as { status?: unknown } | null)?.status === 429) {
      return new Refusal(429, `the upstream is rate-limiting: ${(error as { message?: string }).message ?? "429"} — retry after ${limits.retryAfterSeconds} s`, "rate_limit_error", null, "upstream_rate_limited", { "retry-after": String(limits.retryAfterSeconds) });
    }
    return new Refusal(failure.status, failure.message, "server_error", null, failure.status === 504 ? "upstream_timeout" : "upstream_error");
  }

  return Object.assign(app, {
    load: (): GatewayLoad => ({ inFlight, queued: admission.queuedCount, checks: pool === undefined ? { queued: 0, busy: 0, replaced: 0 } : { ...pool.load, replaced: pool.restarts }, tenants: Object.fromEntries(inFlightBy) }),
    close: () => {
      relay?.close();
      void pool?.close();
    },
  });
}

/**
 * At most `max` connections open at once. At the cap, a new connection closes the one quiet longest with no request in
 * flight — idle between keep-alive requests, or still sending its headers — and only when every connection has a
 * request in flight is the new one closed instead. So a flood of idle connections cannot lock out a health probe or
 * a real client, as Node's own `maxConnections` (which refuses the newcomer) would let it. A connection has a request
 * in flight while Node's server holds a response for it (`socket._httpMessage`, set from the parsed request until the
 * response is done); each request moves its connection to the end of the order, so no listener is added per request.
 */
function capConnections(server: import("node:http").Server, max: number): void {
  const open = new Set<import("node:net").Socket>();
  server.on("connection", (socket: import("node:net").Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    if (open.size <= max) return;
    for (const older of open) {
      if (older !== socket && (older as { _httpMessage?: unknown })._httpMessage == null) {
        older.destroy();
        return;
      }
    }
    socket.destroy();
  });
  server.on("request", (request: IncomingMessage) => {
    const socket = request.socket;
    if (!open.delete(socket)) return;
    open.add(socket);
  });
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Which key `header` carries (`Bearer <key>`), or −1: compared in constant time, every key every time. */
function keyIndex(keyDigests: readonly Buffer[], header: string | undefined): number {
  const given = digest(/^Bearer\s+(.+)$/iu.exec(header ?? "")?.[1]?.trim() ?? "");
  // Hashing first makes each comparison constant-time whatever the lengths.
  let found = -1;
  for (const [i, key] of keyDigests.entries()) if (timingSafeEqual(given, key) && found < 0) found = i;
  return found;
}

/** A client that closed its connection before its request body ended. */
class ClientGone extends Error {}

/**
 * The body's bytes, read from the Node request, at most `limit` of them: a longer body (announced or sent) is a 413.
 * One not ended within `timeoutMs` of the read's start — stopped short of its Content-Length, or trickled — is a 408
 * with `connection: close`, so its connection is closed once the answer is written (src/serve/body-deadline.ts says
 * why Node's own `requestTimeout` is not relied on).
 */
function readBody(incoming: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  const tooLarge = (): Refusal => new Refusal(413, `the request body is over ${limit} bytes`, "invalid_request_error", null, "request_too_large");
  if (Number(incoming.headers["content-length"] ?? NaN) > limit) return Promise.reject(tooLarge());
  if (incoming.destroyed) return Promise.reject(new ClientGone("the client closed the request"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const deadline = bodyDeadline(incoming, timeoutMs, () => {
      settle();
      incoming.pause();
      reject(new Refusal(408, `the request body did not arrive within ${timeoutMs} ms (it stopped short of its Content-Length, or came too slowly); the connection is closed`, "invalid_request_error", null, "body_timeout", { connection: "close" }));
    });
    const settle = (): void => {
      deadline.clear();
      incoming.off("data", onData).off("end", onEnd).off("close", onClose).off("error", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        // The rest is left to the server library, which drains or drops what a handler did not read.
        settle();
        incoming.pause();
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      settle();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onClose = (): void => {
      settle();
      reject(new ClientGone("the client closed the request before its body ended"));
    };
    incoming.on("data", onData).on("end", onEnd).on("close", onClose).on("error", onClose);
  });
}

export interface RunningGateway {
  /** What the gateway is doing now. */
  load(): GatewayLoad;
  /** `http://host:port`; clients use `<url>/v1` as their base URL. */
  url: string;
  /**
   * Stops accepting connections, waits for requests in flight up to `graceMs` (default 10 000), then cuts what is
   * left. Models and the recorder are the caller's to close.
   */
  close(graceMs?: number): Promise<void>;
}

/** Serves `createGateway(options)` on `host:port` (default 127.0.0.1, and port 8787; 0 picks a free one). */
export async function startGateway(options: GatewayOptions & { host?: string; port?: number }): Promise<RunningGateway> {
  const host = options.host ?? "127.0.0.1";
  const limits: GatewayLimits = { ...defaultGatewayLimits, ...options.limits };
  const app = createGateway({ ...options, boundHost: host });
  // Node's own limits on a connection: a client that trickles its headers or holds a connection idle is cut instead of
  // holding memory until Node's 300 s default. A body's own deadline is the gateway's (`readBody`); Node's request
  // timeout stays behind it as a backstop (src/serve/body-deadline.ts).
  const serverOptions = { headersTimeout: limits.headersTimeoutMs, requestTimeout: nodeRequestTimeout(limits), keepAliveTimeout: limits.keepAliveTimeoutMs, connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 8787, serverOptions }, () => resolve(s));
    capConnections(s as import("node:http").Server, limits.maxConnections);
    s.once("error", (error: NodeJS.ErrnoException) => {
      app.close();
      if (error.code === "EADDRINUSE") reject(new UsageError(`${host}:${options.port ?? 8787} is in use — pass another --port (0 picks a free one)`, { cause: error }));
      else if (error.code === "EACCES" || error.code === "EADDRNOTAVAIL") reject(new UsageError(`cannot listen on ${host}:${options.port ?? 8787} (${error.code}) — pass another --host or --port`, { cause: error }));
      else reject(error);
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const http = server as import("node:http").Server;
  let closing: Promise<void> | undefined;
  return {
    load: () => app.load(),
    url: `http://${shownHost}:${address.port}`,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => http.closeAllConnections(), graceMs);
        http.close(() => {
          clearTimeout(timer);
          app.close();
          resolve();
        });
        http.closeIdleConnections();
      });
      return closing;
    },
  };
}
