/**
 * `reflect serve` under hostile requests, as a deployment meets them: the real CLI in its own process (so its memory is
 * its own, read from /proc), in front of a real scripted upstream, with two keys — one sending the hostile requests,
 * one probing. While 16 hostile requests run at once, `/healthz` is asked every 25 ms and a pass-through request every
 * 40 ms; each must answer within 200 ms (99th percentile, over enough probes that it is not the worst one), the gateway's resident memory must stay under its documented cap, and every
 * hostile request must end with a 4xx or a "cannot judge" naming the limit that stopped it.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { after, describe, it, type TestContext } from "node:test";
import { spawn } from "node:child_process";
import { gzipSync } from "node:zlib";
import { taskFamilies } from "../tasks/registry.js";
import { assertExit, describeRun, removeCacheDir, startCli, type CliRun } from "../cli/cli-harness.js";
import { completion, reply, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";

after(removeCacheDir);

/** The resident memory the gateway stays under at its default limits (docs/03-gateway.md). */
const RSS_CAP_MB = 512;
/** How long `/healthz` and a pass-through request may take while the hostile requests run (99th percentile). */
const ANSWER_WITHIN_MS = 200;
/** What no probe may take: a stall. */
const STALL_MS = 1000;
const HOSTILE_KEY = "hostile-client-key";
const PROBE_KEY = "probe-client-key";
/** The operator's key of `/metrics`: on a gateway with client keys, no client key reads it. */
const METRICS_KEY = "operator-metrics-key";
const UPSTREAM_KEY = "sk-upstream-DO-NOT-LEAK-93c1f0aa";
const CONCURRENT = 16;

interface Gateway {
  base: string;
  pid: number;
  run: CliRun;
}

async function startGatewayProcess(t: TestContext, upstream: FakeUpstream): Promise<Gateway> {
  const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--upstream-key-env", "HOSTILE_TEST_UPSTREAM_KEY"], {
    env: { REFLECT_GATEWAY_KEY: `hostile:${HOSTILE_KEY},probe:${PROBE_KEY}`, REFLECT_METRICS_KEY: METRICS_KEY, HOSTILE_TEST_UPSTREAM_KEY: UPSTREAM_KEY },
    limitMs: 300_000,
  });
  t.after(async () => {
    run.child.kill("SIGTERM");
    assertExit(await run.done, 0);
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = "";
    run.child.stdout?.on("data", (chunk: Buffer | string) => {
      out += String(chunk);
      const match = /reflect serve: (http:\/\/\S+)\/v1/u.exec(out);
      if (match !== null) resolve(match[1] as string);
    });
    run.done.then((result) => reject(new Error(`the gateway exited before serving: ${describeRun(result)}`)), reject);
  });
  return { base, pid: run.child.pid as number, run };
}

/** The upstream: a probe's pass-through gets a short reply; anything else is answered by `hostile`. */
function upstreamOf(hostile: Behaviour): Behaviour {
  return (res, seen, index, upstream) => {
    if (JSON.stringify(seen.body.messages ?? "").includes("probe")) return reply("ok")(res, seen, index, upstream);
    return hostile(res, seen, index, upstream);
  };
}

interface Watch {
  /** Every probe's time to its whole answer, in ms. */
  healthzMs: number[];
  passMs: number[];
  rssPeakMb: number;
  failures: string[];
}

/**
 * The probes, in a process of their own, so that nothing this test's process does (sending megabytes, parsing the
 * answers, collecting its garbage) delays a probe's request or its reading of the answer: `/healthz` every 25 ms and a pass-through every 40 ms, each on a
 * connection of its own as a load balancer's probe opens one, and the gateway's VmRSS every 20 ms.
 */
