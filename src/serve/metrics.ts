/**
 * The gateway's Prometheus metrics (`GET /metrics`), from the one `RequestOutcome` the server reports per request.
 *
 * Every label takes its value from a fixed set, whatever a client sends: the request kind, the HTTP status (an
 * integer from 100 to 599, else `other`), a call role, a check source, an upstream failure kind, a stop reason mapped
 * onto a few names. No model name, check name or other request text ever becomes a label, so the number of series is
 * bounded. The metrics live in a private registry: a host application's own `prom-client` metrics are not mixed in.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { emptyMemoryStats, type RequestMemoryStats } from "../loops/request-memory.js";
import { refusalReasons } from "../memory/request-lesson-store.js";
import { parseStopReason } from "../loops/stop-reason.js";
import type { CallRole, CheckSource, Episode } from "../loops/types.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import { attemptPassed } from "../loops/answer-decision.js";
import type { GatewayObserver, RequestOutcome, UpstreamFailure } from "./observer.js";

export interface GatewayMetricsOptions {
  /** Requests being answered now, read at each scrape. */
  inFlight?: () => number;
  /** Requests waiting for a free slot, read at each scrape. */
  queued?: () => number;
  /** The check workers, read at each scrape: jobs waiting, workers busy, workers replaced after an overrun or a crash. */
  checks?: () => { queued: number; busy: number; replaced: number };
  /**
   * The gateway's tenants, by name (the operator's configuration, so a bounded set): requests by tenant are counted
   * under these names only, any other as `other`. Without it no series is labelled by tenant.
   */
  tenants?: readonly string[];
  /**
   * The names of the operator's policies (`GatewayConfig.policies`; a function, so a reloaded config's names count):
   * requests are counted by policy under these names, `none` for none, any other as `other`. Without it no series is
   * labelled by policy.
   */
  policies?: () => readonly string[];
  /** Each tenant's requests in flight now (`GatewayLoad.tenants`), read at each scrape. */
  tenantInFlight?: () => Readonly<Record<string, number>>;
  /** What request lessons did since start (`RequestMemory.stats`), read at each scrape. */
  lessons?: () => RequestMemoryStats;
  /**
   * Also export prom-client's default process metrics (`process_resident_memory_bytes`, CPU seconds, heap sizes,
   * event-loop lag, GC durations). Default true: they are computed at scrape time, except an event-loop delay
   * histogram sampled by libuv and a GC observer, both cheap.
   */
  processMetrics?: boolean;
}

export type GatewayMetrics = GatewayObserver & {
  /** The exposition text and its content type, for `GET /metrics`. */
  text(): Promise<{ contentType: string; body: string }>;
};

/** Seconds, from 1 ms (a pass-through to a local upstream) to 120 s (a reflected request on a slow model). */
export const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

const kinds: readonly RequestOutcome["kind"][] = ["pass-through", "reflected", "rejected"];
const dialects: readonly string[] = ["chat", "responses", "messages"];
const roles: readonly CallRole[] = ["attempt", "reflection", "critique", "candidate"];
const failures: readonly UpstreamFailure[] = ["timeout", "status", "network", "malformed"];
const arms: readonly string[] = ["base", "adapter"];
const sources: readonly CheckSource[] = ["verifier", "judge", "schema", "tools", "task", "tests", "regex", "custom"];

/** The label values of `reflect_gateway_stops_total{reason}`. */
export const stopReasons = ["verified", "turns", "score", "unchanged", "score-dropped", "unchecked", "budget", "budget:tokens", "budget:calls", "budget:time", "error", "interrupted", "other"] as const;
export type StopReasonLabel = (typeof stopReasons)[number];

/**
 * An episode's `stoppedBy` as a label value: `turns:2` → `turns`, `score>=0.8` → `score`, an episode's or the run's
 * spent budget → `budget:<kind>`, the `budget` stop condition → `budget`; anything else → `other`.
 */
export function stopReasonLabel(stoppedBy: string): StopReasonLabel {
  const reason = parseStopReason(stoppedBy);
  switch (reason.kind) {
    case "budget":
      return reason.limit === undefined ? "budget" : `budget:${reason.limit}`;
    case "condition":
      return "other";
    default:
      return reason.kind;
  }
}

