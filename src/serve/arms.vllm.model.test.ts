/**
 * The gateway's arms and its cascade on a real vLLM server (CPU build, SmolLM2-135M, runtime LoRA on): a PEFT
 * adapter loaded through `POST /admin/lora` is served by vLLM under its own name and changes the reply; a replacement
 * serves the new adapter and unloads the old (vLLM then refuses its name); keys split between the arms as `armOf`
 * says; the reflect-retry loop's attempts, reflections and retries all run on vLLM. The adapters are seeded random
 * LoRA weights on every layer's o_proj (peft-fixture.ts): large enough to change greedy output, small enough to keep
 * it text. One server for the whole file.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import { writePeftFixture } from "../models/peft-fixture.js";
import type { VllmServer } from "../vllm/server.js";
import { startTestVllm, VLLM_TEST_MODEL, vllmSkip } from "../vllm/vllm-harness.js";
import { armOf, vllmArms, type GatewayArms } from "./arms.js";
import { rawRequest } from "./serve-harness.js";
import { startGateway, type RunningGateway } from "./server.js";

const CLIENT_KEY = "client-key-0123456789";
const ADMIN_KEY = "admin-key-9876543210";
const QUESTION = "What is 2 + 3? Answer with a number.";
/** An open question: its greedy reply moves with the weights (a sum's does not, even under the adapter). */
const OPEN = "Describe the sea in one sentence.";
/** SmolLM2-135M's shape: 30 layers, hidden size 576. */
const SMOLLM2 = { module: "self_attn.o_proj", layers: 30, nIn: 576, nOut: 576, rank: 8, alpha: 16, scale: 0.2 };

interface Reply {
  status: number;
  arm: string | null;
  text: string;
  body: Record<string, unknown>;
}

async function chat(url: string, reflect: Record<string, unknown> | undefined, options: { content?: string; headers?: Record<string, string>; key?: string } = {}): Promise<Reply> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${options.key ?? CLIENT_KEY}`, ...options.headers },
    body: JSON.stringify({ model: VLLM_TEST_MODEL, messages: [{ role: "user", content: options.content ?? QUESTION }], max_tokens: 40, temperature: 0, ...(reflect === undefined ? {} : { reflect }) }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const text = (body.choices as Array<{ message: { content: string } }> | undefined)?.[0]?.message.content ?? "";
  return { status: response.status, arm: response.headers.get("x-reflect-arm"), text, body };
}

function admin(url: string, body: unknown, key?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`${url}/admin/lora`, { method: "POST", headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

/** The model names vLLM serves now (`GET /v1/models`): the base and every adapter loaded. */
async function served(server: VllmServer): Promise<string[]> {
  const body = (await (await fetch(`${server.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
  return body.data.map((m) => m.id).sort();
}

/** The same question straight to vLLM, by served name: what the gateway's arm should have answered. */
async function direct(server: VllmServer, model: string, content = QUESTION): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.baseUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content }], max_tokens: 40, temperature: 0 }) });
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  return { status: response.status, text: body.choices?.[0]?.message.content ?? "" };
}

