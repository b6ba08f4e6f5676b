// The gateway on a real workload: JSON extraction against a schema through the embedded model, the same requests sent
// three ways, side by side.
//
// Usage (after npm ci; the model is fetched if not cached; about 30 × 3 requests of up to 256 tokens):
//   node bench/gateway-workload.mjs [--upstream smollm2-135m] [--items 30] [--seed 0] [--max-tokens 256] [--out FILE]
//                                   [--gateway http://127.0.0.1:8787]   (a gateway already running; --upstream unused)
//
// Items: the json task's seeded records (`generateJsonCases`: person, task-list, contact, article, reading; the kinds
// take turns, so 30 items are 6 of each), each sent as an application would: the facts and the schema in the user
// message, and the schema as `response_format: { type: "json_schema" }` (the embedded model decodes under a grammar
// built from it, which fixes the JSON's shape but not every rule: patterns, ranges and item counts can still fail).
// Three modes, per item back to back, one request at a time:
//   - none:    no `reflect` — passed through; its reply is checked here, client-side, by the gateway's own schema check
//              (`buildRequestChecks`), so first draft = final;
//   - cascade: `reflect: { max_turns: 2 }` — reflect and retry only when the draft fails (stop: verified);
//   - always:  `reflect: { max_turns: 2, stop: "none" }` — no stop condition but the turn limit: every request makes
//              two attempts and returns the better (the later on a tie).
// First-draft pass (reflected modes): every check the gateway ran on attempt 1 passed (`reflect.checks`, turn 1).
// Final pass: the returned reply passes the same check, run here on every mode's reply (and compared with the
// gateway's `reflect.passed`). Tokens: the response's `usage.total_tokens` (every call the request caused); calls:
// the sum of `reflect.usage_by_role` (1 for a pass-through). Intervals: Wilson 95 %.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startReflectServe } from "./reflect-serve.mjs";

const dist = (file) => new URL(`../dist/${file}`, import.meta.url).href;
const { generateJsonCases } = await import(dist("tasks/json/index.js"));
const { buildRequestChecks } = await import(dist("critics/request/build.js"));
const { requestTask } = await import(dist("critics/request/request-task.js"));
const { wilsonInterval } = await import(dist("eval/estimate.js"));

/** The modes, each a `reflect` object (none: no field at all). */
const MODES = {
  none: undefined,
  cascade: { max_turns: 2 },
  always: { max_turns: 2, stop: "none" },
};

function parseArgs(argv) {
  const options = { upstream: "smollm2-135m", items: 30, seed: 0, maxTokens: 256, out: undefined, gateway: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--upstream") options.upstream = value();
    else if (flag === "--items") options.items = Number(value());
    else if (flag === "--seed") options.seed = Number(value());
    else if (flag === "--max-tokens") options.maxTokens = Number(value());
    else if (flag === "--out") options.out = value();
    else if (flag === "--gateway") options.gateway = value().replace(/\/+$/, "");
    else throw new Error(`unknown flag ${flag} — use --upstream SPEC, --items N, --seed S, --max-tokens N, --out FILE, --gateway URL`);
  }
  if (!Number.isInteger(options.items) || options.items < 1) throw new Error("--items must be a positive integer");
  return options;
}

// A first run fetches the model, so the gateway may take minutes to answer.
const startGateway = (upstream) => startReflectServe(["--upstream", upstream], { readyMs: 600_000, graceMs: 10_000 });

/** The request an application would send for a json item. */
function chatRequest(record, maxTokens) {
  const content = [record.prompt.trim(), "", "The JSON must be valid against this JSON Schema:", "```json", JSON.stringify(record.schema, null, 2), "```", "", "Reply with only the JSON value."].join("\n");
  return {
    model: "gateway",
    messages: [{ role: "user", content }],
    max_tokens: maxTokens,
    temperature: 0,
    response_format: { type: "json_schema", json_schema: { name: "item", schema: record.schema, strict: true } },
  };
}

async function send(url, body) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(900_000) });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, ms: performance.now() - started };
}