/** An HTTP status as a label value: the code itself when it is one (100–599), else `other`. */
function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}

/** A status as a tenant series' class: `2xx`, `3xx`, `4xx`, `5xx`, and `429` apart (a share full, or the upstream's). */
function statusClass(status: number): string {
  if (status === 429) return "429";
  return Number.isInteger(status) && status >= 100 && status <= 599 ? `${Math.floor(status / 100)}xx` : "other";
}

function oneOf<T extends string>(value: string, allowed: readonly T[]): T | "other" {
  return (allowed as readonly string[]).includes(value) ? (value as T) : "other";
}

function checkResult(pass: boolean | null): "pass" | "fail" | "unjudged" {
  return pass === true ? "pass" : pass === false ? "fail" : "unjudged";
}

/**
 * The series read when `/metrics` is scraped rather than counted as requests end: the gateway's load (requests in
 * flight, each tenant's, queued, check jobs), the lesson store's counts, and check workers replaced.
 */
function registerLoadSeries(registers: Registry[], options: GatewayMetricsOptions, tenantNames: readonly string[]): void {
  const tenantInFlight = options.tenantInFlight;
  new Gauge({
    name: "reflect_gateway_tenant_in_flight_requests",
    help: "Each tenant's requests being answered now, pass-through included (bounded per tenant by perTenantInFlight).",
    labelNames: ["tenant"] as const,
    registers,
    collect() {
      if (tenantInFlight === undefined || tenantNames.length === 0) return;
      const now = tenantInFlight();
      for (const tenant of tenantNames) this.set({ tenant }, now[tenant] ?? 0);
    },
  });
  const { inFlight, queued, checks: checkLoad } = options;
  new Gauge({
    name: "reflect_gateway_in_flight_requests",
    help: "Requests being answered now.",
    registers,
    collect() {
      if (inFlight !== undefined) this.set(inFlight());
    },
  });
  new Gauge({
    name: "reflect_gateway_queued_requests",
    help: "Requests waiting for a free slot.",
    registers,
    collect() {
      if (queued !== undefined) this.set(queued());
    },
  });
  new Gauge({
    name: "reflect_gateway_check_jobs",
    help: "Check jobs (compiling or checking a request's schema, tools, regex or task item) waiting for a worker, and workers busy.",
    labelNames: ["state"] as const,
    registers,
    collect() {
      if (checkLoad === undefined) return;
      const { queued: waiting, busy } = checkLoad();
      this.set({ state: "queued" }, waiting);
      this.set({ state: "running" }, busy);
    },
  });
  const lessons = options.lessons;
  const lessonsSeen: RequestMemoryStats = emptyMemoryStats();
  const lessonEvents = { recalls: "recall", lessonsShown: "shown", recorded: "recorded", recallFailures: "recall_failed", recordFailures: "record_failed" } as const;
  new Counter({
    name: "reflect_gateway_lessons_total",
    help: "Request lessons (reflect.memory): recalls made, lessons shown, lessons recorded, and recalls and recordings the store failed (the request went on).",
    labelNames: ["event"] as const,
    registers,
    collect() {
      if (lessons === undefined) return;
      const now = lessons();
      for (const [field, event] of Object.entries(lessonEvents) as Array<[keyof typeof lessonEvents, string]>) {
        this.inc({ event }, Math.max(0, now[field] - lessonsSeen[field]));
        lessonsSeen[field] = now[field];
      }
    },
  });
  // Labelled by the quota alone: a tenant label would grow with the operator's tenants, and a quota's name is what
  // an operator acts on (raise it, or ask the tenant why it files so many lessons).
  const lessonsRefused = new Counter({
    name: "reflect_gateway_lessons_refused_total",
    help: "Request lessons the store refused, by the quota the lesson would have passed (the tenant's lessons or bytes, the store's lessons or bytes); the request went on.",
    labelNames: ["reason"] as const,
    registers,
    collect() {
      if (lessons === undefined) return;
      const now = lessons().refused;
      for (const reason of refusalReasons) {
        this.inc({ reason }, Math.max(0, now[reason] - lessonsSeen.refused[reason]));
        lessonsSeen.refused[reason] = now[reason];
      }
    },
  });
  let replacedSeen = 0;
  new Counter({
    name: "reflect_gateway_check_workers_replaced_total",
    help: "Check workers stopped and replaced: a check past its deadline, or a worker out of its heap.",
    registers,
    collect() {
      if (checkLoad === undefined) return;
      const replaced = checkLoad().replaced;
      if (replaced > replacedSeen) this.inc(replaced - replacedSeen);
      replacedSeen = replaced;
    },
  });
  if (lessons !== undefined) for (const reason of refusalReasons) lessonsRefused.inc({ reason }, 0);
}

