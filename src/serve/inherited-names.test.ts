import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import { INHERITED_NAMES } from "./field-names.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };
/** Where a test puts the hostile member: its key, replaced in the body's text by the name under test. */
const SLOT = "@@inherited-name@@";
/** The hostile member's value: what a prototype would be replaced with, were the member assigned rather than read. */
const POLLUTION = { polluted: true, reflect: { max_turns: 99 } };

/** A gateway on a Chat Completions upstream that answers `script` and counts what it is sent. */
async function setup(t: TestContext, script: Behaviour = reply("42")): Promise<{ upstream: FakeUpstream; gateway: RunningGateway }> {
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY", retry: noRetry }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
  });
  return { upstream, gateway };
}

/** A valid body of each dialect that reaches every record its parser reads by name. */
const bases = {
  "/v1/chat/completions": () => ({
    model: UPSTREAM_MODEL,
    messages: [
      { role: "user", content: [{ type: "text", text: "Call f." }] },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "done" },
    ],
    response_format: { type: "json_schema", json_schema: { name: "a", schema: { type: "object" } } },
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    tool_choice: { type: "function", function: { name: "f" } },
    stream_options: { include_usage: false },
    reflect: { budget: { calls: 4 }, regex: { pattern: "^4" } },
  }),
  "/v1/responses": () => ({
    model: UPSTREAM_MODEL,
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Call f." }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "done" },
    ],
    text: { format: { type: "json_schema", name: "a", schema: { type: "object" } } },
    tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
    tool_choice: { type: "function", name: "f" },
    stream_options: { include_obfuscation: false },
    metadata: { k: "v" },
    reflect: { budget: { calls: 4 } },
  }),
  "/v1/messages": () => ({
    model: UPSTREAM_MODEL,
    max_tokens: 16,
    system: [{ type: "text", text: "Be brief." }],
    messages: [
      { role: "user", content: [{ type: "text", text: "Call f." }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "done" }] }] },
    ],
    tools: [{ name: "f", input_schema: { type: "object" } }],
    tool_choice: { type: "auto" },
    output_config: { format: { type: "json_schema", schema: { type: "object" } } },
    reflect: { budget: { calls: 4 } },
  }),
} as const;
type Route = keyof typeof bases;

/** The records of each dialect's body, by path, that a hostile member is put into ("" is the body itself). */
const places: Record<Route, readonly string[]> = {
  "/v1/chat/completions": ["", "reflect", "reflect.budget", "reflect.regex", "reflect.memory", "messages[0]", "messages[0].content[0]", "messages[1].tool_calls[0]", "messages[1].tool_calls[0].function", "response_format", "response_format.json_schema", "tools[0]", "tools[0].function", "tool_choice", "tool_choice.function", "stream_options"],
  "/v1/responses": ["", "reflect", "reflect.budget", "reflect.memory", "input[0]", "input[0].content[0]", "input[1]", "input[2]", "text", "text.format", "tools[0]", "tool_choice", "stream_options", "metadata"],
  "/v1/messages": ["", "reflect", "reflect.budget", "reflect.memory", "system[0]", "messages[0]", "messages[0].content[0]", "messages[1].content[0]", "messages[2].content[0]", "messages[2].content[0].content[0]", "tools[0]", "tool_choice", "output_config", "output_config.format"],
};

