import assert from "node:assert/strict";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { listenOnLoopback } from "../cli/cli-harness.js";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import type { GenerateRequest, GenerateResult } from "../models/language-model.js";
import type { LoraAdapter } from "../models/lora.js";
import type { Attributes, SpanHandle, Tracer } from "../telemetry/tracer.js";
import { armOf, engineArms, vllmArms, type AdapterEngine, type GatewayArms } from "./arms.js";
import { createGatewayMetrics } from "./metrics.js";
import type { RequestOutcome } from "./observer.js";
import { rawRequest, startTestGateway } from "./serve-harness.js";
import { createGateway } from "./server.js";

const CLIENT_KEY = "client-key-0123456789";
const ADMIN_KEY = "admin-key-9876543210";

/**
 * An engine with an adapter switch, as the embedded model has: it answers with the name of the weights it holds
 * ("base", or the adapter file's path) and fails a test that switches while a call is in flight. `events` lists its
 * calls (`call <weights>`) and switches (`switch <weights>`) in order; `hold(n)` is awaited inside call n (from 0).
 */
function fakeEngine(options: { hold?: (call: number) => Promise<void> } = {}): AdapterEngine & { switchesSeen: string[]; maxInFlight: number; events: string[] } {
  let lora: LoraAdapter | undefined;
  let inFlight = 0;
  let calls = 0;
  const engine = {
    events: [] as string[],
    modelId: "embedded:fake",
    maxConcurrency: 4,
    switchesSeen: [] as string[],
    maxInFlight: 0,
    get lora() {
      return lora;
    },
    async setLora(adapter: LoraAdapter | undefined) {
      if (inFlight !== 0) throw new Error(`switched with ${inFlight} calls in flight`);
      if (adapter?.path.includes("broken") === true) throw new Error(`${adapter.path} does not fit the base`);
      await delay(2);
      lora = adapter;
      engine.switchesSeen.push(adapter?.path ?? "base");
      engine.events.push(`switch ${adapter?.path ?? "base"}`);
    },
    async doGenerate(request: GenerateRequest): Promise<GenerateResult> {
      inFlight += 1;
      engine.maxInFlight = Math.max(engine.maxInFlight, inFlight);
      const under = lora?.path ?? "base";
      engine.events.push(`call ${under}`);
      const call = calls++;
      try {
        await options.hold?.(call);
        await delay(3);
        if ((lora?.path ?? "base") !== under) throw new Error("the adapter changed under a running call");
        const prompt = request.messages.reduce((n, m) => n + m.content.length, 0);
        return { text: under, finishReason: "stop", usage: { promptTokens: prompt, evaluatedPromptTokens: prompt, completionTokens: under.length } };
      } finally {
        inFlight -= 1;
      }
    },
  };
  return engine;
}

/** Spans' start attributes, by name. */
function memoryTracer(): Tracer & { started: Array<{ name: string; attributes: Attributes }> } {
  const started: Array<{ name: string; attributes: Attributes }> = [];
  const span: SpanHandle = { setAttributes: () => {}, end: () => {} };
  return { started, recordContent: false, shutdown: async () => {}, startSpan: (name, attributes = {}) => (started.push({ name, attributes }), span) };
}

interface Setup {
  url: string;
  arms: GatewayArms;
  engine: ReturnType<typeof fakeEngine>;
  recorded: Episode[];
  outcomes: RequestOutcome[];
  metricsText: () => Promise<string>;
  tracer: ReturnType<typeof memoryTracer>;
}

async function setup(t: TestContext, options: { canaryPercent: number; initial?: string; adminKey?: string; hold?: (call: number) => Promise<void> }): Promise<Setup> {
  const engine = fakeEngine(options.hold === undefined ? {} : { hold: options.hold });
  const arms = engineArms(engine, { canaryPercent: options.canaryPercent });
  if (options.initial !== undefined) await arms.load({ path: options.initial });
  const recorded: Episode[] = [];
  const outcomes: RequestOutcome[] = [];
  const metrics = createGatewayMetrics({ processMetrics: false });
  const tracer = memoryTracer();
  const gateway = await startTestGateway(t, {
    upstream: arms.model("base")!,
    arms,
    apiKey: CLIENT_KEY,
    ...(options.adminKey === undefined ? {} : { adminKey: options.adminKey }),
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    observer: { request: (o) => (outcomes.push(o), metrics.request(o)) },
    tracer,
  });
  return { url: gateway.url, arms, engine, recorded, outcomes, metricsText: async () => (await metrics.text()).body, tracer };
}

