/**
 * The gateway: an OpenAI-compatible HTTP door onto the cascade. One request path, in this file: parse and validate →
 * build options → run the loop → shape the response (`answer`). A request without `reflect` is passed through to the
 * upstream unchanged, unless an operator's policy applies to it (src/serve/policy.ts, applied as its body is read). Who may ask is src/serve/auth.ts; the operator's routes src/serve/admin.ts; count_tokens
 * src/serve/count-tokens.ts; a slow reflected stream's keep-alive src/serve/keep-alive.ts; the limits and options
 * src/serve/gateway-options.ts.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { serve } from "@hono/node-server";
// Imported before `serve` replaces the global Response: the marker must be a plain Response for the server library.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono, type Context } from "hono";
import { CheckBudget, CheckPool, CheckPoolBusyError, type JobOutcome } from "../critics/request/check-pool.js";
import { compileRequestChecks, type RequestCheckPlan } from "../critics/request/isolated-checks.js";
import type { RequestCheck } from "../critics/request/request-check.js";
import type { RequestRecord } from "../critics/request/request-task.js";
import { RequestFieldError, UsageError } from "../errors.js";
import { parseStopReason } from "../loops/stop-reason.js";
import { runRequestEpisode, type RequestEpisode } from "../loops/request-episode.js";
import type { Episode } from "../loops/types.js";
import type { LanguageModel } from "../models/language-model.js";
import { noopTracer, type SpanHandle, type Tracer } from "../telemetry/tracer.js";
import { raceAbort } from "../util/abortable.js";
import { SerialLane } from "../util/serial-lane.js";
import { LOCAL_TENANT } from "../core/tenant.js";
import { adminConfig, adminLora, metrics } from "./admin.js";
import { Admission } from "./admission.js";
import type { ArmName } from "./arms.js";
import { gatewayKeys, whoMayAsk, type GatewayKeys } from "./auth.js";
import { nodeRequestTimeout } from "./body-deadline.js";
import { capConnections } from "./connections.js";
import { countTokens } from "./count-tokens.js";
import { chatDialect } from "./dialects/chat.js";
import { dialectOfRoute, dialects, type Dialect, type DialectName } from "./dialects/index.js";
import { defaultGatewayLimits, type Env, type GatewayLimits, type GatewayLoad, type GatewayOptions } from "./gateway-options.js";
import { keptAlive, type Settled } from "./keep-alive.js";
import { noopObserver, type GatewayObserver, type RequestOutcome } from "./observer.js";
import { dialectError, droppedToolsHeaders, generateOnce, redactText, upstreamError, upstreamSpeaks, withModel, type UpstreamHttp } from "./pass-through.js";
import { chainOf, chooseModel, fallsBack, MODEL_HEADER, modelScope, openModels, sending, type ServedModel, type ServedModels } from "./gateway-models.js";
import type { Secrets } from "./redact-secret.js";
import { ClientGone, readBody } from "./read-body.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import { checkPolicies, POLICY_HEADER, ROUTE_HEADER, routeOf } from "./policy.js";
import { inDialect, policyOfRefusal, readRequest, readScreened, type ReadOptions, type ReadRequest, type Screened } from "./read-request.js";
import { redactJsonValue } from "./redact-stream.js";
import { busyRefusal, isUpstreamFailure, jsonReply, Refusal, refusalOf, refusalReply, upstreamRefusal } from "./refusal.js";
import { endRequestSpan, startRequestSpan } from "./request-span.js";
import { armFor, passThroughArm, replayOfHeader } from "./request-arm.js";
import type { ChatRequest } from "./loop-request.js";
import { recordedOptions, resolveGatewayStrategy } from "./request.js";
import { failedChecksMessage, reflectExtension, reflectHeaders, selectedCall, type CompletionMeta, type CompletionReply, type ReflectExtension } from "./response.js";
import { sseHeaders } from "./sse.js";
import { streamOnce } from "./stream-once.js";

export { defaultGatewayLimits, gatewayCaps, type BuildChecksContext, type BuildRequestChecks, type GatewayLimits, type GatewayLoad, type GatewayOptions } from "./gateway-options.js";

/** Bodies over this many bytes are read by a worker first, then (past pass-through) in the gateway's serial lane. */
const LANE_BYTES = 64 * 1024;

/**
 * The gateway's Hono app, served by `@hono/node-server` (pass-through relays on its Node request and response);
 * `load()` reads its gauges (`createGatewayMetrics({ inFlight, queued })`); `close()` closes the upstream connections.
 */
