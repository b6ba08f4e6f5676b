import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { APIError } from "openai";
import type { RecordWriter } from "../record/record-writer.js";
import type { Episode } from "../loops/types.js";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import type { Tracer } from "../telemetry/tracer.js";
import type { RequestOutcome } from "./observer.js";
import { client, completion, echoHeaders, hang, invalidJson, reply, startTestGateway, startUpstream, status, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { GatewayLimits, RunningGateway } from "./server.js";
import { createGatewayMetrics } from "./metrics.js";
import { armReport } from "../report/arms.js";
import { timeAxis } from "../report/time-axis.js";

const KEY_ENV = "REFLECT_TEST_UPSTREAM_KEY";
const KEY = "sk-planted-DO-NOT-LEAK-0b9d44e1";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };
/** A draft that fails `^\d+$`, a reflection, a draft that passes. */
const FAIL_THEN_PASS = ["maybe forty-two", "I wrote words; the answer must be digits only.", "42"];

interface Setup {
  upstream: FakeUpstream;
  gateway: RunningGateway;
  outcomes: RequestOutcome[];
  recorded: Episode[];
}

/** A gateway whose upstream is the HTTP model on `script`'s server, recording into an in-test writer. */
async function setup(t: TestContext, script: Behaviour | Behaviour[], options: { limits?: Partial<GatewayLimits>; timeoutMs?: number; recorder?: RecordWriter } = {}): Promise<Setup> {
  process.env[KEY_ENV] = KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const upstream = await startUpstream(t, script);
  const outcomes: RequestOutcome[] = [];
  const recorded: Episode[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
    observer: { request: (o) => outcomes.push(o) },
    recorder: options.recorder ?? { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  return { upstream, gateway, outcomes, recorded };
}

const ask = { model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "What is six times seven? Digits only." }] };

/** The named fields of an object, for comparing a few fields of the `reflect` extension at once. */
function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, object[k]]));
}

/** The request body with the `reflect` extension (clients send it through extra body fields). */
function reflected<T extends object>(body: T, reflect: Record<string, unknown>): T {
  return { ...body, reflect } as T;
}

