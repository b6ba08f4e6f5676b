/**
 * The operator's policies on a real gateway with two tenants and a scripted upstream: a tenant's plain request runs
 * under its policy (reflected, named in the header, the record and /metrics) while another's is relayed raw; a request
 * may narrow its policy, never widen it; opt-out where allowed; memory keys filled per tenant keep tenants' lessons
 * apart; a hostile route header is refused; the upstream's key never reaches a client; every door; a reload leaves a
 * request in flight on the config it arrived under.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import type { Episode } from "../loops/types.js";
import { RequestMemory } from "../loops/request-memory.js";
import { openSqliteRequestLessons } from "../memory/sqlite-request-lessons.js";
import { createHttpModel } from "../models/http.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import { createGatewayMetrics } from "./metrics.js";
import type { RequestOutcome } from "./observer.js";
import { DIGITS_LESSON, digitsLessonScript, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { GatewayOptions, RunningGateway } from "./server.js";
import { parseGatewayKeys } from "./tenants.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

const KEY_A = "ka-policy-7f3e9b1c";
const KEY_B = "kb-policy-41d8c6e2";
const ADMIN_KEY = "admin-policy-c3f1a8d6";
const UPSTREAM_KEY = "sk-upstream-policy-5e1b9f0a7c3d";
const UPSTREAM_KEY_ENV = "REFLECT_TEST_POLICY_UPSTREAM_KEY";
process.env[UPSTREAM_KEY_ENV] = UPSTREAM_KEY;

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-gateway-policy-"));
after(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

/** team-a: `digits` (reflected, no opt-out); route `billing`: `digits` for anyone; route `opt`: `optional`. */
const CONFIG: GatewayConfig = {
  source: "gateway.yaml",
  models: [],
  policies: [
    { name: "digits", reflect: { regex: "^\\d+$", max_turns: 2, budget: { tokens: 5000 }, memory: { key: "lessons.{tenant}.{route}" } }, allowOptOut: false },
    { name: "optional", reflect: { regex: "^\\d+$", max_turns: 2 }, allowOptOut: true },
  ],
  attachments: [
    { policy: "digits", tenant: "team-a" },
    { policy: "digits", route: "billing" },
    { policy: "optional", route: "opt" },
  ],
};

interface Setup {
  upstream: FakeUpstream;
  gateway: RunningGateway;
  outcomes: RequestOutcome[];
  recorded: Episode[];
  memory: RequestMemory;
  metrics: () => Promise<string>;
}

async function setup(t: TestContext, script: Behaviour | Behaviour[] = reply(digitsLessonScript), extra: Partial<GatewayOptions> = {}): Promise<Setup> {
  const upstream = await startUpstream(t, script);
  const memory = new RequestMemory({ store: openSqliteRequestLessons(path.join(root, `case-${++files}.sqlite`)), recallTimeoutMs: 1000 });
  t.after(() => memory.close());
  const outcomes: RequestOutcome[] = [];
  const recorded: Episode[] = [];
  let running: RunningGateway | undefined;
  const config = extra.config ?? CONFIG;
  let names: readonly string[] = config.policies.map((p) => p.name);
  const metrics = createGatewayMetrics({ processMetrics: false, policies: () => names });
  running = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV },
    tenants: parseGatewayKeys(`team-a:${KEY_A},team-b:${KEY_B}`),
    adminKey: ADMIN_KEY,
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    memory,
    observer: {
      request: (o) => {
        outcomes.push(o);
        metrics.request(o);
      },
    },
    ...extra,
    config,
  });
  names = config.policies.map((p) => p.name);
  void running;
  const text = async (): Promise<string> => (await metrics.text()).body;
  return { upstream, gateway: running, outcomes, recorded, memory, metrics: text };
}

const QUESTION = "What is 6 * 7?";
const chatBody = (extra: Record<string, unknown> = {}): string => JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "system", content: "You answer billing questions." }, { role: "user", content: QUESTION }], max_tokens: 16, ...extra });

function post(url: string, key: string, body: string, headers: Record<string, string> = {}, route = "/v1/chat/completions"): Promise<Response> {
  return fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers }, body });
}

async function errorOf(response: Response): Promise<{ message: string; param: string | null; code?: string }> {
  const body = (await response.json()) as { error: { message: string; param: string | null; code?: string } };
  return body.error;
}

const contentOf = async (response: Response): Promise<string> => ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? "";

