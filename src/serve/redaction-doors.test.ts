/**
 * The upstream's key never reaches a client, by any door in any mode: for each route (Chat Completions, Responses,
 * Messages) relayed raw (JSON and SSE), translated onto an upstream that speaks none of them but through the HTTP
 * model (JSON and SSE), and reflected (JSON and SSE), an upstream on 127.0.0.1 echoes the key — whole, split across
 * events at every position and one character an event, `\u`-escaped, in tool arguments and input JSON, and in error
 * bodies — and what the client decodes (every string of the body, each stream's deltas concatenated as the SDKs do)
 * holds no key. The official clients decode one stream of each dialect; a start of the key of every length gives the
 * client the same events and delta lengths as another text of that length.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import type { DialectName } from "./dialects/index.js";
import { charByChar, decodeStream, events, eventShape, splitEverywhere, upstreamEvents, type StreamPlan } from "./redaction-harness.js";
import { client, completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

const KEY_ENV = "REFLECT_TEST_UPSTREAM_KEY";
const KEY = "sk-planted-DO-NOT-LEAK-7f3a9c21";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };
const routes: DialectName[] = ["chat", "responses", "messages"];
const path: Record<DialectName, string> = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages" };

/** How the gateway answers: the upstream relays the dialect raw, is reached only through the HTTP model, or reflects. */
type Mode = "raw" | "translated" | "reflected";

/** The key with its first character and two of its digits written as JSON `\u` escapes. */
const escape = (json: string): string => json.replaceAll(KEY, `\\u0073${KEY.slice(1, -2)}\\u0032\\u0031`);

/** A gateway on an upstream whose behaviour each request takes from `upstream.next`. */
async function setup(t: TestContext, mode: Mode): Promise<{ gateway: RunningGateway; next: { behaviour: Behaviour } }> {
  process.env[KEY_ENV] = KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const next: { behaviour: Behaviour } = { behaviour: () => assert.fail("no behaviour set") };
  const upstream = await startUpstream(t, (res, seen, index, up) => next.behaviour(res, seen, index, up));
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, speaks: mode === "raw" ? routes : [] },
  });
  return { gateway, next };
}

/** A request of `dialect` offering one tool, streamed or not, reflected or not. */
function requestBody(dialect: DialectName, stream: boolean, reflect: boolean): Record<string, unknown> {
  const extra = { ...(stream ? { stream: true } : {}), ...(reflect ? { reflect: {} } : {}) };
  if (dialect === "chat") return { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }], ...extra };
  if (dialect === "responses") return { model: UPSTREAM_MODEL, input: "x", tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }], ...extra };
  return { model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "x" }], tools: [{ name: "lookup", input_schema: { type: "object" } }], ...extra };
}

async function send(gateway: RunningGateway, dialect: DialectName, stream: boolean, reflect: boolean): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gateway.url}${path[dialect]}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(requestBody(dialect, stream, reflect)) });
  return { status: response.status, text: await response.text() };
}

/** Every string and object key of a JSON value, as a client's JSON.parse yields them. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) (out.push(k), stringsOf(v, out));
  return out;
}

/** A JSON answer's text and tool input, in each dialect's shape. */
function jsonAnswer(dialect: DialectName, body: Record<string, any>): { text: string; args: string } {
  if (dialect === "chat") return { text: body.choices[0].message.content ?? "", args: body.choices[0].message.tool_calls?.[0]?.function.arguments ?? "" };
  if (dialect === "responses") {
    const text = body.output.filter((o: any) => o.type === "message").flatMap((o: any) => o.content.map((c: any) => c.text)).join("");
    return { text, args: body.output.find((o: any) => o.type === "function_call")?.arguments ?? "" };
  }
  const tool = body.content.find((c: any) => c.type === "tool_use");
  return { text: body.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join(""), args: tool === undefined ? "" : JSON.stringify(tool.input) };
}

/** What the raw upstream answers a non-streamed request of `dialect` with: `text` and the tool input `args`. */
function dialectJson(dialect: DialectName, text: string, args: string): Record<string, unknown> {
  if (dialect === "chat") return { ...completion(text), choices: [{ index: 0, message: { role: "assistant", content: text, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: args } }] }, finish_reason: "tool_calls" }] };
  if (dialect === "responses") {
    return { id: "resp_1", object: "response", status: "completed", model: UPSTREAM_MODEL, output: [{ id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] }, { id: "fc_1", type: "function_call", call_id: "call_1", name: "lookup", arguments: args, status: "completed" }] };
  }
  return { id: "msg_1", type: "message", role: "assistant", model: UPSTREAM_MODEL, content: [{ type: "text", text }, { type: "tool_use", id: "toolu_1", name: "lookup", input: JSON.parse(args) }], stop_reason: "tool_use", usage: { input_tokens: 1, output_tokens: 1 } };
}

