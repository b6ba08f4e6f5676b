import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { InputError, UsageError } from "../errors.js";
import { createHttpModel } from "../models/http.js";
import { createGatewayMetrics } from "./metrics.js";
import type { RequestOutcome } from "./observer.js";
import { client, completion, hang, reply, startTestGateway, startUpstream, status, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { GatewayOptions, RunningGateway } from "./server.js";
import { digestTenant, parseGatewayKeys, readKeysFile } from "./tenants.js";

const KEY_A = "ka-7f3e9b1c0d2a";
const KEY_B = "kb-41d8c6e2f905";
const METRICS_KEY = "metrics-5b2d9e7a";
const ADMIN_KEY = "admin-c3f1a8d6";
const BODY = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 });

describe("client keys as tenants", () => {
  it("reads NAME:KEY entries, and names bare keys: the only one local, several by their digests", () => {
    assert.deepEqual(parseGatewayKeys(`team-a:${KEY_A}, team-b:${KEY_B}`), [
      { tenant: "team-a", key: KEY_A },
      { tenant: "team-b", key: KEY_B },
    ]);
    assert.deepEqual(parseGatewayKeys(KEY_A), [{ tenant: "local", key: KEY_A }]);
    const two = parseGatewayKeys(`${KEY_A},${KEY_B}`);
    assert.deepEqual(two.map((t) => t.tenant), [digestTenant(KEY_A), digestTenant(KEY_B)]);
    assert.match(two[0]?.tenant ?? "", /^key-[0-9a-f]{12}$/u);
    assert.ok(!(two[0]?.tenant ?? "").includes(KEY_A.slice(3)), "the name says nothing of the key");
    // A key with colons is named; what follows the first colon is the key, colons and all.
    assert.deepEqual(parseGatewayKeys("svc:sk:with:colons"), [{ tenant: "svc", key: "sk:with:colons" }]);
    // Several keys of one name are one tenant (a key being rotated).
    assert.deepEqual(parseGatewayKeys(`team-a:${KEY_A},team-a:${KEY_B}`).map((t) => t.tenant), ["team-a", "team-a"]);
    assert.deepEqual(parseGatewayKeys(" , "), []);
  });

  it("refuses an empty key, a key given twice, a key with a space — naming the entry, never the key", () => {
    for (const [value, pattern] of [
      ["team-a:", /entry 1: the tenant "team-a" has an empty key/u],
      [`team-a:${KEY_A},team-b:${KEY_A}`, /entry 2: the same key is given twice \(tenants team-a and team-b\)/u],
      [`team-a:${KEY_A} x`, /entry 1: a key holds a space/u],
    ] as const) {
      assert.throws(
        () => parseGatewayKeys(value),
        (error: unknown) => {
          assert.ok(error instanceof UsageError);
          assert.match(error.message, pattern);
          assert.ok(!error.message.includes(KEY_A), `no key in ${JSON.stringify(error.message)}`);
          return true;
        },
      );
    }
  });

  it("reads a keys file, one NAME:KEY a line, and names the file and line of a bad one", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "reflect-keys-"));
    const good = path.join(dir, "keys");
    writeFileSync(good, `# the tenants\nteam-a:${KEY_A}\r\n\n  team-b:${KEY_B}  \n`);
    assert.deepEqual(readKeysFile(good), [
      { tenant: "team-a", key: KEY_A },
      { tenant: "team-b", key: KEY_B },
    ]);
    for (const [text, line, pattern] of [
      [`team-a:${KEY_A}\n${KEY_B}\n`, 2, /a line of a keys file is NAME:KEY/u],
      [`team-a:${KEY_A}\n\nteam-b:\n`, 3, /empty key/u],
      [`team-a:${KEY_A}\nteam-b:${KEY_A}\n`, undefined, /line 2: the same key is given twice/u],
    ] as const) {
      const file = path.join(dir, `bad-${String(line)}`);
      writeFileSync(file, text);
      assert.throws(
        () => readKeysFile(file),
        (error: unknown) => {
          assert.ok(error instanceof InputError, String(error));
          assert.equal(error.path, file);
          assert.equal(error.line, line);
          assert.match(error.message, pattern);
          assert.ok(!error.message.includes(KEY_A) && !error.message.includes(KEY_B));
          return true;
        },
      );
    }
    assert.throws(() => readKeysFile(path.join(dir, "missing")), (error: unknown) => error instanceof InputError && /cannot read the keys file \(ENOENT\)/u.test(error.message));
  });
});