describe("gateway policies", { skip: sqliteUnavailable() }, () => {
  it("reflects a tenant's plain request under its policy, and relays another tenant's raw", async (t) => {
    const { upstream, gateway, outcomes, recorded, metrics } = await setup(t);
    const a = await post(gateway.url, KEY_A, chatBody());
    assert.equal(a.status, 200);
    assert.equal(a.headers.get("x-reflect-policy"), "digits");
    assert.equal(await contentOf(a), "42");
    assert.equal(upstream.requests.length, 3, "draft, reflection, retry: the regex failed the first draft");
    assert.equal(recorded[0]?.policy, "digits");
    assert.equal(recorded[0]?.tenant, "team-a");
    const sent = chatBody();
    const b = await post(gateway.url, KEY_B, sent);
    assert.equal(b.status, 200);
    assert.equal(b.headers.get("x-reflect-policy"), null);
    assert.equal(await contentOf(b), "forty-two");
    assert.equal(upstream.requests.length, 4, "one call: passed through");
    assert.equal(upstream.requests[3]?.raw.toString("utf8"), sent, "relayed as sent");
    assert.equal(recorded.length, 1);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.policy]), [["reflected", "digits"], ["pass-through", "none"]]);
    const text = await metrics();
    assert.match(text, /reflect_gateway_policy_requests_total\{policy="digits",kind="reflected",status="2xx"\} 1/u);
    assert.match(text, /reflect_gateway_policy_requests_total\{policy="none",kind="pass-through",status="2xx"\} 1/u);
  });

  it("refuses a request that would widen its policy, naming the field and the policy, before any upstream call", async (t) => {
    const { upstream, gateway } = await setup(t);
    for (const [reflect, field] of [
      [{ max_turns: 5 }, "reflect.max_turns"],
      [{ budget: { tokens: 6000 } }, "reflect.budget.tokens"],
      [{ judge: "another-judge" }, "reflect.judge"],
      [{ memory: { key: "someone-elses" } }, "reflect.memory"],
    ] as const) {
      const refused = await post(gateway.url, KEY_A, chatBody({ reflect }));
      assert.equal(refused.status, 400, JSON.stringify(reflect));
      assert.equal(refused.headers.get("x-reflect-policy"), "digits");
      const error = await errorOf(refused);
      assert.equal(error.param, field);
      assert.match(error.message, /policy "digits"/u);
    }
    const narrowed = await post(gateway.url, KEY_A, chatBody({ reflect: { max_turns: 1 } }));
    assert.equal(narrowed.status, 200);
    assert.equal(await contentOf(narrowed), "forty-two", "one turn: the failed draft is returned");
    assert.equal(upstream.requests.length, 1);
  });

  it("lets a request opt out only where its policy allows it, relaying it without the field", async (t) => {
    const { upstream, gateway } = await setup(t);
    const refused = await post(gateway.url, KEY_A, chatBody({ reflect: false }));
    assert.equal(refused.status, 400);
    const error = await errorOf(refused);
    assert.equal(error.param, "reflect");
    assert.match(error.message, /"digits" does not allow opting out/u);
    const opted = await post(gateway.url, KEY_B, chatBody({ reflect: false }), { "x-reflect-route": "opt" });
    assert.equal(opted.status, 200);
    assert.equal(opted.headers.get("x-reflect-policy"), "optional");
    assert.equal(await contentOf(opted), "forty-two");
    assert.equal(upstream.requests.length, 1);
    assert.equal("reflect" in (upstream.requests[0]?.body ?? {}), false, "the upstream never sees the opt-out");
    const underIt = await post(gateway.url, KEY_B, chatBody(), { "x-reflect-route": "opt" });
    assert.equal(await contentOf(underIt), "42", "the same route without an opt-out runs the policy");
    assert.equal(upstream.requests.length, 4);
  });

  it("keeps tenants' lessons apart on the same route: the memory key is filled with each tenant", async (t) => {
    const { upstream, gateway, recorded, memory } = await setup(t);
    assert.equal(await contentOf(await post(gateway.url, KEY_A, chatBody(), { "x-reflect-route": "billing" })), "42");
    await memory.settled();
    assert.equal(recorded[0]?.memory?.key, "lessons.team-a.billing");
    const shown = (index: number): string => JSON.stringify(upstream.requests[index]?.body.messages);
    await post(gateway.url, KEY_B, chatBody(), { "x-reflect-route": "billing" });
    assert.equal(recorded[1]?.memory?.key, "lessons.team-b.billing");
    assert.ok(!shown(3).includes(DIGITS_LESSON), "team-b is not shown team-a's lesson");
    await memory.settled();
    const before = upstream.requests.length;
    await post(gateway.url, KEY_A, chatBody(), { "x-reflect-route": "billing" });
    assert.ok(shown(before).includes(DIGITS_LESSON), "team-a is shown its own lesson");
  });

  it("names the policy on an opted-out stream translated event by event (a Messages stream onto a Chat upstream)", async (t) => {
    const { upstream, gateway } = await setup(t);
    const body = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: QUESTION }], max_tokens: 16, stream: true, reflect: false });
    const streamed = await post(gateway.url, KEY_B, body, { "x-reflect-route": "opt", "anthropic-version": "2023-06-01" }, "/v1/messages");
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get("content-type") ?? "", /text\/event-stream/u);
    assert.equal(streamed.headers.get("x-reflect-policy"), "optional");
    assert.match(await streamed.text(), /event: message_stop/u);
    assert.equal(upstream.requests.length, 1, "one upstream call: the opted-out request is not reflected");
    assert.equal(upstream.requests[0]?.body.stream, true, "the translation streams upstream");
    assert.equal("reflect" in (upstream.requests[0]?.body ?? {}), false);
  });

  it("refuses a hostile x-reflect-route, naming the header, before any upstream call", async (t) => {
    const { upstream, gateway } = await setup(t);
    for (const route of ["{tenant}", "../../etc/passwd", "a".repeat(10 * 1024), "a\tb", "billing billing"]) {
      const refused = await post(gateway.url, KEY_A, chatBody(), { "x-reflect-route": route });
      assert.equal(refused.status, 400, route.slice(0, 20));
      assert.equal((await errorOf(refused)).param, "x-reflect-route");
    }
    // Bytes no client library sends: a control character and a byte past ASCII.
    for (const bytes of [Buffer.from("a\u0001b", "latin1"), Buffer.from("caf\u00e9", "latin1")]) {
      const status = await rawPost(gateway.url, bytes, chatBody());
      assert.equal(status, 400);
    }
    assert.equal(upstream.requests.length, 0);
  });

  it("applies the policy to a large body, read by a worker first: reflected, or relayed without its opt-out", async (t) => {
    // A prompt this long fits neither the `digits` budget nor the gateway's default cap: the policy without one, a larger cap.
    const unbudgeted: GatewayConfig = { ...CONFIG, policies: CONFIG.policies.map((p) => (p.name === "digits" ? { ...p, reflect: { ...p.reflect, budget: undefined } } : p)) };
    const { upstream, gateway, recorded } = await setup(t, reply(digitsLessonScript), { config: unbudgeted, limits: { budget: { tokens: 500_000, calls: 16, seconds: 240 } } });
    const padding = "Billing notes. ".repeat(6000);
    const large = (extra: Record<string, unknown>): string => JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "system", content: padding }, { role: "user", content: QUESTION }], max_tokens: 16, ...extra });
    assert.ok(large({}).length > 64 * 1024);
    const reflected = await post(gateway.url, KEY_A, large({}));
    if (reflected.status !== 200) assert.fail(`${reflected.status} ${await reflected.text()}`);
    assert.equal(reflected.headers.get("x-reflect-policy"), "digits");
    assert.equal(await contentOf(reflected), "42");
    assert.equal(recorded[0]?.policy, "digits");
    const widened = await post(gateway.url, KEY_A, large({ reflect: { max_turns: 3 } }));
    assert.equal(widened.status, 400);
    assert.equal((await errorOf(widened)).param, "reflect.max_turns");
    const before = upstream.requests.length;
    const opted = await post(gateway.url, KEY_B, large({ reflect: false }), { "x-reflect-route": "opt" });
    assert.equal(opted.headers.get("x-reflect-policy"), "optional");
    assert.equal(await contentOf(opted), "forty-two");
    assert.equal(upstream.requests.length, before + 1);
    assert.equal("reflect" in (upstream.requests[before]?.body ?? {}), false);
  });

  it("never lets the upstream's key reach a client under a policy, reflected or opted out", async (t) => {
    const echo: Behaviour = (res, seen) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: UPSTREAM_MODEL, choices: [{ index: 0, message: { role: "assistant", content: `key ${String(seen.headers.authorization)}` }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    };
    const { upstream, gateway } = await setup(t, echo);
    const reflected = await post(gateway.url, KEY_A, chatBody());
    const opted = await post(gateway.url, KEY_B, chatBody({ reflect: false }), { "x-reflect-route": "opt" });
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${UPSTREAM_KEY}`, "the upstream did get the key");
    for (const response of [reflected, opted]) {
      assert.equal(response.status, 200);
      const text = await response.text();
      assert.ok(!text.includes(UPSTREAM_KEY), text);
      assert.ok(!JSON.stringify([...response.headers]).includes(UPSTREAM_KEY));
    }
  });

  it("applies the policy on every door: a plain Responses or Messages request is reflected too", async (t) => {
    const { upstream, gateway, recorded } = await setup(t);
    const responses = await post(gateway.url, KEY_A, JSON.stringify({ model: UPSTREAM_MODEL, instructions: "You answer billing questions.", input: QUESTION, max_output_tokens: 16 }), {}, "/v1/responses");
    assert.equal(responses.status, 200);
    assert.equal(responses.headers.get("x-reflect-policy"), "digits");
    assert.match(JSON.stringify(await responses.json()), /"text":"42"/u);
    assert.equal(upstream.requests.length, 3);
    const messages = await post(gateway.url, KEY_A, JSON.stringify({ model: UPSTREAM_MODEL, system: "You answer billing questions.", messages: [{ role: "user", content: QUESTION }], max_tokens: 16 }), { "anthropic-version": "2023-06-01" }, "/v1/messages");
    assert.equal(messages.status, 200);
    assert.equal(messages.headers.get("x-reflect-policy"), "digits");
    assert.match(JSON.stringify(await messages.json()), /"text":"42"/u);
    assert.equal(upstream.requests.length, 6);
    assert.deepEqual(recorded.map((e) => e.policy), ["digits", "digits"]);
    // The system prompt is the same in both: one `{system_hash}` whatever the door.
    const widened = await post(gateway.url, KEY_A, JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: QUESTION }], max_tokens: 16, reflect: { max_turns: 9 } }), { "anthropic-version": "2023-06-01" }, "/v1/messages");
    assert.equal(widened.status, 400);
    assert.match(await widened.text(), /reflect\.max_turns/u);
  });

  it("reloads: a request in flight finishes on the config it arrived under, the next gets the new one; a bad config keeps the old", async (t) => {
    let release: () => void = () => {};
    const held: Behaviour = (res, seen, index, upstream) => {
      release = () => reply(digitsLessonScript)(res, seen, index, upstream);
    };
    const withB: GatewayConfig = { ...CONFIG, source: "gateway.yaml (edited)", attachments: [...CONFIG.attachments, { policy: "optional", tenant: "team-b" }] };
    let next: GatewayConfig = withB;
    const { upstream, gateway } = await setup(t, [held, reply(digitsLessonScript)], { loadConfig: () => next });
    const inFlight = post(gateway.url, KEY_B, chatBody());
    await upstream.received(1);
    const admin = (key = ADMIN_KEY, body?: string): Promise<Response> => fetch(`${gateway.url}/admin/config`, { method: "POST", headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body }) });
    assert.equal((await admin(KEY_B)).status, 401, "a client key does not reload");
    assert.equal((await admin(ADMIN_KEY, "{}")).status, 400, "a body is refused");
    const reloaded = await admin();
    assert.equal(reloaded.status, 200);
    assert.deepEqual(await reloaded.json(), { source: "gateway.yaml (edited)", policies: ["digits", "optional"], models: [] });
    const after = await post(gateway.url, KEY_B, chatBody());
    assert.equal(after.headers.get("x-reflect-policy"), "optional");
    assert.equal(await contentOf(after), "42");
    release();
    const first = await inFlight;
    assert.equal(first.headers.get("x-reflect-policy"), null, "the request in flight kept the config it arrived under");
    assert.equal(await contentOf(first), "forty-two");
    next = { ...withB, attachments: [{ policy: "gone", tenant: "team-b" }] };
    const bad = await admin();
    assert.equal(bad.status, 400);
    assert.match((await errorOf(bad)).message, /the old one stays: gateway\.yaml \(edited\): an attachment names the policy "gone"/u);
    assert.equal((await post(gateway.url, KEY_B, chatBody())).headers.get("x-reflect-policy"), "optional", "the old config still applies");
  });
});

/** A chat request whose x-reflect-route header is `route`'s raw bytes, on a plain socket: the answer's status. */
function rawPost(url: string, route: Buffer, body: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${KEY_A}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-reflect-route: `;
      socket.end(Buffer.concat([Buffer.from(head, "latin1"), route, Buffer.from(`\r\n\r\n${body}`, "utf8")]));
    });
    let text = "";
    socket.setEncoding("latin1").on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/u.exec(text)?.[1] ?? 0)));
    socket.on("error", reject);
  });
}
