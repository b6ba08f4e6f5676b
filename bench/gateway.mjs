// The latency the gateway adds in pass-through, side by side with a direct call to the same upstream, in one run.
//
// Usage (after npm ci, or npm run build):
//   node bench/gateway.mjs [--requests 1000] [--concurrency 1,16,64] [--stream] [--direct-only] [--seed 1]
//                          [--gateway-command "node other/bin/reflect.js serve --upstream {upstream} --port {port}"]
//                          [--baseline-command "node before/bin/reflect.js serve --upstream {upstream} --port {port}"]
//                          [--upstream-key KEY] [--client-keys N]
//
// - The upstream is a fast local OpenAI-compatible server (node:http, its own process): a fixed small completion,
//   or with --stream the same completion as SSE chunks.
// - The gateway is `node bin/reflect.js serve --upstream http://127.0.0.1:PORT/v1#fake` in its own process, so its
//   memory (VmRSS, sampled every 20 ms) is the gateway's alone. Requests carry no `reflect`: pass-through.
// - The client (this process) keeps `concurrency` requests in flight over keep-alive connections and times each one
//   from sending to the last byte of the body. At each concurrency each side gets --requests timed requests, after a
//   warm-up of 100, in two blocks run direct, gateway, gateway, direct (ABBA), so drift over the run hits both alike.
// - Added latency = gateway − direct; its 95 % interval for the median difference is a percentile bootstrap
//   (2,000 resamples of each side, seeded). p99 is the nearest-rank order statistic.
// - --baseline-command adds a second gateway (another build, e.g. a worktree at an earlier commit) measured in the
//   same run: blocks direct, gateway, baseline, baseline, gateway, direct; the table adds its figures and the
//   difference of the two gateways' medians with its interval.
// - --upstream-key sets the upstream's API key (env BENCH_UPSTREAM_KEY, passed with --upstream-key-env to the default
//   command; write `--upstream-key-env BENCH_UPSTREAM_KEY` into a --baseline-command yourself), so that the gateway's
//   key redaction is on the measured path, as in a deployment.
// - With two gateways, each one's CPU time (user + system, /proc/PID/stat) over its timed blocks is reported per
//   request: a measure of what the gateway itself costs that does not depend on how the 2 cores were shared.
// - --client-keys N starts every gateway with N client keys (REFLECT_GATEWAY_KEY=bench-client-key-0,…: N tenants on a
//   gateway that has them) and sends request i with key i mod N, so the key check and the tenant's accounting are on
//   the measured path; the direct side ignores the key.
// Prints a markdown table for BENCHMARKS.md. --direct-only (or a gateway that does not start) measures the direct
// side alone.
import { existsSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { root, startGatewayProcess, startUpstream as startUpstreamProcess, stopChild } from "./children.mjs";
import { block as timedBlock, cpuMsOf, quantile, rssOf } from "./load.mjs";
import { median, medianDifferenceInterval } from "./median-interval.mjs";

const self = fileURLToPath(import.meta.url);

// ---- the upstream, when this file runs as it (`--upstream-server`) ----

const CONTENT = "Hello! I am a fixed reply from the benchmark's upstream.";
const USAGE = { prompt_tokens: 12, completion_tokens: 11, total_tokens: 23 };

function upstreamServer() {
  const server = http.createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (part) => (body += part));
    request.on("end", () => {
      if (request.method === "GET" && request.url === "/v1/models") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [{ id: "fake", object: "model", created: 0, owned_by: "bench" }] }));
        return;
      }
      if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
        return;
      }
      let stream = false;
      try {
        stream = JSON.parse(body).stream === true;
      } catch {
        response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "bad JSON", type: "invalid_request_error" } }));
        return;
      }
      const base = { id: "chatcmpl-bench", created: 1_764_000_000, model: "fake" };
      if (!stream) {
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: CONTENT }, finish_reason: "stop" }], usage: USAGE }));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (delta, finish) => `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.write(chunk({ role: "assistant", content: "" }, null));
      for (const word of CONTENT.split(/(?<= )/)) response.write(chunk({ content: word }, null));
      response.write(chunk({}, "stop"));
      response.end("data: [DONE]\n\n");
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}


// ---- the benchmark ----

function parseArgs(argv) {
  const options = { requests: 1000, concurrency: [1, 16, 64], stream: false, directOnly: false, seed: 1, gatewayCommand: undefined, baselineCommand: undefined, upstreamKey: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--requests") options.requests = Number(value());
    else if (flag === "--concurrency") options.concurrency = value().split(",").map(Number);
    else if (flag === "--stream") options.stream = true;
    else if (flag === "--direct-only") options.directOnly = true;
    else if (flag === "--seed") options.seed = Number(value());
    else if (flag === "--gateway-command") options.gatewayCommand = value();
    else if (flag === "--baseline-command") options.baselineCommand = value();
    else if (flag === "--upstream-key") options.upstreamKey = value();
    else if (flag === "--client-keys") options.clientKeys = Number(value());
    else throw new Error(`unknown flag ${flag} — use --requests N, --concurrency 1,16,64, --stream, --direct-only, --seed S, --gateway-command CMD, --baseline-command CMD, --upstream-key KEY, --client-keys N`);
  }
  if (!Number.isInteger(options.requests) || options.requests < 4) throw new Error("--requests must be an integer ≥ 4");
  if (!options.concurrency.every((c) => Number.isInteger(c) && c >= 1)) throw new Error("--concurrency must list integers ≥ 1");
  return options;
}

/**
 * `reflect serve` in its own process, or `--gateway-command` (words split on spaces; `{upstream}` and `{port}` are
 * replaced) to measure another build or another gateway the same way. Ready when GET /healthz answers 200.
 */
async function startGateway(upstreamPort, command, upstreamKey) {
  const upstream = `http://127.0.0.1:${upstreamPort}/v1#fake`;
  if (command === undefined && !existsSync(new URL("../dist/cli/main.js", import.meta.url))) return { error: "dist/ is missing — run npm run build" };
  const argvOf = (port) =>
    command === undefined
      ? [process.execPath, `${root}bin/reflect.js`, "serve", "--upstream", upstream, "--host", "127.0.0.1", "--port", String(port), ...(upstreamKey === undefined ? [] : ["--upstream-key-env", "BENCH_UPSTREAM_KEY"])]
      : command.split(" ").filter((w) => w !== "").map((w) => w.replaceAll("{upstream}", upstream).replaceAll("{port}", String(port)));
  // Client keys only with --client-keys: the benchmark's requests carry those, and no other key the gateway would accept.
  const { REFLECT_GATEWAY_KEY: _key, ...rest } = process.env;
  const keys = clientKeys.length === 0 ? {} : { REFLECT_GATEWAY_KEY: clientKeys.join(",") };
  return startGatewayProcess(argvOf, upstreamKey === undefined ? { ...rest, ...keys } : { ...rest, ...keys, BENCH_UPSTREAM_KEY: upstreamKey });
}