describe("reflected requests", () => {
  it("answers a request that asks for no check with its first draft: nothing to reflect on, one upstream call", async (t) => {
    const { upstream, gateway, recorded } = await setup(t, reply("a draft"));
    const { data, response } = await client(gateway.url).chat.completions.create(reflected(ask, {})).withResponse();
    assert.equal(data.choices[0]?.message.content, "a draft");
    assert.equal(upstream.requests.length, 1);
    const extension = (data as unknown as { reflect: { attempts: number; stopped_by: string; passed: boolean; checks: unknown[] } }).reflect;
    assert.deepEqual([extension.attempts, extension.stopped_by, extension.passed, extension.checks], [1, "unchecked", null, []]);
    assert.equal(response.headers.get("x-reflect-decision"), "unjudged");
    assert.equal(recorded[0]?.attempts[0]?.verdict.correct, null);
  });

  it("reflects on a draft that fails its check and returns the passing retry, with usage over every call", async (t) => {
    const { upstream, gateway, outcomes, recorded } = await setup(t, reply((_seen, i) => FAIL_THEN_PASS[i] as string));
    const { data, response } = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" })).withResponse();
    assert.equal(data.choices[0]?.message.content, "42");
    assert.equal(data.choices[0]?.finish_reason, "stop");
    assert.equal(data.model, UPSTREAM_MODEL);
    // Three upstream calls (attempt, reflection, attempt), and usage is their sum as the upstream reported it.
    assert.equal(upstream.requests.length, 3);
    assert.deepEqual(data.usage, { prompt_tokens: upstream.usage.prompt, completion_tokens: upstream.usage.completion, total_tokens: upstream.usage.prompt + upstream.usage.completion, prompt_tokens_details: { cached_tokens: 0 } });
    const extension = (data as unknown as { reflect: Record<string, unknown> }).reflect;
    assert.deepEqual(extension, {
      attempts: 2,
      decision: "verified",
      rolled_back: false,
      stopped_by: "verified",
      selected: 2,
      passed: true,
      checks: [
        { turn: 1, source: "regex", pass: false, score: 0, feedback: "The reply does not match the required pattern /^\\d+$/. Write the reply so that it matches." },
        { turn: 2, source: "regex", pass: true, score: 1, feedback: "The reply matches /^\\d+$/." },
      ],
      usage_by_role: { attempt: { tokens: 20 + 3 + 22 + 5, calls: 2 }, reflection: { tokens: 21 + 4, calls: 1 } },
    });
    assert.equal(response.headers.get("x-reflect-attempts"), "2");
    assert.equal(response.headers.get("x-reflect-decision"), "verified");
    assert.equal(response.headers.get("x-reflect-passed"), "true");
    // The retry saw the failing check's words (detailed feedback by default).
    assert.match(JSON.stringify(upstream.requests[1]?.body.messages), /does not match the required pattern/);
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]?.attempts.length, 2);
    assert.equal(outcomes.length, 1);
    assert.equal(outcomes[0]?.kind, "reflected");
    assert.equal(outcomes[0]?.status, 200);
    assert.equal(outcomes[0]?.episode, recorded[0]);
  });

  it("says a failed answer failed: x-reflect-passed false by default, a 422 naming the checks with on_failure: error", async (t) => {
    const draft = "maybe forty-two";
    const { gateway } = await setup(t, reply((_seen, i) => (i % 2 === 0 ? draft : "I should write digits.")));
    const returned = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" })).withResponse();
    assert.equal(returned.response.status, 200);
    assert.equal(returned.response.headers.get("x-reflect-passed"), "false");
    assert.equal(returned.response.headers.get("x-reflect-decision"), "failed");
    assert.deepEqual(pick((returned.data as unknown as { reflect: Record<string, unknown> }).reflect, ["decision", "passed"]), { decision: "failed", passed: false });

    for (const stream of [false, true]) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(reflected({ ...ask, stream }, { regex: "^\\d+$", on_failure: "error" })) });
      assert.equal(response.status, 422, `stream: ${stream}`);
      assert.equal(response.headers.get("x-reflect-passed"), "false");
      assert.equal(response.headers.get("x-reflect-decision"), "failed");
      const body = (await response.json()) as { error: { type: string; code: string; message: string }; reflect: { passed: boolean; attempts: number } };
      assert.deepEqual([body.error.type, body.error.code], ["invalid_request_error", "checks_failed"]);
      assert.match(body.error.message, /failed its checks after 2 attempts — regex: The reply does not match the required pattern/);
      assert.deepEqual([body.reflect.passed, body.reflect.attempts], [false, 2]);
      assert.doesNotMatch(JSON.stringify(body), new RegExp(KEY));
    }
    // The official client raises it as an API error with the status.
    await assert.rejects(client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$", on_failure: "error" })), (error: unknown) => error instanceof APIError && error.status === 422);
  });

  it("returns the first draft when every attempt fails equally: decision failed, rolled back, on both the body and the stream", async (t) => {
    // The retry only echoes the feedback: it fails the same check with the same score, so it does not replace the draft.
    const script = ["maybe forty-two", "I should write digits.", "The reply does not match the required pattern."];
    const { upstream, gateway, recorded } = await setup(t, reply((_seen, i) => script[i % 3] as string));
    const { data, response } = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" })).withResponse();
    assert.equal(upstream.requests.length, 3);
    assert.equal(data.choices[0]?.message.content, "maybe forty-two");
    const extension = (data as unknown as { reflect: Record<string, unknown> }).reflect;
    assert.deepEqual(pick(extension, ["attempts", "decision", "rolled_back", "selected", "passed", "stopped_by"]), { attempts: 2, decision: "failed", rolled_back: true, selected: 1, passed: false, stopped_by: "turns:2" });
    assert.deepEqual([response.headers.get("x-reflect-decision"), response.headers.get("x-reflect-passed")], ["failed", "false"]);
    // The record keeps the loop's own decisions: the last attempt rolled back to the first.
    assert.deepEqual(recorded[0]?.attempts.map((a) => [a.decision, a.selected]), [["continue", 1], ["rollback", 1]]);

    const stream = await client(gateway.url).chat.completions.create(reflected({ ...ask, stream: true as const }, { regex: "^\\d+$" }));
    let text = "";
    let streamed: Record<string, unknown> | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      streamed = (chunk as unknown as { reflect?: Record<string, unknown> }).reflect ?? streamed;
    }
    assert.equal(text, "maybe forty-two");
    assert.deepEqual(pick(streamed ?? {}, ["decision", "rolled_back", "selected"]), { decision: "failed", rolled_back: true, selected: 1 });
  });

  it("returns a later attempt that fails less: decision failed, not rolled back", async (t) => {
    // Two tool calls with bad arguments (score 0), then two of which one is valid (score 0.5): still failing, but better.
    const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } } };
    const calls = (args: readonly string[]) => args.map((a, i) => ({ id: `call_${i}`, type: "function", function: { name: "get_weather", arguments: a } }));
    const toolReply = (args: readonly string[]): Behaviour => (res) => {
      const body = completion(null);
      (body.choices as Array<Record<string, unknown>>)[0] = { index: 0, message: { role: "assistant", content: null, tool_calls: calls(args) }, logprobs: null, finish_reason: "tool_calls" };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const { gateway } = await setup(t, [toolReply(["{}", '{"town":"Paris"}']), reply("Each call needs a city."), toolReply(['{"city":"Paris"}', "{}"])]);
    const { data, response } = await client(gateway.url).chat.completions.create(reflected({ ...ask, tools: [weather] }, {})).withResponse();
    assert.deepEqual(data.choices[0]?.message.tool_calls?.map((c) => (c.type === "function" ? c.function.arguments : "")), ['{"city":"Paris"}', "{}"]);
    const extension = (data as unknown as { reflect: Record<string, unknown> & { checks: Array<{ turn: number; score: number }> } }).reflect;
    assert.deepEqual(extension.checks.map((c) => [c.turn, c.score]), [[1, 0], [2, 0.5]]);
    assert.deepEqual(pick(extension, ["decision", "rolled_back", "selected", "passed"]), { decision: "failed", rolled_back: false, selected: 2, passed: false });
    assert.equal(response.headers.get("x-reflect-decision"), "failed");
  });

  it("says unjudged when no check could judge the answer, and keeps the first of the unjudged attempts", async (t) => {
    // A pattern that backtracks past the check's time limit on these replies: the regex check cannot judge.
    const { gateway } = await setup(t, reply((_seen, i) => (i === 1 ? "No idea what went wrong." : `${"a".repeat(34)}${i}`)));
    const { data, response } = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^(a+)+$" })).withResponse();
    assert.equal(data.choices[0]?.message.content, `${"a".repeat(34)}0`);
    const extension = (data as unknown as { reflect: Record<string, unknown> & { checks: Array<{ pass: boolean | null }> } }).reflect;
    assert.deepEqual(extension.checks.map((c) => c.pass), [null, null]);
    assert.deepEqual(pick(extension, ["decision", "rolled_back", "selected", "passed"]), { decision: "unjudged", rolled_back: true, selected: 1, passed: null });
    assert.deepEqual([response.headers.get("x-reflect-decision"), response.headers.get("x-reflect-passed")], ["unjudged", "null"]);
  });

  it("answers a passing attempt as usual when on_failure is error, and refuses an unknown on_failure naming the field", async (t) => {
    const { gateway } = await setup(t, reply((_seen, i) => FAIL_THEN_PASS[i % 3] as string));
    const { data, response } = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$", on_failure: "error" })).withResponse();
    assert.equal(data.choices[0]?.message.content, "42");
    assert.equal(response.headers.get("x-reflect-passed"), "true");
    const bad = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(reflected(ask, { regex: "^\\d+$", on_failure: "raise" })) });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { param: string } }).error.param, "reflect.on_failure");
  });

  it("nests the episode's spans under a gateway.request span", async (t) => {
    const spans: Array<{ name: string; parent: string | undefined; attributes: Record<string, unknown> }> = [];
    const tracer: Tracer = {
      recordContent: false,
      shutdown: async () => {},
      startSpan(name, attributes = {}, parent) {
        const span = { name, parent: (parent as { name?: string } | undefined)?.name, attributes: { ...attributes } };
        spans.push(span);
        return Object.assign({ name }, { setAttributes: (a: Record<string, unknown>) => Object.assign(span.attributes, a), end: () => {} });
      },
    };
    process.env[KEY_ENV] = KEY;
    t.after(() => delete process.env[KEY_ENV]);
    const upstream = await startUpstream(t, reply((_seen, i) => FAIL_THEN_PASS[i] as string));
    const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }), tracer });
    await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" }));
    const request = spans.find((s) => s.name === "gateway.request");
    assert.equal(request?.parent, undefined);
    assert.equal(spans.find((s) => s.name === "episode")?.parent, "gateway.request");
    assert.deepEqual([request?.attributes["http.response.status_code"], request?.attributes["reflect.attempts"], request?.attributes["reflect.score.pre"], request?.attributes["reflect.score.post"]], [200, 2, 0, 1]);
  });

  it("runs a judge named in reflect.judge after the checks, and counts its calls in usage", async (t) => {
    let judged = 0;
    const upstream = await startUpstream(t, (res, seen, index, up) => {
      if (seen.body.model !== "judge-model") return reply((s) => (JSON.stringify(s.body.messages).includes("try again") ? "Paris" : "Lyon"))(res, seen, index, up);
      judged += 1;
      const verdict = judged === 1 ? { verdict: "incorrect", categories: ["facts"], explanation: "That is not the capital." } : { verdict: "correct", categories: [], explanation: "Right." };
      return reply(JSON.stringify(verdict))(res, seen, index, up);
    });
    const judge = createHttpModel({ baseUrl: upstream.baseUrl, model: "judge-model", retry: noRetry });
    const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }), judges: new Map([["http://judge/v1#judge-model", judge]]) });
    const data = await client(gateway.url).chat.completions.create(reflected({ model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "Capital of France?" }] }, { judge: "http://judge/v1#judge-model" }));
    assert.equal(data.choices[0]?.message.content, "Paris");
    const extension = (data as unknown as { reflect: { checks: Array<{ turn: number; source: string; pass: boolean }>; usage_by_role: Record<string, { calls: number }> } }).reflect;
    assert.deepEqual(extension.checks.map((c) => [c.turn, c.source, c.pass]), [[1, "judge", false], [2, "judge", true]]);
    assert.deepEqual([extension.usage_by_role.attempt?.calls, extension.usage_by_role.reflection?.calls, extension.usage_by_role.critique?.calls], [2, 1, 2]);
    // Five upstream calls (two attempts, a reflection, two judgements), all in usage.
    assert.equal(upstream.requests.length, 5);
    assert.equal(data.usage?.total_tokens, upstream.usage.prompt + upstream.usage.completion);
  });

  it("reads one meaning of passed: a judge-rejected, verifier-accepted answer is failed in the response, the metrics, the record's time axis and the arms report", async (t) => {
    // The draft "42" passes the verifier (regex ^\\d+$); the judge rejects every answer.
    const upstream = await startUpstream(t, (res, seen, index, up) =>
      seen.body.model === "judge-model" ? reply(JSON.stringify({ verdict: "incorrect", categories: ["facts"], explanation: "Not what was asked." }))(res, seen, index, up) : reply("42")(res, seen, index, up),
    );
    const metrics = createGatewayMetrics({ processMetrics: false });
    const recorded: Episode[] = [];
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }),
      judges: new Map([["http://judge/v1#judge-model", createHttpModel({ baseUrl: upstream.baseUrl, model: "judge-model", retry: noRetry })]]),
      observer: { request: (o) => metrics.request(o) },
      recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    });
    const { data, response } = await client(gateway.url)
      .chat.completions.create(reflected(ask, { regex: "^\\d+$", judge: "http://judge/v1#judge-model", max_turns: 1 }))
      .withResponse();
    const extension = (data as unknown as { reflect: { decision: string; passed: boolean | null; checks: Array<{ source: string; pass: boolean | null }> } }).reflect;
    // The verifier accepted and the judge rejected: the client is told failed.
    assert.deepEqual(extension.checks.map((c) => [c.source, c.pass]), [["regex", true], ["judge", false]]);
    assert.deepEqual([extension.decision, extension.passed, response.headers.get("x-reflect-decision")], ["failed", false, "failed"]);
    // The record keeps both: the verifier's verdict (correct) and the checks that failed the answer.
    assert.equal(recorded.length, 1);
    const episode = recorded[0] as Episode;
    assert.equal(episode.attempts[0]?.verdict.correct, true, "the verifier's own verdict stays recorded as the verifier's");
    // The metrics, the arms report and the record's time axis count it as not passed, like the response.
    const body = (await metrics.text()).body;
    assert.match(body, /^reflect_gateway_checked_requests_total 1$/m);
    assert.match(body, /^reflect_gateway_first_pass_total 0$/m);
    assert.match(body, /^reflect_gateway_final_pass_total 0$/m);
    assert.match(body, /^reflect_gateway_arm_requests_total\{arm="base",outcome="final_pass"\} 0$/m);
    const arms = armReport(recorded);
    assert.deepEqual([arms?.rows[0]?.firstPass.k, arms?.rows[0]?.finalPass.k, arms?.rows[0]?.finalPass.n], [0, 0, 1]);
    const axis = timeAxis(recorded, 1);
    assert.deepEqual([axis?.buckets[0]?.requests, axis?.buckets[0]?.firstPass, axis?.buckets[0]?.finalPass], [1, 0, 0]);
  });

  it("keeps a budget: reflect.budget.calls 1 makes exactly one upstream call", async (t) => {
    const { upstream, gateway } = await setup(t, reply((_seen, i) => FAIL_THEN_PASS[i] as string));
    const data = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$", budget: { calls: 1 } }));
    assert.equal(upstream.requests.length, 1);
    assert.equal(data.choices[0]?.message.content, "maybe forty-two");
    const extension = (data as unknown as { reflect: { attempts: number; passed: boolean; stopped_by: string } }).reflect;
    assert.deepEqual([extension.attempts, extension.passed, extension.stopped_by], [1, false, "budget:calls"]);
    assert.equal(data.usage?.total_tokens, upstream.usage.prompt + upstream.usage.completion);
  });

  it("streams the settled answer as SSE, with the reflect extension and a usage chunk", async (t) => {
    const { upstream, gateway } = await setup(t, reply((_seen, i) => FAIL_THEN_PASS[i] as string));
    const stream = await client(gateway.url).chat.completions.create(reflected({ ...ask, stream: true as const, stream_options: { include_usage: true } }, { regex: "^\\d+$" }));
    let text = "";
    let finish: string | null | undefined;
    let extension: { attempts?: number } | undefined;
    let usage: { total_tokens: number } | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      extension = (chunk as unknown as { reflect?: { attempts: number } }).reflect ?? extension;
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, "42");
    assert.equal(finish, "stop");
    assert.equal(extension?.attempts, 2);
    assert.equal(usage?.total_tokens, upstream.usage.prompt + upstream.usage.completion);
  });

  it("records the episode before the response is sent", async (t) => {
    let appended = false;
    const recorder: RecordWriter = {
      dir: "(memory)",
      append: async () => {
        await new Promise((r) => setTimeout(r, 150));
        appended = true;
      },
      close: async () => {},
    };
    const { gateway } = await setup(t, reply("7"), { recorder });
    const data = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" }));
    assert.equal(data.choices[0]?.message.content, "7");
    assert.equal(appended, true, "the response came before the record was synced");
  });

  it("answers 500 and acknowledges nothing when the record cannot be written", async (t) => {
    const recorder: RecordWriter = { dir: "(memory)", append: async () => Promise.reject(new Error("disk full")), close: async () => {} };
    const { gateway } = await setup(t, reply("7"), { recorder });
    const failed = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" })).then(() => assert.fail("expected 500"), (e: unknown) => e);
    assert.ok(failed instanceof APIError);
    assert.equal(failed.status, 500);
  });

  it("answers 502 in OpenAI's shape when the upstream fails before any attempt, and for invalid JSON", async (t) => {
    const { gateway, outcomes } = await setup(t, [status(500, { error: { message: "upstream boom" } }), invalidJson]);
    for (const expected of ["status", "malformed"]) {
      const failed = await client(gateway.url).chat.completions.create(reflected(ask, { regex: "^\\d+$" })).then(() => assert.fail("expected 502"), (e: unknown) => e);
      assert.ok(failed instanceof APIError);
      assert.equal(failed.status, 502);
      assert.equal((failed.error as { type?: string }).type, "server_error");
      assert.equal(outcomes.at(-1)?.upstreamFailure, expected);
    }
  });

  it("answers 504 when the upstream hangs past its timeout or the request past the gateway's", async (t) => {
    const { gateway, outcomes } = await setup(t, hang, { timeoutMs: 200 });
    const slow = await client(gateway.url).chat.completions.create(reflected(ask, {})).then(() => assert.fail("expected 504"), (e: unknown) => e);
    assert.ok(slow instanceof APIError);
    assert.equal(slow.status, 504);
    assert.equal(outcomes.at(-1)?.upstreamFailure, "timeout");

    const capped = await setup(t, hang, { limits: { requestTimeoutMs: 200 } });
    const late = await client(capped.gateway.url).chat.completions.create(reflected(ask, {})).then(() => assert.fail("expected 504"), (e: unknown) => e);
    assert.ok(late instanceof APIError);
    assert.equal(late.status, 504);
    assert.match(late.message, /did not finish within 200 ms/);
  });

  it("never returns the upstream key, even when the upstream writes it into its reply", async (t) => {
    const { upstream, gateway } = await setup(t, echoHeaders);
    const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(reflected(ask, { max_turns: 1 })) });
    const text = await response.text();
    assert.equal(response.status, 200);
    assert.ok(upstream.requests[0]?.headers.authorization?.includes(KEY));
    assert.ok(!text.includes(KEY) && text.includes("[redacted]"), text);
    for (const [, value] of response.headers) assert.ok(!value.includes(KEY));
  });

  it("passes a request without reflect through an upstream that is a model, not an endpoint", async (t) => {
    const upstream = await startUpstream(t, reply("plain"));
    const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }) });
    const data = await client(gateway.url).chat.completions.create({ ...ask, max_tokens: 8 });
    assert.equal(data.object, "chat.completion");
    assert.equal(data.choices[0]?.message.content, "plain");
    assert.deepEqual([data.usage?.prompt_tokens, data.usage?.completion_tokens], [20, 3]);
    assert.equal((data as unknown as { reflect?: unknown }).reflect, undefined);
    const stream = await client(gateway.url).chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), "plain");
    assert.equal(chunks.at(-1)?.usage?.total_tokens, 21 + 4);
  });

  it("answers 429 with Retry-After when running and queue are full", async (t) => {
    const { upstream, gateway, outcomes } = await setup(t, [hang, reply("1")], { limits: { parallel: 1, maxQueue: 1, retryAfterSeconds: 3 } });
    const body = JSON.stringify(reflected(ask, { max_turns: 1 }));
    const send = (signal?: AbortSignal) => fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body, ...(signal === undefined ? {} : { signal }) });
    const controller = new AbortController();
    const running = send(controller.signal).catch((e: unknown) => e);
    await upstream.received(1);
    const queued = send();
    await new Promise((r) => setTimeout(r, 50));
    const refused = await send();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "3");
    assert.equal(((await refused.json()) as { error: { type: string } }).error.type, "rate_limit_error");
    assert.deepEqual(gateway.load(), { inFlight: 2, queued: 1, checks: { queued: 0, busy: 0, replaced: 0 }, tenants: { local: 2 } });
    // The running request's client leaves; the queued one runs.
    controller.abort();
    await running;
    assert.equal((await queued).status, 200);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), [200, 429, 499]);
  });
});