export type GatewayApp = Hono<Env> & {
  load(): GatewayLoad;
  close(): void;
  /**
   * Replaces the operator's config (`POST /admin/config`, the CLI's SIGHUP): checked first (`checkPolicies`; a
   * UsageError keeps the old one), then taken by every request that arrives after; one in flight keeps its own.
   */
  reloadConfig(config: GatewayConfig | undefined): void;
  /** The config requests arriving now get. */
  config(): GatewayConfig | undefined;
};

/** What the gateway sets up once and every request reads: its options resolved, its keys, slots, workers and relay. */
interface Gateway {
  options: GatewayOptions;
  limits: GatewayLimits;
  keys: GatewayKeys;
  /** The models a request's `model` picks from (src/serve/gateway-models.ts). */
  models: ServedModels;
  /** The default model's upstream, its endpoint and its name (what `count_tokens` reads). */
  upstream: LanguageModel;
  upstreamHttp: UpstreamHttp | undefined;
  modelName: string;
  judges: ReadonlyMap<string, LanguageModel>;
  observer: GatewayObserver;
  tracer: Tracer;
  newId: (dialect: Dialect) => string;
  now: () => number;
  /** One client's share of the model slots. */
  perClient: { running: number; queued: number };
  admission: Admission;
  /** The check workers, unless `options.buildChecks` builds the checks. */
  pool: CheckPool | undefined;
  /** Where large bodies are parsed and rewritten, one at a time. */
  lane: SerialLane;
  /** Pass-through to the default model's HTTP upstream, raw. */
  relay: ServedModel["relay"];
  /** How a body to each dialect's route is read: raw past pass-through only where the upstream speaks the dialect. */
  readingOf: (dialect: DialectName) => ReadOptions;
  /** Every model's upstream key, each blanked in every answer should an upstream have echoed it. */
  secret: () => Secrets;
  /** Requests being answered, in all and by tenant. */
  inFlight: { all: number; byTenant: Map<string, number> };
  /** The operator's config requests arriving now get; each request captures it once, at arrival. */
  config: { current: GatewayConfig | undefined };
  /** Checks a config and makes it the current one (`GatewayApp.reloadConfig`). */
  reloadConfig: (config: GatewayConfig | undefined) => void;
}

/** The gateway's app; serve it with `startGateway` (or `@hono/node-server`'s `serve`): it reads the Node request. */
export function createGateway(options: GatewayOptions): GatewayApp {
  // 1. Set-up: limits, keys, slots, check workers, the upstream relay.
  const gateway = setUp(options);
  const app = new Hono<Env>();
  // 2. Middleware: who may ask (a keyless gateway's host guard, or a client key to its tenant).
  app.use("*", whoMayAsk({ keys: gateway.keys, boundHost: options.boundHost ?? "127.0.0.1", allowedHosts: options.allowedHosts ?? [], observer: gateway.observer }));
  // 3. Routes: health, models, the operator's, one per dialect, count_tokens; in the asked route's dialect otherwise.
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/v1/models", (c) => c.json(modelList(gateway)));
  app.get("/metrics", (c) => metrics(c, { keys: gateway.keys, metricsText: options.metricsText }));
  app.post("/admin/lora", (c) => adminLora(c, { keys: gateway.keys, arms: options.arms, limits: gateway.limits, secret: gateway.secret }));
  app.post("/admin/config", (c) => adminConfig(c, { keys: gateway.keys, limits: gateway.limits, secret: gateway.secret, loadConfig: options.loadConfig, reload: gateway.reloadConfig }));
  const served = Object.values(dialects);
  for (const dialect of served) app.post(dialect.route, (c) => answer(gateway, c, dialect));
  const messages = dialects.messages;
  if (messages !== undefined) app.post(`${messages.route}/count_tokens`, (c) => countTokens(c, messages, gateway));
  const routes = served.map((d) => `POST ${d.route}`).join(", ");
  app.notFound((c) => dialectError(dialectOfRoute(c.req.path) ?? chatDialect, { status: 404, message: `no route ${c.req.method} ${c.req.path} — the gateway serves ${routes}, GET /v1/models, /healthz, /metrics`, type: "invalid_request_error", param: null, code: "not_found" }));
  app.onError((_error, c) => dialectError(dialectOfRoute(c.req.path) ?? chatDialect, { status: 500, message: "the gateway failed on this request", type: "server_error", param: null, code: "internal_error" }));
  const { admission, pool, models, inFlight } = gateway;
  return Object.assign(app, {
    load: (): GatewayLoad => ({ inFlight: inFlight.all, queued: admission.queuedCount, checks: pool === undefined ? { queued: 0, busy: 0, replaced: 0 } : { ...pool.load, replaced: pool.restarts }, tenants: Object.fromEntries(inFlight.byTenant) }),
    close: () => {
      models.close();
      void pool?.close();
    },
    reloadConfig: gateway.reloadConfig,
    config: () => gateway.config.current,
  });
}