/** The client keys of --client-keys N, and the next request's Authorization header (rotating through them). */
let clientKeys = [];
let nextKey = 0;
const authorization = () => ({ authorization: `Bearer ${clientKeys.length === 0 ? "bench" : clientKeys[nextKey++ % clientKeys.length]}` });

const BODY = (stream) => JSON.stringify({ model: "fake", messages: [{ role: "user", content: "Say hello." }], max_tokens: 16, ...(stream ? { stream: true } : {}) });

const block = (port, count, concurrency, stream) => timedBlock(port, count, concurrency, { path: "/v1/chat/completions", body: BODY(stream), headers: authorization });

/**
 * Each side gets `requests` timed requests at `concurrency`, after a warm-up, in blocks ordered direct, gateway,
 * gateway, direct.
 */
async function measure(options, targets, concurrency, sampler, pids = {}) {
  const first = Math.floor(options.requests / 2);
  const second = options.requests - first;
  const blocks = [["direct", first], ["gateway", first], ["baseline", first], ["baseline", second], ["gateway", second], ["direct", second]].filter(([name]) => targets[name] !== undefined);
  const result = Object.fromEntries(Object.keys(targets).map((name) => [name, { latencies: [], errors: 0, wallMs: 0, requests: 0, cpuMs: 0 }]));
  for (const name of Object.keys(targets)) await block(targets[name], Math.min(100, options.requests), concurrency, options.stream);
  for (const [name, count] of blocks) {
    if (name === "gateway") sampler?.start();
    const cpuBefore = pids[name] === undefined ? null : cpuMsOf(pids[name]);
    const { latencies, errors, wallMs } = await block(targets[name], count, concurrency, options.stream);
    const cpuAfter = pids[name] === undefined ? null : cpuMsOf(pids[name]);
    if (name === "gateway") sampler?.stop();
    const r = result[name];
    if (cpuBefore !== null && cpuAfter !== null) r.cpuMs += cpuAfter - cpuBefore;
    r.latencies.push(...latencies);
    r.errors += errors;
    r.wallMs += wallMs;
    r.requests += count;
  }
  for (const r of Object.values(result)) r.latencies.sort((x, y) => x - y);
  return result;
}