/**
 * Prometheus metrics as a `GatewayObserver`: hand it to the server, and serve `text()` at `GET /metrics`.
 *
 * Pass rates before and after reflection: `reflect_gateway_checked_requests_total` counts reflected requests with at
 * least one attempt; `…_first_pass_total` those whose first attempt passed its checks (`attemptPassed`: the verifier's
 * and a judge's alike, what the client is told as `decision`), `…_final_pass_total` those whose returned (selected)
 * attempt passed them; `…_first_unjudged_total` and `…_final_unjudged_total` those whose checks could not judge
 * (e.g. a request with no deterministic check and no judge). First-draft pass rate = first_pass / checked; final = final_pass / checked.
 */
export function createGatewayMetrics(options: GatewayMetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  const requests = new Counter({ name: "reflect_gateway_requests_total", help: "Requests answered, by kind (pass-through, reflected, rejected) and HTTP status.", labelNames: ["kind", "status"] as const, registers });
  const duration = new Histogram({ name: "reflect_gateway_request_duration_seconds", help: "From a request's arrival to its response's end, by kind.", labelNames: ["kind"] as const, buckets: [...durationBuckets], registers });
  const attempts = new Counter({ name: "reflect_gateway_attempts_total", help: "Attempts made by reflected requests (first drafts and retries).", registers });
  const reflections = new Counter({ name: "reflect_gateway_reflections_total", help: "Reflections written after a failed attempt.", registers });
  const checked = new Counter({ name: "reflect_gateway_checked_requests_total", help: "Reflected requests with at least one attempt: the denominator of the pass rates.", registers });
  const firstPass = new Counter({ name: "reflect_gateway_first_pass_total", help: "Reflected requests whose first draft passed its checks, a judge's included (the decision the client was told).", registers });
  const finalPass = new Counter({ name: "reflect_gateway_final_pass_total", help: "Reflected requests whose returned attempt passed its checks, a judge's included (decision verified).", registers });
  const firstUnjudged = new Counter({ name: "reflect_gateway_first_unjudged_total", help: "Reflected requests whose first draft's checks could not judge it.", registers });
  const finalUnjudged = new Counter({ name: "reflect_gateway_final_unjudged_total", help: "Reflected requests whose returned attempt's checks could not judge it.", registers });
  const byDialect = new Counter({ name: "reflect_gateway_dialect_requests_total", help: "Requests answered, by the dialect they came in on (chat, responses, messages).", labelNames: ["dialect"] as const, registers });
  const tokens = new Counter({ name: "reflect_gateway_tokens_total", help: "Prompt plus completion tokens of reflected requests' model calls, by role.", labelNames: ["role"] as const, registers });
  const calls = new Counter({ name: "reflect_gateway_calls_total", help: "Model calls of reflected requests, failed ones included, by role.", labelNames: ["role"] as const, registers });
  const upstreamErrors = new Counter({ name: "reflect_gateway_upstream_errors_total", help: "Requests whose upstream call failed, by failure kind.", labelNames: ["kind"] as const, registers });
  const checks = new Counter({ name: "reflect_gateway_checks_total", help: "Checks run on attempts, by source and result (pass, fail, unjudged).", labelNames: ["source", "result"] as const, registers });
  const armRequests = new Counter({ name: "reflect_gateway_arm_requests_total", help: "Requests by the arm they ran on (base, adapter): pass_through, and for reflected requests what their first draft and returned attempt did (reflected; checked: at least one attempt; first_pass; final_pass).", labelNames: ["arm", "outcome"] as const, registers });
  const stops = new Counter({ name: "reflect_gateway_stops_total", help: "Why reflected requests' loops stopped.", labelNames: ["reason"] as const, registers });
  const tenantNames = [...new Set(options.tenants ?? [])];
  const byTenant = new Counter({ name: "reflect_gateway_tenant_requests_total", help: "Requests answered, by tenant (the names the operator gave the client keys), kind and status class (2xx, 4xx, 5xx; 429 on its own: a tenant's share full).", labelNames: ["tenant", "kind", "status"] as const, registers });
  registerLoadSeries(registers, options, tenantNames);
  const policyNames = options.policies;
  const byPolicy = new Counter({ name: "reflect_gateway_policy_requests_total", help: "Requests answered, by the operator's policy they ran under (none: no policy applied), kind and status class.", labelNames: ["policy", "kind", "status"] as const, registers });

  // Series of fixed, small label sets start at 0, so a rate over them exists before the first event.
  for (const role of roles) {
    tokens.inc({ role }, 0);
    calls.inc({ role }, 0);
  }
  for (const kind of failures) upstreamErrors.inc({ kind }, 0);
  for (const dialect of dialects) byDialect.inc({ dialect }, 0);
  for (const arm of arms) for (const outcome of ["pass_through", "reflected", "checked", "first_pass", "final_pass"]) armRequests.inc({ arm, outcome }, 0);

  function episodeSeen(episode: Episode, armName: string | undefined): void {
    const arm = oneOf(armName ?? "base", arms);
    armRequests.inc({ arm, outcome: "reflected" });
    attempts.inc(episode.attempts.length);
    reflections.inc(episode.attempts.filter((a) => a.reflection !== undefined).length);
    const first = episode.attempts[0];
    const chosen = selectedAttempt(episode);
    if (first !== undefined) {
      checked.inc();
      armRequests.inc({ arm, outcome: "checked" });
      // Passed as the client was told (`answerDecision`): every check of the attempt, a judge's included.
      const firstPassed = attemptPassed(first);
      const finalPassed = attemptPassed(chosen);
      if (firstPassed === true) armRequests.inc({ arm, outcome: "first_pass" });
      if (finalPassed === true) armRequests.inc({ arm, outcome: "final_pass" });
      if (firstPassed === true) firstPass.inc();
      if (firstPassed === null) firstUnjudged.inc();
      // An episode that made attempts always selects one; a missing one counts as not passed.
      if (finalPassed === true) finalPass.inc();
      if (chosen !== undefined && finalPassed === null) finalUnjudged.inc();
    }
    for (const [role, use] of Object.entries(episode.usageByRole)) {
      if (use === undefined || !(roles as readonly string[]).includes(role)) continue;
      tokens.inc({ role }, use.tokens);
      calls.inc({ role }, use.calls);
    }
    for (const attempt of episode.attempts) {
      for (const check of attempt.checks) checks.inc({ source: oneOf(check.source, sources), result: checkResult(check.pass) });
    }
    stops.inc({ reason: stopReasonLabel(episode.stoppedBy) });
  }

  return {
    request(outcome: RequestOutcome): void {
      const kind = oneOf(outcome.kind, kinds);
      requests.inc({ kind, status: statusLabel(outcome.status) });
      if (outcome.dialect !== undefined) byDialect.inc({ dialect: oneOf(outcome.dialect, dialects) });
      if (tenantNames.length > 0 && outcome.tenant !== undefined) byTenant.inc({ tenant: oneOf(outcome.tenant, tenantNames), kind, status: statusClass(outcome.status) });
      if (policyNames !== undefined && outcome.policy !== undefined) byPolicy.inc({ policy: outcome.policy === "none" ? "none" : oneOf(outcome.policy, policyNames()), kind, status: statusClass(outcome.status) });
      if (Number.isFinite(outcome.ms) && outcome.ms >= 0) duration.observe({ kind }, outcome.ms / 1000);
      if (outcome.upstreamFailure !== undefined) upstreamErrors.inc({ kind: oneOf(outcome.upstreamFailure, failures) });
      if (outcome.episode !== undefined) episodeSeen(outcome.episode, outcome.arm ?? outcome.episode.arm);
      else if (outcome.kind === "pass-through" && outcome.arm !== undefined) armRequests.inc({ arm: oneOf(outcome.arm, arms), outcome: "pass_through" });
    },
    async text() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
