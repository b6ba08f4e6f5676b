/**
 * A request body's deadline on a real gateway, over raw sockets: a body that stops one byte short of its
 * Content-Length, or trickles a byte every 200 ms, is answered 408 in its route's dialect with `connection: close`,
 * and its connection is closed at `bodyTimeoutMs` — on every dialect's route, passed through or reflected — while
 * `/healthz` answers; a body that arrives in time is answered as usual and its connection kept.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { vllmArms } from "./arms.js";
import { BODY_DEADLINE_GRACE_MS, nodeRequestTimeout } from "./body-deadline.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type FakeUpstream } from "./serve-harness.js";
import { defaultGatewayLimits, type RunningGateway } from "./server.js";

const BODY_TIMEOUT_MS = 500;
/** How late after the deadline a connection may close: timers on a shared machine, and the answer's write. */
const SLACK_MS = 700;

const ADMIN_KEY = "admin-key-body-deadline-01";

/**
 * A gateway with a body deadline far under its headers' (10 s by default), in front of a counting upstream, with an
 * adapter arm and the admin route (whose body is read the same way).
 */
async function setup(t: TestContext): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; port: number }> {
  const upstream = await startUpstream(t, reply("42"));
  const modelFor = (name: string) => createHttpModel({ baseUrl: upstream.baseUrl, model: name, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" });
  const gateway = await startTestGateway(t, {
    upstream: modelFor(UPSTREAM_MODEL),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
    arms: vllmArms(modelFor(UPSTREAM_MODEL), { baseUrl: upstream.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 0 }),
    adminKey: ADMIN_KEY,
    limits: { bodyTimeoutMs: BODY_TIMEOUT_MS },
  });
  return { upstream, gateway, port: Number(new URL(gateway.url).port) };
}

interface Ending {
  afterMs: number;
  received: string;
}

/** A raw connection: `send` writes to it; resolves with what came back and when the gateway closed it. */
function connection(t: TestContext, port: number, send: (socket: net.Socket) => void): { socket: net.Socket; closed: Promise<Ending> } {
  const started = performance.now();
  const socket = net.connect(port, "127.0.0.1", () => send(socket));
  t.after(() => socket.destroy());
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  socket.on("error", () => {});
  const closed = new Promise<Ending>((resolve) => socket.once("close", () => resolve({ afterMs: performance.now() - started, received })));
  return { socket, closed };
}

function head(route: string, contentLength: number): string {
  const admin = route === "/admin/lora" ? `Authorization: Bearer ${ADMIN_KEY}\r\n` : "";
  return `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n${admin}Content-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;
}

const messages = [{ role: "user", content: "What is six times seven?" }];
/** Each route's body, passed through (translated for Responses and Messages) and reflected. */
const requests: ReadonlyArray<{ name: string; route: string; body: Record<string, unknown>; dialect: "openai" | "anthropic" }> = [
  { name: "chat, passed through", route: "/v1/chat/completions", body: { model: UPSTREAM_MODEL, messages }, dialect: "openai" },
  { name: "chat, reflected", route: "/v1/chat/completions", body: { model: UPSTREAM_MODEL, messages, reflect: { regex: "^\\d+$" } }, dialect: "openai" },
  { name: "responses, passed through", route: "/v1/responses", body: { model: UPSTREAM_MODEL, input: "What is six times seven?" }, dialect: "openai" },
  { name: "responses, reflected", route: "/v1/responses", body: { model: UPSTREAM_MODEL, input: "What is six times seven?", reflect: {} }, dialect: "openai" },
  { name: "messages, passed through", route: "/v1/messages", body: { model: UPSTREAM_MODEL, max_tokens: 16, messages }, dialect: "anthropic" },
  { name: "messages, reflected", route: "/v1/messages", body: { model: UPSTREAM_MODEL, max_tokens: 16, messages, reflect: {} }, dialect: "anthropic" },
  { name: "count_tokens", route: "/v1/messages/count_tokens", body: { model: UPSTREAM_MODEL, messages }, dialect: "anthropic" },
  { name: "the admin route", route: "/admin/lora", body: { path: "/adapters/next" }, dialect: "openai" },
];

/** The answer's status line, headers and JSON body. */
function parse(received: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [headers = "", body = ""] = received.split("\r\n\r\n");
  return { status: Number(/^HTTP\/1\.1 (\d{3})/u.exec(headers)?.[1]), headers: headers.toLowerCase(), body: JSON.parse(body) as Record<string, unknown> };
}

function assertCut(ending: Ending, dialect: "openai" | "anthropic", what: string): void {
  const answer = parse(ending.received);
  assert.equal(answer.status, 408, `${what}: ${ending.received}`);
  assert.match(answer.headers, /\r\nconnection: close/u, what);
  const error = answer.body.error as { code?: string; type?: string };
  assert.equal(error.code, "body_timeout", what);
  if (dialect === "anthropic") assert.equal(answer.body.type, "error", what);
  else assert.equal(error.type, "invalid_request_error", what);
  assert.ok(ending.afterMs >= BODY_TIMEOUT_MS - 50 && ending.afterMs < BODY_TIMEOUT_MS + SLACK_MS, `${what}: closed after ${ending.afterMs.toFixed(0)} ms`);
}

async function healthz(gateway: RunningGateway): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${gateway.url}/healthz`);
  assert.equal(response.status, 200);
  assert.ok(performance.now() - started < 300, `/healthz took ${(performance.now() - started).toFixed(0)} ms`);
}

describe("a request body's deadline", () => {
  it("Node's request timeout stays behind the gateway's, and never under the headers' (which Node requires)", () => {
    assert.equal(nodeRequestTimeout({ headersTimeoutMs: 10_000, bodyTimeoutMs: 500 }), 10_000);
    assert.equal(nodeRequestTimeout(defaultGatewayLimits), defaultGatewayLimits.bodyTimeoutMs + BODY_DEADLINE_GRACE_MS);
  });

  it("a body one byte short of its Content-Length, on every route, passed through or reflected: 408 in the dialect, connection closed at the deadline, no upstream call", async (t) => {
    const { upstream, gateway, port } = await setup(t);
    const stalled = requests.map((request) => {
      const body = JSON.stringify(request.body);
      return { request, ...connection(t, port, (socket) => socket.write(head(request.route, Buffer.byteLength(body) + 1) + body)) };
    });
    await healthz(gateway);
    for (const { request, closed } of stalled) assertCut(await closed, request.dialect, request.name);
    assert.equal(upstream.requests.length, 0);
    await healthz(gateway);
  });

  it("a body trickled a byte every 200 ms, never finishing, is cut at the deadline, not kept alive by its bytes", async (t) => {
    const { upstream, gateway, port } = await setup(t);
    const trickles = ["/v1/chat/completions", "/v1/responses", "/v1/messages"].map((route) => {
      let timer: NodeJS.Timeout | undefined;
      const open = connection(t, port, (socket) => {
        socket.write(head(route, 10_000));
        timer = setInterval(() => {
          if (!socket.destroyed) socket.write(" ");
        }, 200);
      });
      void open.closed.then(() => clearInterval(timer));
      t.after(() => clearInterval(timer));
      return { route, ...open };
    });
    await healthz(gateway);
    for (const { route, closed } of trickles) assertCut(await closed, route === "/v1/messages" ? "anthropic" : "openai", route);
    assert.equal(upstream.requests.length, 0);
  });

  it("a body that arrives in time is answered, and its kept-alive connection outlives the deadline", async (t) => {
    const { upstream, port } = await setup(t);
    const body = JSON.stringify({ model: UPSTREAM_MODEL, messages });
    let answers = 0;
    const open = connection(t, port, (socket) => {
      // The headers, then the body just inside the deadline.
      socket.write(head("/v1/chat/completions", Buffer.byteLength(body)));
      setTimeout(() => socket.write(body), BODY_TIMEOUT_MS / 2);
    });
    open.socket.on("data", () => {
      answers += 1;
      // A second request on the same connection, after the first one's deadline has passed.
      if (answers === 1) setTimeout(() => open.socket.write(head("/v1/chat/completions", Buffer.byteLength(body)) + body), BODY_TIMEOUT_MS + 200);
    });
    for (let i = 0; i < 100 && upstream.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(upstream.requests.length, 2);
    assert.equal(open.socket.destroyed, false, "the connection was kept");
  });
});
