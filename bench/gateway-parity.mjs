// One loop, two doors: the same 100 arithmetic items through `reflect serve` (the official `openai` npm client, one
// request at a time, `reflect: { task: "arithmetic", item }`) and through `reflect eval --strategy cascade`, on the
// embedded model, greedy. The gateway runs the loop of `reflect eval`, so per item the attempts, the verdicts and the
// returned text must be the same. The gateway's record then goes through `reflect report` (the time axis) and
// `reflect data generate --from-record` (the failed drafts → ReflectEvo reflection data).
//
// Usage (after npm ci; one model process at a time, run on a quiet machine):
//   node bench/gateway-parity.mjs [--items 100] [--turns 2] [--feedback detailed|binary] [--data-limit 10]
//                                 [--out bench/runs/gateway-parity]   (--data-limit 0: no data generation)
// Prints a markdown summary for BENCHMARKS.md and writes <out>/{record,eval,report,data,requests.jsonl}.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { readLogIn } from "../dist/record/log.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = (file) => new URL(`../dist/${file}`, import.meta.url).href;
const { generateArithmetic, arithmeticPrompt } = await import(dist("tasks/arithmetic/index.js"));
const { wilsonInterval } = await import(dist("eval/estimate.js"));

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at < 0 ? fallback : args[at + 1];
};
const items = Number(flag("--items", "100"));
const dataLimit = Number(flag("--data-limit", "10"));
const feedback = flag("--feedback", "detailed");
const turns = Number(flag("--turns", "2"));
const out = path.resolve(flag("--out", path.join(root, "bench/runs/gateway-parity")));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
/** `node bin/reflect.js ...argv`, as spawn's first two arguments. */
const reflect = (...argv) => ["node", [path.join(root, "bin/reflect.js"), ...argv]];

// ---- 1. the gateway ----
const port = 18000 + Math.floor(Math.random() * 1000);
const gateway = spawn(...reflect("serve", "--upstream", "smollm2-135m", "--port", String(port), "--record", path.join(out, "record"), "--record-content"), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
await new Promise((resolve, reject) => {
  gateway.stdout.on("data", (chunk) => (String(chunk).includes("http://") ? resolve() : undefined));
  gateway.once("exit", (code) => reject(new Error(`the gateway exited with ${code} before it listened`)));
});
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused" });
const work = generateArithmetic({ seed: 0, count: items });
const started = performance.now();
const gatewayResults = [];
for (const item of work) {
  const { data, response } = await client.chat.completions
    .create({ model: "smollm2-135m", messages: arithmeticPrompt(item.record), max_tokens: 256, temperature: 0, reflect: { task: "arithmetic", item: item.record, max_turns: turns, feedback, reflection_max_tokens: 128 } })
    .withResponse();
  gatewayResults.push({ id: item.id, content: data.choices[0].message.content, usage: data.usage, reflect: data.reflect, attempts: response.headers.get("x-reflect-attempts") });
}
const gatewaySeconds = (performance.now() - started) / 1000;
gateway.kill("SIGTERM");
await new Promise((resolve) => gateway.once("exit", resolve));
writeFileSync(path.join(out, "requests.jsonl"), gatewayResults.map((r) => JSON.stringify(r)).join("\n") + "\n");

// ---- 2. the same items through reflect eval (after the gateway exited: one model process at a time) ----
const evalStarted = performance.now();
const evalRun = spawnSync(...reflect("eval", "--task", "arithmetic", "--strategy", "cascade", "--turns", String(turns), "--feedback", feedback, "--limit", String(items), "--seed", "0", "--out", path.join(out, "eval"), "--json"), { cwd: root, encoding: "utf8" });
if (evalRun.status !== 0) throw new Error(`reflect eval failed: ${evalRun.stderr}`);
const evalSeconds = (performance.now() - evalStarted) / 1000;
const episodes = (await readLogIn(path.join(out, "eval"), "episodes", { noun: "episode" })).values;
const byId = new Map(episodes.map((e) => [e.id, e]));

// ---- 3. compare, item by item ----
let sameText = 0;
let sameVerdicts = 0;
const first = { gateway: 0, eval: 0 };
const final = { gateway: 0, eval: 0 };
let flipsUp = 0;
for (const [index, result] of gatewayResults.entries()) {
  const episode = byId.get(work[index].id);
  const evalText = episode.attempts[episode.selected - 1].call.output;
  if (evalText === result.content) sameText++;
  const gatewayVerdicts = result.reflect.checks.map((c) => c.pass);
  const evalVerdicts = episode.attempts.map((a) => a.verdict.correct);
  if (JSON.stringify(gatewayVerdicts) === JSON.stringify(evalVerdicts)) sameVerdicts++;
  if (gatewayVerdicts[0] === true) first.gateway++;
  if (evalVerdicts[0] === true) first.eval++;
  if (result.reflect.passed) final.gateway++;
  if (episode.correct) final.eval++;
  if (gatewayVerdicts[0] === false && result.reflect.passed) flipsUp++;
}
const pct = (k) => `${((100 * k) / items).toFixed(1)} %`;
const ci = (k) => {
  const [lo, hi] = wilsonInterval(k, items);
  return `[${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`;
};

// ---- 4. the record → report (time axis) and → reflection data ----
const report = spawnSync(...reflect("report", path.join(out, "record"), "--out", path.join(out, "report")), { cwd: root, encoding: "utf8" });
writeFileSync(path.join(out, "report.txt"), report.stdout + report.stderr);
const dataStarted = performance.now();
const data = dataLimit === 0 ? { status: "skipped", stdout: "", stderr: "" } : spawnSync(...reflect("data", "generate", "--from-record", path.join(out, "record"), "--model", "smollm2-135m", "--limit", String(dataLimit), "--out", path.join(out, "data")), { cwd: root, encoding: "utf8" });
writeFileSync(path.join(out, "data.txt"), data.stdout + data.stderr);
const dataSeconds = (performance.now() - dataStarted) / 1000;

console.log(`## gateway ⇄ reflect eval parity: ${items} arithmetic items (seed 0), SmolLM2-135M, cascade, ${turns} turns, ${feedback} feedback, greedy\n`);
console.log("| door | first draft right [95% CI] | final right [95% CI] | wrong→right | seconds |");
console.log("|---|---|---|---|---|");
console.log(`| reflect serve + openai client | ${pct(first.gateway)} ${ci(first.gateway)} | ${pct(final.gateway)} ${ci(final.gateway)} | ${flipsUp} | ${gatewaySeconds.toFixed(1)} |`);
console.log(`| reflect eval --strategy cascade | ${pct(first.eval)} ${ci(first.eval)} | ${pct(final.eval)} ${ci(final.eval)} | — | ${evalSeconds.toFixed(1)} |`);
console.log(`\nSame verdict sequence on ${sameVerdicts}/${items} items; same returned text on ${sameText}/${items}.`);
console.log(`report exit ${report.status}; data generate --from-record --limit ${dataLimit}: exit ${data.status} in ${dataSeconds.toFixed(1)} s (${out}/data.txt)`);
