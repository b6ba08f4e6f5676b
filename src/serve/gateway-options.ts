/**
 * What the gateway is started with: its limits (`GatewayLimits`, with the caps where it departs from the strategies'
 * defaults), its options, and the gauges it reports.
 */
import type { HttpBindings } from "@hono/node-server";
import { defaultCheckPoolLimits, type CheckPoolLimits } from "../critics/request/check-pool.js";
import type { RequestCheck } from "../critics/request/request-check.js";
import type { RequestCheckSpec } from "../critics/request/request-task.js";
import { defaultRequestCheckBounds, type RequestCheckBounds } from "../critics/request/spec-bounds.js";
import type { RequestMemory } from "../loops/request-memory.js";
import type { LanguageModel } from "../models/language-model.js";
import type { RecordWriter } from "../record/record-writer.js";
import type { Tracer } from "../telemetry/tracer.js";
import type { GatewayArms } from "./arms.js";
import type { Dialect } from "./dialects/index.js";
import type { GatewayConfig, UpstreamSend } from "./gateway-config-types.js";

export { upstreamSendFields, type UpstreamSend } from "./gateway-config-types.js";
import type { GatewayObserver } from "./observer.js";
import type { UpstreamHttp } from "./pass-through.js";
import type { TenantKey } from "./tenants.js";

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
  /**
   * `max_tokens` of a request that sets none, where the operator wants one; absent (the default), such a request is
   * sent upstream with none — the upstream's own default applies, under the request's token budget.
   */
  defaultMaxTokens?: number;
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
 * `max_tokens` sends none upstream (unless the operator set `GatewayLimits.defaultMaxTokens`): the upstream's own
 * default applies, and the request's token budget still bounds the reply. `attemptMaxTokens` is the limit such a
 * request ran with before that, which the replay of an older record (one that kept no options) asks for again.
 * Every reflected request runs under a budget — these caps, or less where it asks —
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

/** One of several models behind the gateway, opened: the name clients send as `model`, and its upstream. */
export interface GatewayModel {
  /** The name clients send as `model`, `/v1/models` lists and `reflect.judge` may name. */
  name: string;
  /** The model it runs on (opened with `openModel`). */
  upstream: LanguageModel;
  /** When its upstream is an HTTP endpoint: where its pass-through requests go, raw, in the dialects it speaks. */
  upstreamHttp?: UpstreamHttp;
  /** Models (by name) tried in order when its upstream fails before answering. */
  fallbacks?: readonly string[];
  /** What of a client's request its upstream is sent besides messages and sampling (`UpstreamSend`); default none. */
  send?: readonly UpstreamSend[];
}


export interface GatewayOptions {
  /** The model every request runs on (opened with `openModel`); with `models`, unused (pass the default model's). */
  upstream: LanguageModel;
  /** When the upstream is an OpenAI-compatible endpoint: where pass-through requests go, raw. */
  upstreamHttp?: UpstreamHttp;
  /** Without `models`: what of a request the upstream is sent besides messages and sampling (`GatewayModel.send`). */
  upstreamSend?: readonly UpstreamSend[];
  /**
   * Several models behind one URL, picked by a request's `model` (an unknown one is answered 404). Absent: `upstream`
   * answers every request, whatever its `model`. The default model runs the arms and `count_tokens`.
   */
  models?: readonly GatewayModel[];
  /** The model of a request that names none (default: the first of `models`). */
  defaultModel?: string;
  /** Turns a request's check spec into checks (default: in the gateway's check workers, under `limits.checks`). */
  buildChecks?: BuildRequestChecks;
  /** The judges a request may name in `reflect.judge`, by the spec given at start (an allowlist). */
  judges?: ReadonlyMap<string, LanguageModel>;
  /** Told of every chat-completion request once, however it ended. */
  observer?: GatewayObserver;
  /**
   * The operator's config file (`reflect serve --config`), validated: its policies apply to requests by tenant, model and
   * route. Absent: requests reflect only when they carry `reflect`, as always.
   */
  config?: GatewayConfig;
  /**
   * Reads the config again (`POST /admin/config` without a body, the CLI's SIGHUP); a throw keeps the config in use.
   * Absent: `POST /admin/config` answers 409.
   */
  loadConfig?: () => GatewayConfig | Promise<GatewayConfig>;
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
export type Env = { Bindings: HttpBindings; Variables: { client: string; tenant: string } };