/** Samples the gateway's RSS every 20 ms while started; keeps the peak. */
function rssSampler(pid) {
  let timer;
  let peak = 0;
  return {
    start() {
      timer = setInterval(() => (peak = Math.max(peak, rssOf(pid) ?? 0)), 20);
    },
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, rssOf(pid) ?? 0);
    },
    peak: () => peak,
  };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.clientKeys !== undefined && !(Number.isInteger(options.clientKeys) && options.clientKeys >= 1)) throw new Error("--client-keys takes a whole number ≥ 1");
  clientKeys = Array.from({ length: options.clientKeys ?? 0 }, (_, i) => `bench-client-key-${i}`);
  const upstream = await startUpstreamProcess(self);
  let gateway;
  const children = [upstream.child];
  const cleanUp = async () => {
    for (const child of children) await stopChild(child);
  };
  process.once("SIGINT", () => cleanUp().then(() => process.exit(130)));
  try {
    let baseline;
    if (!options.directOnly) {
      gateway = await startGateway(upstream.port, options.gatewayCommand, options.upstreamKey);
      if (gateway.child !== undefined) children.push(gateway.child);
      if (options.baselineCommand !== undefined) {
        baseline = await startGateway(upstream.port, options.baselineCommand, options.upstreamKey);
        if (baseline.child !== undefined) children.push(baseline.child);
        if (baseline.error !== undefined) throw new Error(`the baseline gateway did not start: ${baseline.error}`);
      }
    }
    const targets = { direct: upstream.port, ...(gateway?.port === undefined ? {} : { gateway: gateway.port }), ...(baseline?.port === undefined ? {} : { baseline: baseline.port }) };
    const idleRss = gateway?.child === undefined ? null : rssOf(gateway.child.pid);
    const rows = [];
    let throughput;
    let peakRss = null;
    for (const concurrency of options.concurrency) {
      const sampler = gateway?.child === undefined || concurrency !== 64 ? undefined : rssSampler(gateway.child.pid);
      const result = await measure(options, targets, concurrency, sampler, { ...(gateway?.child === undefined ? {} : { gateway: gateway.child.pid }), ...(baseline?.child === undefined ? {} : { baseline: baseline.child.pid }) });
      if (sampler !== undefined) peakRss = sampler.peak();
      rows.push({ concurrency, result });
      if (concurrency === 64) throughput = result;
    }
    print(options, rows, throughput, gateway, idleRss, peakRss);
    if (baseline !== undefined) printBaseline(options, rows);
  } finally {
    await cleanUp();
  }
}

const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : "—");
const mib = (bytes) => (bytes === null ? "—" : (bytes / 2 ** 20).toFixed(1));