/** The HTTP model's upstream (Chat Completions) answering with `text` and one tool call of `args`, its JSON escaped or not. */
function chatReply(text: string, args: string, escaped: boolean): Behaviour {
  return (res) => {
    const body = JSON.stringify({ ...completion(text), choices: [{ index: 0, message: { role: "assistant", content: text, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: args } }] }, finish_reason: "tool_calls" }] });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(escaped ? escape(body) : body);
  };
}

function json(status: number, text: string): Behaviour {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(text);
  };
}

const ARGS = `{"token":"${KEY}"}`;
const WANT = { text: "before [redacted] after", args: '{"token":"[redacted]"}' };

/** Asserts that nothing the client decodes from `text` holds the key. */
function assertNoKey(text: string, what: string): void {
  assert.ok(!text.includes(KEY), `${what}: in the bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed !== undefined) assert.ok(stringsOf(parsed).every((s) => !s.includes(KEY)), `${what}: in a decoded string`);
}

describe("the upstream key, by door and mode", () => {
  for (const dialect of routes) {
    it(`${dialect}, relayed raw as JSON: plain, \\u-escaped, in tool input and in an error body`, async (t) => {
      const { gateway, next } = await setup(t, "raw");
      for (const escaped of [false, true]) {
        const body = JSON.stringify(dialectJson(dialect, `before ${KEY} after`, ARGS));
        next.behaviour = json(200, escaped ? escape(body) : body);
        const { status, text } = await send(gateway, dialect, false, false);
        assert.equal(status, 200);
        assertNoKey(text, `escaped: ${escaped}`);
        assert.deepEqual(jsonAnswer(dialect, JSON.parse(text)), WANT);
      }
      for (const status of [400, 401, 500]) {
        next.behaviour = json(status, escape(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: `bad key ${KEY}` } })));
        const answered = await send(gateway, dialect, false, false);
        assert.equal(answered.status, status);
        assertNoKey(answered.text, `status ${status}`);
        assert.match(answered.text, /bad key \[redacted\]/u);
      }
    });

    it(`${dialect}, relayed raw as SSE: whole, split at every position, one character an event, \\u-escaped, in tool input, in an error`, async (t) => {
      const { gateway, next } = await setup(t, "raw");
      const forms: Array<{ name: string; plan: StreamPlan; escaped?: boolean }> = [
        { name: "whole", plan: { text: [`before ${KEY} after`], args: [ARGS] } },
        { name: "split at every position", plan: { text: splitEverywhere(KEY), args: ['{"token":"', ...splitEverywhere(KEY), '"}'] } },
        { name: "one character an event", plan: { text: charByChar(KEY), args: ['{"token":"', ...KEY, '"}'] } },
        { name: "escaped", plan: { text: [`before ${KEY} after`], args: [ARGS] }, escaped: true },
      ];
      for (const form of forms) {
        const list = upstreamEvents(dialect, form.plan);
        next.behaviour = events(form.escaped === true ? list.map(escape) : list);
        const { status, text } = await send(gateway, dialect, true, false);
        assert.equal(status, 200);
        assert.ok(!text.includes(KEY), form.name);
        const decoded = decodeStream(dialect, text);
        assert.ok(decoded.strings.every((s) => !s.includes(KEY)), form.name);
        assert.equal(decoded.streams.text, form.plan.text.join("").replaceAll(KEY, "[redacted]"), form.name);
        assert.equal(decoded.streams.args, (form.plan.args ?? []).join("").replaceAll(KEY, "[redacted]"), form.name);
      }
      // An error event mid-stream, and a stream refused with an error body.
      next.behaviour = events([...upstreamEvents(dialect, { text: [`a ${KEY.slice(0, 9)}`] }).slice(0, 3), `event: error\ndata: ${escape(JSON.stringify({ type: "error", error: { message: `key ${KEY}` } }))}\n\n`]);
      const broken = await send(gateway, dialect, true, false);
      assert.ok(!broken.text.includes(KEY));
      assert.ok(decodeStream(dialect, broken.text).strings.every((s) => !s.includes(KEY)));
      assert.match(broken.text, /key \[redacted\]/u);
      next.behaviour = json(429, JSON.stringify({ error: { message: `slow down, ${KEY}` } }));
      const refused = await send(gateway, dialect, true, false);
      assert.equal(refused.status, 429);
      assertNoKey(refused.text, "a refused stream");
    });

    for (const mode of ["translated", "reflected"] as const) {
      for (const stream of [false, true]) {
        it(`${dialect}, ${mode} ${stream ? "as SSE" : "as JSON"} onto an upstream the gateway reaches through the HTTP model: plain, split, \\u-escaped, in tool input, in an error`, async (t) => {
          const { gateway, next } = await setup(t, mode);
          const forms = [
            { name: "plain", text: `before ${KEY} after`, escaped: false, want: WANT.text },
            { name: "escaped", text: `before ${KEY} after`, escaped: true, want: WANT.text },
            { name: "many times", text: splitEverywhere(KEY).join(""), escaped: true, want: splitEverywhere(KEY).join("").replaceAll(KEY, "[redacted]") },
          ];
          for (const form of forms) {
            next.behaviour = chatReply(form.text, ARGS, form.escaped);
            const { status, text } = await send(gateway, dialect, stream, mode === "reflected");
            assert.equal(status, 200, text);
            assert.ok(!text.includes(KEY), form.name);
            if (stream) {
              const decoded = decodeStream(dialect, text);
              assert.ok(decoded.strings.every((s) => !s.includes(KEY)), form.name);
              assert.equal(decoded.streams.text, form.want, form.name);
              assert.equal(dialect === "messages" ? JSON.stringify(JSON.parse(decoded.streams.args ?? "")) : decoded.streams.args, WANT.args, form.name);
            } else {
              assertNoKey(text, form.name);
              assert.deepEqual(jsonAnswer(dialect, JSON.parse(text)), { text: form.want, args: WANT.args }, form.name);
            }
          }
          next.behaviour = json(400, escape(JSON.stringify({ error: { message: `the key ${KEY} is not valid`, type: "invalid_request_error" } })));
          const failed = await send(gateway, dialect, stream, mode === "reflected");
          assert.ok(failed.status >= 400, failed.text);
          assertNoKey(failed.text, "an upstream error");
        });
      }
    }
  }
});

describe("the upstream key, through the official clients", () => {
  it("openai decodes a relayed Chat Completions stream and a Responses stream with the key split at every position", async (t) => {
    const { gateway, next } = await setup(t, "raw");
    const openai = client(gateway.url);
    next.behaviour = events(upstreamEvents("chat", { text: splitEverywhere(KEY), args: ['{"token":"', ...charByChar(KEY), '"}'] }));
    let content = "";
    let args = "";
    for await (const chunk of await openai.chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true })) {
      content += chunk.choices[0]?.delta.content ?? "";
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
    }
    assert.equal(content, splitEverywhere(KEY).join("").replaceAll(KEY, "[redacted]"));
    assert.equal(args, `{"token":"before [redacted] after"}`);

    next.behaviour = events(upstreamEvents("responses", { text: splitEverywhere(KEY), args: ['{"token":"', ...charByChar(KEY), '"}'] }));
    let text = "";
    let calls = "";
    let completed: unknown;
    for await (const event of await openai.responses.create({ model: UPSTREAM_MODEL, input: "x", stream: true })) {
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.function_call_arguments.delta") calls += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    assert.equal(text, splitEverywhere(KEY).join("").replaceAll(KEY, "[redacted]"));
    assert.equal(calls, `{"token":"before [redacted] after"}`);
    assert.ok(!JSON.stringify(completed).includes(KEY));
  });

  it("@anthropic-ai/sdk decodes a relayed Messages stream, text, thinking and input JSON, with the key split at every position", async (t) => {
    const { gateway, next } = await setup(t, "raw");
    next.behaviour = events(upstreamEvents("messages", { text: splitEverywhere(KEY), thinking: charByChar(KEY), args: ['{"token":"', ...splitEverywhere(KEY), '"}'] }));
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: "unused", maxRetries: 0 });
    const stream = anthropic.messages.stream({ model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "x" }] });
    let text = "";
    stream.on("text", (delta) => (text += delta));
    const message = await stream.finalMessage();
    const want = splitEverywhere(KEY).join("").replaceAll(KEY, "[redacted]");
    assert.equal(text, want);
    assert.deepEqual(
      message.content.map((b) => (b.type === "text" ? b.text : b.type === "thinking" ? b.thinking : b.type === "tool_use" ? b.input : b.type)),
      ["before [redacted] after", want, { token: want }],
    );
    assert.ok(!JSON.stringify(message).includes(KEY));
  });
});

describe("the relay's hold-back, as an oracle", () => {
  it("gives a start of the key of every length the same events and delta lengths as another text of that length, on every dialect", async (t) => {
    const { gateway, next } = await setup(t, "raw");
    for (const dialect of routes) {
      const shapeOf = async (guess: string): Promise<unknown[]> => {
        next.behaviour = events(upstreamEvents(dialect, { text: ["echo: ", guess, " and more text after it"], args: [`{"q":"${guess}`, '"}'] }));
        return eventShape((await send(gateway, dialect, true, false)).text);
      };
      for (let n = 1; n < KEY.length; n++) assert.deepEqual(await shapeOf(KEY.slice(0, n)), await shapeOf(`${KEY.slice(0, n - 1)}#`), `${dialect}: a start of ${n} characters`);
    }
  });
});
