/**
 * A body refused under a policy, for what reading it finds past the policy (a field its door refuses, a shape past the
 * gateway's bounds), is an answer under that policy: it names the policy in `x-reflect-policy` and in what the observer
 * hears, a small body read on the gateway's thread and a large one read by a worker alike; a request no policy applies
 * to is refused as before, naming none. No upstream call is made for any of them.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import type { RequestOutcome } from "./observer.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";
import { parseGatewayKeys } from "./tenants.js";

const KEY_A = "ka-refusal-3c9d1e7f";
const KEY_B = "kb-refusal-8a2f6b0d";
const UPSTREAM_KEY_ENV = "REFLECT_TEST_POLICY_REFUSAL_UPSTREAM_KEY";
process.env[UPSTREAM_KEY_ENV] = "sk-upstream-refusal-7d4e2a9c1b";

const CONFIG: GatewayConfig = {
  source: "gateway.yaml",
  models: [],
  policies: [{ name: "agents", reflect: { max_turns: 2 }, allowOptOut: false }],
  attachments: [{ policy: "agents", tenant: "team-a" }],
};

async function setup(t: TestContext) {
  const upstream = await startUpstream(t, reply("unused"));
  const outcomes: RequestOutcome[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, speaks: ["chat", "messages"] },
    tenants: parseGatewayKeys(`team-a:${KEY_A},team-b:${KEY_B}`),
    observer: { request: (o) => void outcomes.push(o) },
    config: CONFIG,
  });
  return { upstream, gateway, outcomes };
}

/** A Messages body with a custom tool carrying a field the door refuses; `padding` characters of system prompt. */
function badToolBody(padding = 0): string {
  return JSON.stringify({
    model: UPSTREAM_MODEL,
    max_tokens: 64,
    system: "x".repeat(padding),
    messages: [{ role: "user", content: "run echo hi" }],
    tools: [{ name: "Bash", input_schema: { type: "object", properties: { command: { type: "string" } } }, load_later: true }],
    stream: true,
  });
}

function postMessages(url: string, key: string, body: string): Promise<Response> {
  return fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" }, body });
}

describe("a body refused under a policy", () => {
  for (const [size, padding] of [
    ["a small body", 0],
    ["a body a worker reads (over 64 KiB)", 80 * 1024],
  ] as const) {
    it(`${size}: the 400 names the field and the policy`, async (t) => {
      const { upstream, gateway, outcomes } = await setup(t);
      const response = await postMessages(gateway.url, KEY_A, badToolBody(padding));
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("x-reflect-policy"), "agents");
      const body = (await response.json()) as { error: { message: string } };
      assert.match(body.error.message, /tools\[0\]\.load_later/u);
      assert.equal(outcomes.at(-1)?.policy, "agents");
      assert.equal(upstream.requests.length, 0, "no upstream call for a refused body");
    });
  }

  it("a body nested past the gateway's bounds names the policy too", async (t) => {
    const { gateway, outcomes } = await setup(t);
    let deep: unknown = "leaf";
    for (let i = 0; i < 200; i++) deep = [deep];
    const response = await postMessages(gateway.url, KEY_A, JSON.stringify({ model: UPSTREAM_MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }], metadata: { deep } }));
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("x-reflect-policy"), "agents");
    assert.equal(outcomes.at(-1)?.policy, "agents");
  });

  it("a tenant no policy applies to is refused as before, naming none", async (t) => {
    const { gateway, outcomes } = await setup(t);
    const response = await postMessages(gateway.url, KEY_B, JSON.stringify({ ...JSON.parse(badToolBody()), reflect: {} }));
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("x-reflect-policy"), null);
    assert.equal(outcomes.at(-1)?.policy, "none");
  });
});
