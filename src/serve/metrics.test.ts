import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RequestCheck } from "../critics/request/request-check.js";
import { requestTask, type RequestRecord } from "../critics/request/request-task.js";
import { cascade } from "../loops/cascade.js";
import type { Episode } from "../loops/types.js";
import { scriptedModel } from "../models/scripted.js";
import { createGatewayMetrics, durationBuckets, stopReasonLabel } from "./metrics.js";

/** The reply must contain "42"; a reply containing "?" cannot be judged. */
const answerCheck: RequestCheck = {
  source: "regex",
  name: "answer",
  run: (reply) =>
    reply.text.includes("?")
      ? { source: "regex", pass: null, score: 0, feedback: "cannot tell" }
      : { source: "regex", pass: reply.text.includes("42"), score: reply.text.includes("42") ? 1 : 0, feedback: reply.text.includes("42") ? "ok" : "the answer must contain 42" },
};

const record: RequestRecord = { messages: [{ role: "user", content: "What is six times seven?" }], checks: { regex: { pattern: "42" } } };

/** A cascade episode over the request check, its model scripted with `replies`. */
function episode(replies: string[], turns = 2): Promise<Episode<RequestRecord>> {
  return cascade({ model: scriptedModel(replies), task: requestTask([answerCheck]), item: { id: "req", record }, turns });
}