/** A gateway with two tenants in front of `script`'s upstream, its outcomes and metrics kept. */
async function twoTenants(t: TestContext, script: Behaviour | Behaviour[], extra: Partial<GatewayOptions> = {}): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; outcomes: RequestOutcome[] }> {
  const upstream = await startUpstream(t, script);
  const outcomes: RequestOutcome[] = [];
  let running: RunningGateway | undefined;
  const metrics = createGatewayMetrics({ processMetrics: false, tenants: ["team-a", "team-b"], tenantInFlight: () => running?.load().tenants ?? {} });
  running = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
    tenants: parseGatewayKeys(`team-a:${KEY_A},team-b:${KEY_B}`),
    observer: {
      request: (o) => {
        outcomes.push(o);
        metrics.request(o);
      },
    },
    metricsText: () => metrics.text(),
    ...extra,
  });
  return { upstream, gateway: running, outcomes };
}

function post(url: string, key: string, body = BODY, header: "authorization" | "x-api-key" = "authorization"): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", [header]: header === "authorization" ? `Bearer ${key}` : key }, body });
}

describe("the gateway's tenants", () => {
  it("names each request's tenant, by either header, and each reflected episode's", async (t) => {
    const { gateway, outcomes } = await twoTenants(t, reply("42"));
    assert.equal((await post(gateway.url, KEY_A)).status, 200);
    assert.equal((await post(gateway.url, KEY_B, BODY, "x-api-key")).status, 200);
    const reflected = await client(gateway.url, KEY_B).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "6 * 7?" }], reflect: { regex: "^\\d+$" } } as never);
    assert.equal(reflected.choices[0]?.message.content, "42");
    assert.equal((await post(gateway.url, "not-a-key")).status, 401);
    assert.deepEqual(
      outcomes.map((o) => [o.kind, o.tenant]),
      [
        ["pass-through", "team-a"],
        ["pass-through", "team-b"],
        ["reflected", "team-b"],
        ["rejected", undefined],
      ],
    );
    assert.equal(outcomes[2]?.episode?.tenant, "team-b");
  });

  it("keeps /metrics from every client key, answering only the metrics key or the admin key", async (t) => {
    const { gateway } = await twoTenants(t, reply("ok"), { metricsKey: METRICS_KEY, adminKey: ADMIN_KEY });
    await post(gateway.url, KEY_A);
    for (const key of [KEY_A, KEY_B, "", "wrong"]) {
      const refused = await fetch(`${gateway.url}/metrics`, { headers: key === "" ? {} : { authorization: `Bearer ${key}` } });
      assert.equal(refused.status, 401, `key ${JSON.stringify(key)}`);
      assert.doesNotMatch(await refused.text(), /reflect_gateway/u);
    }
    for (const key of [METRICS_KEY, ADMIN_KEY]) {
      const scraped = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(scraped.status, 200);
      const text = await scraped.text();
      assert.match(text, /reflect_gateway_tenant_requests_total\{tenant="team-a",kind="pass-through",status="2xx"\} 1/u);
      assert.match(text, /reflect_gateway_tenant_in_flight_requests\{tenant="team-b"\} 0/u);
    }
  });

  it("turns /metrics off on a keyed gateway with no metrics or admin key, and refuses a metrics key that is a client's", async (t) => {
    const { gateway } = await twoTenants(t, reply("ok"));
    const off = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${KEY_A}` } });
    assert.equal(off.status, 404);
    assert.match(await off.text(), /REFLECT_METRICS_KEY/u);
    await assert.rejects(twoTenants(t, reply("ok"), { metricsKey: KEY_B }), /the metrics key is also a client key/u);
  });

  it("bounds one tenant's requests in flight, pass-through included, while another tenant's go on", async (t) => {
    const { upstream, gateway, outcomes } = await twoTenants(t, [hang, hang, status(200, completion("b's answer"))], { limits: { perTenantInFlight: 2 } });
    const held = [new AbortController(), new AbortController()];
    const hanging = held.map((c) => fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}` }, body: BODY, signal: c.signal }).catch(() => undefined));
    await upstream.received(2);
    const third = await post(gateway.url, KEY_A);
    assert.equal(third.status, 429);
    assert.equal(third.headers.get("retry-after"), "1");
    assert.equal(((await third.json()) as { error: { code: string } }).error.code, "tenant_in_flight_full");
    assert.equal(upstream.requests.length, 2, "the refused request never reached the upstream");
    const other = await post(gateway.url, KEY_B);
    assert.equal(other.status, 200, "another tenant is not held by the first one's share");
    assert.equal(((await other.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "b's answer");
    assert.deepEqual(gateway.load().tenants, { "team-a": 2 });
    for (const c of held) c.abort();
    await Promise.all(hanging);
    await upstream.closed(0);
    await upstream.closed(1);
    // The aborted relays end on the gateway's side too, and free the tenant's share.
    for (let i = 0; i < 50 && Object.keys(gateway.load().tenants).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(gateway.load().tenants, {});
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
    assert.ok(outcomes.some((o) => o.status === 429 && o.tenant === "team-a"));
  });
});
