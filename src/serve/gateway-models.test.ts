/**
 * Several models behind one gateway: a real gateway with two scripted upstreams (one speaking Chat Completions only,
 * one Messages only) and two tenants. A request for each model on each door reaches that model's upstream, relayed or
 * translated as it speaks; an unknown model is a 404 in the door's shape; `/v1/models` lists them; fallbacks on a
 * refused connection and a 503, never after the first streamed byte; neither upstream's key reaches a client, through
 * either model; a hostile `model` is never echoed whole; a policy attached to a model applies to that model only.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { openProviderModel } from "../models/provider.js";
import { message, requestKey, startAnthropicStandin, type AnthropicStandin } from "./anthropic-standin-harness.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import type { GatewayModel } from "./gateway-options.js";
import { reply, startTestGateway, startUpstream, status, streamReply, UPSTREAM_MODEL, type FakeUpstream } from "./serve-harness.js";
import type { GatewayOptions, RunningGateway } from "./server.js";
import { parseGatewayKeys } from "./tenants.js";
import { keysOfEnv } from "./gateway-models.js";

const TENANT_A = "ka-models-3b8e1f0c";
const TENANT_B = "kb-models-9d2a6c4e";
const CHAT_KEY = "sk-chat-upstream-models-71c0e5a2d9";
const CHAT_KEY_ENV = "REFLECT_TEST_MODELS_CHAT_KEY";
const MESSAGES_KEY = "sk-ant-messages-upstream-models-4f6b2e8a1c";
const MESSAGES_KEY_ENV = "REFLECT_TEST_MODELS_MESSAGES_KEY";
process.env[CHAT_KEY_ENV] = CHAT_KEY;
process.env[MESSAGES_KEY_ENV] = MESSAGES_KEY;
const retry = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

interface Setup {
  chat: FakeUpstream;
  messages: AnthropicStandin;
  gateway: RunningGateway;
}

/** A port nothing listens on: one taken, then closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A Chat Completions model on `baseUrl`, under `name`. */
function chatModel(name: string, baseUrl: string, fallbacks: string[] = []): GatewayModel {
  return { name, upstream: createHttpModel({ baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: CHAT_KEY_ENV, retry }), upstreamHttp: { baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: CHAT_KEY_ENV }, fallbacks };
}

async function setup(t: TestContext, texts: { chat?: string; messages?: string } = {}, extra: Partial<GatewayOptions> = {}): Promise<Setup> {
  const chat = await startUpstream(t, reply(texts.chat ?? "alpha says hi"));
  const messages = await startAnthropicStandin(t, message(texts.messages ?? "beta says hi"), { apiKey: MESSAGES_KEY });
  const flaky = await startUpstream(t, status(503, { error: { message: "overloaded" } }));
  const cut = await startUpstream(t, streamReply(["first ", "second"], { cutAfter: 1 }));
  const gone = `http://127.0.0.1:${await closedPort()}/v1`;
  const beta = await openProviderModel({ provider: "anthropic", model: "claude-b", apiKeyEnv: MESSAGES_KEY_ENV, baseURL: messages.baseUrl, retry });
  const models: GatewayModel[] = [
    chatModel("alpha", chat.baseUrl),
    { name: "beta", upstream: beta, upstreamHttp: { baseUrl: messages.baseUrl, model: "claude-b", apiKeyEnv: MESSAGES_KEY_ENV, speaks: ["messages"] } },
    // A cycle: each model is tried once.
    chatModel("gone", gone, ["flaky", "alpha"]),
    chatModel("flaky", flaky.baseUrl, ["gone", "alpha"]),
    chatModel("cut", cut.baseUrl, ["alpha"]),
  ];
  const gateway = await startTestGateway(t, { upstream: models[0]!.upstream, models, tenants: parseGatewayKeys(`team-a:${TENANT_A},team-b:${TENANT_B}`), ...extra });
  return { chat, messages, gateway };
}

type Door = "chat" | "responses" | "messages";
const doors: readonly Door[] = ["chat", "responses", "messages"];

/** One request to `door` for `model` (none: no `model` field), with a header only a raw relay forwards. */
function ask(gateway: RunningGateway, door: Door, model: string | undefined, options: { key?: string; stream?: boolean; reflect?: unknown } = {}): Promise<Response> {
  const named = model === undefined ? {} : { model };
  const common = { ...named, ...(options.stream === true ? { stream: true } : {}), ...(options.reflect === undefined ? {} : { reflect: options.reflect }) };
  const body = door === "chat" ? { ...common, messages: [{ role: "user", content: "hello" }] } : door === "responses" ? { ...common, input: "hello" } : { ...common, max_tokens: 64, messages: [{ role: "user", content: "hello" }] };
  const path = door === "chat" ? "/v1/chat/completions" : door === "responses" ? "/v1/responses" : "/v1/messages";
  return fetch(`${gateway.url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${options.key ?? TENANT_A}`, "anthropic-version": "2023-06-01", "x-probe": "relayed" }, body: JSON.stringify(body) });
}