/** The gateway's options resolved once: throws UsageError for keys that cannot serve (`gatewayKeys`). */
function setUp(options: GatewayOptions): Gateway {
  const limits: GatewayLimits = { ...defaultGatewayLimits, ...options.limits };
  const perClient = limits.perClient ?? { running: Math.max(1, limits.parallel - 1), queued: Math.max(1, Math.ceil(limits.maxQueue / 2)) };
  const keys = gatewayKeys(options);
  const models = openModels(options, limits.requestTimeoutMs);
  const { upstreamHttp, relay } = models.default;
  const judges = options.judges ?? new Map<string, LanguageModel>();
  // A configured model may judge too, by its name.
  const offers = { judges: [...judges.keys(), ...(models.configured ? models.byName.keys() : [])], memory: options.memory !== undefined };
  if (options.config !== undefined) checkPolicies(options.config, limits, offers);
  const config = { current: options.config };
  return {
    options,
    limits,
    keys,
    models,
    upstream: models.default.upstream,
    upstreamHttp,
    modelName: models.default.name,
    judges,
    observer: options.observer ?? noopObserver,
    tracer: options.tracer ?? noopTracer,
    newId: options.newId ?? ((dialect: Dialect) => `${dialect.idPrefix}${randomUUID().replaceAll("-", "")}`),
    now: options.now ?? Date.now,
    perClient,
    admission: new Admission(limits.parallel, limits.maxQueue, perClient),
    pool: options.buildChecks === undefined ? new CheckPool(limits.checks, new URL("./gateway-worker.js", import.meta.url)) : undefined,
    lane: new SerialLane(),
    relay,
    readingOf: (dialect) => {
      const scope = modelScope(models, dialect);
      return { bounds: limits, relay: relay !== undefined && upstreamSpeaks(upstreamHttp, dialect), plan: options.buildChecks === undefined, dialect, ...(scope === undefined ? {} : { models: scope }) };
    },
    secret: models.secrets,
    inFlight: { all: 0, byTenant: new Map<string, number>() },
    config,
    reloadConfig: (next) => {
      if (next !== undefined) checkPolicies(next, limits, offers);
      config.current = next;
    },
  };
}

/** `GET /v1/models`: the upstream's model (each configured model), and the judges a request may name. */
function modelList({ models, judges }: Gateway): unknown {
  return {
    object: "list",
    data: [
      ...[...models.byName.keys()].map((name) => ({ id: name, object: "model", created: 0, owned_by: "reflectkit-upstream" })),
      ...[...judges.keys()].map((spec) => ({ id: spec, object: "model", created: 0, owned_by: "reflectkit-judge" })),
    ],
  };
}