async function chat(url: string, reflect: Record<string, unknown>, options: { headers?: Record<string, string>; content?: string } = {}): Promise<{ status: number; arm: string | null; text: string; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, ...options.headers },
    body: JSON.stringify({ model: "fake", messages: [{ role: "user", content: options.content ?? "Say hi." }], reflect }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const text = (body.choices as Array<{ message: { content: string } }> | undefined)?.[0]?.message.content ?? "";
  return { status: response.status, arm: response.headers.get("x-reflect-arm"), text, body };
}

function admin(url: string, body: unknown, key?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`${url}/admin/lora`, { method: "POST", headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

describe("arm assignment", () => {
  it("puts a key in the same arm every time, and about P % of many keys in the adapter arm", () => {
    for (const key of ["user-1", "user-2", "conversation:abc"]) assert.equal(armOf(key, 30), armOf(key, 30));
    for (const percent of [5, 20, 50, 90]) {
      const n = 20_000;
      let adapter = 0;
      for (let i = 0; i < n; i++) if (armOf(`key-${i}`, percent) === "adapter") adapter += 1;
      // Binomial sd at n = 20 000 is at most 0.36 points; 1.5 points is over four sds.
      assert.ok(Math.abs((100 * adapter) / n - percent) < 1.5, `${percent}%: ${(100 * adapter) / n}% of keys in the adapter arm`);
    }
  });

  it("sends nothing to the adapter at 0 %, everything at 100 %, and only moves keys from base to adapter as P rises", () => {
    for (let i = 0; i < 2000; i++) {
      const key = `k${i}`;
      assert.equal(armOf(key, 0), "base");
      assert.equal(armOf(key, 100), "adapter");
      if (armOf(key, 10) === "adapter") assert.equal(armOf(key, 40), "adapter");
    }
    assert.throws(() => armOf("k", 101), /0 to 100/);
  });
});

describe("one engine taking turns between arms", () => {
  it("runs each call under its arm's weights, never switching with a call in flight", async () => {
    const engine = fakeEngine();
    const arms = engineArms(engine, { canaryPercent: 50 });
    await arms.load({ path: "/adapters/a1.gguf" });
    const plan = ["base", "adapter", "adapter", "base", "base", "adapter", "base", "adapter", "adapter", "adapter"] as const;
    const results = await Promise.all(plan.map((arm) => arms.model(arm)!.doGenerate({ messages: [{ role: "user", content: "x" }], maxTokens: 8, temperature: 0 })));
    assert.deepEqual(results.map((r) => r.text), plan.map((arm) => (arm === "base" ? "base" : "/adapters/a1.gguf")));
    // The load, then one turn per arm: the base's four calls together, then the adapter's six, not six alternations.
    assert.deepEqual(engine.switchesSeen, ["/adapters/a1.gguf", "base", "/adapters/a1.gguf"]);
    assert.ok(engine.maxInFlight > 1);
    assert.equal(arms.model("adapter")!.modelId, "embedded:fake+lora:a1.gguf");
    assert.equal(arms.model("base")!.modelId, "embedded:fake");
  });

  it("has no adapter arm before a load, and keeps the one it has when a load fails", async () => {
    const engine = fakeEngine();
    const arms = engineArms(engine, { canaryPercent: 50 });
    assert.equal(arms.model("adapter"), undefined);
    await arms.load({ path: "/adapters/a1.gguf" });
    await assert.rejects(arms.load({ path: "/adapters/broken.gguf" }), /does not fit the base/);
    const after = await arms.model("adapter")!.doGenerate({ messages: [{ role: "user", content: "x" }], maxTokens: 32, temperature: 0 });
    assert.equal(after.text, "/adapters/a1.gguf");
  });
});

describe("the gateway's arms", () => {
  it("keeps a client's arm key in one arm, and names the arm in the response, the record, the observer, the metrics and the span", async (t) => {
    const s = await setup(t, { canaryPercent: 50, initial: "/adapters/a1.gguf" });
    // Keys on both sides of the 50 % line, found by the same hash the gateway uses.
    const adapterKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "adapter") as string;
    const baseKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "base") as string;
    for (let i = 0; i < 3; i++) {
      const a = await chat(s.url, { arm_key: adapterKey }, { content: `question ${i}` });
      assert.deepEqual([a.status, a.arm, a.text], [200, "adapter", "/adapters/a1.gguf"]);
      const b = await chat(s.url, {}, { content: `question ${i}`, headers: { "x-reflect-arm-key": baseKey } });
      assert.deepEqual([b.status, b.arm, b.text], [200, "base", "base"]);
    }
    assert.deepEqual(s.recorded.map((e) => e.arm), ["adapter", "base", "adapter", "base", "adapter", "base"]);
    assert.deepEqual(s.recorded.map((e) => e.model), ["embedded:fake+lora:a1.gguf", "embedded:fake", "embedded:fake+lora:a1.gguf", "embedded:fake", "embedded:fake+lora:a1.gguf", "embedded:fake"]);
    assert.deepEqual(s.outcomes.map((o) => o.arm), ["adapter", "base", "adapter", "base", "adapter", "base"]);
    const metrics = await s.metricsText();
    assert.match(metrics, /reflect_gateway_arm_requests_total\{arm="adapter",outcome="reflected"\} 3/);
    assert.match(metrics, /reflect_gateway_arm_requests_total\{arm="base",outcome="reflected"\} 3/);
    const requestSpans = s.tracer.started.filter((span) => span.name === "gateway.request");
    assert.deepEqual(requestSpans.map((span) => span.attributes["reflect.arm"]), ["adapter", "base", "adapter", "base", "adapter", "base"]);
  });

  it("splits pass-through requests by the same canary: the adapter arm answers under the adapter, named in the header, the observer and the metrics", async (t) => {
    const s = await setup(t, { canaryPercent: 50, initial: "/adapters/a1.gguf" });
    const adapterKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "adapter") as string;
    const baseKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "base") as string;
    const plain = async (key: string) => {
      const response = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, "x-reflect-arm-key": key }, body: JSON.stringify({ model: "fake", messages: [{ role: "user", content: "Say hi." }] }) });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      return [response.status, response.headers.get("x-reflect-arm"), body.choices[0]?.message.content];
    };
    assert.deepEqual(await plain(adapterKey), [200, "adapter", "/adapters/a1.gguf"]);
    assert.deepEqual(await plain(baseKey), [200, "base", "base"]);
    assert.deepEqual(await plain(adapterKey), [200, "adapter", "/adapters/a1.gguf"]);
    assert.deepEqual(s.outcomes.map((o) => [o.kind, o.arm]), [["pass-through", "adapter"], ["pass-through", "base"], ["pass-through", "adapter"]]);
    assert.equal(s.recorded.length, 0, "a pass-through is not recorded");
    const metrics = await s.metricsText();
    assert.match(metrics, /reflect_gateway_arm_requests_total\{arm="adapter",outcome="pass_through"\} 2/);
    assert.match(metrics, /reflect_gateway_arm_requests_total\{arm="base",outcome="pass_through"\} 1/);
    assert.match(metrics, /reflect_gateway_arm_requests_total\{arm="adapter",outcome="reflected"\} 0/);
  });

  it("lets a request force its arm, and refuses the adapter arm where none is loaded, naming the field", async (t) => {
    const s = await setup(t, { canaryPercent: 0, initial: "/adapters/a1.gguf" });
    const forced = await chat(s.url, { arm: "adapter" });
    assert.deepEqual([forced.arm, forced.text], ["adapter", "/adapters/a1.gguf"]);
    assert.equal((await chat(s.url, { arm_key: "anyone" })).arm, "base");
    const bad = await chat(s.url, { arm: "canary" });
    assert.equal(bad.status, 400);
    assert.equal((bad.body.error as { param: string }).param, "reflect.arm");

    const bare = await setup(t, { canaryPercent: 100 });
    const none = await chat(bare.url, { arm: "adapter" });
    assert.equal(none.status, 400);
    assert.match((none.body.error as { message: string }).message, /no adapter loaded/);
    // With no adapter yet, the canary leaves everything on the base.
    assert.equal((await chat(bare.url, { arm_key: "anyone" })).arm, "base");
  });

  it("loads and replaces the adapter through the admin route, refusing no key, a wrong key and the client's key", async (t) => {
    const s = await setup(t, { canaryPercent: 100, adminKey: ADMIN_KEY });
    assert.equal((await admin(s.url, { path: "/adapters/a1.gguf" })).status, 401);
    assert.equal((await admin(s.url, { path: "/adapters/a1.gguf" }, "wrong-key-000000")).status, 401);
    assert.equal((await admin(s.url, { path: "/adapters/a1.gguf" }, CLIENT_KEY)).status, 401);
    assert.equal(s.arms.model("adapter"), undefined, "a refused load loaded nothing");
    // The admin key is no client key either.
    assert.equal((await chat(s.url, {}, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status, 401);

    const first = await admin(s.url, { path: "/adapters/a1.gguf" }, ADMIN_KEY);
    assert.deepEqual([first.status, first.body.model], [200, "embedded:fake+lora:a1.gguf"]);
    assert.equal((await chat(s.url, { arm_key: "u" })).text, "/adapters/a1.gguf");
    const second = await admin(s.url, { path: "/adapters/a2.gguf", scale: 0.5 }, ADMIN_KEY);
    assert.deepEqual([second.status, second.body.model], [200, "embedded:fake+lora:a2.gguf@0.5"]);
    assert.equal((await chat(s.url, { arm_key: "u" })).text, "/adapters/a2.gguf");
    const broken = await admin(s.url, { path: "/adapters/broken.gguf" }, ADMIN_KEY);
    assert.equal(broken.status, 502);
    assert.match(String((broken.body.error as { message: string }).message), /does not fit/);
    assert.equal((await chat(s.url, { arm_key: "u" })).text, "/adapters/a2.gguf", "a failed load keeps the adapter before");
    assert.equal((await admin(s.url, { scale: 1 }, ADMIN_KEY)).status, 400);
    assert.equal((await admin(s.url, { path: "x".repeat(70_000) }, ADMIN_KEY)).status, 413);
  });

  it("turns the admin route off without an admin key, and refuses an admin key that is also a client key", async (t) => {
    const s = await setup(t, { canaryPercent: 100 });
    assert.equal((await admin(s.url, { path: "/adapters/a1.gguf" }, CLIENT_KEY)).status, 404);
    assert.throws(() => createGateway({ upstream: s.arms.model("base")!, apiKey: [CLIENT_KEY], adminKey: CLIENT_KEY }), /also a client key/);
    // /healthz still answers without any key; the admin route is not reachable as a client route.
    assert.equal((await rawRequest(`${s.url}/healthz`)).status, 200);
  });
});

