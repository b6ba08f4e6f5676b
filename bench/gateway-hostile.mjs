// How `reflect serve` holds up while 16 hostile requests run at once: the latency of `/healthz` and of pass-through
// requests, and the gateway's resident memory, scenario by scenario.
//
// Usage (after npm ci, or npm run build):
//   node bench/gateway-hostile.mjs [--scenarios idle,large-schemas,unique-items,catastrophic-pattern,deep-items,idle-flood]
//                                  [--gateway-command "node other/bin/reflect.js serve --upstream {upstream} --port {port}"]
//
// Four kinds of process, so that each measures only what it should:
// - The upstream: a fast local OpenAI-compatible server (node:http, its own process) that picks its reply from the
//   request's user message: "probe" → a short completion; "unique" → a JSON array of 15,000 distinct objects;
//   "tools" → 40 tool calls of `lookup` whose argument backtracks on `^(a+)+$`; "regex" → "word " × 2,000 then "!";
//   anything else → `{"a_0": "x"}`.
// - The gateway: `node bin/reflect.js serve --upstream http://127.0.0.1:PORT/v1#fake --port P --upstream-key-env
//   BENCH_UPSTREAM_KEY` with two client keys (REFLECT_GATEWAY_KEY=hostile-key,probe-key), a fresh one per scenario.
// - The probes (a child process of this script): `/healthz` every 25 ms and a pass-through chat completion every
//   100 ms, each on a connection of its own as a load balancer's probe opens one, with the probe key; and the
//   gateway's VmRSS every 20 ms, read with async fs. They start 300 ms before the hostile requests and stop when all
//   of them have answered.
// - The hostile client (this process), with the hostile key; its bodies are built before the probes start.
//
// Scenarios: idle (no hostile requests, 3 s of probing); large-schemas (16 distinct 1,500-property response schemas,
// and 16 of 30,000 properties, over the limit); unique-items (uniqueItems over 15,000 objects); catastrophic-pattern
// (14 requests whose tool parameter pattern backtracks over 40 tool calls, 2 with a backtracking reflect.regex);
// deep-items (a 50,000-deep reflect.item for every task family, 16 at a time); idle-flood (1,500 idle connections,
// 16 with stalled headers and 16 with stalled bodies, held 2 s). Each scenario ends within 120 s.
// Prints a markdown table for BENCHMARKS.md; p99 is the nearest-rank order statistic.
import { existsSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { children, root, startChild, startGatewayProcess, startUpstream as startUpstreamProcess, stopChild } from "./children.mjs";

const self = fileURLToPath(import.meta.url);

const HOSTILE_KEY = "hostile-key";
const PROBE_KEY = "probe-key";
const UPSTREAM_KEY = "sk-bench-upstream-key-0000";
const CONCURRENT = 16;
const SCENARIO_TIMEOUT_MS = 120_000;
const SCENARIOS = ["idle", "large-schemas", "unique-items", "catastrophic-pattern", "deep-items", "idle-flood"];

// ---- the upstream, when this file runs as it (`--upstream-server`) ----

function upstreamServer() {
  const base = { id: "chatcmpl-bench", object: "chat.completion", created: 1_764_000_000, model: "fake" };
  const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
  const completion = (message, finish = "stop") => Buffer.from(JSON.stringify({ ...base, choices: [{ index: 0, message: { role: "assistant", ...message }, logprobs: null, finish_reason: finish }], usage }));
  const text = (content) => completion({ content });
  const calls = Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, type: "function", function: { name: "lookup", arguments: JSON.stringify({ q: `${"a".repeat(28)}!` }) } }));
  // Every reply is built once, at start: the upstream only sends.
  const replies = {
    probe: text("ok"),
    unique: text(JSON.stringify(Array.from({ length: 15_000 }, (_, i) => ({ i, tag: `item-${i}` })))),
    tools: completion({ content: null, tool_calls: calls }, "tool_calls"),
    regex: text(`${"word ".repeat(2000)}!`),
    other: text('{"a_0": "x"}'),
  };
  const send = (response, status, body) => response.writeHead(status, { "content-type": "application/json", "content-length": body.length }).end(body);
  const error = (message) => Buffer.from(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (part) => chunks.push(part));
    request.on("end", () => {
      if (request.method === "GET" && request.url === "/v1/models") {
        send(response, 200, Buffer.from(JSON.stringify({ object: "list", data: [{ id: "fake", object: "model", created: 0, owned_by: "bench" }] })));
        return;
      }
      if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
        send(response, 404, error("not found"));
        return;
      }
      let messages;
      try {
        messages = JSON.parse(Buffer.concat(chunks).toString("utf8")).messages;
      } catch {
        send(response, 400, error("bad JSON"));
        return;
      }
      const user = Array.isArray(messages) ? messages.findLast((m) => m?.role === "user") : undefined;
      const content = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
      const kind = ["probe", "unique", "tools", "regex"].find((k) => content.startsWith(k)) ?? "other";
      send(response, 200, replies[kind]);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
  process.on("SIGTERM", () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

// ---- the probes, a process of their own (`node -e PROBES ARGS`, with an IPC channel) ----

const PROBES = `
const { base, pid, key, body } = JSON.parse(process.argv[1]);
const http = require("node:http");
const { readFile } = require("node:fs/promises");
const watch = { healthzMs: [], passMs: [], rssPeakMb: 0, failures: [] };
let running = true;
const timed = (path, payload) => new Promise((resolve) => {
  const started = performance.now();
  let failed = false;
  const fail = (why) => { if (!failed) { failed = true; watch.failures.push(path + ": " + why); } };
  const request = http.request(base + path, { method: payload === undefined ? "GET" : "POST", agent: false, headers: { authorization: "Bearer " + key, "content-type": "application/json" } }, (res) => {
    res.resume();
    res.on("end", () => {
      if (res.statusCode !== 200) fail(String(res.statusCode));
      resolve(performance.now() - started);
    });
    res.on("error", (error) => { fail(error.message); resolve(performance.now() - started); });
  });
  request.setTimeout(10000, () => request.destroy(new Error("no answer in 10 s")));
  request.on("error", (error) => { fail(error.message); resolve(performance.now() - started); });
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
const rss = async () => {
  try {
    const m = /VmRSS:\\s+(\\d+) kB/.exec(await readFile("/proc/" + pid + "/status", "utf8"));
    return m === null ? 0 : Number(m[1]) / 1024;
  } catch { return 0; }
};
const probes = [
  loop(25, async () => { watch.healthzMs.push(await timed("/healthz")); }),
  loop(100, async () => { watch.passMs.push(await timed("/v1/chat/completions", body)); }),
  loop(20, async () => { watch.rssPeakMb = Math.max(watch.rssPeakMb, await rss()); }),
];
process.once("message", async () => { running = false; await Promise.all(probes); process.send(watch, () => process.disconnect()); });
process.on("disconnect", () => process.exit(0));
setTimeout(() => process.send("warm"), 300);
`;

// ---- the benchmark ----

function parseArgs(argv) {
  const options = { scenarios: SCENARIOS, gatewayCommand: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--scenarios") options.scenarios = value().split(",").map((s) => s.trim()).filter((s) => s !== "");
    else if (flag === "--gateway-command") options.gatewayCommand = value();
    else throw new Error(`unknown flag ${flag} — use --scenarios ${SCENARIOS.join(",")}, --gateway-command CMD`);
  }
  const unknown = options.scenarios.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length > 0 || options.scenarios.length === 0) throw new Error(`--scenarios: unknown ${unknown.join(", ") || "(none given)"} — pick from ${SCENARIOS.join(", ")}`);
  return options;
}

/** The gateway's argv for a port: `reflect serve`, or `--gateway-command` with `{upstream}` and `{port}` replaced. */
function gatewayArgv(upstreamPort, port, command) {
  const upstream = `http://127.0.0.1:${upstreamPort}/v1#fake`;
  if (command === undefined) return [process.execPath, `${root}bin/reflect.js`, "serve", "--upstream", upstream, "--host", "127.0.0.1", "--port", String(port), "--upstream-key-env", "BENCH_UPSTREAM_KEY"];
  return command.split(" ").filter((w) => w !== "").map((w) => w.replaceAll("{upstream}", upstream).replaceAll("{port}", String(port)));
}

/** A fresh gateway with the two client keys and the upstream key, ready when GET /healthz answers 200. */
function startGateway(upstreamPort, command) {
  const env = { ...process.env, REFLECT_GATEWAY_KEY: `${HOSTILE_KEY},${PROBE_KEY}`, BENCH_UPSTREAM_KEY: UPSTREAM_KEY };
  return startGatewayProcess((port) => gatewayArgv(upstreamPort, port, command), env);
}


/** Starts the probes and resolves once they have run 300 ms; `stop()` resolves with what they saw. */
async function startProbes(gateway) {
  const body = JSON.stringify({ model: "fake", messages: [{ role: "user", content: "probe" }] });
  const args = JSON.stringify({ base: `http://127.0.0.1:${gateway.port}`, pid: gateway.child.pid, key: PROBE_KEY, body });
  const child = startChild(process.execPath, ["-e", PROBES, args], process.env, ["ignore", "inherit", "inherit", "ipc"]);
  await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.exited.then(({ code }) => reject(new Error(`the probes exited (${code})`)));
  });
  return {
    async stop() {
      const watch = new Promise((resolve) => child.once("message", resolve));
      child.send("stop");
      // A probe waits at most 10 s for its answer; past 20 s the probes are stopped and report nothing.
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const result = await Promise.race([watch, child.exited.then(() => null)]);
      clearTimeout(timer);
      await stopChild(child);
      return result;
    },
  };
}