/** One request to a dialect's route, whatever the dialect: one path, the dialect only reads and writes its shape. */
async function answer(gateway: Gateway, c: Context<Env>, dialect: Dialect): Promise<Response> {
  if (c.env?.incoming === undefined) return dialectError(dialect, { status: 500, message: "the gateway runs on Node's http server — serve it with startGateway (or @hono/node-server's serve), not app.fetch alone", type: "server_error", param: null, code: "not_node_server" });
  const { limits, inFlight } = gateway;
  const started = performance.now();
  // The operator's config as this request found it: a reload meanwhile never changes a request in flight.
  const config = gateway.config.current;
  let policy: string | undefined;
  /** On a gateway with several models, the model that answers (a relayed answer names its own as it goes). */
  let answeredBy: string | undefined;
  /** `response` with the policy it ran under named, if any, and the model that answered. */
  const named = (response: Response): Response => {
    if (response === RESPONSE_ALREADY_SENT) return response;
    if (policy !== undefined) response.headers.set(POLICY_HEADER, policy);
    if (answeredBy !== undefined && !response.headers.has(MODEL_HEADER)) response.headers.set(MODEL_HEADER, answeredBy);
    return response;
  };
  // The tenant its key names (the middleware set it); a keyless gateway has one, `local`.
  const tenant = c.get("tenant") ?? LOCAL_TENANT;
  inFlight.all += 1;
  const tenantInFlight = (inFlight.byTenant.get(tenant) ?? 0) + 1;
  inFlight.byTenant.set(tenant, tenantInFlight);
  let told = false;
  /** Tells the observer how the request ended, once: at the response, or at the end of a relayed stream. */
  const tell = (outcome: Omit<RequestOutcome, "ms">): void => {
    if (told) return;
    told = true;
    inFlight.all -= 1;
    const left = (inFlight.byTenant.get(tenant) ?? 1) - 1;
    if (left === 0) inFlight.byTenant.delete(tenant);
    else inFlight.byTenant.set(tenant, left);
    const arm = outcome.episode?.arm ?? outcome.arm;
    gateway.observer.request({ ...outcome, ms: performance.now() - started, dialect: dialect.name, tenant, ...(arm === undefined ? {} : { arm }), ...(config === undefined ? {} : { policy: policy ?? "none" }) });
  };
  // The request's own AbortSignals are made only past pass-through, which needs none.
  let deadline: AbortSignal | undefined;
  let kind: RequestOutcome["kind"] = "rejected";
  let stream = false;
  try {
    // A tenant's requests in flight, pass-through included, are bounded before its body is read.
    if (tenantInFlight > limits.perTenantInFlight) throw busyRefusal(`this tenant has ${limits.perTenantInFlight} requests in flight, its share of the gateway`, "tenant_in_flight_full", limits.retryAfterSeconds);
    // 1. Parse and validate.
    const { incoming, outgoing } = c.env;
    const bytes = await readBody(incoming, limits.bodyBytes, limits.bodyTimeoutMs);
    // The request's AbortSignal only where needed: making it builds a whole Request, which pass-through does without.
    // The client of a keyless gateway is its address, read only when a share needs it.
    const who = (): string => c.get("client") ?? `addr:${incoming.socket.remoteAddress ?? "unknown"}`;
    const route = config === undefined ? undefined : routeOf(incoming.headers[ROUTE_HEADER]);
    const reading: ReadOptions = { ...gateway.readingOf(dialect.name), ...(config === undefined ? {} : { policies: { config, tenant, ...(route === undefined ? {} : { route }), ...(gateway.models.configured ? { defaultModel: gateway.models.default.name } : {}) } }) };
    const readWith = (options: ReadOptions): ReadRequest | Promise<ReadRequest> => (bytes.byteLength <= LANE_BYTES ? readRequest(bytes, options) : readLarge(gateway, bytes, options, who(), () => c.req.raw.signal));
    let read = await readWith(reading);
    ({ stream, policy } = read);
    // The model the body names (an unknown one is refused here), and the fallbacks after it.
    const chosen = chooseModel(gateway.models, read.model);
    let chain = chainOf(gateway.models, chosen);
    if (read.chat === undefined && chosen.relay !== undefined) {
      // 2–4 for an HTTP upstream's pass-through: relayed on Node streams, answered here only if the upstream is not.
      kind = "pass-through";
      if (policy !== undefined) outgoing.setHeader(POLICY_HEADER, policy);
      const relayed = await relayPassThrough(gateway, chain, { incoming, outgoing, bytes: read.relayBody ?? bytes, dialect }, (status, failure, arm) => tell({ kind: "pass-through", status, stream, ...(failure === undefined ? {} : { upstreamFailure: failure }), ...(arm === undefined ? {} : { arm }) }));
      if (relayed instanceof Response) return named(relayed);
      // The next fallback does not take the dialect raw: it answers translated, the body now read as a chat request.
      chain = relayed;
      const { models: _relayedModels, ...whole } = reading;
      read = await readWith({ ...whole, relay: false });
    }
    const { body, chat, plan } = read;
    if (gateway.models.configured) answeredBy = chain[0]?.name;
    const client = c.req.raw.signal;
    deadline = AbortSignal.timeout(Math.max(0, Math.round(limits.requestTimeoutMs - (performance.now() - started))));
    if (chat === undefined) throw new Error("a request without a chat request past pass-through");
    const { options } = gateway;
    const judge = judgeOf(gateway, chat.reflect?.judge);
    if (chat.reflect?.memory !== undefined && options.memory === undefined) throw new RequestFieldError("reflect.memory", "this gateway keeps no lessons — start it with --memory FILE (a SQLite file) or --store postgres://… (shared by several gateways)");
    const asker = who();
    // The arms are the default model's.
    const arms = chain[0] === gateway.models.default ? options.arms : undefined;
    const arm = chat.reflect === undefined ? passThroughArm(arms, incoming, bytes) : armFor(arms, chat, incoming, bytes);
    const replayOf = replayOfHeader(incoming);
    const signal = AbortSignal.any([client, deadline]);
    // Without `options.buildChecks`, every reflected request was planned as it was read (`reading.plan`).
    // A check that does not compile names its field as this dialect's client wrote it.
    const checks =
      chat.reflect === undefined
        ? []
        : await Promise.resolve(options.buildChecks !== undefined ? options.buildChecks(chat.checks, { toolChoiceRequired: chat.toolChoiceRequired, client: asker, signal }) : compileRequestChecks(plan as RequestCheckPlan, { pool: gateway.pool as CheckPool, client: asker, signal })).catch((error: unknown) => {
            throw inDialect(error, dialect.name);
          });
    const slot = gateway.admission.enter(client, asker);
    if (slot === null) throw busyRefusal(`the gateway is at capacity (${limits.parallel} running, ${limits.maxQueue} queued)`, "queue_full", limits.retryAfterSeconds);
    if (slot === "client-full") throw busyRefusal(`this client has ${gateway.perClient.running} requests running and ${gateway.perClient.queued} waiting, its share of the gateway`, "client_share_full", limits.retryAfterSeconds);
    const meta: CompletionMeta = { id: gateway.newId(dialect), created: Math.floor(gateway.now() / 1000), model: chosen.name, ...(chat.echo === undefined ? {} : { echo: chat.echo }) };
    const admitted: Admitted = { chain, chat, checks, judge, slot, client, deadline, signal, meta, model: read.model, arm, replayOf, tenant, dialect, ...(policy === undefined ? {} : { policy }) };
    const settling = settle(gateway, admitted, (began) => (kind = began));
    if (chat.stream && chat.reflect !== undefined) {
      const early = await Promise.race([settling, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), limits.streamKeepAliveMs).unref())]);
      if (early === undefined) return named(withHeaders(keptAlive(settling, dialect, { timedOut: () => deadline?.aborted === true, tell: (status, episode, failure) => tell({ kind, status, stream, ...(episode === undefined ? {} : { episode }), ...(failure === undefined ? {} : { upstreamFailure: failure }) }) }, gateway), droppedToolsHeaders(chat, gateway.secret())));
    }
    const { response, episode, ended } = await settling;
    if (ended !== undefined) {
      // A streamed translation is told of once its stream ends.
      void ended.then((end) => tell({ kind, status: end.status, stream, ...(arm === undefined ? {} : { arm }), ...(end.failure === undefined ? {} : { upstreamFailure: end.failure }) }));
      return named(response);
    }
    tell({ kind, status: response.status, stream, ...(episode === undefined ? {} : { episode }), ...(arm === undefined ? {} : { arm }), ...(response.status >= 500 && episode !== undefined ? { upstreamFailure: upstreamError(episode.error ?? { message: "timed out", name: "Error" }, false).failure } : {}) });
    return named(response);
  } catch (error) {
    const timedOut = deadline?.aborted === true;
    policy ??= policyOfRefusal(error);
    const by = (error as { answeredBy?: unknown } | undefined)?.answeredBy;
    if (answeredBy !== undefined && typeof by === "string") answeredBy = by;
    const refusal = refusalOf(error, { timedOut, clientGone: error instanceof ClientGone || c.req.raw.signal.aborted }, limits);
    const episode = (error as { episode?: Episode } | undefined)?.episode;
    tell({ kind, status: refusal.status, stream, ...(episode === undefined ? {} : { episode }), ...(isUpstreamFailure(refusal) ? { upstreamFailure: upstreamError(episode?.error ?? error, timedOut).failure } : {}) });
    return named(refusalReply(refusal, dialect, gateway.secret()));
  }
}

