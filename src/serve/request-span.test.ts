import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { RequestCheck } from "../critics/request/request-check.js";
import { requestTask, type RequestRecord } from "../critics/request/request-task.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import { cascade } from "../loops/cascade.js";
import { ModelCallError } from "../errors.js";
import { scriptedModel } from "../models/scripted.js";
import type { SpanRecord } from "../telemetry/jsonl-exporter.js";
import { createOtelTracer } from "../telemetry/otel.js";
import { endRequestSpan, startRequestSpan } from "./request-span.js";

const dir = mkdtempSync(join(tmpdir(), "reflectkit-request-span-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const tracePath = () => join(dir, `trace-${++files}.jsonl`);

const readSpans = (path: string): SpanRecord[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SpanRecord);

/** Passes when the reply holds a JSON object with "answer": 42; a wrong answer scores 0.25, no JSON 0. */
const jsonCheck: RequestCheck = {
  source: "schema",
  name: "schema",
  run: (reply) => {
    try {
      const value = JSON.parse(reply.text) as { answer?: unknown };
      return value.answer === 42 ? { source: "schema", pass: true, score: 1, feedback: "valid" } : { source: "schema", pass: false, score: 0.25, feedback: "$.answer: must be 42" };
    } catch {
      return { source: "schema", pass: false, score: 0, feedback: "not JSON" };
    }
  },
};
const secretPrompt = "What is six times seven? my key is sk-ABCDEFGH12345678";
const record: RequestRecord = { messages: [{ role: "user", content: secretPrompt }], checks: {} };
const judgeSays = (verdict: "correct" | "incorrect") => JSON.stringify({ verdict, categories: [], explanation: verdict === "correct" ? "fine" : "wrong" });

describe("gateway.request span", () => {
  it("nests gateway.request → episode → attempt N → generate | verify | critique | reflect | refine, with pre/post scores and usage", async () => {
    const path = tracePath();
    const tracer = createOtelTracer({ jsonlPath: path });
    const span = startRequestSpan(tracer, { method: "POST", route: "/v1/chat/completions", model: "smollm2-135m", stream: false });
    const model = scriptedModel(['{"answer": 41}', "Six sevens are 42.", '{"answer": 42}']);
    const judge = scriptedModel([judgeSays("correct")], { modelId: "judge" });
    const episode = await cascade({ model, task: requestTask([jsonCheck]), item: { id: "req-1", record }, critics: [rubricJudge(judge)], tracer, parentSpan: span });
    endRequestSpan(span, episode, 200);
    await tracer.shutdown();

    const spans = readSpans(path);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const pathOf = (s: SpanRecord): string => {
      const names = [s.name];
      for (let parent = s.parentSpanId; parent !== null; parent = byId.get(parent)?.parentSpanId ?? null) names.unshift(byId.get(parent)?.name ?? "?");
      return names.join(" → ");
    };
    assert.deepEqual(spans.map(pathOf).sort(), [
      "gateway.request",
      "gateway.request → episode",
      "gateway.request → episode → attempt 1",
      "gateway.request → episode → attempt 1 → generate",
      "gateway.request → episode → attempt 1 → reflect",
      "gateway.request → episode → attempt 1 → verify",
      "gateway.request → episode → attempt 2",
      "gateway.request → episode → attempt 2 → critique",
      "gateway.request → episode → attempt 2 → critique.generate",
      "gateway.request → episode → attempt 2 → refine",
      "gateway.request → episode → attempt 2 → verify",
    ]);
    const root = spans.find((s) => s.name === "gateway.request") as SpanRecord;
    assert.equal(root.parentSpanId, null);
    assert.ok(spans.every((s) => s.traceId === root.traceId));
    assert.deepEqual(root.status, { code: "UNSET" });
    assert.deepEqual(root.attributes, {
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "gen_ai.request.model": "smollm2-135m",
      "reflect.stream": false,
      "http.response.status_code": 200,
      "reflect.attempts": 2,
      "reflect.stopped_by": "verified",
      "reflect.correct": true,
      "gen_ai.usage.input_tokens": episode.usage.promptTokens,
      "gen_ai.usage.output_tokens": episode.usage.completionTokens,
      "reflect.calls": 4,
      "reflect.score.pre": 0.25,
      "reflect.score.post": 1,
      "reflect.selected": 2,
      "reflect.decision": "accept",
    });
    assert.ok(episode.usage.promptTokens > 0 && episode.usage.completionTokens > 0);
    // No content without recordContent: neither the prompt nor a reply appears anywhere in the trace.
    const text = readFileSync(path, "utf8");
    assert.doesNotMatch(text, /six times seven|sk-ABCDEFGH|Six sevens|"answer/);
  });

  it("records a rollback's decision and the returned attempt's score, and marks a 5xx episode failed", async () => {
    const path = tracePath();
    const tracer = createOtelTracer({ jsonlPath: path });
    const span = startRequestSpan(tracer, { method: "POST", route: "/v1/chat/completions" });
    // Turn 1 scores 0.25, turn 2 scores 0: the loop stops at the turn limit and rolls back to turn 1.
    const model = scriptedModel(['{"answer": 41}', "Hmm.", "no json"]);
    const episode = await cascade({ model, task: requestTask([jsonCheck]), item: { id: "req-2", record }, tracer, parentSpan: span });
    endRequestSpan(span, episode, 200);

    const failing = startRequestSpan(tracer, { method: "POST", route: "/v1/chat/completions" });
    const broken = scriptedModel([
      () => {
        throw new ModelCallError("upstream answered 500", 500, true);
      },
    ]);
    const failed = await cascade({ model: broken, task: requestTask([jsonCheck]), item: { id: "req-3", record }, tracer, parentSpan: failing });
    assert.equal(failed.stoppedBy, "error");
    endRequestSpan(failing, failed, 502);

    const thrown = startRequestSpan(tracer, { method: "POST", route: "/v1/chat/completions" });
    endRequestSpan(thrown, new Error("interrupted by the client"), 499);
    await tracer.shutdown();

    const roots = readSpans(path).filter((s) => s.name === "gateway.request");
    assert.equal(roots.length, 3);
    const [rolled, upstream, aborted] = roots as [SpanRecord, SpanRecord, SpanRecord];
    assert.equal(rolled.attributes["reflect.decision"], "rollback");
    assert.equal(rolled.attributes["reflect.score.pre"], 0.25);
    assert.equal(rolled.attributes["reflect.score.post"], 0.25);
    assert.equal(rolled.attributes["reflect.selected"], 1);
    assert.equal(rolled.attributes["reflect.stopped_by"], "turns:2");
    assert.equal(rolled.attributes["gen_ai.request.model"], undefined);
    assert.deepEqual(rolled.status, { code: "UNSET" });

    assert.equal(upstream.attributes["http.response.status_code"], 502);
    assert.equal(upstream.attributes["reflect.attempts"], 0);
    assert.equal(upstream.attributes["reflect.score.pre"], undefined);
    assert.equal(upstream.attributes["reflect.stopped_by"], "error");
    assert.deepEqual(upstream.status, { code: "ERROR", message: "ModelCallError: upstream answered 500" });

    assert.equal(aborted.attributes["http.response.status_code"], 499);
    assert.deepEqual(aborted.status, { code: "ERROR", message: "Error: interrupted by the client" });
  });
});
