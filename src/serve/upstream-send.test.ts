/**
 * A client's reasoning effort and end user on a translated call: each door in front of a real local Chat Completions
 * upstream that logs the bodies it gets. Off by default (an OpenAI-compatible server may refuse a field it does not
 * know): the upstream sees neither. With `send` (`--upstream-send`, a config model's `send:`): `reasoning_effort` and
 * `user` on the model's own calls, never on a reflection's. A bad user id or effort is refused naming its field.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { callOptions } from "../models/ai-sdk-model.js";
import type { GatewayOptions } from "./gateway-options.js";
import { sending } from "./gateway-models.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type FakeUpstream } from "./serve-harness.js";

const KEY = "gateway-key-send-0123456789";
const noRetry = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

async function translating(t: TestContext, extra: Partial<GatewayOptions> = {}, answer = "Paris."): Promise<{ upstream: FakeUpstream; url: string }> {
  const upstream = await startUpstream(t, reply(answer));
  const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }), apiKey: KEY, ...extra });
  return { upstream, url: gateway.url };
}

async function post(url: string, route: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

/** The same ask in each door's words: a high effort and an end user. */
const doors = {
  chat: { route: "/v1/chat/completions", body: { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Capital of France?" }], reasoning_effort: "high", user: "end-user-7" } },
  responses: { route: "/v1/responses", body: { model: UPSTREAM_MODEL, input: "Capital of France?", reasoning: { effort: "high" }, user: "end-user-7" } },
  messages: { route: "/v1/messages", body: { model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "Capital of France?" }], thinking: { type: "enabled", budget_tokens: 20000 }, metadata: { user_id: "end-user-7" } } },
} as const;

describe("reasoning effort and end user on a translated call", () => {
  for (const [name, door] of Object.entries(doors)) {
    it(`${name}: not sent by default`, async (t) => {
      const { upstream, url } = await translating(t);
      const answered = await post(url, door.route, door.body);
      assert.equal(answered.status, 200, answered.text);
      const sent = upstream.requests[0]?.body ?? {};
      assert.equal("reasoning_effort" in sent, false);
      assert.equal("user" in sent, false);
    });

    it(`${name}: sent as reasoning_effort and user where the model takes them`, async (t) => {
      const { upstream, url } = await translating(t, { upstreamSend: ["reasoning", "user"] });
      const answered = await post(url, door.route, door.body);
      assert.equal(answered.status, 200, answered.text);
      const sent = upstream.requests[0]?.body ?? {};
      assert.equal(sent.reasoning_effort, "high");
      assert.equal(sent.user, "end-user-7");
    });
  }

  it("only the field named: send [user] leaves the effort out", async (t) => {
    const { upstream, url } = await translating(t, { upstreamSend: ["user"] });
    assert.equal((await post(url, doors.responses.route, doors.responses.body)).status, 200);
    const sent = upstream.requests[0]?.body ?? {};
    assert.deepEqual(["reasoning_effort" in sent, sent.user], [false, "end-user-7"]);
  });

  it("a reflected request sends them on its attempts only, never on its reflection", async (t) => {
    const upstream = await startUpstream(t, [reply("Lyon."), reply("I named the wrong city."), reply("Paris.")]);
    const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }), apiKey: KEY, upstreamSend: ["reasoning", "user"] });
    const answered = await post(gateway.url, "/v1/chat/completions", { ...doors.chat.body, reflect: { max_turns: 2, regex: "Paris" } });
    assert.equal(answered.status, 200, answered.text);
    assert.equal(upstream.requests.length, 3);
    const efforts = upstream.requests.map((r) => [r.body.reasoning_effort, r.body.user]);
    assert.deepEqual(efforts, [["high", "end-user-7"], [undefined, undefined], ["high", "end-user-7"]]);
  });

  it("hostile: a user id with CR/LF or over the bound, an effort off the scale: refused naming the field, the upstream never called", async (t) => {
    const { upstream, url } = await translating(t, { upstreamSend: ["reasoning", "user"] });
    const long = await post(url, doors.responses.route, { ...doors.responses.body, user: "u".repeat(100_000) });
    assert.equal(long.status, 400);
    assert.match(long.text, /user/);
    const broken = await post(url, doors.messages.route, { ...doors.messages.body, metadata: { user_id: "a\r\nx-injected: 1" } });
    assert.equal(broken.status, 400);
    assert.match(broken.text, /metadata\.user_id/);
    const badEffort = await post(url, doors.chat.route, { ...doors.chat.body, reasoning_effort: "maximum" });
    assert.equal(badEffort.status, 400);
    assert.match(badEffort.text, /reasoning_effort/);
    assert.equal(upstream.requests.length, 0, "nothing refused reached the upstream");
  });
});

describe("sending: a model's upstream keeps to its send list", () => {
  it("strips what is not named, keeps the rest of the request, and returns the model itself when both are named", async () => {
    const seen: unknown[] = [];
    const model = { modelId: "m", doGenerate: async (r: unknown) => (seen.push(r), { text: "", finishReason: "stop" as const, usage: { promptTokens: 0, completionTokens: 0 } }) };
    const request = { messages: [{ role: "user" as const, content: "hi" }], maxTokens: 9, reasoningEffort: "low" as const, user: "u1" };
    await sending(model as never, []).doGenerate(request);
    await sending(model as never, ["reasoning"]).doGenerate(request);
    assert.deepEqual(seen, [{ messages: request.messages, maxTokens: 9 }, { messages: request.messages, maxTokens: 9, reasoningEffort: "low" }]);
    assert.equal(sending(model as never, ["reasoning", "user"]), model);
    assert.equal(sending(model as never, []).modelId, "m");
  });

  it("AI SDK providers: OpenAI's reasoningEffort and user, Anthropic's thinking only where max tokens leave room for its budget and no tool is forced", () => {
    const base = { messages: [{ role: "user" as const, content: "hi" }], reasoningEffort: "medium" as const, user: "u1" };
    assert.deepEqual(callOptions({ ...base, maxTokens: 8192 }).providerOptions, { openai: { reasoningEffort: "medium", user: "u1" }, anthropic: { thinking: { type: "enabled", budgetTokens: 4096 } } });
    assert.deepEqual(callOptions({ ...base, maxTokens: 1000 }).providerOptions, { openai: { reasoningEffort: "medium", user: "u1" } });
    assert.equal(callOptions({ messages: base.messages }).providerOptions, undefined);
    const forced = callOptions({ ...base, maxTokens: 8192, tools: [{ name: "get" }], toolChoice: { type: "tool", name: "get" } });
    assert.equal(forced.providerOptions?.anthropic, undefined, "no thinking beside a forced tool choice");
  });
});