/**
 * The judge `reflect.judge` names: one of the `--judge` specs, or on a gateway with several models one of them by name
 * (a different model as critic); throws RequestFieldError for any other.
 */
function judgeOf({ judges, models }: Gateway, name: string | undefined): LanguageModel | undefined {
  if (name === undefined) return undefined;
  const judge = judges.get(name) ?? (models.configured ? models.byName.get(name)?.upstream : undefined);
  if (judge !== undefined) return judge;
  const known = [...judges.keys(), ...(models.configured ? models.byName.keys() : [])];
  throw new RequestFieldError("reflect.judge", `is not a judge of this gateway; use one of: ${known.join(", ") || "(none — start it with --judge SPEC)"}`);
}

/** A pass-through request's Node exchange: its body's bytes, in the dialect of its route. */
interface PassThroughExchange {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  bytes: Buffer;
  dialect: Dialect;
}

/** How a relayed pass-through ended: its status, the upstream's failure, and the arm. */
type RelayEnd = (status: number, failure: RequestOutcome["upstreamFailure"], arm: ArmName | undefined) => void;

/**
 * A request without `reflect`, relayed raw to its model's HTTP upstream on Node streams (answered here only if the
 * upstream is not). Should the upstream fail before answering (no connection, a 5xx, no headers in time), the next
 * model of `chain` is tried; one that does not take the dialect raw ends the relaying: the rest of the chain is
 * returned, to answer it translated. `ended` hears the last try's status, failure and arm once its body ends.
 */
