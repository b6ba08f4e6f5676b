import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { hostGuard, hostName, isLoopbackHost } from "./host-guard.js";
import type { RequestOutcome } from "./observer.js";
import { completion, rawRequest, startTestGateway, startUpstream, status, UPSTREAM_MODEL } from "./serve-harness.js";
import type { GatewayOptions } from "./server.js";

const JSON_TYPE = { "content-type": "application/json" };
const BODY = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Say hello." }] });

describe("hostGuard", () => {
  it("lets a loopback server be named localhost, 127.x or [::1], with or without a port, and nothing else", () => {
    const guard = hostGuard({ boundHost: "127.0.0.1" });
    for (const host of ["localhost", "localhost:8787", "LOCALHOST.", "127.0.0.1:8787", "127.9.8.7", "[::1]:8787", "127.1"]) assert.equal(guard({ host }, "GET"), null, host);
    for (const host of ["evil.example", "evil.example:8787", "localhost.evil.example", "127.0.0.1.evil.example", "10.0.0.1", "user@127.0.0.1", "127.0.0.1/x", ""]) {
      assert.deepEqual(pick(guard({ host }, "GET")), { status: 403, header: "host" }, host);
    }
    assert.deepEqual(pick(guard({}, "GET")), { status: 403, header: "host" }, "no Host at all (HTTP/1.0)");
  });

  it("allows the bound address, the names given, and on 0.0.0.0 any IP literal but no other name", () => {
    assert.equal(hostGuard({ boundHost: "192.168.1.5" })({ host: "192.168.1.5:8787" }, "GET"), null);
    assert.equal(hostGuard({ boundHost: "192.168.1.5" })({ host: "localhost" }, "GET")?.status, 403);
    const everywhere = hostGuard({ boundHost: "0.0.0.0", allowedHosts: ["Gateway.Internal"] });
    for (const host of ["10.1.2.3:8787", "[fe80::1]:8787", "localhost:8787", "gateway.internal"]) assert.equal(everywhere({ host }, "GET"), null, host);
    assert.equal(everywhere({ host: "evil.example" }, "GET")?.status, 403);
  });

  it("refuses an Origin of another host and a cross-site fetch, but not a link followed from another site", () => {
    const guard = hostGuard({ boundHost: "127.0.0.1", allowedHosts: ["app.example"] });
    const host = "127.0.0.1:8787";
    assert.deepEqual(pick(guard({ host, origin: "http://evil.example" }, "GET")), { status: 403, header: "origin" });
    assert.deepEqual(pick(guard({ host, origin: "null" }, "GET")), { status: 403, header: "origin" });
    assert.equal(guard({ host, origin: "http://localhost:3000" }, "GET"), null);
    assert.equal(guard({ host, origin: "https://app.example" }, "GET"), null);
    assert.deepEqual(pick(guard({ host, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" }, "GET")), { status: 403, header: "sec-fetch-site" });
    assert.deepEqual(pick(guard({ host, "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "content-type": "application/json" }, "POST")), { status: 403, header: "sec-fetch-site" }, "a form posted from another site");
    assert.equal(guard({ host, "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" }, "GET"), null);
    assert.equal(guard({ host, "sec-fetch-site": "same-origin" }, "GET"), null);
  });

  it("needs a POST to be JSON, which no browser sends cross-site without a preflight", () => {
    const guard = hostGuard({ boundHost: "127.0.0.1" });
    for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON"]) assert.equal(guard({ host: "localhost", "content-type": type }, "POST"), null, type);
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", undefined]) {
      assert.deepEqual(pick(guard({ host: "localhost", "content-type": type }, "POST")), { status: 415, header: "content-type" }, String(type));
    }
    assert.equal(guard({ host: "localhost" }, "GET"), null, "a GET carries no body");
  });

  it("names the refused header and what to do", () => {
    const guard = hostGuard({ boundHost: "127.0.0.1", remedy: (name) => `start the gateway with --allowed-host ${name}` });
    assert.match(guard({ host: "evil.example:8787" }, "GET")?.message ?? "", /^Host evil\.example .*--allowed-host evil\.example$/u);
    assert.match(guard({ host: "localhost", "content-type": "text/plain" }, "POST")?.message ?? "", /Content-Type text\/plain .*application\/json/u);
  });

  it("tells loopback addresses and host names apart", () => {
    for (const host of ["127.0.0.1", "127.0.0.53", "::1", "localhost"]) assert.ok(isLoopbackHost(host), host);
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "localhost.example"]) assert.ok(!isLoopbackHost(host), host);
    assert.equal(hostName("Gateway.Internal:443"), "gateway.internal");
    assert.equal(hostName("http://gateway.internal"), undefined);
  });
});

/** A keyless gateway in front of an upstream that answers "ok", with what its observer heard. */
async function setup(t: TestContext, options: Partial<GatewayOptions> = {}): Promise<{ url: string; port: string; upstreamRequests: () => number; outcomes: RequestOutcome[] }> {
  const upstream = await startUpstream(t, status(200, completion("ok")));
  const outcomes: RequestOutcome[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" },
    observer: { request: (o) => outcomes.push(o) },
    ...options,
  });
  return { url: gateway.url, port: new URL(gateway.url).port, upstreamRequests: () => upstream.requests.length, outcomes };
}

describe("a gateway without a key", () => {
  it("refuses a foreign Host or Origin (403) and a POST that is not JSON (415), in OpenAI's shape, before the upstream", async (t) => {
    const { url, port, upstreamRequests, outcomes } = await setup(t);
    const chat = `${url}/v1/chat/completions`;
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ host: `evil.example:${port}`, ...JSON_TYPE }, 403, "host_not_allowed"],
      [{ host: `127.0.0.1:${port}`, origin: "http://evil.example", ...JSON_TYPE }, 403, "origin_not_allowed"],
      [{ host: `127.0.0.1:${port}`, "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", ...JSON_TYPE }, 403, "cross_site_request"],
      [{ host: `127.0.0.1:${port}`, "content-type": "text/plain" }, 415, "unsupported_media_type"],
    ];
    for (const [headers, code, errorCode] of cases) {
      const response = await rawRequest(chat, { method: "POST", headers, body: BODY });
      assert.equal(response.status, code, JSON.stringify(headers));
      const error = (JSON.parse(response.body) as { error: { type: string; code: string; message: string } }).error;
      assert.equal(error.type, "invalid_request_error");
      assert.equal(error.code, errorCode);
    }
    assert.equal((await rawRequest(`${url}/v1/models`, { headers: { host: `evil.example:${port}` } })).status, 403, "GET routes too");
    assert.equal(upstreamRequests(), 0);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.status]), [["rejected", 403], ["rejected", 403], ["rejected", 403], ["rejected", 415]]);
  });

  it("answers JSON requests naming 127.0.0.1 or localhost, and /healthz whatever the Host", async (t) => {
    const { url, port, upstreamRequests } = await setup(t);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "localhost"]) {
      const response = await rawRequest(`${url}/v1/chat/completions`, { method: "POST", headers: { host, "content-type": "application/json; charset=utf-8" }, body: BODY });
      assert.equal(response.status, 200, `${host}: ${response.body}`);
    }
    assert.equal(upstreamRequests(), 3);
    const health = await rawRequest(`${url}/healthz`, { headers: { host: "10.0.0.7:8787", origin: "http://evil.example" } });
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: "ok" });
    assert.equal((await fetch(`${url}/v1/models`)).status, 200, "fetch names the address it was given");
  });

  it("answers a name given in allowedHosts", async (t) => {
    const { url, port } = await setup(t, { allowedHosts: ["gateway.internal"] });
    const response = await rawRequest(`${url}/v1/chat/completions`, { method: "POST", headers: { host: `gateway.internal:${port}`, origin: "https://gateway.internal", ...JSON_TYPE }, body: BODY });
    assert.equal(response.status, 200, response.body);
    assert.equal((await rawRequest(`${url}/v1/models`, { headers: { host: `other.internal:${port}` } })).status, 403);
  });
});

describe("a gateway with a key", () => {
  it("does not check the Host: a page elsewhere does not know the key", async (t) => {
    const { url, port } = await setup(t, { apiKey: "gateway-secret" });
    const headers = { host: `evil.example:${port}`, ...JSON_TYPE };
    assert.equal((await rawRequest(`${url}/v1/chat/completions`, { method: "POST", headers, body: BODY })).status, 401);
    const keyed = await rawRequest(`${url}/v1/chat/completions`, { method: "POST", headers: { ...headers, authorization: "Bearer gateway-secret" }, body: BODY });
    assert.equal(keyed.status, 200, keyed.body);
  });
});

function pick(refusal: { status: number; header: string } | null): { status: number; header: string } | null {
  return refusal === null ? null : { status: refusal.status, header: refusal.header };
}
