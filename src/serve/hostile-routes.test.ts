/**
 * The cheap hostile requests of the stress tier, on every dialect's route rather than Chat Completions alone, in
 * process against a real gateway and a scripted upstream: schemas over the limits or that do not compile, a
 * `reflect.item` nested deep or oversize for every task family — each refused 400 naming the field as that dialect's
 * client wrote it, before any upstream call — and the upstream key echoed into a reflected reply, kept from every route.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import { taskFamilies } from "../tasks/registry.js";
import { completion, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

const KEY_ENV = "REFLECT_TEST_HOSTILE_ROUTES_KEY";
const KEY = "sk-planted-DO-NOT-LEAK-7e41c0d2";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

async function setup(t: TestContext, script: Behaviour = reply("unused")): Promise<{ upstream: FakeUpstream; gateway: RunningGateway }> {
  process.env[KEY_ENV] = KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
  });
  return { upstream, gateway };
}

type Route = "/v1/chat/completions" | "/v1/responses" | "/v1/messages";
const routes: readonly Route[] = ["/v1/chat/completions", "/v1/responses", "/v1/messages"];

/** A reflected body of `route` asking `text`, with `extra` fields (a schema, tools) in that dialect's words. */
function body(route: Route, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const ask = route === "/v1/responses" ? { input: text } : { messages: [{ role: "user", content: text }] };
  return { model: UPSTREAM_MODEL, ...(route === "/v1/messages" ? { max_tokens: 64 } : {}), ...ask, reflect: {}, ...extra };
}

/** `schema` as each dialect asks for a JSON answer, and the field a problem with it is named by. */
function answerSchema(route: Route, schema: unknown): { extra: Record<string, unknown>; field: string } {
  if (route === "/v1/responses") return { extra: { text: { format: { type: "json_schema", name: "out", schema } } }, field: "text.format.schema" };
  if (route === "/v1/messages") return { extra: { output_config: { format: { type: "json_schema", schema } } }, field: "output_config.format.schema" };
  return { extra: { response_format: { type: "json_schema", json_schema: { name: "out", schema } } }, field: "response_format.json_schema.schema" };
}

/** `schema` as the parameters of a second tool in each dialect, and the field a problem with it is named by. */
function toolSchema(route: Route, schema: unknown): { extra: Record<string, unknown>; field: string } {
  const ok = { type: "object" };
  if (route === "/v1/responses") return { extra: { tools: [{ type: "function", name: "a", parameters: ok }, { type: "function", name: "b", parameters: schema }] }, field: "tools[1].parameters" };
  if (route === "/v1/messages") return { extra: { tools: [{ name: "a", input_schema: ok }, { name: "b", input_schema: schema }] }, field: "tools[1].input_schema" };
  return { extra: { tools: [{ type: "function", function: { name: "a", parameters: ok } }, { type: "function", function: { name: "b", parameters: schema } }] }, field: "tools[1].function.parameters" };
}

async function post(gateway: RunningGateway, route: Route, text: string): Promise<{ status: number; raw: string; field: unknown }> {
  const response = await fetch(`${gateway.url}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
  const raw = await response.text();
  const parsed = JSON.parse(raw) as { type?: string; error?: { param?: unknown } };
  if (response.status >= 400 && route === "/v1/messages") assert.equal(parsed.type, "error", raw);
  return { status: response.status, raw, field: parsed.error?.param };
}

function wideSchema(properties: number): Record<string, unknown> {
  return { type: "object", properties: Object.fromEntries(Array.from({ length: properties }, (_, i) => [`p_${i}`, { type: "string" }])) };
}

describe("hostile requests on every dialect's route", () => {
  it("refuses a schema past the gateway's 5,000 property definitions, as the answer's format or a tool's, naming the dialect's field", async (t) => {
    const { upstream, gateway } = await setup(t);
    for (const route of routes) {
      for (const { extra, field } of [answerSchema(route, wideSchema(6000)), toolSchema(route, wideSchema(6000))]) {
        const answer = await post(gateway, route, JSON.stringify(body(route, "huge", extra)));
        assert.equal(answer.status, 400, `${route}: ${answer.raw.slice(0, 300)}`);
        assert.equal(answer.field, field, route);
        assert.match(answer.raw, /more than 5000 property definitions/u);
      }
    }
    assert.equal(upstream.requests.length, 0);
  });

  it("refuses a schema that does not compile, naming the dialect's field, before any upstream call", async (t) => {
    const { upstream, gateway } = await setup(t);
    const broken = { type: "object", properties: { a: { type: "no-such-type" } } };
    for (const route of routes) {
      for (const { extra, field } of [answerSchema(route, broken), toolSchema(route, broken)]) {
        const answer = await post(gateway, route, JSON.stringify(body(route, "broken", extra)));
        assert.equal(answer.status, 400, `${route}: ${answer.raw.slice(0, 300)}`);
        assert.equal(answer.field, field, route);
      }
    }
    assert.equal(upstream.requests.length, 0);
  });

  it("refuses a reflect.item nested deep or oversize for every task family, on every route, before any upstream call", async (t) => {
    const { upstream, gateway } = await setup(t);
    const deep = `${"[".repeat(200)}1${"]".repeat(200)}`;
    for (const route of routes) {
      for (const family of taskFamilies) {
        const nested = JSON.stringify(body(route, "deep", { reflect: { task: family.name, item: { question: "q", extra: "@" } } })).replace('"@"', deep);
        const oversize = JSON.stringify(body(route, "big", { reflect: { task: family.name, item: { question: "q".repeat(100_000) } } }));
        for (const [text, field] of [[nested, "body"], [oversize, "reflect.item"]] as const) {
          const answer = await post(gateway, route, text);
          assert.equal(answer.status, 400, `${route} ${family.name}: ${answer.raw.slice(0, 200)}`);
          assert.equal(answer.field, field, `${route} ${family.name}`);
        }
      }
    }
    assert.equal(upstream.requests.length, 0);
  });

  it("keeps the upstream key echoed into a reflected reply, plainly or as JSON escapes, from every route, streamed or not", async (t) => {
    const escaped = JSON.stringify(completion(`key: ${KEY}`)).replace(KEY, [...KEY].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""));
    const echo: Behaviour = (res, _seen, index) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(index % 2 === 0 ? JSON.stringify(completion(`the key is ${KEY}.`)) : escaped);
    };
    const { upstream, gateway } = await setup(t, echo);
    let asked = 0;
    for (const route of routes) {
      for (const stream of [false, true]) {
        const request = body(route, "echo", { stream, reflect: { max_turns: 1 } });
        for (let form = 0; form < 2; form++) {
          const response = await fetch(`${gateway.url}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
          const raw = await response.text();
          asked += 1;
          assert.equal(response.status, 200, `${route} stream=${stream}: ${raw.slice(0, 200)}`);
          assert.ok(!raw.includes(KEY), `${route} stream=${stream}: the key is in the answer`);
          assert.ok(!raw.replace(/\\u([0-9a-f]{4})/giu, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))).includes(KEY), `${route} stream=${stream}: the key is in the answer, escaped`);
          assert.match(raw, /the key is|key: /u, "the reply itself came back");
        }
      }
    }
    assert.equal(upstream.requests.length, asked);
  });
});