async function relayPassThrough(gateway: Gateway, chain: readonly ServedModel[], exchange: PassThroughExchange, ended: RelayEnd): Promise<Response | readonly ServedModel[]> {
  for (const [i, model] of chain.entries()) {
    if (model.relay === undefined || !upstreamSpeaks(model.upstreamHttp, exchange.dialect.name)) return chain.slice(i);
    if (gateway.models.configured) exchange.outgoing.setHeader(MODEL_HEADER, model.name);
    const last = i === chain.length - 1;
    // The end of a try that is followed by another is not the request's.
    let early: Parameters<RelayEnd> | undefined;
    let settled = false;
    const relayed = await relayOnModel(gateway, model, { ...exchange, fallback: !last }, (...end) => {
      if (settled) ended(...end);
      else early = end;
    });
    if (!last && relayed !== RESPONSE_ALREADY_SENT && relayed.status >= 500) continue;
    settled = true;
    if (early !== undefined) ended(...early);
    return relayed;
  }
  throw new Error("a pass-through with no model to relay it to");
}

/**
 * One try of `relayPassThrough`'s, on `model`. On the default model, with arms, the canary picks its arm too; the
 * adapter arm is the adapter's model name on the upstream, pinned until the body ends, so a replacement does not unload
 * it under the relayed call. On a gateway with several models, the body names the upstream's own model.
 */
async function relayOnModel(gateway: Gateway, model: ServedModel, { incoming, outgoing, bytes, dialect, fallback }: PassThroughExchange & { fallback: boolean }, ended: RelayEnd): Promise<Response> {
  const relay = model.relay as NonNullable<ServedModel["relay"]>;
  const arms = model === gateway.models.default ? gateway.options.arms : undefined;
  const lease = passThroughArm(arms, incoming, bytes) === "adapter" ? await arms?.pin("adapter") : undefined;
  const adapter = lease?.served;
  if (adapter === undefined) lease?.release();
  const passArm = arms === undefined ? undefined : adapter === undefined ? "base" : "adapter";
  if (passArm !== undefined) outgoing.setHeader("x-reflect-arm", passArm);
  const named = adapter ?? (gateway.models.configured ? model.upstreamHttp?.model : undefined);
  // A large body is rewritten in the lane, as a large reflected body is parsed: one at a time, between turns.
  let relayed: Response | undefined;
  try {
    const sent = named === undefined ? bytes : bytes.byteLength <= LANE_BYTES ? withModel(bytes, named) : await gateway.lane.run(() => withModel(bytes, named));
    relayed = await relay.send(
      { body: sent, incoming, outgoing, fallback },
      (status, failure) => {
        lease?.release();
        ended(status, failure, passArm);
      },
      dialect,
    );
  } catch (error) {
    lease?.release();
    throw error;
  }
  return relayed ?? RESPONSE_ALREADY_SENT;
}

/** A request past parse and validation, with its checks and a model slot: what is left is to run it and answer. */
interface Admitted {
  /** The model it runs on, then the fallbacks a pass-through may be answered by. */
  chain: readonly ServedModel[];
  chat: ChatRequest;
  checks: readonly RequestCheck[];
  judge: LanguageModel | undefined;
  slot: { ready: Promise<void>; release: () => void };
  /** The client's signal (aborted when it goes), the request's deadline, and both together. */
  client: AbortSignal;
  deadline: AbortSignal;
  signal: AbortSignal;
  meta: CompletionMeta;
  /** The `model` the body names, for the request's span. */
  model: string | undefined;
  arm: ArmName | undefined;
  replayOf: string | undefined;
  tenant: string;
  dialect: Dialect;
  /** The operator's policy the request runs under, by name. */
  policy?: string;
}

/**
 * 2–4 once the request has its slot: the answer, or a throw that `refusalOf` turns into one. `began` hears the
 * request's kind once its slot is ready. An embedded upstream's pass-through, or one that does not speak the dialect,
 * is one call in the dialect; on an engine that takes turns between arms it runs in its arm's turn (src/serve/arms.ts).
 */
async function settle(gateway: Gateway, request: Admitted, began: (kind: "pass-through" | "reflected") => void): Promise<Settled> {
  const { chat, slot, signal, meta, dialect, arm } = request;
  // A streamed translation holds its slot until its stream ends.
  let held = false;
  try {
    await raceAbort(slot.ready, signal);
    began(chat.reflect === undefined ? "pass-through" : "reflected");
    if (chat.reflect === undefined) {
      const settled = await generateOnChain(gateway, request);
      if (settled.ended !== undefined) {
        held = true;
        void settled.ended.finally(() => slot.release());
      }
      if (arm !== undefined) settled.response.headers.set("x-reflect-arm", arm);
      return settled;
    }
    return await settleReflected(gateway, request);
  } finally {
    if (!held) slot.release();
  }
}