/** A gate a scripted call waits at: `reached` resolves when the call arrives, `open()` lets it go on. */
function gate(): { at: () => Promise<void>; reached: Promise<void>; open: () => void } {
  let arrive!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const opened = new Promise<void>((r) => (open = r));
  return { at: () => (arrive(), opened), reached, open };
}

describe("replacing the adapter under a running episode", () => {
  it("on the engine: the episode's every call stays on the adapter it started on, the swap waits for it, and a request arriving meanwhile gets the new one", async (t) => {
    const first = gate();
    const s = await setup(t, { canaryPercent: 100, initial: "/adapters/a1.gguf", adminKey: ADMIN_KEY, hold: (n) => (n === 0 ? first.at() : Promise.resolve()) });
    // A draft that fails the check (the engine answers with its weights' name), a reflection, a retry: three calls.
    const running = chat(s.url, { arm: "adapter", regex: "^\\d+$", max_turns: 2 }, { content: "first" });
    await first.reached;
    const swap = admin(s.url, { path: "/adapters/a2.gguf" }, ADMIN_KEY);
    await delay(30);
    const next = chat(s.url, { arm: "adapter" }, { content: "second" });
    await delay(30);
    assert.deepEqual(s.engine.switchesSeen, ["/adapters/a1.gguf"], "nothing switched while the episode ran");
    first.open();
    const episode = await running;
    assert.deepEqual([episode.status, episode.arm, episode.text], [200, "adapter", "/adapters/a1.gguf"]);
    const recorded = s.recorded[0] as Episode;
    assert.deepEqual(recorded.attempts.map((a) => a.call.output), ["/adapters/a1.gguf", "/adapters/a1.gguf"]);
    assert.equal(recorded.model, "embedded:fake+lora:a1.gguf");
    const swapped = await swap;
    assert.deepEqual([swapped.status, swapped.body.model], [200, "embedded:fake+lora:a2.gguf"]);
    assert.equal((await next).text, "/adapters/a2.gguf");
    // The episode's three calls on the old adapter, then the switch, then the request that waited for it.
    assert.deepEqual(s.engine.events, ["switch /adapters/a1.gguf", "call /adapters/a1.gguf", "call /adapters/a1.gguf", "call /adapters/a1.gguf", "switch /adapters/a2.gguf", "call /adapters/a2.gguf"]);
  });

  it("on the engine: a request waiting for a replacement that fails runs on the adapter before, and one that gives up waiting is let go", async (t) => {
    const first = gate();
    const s = await setup(t, { canaryPercent: 100, initial: "/adapters/a1.gguf", adminKey: ADMIN_KEY, hold: (n) => (n === 0 ? first.at() : Promise.resolve()) });
    const running = chat(s.url, { arm: "adapter" }, { content: "first" });
    await first.reached;
    const swap = admin(s.url, { path: "/adapters/broken.gguf" }, ADMIN_KEY);
    await delay(30);
    const gone = new AbortController();
    const impatient = fetch(`${s.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}` }, body: JSON.stringify({ model: "fake", messages: [{ role: "user", content: "x" }], reflect: { arm: "adapter" } }), signal: gone.signal }).catch((e: Error) => e.name);
    const patient = chat(s.url, { arm: "adapter" }, { content: "second" });
    await delay(30);
    gone.abort();
    assert.equal(await impatient, "AbortError");
    first.open();
    assert.equal((await running).text, "/adapters/a1.gguf");
    assert.equal((await swap).status, 502);
    assert.equal((await patient).text, "/adapters/a1.gguf");
  });

  it("on vLLM: the replaced adapter stays loaded for the episode pinned to it, every one of its calls goes there, and it is unloaded after", async (t) => {
    const first = gate();
    const vllm = await vllmStandIn(t, (n) => (n === 0 ? first.at() : Promise.resolve()));
    const modelFor = (name: string) => createHttpModel({ baseUrl: vllm.baseUrl, model: name, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });
    const arms = vllmArms(modelFor("base-model"), { baseUrl: vllm.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 100 });
    await arms.load({ path: "/peft/step-1" });
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, apiKey: CLIENT_KEY, adminKey: ADMIN_KEY });
    const running = chat(gateway.url, { arm: "adapter", regex: "^\\d+$", max_turns: 2 }, { content: "first" });
    await first.reached;
    const swap = await admin(gateway.url, { path: "/peft/step-2" }, ADMIN_KEY);
    assert.equal(swap.status, 200, JSON.stringify(swap.body));
    assert.match(String(swap.body.note), /reflect-adapter-1\) is unloaded once its 1 request\(s\) in flight end/u);
    assert.deepEqual([...vllm.loaded.keys()], ["reflect-adapter-1", "reflect-adapter-2"]);
    // A request after the swap goes to the new adapter at once, while the old one still serves the episode.
    assert.equal((await chat(gateway.url, { arm: "adapter" }, { content: "second" })).text, "served by reflect-adapter-2");
    first.open();
    const episode = await running;
    assert.deepEqual([episode.status, episode.text], [200, "served by reflect-adapter-1"]);
    const episodeCalls = vllm.calls.filter((c) => c.path === "/v1/chat/completions" && JSON.stringify(c.body.messages).includes("first"));
    assert.deepEqual(episodeCalls.map((c) => c.body.model), ["reflect-adapter-1", "reflect-adapter-1", "reflect-adapter-1"]);
    for (let i = 0; i < 100 && vllm.loaded.has("reflect-adapter-1"); i++) await delay(10);
    assert.deepEqual([...vllm.loaded.keys()], ["reflect-adapter-2"]);
    const unloadedAt = vllm.calls.findIndex((c) => c.path === "/v1/unload_lora_adapter");
    assert.ok(unloadedAt > vllm.calls.indexOf(episodeCalls.at(-1)!), "unloaded only after the episode's last call");
  });

  it("on vLLM: a relayed pass-through on the adapter arm holds its adapter loaded until the relayed body ends", async (t) => {
    const first = gate();
    const vllm = await vllmStandIn(t, (n) => (n === 0 ? first.at() : Promise.resolve()));
    const modelFor = (name: string) => createHttpModel({ baseUrl: vllm.baseUrl, model: name, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });
    const arms = vllmArms(modelFor("base-model"), { baseUrl: vllm.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 100 });
    await arms.load({ path: "/peft/step-1" });
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, apiKey: CLIENT_KEY, adminKey: ADMIN_KEY, upstreamHttp: { baseUrl: vllm.baseUrl, model: "base-model", apiKeyEnv: "REFLECT_TEST_NO_KEY" } });
    const relayed = rawRequest(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}` }, body: '{"model": "base-model", "messages": [{"role": "user", "content": "Say hi."}]}' });
    await first.reached;
    const swap = await admin(gateway.url, { path: "/peft/step-2" }, ADMIN_KEY);
    assert.match(String(swap.body.note), /unloaded once its 1 request/u);
    assert.ok(vllm.loaded.has("reflect-adapter-1"));
    first.open();
    const answer = await relayed;
    assert.equal(answer.status, 200, answer.body);
    assert.equal((JSON.parse(answer.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "served by reflect-adapter-1");
    for (let i = 0; i < 100 && vllm.loaded.has("reflect-adapter-1"); i++) await delay(10);
    assert.deepEqual([...vllm.loaded.keys()], ["reflect-adapter-2"]);
  });
});

/**
 * A stand-in for vLLM's runtime LoRA API (`--enable-lora`, `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`): load and unload
 * by name, and Chat Completions that answer with the served model's name, refusing an adapter not loaded (404, as vLLM).
 */
async function vllmStandIn(t: TestContext, hold?: (completion: number) => Promise<void>): Promise<{ baseUrl: string; calls: Array<{ path: string; body: Record<string, unknown> }>; loaded: Map<string, string> }> {
  const calls: Array<{ path: string; body: Record<string, unknown> }> = [];
  const loaded = new Map<string, string>();
  let completions = 0;
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8").on("data", (c: string) => (raw += c));
    req.on("end", async () => {
      const body = (raw === "" ? {} : JSON.parse(raw)) as Record<string, unknown>;
      calls.push({ path: req.url ?? "", body });
      const send = (status: number, value: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url === "/v1/load_lora_adapter") {
        if (loaded.has(String(body.lora_name))) return send(400, { error: { message: "already loaded" } });
        loaded.set(String(body.lora_name), String(body.lora_path));
        return send(200, "Success");
      }
      if (req.url === "/v1/unload_lora_adapter") return loaded.delete(String(body.lora_name)) ? send(200, "Success") : send(404, { error: { message: "not loaded" } });
      if (req.url === "/v1/chat/completions") {
        await hold?.(completions++);
        const model = String(body.model);
        if (model !== "base-model" && !loaded.has(model)) return send(404, { error: { message: `The model ${model} does not exist.` } });
        return send(200, { id: "x", object: "chat.completion", created: 0, model, choices: [{ index: 0, message: { role: "assistant", content: `served by ${model}` }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
      }
      send(404, { error: { message: "no route" } });
    });
  });
  const port = await listenOnLoopback(t, server);
  return { baseUrl: `http://127.0.0.1:${port}/v1`, calls, loaded };
}

