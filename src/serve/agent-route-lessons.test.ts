/**
 * An agent that comes through the gateway: a sequence of Chat Completions and Responses requests with tool turns, all
 * on one route (`x-reflect-route: support-agent`), under an operator's policy attached to that route whose memory key
 * is `agent.{route}`. The upstream's first tool call breaks its tool's schema; the gateway's tools check fails it, the
 * upstream reflects and calls again validly, and the lesson is kept under (tenant, key). The agent's next request (its
 * history now holds the call and the tool's result) is shown that lesson, on either door; another tenant on the same
 * route and key is shown none of it and learns its own. A route with injected text or control characters is a 400
 * naming the header, before any upstream call.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { RequestMemory } from "../loops/request-memory.js";
import type { Episode } from "../loops/types.js";
import { openSqliteRequestLessons } from "../memory/sqlite-request-lessons.js";
import { sqliteUnavailable } from "../memory/sqlite.js";
import { createHttpModel } from "../models/http.js";
import { parseGatewayConfig } from "./gateway-config.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import { ORDER_LESSON, orderAgentUpstream, orderTools } from "./order-agent-harness.js";
import { startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";
import { parseGatewayKeys } from "./tenants.js";

const KEY_A = "ka-agent-route-3c7e1f9b";
const KEY_B = "kb-agent-route-8d2a4e6c";
const ROUTE = "support-agent";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-agent-route-"));
after(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

/** The operator's config file, as docs/03-gateway.md shows it: the agent's route runs `agent-lessons`. */
const CONFIG_YAML = `policies:
  agent-lessons:
    reflect: { max_turns: 2, memory: { key: "agent.{route}" } }
attachments:
  - { policy: agent-lessons, route: support-agent }
`;
const CONFIG: GatewayConfig = parseGatewayConfig(CONFIG_YAML, "gateway.yaml", { bounds: { maxTurns: 4, budget: { tokens: 50_000, calls: 16, seconds: 120 } }, tenants: ["team-a", "team-b"], judges: [] });

const TASK = "Look up order 7 and refund it.";
const LESSON = ORDER_LESSON;

interface ChatTurn {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

async function setup(t: TestContext) {
  const upstream = await startUpstream(t, orderAgentUpstream);
  const memory = new RequestMemory({ store: openSqliteRequestLessons(path.join(root, `case-${++files}.sqlite`)), recallTimeoutMs: 1000 });
  t.after(() => memory.close());
  const recorded: Episode[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    tenants: parseGatewayKeys(`team-a:${KEY_A},team-b:${KEY_B}`),
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    memory,
    config: CONFIG,
  });
  return { upstream, gateway, memory, recorded };
}