/**
 * A pass-through answered by one call (`generateOnce`) on the request's model; should its upstream fail before
 * answering, on each fallback in turn. The default model's call runs on its arm.
 */
async function generateOnChain(gateway: Gateway, { chain, chat, meta, signal, client, dialect, arm }: Admitted): Promise<Settled> {
  for (const [i, model] of chain.entries()) {
    const armed = model === gateway.models.default ? gateway.options.arms?.model(arm ?? "base") : undefined;
    const upstream = armed === undefined ? model.upstream : sending(armed, model.send);
    try {
      // Streamed, event by event as the upstream sends its parts (a failure before the first part falls back); the
      // request's deadline is then the stream's silence, as the relay's.
      const doStream = chat.stream ? upstream.doStream?.bind(upstream) : undefined;
      const settled: Settled =
        doStream === undefined
          ? { response: await generateOnce(upstream, chat, { meta, signal, dialect, secret: gateway.secret() }) }
          : await streamOnce(doStream, chat, { meta, signal: client, dialect, secret: gateway.secret(), idleMs: gateway.limits.requestTimeoutMs, retryAfterSeconds: gateway.limits.retryAfterSeconds });
      if (gateway.models.configured) settled.response.headers.set(MODEL_HEADER, model.name);
      return settled;
    } catch (error) {
      if (i === chain.length - 1 || !fallsBack(error, signal)) throw Object.assign(error as object, { answeredBy: model.name });
    }
  }
  throw new Error("a pass-through with no model to answer it");
}

/** 2. Build options, 3. run the loop, record the episode, 4. shape the response: a reflected request, in its span. */
async function settleReflected(gateway: Gateway, request: Admitted): Promise<Settled> {
  const { chat, meta, dialect, arm, tenant, model } = request;
  const { limits } = gateway;
  const span = startRequestSpan(gateway.tracer, { method: "POST", route: dialect.route, ...(model === undefined ? {} : { model }), stream: chat.stream, tenant, ...(arm === undefined ? {} : { arm }) });
  let episode: Episode<RequestRecord>;
  try {
    ({ episode } = await runReflected(gateway, { ...request, span, arm: arm ?? "base" }));
  } catch (error) {
    endRequestSpan(span, error instanceof Error ? error : new Error(String(error)), refusalOf(error, { timedOut: request.deadline.aborted, clientGone: request.client.aborted }, limits).status);
    throw error;
  }
  // 4. Shape the response.
  try {
    const response = shapeReflected(gateway, chat, episode, meta, dialect);
    response.headers.set("x-reflect-arm", episode.arm ?? "base");
    endRequestSpan(span, episode, response.status);
    return { response, episode };
  } catch (error) {
    endRequestSpan(span, episode, error instanceof Refusal ? error.status : 500);
    (error as { episode?: Episode }).episode = episode;
    throw error;
  }
}

/** `response` with `headers` set on it. */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/**
 * The selected attempt in the dialect, with the `reflect` extension and its headers; throws a Refusal for an episode
 * that made no attempt (its failure) and, with `reflect.on_failure: "error"`, for an answer that failed its checks.
 */
function shapeReflected({ secret, limits }: Gateway, chat: ChatRequest, episode: Episode, meta: CompletionMeta, dialect: Dialect): Response {
  const call = selectedCall(episode);
  if (call === undefined) {
    // A budget stop keeps its error only when the budget could not fit one call (`runEpisode`): the request's fault.
    if (episode.error !== undefined && parseStopReason(episode.stoppedBy).kind === "budget") throw new Refusal({ status: 400, message: `reflect.budget: ${episode.error.message}`, type: "invalid_request_error", param: "reflect.budget", code: "budget_too_small" });
    if (episode.error === undefined) throw new Refusal({ status: 504, message: `the request's budget (${episode.stoppedBy}) ran out before any attempt`, type: "server_error", code: "upstream_timeout" });
    throw upstreamRefusal(episode.error, false, limits.retryAfterSeconds);
  }
  const reflect = redactJsonValue(reflectExtension(episode), secret()) as ReflectExtension;
  const headers = { ...reflectHeaders(reflect), ...droppedToolsHeaders(chat, secret()) };
  // Settled before any byte, so a streamed request gets the same error: a failed answer is never sent as one.
  if (chat.reflect?.onFailure === "error" && reflect.passed === false) throw new Refusal({ status: 422, message: failedChecksMessage(reflect), type: "invalid_request_error", code: "checks_failed", headers, reflect });
  const reply = redactJsonValue({ text: call.output, toolCalls: call.toolCalls, finishReason: call.finishReason }, secret()) as CompletionReply;
  if (!chat.stream) return jsonReply(200, dialect.answer(meta, reply, episode.usage, reflect), secret(), headers);
  return new Response(redactText(dialect.events(meta, reply, episode.usage, chat, reflect), secret()), { headers: { ...sseHeaders, ...headers } });
}