/** One hostile request over a connection of its own: its status, and for a 200 whether its checks could not judge. */
function hostileRequest(port, body, inFlight) {
  return new Promise((resolve) => {
    const request = http.request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", agent: false, headers: { authorization: `Bearer ${HOSTILE_KEY}`, "content-type": "application/json", "content-length": body.length } }, (response) => {
      const chunks = [];
      response.on("data", (part) => chunks.push(part));
      response.on("end", () => {
        inFlight.delete(request);
        let cannotJudge = false;
        if (response.statusCode === 200) {
          try {
            cannotJudge = JSON.parse(Buffer.concat(chunks).toString("utf8")).reflect?.passed === null;
          } catch {
            // counted as a 200 that judged
          }
        }
        resolve({ status: String(response.statusCode), cannotJudge });
      });
      response.on("error", () => resolve({ status: request.timedOut ? "timeout" : "error", cannotJudge: false }));
    });
    inFlight.add(request);
    request.on("error", () => {
      inFlight.delete(request);
      resolve({ status: request.timedOut ? "timeout" : "error", cannotJudge: false });
    });
    request.end(body);
  });
}

/** Sends `bodies`, `batch` at a time; every request still in flight at the scenario's deadline is abandoned. */
async function sendAll(port, bodies, batch, deadline) {
  const inFlight = new Set();
  const timer = setTimeout(() => {
    for (const request of inFlight) {
      request.timedOut = true;
      request.destroy();
    }
  }, Math.max(0, deadline - Date.now()));
  const answers = [];
  try {
    for (let i = 0; i < bodies.length; i += batch) {
      if (Date.now() >= deadline) {
        answers.push(...bodies.slice(i).map(() => ({ status: "timeout", cannotJudge: false })));
        break;
      }
      answers.push(...(await Promise.all(bodies.slice(i, i + batch).map((body) => hostileRequest(port, body, inFlight)))));
    }
  } finally {
    clearTimeout(timer);
  }
  return { answers: summarizeAnswers(answers) };
}

