/**
 * The gateway's own limits on connections, on a real server: a client that trickles its headers or its body is cut
 * at the gateway's timeouts (not Node's 300 s default), and at the connection cap a flood of idle connections makes
 * room for new ones instead of locking them out — while a connection with a request in flight is never the one closed.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { hang, reply, startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";
import type { GatewayLimits, RunningGateway } from "./server.js";

async function gatewayWith(t: TestContext, limits: Partial<GatewayLimits>, behaviour = reply("ok")): Promise<{ gateway: RunningGateway; port: number }> {
  const upstream = await startUpstream(t, behaviour);
  const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }), upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" }, limits });
  return { gateway, port: Number(new URL(gateway.url).port) };
}

/** A raw connection that sends `first`; resolves with what came back and when it closed. */
function rawConnection(t: TestContext, port: number, first: string): { closed: Promise<{ afterMs: number; received: string }>; socket: net.Socket } {
  const started = performance.now();
  const socket = net.connect(port, "127.0.0.1", () => socket.write(first));
  t.after(() => socket.destroy());
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  socket.on("error", () => {});
  const closed = new Promise<{ afterMs: number; received: string }>((resolve) => socket.once("close", () => resolve({ afterMs: performance.now() - started, received })));
  return { closed, socket };
}

async function healthzWithin(gateway: RunningGateway, ms: number): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${gateway.url}/healthz`);
  assert.equal(response.status, 200);
  assert.ok(performance.now() - started < ms, `/healthz took ${(performance.now() - started).toFixed(0)} ms`);
}

describe("the gateway's connection limits", () => {
  it("answers a body that stalls 408 at bodyTimeoutMs and closes it; /healthz answers meanwhile", async (t) => {
    const { gateway, port } = await gatewayWith(t, { headersTimeoutMs: 400, bodyTimeoutMs: 800 });
    const stalled = rawConnection(t, port, `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`);
    await healthzWithin(gateway, 200);
    const { afterMs, received } = await stalled.closed;
    assert.match(received, /^HTTP\/1\.1 408/u);
    assert.ok(afterMs >= 700 && afterMs < 3000, `closed after ${afterMs.toFixed(0)} ms`);
  });

  it("closes a connection whose headers stall at headersTimeoutMs", async (t) => {
    const { gateway, port } = await gatewayWith(t, { headersTimeoutMs: 400, bodyTimeoutMs: 5000 });
    const stalled = rawConnection(t, port, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await healthzWithin(gateway, 200);
    const { afterMs } = await stalled.closed;
    assert.ok(afterMs >= 300 && afterMs < 3000, `closed after ${afterMs.toFixed(0)} ms`);
  });

  it("at maxConnections closes the longest-idle connections for new ones, never one with a request in flight", async (t) => {
    const { gateway, port } = await gatewayWith(t, { maxConnections: 50 }, hang);
    // A reflected request the upstream never answers: its connection has a request in flight throughout.
    const busy = fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }], reflect: {} }), signal: AbortSignal.timeout(20_000) }).then(
      (r) => r.status,
      (e: Error) => e.name,
    );
    await new Promise((r) => setTimeout(r, 100));
    const idle = Array.from({ length: 200 }, () => rawConnection(t, port, ""));
    await new Promise((r) => setTimeout(r, 300));
    await healthzWithin(gateway, 200);
    const closedSoFar = await Promise.all(idle.map((c) => Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))])));
    const stillOpen = closedSoFar.filter((closed) => !closed).length;
    assert.ok(stillOpen <= 50, `${stillOpen} idle connections still open`);
    assert.ok(stillOpen >= 40, `only ${stillOpen} idle connections left open: the newest should stay`);
    // The request in flight was never cut: it is still waiting on the upstream.
    const early = await Promise.race([busy, new Promise<string>((r) => setTimeout(() => r("waiting"), 100))]);
    assert.equal(early, "waiting");
  });
});