/**
 * The cascade on the request, the same loop as `reflect eval` (`runRequestEpisode`, as the AI SDK middleware runs it),
 * inside the request's `gateway.request` span; with `reflect.memory`, the lessons recalled under its key are quoted
 * notes in its prompt and named in its record, and its reflections are learnt without the upstream key an upstream
 * echoed into one. The episode pins its arm's adapter: one loaded meanwhile never takes its later calls
 * (src/serve/arms.ts). A record that cannot be written fails the request: nothing unrecorded is acknowledged.
 */
function runReflected({ options, tracer, secret, models }: Gateway, request: Admitted & { span: SpanHandle; arm: ArmName }): Promise<RequestEpisode> {
  const { chat, arm, signal } = request;
  const reflect = chat.reflect as NonNullable<ChatRequest["reflect"]>;
  const { arms, memory, recorder } = options;
  const { upstream } = models.default;
  return runRequestEpisode({
    request: { messages: chat.messages, checks: chat.checks, dialect: request.dialect.name, options: recordedOptions(chat) },
    checks: request.checks,
    door: "gateway",
    strategy: resolveGatewayStrategy(chat),
    attempt: chat.sampling,
    ...(chat.seed === undefined ? {} : { seed: chat.seed }),
    budget: reflect.budget,
    id: request.meta.id,
    ...(request.replayOf === undefined ? {} : { replayOf: request.replayOf }),
    arm,
    tenant: request.tenant,
    ...(request.policy === undefined ? {} : { policy: request.policy }),
    ...(reflect.memory === undefined || memory === undefined ? {} : { memory: { memory, ask: reflect.memory } }),
    ...(request.judge === undefined ? {} : { judge: request.judge }),
    model: async () => {
      const [model] = request.chain;
      // A model other than the default runs without arms.
      if (model !== undefined && model.upstream !== upstream) return { model: model.upstream, release: () => {} };
      const lease = arm === "base" ? undefined : await arms?.pin(arm, signal);
      return { model: sending(lease?.model ?? arms?.model("base") ?? upstream, models.default.send), release: () => lease?.release() };
    },
    signal,
    tracer,
    parentSpan: request.span,
    redactLessons: (episode) => redactJsonValue(episode, secret()) as Episode,
    ...(recorder === undefined
      ? {}
      : {
          record: (episode) =>
            recorder.append(episode).catch((error: unknown) => {
              throw new Refusal({ status: 500, message: `the request ran but its record could not be written (${(error as Error).message}); it is not acknowledged — check the --record folder`, type: "server_error", code: "record_failed" });
            }),
        }),
  });
}

/**
 * The body read (`readRequest`). A large one is first read by a worker, where a hostile one is refused without this
 * thread parsing it; then, if it is not passed through, parsed here in the lane (one at a time, with a turn of the
 * event loop between two), its shape now known to be bounded.
 */
async function readLarge({ pool, lane, limits }: Gateway, bytes: Buffer, reading: ReadOptions, client: string, signal: () => AbortSignal): Promise<ReadRequest> {
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
  if (screened.passThrough && screened.optedOut !== true) return readScreened(bytes, screened, reading);
  return lane.run(() => readScreened(bytes, screened, reading));
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
  /** Checks a config and makes it the one each request from now on takes (`GatewayApp.reloadConfig`); throws if it cannot run. */
  reloadConfig(config: GatewayConfig | undefined): void;
  /** The config requests take now. */
  config(): GatewayConfig | undefined;
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
    capConnections(s as Server, limits.maxConnections);
    s.once("error", (error: NodeJS.ErrnoException) => {
      app.close();
      if (error.code === "EADDRINUSE") reject(new UsageError(`${host}:${options.port ?? 8787} is in use — pass another --port (0 picks a free one)`, { cause: error }));
      else if (error.code === "EACCES" || error.code === "EADDRNOTAVAIL") reject(new UsageError(`cannot listen on ${host}:${options.port ?? 8787} (${error.code}) — pass another --host or --port`, { cause: error }));
      else reject(error);
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const http = server as Server;
  let closing: Promise<void> | undefined;
  return {
    load: () => app.load(),
    url: `http://${shownHost}:${address.port}`,
    reloadConfig: (config) => app.reloadConfig(config),
    config: () => app.config(),
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