/** Every check the gateway ran on turn 1 passed (and it ran at least one). */
function firstDraftPassed(reflect) {
  const first = reflect.checks.filter((c) => c.turn === 1);
  return first.length > 0 && first.every((c) => c.pass === true);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const cases = generateJsonCases({ seed: options.seed, count: options.items });
  const gateway = options.gateway === undefined ? await startGateway(options.upstream) : { url: options.gateway, stop: async () => {} };
  process.once("SIGINT", () => gateway.stop().then(() => process.exit(130)));
  const rows = [];
  try {
    for (const [index, item] of cases.entries()) {
      const request = chatRequest(item.record, options.maxTokens);
      // The same check the gateway builds from response_format, run here on every reply.
      const check = requestTask(buildRequestChecks({ schema: { name: "item", schema: item.record.schema } }));
      for (const [mode, reflect] of Object.entries(MODES)) {
        const { status, json, text, ms } = await send(gateway.url, { ...request, ...(reflect === undefined ? {} : { reflect }) });
        const row = { item: item.id, kind: item.kind, mode, status, ms: Math.round(ms) };
        if (status !== 200 || json === undefined) {
          rows.push({ ...row, error: text.slice(0, 300) });
          process.stderr.write(`[${index + 1}/${cases.length}] ${item.id} ${mode}: HTTP ${status} ${text.slice(0, 200)}\n`);
          continue;
        }
        const reply = json.choices?.[0]?.message?.content ?? "";
        const verdict = await check.verify({ messages: request.messages, checks: {} }, reply);
        const finalPass = verdict.correct === true;
        const ext = json.reflect;
        const calls = ext === undefined ? 1 : Object.values(ext.usage_by_role ?? {}).reduce((n, r) => n + (r?.calls ?? 0), 0);
        rows.push({
          ...row,
          firstPass: ext === undefined ? finalPass : firstDraftPassed(ext),
          finalPass,
          gatewayPassed: ext?.passed ?? null,
          attempts: ext?.attempts ?? 1,
          stoppedBy: ext?.stopped_by ?? null,
          tokens: json.usage?.total_tokens ?? 0,
          calls,
        });
        process.stderr.write(`[${index + 1}/${cases.length}] ${item.id} ${mode}: ${finalPass ? "pass" : "fail"} (${ext?.attempts ?? 1} attempt(s), ${json.usage?.total_tokens} tokens, ${Math.round(ms)} ms)\n`);
      }
    }
  } finally {
    await gateway.stop();
  }
  if (options.out !== undefined) {
    mkdirSync(path.dirname(options.out), { recursive: true });
    writeFileSync(options.out, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  }
  print(options, rows);
}

const pct = (k, n) => {
  if (n === 0) return "—";
  const [lo, hi] = wilsonInterval(k, n);
  return `${((100 * k) / n).toFixed(1)} [${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`;
};

function print(options, rows) {
  const cpu = os.cpus();
  console.log(`gateway workload: ${options.items} json items (seed ${options.seed}), upstream ${options.gateway === undefined ? options.upstream : `behind ${options.gateway}`}, max_tokens ${options.maxTokens}, node ${process.version}, ${cpu.length} cores (${cpu[0]?.model ?? "?"})\n`);
  console.log("| mode | `reflect` | n | first-draft pass % [95% CI] | final pass % [95% CI] | lift (pts) | tokens / request | calls / request | attempts / request | s / request | HTTP errors |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [mode, reflect] of Object.entries(MODES)) {
    const all = rows.filter((r) => r.mode === mode);
    const ok = all.filter((r) => r.error === undefined);
    const n = ok.length;
    const first = ok.filter((r) => r.firstPass).length;
    const final = ok.filter((r) => r.finalPass).length;
    const mean = (pick) => (n === 0 ? "—" : (ok.reduce((s, r) => s + pick(r), 0) / n).toFixed(2));
    const lift = n === 0 ? "—" : `${final >= first ? "+" : ""}${((100 * (final - first)) / n).toFixed(1)}`;
    console.log(`| ${mode} | ${reflect === undefined ? "none" : `\`${JSON.stringify(reflect)}\``} | ${n} | ${pct(first, n)} | ${pct(final, n)} | ${lift} | ${mean((r) => r.tokens)} | ${mean((r) => r.calls)} | ${mean((r) => r.attempts)} | ${mean((r) => r.ms / 1000)} | ${all.length - n} |`);
  }
  const disagree = rows.filter((r) => r.gatewayPassed !== null && r.gatewayPassed !== undefined && r.gatewayPassed !== r.finalPass).length;
  console.log(`\nThe gateway's \`reflect.passed\` and the client-side check disagree on ${disagree} reflected request(s).`);
  const firstDrafts = new Map();
  for (const r of rows.filter((row) => row.error === undefined)) firstDrafts.set(r.item, [...(firstDrafts.get(r.item) ?? []), r.firstPass]);
  const split = [...firstDrafts.values()].filter((v) => new Set(v).size > 1).length;
  console.log(`Items whose first draft passed in one mode and failed in another (greedy decoding should give none): ${split}.`);
}

await main();