const PROBES = `
const workerData = JSON.parse(process.argv[1]);
const http = require("node:http");
const { readFile } = require("node:fs/promises");
const { base, pid, key, body } = workerData;
const watch = { healthzMs: [], passMs: [], rssPeakMb: 0, failures: [] };
let running = true;
const timed = (path, payload) => new Promise((resolve) => {
  const started = performance.now();
  const request = http.request(base + path, { method: payload === undefined ? "GET" : "POST", agent: false, headers: { authorization: "Bearer " + key, "content-type": "application/json" } }, (res) => {
    res.resume();
    res.on("end", () => {
      if (res.statusCode !== 200) watch.failures.push(path + ": " + res.statusCode);
      resolve(performance.now() - started);
    });
  });
  request.on("error", (error) => { watch.failures.push(path + ": " + error.message); resolve(performance.now() - started); });
  request.end(payload);
});
const loop = async (everyMs, probe) => {
  while (running) {
    const next = performance.now() + everyMs;
    await probe();
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
};
// Read off the event loop: reading /proc can wait on the gateway's memory map while it allocates.
const rss = async () => { const m = /VmRSS:\\s+(\\d+) kB/.exec(await readFile("/proc/" + pid + "/status", "utf8")); return m === null ? 0 : Number(m[1]) / 1024; };
const probes = [
  loop(25, async () => { watch.healthzMs.push(await timed("/healthz")); }),
  loop(40, async () => { watch.passMs.push(await timed("/v1/chat/completions", body)); }),
  loop(20, async () => { watch.rssPeakMb = Math.max(watch.rssPeakMb, await rss()); }),
];
process.once("message", async () => { running = false; await Promise.all(probes); process.send(watch, () => process.disconnect()); });
setTimeout(() => process.send("warm"), 300);
`;

/** Probes the gateway (see PROBES) while `work` runs, after 300 ms of probing first (connections warm). */
async function watchWhile<T>(gateway: Gateway, work: () => Promise<T>): Promise<{ value: T; watch: Watch }> {
  const body = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "probe" }] });
  const probes = spawn(process.execPath, ["-e", PROBES, JSON.stringify({ base: gateway.base, pid: gateway.pid, key: PROBE_KEY, body })], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise((resolve) => probes.once("exit", resolve));
  await new Promise((resolve) => probes.once("message", resolve));
  let value: T;
  try {
    value = await work();
  } finally {
    probes.send("stop");
  }
  const watch = await new Promise<Watch>((resolve) => probes.once("message", (m) => resolve(m as Watch)));
  await exited;
  return { value, watch };
}

/** The nearest-rank percentile `q` of `values`. */
function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/**
 * What the gateway must hold while the hostile requests run: every probe answered 200; the 99th percentile (95th under
 * 100 probes) of `/healthz` and of pass-through under 200 ms, and no probe over a second (no stall); RSS under the cap.
 * The percentile, not the worst, is held to 200 ms: on a shared 2-core machine that also runs the upstream, the client
 * and the probes, a probe now and then waits on the machine rather than on the gateway (a CPU profile of the gateway's
 * thread during such a probe shows it idle), and the worst is reported beside it.
 */
function assertHeld(watch: Watch, t: TestContext): void {
  const figures = (ms: number[]) => `p50 ${percentile(ms, 0.5).toFixed(0)} / p99 ${percentile(ms, 0.99).toFixed(0)} / max ${Math.max(...ms).toFixed(0)} ms over ${ms.length}`;
  t.diagnostic(`/healthz ${figures(watch.healthzMs)}; pass-through ${figures(watch.passMs)}; RSS peak ${watch.rssPeakMb.toFixed(0)} MB`);
  assert.deepEqual(watch.failures, []);
  assert.ok(watch.healthzMs.length > 5 && watch.passMs.length > 2, `probes ran: ${watch.healthzMs.length} /healthz, ${watch.passMs.length} pass-through`);
  // Under 100 probes the nearest-rank p99 is the worst one, which the stall bound below holds: there, p95.
  const held = (ms: number[]) => (ms.length >= 100 ? 0.99 : 0.95);
  for (const [name, ms] of [["/healthz", watch.healthzMs], ["a pass-through", watch.passMs]] as const) {
    const q = held(ms);
    assert.ok(percentile(ms, q) < ANSWER_WITHIN_MS, `${name}: p${q * 100} ${percentile(ms, q).toFixed(0)} ms over ${ms.length}`);
    assert.ok(Math.max(...ms) < STALL_MS, `${name} took ${Math.max(...ms).toFixed(0)} ms`);
  }
  assert.ok(watch.rssPeakMb > 0 && watch.rssPeakMb < RSS_CAP_MB, `the gateway's RSS reached ${watch.rssPeakMb.toFixed(0)} MB`);
}