/** The object at `path` in `body` (`messages[1].tool_calls[0]`), made when it is `reflect.memory`. */
function at(body: Record<string, unknown>, path: string): Record<string, unknown> {
  let node: unknown = body;
  for (const step of path.split(/\.|(?=\[)/u).filter((s) => s !== "")) {
    const index = /^\[(\d+)\]$/u.exec(step);
    const parent = node as Record<string, unknown>;
    if (index === null && step === "memory" && parent.memory === undefined) parent.memory = { key: "app" };
    node = index === null ? parent[step] : (node as unknown[])[Number(index[1])];
  }
  return node as Record<string, unknown>;
}

/** The body's text with a member named `name` (as JSON.parse makes it: an own member) in the record at `path`. */
function withMember(route: Route, path: string, name: string, reflected: boolean): string {
  const body = structuredClone(bases[route]()) as Record<string, unknown>;
  if (!reflected) delete body.reflect;
  at(body, path)[SLOT] = POLLUTION;
  return JSON.stringify(body).replace(JSON.stringify(SLOT), JSON.stringify(name));
}

function post(gateway: RunningGateway, route: Route, body: string): Promise<Response> {
  return fetch(`${gateway.url}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body });
}

/** The field an error body names, in either error shape (OpenAI's `error.param`, Anthropic's `error.param`). */
function namedField(route: Route, body: Record<string, unknown>): unknown {
  const error = body.error as Record<string, unknown> | undefined;
  if (route === "/v1/messages") assert.equal(body.type, "error", "an Anthropic error body");
  return error?.param;
}

const names = [...INHERITED_NAMES];

describe("members named like an ordinary object's own (__proto__, constructor, toString, …)", () => {
  it("lists every name Object.prototype has, __proto__ among them", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupSetter__"]) assert.ok(INHERITED_NAMES.has(name), name);
  });

  it("the bodies the tests put them in are valid without them: each is answered 200 by a called upstream", async (t) => {
    const { upstream, gateway } = await setup(t);
    for (const route of Object.keys(bases) as Route[]) {
      const response = await post(gateway, route, JSON.stringify(bases[route]()));
      assert.equal(response.status, 200, `${route}: ${await response.text()}`);
    }
    assert.ok(upstream.requests.length >= 3);
  });

  for (const route of Object.keys(bases) as Route[]) {
    it(`${route}: a reflected body with one at the top or nested is answered 400 naming it, and no upstream is called`, async (t) => {
      const { upstream, gateway } = await setup(t);
      for (const path of places[route]) {
        for (const name of names) {
          const response = await post(gateway, route, withMember(route, path, name, true));
          const body = (await response.json()) as Record<string, unknown>;
          const field = path === "" ? name : `${path}.${name}`;
          assert.equal(response.status, 400, `${field}: ${JSON.stringify(body)}`);
          assert.equal(namedField(route, body), field);
          assert.match(String((body.error as { message?: unknown }).message), /^[^\n]+$/u);
          assert.doesNotMatch(JSON.stringify(body), /native code|is not a function|\[object Object\]/u, field);
        }
      }
      assert.equal(upstream.requests.length, 0);
    });
  }

  for (const route of ["/v1/responses", "/v1/messages"] as const) {
    it(`${route}: a body translated for a Chat Completions upstream (no reflect) is screened the same, before any call`, async (t) => {
      const { upstream, gateway } = await setup(t);
      for (const path of places[route].filter((p) => !p.startsWith("reflect"))) {
        for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
          const response = await post(gateway, route, withMember(route, path, name, false));
          const body = (await response.json()) as Record<string, unknown>;
          assert.equal(response.status, 400, `${path}.${name}: ${JSON.stringify(body)}`);
          assert.equal(namedField(route, body), path === "" ? name : `${path}.${name}`);
        }
      }
      assert.equal(upstream.requests.length, 0);
    });
  }

  it("in free-form data they stay plain: a schema property named constructor or __proto__ is checked like any other", async (t) => {
    const { upstream, gateway } = await setup(t, reply((_seen, index) => (index === 0 ? '{"constructor": 1}' : '{"constructor": "c", "__proto__": "p"}')));
    const schema = '{"type":"object","properties":{"constructor":{"type":"string"},"__proto__":{"type":"string"}},"required":["constructor","__proto__"]}';
    const body = `{"model":"${UPSTREAM_MODEL}","messages":[{"role":"user","content":"Fill it in."}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":${schema}}},"reflect":{"max_turns":2}}`;
    const response = await post(gateway, "/v1/chat/completions", body);
    const answer = (await response.json()) as { choices: Array<{ message: { content: string } }>; reflect: { passed: boolean; attempts: number } };
    assert.equal(response.status, 200);
    // The first draft's `constructor` is a number: the schema check failed it, so a reflection and a second draft ran.
    assert.equal(answer.reflect.attempts, 2);
    assert.equal(answer.reflect.passed, true);
    assert.equal(answer.choices[0]?.message.content, '{"constructor": "c", "__proto__": "p"}');
    assert.equal(upstream.requests.length, 3);
  });

  it("in free-form data they stay plain: Responses metadata keys named so are echoed back as they were sent", async (t) => {
    const { gateway } = await setup(t);
    const body = `{"model":"${UPSTREAM_MODEL}","input":"Say 42.","metadata":{"constructor":"a","__proto__":"b","toString":"c"},"reflect":{}}`;
    const response = await post(gateway, "/v1/responses", body);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(text, /"metadata":\{"constructor":"a","__proto__":"b","toString":"c"\}/u);
  });
});