describe("several models behind one gateway", () => {
  it("a request for each model on each door reaches that model's upstream, relayed or translated as it speaks", async (t) => {
    const { chat, messages, gateway } = await setup(t);
    for (const door of doors) {
      for (const key of [TENANT_A, TENANT_B]) {
        const chatBefore = chat.requests.length;
        const alpha = await ask(gateway, door, "alpha", { key });
        const alphaText = await alpha.text();
        assert.equal(alpha.status, 200, `${door} alpha: ${alphaText}`);
        assert.equal(alpha.headers.get("x-reflect-model"), "alpha");
        assert.match(alphaText, /alpha says hi/u);
        assert.equal(chat.requests.length, chatBefore + 1);
        const seenByChat = chat.requests.at(-1)!;
        assert.equal(seenByChat.url, "/v1/chat/completions");
        assert.equal(seenByChat.body.model, UPSTREAM_MODEL, "the upstream gets its own model id");
        assert.equal(seenByChat.headers["x-probe"] === "relayed", door === "chat", `${door}: relayed raw only on the door it speaks`);
        assert.equal(seenByChat.headers.authorization, `Bearer ${CHAT_KEY}`);
        const messagesBefore = messages.messages.length;
        const beta = await ask(gateway, door, "beta", { key });
        const betaText = await beta.text();
        assert.equal(beta.status, 200, `${door} beta: ${betaText}`);
        assert.equal(beta.headers.get("x-reflect-model"), "beta");
        assert.match(betaText, /beta says hi/u);
        assert.equal(messages.messages.length, messagesBefore + 1);
        const seenByMessages = messages.messages.at(-1)!;
        assert.equal(seenByMessages.body.model, "claude-b");
        assert.equal(seenByMessages.headers["x-probe"] === "relayed", door === "messages", `${door}: relayed raw only on the door it speaks`);
        assert.equal(requestKey(seenByMessages.headers), MESSAGES_KEY);
      }
    }
    // A translated answer names the model as the client did.
    const translated = (await (await ask(gateway, "chat", "beta")).json()) as { model: string };
    assert.equal(translated.model, "beta");
    // No model: the default (the first).
    const plain = await ask(gateway, "chat", undefined);
    assert.equal(plain.headers.get("x-reflect-model"), "alpha");
    assert.match(await plain.text(), /alpha says hi/u);
  });

  it("an unknown model is a 404 in the door's shape, naming some of the known ones", async (t) => {
    const { chat, messages, gateway } = await setup(t);
    for (const door of doors) {
      const response = await ask(gateway, door, "no-such-model");
      assert.equal(response.status, 404);
      const body = (await response.json()) as { type?: string; error: { type: string; code?: string; param?: string; message: string } };
      if (door === "messages") {
        assert.equal(body.type, "error");
        assert.equal(body.error.type, "not_found_error");
      } else {
        assert.deepEqual([body.error.type, body.error.code, body.error.param], ["invalid_request_error", "model_not_found", "model"]);
      }
      assert.match(body.error.message, /no-such-model/u);
      assert.match(body.error.message, /alpha, beta/u);
    }
    assert.equal(chat.requests.length + messages.messages.length, 0, "no upstream is paid for");
  });

  it("a hostile model is never echoed whole: 10 KB, control characters, a key", async (t) => {
    const { gateway } = await setup(t);
    const long = `m${"x".repeat(10 * 1024)}`;
    for (const door of doors) {
      for (const hostile of [long, "evil\u0000\u001b[31m\r\nSet-Cookie: a=b", CHAT_KEY, MESSAGES_KEY]) {
        const response = await ask(gateway, door, hostile);
        const text = await response.text();
        assert.equal(response.status, 404);
        assert.ok(text.length < 1024, `${door}: a short answer (${text.length} bytes)`);
        assert.ok(!text.includes("x".repeat(65)), "at most 64 characters of what was sent");
        assert.ok(!text.includes(CHAT_KEY) && !text.includes(MESSAGES_KEY), "no upstream key");
        const parsed = JSON.parse(text) as { error: { message: string } };
        assert.ok(!/[\u0000\u001b\r\n]/u.test(parsed.error.message), "control characters quoted as escapes");
        assert.equal(response.headers.get("set-cookie"), null);
      }
    }
  });

  it("GET /v1/models lists each model and the judges", async (t) => {
    const { gateway } = await setup(t, {}, { judges: new Map([["judge-spec", createHttpModel({ baseUrl: "http://127.0.0.1:9/v1", model: "j", apiKeyEnv: CHAT_KEY_ENV, retry })]]) });
    const response = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${TENANT_B}` } });
    const list = (await response.json()) as { data: Array<{ id: string; owned_by: string }> };
    assert.deepEqual(
      list.data.map((m) => [m.id, m.owned_by]),
      [["alpha", "reflectkit-upstream"], ["beta", "reflectkit-upstream"], ["gone", "reflectkit-upstream"], ["flaky", "reflectkit-upstream"], ["cut", "reflectkit-upstream"], ["judge-spec", "reflectkit-judge"]],
    );
  });

  it("falls back on a refused connection and on a 503, relayed and translated, JSON and streamed; each model once", async (t) => {
    const { chat, gateway } = await setup(t);
    for (const door of doors) {
      for (const model of ["gone", "flaky"]) {
        for (const stream of [false, true]) {
          const before = chat.requests.length;
          const response = await ask(gateway, door, model, { stream });
          const text = await response.text();
          assert.equal(response.status, 200, `${door} ${model} stream=${stream}: ${text}`);
          assert.equal(response.headers.get("x-reflect-model"), "alpha");
          assert.equal(chat.requests.length, before + 1, "alpha answered once");
          if (!stream) assert.match(text, /alpha says hi/u);
        }
      }
    }
  });

  it("does not fall back once the first streamed byte went out", async (t) => {
    const { chat, gateway } = await setup(t);
    const response = await ask(gateway, "chat", "cut", { stream: true });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-reflect-model"), "cut");
    await assert.rejects(response.text(), "the client sees the stream cut, not a complete reply");
    assert.equal(chat.requests.length, 0, "the fallback was not tried");
  });

  it("neither upstream's key reaches a client, through its own model or the other's", async (t) => {
    const echo = `keys: ${CHAT_KEY} and ${MESSAGES_KEY}`;
    const { gateway } = await setup(t, { chat: echo, messages: echo });
    for (const door of doors) {
      for (const model of ["alpha", "beta"]) {
        for (const stream of [false, true]) {
          const response = await ask(gateway, door, model, { stream });
          const text = await response.text();
          assert.equal(response.status, 200, `${door} ${model}: ${text}`);
          assert.ok(!text.includes(CHAT_KEY), `${door} ${model} stream=${stream}: the chat upstream's key`);
          assert.ok(!text.includes(MESSAGES_KEY), `${door} ${model} stream=${stream}: the messages upstream's key`);
          assert.match(text, /redacted/u);
        }
      }
    }
  });

  it("a policy attached to a model applies to that model only", async (t) => {
    const config: GatewayConfig = { source: "gateway.yaml", models: [], policies: [{ name: "digits", reflect: { regex: "^\\d+$", max_turns: 2 }, allowOptOut: false }], attachments: [{ policy: "digits", model: "beta" }] };
    const { chat, messages, gateway } = await setup(t, { chat: "forty-two", messages: "42" }, { config });
    for (const key of [TENANT_A, TENANT_B]) {
      const beta = await ask(gateway, "chat", "beta", { key });
      const body = (await beta.json()) as { reflect?: { passed: boolean } };
      assert.equal(beta.headers.get("x-reflect-policy"), "digits");
      assert.equal(body.reflect?.passed, true);
      const alpha = await ask(gateway, "chat", "alpha", { key });
      const plain = (await alpha.json()) as { reflect?: unknown; choices: Array<{ message: { content: string } }> };
      assert.equal(alpha.headers.get("x-reflect-policy"), null);
      assert.equal(plain.reflect, undefined);
      assert.equal(plain.choices[0]?.message.content, "forty-two");
    }
    assert.equal(chat.requests.length, 2, "alpha's requests passed through once each");
    assert.equal(messages.messages.length, 2, "beta's requests reflected on beta's upstream, once each (the first draft passed)");
  });
});

describe("keysOfEnv", () => {
  it("reads the keys anew on every call, the same array while none changed, the empty and unset ones left out", (t) => {
    const [a, b] = ["REFLECT_TEST_KEYS_OF_ENV_A", "REFLECT_TEST_KEYS_OF_ENV_B"];
    t.after(() => {
      delete process.env[a];
      delete process.env[b];
    });
    const keys = keysOfEnv([a, b]);
    assert.deepEqual(keys(), []);
    process.env[a] = "sk-one";
    process.env[b] = "";
    const first = keys();
    assert.deepEqual(first, ["sk-one"]);
    assert.equal(keys(), first);
    process.env[b] = "sk-two";
    assert.deepEqual(keys(), ["sk-one", "sk-two"]);
    process.env[a] = "sk-rotated";
    assert.deepEqual(keys(), ["sk-rotated", "sk-two"]);
    delete process.env[a];
    assert.deepEqual(keys(), ["sk-two"]);
  });
});