/** The exposition text's samples, `name{labels}` → value. */
function samples(body: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function value(all: Map<string, number>, key: string): number {
  const found = all.get(key);
  assert.notEqual(found, undefined, `no sample ${key}`);
  return found as number;
}

describe("createGatewayMetrics", () => {
  it("counts requests, attempts, reflections, pass rates before and after, tokens, checks and stops exactly", async () => {
    let inFlight = 3;
    const metrics = createGatewayMetrics({ inFlight: () => inFlight, queued: () => 1, processMetrics: false });
    // Fails, reflects, passes on the retry.
    const fixed = await episode(["41", "I should multiply.", "42"]);
    // Passes at once.
    const direct = await episode(["42"]);
    // Fails twice: stopped by the turn limit, returns the latest of two equal scores.
    const failed = await episode(["40", "Try again.", "43"]);
    // Cannot judge the first draft, then passes.
    const unjudged = await episode(["maybe?", "Be sure.", "42"]);
    assert.deepEqual([fixed, direct, failed, unjudged].map((e) => e.stoppedBy), ["verified", "verified", "turns:2", "verified"]);

    metrics.request({ kind: "reflected", status: 200, ms: 1500, stream: false, episode: fixed, dialect: "chat" });
    metrics.request({ kind: "reflected", status: 200, ms: 40, stream: true, episode: direct, dialect: "responses" });
    metrics.request({ kind: "reflected", status: 200, ms: 3000, stream: false, episode: failed });
    metrics.request({ kind: "reflected", status: 200, ms: 2000, stream: false, episode: unjudged });
    metrics.request({ kind: "pass-through", status: 200, ms: 2, stream: false });
    metrics.request({ kind: "pass-through", status: 502, ms: 30_000, stream: false, upstreamFailure: "status" });
    metrics.request({ kind: "pass-through", status: 504, ms: 120_000, stream: true, upstreamFailure: "timeout" });
    metrics.request({ kind: "rejected", status: 400, ms: 0.5, stream: false });

    const { contentType, body } = await metrics.text();
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    const all = samples(body);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="reflected",status="200"}'), 4);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="pass-through",status="200"}'), 1);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="pass-through",status="502"}'), 1);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="pass-through",status="504"}'), 1);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="rejected",status="400"}'), 1);
    // By the dialect a request came in on, where the observer was told it; a dialect not seen is a series at 0.
    assert.equal(value(all, 'reflect_gateway_dialect_requests_total{dialect="chat"}'), 1);
    assert.equal(value(all, 'reflect_gateway_dialect_requests_total{dialect="responses"}'), 1);
    assert.equal(value(all, 'reflect_gateway_dialect_requests_total{dialect="messages"}'), 0);

    // Attempts: fixed 2, direct 1, failed 2, unjudged 2; a reflection after each failed or unjudged draft.
    assert.equal(value(all, "reflect_gateway_attempts_total"), 7);
    assert.equal(value(all, "reflect_gateway_reflections_total"), 3);
    assert.equal(value(all, "reflect_gateway_checked_requests_total"), 4);
    assert.equal(value(all, "reflect_gateway_first_pass_total"), 1);
    assert.equal(value(all, "reflect_gateway_final_pass_total"), 3);
    assert.equal(value(all, "reflect_gateway_first_unjudged_total"), 1);
    assert.equal(value(all, "reflect_gateway_final_unjudged_total"), 0);

    const episodes = [fixed, direct, failed, unjudged];
    const sumRole = (role: "attempt" | "reflection", field: "tokens" | "calls") => episodes.reduce((n, e) => n + (e.usageByRole[role]?.[field] ?? 0), 0);
    assert.equal(value(all, 'reflect_gateway_calls_total{role="attempt"}'), 7);
    assert.equal(value(all, 'reflect_gateway_calls_total{role="reflection"}'), 3);
    assert.equal(value(all, 'reflect_gateway_calls_total{role="critique"}'), 0);
    assert.ok(sumRole("attempt", "tokens") > 0);
    assert.equal(value(all, 'reflect_gateway_tokens_total{role="attempt"}'), sumRole("attempt", "tokens"));
    assert.equal(value(all, 'reflect_gateway_tokens_total{role="reflection"}'), sumRole("reflection", "tokens"));
    assert.equal(value(all, 'reflect_gateway_tokens_total{role="critique"}'), 0);

    assert.equal(value(all, 'reflect_gateway_checks_total{source="regex",result="pass"}'), 3);
    assert.equal(value(all, 'reflect_gateway_checks_total{source="regex",result="fail"}'), 3);
    assert.equal(value(all, 'reflect_gateway_checks_total{source="regex",result="unjudged"}'), 1);
    assert.equal(value(all, 'reflect_gateway_stops_total{reason="verified"}'), 3);
    assert.equal(value(all, 'reflect_gateway_stops_total{reason="turns"}'), 1);

    assert.equal(value(all, 'reflect_gateway_upstream_errors_total{kind="status"}'), 1);
    assert.equal(value(all, 'reflect_gateway_upstream_errors_total{kind="timeout"}'), 1);
    assert.equal(value(all, 'reflect_gateway_upstream_errors_total{kind="network"}'), 0);
    assert.equal(value(all, 'reflect_gateway_upstream_errors_total{kind="malformed"}'), 0);

    // Histogram: reflected 40 ms, 1.5 s, 2 s, 3 s; pass-through 2 ms, 30 s, 120 s; rejected 0.5 ms.
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_count{kind="reflected"}'), 4);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_sum{kind="reflected"}'), 6.54);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="0.05",kind="reflected"}'), 1);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="2.5",kind="reflected"}'), 3);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="5",kind="reflected"}'), 4);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="0.0025",kind="pass-through"}'), 1);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="60",kind="pass-through"}'), 2);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="120",kind="pass-through"}'), 3);
    assert.equal(value(all, 'reflect_gateway_request_duration_seconds_bucket{le="0.001",kind="rejected"}'), 1);
    assert.equal(durationBuckets[0], 0.001);
    assert.equal(durationBuckets.at(-1), 120);

    assert.equal(value(all, "reflect_gateway_in_flight_requests"), 3);
    assert.equal(value(all, "reflect_gateway_queued_requests"), 1);
    inFlight = 0;
    assert.equal(value(samples((await metrics.text()).body), "reflect_gateway_in_flight_requests"), 0);
    // Without processMetrics there are no process_* series.
    assert.doesNotMatch(body, /^process_/m);
  });

  it("keeps every label value in a fixed set whatever a request or a caller's check carries", async () => {
    const metrics = createGatewayMetrics({ processMetrics: false });
    const base = await episode(["42"]);
    const forged: Episode = {
      ...base,
      model: "http:https://evil.example/v1#model-name-from-a-client",
      stoppedBy: "score>=0.75",
      usageByRole: { ...base.usageByRole, ["my-role" as "attempt"]: { tokens: 5, calls: 1 } },
      attempts: base.attempts.map((a) => ({ ...a, checks: [{ source: "client-chosen-source" as "custom", pass: true, score: 1, feedback: "ok" }] })),
    };
    metrics.request({ kind: "reflected", status: 200, ms: 10, stream: false, episode: forged });
    metrics.request({ kind: "weird-kind" as "rejected", status: 999, ms: Number.NaN, stream: false, upstreamFailure: "dns" as "network" });
    const { body } = await metrics.text();
    const all = samples(body);
    assert.doesNotMatch(body, /evil|model-name|my-role|client-chosen|weird-kind|dns|999/);
    assert.equal(value(all, 'reflect_gateway_checks_total{source="other",result="pass"}'), 1);
    assert.equal(value(all, 'reflect_gateway_stops_total{reason="score"}'), 1);
    assert.equal(value(all, 'reflect_gateway_requests_total{kind="other",status="other"}'), 1);
    assert.equal(value(all, 'reflect_gateway_upstream_errors_total{kind="other"}'), 1);
    // The unknown role is not counted anywhere; the known ones are.
    assert.equal(value(all, 'reflect_gateway_calls_total{role="attempt"}'), 1);
    // A NaN duration is not observed.
    assert.equal(all.get('reflect_gateway_request_duration_seconds_count{kind="other"}'), undefined);
  });

  it("maps stop reasons onto a fixed set", () => {
    assert.equal(stopReasonLabel("verified"), "verified");
    assert.equal(stopReasonLabel("turns:3"), "turns");
    assert.equal(stopReasonLabel("score>=0.8"), "score");
    assert.equal(stopReasonLabel("unchanged"), "unchanged");
    assert.equal(stopReasonLabel("score-dropped"), "score-dropped");
    assert.equal(stopReasonLabel("budget"), "budget");
    assert.equal(stopReasonLabel("budget:tokens"), "budget:tokens");
    assert.equal(stopReasonLabel("run-budget:time"), "budget:time");
    assert.equal(stopReasonLabel("error"), "error");
    assert.equal(stopReasonLabel("interrupted"), "interrupted");
    assert.equal(stopReasonLabel("budget:money"), "other");
    assert.equal(stopReasonLabel("anything a client wrote"), "other");
  });

  it("uses a private registry: two instances do not share counts, and process metrics come only when asked", async () => {
    const one = createGatewayMetrics();
    const two = createGatewayMetrics({ processMetrics: false });
    one.request({ kind: "pass-through", status: 200, ms: 1, stream: false });
    const oneBody = (await one.text()).body;
    const twoBody = (await two.text()).body;
    assert.equal(value(samples(oneBody), 'reflect_gateway_requests_total{kind="pass-through",status="200"}'), 1);
    assert.equal(samples(twoBody).get('reflect_gateway_requests_total{kind="pass-through",status="200"}'), undefined);
    assert.ok(value(samples(oneBody), "process_resident_memory_bytes") > 0);
    assert.doesNotMatch(twoBody, /^process_/m);
  });
});