/** Requests vLLM has finished, from its Prometheus counter (every finish reason, every model). */
async function finishedRequests(server: VllmServer): Promise<number> {
  const text = await (await fetch(`${server.baseUrl.replace(/\/v1$/u, "")}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("vllm:request_success_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

describe("the gateway's arms and cascade on vLLM", { skip: vllmSkip(), timeout: 900_000 }, () => {
  let server: VllmServer;
  let dir: string;
  let adapters: [string, string];
  let arms: GatewayArms;
  let url: string;
  let gateway: RunningGateway;
  const recorded: Episode[] = [];
  const modelFor = (name: string) => createHttpModel({ baseUrl: server.baseUrl, model: name, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });

  before(async () => {
    server = await startTestVllm({ enableLora: true });
    dir = await mkdtemp(path.join(os.tmpdir(), "rk-vllm-arms-"));
    adapters = [await writePeftFixture(path.join(dir, "step-1"), { ...SMOLLM2, seed: 1 }), await writePeftFixture(path.join(dir, "step-2"), { ...SMOLLM2, seed: 2 })];
    arms = vllmArms(modelFor(VLLM_TEST_MODEL), { baseUrl: server.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 50 });
    gateway = await startGateway({
      port: 0,
      upstream: arms.model("base")!,
      arms,
      apiKey: CLIENT_KEY,
      adminKey: ADMIN_KEY,
      upstreamHttp: { baseUrl: server.baseUrl, model: VLLM_TEST_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" },
      recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    });
    url = gateway.url;
  });
  after(async () => {
    await gateway?.close(100);
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("an adapter loaded through the admin route changes the reply; a replacement serves the new one and unloads the old", async () => {
    assert.deepEqual(await served(server), [VLLM_TEST_MODEL]);
    assert.equal((await admin(url, { path: adapters[0] })).status, 401);
    const first = await admin(url, { path: adapters[0] }, ADMIN_KEY);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(await served(server), ["reflect-adapter-1", VLLM_TEST_MODEL]);

    const base = await chat(url, { arm: "base" }, { content: OPEN });
    const adapter = await chat(url, { arm: "adapter" }, { content: OPEN });
    assert.deepEqual([base.status, base.arm, adapter.status, adapter.arm], [200, "base", 200, "adapter"], JSON.stringify([base.body, adapter.body]));
    assert.notEqual(adapter.text, base.text, "the adapter changes SmolLM2's greedy reply");
    // Each arm's reply is what vLLM answers under that arm's name.
    assert.equal(base.text, (await direct(server, VLLM_TEST_MODEL, OPEN)).text);
    assert.equal(adapter.text, (await direct(server, "reflect-adapter-1", OPEN)).text);

    const second = await admin(url, { path: adapters[1] }, ADMIN_KEY);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    for (let i = 0; i < 100 && (await served(server)).includes("reflect-adapter-1"); i++) await delay(50);
    assert.deepEqual(await served(server), ["reflect-adapter-2", VLLM_TEST_MODEL], "the replaced adapter is unloaded");
    assert.equal((await direct(server, "reflect-adapter-1")).status, 404, "vLLM no longer serves the unloaded adapter");
    const replaced = await chat(url, { arm: "adapter" }, { content: OPEN });
    assert.equal(replaced.text, (await direct(server, "reflect-adapter-2", OPEN)).text);
    assert.notEqual(replaced.text, base.text);
    assert.deepEqual(recorded.map((e) => e.arm), ["base", "adapter", "adapter"]);
  });

  it("splits keys between the arms as armOf says, each arm answering as vLLM does under its name", async () => {
    const baseText = (await direct(server, VLLM_TEST_MODEL, OPEN)).text;
    const adapterText = (await direct(server, "reflect-adapter-2", OPEN)).text;
    assert.notEqual(adapterText, baseText);
    const keys = Array.from({ length: 6 }, (_, i) => `user-${i}`);
    assert.ok(new Set(keys.map((k) => armOf(k, 50))).size === 2, "the keys fall in both arms");
    for (const key of keys) {
      const reply = await chat(url, { arm_key: key }, { content: OPEN });
      const arm = armOf(key, 50);
      assert.equal(reply.arm, arm, key);
      assert.equal(reply.text, arm === "adapter" ? adapterText : baseText, key);
    }
  });

  it("relays a pass-through request on the adapter arm under the adapter's name", async () => {
    const adapterKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "adapter") as string;
    const body = JSON.stringify({ model: VLLM_TEST_MODEL, messages: [{ role: "user", content: OPEN }], max_tokens: 40, temperature: 0 });
    const relayed = await rawRequest(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, "x-reflect-arm-key": adapterKey }, body });
    assert.equal(relayed.status, 200, relayed.body);
    assert.equal(relayed.headers["x-reflect-arm"], "adapter");
    const reply = JSON.parse(relayed.body) as { model: string; choices: Array<{ message: { content: string } }> };
    assert.equal(reply.model, "reflect-adapter-2");
    assert.equal(reply.choices[0]?.message.content, (await direct(server, "reflect-adapter-2", OPEN)).text);
  });

  it("runs the reflect-retry loop on vLLM: a check that passes stops at one attempt, one that fails reflects and retries", async () => {
    const before = await finishedRequests(server);
    const verified = await chat(url, { arm: "base", regex: "5", max_turns: 2 });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    const ok = verified.body.reflect as { attempts: number; decision: string; passed: boolean | null };
    assert.deepEqual([ok.attempts, ok.decision, ok.passed], [1, "verified", true], JSON.stringify(ok));
    assert.equal(await finishedRequests(server), before + 1, "one call: the attempt");

    // No reply of a 135M model matches this, so the loop reflects on the failure and retries, all on vLLM.
    for (const arm of ["base", "adapter"] as const) {
      const start = await finishedRequests(server);
      const failed = await chat(url, { arm, regex: "^ZQX-\\d{9}$", max_turns: 2 });
      assert.equal(failed.status, 200, JSON.stringify(failed.body));
      assert.equal(failed.arm, arm);
      const r = failed.body.reflect as { attempts: number; decision: string; passed: boolean | null; checks: Array<{ turn: number; pass: boolean | null; feedback: string }>; usage_by_role: Record<string, { calls: number; tokens: number }> };
      assert.deepEqual([r.attempts, r.decision, r.passed], [2, "failed", false], JSON.stringify(r));
      assert.deepEqual(r.checks.map((c) => [c.turn, c.pass]), [[1, false], [2, false]], JSON.stringify(r.checks));
      assert.equal(r.usage_by_role.attempt?.calls, 2, JSON.stringify(r.usage_by_role));
      assert.equal(r.usage_by_role.reflection?.calls, 1, JSON.stringify(r.usage_by_role));
      assert.ok((r.usage_by_role.reflection?.tokens ?? 0) > 0);
      assert.doesNotMatch(failed.text, /<\|im_(?:start|end)\|>/u);
      assert.equal(await finishedRequests(server), start + 3, "three calls on vLLM: attempt, reflection, retry");
    }
    assert.deepEqual(recorded.slice(-3).map((e) => [e.arm, e.attempts.length]), [["base", 1], ["base", 2], ["adapter", 2]]);
  });
});
