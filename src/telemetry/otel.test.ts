import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ModelCallError, UsageError } from "../errors.js";
import type { SpanRecord } from "./jsonl-exporter.js";
import { createOtelTracer, otlpEndpointFromEnv, TelemetryExportError, type IdGenerator } from "./otel.js";
import { inSpan } from "./tracer.js";

const dir = mkdtempSync(join(tmpdir(), "reflectkit-otel-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const tracePath = () => join(dir, `run-${++files}`, "trace.jsonl");

/** Ids 000…001, 000…002, … so that every run gives the same trace. */
function counterIds(): IdGenerator {
  let trace = 0;
  let span = 0;
  return {
    generateTraceId: () => (++trace).toString(16).padStart(32, "0"),
    generateSpanId: () => (++span).toString(16).padStart(16, "0"),
  };
}

/** A clock that starts at `start` and moves one second at each reading. */
function steppingClock(start = Date.parse("2025-01-01T00:00:00.000Z")): () => number {
  let readings = 0;
  return () => start + 1000 * readings++;
}

const readSpans = (path: string): SpanRecord[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SpanRecord);

const byName = (spans: SpanRecord[], name: string): SpanRecord => {
  const span = spans.find((s) => s.name === name);
  assert.ok(span, `no span named ${name} in ${spans.map((s) => s.name).join(", ")}`);
  return span;
};

describe("createOtelTracer → JSON lines", () => {
  it("nests episode → attempt → generate | verify, with GenAI and reflect attributes, deterministic ids and times", async () => {
    const path = tracePath();
    const tracer = createOtelTracer({ jsonlPath: path, idGenerator: counterIds(), now: steppingClock() });
    const episode = tracer.startSpan("episode", { "reflect.task": "countdown" });
    const attempt = tracer.startSpan("attempt 1", { "reflect.attempt": 1 }, episode);
    const generate = tracer.startSpan("generate", { "gen_ai.operation.name": "chat", "gen_ai.request.model": "smollm2-135m", "gen_ai.request.max_tokens": 256 }, attempt);
    generate.setAttributes({ "gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": 7, "gen_ai.response.finish_reasons": ["stop"] });
    generate.end();
    // Simple processing: the line is on disk as soon as the span ends, before any flush.
    assert.deepEqual(readSpans(path).map((s) => s.name), ["generate"]);
    await inSpan(tracer, "verify", { "reflect.verdict": "wrong" }, attempt, async () => {});
    attempt.setAttributes({ "reflect.score.pre": 0, "reflect.score.post": 1, "reflect.decision": "retry" });
    attempt.end();
    episode.end();
    await tracer.shutdown();

    const spans = readSpans(path);
    assert.deepEqual(spans.map((s) => s.name), ["generate", "verify", "attempt 1", "episode"]);
    const [ep, at, gen, ver] = ["episode", "attempt 1", "generate", "verify"].map((name) => byName(spans, name)) as [SpanRecord, SpanRecord, SpanRecord, SpanRecord];
    assert.equal(ep.traceId, "00000000000000000000000000000001");
    assert.ok(spans.every((s) => s.traceId === ep.traceId));
    assert.equal(ep.spanId, "0000000000000001");
    assert.equal(ep.parentSpanId, null);
    assert.equal(at.parentSpanId, ep.spanId);
    assert.equal(gen.parentSpanId, at.spanId);
    assert.equal(ver.parentSpanId, at.spanId);
    assert.deepEqual(gen.attributes, {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "smollm2-135m",
      "gen_ai.request.max_tokens": 256,
      "gen_ai.usage.input_tokens": 42,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.finish_reasons": ["stop"],
    });
    assert.deepEqual(at.attributes, { "reflect.attempt": 1, "reflect.score.pre": 0, "reflect.score.post": 1, "reflect.decision": "retry" });
    assert.deepEqual(gen.status, { code: "UNSET" });
    assert.equal(gen.events, undefined);
    // Clock readings: episode start 0 s, attempt 1 s, generate 2 s, generate end 3 s, verify 4–5 s, attempt end 6 s, episode end 7 s.
    assert.equal(ep.startTime, "2025-01-01T00:00:00.000Z");
    assert.equal(gen.startTime, "2025-01-01T00:00:02.000Z");
    assert.equal(gen.endTime, "2025-01-01T00:00:03.000Z");
    assert.equal(gen.durationMs, 1000);
    assert.equal(ep.endTime, "2025-01-01T00:00:07.000Z");
    assert.equal(ep.durationMs, 7000);
  });

  it("marks a failed span ERROR with the error's name and message and an exception event; end is idempotent", async () => {
    const path = tracePath();
    const tracer = createOtelTracer({ jsonlPath: path, idGenerator: counterIds(), now: steppingClock() });
    const root = tracer.startSpan("episode");
    await assert.rejects(
      inSpan(tracer, "generate", {}, root, async () => {
        throw new ModelCallError("model server answered 503", 503, true);
      }),
      ModelCallError,
    );
    root.end("plain string failure");
    root.end();
    await tracer.shutdown();

    const spans = readSpans(path);
    assert.equal(spans.length, 2);
    const generate = byName(spans, "generate");
    assert.deepEqual(generate.status, { code: "ERROR", message: "ModelCallError: model server answered 503" });
    assert.equal(generate.events?.length, 1);
    const event = generate.events?.[0];
    assert.equal(event?.name, "exception");
    assert.equal(event?.time, generate.endTime);
    assert.equal(event?.attributes["exception.type"], "ModelCallError");
    assert.equal(event?.attributes["exception.message"], "model server answered 503");
    assert.match(String(event?.attributes["exception.stacktrace"]), /ModelCallError: model server answered 503\n\s+at /);
    assert.deepEqual(byName(spans, "episode").status, { code: "ERROR", message: "string: plain string failure" });
  });

  it("never records secrets, and records content only when asked", async () => {
    const secrets = {
      api_key: "abc",
      "openai.api-key": "abc",
      "http.request.header.authorization": "Bearer abc",
      "gateway.token": "abc",
      "db.password": "hunter2",
      client_secret: "abc",
      "gen_ai.usage.input_tokens": "sk-not-a-count-1234567890",
      note: "sent Authorization: Bearer eyJhbGciOi.payload.sig with key sk-proj-ABCDEF1234567890",
      "reflect.keys": ["sk-abcdefghijklmnop", "fine"],
      "gen_ai.input.messages": '[{"role":"user","content":"what is 2+2? my key is sk-ABCDEFGH12345678"}]',
      "gen_ai.output.messages": '[{"role":"assistant","content":"4"}]',
      "gen_ai.usage.output_tokens": 3,
    };
    const expectedKept = {
      note: "sent Authorization: Bearer [REDACTED] with key [REDACTED]",
      "reflect.keys": ["[REDACTED]", "fine"],
      "gen_ai.usage.output_tokens": 3,
    };

    const quiet = tracePath();
    const withoutContent = createOtelTracer({ jsonlPath: quiet });
    assert.equal(withoutContent.recordContent, false);
    const span = withoutContent.startSpan("generate", secrets);
    span.setAttributes({ authorization: "Bearer late", "gen_ai.output.messages": "late" });
    span.end(new Error("request failed: Authorization: Bearer abc123.def and sk-live-0123456789abcdef"));
    await withoutContent.shutdown();
    const [quietSpan] = readSpans(quiet);
    assert.deepEqual(quietSpan?.attributes, expectedKept);
    assert.equal(quietSpan?.status.message, "Error: request failed: Authorization: Bearer [REDACTED] and [REDACTED]");
    assert.equal(quietSpan?.events?.[0]?.attributes["exception.message"], "request failed: Authorization: Bearer [REDACTED] and [REDACTED]");
    assert.doesNotMatch(readFileSync(quiet, "utf8"), /hunter2|abc123|sk-(proj|live|ABC|abc|not)|eyJ|"abc"/);

    const loud = tracePath();
    const withContent = createOtelTracer({ jsonlPath: loud, recordContent: true });
    assert.equal(withContent.recordContent, true);
    withContent.startSpan("generate", secrets).end();
    await withContent.shutdown();
    assert.deepEqual(readSpans(loud)[0]?.attributes, {
      ...expectedKept,
      "gen_ai.input.messages": '[{"role":"user","content":"what is 2+2? my key is [REDACTED]"}]',
      "gen_ai.output.messages": '[{"role":"assistant","content":"4"}]',
    });
  });

  it("appends: a second tracer on the same file keeps the earlier lines", async () => {
    const path = tracePath();
    const first = createOtelTracer({ jsonlPath: path, idGenerator: counterIds() });
    first.startSpan("episode a").end();
    first.startSpan("episode b").end();
    await first.shutdown();
    const before = readFileSync(path, "utf8");

    const resumed = createOtelTracer({ jsonlPath: path });
    resumed.startSpan("episode c").end();
    await resumed.shutdown();
    const afterResume = readFileSync(path, "utf8");
    assert.ok(afterResume.startsWith(before), "earlier lines were rewritten");
    assert.deepEqual(readSpans(path).map((s) => s.name), ["episode a", "episode b", "episode c"]);
  });

  it("refuses a parent from another tracer, and a tracer with nowhere to send spans", async () => {
    const one = createOtelTracer({ jsonlPath: tracePath() });
    const two = createOtelTracer({ jsonlPath: tracePath() });
    const parent = one.startSpan("episode");
    assert.throws(() => two.startSpan("attempt 1", {}, parent), UsageError);
    parent.end();
    await Promise.all([one.shutdown(), two.shutdown()]);
    assert.throws(() => createOtelTracer({}), UsageError);
    assert.throws(() => createOtelTracer({ otlpEndpoint: "not a url" }), UsageError);
  });
});

interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}
interface OtlpBody {
  resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

describe("createOtelTracer → OTLP/HTTP", () => {
  const received: ReceivedRequest[] = [];
  let status = 200;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(status, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  let origin = "";
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  it("batches spans and sends them to <endpoint>/v1/traces as OTLP JSON on shutdown, alongside the file", async () => {
    received.length = 0;
    status = 200;
    const path = tracePath();
    const tracer = createOtelTracer({ jsonlPath: path, otlpEndpoint: origin, otlpHeaders: { "x-collector-team": "reflect" }, serviceName: "reflectkit-test", idGenerator: counterIds() });
    const episode = tracer.startSpan("episode");
    const attempt = tracer.startSpan("attempt 1", { "reflect.decision": "stop", "reflect.score.post": 1 }, episode);
    tracer.startSpan("generate", { "gen_ai.request.model": "smollm2-135m", "gen_ai.usage.input_tokens": 12, api_key: "sk-abcdefghijklmnop" }, attempt).end();
    attempt.end();
    episode.end(new Error("budget spent"));
    // Batched: nothing goes out until the batch delay (5 s) or a flush.
    assert.equal(received.length, 0);
    await tracer.shutdown();
    await tracer.shutdown(); // idempotent

    assert.ok(received.length >= 1, "the collector received nothing");
    for (const request of received) {
      assert.equal(request.method, "POST");
      assert.equal(request.url, "/v1/traces");
      assert.match(String(request.headers["content-type"]), /^application\/json/);
      assert.equal(request.headers["x-collector-team"], "reflect");
    }
    const bodies = received.map((request) => JSON.parse(request.body) as OtlpBody);
    const resource = bodies[0]?.resourceSpans[0]?.resource;
    assert.equal(resource?.attributes.find((a) => a.key === "service.name")?.value.stringValue, "reflectkit-test");
    const spans = bodies.flatMap((body) => body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
    assert.deepEqual(spans.map((s) => s.name).sort(), ["attempt 1", "episode", "generate"]);
    const span = (name: string) => spans.find((s) => s.name === name);
    assert.equal(span("episode")?.traceId, "00000000000000000000000000000001");
    assert.equal(span("episode")?.spanId, "0000000000000001");
    assert.equal(span("attempt 1")?.parentSpanId, "0000000000000001");
    assert.equal(span("generate")?.parentSpanId, span("attempt 1")?.spanId);
    const attribute = (name: string, key: string) => span(name)?.attributes.find((a) => a.key === key)?.value;
    assert.deepEqual(attribute("generate", "gen_ai.request.model"), { stringValue: "smollm2-135m" });
    assert.deepEqual(attribute("generate", "gen_ai.usage.input_tokens"), { intValue: 12 });
    assert.equal(attribute("generate", "api_key"), undefined);
    assert.deepEqual(attribute("attempt 1", "reflect.decision"), { stringValue: "stop" });
    assert.deepEqual(span("episode")?.status, { code: 2, message: "Error: budget spent" });
    assert.doesNotMatch(received.map((r) => r.body).join("\n"), /sk-abcdef/);
    // The file got the same spans.
    assert.deepEqual(readSpans(path).map((s) => s.name), ["generate", "attempt 1", "episode"]);
  });

  it("reports spans the collector refused as a TelemetryExportError from shutdown", async () => {
    received.length = 0;
    status = 400;
    const tracer = createOtelTracer({ otlpEndpoint: `${origin}/v1/traces` });
    tracer.startSpan("episode").end();
    await assert.rejects(tracer.shutdown(), (error: unknown) => {
      assert.ok(error instanceof TelemetryExportError);
      assert.equal(error.failures.length, 1);
      assert.equal(error.failures[0]?.spans, 1);
      assert.match(error.message, /1 span\(s\) were not exported to OTLP http:\/\/127\.0\.0\.1:\d+\/v1\/traces/);
      return true;
    });
    assert.equal(received[0]?.url, "/v1/traces");
  });
});

describe("otlpEndpointFromEnv", () => {
  it("prefers the traces endpoint as is, else appends v1/traces to the base endpoint", () => {
    assert.equal(otlpEndpointFromEnv({}), undefined);
    assert.equal(otlpEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }), undefined);
    assert.equal(otlpEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }), "http://collector:4318/v1/traces");
    assert.equal(otlpEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://gw.example/otlp/" }), "https://gw.example/otlp/v1/traces");
    assert.equal(
      otlpEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom" }),
      "http://traces:4318/custom",
    );
  });
});