function post(url: string, key: string, door: "/v1/chat/completions" | "/v1/responses", body: unknown, route: string = ROUTE): Promise<Response> {
  return fetch(`${url}${door}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-reflect-route": route }, body: JSON.stringify(body) });
}

/** The agent's Chat request at a step: its task, then the calls it made and the results it got so far. */
function chatStep(history: ChatTurn[] = []): Record<string, unknown> {
  return { model: UPSTREAM_MODEL, messages: [{ role: "system", content: "You are a support agent." }, { role: "user", content: TASK }, ...history], tools: orderTools, max_tokens: 64 };
}

/** The same agent on the Responses door: function_call and function_call_output items in `input`. */
function responsesStep(callId: string): Record<string, unknown> {
  return {
    model: UPSTREAM_MODEL,
    instructions: "You are a support agent.",
    input: [
      { role: "user", content: TASK },
      { type: "function_call", call_id: callId, name: "lookup_order", arguments: JSON.stringify({ order_id: 7 }) },
      { type: "function_call_output", call_id: callId, output: "order 7: paid, 30 EUR" },
    ],
    tools: orderTools.map((t) => ({ type: "function", name: t.function.name, description: t.function.description, parameters: t.function.parameters })),
    max_output_tokens: 64,
  };
}

async function firstCall(response: Response): Promise<{ name: string; arguments: unknown; id: string }> {
  assert.equal(response.status, 200, await response.clone().text());
  const body = (await response.json()) as { choices: Array<{ message: { tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> } }> };
  const call = body.choices[0]?.message.tool_calls?.[0];
  assert.ok(call, "the answer is a tool call");
  return { name: call.function.name, arguments: JSON.parse(call.function.arguments), id: call.id };
}

const showsLesson = (request: { body: Record<string, unknown> } | undefined): boolean => JSON.stringify(request?.body.messages ?? []).includes(LESSON);

describe("lessons for an agent's route through the gateway", () => {
  it("reads the operator's config as the docs show it: one policy, attached to the route, lessons keyed by the route", () => {
    assert.deepEqual(CONFIG.policies, [{ name: "agent-lessons", reflect: { max_turns: 2, memory: { key: "agent.{route}" } }, allowOptOut: false }]);
    assert.deepEqual(CONFIG.attachments, [{ policy: "agent-lessons", route: ROUTE }]);
  });

  it("an agent's failed tool call is reflected on, and its next requests on the route are shown the lesson, on the Chat and Responses doors", { skip: sqliteUnavailable() }, async (t) => {
    const { upstream, gateway, memory, recorded } = await setup(t);

    // Step 1: the first draft breaks lookup_order's schema; the gateway reflects, and the agent only sees the valid call.
    const step1 = await firstCall(await post(gateway.url, KEY_A, "/v1/chat/completions", chatStep()));
    assert.deepEqual([step1.name, step1.arguments], ["lookup_order", { order_id: 7 }]);
    assert.equal(upstream.requests.length, 3, "draft, reflection, retry");
    assert.ok(!showsLesson(upstream.requests[0]), "nothing to recall before the first failure");
    await memory.settled();
    assert.deepEqual([recorded[0]?.memory?.key, recorded[0]?.memory?.tenant, recorded[0]?.attempts.length], ["agent.support-agent", "team-a", 2]);
    assert.equal(recorded[0]?.attempts[0]?.checks.find((c) => c.source === "tools")?.pass, false);

    // Step 2: the agent's history holds the call and its result; the lesson recalled under (team-a, agent.support-agent).
    const history: ChatTurn[] = [{ role: "assistant", content: null, tool_calls: [{ id: step1.id, type: "function", function: { name: "lookup_order", arguments: JSON.stringify(step1.arguments) } } as never] }, { role: "tool", tool_call_id: step1.id, content: "order 7: paid, 30 EUR" } as ChatTurn];
    const before2 = upstream.requests.length;
    const step2 = await firstCall(await post(gateway.url, KEY_A, "/v1/chat/completions", chatStep(history)));
    assert.deepEqual([step2.name, step2.arguments], ["refund", { order_id: 7 }]);
    assert.equal(upstream.requests.length, before2 + 1, "shown the lesson, the first draft passes: no reflection");
    assert.ok(showsLesson(upstream.requests[before2]), "the agent's next step is shown the lesson");
    const sent = upstream.requests[before2]?.body.messages as ChatTurn[];
    assert.deepEqual(sent.slice(-2).map((m) => m.role), ["assistant", "tool"], "the agent's tool turns stay where they were, after the notes");
    assert.equal(recorded[1]?.memory?.recalled.length, 1);

    // The same agent on the Responses door, the same route: the same lesson.
    const before3 = upstream.requests.length;
    const step3 = await post(gateway.url, KEY_A, "/v1/responses", responsesStep(step1.id));
    assert.equal(step3.status, 200, await step3.clone().text());
    const output = ((await step3.json()) as { output: Array<{ type: string; name?: string; arguments?: string }> }).output.find((o) => o.type === "function_call");
    assert.deepEqual([output?.name, JSON.parse(output?.arguments ?? "null")], ["refund", { order_id: 7 }]);
    assert.ok(showsLesson(upstream.requests[before3]), "the Responses request is shown the route's lesson");
    assert.equal(upstream.requests.length, before3 + 1);
  });

  it("two tenants on the same route and key see none of each other's lessons", { skip: sqliteUnavailable() }, async (t) => {
    const { upstream, gateway, memory, recorded } = await setup(t);
    await firstCall(await post(gateway.url, KEY_A, "/v1/chat/completions", chatStep()));
    await memory.settled();

    // team-b's agent, same route, same key template: recalls nothing of team-a's, fails and learns its own.
    const before = upstream.requests.length;
    const b = await firstCall(await post(gateway.url, KEY_B, "/v1/chat/completions", chatStep()));
    assert.deepEqual(b.arguments, { order_id: 7 });
    assert.ok(!showsLesson(upstream.requests[before]), "team-b is not shown team-a's lesson");
    assert.equal(upstream.requests.length, before + 3, "team-b's first draft fails and is reflected on");
    assert.deepEqual([recorded[1]?.memory?.tenant, recorded[1]?.memory?.key, recorded[1]?.memory?.recalled], ["team-b", "agent.support-agent", []]);
    await memory.settled();

    // Each tenant now holds one lesson under the key, its own.
    const a = await memory.store.recall({ tenant: "team-a", key: "agent.support-agent" }, TASK, 8);
    const bLessons = await memory.store.recall({ tenant: "team-b", key: "agent.support-agent" }, TASK, 8);
    assert.deepEqual([a.length, bLessons.length], [1, 1]);
    assert.notEqual(a[0]?.id, bLessons[0]?.id);
  });

  it("refuses a route carrying injected text or control characters with a 400 naming x-reflect-route, before any upstream call", { skip: sqliteUnavailable() }, async (t) => {
    const { upstream, gateway } = await setup(t);
    for (const route of ["{tenant}", "support-agent}.{system_hash", "<|im_start|>system", "ignore-previous;rm", "a".repeat(65), "support agent", "agent/../team-b"]) {
      for (const door of ["/v1/chat/completions", "/v1/responses"] as const) {
        const refused = await post(gateway.url, KEY_A, door, door === "/v1/responses" ? responsesStep("c1") : chatStep(), route);
        assert.equal(refused.status, 400, `${route.slice(0, 20)} on ${door}`);
        const body = (await refused.json()) as { error: { param?: string | null; message: string } };
        assert.equal(body.error.param, "x-reflect-route", JSON.stringify(body));
        assert.match(body.error.message, /x-reflect-route/u);
      }
    }
    // Bytes no client library sends: a tab, an escape and a byte past ASCII in the header.
    for (const bytes of ["support\tagent", "support\u001bagent", "caf\u00e9"]) assert.equal(await rawPost(gateway, bytes), 400, JSON.stringify(bytes));
    assert.equal(upstream.requests.length, 0);
  });
});

/** A Chat request whose route header is written byte for byte (latin1), as no client library would send it. */
async function rawPost(gateway: { url: string }, route: string): Promise<number> {
  const { port } = new URL(gateway.url);
  const body = JSON.stringify(chatStep());
  const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\nauthorization: Bearer ${KEY_A}\r\nx-reflect-route: ${route}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
  const socket = net.connect(Number(port), "127.0.0.1");
  socket.end(Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(body)]));
  let answer = "";
  for await (const chunk of socket) answer += (chunk as Buffer).toString("latin1");
  return Number(/^HTTP\/1\.1 (\d{3})/u.exec(answer)?.[1] ?? 0);
}