function summarizeAnswers(answers) {
  const byStatus = new Map();
  for (const { status, cannotJudge } of answers) {
    const entry = byStatus.get(status) ?? { count: 0, cannotJudge: 0 };
    entry.count++;
    if (cannotJudge) entry.cannotJudge++;
    byStatus.set(status, entry);
  }
  return [...byStatus.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, { count, cannotJudge }]) => `${count} × ${status}${status === "200" ? ` (${cannotJudge} cannot judge)` : ""}`)
    .join(", ");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const chat = (content, extra) => ({ model: "fake", messages: [{ role: "user", content }], ...extra });
const jsonSchema = (schema) => ({ type: "json_schema", json_schema: { name: "out", schema } });

function wideSchema(properties, salt) {
  const props = {};
  for (let i = 0; i < properties; i++) props[`${salt}_${i}`] = { type: "string", maxLength: 40 };
  return { type: "object", properties: props };
}

/**
 * Each scenario: `prepare()` builds its bodies (before the probes start) and returns `run(port, deadline)`, the hostile
 * work, which resolves with the row's hostile-answers cell.
 */
const scenarios = {
  idle: async () => async () => {
    await sleep(3000);
    return { answers: "— (3 s of probing)" };
  },
  "large-schemas": async () => {
    const bodies = [
      ...Array.from({ length: CONCURRENT }, (_, i) => chat("large", { response_format: jsonSchema(wideSchema(1500, `s${i}`)), reflect: { max_turns: 1 } })),
      ...Array.from({ length: CONCURRENT }, (_, i) => chat("huge", { response_format: jsonSchema(wideSchema(30_000, `h${i}`)), reflect: {} })),
    ].map((body) => Buffer.from(JSON.stringify(body)));
    return (port, deadline) => sendAll(port, bodies, bodies.length, deadline);
  },
  "unique-items": async () => {
    const schema = { type: "array", uniqueItems: true, items: { type: "object" } };
    const bodies = Array.from({ length: CONCURRENT }, (_, i) => Buffer.from(JSON.stringify(chat(`unique ${i}`, { max_tokens: 30_000, response_format: jsonSchema(schema), reflect: { max_turns: 1 } }))));
    return (port, deadline) => sendAll(port, bodies, bodies.length, deadline);
  },
  "catastrophic-pattern": async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } }, required: ["q"] } } }];
    const bodies = [
      ...Array.from({ length: CONCURRENT - 2 }, () => chat("tools", { tools, reflect: { max_turns: 1 } })),
      ...Array.from({ length: 2 }, () => chat("regex", { max_tokens: 2000, reflect: { max_turns: 1, regex: "^(\\w+\\s?)*$" } })),
    ].map((body) => Buffer.from(JSON.stringify(body)));
    return (port, deadline) => sendAll(port, bodies, bodies.length, deadline);
  },
  "deep-items": async () => {
    const { taskFamilies } = await import(pathToFileURL(`${root}dist/tasks/registry.js`).href);
    // Written as text: JSON.stringify itself cannot go 50,000 deep.
    const deep = `${"[".repeat(50_000)}1${"]".repeat(50_000)}`;
    const bodies = taskFamilies.map((family) => Buffer.from(`{"model": "fake", "messages": [{"role": "user", "content": "deep"}], "reflect": {"task": ${JSON.stringify(family.name)}, "item": {"question": "q", "extra": ${deep}}}}`));
    return (port, deadline) => sendAll(port, bodies, CONCURRENT, deadline);
  },
  "idle-flood": async () => {
    const stalledHeaders = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    const stalledBody = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOSTILE_KEY}\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n{"model":`;
    return async (port, deadline) => {
      const sockets = [];
      let closedByGateway = 0;
      let failed = 0;
      let ending = false;
      const open = (first) =>
        new Promise((resolve) => {
          const socket = net.connect(port, "127.0.0.1", () => {
            if (first !== undefined) socket.write(first);
            resolve();
          });
          socket.on("error", () => {
            failed++;
            resolve();
          });
          socket.once("close", () => {
            if (!ending) closedByGateway++;
          });
          socket.resume();
          sockets.push(socket);
        });
      try {
        for (let i = 0; i < 1500 && Date.now() < deadline; i += 100) await Promise.all(Array.from({ length: 100 }, () => open()));
        await Promise.all(Array.from({ length: CONCURRENT }, () => open(stalledHeaders)));
        await Promise.all(Array.from({ length: CONCURRENT }, () => open(stalledBody)));
        await sleep(Math.min(2000, Math.max(0, deadline - Date.now())));
      } finally {
        ending = true;
        for (const socket of sockets) socket.destroy();
      }
      return { answers: `${sockets.length} connections (1,500 idle, ${CONCURRENT} stalled headers, ${CONCURRENT} stalled bodies): ${closedByGateway} closed by the gateway${failed > 0 ? `, ${failed} errors` : ""}` };
    };
  },
};

function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const ms = (x) => (Number.isFinite(x) ? x.toFixed(1) : "—");

function latencyCell(values) {
  if (values === undefined || values.length === 0) return "— (0)";
  const sorted = [...values].sort((a, b) => a - b);
  return `${ms(quantile(sorted, 0.5))} / ${ms(quantile(sorted, 0.99))} / ${ms(sorted.at(-1))} (${sorted.length})`;
}

function failuresCell(failures) {
  if (failures.length === 0) return "0";
  const counts = new Map();
  for (const f of failures) counts.set(f, (counts.get(f) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([f, n]) => `${f} ×${n}`);
  return `${failures.length} (${top.join("; ")}${counts.size > 3 ? "; …" : ""})`;
}

async function runScenario(name, upstreamPort, options) {
  const run = await scenarios[name]();
  const gateway = await startGateway(upstreamPort, options.gatewayCommand);
  if (gateway.error !== undefined) return `| ${name} | gateway did not start: ${gateway.error.replaceAll("|", "\\|")} | — | — | — | — |`;
  let probes;
  try {
    probes = await startProbes(gateway);
    const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
    let result;
    try {
      result = await run(gateway.port, deadline);
    } catch (error) {
      result = { answers: `failed: ${error.message}` };
    }
    const watch = await probes.stop();
    probes = undefined;
    if (watch === null) return `| ${name} | ${result.answers} | — | — | — | probes did not report |`;
    return `| ${name} | ${result.answers} | ${latencyCell(watch.healthzMs)} | ${latencyCell(watch.passMs)} | ${watch.rssPeakMb.toFixed(1)} | ${failuresCell(watch.failures)} |`;
  } finally {
    if (probes !== undefined) await probes.stop().catch(() => {});
    await stopChild(gateway.child);
  }
}

function quote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.gatewayCommand === undefined && !existsSync(new URL("../dist/cli/main.js", import.meta.url))) throw new Error("dist/ is missing — run npm run build");
  if (options.scenarios.includes("deep-items") && !existsSync(new URL("../dist/tasks/registry.js", import.meta.url))) throw new Error("dist/ is missing — run npm run build");
  const cpu = os.cpus();
  const load = os.loadavg().map((x) => x.toFixed(2)).join(" / ");
  const command = ["node", path.relative(process.cwd(), self) || self, ...process.argv.slice(2)].map(quote).join(" ");
  console.log(`gateway under hostile requests: node ${process.version}, ${cpu.length} cores (${cpu[0]?.model ?? "?"}), load average ${load} (1 / 5 / 15 min) at start`);
  console.log(`command: ${command}`);
  console.log(`gateway: ${gatewayArgv("UPSTREAM", "PORT", options.gatewayCommand).map((w) => (w === process.execPath ? "node" : w.startsWith(root) ? path.relative(root, w) : w)).map(quote).join(" ")}`);
  console.log("");
  const upstream = await startUpstreamProcess(self);
  console.log("| scenario | hostile answers | /healthz p50 / p99 / max ms (n) | pass-through p50 / p99 / max ms (n) | gateway RSS peak MiB | probe failures |");
  console.log("|---|---|---|---|---|---|");
  try {
    for (const name of options.scenarios) console.log(await runScenario(name, upstream.port, options));
  } finally {
    await stopChild(upstream.child);
  }
}

function killAll() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

if (process.argv[2] === "--upstream-server") {
  upstreamServer();
} else {
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      Promise.all([...children].map(stopChild)).finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
      setTimeout(() => process.exit(130), 6000).unref();
    });
  }
  try {
    await main();
  } catch (error) {
    console.error(`gateway-hostile: ${error.message}`);
    process.exitCode = 1;
  }
  killAll();
}