function print(options, rows, throughput, gateway, idleRss, peakRss) {
  const cpu = os.cpus();
  console.log(`gateway pass-through benchmark: ${options.requests} requests per side and concurrency, ${options.stream ? "SSE streaming" : "JSON"} replies, node ${process.version}, ${cpu.length} cores (${cpu[0]?.model ?? "?"})`);
  if (gateway?.error !== undefined) console.log(`gateway not measured: ${gateway.error}`);
  console.log("");
  console.log("| concurrency | direct p50 ms | direct p99 ms | gateway p50 ms | gateway p99 ms | added p50 ms [95% CI] | added p99 ms | errors direct / gateway |");
  console.log("|---|---|---|---|---|---|---|---|");
  rows.forEach(({ concurrency, result }, index) => {
    const d = result.direct;
    const g = result.gateway;
    const dp50 = median(d.latencies);
    const dp99 = quantile(d.latencies, 0.99);
    if (g === undefined) {
      console.log(`| ${concurrency} | ${ms(dp50)} | ${ms(dp99)} | — | — | — | — | ${d.errors} / — |`);
      return;
    }
    const gp50 = median(g.latencies);
    const gp99 = quantile(g.latencies, 0.99);
    const [lo, hi] = d.latencies.length > 0 && g.latencies.length > 0 ? medianDifferenceInterval(d.latencies, g.latencies, options.seed + index) : [Number.NaN, Number.NaN];
    console.log(`| ${concurrency} | ${ms(dp50)} | ${ms(dp99)} | ${ms(gp50)} | ${ms(gp99)} | ${ms(gp50 - dp50)} [${ms(lo)}, ${ms(hi)}] | ${ms(gp99 - dp99)} | ${d.errors} / ${g.errors} |`);
  });
  if (throughput !== undefined) {
    const rate = (r) => (r === undefined ? "—" : `${((r.requests - r.errors) / (r.wallMs / 1000)).toFixed(0)} req/s (${r.errors} errors of ${r.requests})`);
    console.log("");
    console.log(`At concurrency 64: direct ${rate(throughput.direct)}; gateway ${rate(throughput.gateway)}.`);
  }
  if (gateway?.child !== undefined) console.log(`Gateway RSS: ${mib(idleRss)} MiB idle after start${peakRss === null ? "" : `, ${mib(peakRss)} MiB peak under 64 concurrent requests`}.`);
}

/** The two gateways side by side: each one's added latency over direct, and after − before with its interval. */
function printBaseline(options, rows) {
  console.log("");
  console.log("| concurrency | before p50 / p99 ms | after p50 / p99 ms | added before p50 / p99 ms | added after p50 / p99 ms | after − before p50 ms [95% CI] | after / before added p50 | gateway CPU µs per request, before / after | errors before / after |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  rows.forEach(({ concurrency, result }, index) => {
    const d = result.direct;
    const a = result.gateway;
    const b = result.baseline;
    if (a === undefined || b === undefined) return;
    const dp50 = median(d.latencies);
    const dp99 = quantile(d.latencies, 0.99);
    const [ap50, ap99, bp50, bp99] = [median(a.latencies), quantile(a.latencies, 0.99), median(b.latencies), quantile(b.latencies, 0.99)];
    const [lo, hi] = medianDifferenceInterval(b.latencies, a.latencies, options.seed + 100 + index);
    const ratio = (ap50 - dp50) / (bp50 - dp50);
    const cpu = (r) => (r.cpuMs > 0 ? ((r.cpuMs * 1000) / r.requests).toFixed(0) : "—");
    console.log(`| ${concurrency} | ${ms(bp50)} / ${ms(bp99)} | ${ms(ap50)} / ${ms(ap99)} | ${ms(bp50 - dp50)} / ${ms(bp99 - dp99)} | ${ms(ap50 - dp50)} / ${ms(ap99 - dp99)} | ${ms(ap50 - bp50)} [${ms(lo)}, ${ms(hi)}] | ${Number.isFinite(ratio) ? ratio.toFixed(2) : "—"} | ${cpu(b)} / ${cpu(a)} | ${b.errors} / ${a.errors} |`);
  });
}

if (process.argv[2] === "--upstream-server") {
  upstreamServer();
} else {
  await main();
}