interface Answer {
  status: number;
  body: { error?: { param: string | null; message: string }; reflect?: { passed: boolean | null; checks: Array<{ feedback: string; pass: boolean | null }> }; choices?: Array<{ message: { content: string | null } }> };
}

/** Sends a body (built before the probes start, as a string, so building it delays nothing that is measured). */
async function ask(gateway: Gateway, text: string): Promise<Answer> {
  const body = Buffer.from(text, "utf8");
  const response = await fetch(`${gateway.base}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${HOSTILE_KEY}`, "content-type": "application/json" }, body });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

function wideSchema(properties: number, salt: string): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let i = 0; i < properties; i++) props[`${salt}_${i}`] = { type: "string", maxLength: 40 };
  return { type: "object", properties: props };
}

const jsonSchema = (schema: unknown) => ({ type: "json_schema", json_schema: { name: "out", schema } });
const message = (content: string) => [{ role: "user", content }];

/** Whether an answer is a 200 whose checks could not judge, naming `limit`. */
function cannotJudgeNaming(answer: Answer, limit: RegExp): boolean {
  return answer.status === 200 && answer.body.reflect?.passed === null && (answer.body.reflect?.checks ?? []).some((c) => c.pass === null && limit.test(c.feedback));
}

describe("reflect serve under hostile requests", { timeout: 600_000 }, () => {
  it("compiles 16 distinct large schemas off the event loop, and refuses 16 over the limits with a 400 before any upstream call", async (t) => {
    const upstream = await startUpstream(t, upstreamOf(reply('{"a_0": "x"}')));
    const gateway = await startGatewayProcess(t, upstream);
    const bodies = [
      ...Array.from({ length: CONCURRENT }, (_, i) => JSON.stringify({ model: UPSTREAM_MODEL, messages: message("large"), response_format: jsonSchema(wideSchema(1500, `s${i}`)), reflect: { max_turns: 1 } })),
      ...Array.from({ length: CONCURRENT }, (_, i) => JSON.stringify({ model: UPSTREAM_MODEL, messages: message("huge"), response_format: jsonSchema(wideSchema(30_000, `h${i}`)), reflect: {} })),
    ];
    const { value, watch } = await watchWhile(gateway, () => Promise.all(bodies.map((body) => ask(gateway, body))));
    assertHeld(watch, t);
    const large = value.slice(0, CONCURRENT);
    const huge = value.slice(CONCURRENT);
    for (const answer of large) assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
    for (const answer of huge) {
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error?.param, "response_format.json_schema.schema");
      assert.match(answer.body.error?.message ?? "", /more than 5000 property definitions/);
    }
    // Only the large requests reached the upstream, once each (besides the probes).
    assert.equal(upstream.requests.filter((r) => JSON.stringify(r.body.messages).includes("huge")).length, 0);
    assert.equal(upstream.requests.filter((r) => JSON.stringify(r.body.messages).includes("large")).length, CONCURRENT);
  });

  it("stops quadratic uniqueItems on 16 large replies at checks.runMs: cannot judge, naming the limit", async (t) => {
    const items = JSON.stringify(Array.from({ length: 15_000 }, (_, i) => ({ i, tag: `item-${i}` })));
    const upstream = await startUpstream(t, upstreamOf(reply(items)));
    const gateway = await startGatewayProcess(t, upstream);
    const schema = { type: "array", uniqueItems: true, items: { type: "object" } };
    // max_tokens large enough that the reply is not capped (16 bytes a token).
    const bodies = Array.from({ length: CONCURRENT }, (_, i) => JSON.stringify({ model: UPSTREAM_MODEL, messages: message(`unique ${i}`), max_tokens: 30_000, response_format: jsonSchema(schema), reflect: { max_turns: 1 } }));
    const { value, watch } = await watchWhile(gateway, () => Promise.all(bodies.map((body) => ask(gateway, body))));
    assertHeld(watch, t);
    for (const answer of value) assert.ok(cannotJudgeNaming(answer, /checks\.runMs limit \(1000 ms\)/), JSON.stringify(answer.body).slice(0, 400));
  });

  it("stops a catastrophic parameter pattern across 40 tool calls, 16 requests at once, at checks.runMs", async (t) => {
    const calls = Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, type: "function", function: { name: "lookup", arguments: JSON.stringify({ q: `${"a".repeat(28)}!` }) } }));
    const toolCalls: Behaviour = (res) => {
      const body = completion(null);
      const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
      choice.message = { role: "assistant", content: null, tool_calls: calls };
      choice.finish_reason = "tool_calls";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const longText = reply(`${"word ".repeat(2000)}!`);
    const upstream = await startUpstream(t, upstreamOf((res, seen, index, up) => (JSON.stringify(seen.body.messages).includes("regex") ? longText : toolCalls)(res, seen, index, up)));
    const gateway = await startGatewayProcess(t, upstream);
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } }, required: ["q"] } } }];
    const bodies = [
      ...Array.from({ length: CONCURRENT - 2 }, () => JSON.stringify({ model: UPSTREAM_MODEL, messages: message("tools"), tools, reflect: { max_turns: 1 } })),
      // The same backtracking as a reflect.regex, on a long reply (`+`, not `*`: a pattern that matches the empty reply
      // checks nothing and is not run).
      ...Array.from({ length: 2 }, () => JSON.stringify({ model: UPSTREAM_MODEL, messages: message("tools regex"), max_tokens: 2000, reflect: { max_turns: 1, regex: "^(\\w+\\s?)+$" } })),
    ];
    const { value, watch } = await watchWhile(gateway, () => Promise.all(bodies.map((body) => ask(gateway, body))));
    assertHeld(watch, t);
    for (const answer of value.slice(0, CONCURRENT - 2)) assert.ok(cannotJudgeNaming(answer, /checks\.runMs limit \(1000 ms\)/), JSON.stringify(answer.body).slice(0, 400));
    for (const answer of value.slice(CONCURRENT - 2)) assert.ok(cannotJudgeNaming(answer, /took longer than 100 ms and was stopped/), JSON.stringify(answer.body).slice(0, 400));
    // Each overrun stopped its worker and started another; an operator sees it in the metrics.
    assert.equal((await fetch(`${gateway.base}/metrics`, { headers: { authorization: `Bearer ${PROBE_KEY}` } })).status, 401, "a client key reads no metrics");
    const metrics = await (await fetch(`${gateway.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).text();
    const replaced = Number(/^reflect_gateway_check_workers_replaced_total (\d+)/mu.exec(metrics)?.[1] ?? "0");
    assert.ok(replaced >= CONCURRENT - 2, `${replaced} check workers replaced`);
    assert.match(metrics, /^reflect_gateway_check_jobs\{state="queued"\} 0$/mu);
  });

  it("refuses a reflect.item nested deep or oversize for every task family with a 400 before any upstream call", async (t) => {
    const upstream = await startUpstream(t, upstreamOf(reply("unused")));
    const gateway = await startGatewayProcess(t, upstream);
    // Written as text: JSON.stringify itself cannot go 50,000 deep.
    const deep = `${"[".repeat(50_000)}1${"]".repeat(50_000)}`;
    const requests = taskFamilies.flatMap((family) => [
      { family: family.name, field: "body", body: `{"model": "${UPSTREAM_MODEL}", "messages": ${JSON.stringify(message("deep"))}, "reflect": {"task": "${family.name}", "item": {"question": "q", "extra": ${deep}}}}` },
      { family: family.name, field: "reflect.item", body: JSON.stringify({ model: UPSTREAM_MODEL, messages: message("big"), reflect: { task: family.name, item: { question: "q".repeat(100_000) } } }) },
    ]);
    const { value, watch } = await watchWhile(gateway, async () => {
      const answers: Answer[] = [];
      for (let i = 0; i < requests.length; i += CONCURRENT) answers.push(...(await Promise.all(requests.slice(i, i + CONCURRENT).map((r) => ask(gateway, r.body)))));
      return answers;
    });
    assertHeld(watch, t);
    for (const [i, answer] of value.entries()) {
      const request = requests[i] as (typeof requests)[number];
      assert.equal(answer.status, 400, `${request.family}: ${JSON.stringify(answer.body).slice(0, 200)}`);
      assert.equal(answer.body.error?.param, request.field, request.family);
    }
    assert.equal(upstream.requests.filter((r) => !JSON.stringify(r.body.messages).includes("probe")).length, 0);
  });

  it("keeps the upstream key from 16 clients whatever form the upstream echoes it in", async (t) => {
    const half = Math.floor(UPSTREAM_KEY.length / 2);
    const event = (content: string) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: UPSTREAM_MODEL, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const escaped = JSON.stringify(completion(`key: ${UPSTREAM_KEY}`)).replace(UPSTREAM_KEY, [...UPSTREAM_KEY].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""));
    const forms: Behaviour[] = [
      (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`${event(`key: ${UPSTREAM_KEY.slice(0, half)}`)}${event(`${UPSTREAM_KEY.slice(half)} end`)}data: [DONE]\n\n`);
      },
      (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(escaped);
      },
      (res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip, gzip" });
        res.end(gzipSync(gzipSync(JSON.stringify(completion(`key: ${UPSTREAM_KEY}`)))));
      },
      (res) => {
        res.writeHead(200, { "content-type": "application/json", "x-echo": encodeURIComponent(UPSTREAM_KEY).replaceAll("-", "%2D") });
        res.end(JSON.stringify(completion("fine")));
      },
    ];
    const upstream = await startUpstream(t, upstreamOf((res, seen, index, up) => (forms[Number(/form (\d)/u.exec(JSON.stringify(seen.body.messages))?.[1] ?? 0)] as Behaviour)(res, seen, index, up)));
    const gateway = await startGatewayProcess(t, upstream);
    const { value, watch } = await watchWhile(gateway, () =>
      Promise.all(
        Array.from({ length: CONCURRENT }, async (_, i) => {
          const stream = i % 4 === 0;
          const response = await fetch(`${gateway.base}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${HOSTILE_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: message(`form ${i % 4}`), ...(stream ? { stream: true } : {}) }) });
          const raw = await response.text();
          // What a client decodes: the streamed deltas concatenated, or the JSON parsed back to text.
          const decoded = stream ? raw.split("\n").filter((l) => l.startsWith("data: {")).map((l) => (JSON.parse(l.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "").join("") : JSON.stringify(JSON.parse(raw));
          return { status: response.status, decoded, headers: JSON.stringify([...response.headers]) };
        }),
      ),
    );
    assertHeld(watch, t);
    for (const answer of value) {
      assert.equal(answer.status, 200);
      assert.ok(!answer.decoded.includes(UPSTREAM_KEY) && !decodeURIComponent(answer.headers).includes(UPSTREAM_KEY), answer.decoded);
    }
    assert.match(value[0]?.decoded ?? "", /^key: \[redacted\] end$/u);
  });

  it("holds its memory and keeps answering under a flood of idle connections, stalled headers and stalled bodies", async (t) => {
    const upstream = await startUpstream(t, upstreamOf(reply("unused")));
    const gateway = await startGatewayProcess(t, upstream);
    const { port } = new URL(gateway.base);
    const sockets: net.Socket[] = [];
    let closed = 0;
    t.after(() => {
      for (const socket of sockets) socket.destroy();
    });
    const open = (first?: string): Promise<void> =>
      new Promise((resolve) => {
        const socket = net.connect(Number(port), "127.0.0.1", () => {
          if (first !== undefined) socket.write(first);
          resolve();
        });
        socket.on("error", () => resolve());
        socket.once("close", () => closed++);
        socket.resume();
        sockets.push(socket);
      });
    const { watch } = await watchWhile(gateway, async () => {
      // Past the default cap of 1,024 connections: the oldest idle ones are closed to make room.
      for (let i = 0; i < 1500; i += 100) await Promise.all(Array.from({ length: 100 }, () => open()));
      await Promise.all(Array.from({ length: CONCURRENT }, () => open("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")));
      await Promise.all(Array.from({ length: CONCURRENT }, () => open(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOSTILE_KEY}\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n{"model":`)));
      await new Promise((r) => setTimeout(r, 1500));
    });
    assertHeld(watch, t);
    assert.ok(closed >= 1500 + 2 * CONCURRENT - 1024, `${closed} of ${sockets.length} connections were closed by the gateway`);
  });
});