describe("the adapter arm on a vLLM-like upstream", () => {
  it("loads the adapter under a fresh name, serves the adapter arm by that name, and unloads the one it replaced", async (t) => {
    const vllm = await vllmStandIn(t);
    const modelFor = (name: string) => createHttpModel({ baseUrl: vllm.baseUrl, model: name, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });
    const arms = vllmArms(modelFor("base-model"), { baseUrl: vllm.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 50 });
    const recorded: Episode[] = [];
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, apiKey: CLIENT_KEY, adminKey: ADMIN_KEY, recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} } });
    const first = await admin(gateway.url, { path: "/peft/step-1" }, ADMIN_KEY);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual([...vllm.loaded], [["reflect-adapter-1", "/peft/step-1"]]);
    assert.equal((await chat(gateway.url, { arm: "adapter" })).text, "served by reflect-adapter-1");
    assert.equal((await chat(gateway.url, { arm: "base" })).text, "served by base-model");
    await admin(gateway.url, { path: "/peft/step-2" }, ADMIN_KEY);
    assert.deepEqual([...vllm.loaded], [["reflect-adapter-2", "/peft/step-2"]]);
    assert.equal((await chat(gateway.url, { arm: "adapter" })).text, "served by reflect-adapter-2");
    assert.deepEqual(vllm.calls.filter((c) => c.path !== "/v1/chat/completions").map((c) => [c.path, c.body.lora_name]), [
      ["/v1/load_lora_adapter", "reflect-adapter-1"],
      ["/v1/load_lora_adapter", "reflect-adapter-2"],
      ["/v1/unload_lora_adapter", "reflect-adapter-1"],
    ]);
    assert.deepEqual(recorded.map((e) => e.arm), ["adapter", "base", "adapter"]);
  });

  it("relays a pass-through request on the adapter arm under the adapter's name, and one on the base arm byte for byte", async (t) => {
    const vllm = await vllmStandIn(t);
    const modelFor = (name: string) => createHttpModel({ baseUrl: vllm.baseUrl, model: name, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });
    const arms = vllmArms(modelFor("base-model"), { baseUrl: vllm.baseUrl, prefix: "reflect-adapter", modelFor }, { canaryPercent: 50 });
    await arms.load({ path: "/peft/step-1" });
    const outcomes: RequestOutcome[] = [];
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, apiKey: CLIENT_KEY, upstreamHttp: { baseUrl: vllm.baseUrl, model: "base-model", apiKeyEnv: "REFLECT_TEST_NO_KEY" }, observer: { request: (o) => void outcomes.push(o) } });
    const adapterKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "adapter") as string;
    const baseKey = [...Array(100).keys()].map((i) => `user-${i}`).find((k) => armOf(k, 50) === "base") as string;
    const relayed = async (key: string) => {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, "x-reflect-arm-key": key }, body: '{"model": "base-model", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}' });
      if (response.status !== 200) return [response.status, response.body];
      return [response.status, response.headers["x-reflect-arm"], (JSON.parse(response.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content];
    };
    assert.deepEqual(await relayed(adapterKey), [200, "adapter", "served by reflect-adapter-1"]);
    assert.deepEqual(await relayed(baseKey), [200, "base", "served by base-model"]);
    const served = vllm.calls.filter((c) => c.path === "/v1/chat/completions").map((c) => c.body);
    assert.deepEqual(served, [
      { model: "reflect-adapter-1", messages: [{ role: "user", content: "Say hi." }], max_tokens: 8 },
      { model: "base-model", messages: [{ role: "user", content: "Say hi." }], max_tokens: 8 },
    ]);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.arm]), [["pass-through", "adapter"], ["pass-through", "base"]]);
    // A body past the gateway's 64 KiB lane threshold (read by a worker first) is rewritten too, in the lane.
    const long = "word ".repeat(30_000);
    const large = await rawRequest(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, "x-reflect-arm-key": adapterKey }, body: JSON.stringify({ model: "base-model", messages: [{ role: "user", content: long }] }) });
    assert.equal(large.status, 200, large.body);
    const last = vllm.calls.filter((c) => c.path === "/v1/chat/completions").at(-1)?.body;
    assert.deepEqual([last?.model, (last?.messages as Array<{ content: string }>)[0]?.content.length], ["reflect-adapter-1", long.length]);
  });
});
