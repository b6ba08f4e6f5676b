// The loop that learns, measured: checked requests recorded through the gateway, distilled into a LoRA adapter, and the
// held-out requests replayed to four arms on the embedded model.
//
// Usage (after npm ci, npx tsc and `node bin/reflect.js train setup`; one model process at a time, so keep the
// machine otherwise quiet):
//   node bench/learning-loop.mjs --out bench/runs/learning-loop [--arithmetic 200] [--json 100] [--held-out 0.3]
//        [--split-seed 7] [--turns 2] [--steps 60] [--batch-size 8] [--lr 2e-4] [--upstream smollm2-135m] [--shots K]
//        [--other-adapter LABEL=FILE.gguf …]   (more arms: an adapter trained elsewhere, with the cascade)
//   node bench/learning-loop.mjs --out bench/runs/learning-loop --table [--family arithmetic|json]
//        (the tables again, from the records or the figures kept of them; --family: that family's replay table only)
//
// The workload: requests an application would send, each with a check the gateway runs —
//   - arithmetic: `generateArithmetic`'s operations (one-digit sums and products, a teen minus a digit), every distinct
//     one once in a seeded order (seed 2611; the evaluation's items are seeds 0 and 1), asked as the task's prompt
//     with `reflect: { task: "arithmetic", item }` (the task's verifier on the reply);
//   - JSON extraction: `generateJsonCases` (seed 2612; the evaluation uses seeds 0–1), the facts and the schema in the
//     user message and the schema as `response_format: json_schema` (the gateway's schema check).
// Every request is greedy (`temperature: 0`) and reflected as a cascade (`max_turns` --turns: reflect and retry only
// after a failed draft), with `reflect.memory` keyed by route (`arithmetic`, `json-<kind>`).
//
// Stages, each skipped when its output is complete (a killed run resumes at the stage it was in):
//   1. record: the requests the split will hold out are known in advance (the same hash `reflect distill` splits by,
//      checked against its output below). The others go first, to `reflect serve --memory lessons-train.sqlite
//      --record record-train --record-content` — the traffic the adapter and the lessons learn from; then the held-out
//      ones to a gateway with a scratch lesson file, `--record record-held` — recorded so `reflect distill` can write
//      them as replayable requests, learning nothing the arms see.
//   2. distil: `reflect distill --from-record record-train record-held --out distill` (the SFT run and the GGUF LoRA).
//   3. arms: `reflect replay --requests distill/held-out-requests.jsonl` (every held-out request, passed or failed) to
//      a fresh gateway per arm, each recording its own folder:
//        (a) cascade            — `reflect serve`, `--reflect '{"memory": null}'`
//        (b) cascade + lessons  — `reflect serve --memory <a copy of lessons-train.sqlite>` (lessons of the train side)
//        (c) adapter + cascade  — `reflect serve --lora distill/adapter.gguf`, `--arm adapter --reflect '{"memory": null}'`
//        (d) adapter alone      — the same, `--reflect '{"memory": null, "max_turns": 1}'`: one call a request
//   4. the tables: per arm, first-draft pass (attempt 1's verdict) and final pass (the returned answer's) with Wilson
//      95 % intervals, calls and tokens per request, median latency (the episode's ms) with an order-statistic
//      interval, and the paired differences against (a)'s final pass over the same requests (bootstrap 95 %).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs as parseFlags } from "node:util";
import { startReflectServe } from "./reflect-serve.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = (file) => new URL(`../dist/${file}`, import.meta.url).href;
const { generateArithmetic, arithmeticPrompt } = await import(dist("tasks/arithmetic/index.js"));
const { generateJsonCases } = await import(dist("tasks/json/generate.js"));
const { isHeldOut } = await import(dist("data/record-distill.js"));
const { findTaskFamily } = await import(dist("tasks/registry.js"));
const { wilsonInterval } = await import(dist("eval/estimate.js"));
const { meanEstimate } = await import(dist("eval/estimate.js"));
const { pairedDifference } = await import(dist("eval/paired-bootstrap.js"));
const { medianInterval } = await import(dist("report/arms.js"));
const { selectedAttempt } = await import(dist("loops/selected-attempt.js"));

const ARMS = {
  a: { label: "(a) cascade", serve: [], replay: ["--reflect", '{"memory": null}'] },
  b: { label: "(b) cascade + lessons", serve: ["--memory", "{lessons}"], replay: [] },
  c: { label: "(c) adapter + cascade", serve: ["--lora", "{adapter}"], replay: ["--arm", "adapter", "--reflect", '{"memory": null}'] },
  d: { label: "(d) adapter alone", serve: ["--lora", "{adapter}"], replay: ["--arm", "adapter", "--reflect", '{"memory": null, "max_turns": 1}'] },
};

/** The arms' names where the requests make one attempt (`--turns 1`, for a model that cannot use a reflection turn). */
const ONE_CALL = { a: "(a) base, one call", b: "(b) base + lessons (none were written)", c: "(c) adapter, one call", d: "(d) adapter alone" };

function parseArgs(argv) {
  const number = (v) => ({ type: "string", default: String(v) });
  const { values: v } = parseFlags({
    args: argv,
    strict: true,
    options: {
      out: { type: "string" },
      arithmetic: number(200),
      json: number(100),
      "held-out": number(0.3),
      "split-seed": number(7),
      turns: number(2),
      steps: number(60),
      "batch-size": number(8),
      lr: number(2e-4),
      upstream: { type: "string", default: "smollm2-135m" },
      shots: number(0),
      table: { type: "boolean", default: false },
      family: { type: "string" },
      "other-adapter": { type: "string", multiple: true, default: [] },
    },
  });
  const o = {
    out: v.out,
    arithmetic: Number(v.arithmetic),
    json: Number(v.json),
    heldOut: Number(v["held-out"]),
    splitSeed: Number(v["split-seed"]),
    turns: Number(v.turns),
    steps: Number(v.steps),
    batchSize: Number(v["batch-size"]),
    lr: Number(v.lr),
    upstream: v.upstream,
    shots: Number(v.shots),
    table: v.table,
    family: v.family,
    otherAdapters: v["other-adapter"].map((spec) => {
      const [label, file] = spec.split("=");
      if (label === undefined || file === undefined || label === "" || file === "") throw new Error("--other-adapter LABEL=FILE.gguf");
      return { label, file: path.resolve(file) };
    }),
  };
  if (o.out === undefined) throw new Error("--out DIR is required");
  // Adapters trained elsewhere (RRR's, SFT on ReflectEvo's D+), each an arm of its own: the adapter with the cascade.
  o.otherAdapters.forEach(({ label, file }, i) => {
    ARMS[String.fromCharCode("e".charCodeAt(0) + i)] = { label: `(${String.fromCharCode("e".charCodeAt(0) + i)}) ${label} + cascade`, serve: ["--lora", file], replay: ["--arm", "adapter", "--reflect", '{"memory": null}'] };
  });
  if (o.family !== undefined && !["arithmetic", "json"].includes(o.family)) throw new Error("--family: arithmetic or json");
  for (const k of ["arithmetic", "json", "turns", "steps", "batchSize", "shots"]) if (!Number.isInteger(o[k]) || o[k] < 0) throw new Error(`--${k} must be a non-negative integer`);
  o.out = path.resolve(o.out);
  return o;
}

/** Every distinct arithmetic operation of the task's generator, in a seeded order, the first `count`. */
function arithmeticItems(count) {
  const seen = new Map();
  for (let seed = 2611; seen.size < count && seed < 2611 + 50; seed++) {
    for (const item of generateArithmetic({ seed, count: 400 })) {
      const key = `${item.record.a}${item.record.op}${item.record.b}`;
      if (!seen.has(key)) seen.set(key, item.record);
    }
  }
  if (seen.size < count) throw new Error(`--arithmetic ${count}: the task's generator has only ${seen.size} distinct operations`);
  return [...seen.values()].slice(0, count);
}

function workload(o) {
  const requests = [];
  const items = arithmeticItems(o.arithmetic);
  // Few-shot (--shots, for a pretrained model): solved operations none of the workload's, as earlier turns, and the
  // reply ends at its answer's closing tag — the application's prompt, as `reflect eval --shots --stop-at-answer` asks.
  const demonstrations = o.shots === 0 ? [] : findTaskFamily("arithmetic").demonstrations(o.shots, items).flatMap((d) => [...arithmeticPrompt(d.record), { role: "assistant", content: d.reply }]);
  items.forEach((record, i) => {
    requests.push({
      id: `arith-${i}`,
      family: "arithmetic",
      body: { model: "gateway", messages: [...demonstrations, ...arithmeticPrompt(record)], max_tokens: 128, temperature: 0, ...(o.shots === 0 ? {} : { stop: ["</answer>"] }), reflect: { task: "arithmetic", item: record, max_turns: o.turns, reflection_max_tokens: 128, memory: { key: "arithmetic" } } },
    });
  });
  for (const [i, item] of generateJsonCases({ seed: 2612, count: o.json }).entries()) {
    const record = item.record;
    const content = [record.prompt.trim(), "", "The JSON must be valid against this JSON Schema:", "```json", JSON.stringify(record.schema, null, 2), "```", "", "Reply with only the JSON value."].join("\n");
    requests.push({
      id: `json-${i}`,
      family: "json",
      body: {
        model: "gateway",
        messages: [{ role: "user", content }],
        max_tokens: 256,
        temperature: 0,
        response_format: { type: "json_schema", json_schema: { name: "item", schema: record.schema, strict: true } },
        reflect: { max_turns: o.turns, reflection_max_tokens: 128, memory: { key: `json-${item.kind}` } },
      },
    });
  }
  // The split `reflect distill` makes: a hash of the conversation (as the model is shown it) with the seed.
  for (const r of requests) {
    const key = createHash("sha256").update(JSON.stringify(r.body.messages.map((m) => ({ role: m.role, content: m.content })))).digest("hex");
    r.heldOut = isHeldOut(key, { heldOut: o.heldOut, seed: o.splitSeed });
  }
  return requests;
}

/** A gateway on the run's model, never fetching it (the first stage's gateway has it cached by then). */
const startGateway = (o, args) => startReflectServe(["--upstream", o.upstream, "--offline", ...args]);

function run(args, label) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "bin", "reflect.js"), ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let tail = "";
    child.stdout.setEncoding("utf8").on("data", (p) => (stdout += p));
    child.stderr.setEncoding("utf8").on("data", (p) => {
      tail = (tail + p).slice(-4000);
      process.stderr.write(p.split("\n").filter((l) => l !== "").map((l) => `  [${label}] ${l}\n`).join(""));
    });
    child.once("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`reflect ${args[0]} exited ${code}: ${tail.trim().split("\n").slice(-5).join("\n")}`))));
  });
}

const jsonl = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)) : []);

/** Sends `requests` one at a time to a gateway recording into `dir`; the stage is done when `dir/.complete` exists. */
async function recordStage(o, name, requests, memoryFile) {
  const dir = path.join(o.out, name);
  if (existsSync(path.join(dir, ".complete"))) return;
  rmSync(dir, { recursive: true, force: true });
  rmSync(memoryFile, { force: true });
  const gateway = await startGateway(o, ["--memory", memoryFile, "--record", dir, "--record-content"]);
  try {
    for (const [i, r] of requests.entries()) {
      const started = performance.now();
      const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(r.body), signal: AbortSignal.timeout(600_000) });
      const json = await response.json();
      if (response.status !== 200) throw new Error(`${name} ${r.id}: HTTP ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
      process.stderr.write(`[${name} ${i + 1}/${requests.length}] ${r.id}: ${json.reflect?.decision ?? "?"} after ${json.reflect?.attempts ?? "?"} attempt(s), ${Math.round(performance.now() - started)} ms\n`);
    }
  } finally {
    await gateway.stop();
  }
  writeFileSync(path.join(dir, ".complete"), `${requests.length}\n`);
}

async function armStage(o, key, adapter) {
  const arm = ARMS[key];
  const dir = path.join(o.out, `arm-${key}`);
  if (existsSync(path.join(dir, ".complete"))) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const lessons = path.join(dir, "lessons.sqlite");
  if (key === "b") copyFileSync(path.join(o.out, "lessons-train.sqlite"), lessons);
  const serveArgs = arm.serve.map((a) => a.replace("{lessons}", lessons).replace("{adapter}", adapter));
  const gateway = await startGateway(o, [...serveArgs, "--record", path.join(dir, "record"), "--record-content"]);
  try {
    await run(["replay", "--requests", path.join(o.out, "distill", "held-out-requests.jsonl"), "--gateway", gateway.url, ...arm.replay, "--out", path.join(dir, "replay")], `arm ${key}`);
  } finally {
    await gateway.stop();
  }
  writeFileSync(path.join(dir, ".complete"), "\n");
}

/** One request's figures from its episode. */
function figures(e) {
  const record = e.record ?? {};
  return {
    of: e.replayOf ?? e.id,
    family: record.checks?.task?.name === "arithmetic" ? "arithmetic" : "json",
    first: e.attempts[0]?.verdict.correct === true ? 1 : 0,
    final: selectedAttempt(e)?.verdict.correct === true ? 1 : 0,
    calls: e.usage.calls,
    tokens: e.usage.promptTokens + e.usage.completionTokens,
    ms: e.ms,
    recalled: e.memory?.recalled?.length ?? 0,
  };
}

const pct = (k, n) => {
  const [lo, hi] = wilsonInterval(k, n);
  return `${((100 * k) / n).toFixed(1)} [${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`;
};
const signed = (v) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(1)}`;
const diffCell = (d) => (d === null ? "—" : `${signed(100 * d.mean)} [${signed(100 * d.lo)}, ${signed(100 * d.hi)}]`);
const mean = (xs) => meanEstimate(xs);
const meanCell = (m, digits) => `${m.value.toFixed(digits)}${m.ci95 === null ? "" : ` [${m.ci95[0].toFixed(digits)}, ${m.ci95[1].toFixed(digits)}]`}`;

/**
 * Every request's figures, from the records (written to `figures.jsonl.gz` beside them), or from that file alone where
 * the records are not kept (the committed run keeps the figures, the distillation's config and card, and the tables).
 */
function allFigures(o) {
  const file = path.join(o.out, "figures.jsonl.gz");
  if (!existsSync(path.join(o.out, "record-train", "episodes.jsonl"))) {
    return gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  }
  const rows = [
    ...jsonl(path.join(o.out, "record-train", "episodes.jsonl")).map((e) => ({ stage: "record", side: "train", ...figures(e) })),
    ...jsonl(path.join(o.out, "record-held", "episodes.jsonl")).map((e) => ({ stage: "record", side: "held out", ...figures(e) })),
  ];
  for (const key of Object.keys(ARMS)) rows.push(...jsonl(path.join(o.out, `arm-${key}`, "record", "episodes.jsonl")).map((e) => ({ stage: `arm-${key}`, ...figures(e) })));
  writeFileSync(file, gzipSync(rows.map((r) => JSON.stringify(r)).join("\n") + "\n", { level: 9 }));
  return rows;
}

function table(o, requests) {
  const lines = [];
  const cpu = os.cpus();
  const config = JSON.parse(readFileSync(path.join(o.out, "config.json"), "utf8"));
  const distilled = JSON.parse(readFileSync(path.join(o.out, "distill", "config.json"), "utf8"));
  lines.push(`learning loop: ${requests.length} requests (${o.arithmetic} arithmetic, ${o.json} JSON extraction), upstream ${config.upstream}, cascade max_turns ${config.turns}, held out ${config.heldOut} (split seed ${config.splitSeed}); node ${process.version}, ${cpu.length} cores (${cpu[0]?.model ?? "?"})`);
  const every = allFigures(o);
  // The recording.
  const recorded = every.filter((r) => r.stage === "record");
  lines.push("", "**Recorded** (cascade + lessons, through the gateway)", "", "| recorded | requests | first-draft pass % [95% CI] | final pass % [95% CI] | calls / request |", "|---|---|---|---|---|");
  for (const side of ["train", "held out"]) {
    for (const family of ["arithmetic", "json"]) {
      const rows = recorded.filter((r) => r.side === side && r.family === family);
      if (rows.length === 0) continue;
      lines.push(`| ${side}, ${family} | ${rows.length} | ${pct(rows.reduce((s, r) => s + r.first, 0), rows.length)} | ${pct(rows.reduce((s, r) => s + r.final, 0), rows.length)} | ${(rows.reduce((s, r) => s + r.calls, 0) / rows.length).toFixed(2)} |`);
    }
  }
  const c = distilled.counts;
  lines.push("", `**Distilled**: ${c.train} train examples, ${c.heldOut} held-out examples (passed), ${c.heldOutRequests} held-out requests (any outcome); ${c.passedFirstDraft} passed on the first draft, ${c.passedAfterReflection} after reflection, ${c.failed} failed, ${c.duplicates} duplicates.`);
  // The arms.
  const arms = {};
  for (const key of Object.keys(ARMS)) {
    const mine = every.filter((r) => r.stage === `arm-${key}`);
    if (mine.length > 0) arms[key] = new Map(mine.map((f) => [f.of, f]));
  }
  const base = arms.a;
  for (const family of o.family === undefined ? [undefined, "arithmetic", "json"] : [o.family]) {
    if (!Object.values(arms).some((rows) => [...rows.values()].some((r) => family === undefined || r.family === family))) continue;
    lines.push("", `**Held-out requests, replayed${family === undefined ? "" : `: ${family}`}**`, "");
    lines.push("| arm | n | first-draft pass % [95% CI] | final pass % [95% CI] | calls / request | tokens / request | p50 latency ms [95% CI] | first-draft − (a) final, pts [95% CI] | final − (a) final, pts [95% CI] |", "|---|---|---|---|---|---|---|---|---|");
    for (const [key, rows] of Object.entries(arms)) {
      const mine = [...rows.values()].filter((r) => family === undefined || r.family === family);
      if (mine.length === 0) continue;
      const n = mine.length;
      const p50 = medianInterval(mine.map((r) => r.ms));
      const pick = (map, field) => new Map([...map.values()].filter((r) => family === undefined || r.family === family).map((r) => [r.of, r[field]]));
      const vsFinal = (field) => (base === undefined ? null : pairedDifference(pick(rows, field), pick(base, "final")));
      lines.push(
        `| ${config.turns === 1 ? (ONE_CALL[key] ?? ARMS[key].label) : ARMS[key].label} | ${n} | ${pct(mine.reduce((s, r) => s + r.first, 0), n)} | ${pct(mine.reduce((s, r) => s + r.final, 0), n)} | ${meanCell(mean(mine.map((r) => r.calls)), 2)} | ${meanCell(mean(mine.map((r) => r.tokens)), 0)} | ${Math.round(p50.median)}${p50.ci95 === null ? "" : ` [${Math.round(p50.ci95[0])}, ${Math.round(p50.ci95[1])}]`} | ${diffCell(vsFinal("first"))} | ${key === "a" ? "—" : diffCell(vsFinal("final"))} |`,
      );
    }
  }
  if (arms.b !== undefined) {
    const shown = [...arms.b.values()].filter((r) => r.recalled > 0).length;
    lines.push("", `(b): ${shown} of ${arms.b.size} requests were shown at least one lesson.`);
  }
  return lines.join("\n");
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  mkdirSync(o.out, { recursive: true });
  const configPath = path.join(o.out, "config.json");
  const config = { upstream: o.upstream, arithmetic: o.arithmetic, json: o.json, heldOut: o.heldOut, splitSeed: o.splitSeed, turns: o.turns, steps: o.steps, batchSize: o.batchSize, lr: o.lr, ...(o.shots === 0 ? {} : { shots: o.shots }) };
  if (existsSync(configPath)) {
    const before = JSON.parse(readFileSync(configPath, "utf8"));
    if (JSON.stringify(before) !== JSON.stringify(config)) throw new Error(`${o.out} was made with ${JSON.stringify(before)} — pass another --out for ${JSON.stringify(config)}`);
  } else writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const requests = workload(o);
  if (!o.table) {
    const started = Date.now();
    await recordStage(o, "record-train", requests.filter((r) => !r.heldOut), path.join(o.out, "lessons-train.sqlite"));
    await recordStage(o, "record-held", requests.filter((r) => r.heldOut), path.join(o.out, "lessons-scratch.sqlite"));
    process.stderr.write(`recorded in ${Math.round((Date.now() - started) / 1000)} s\n`);
    const distill = path.join(o.out, "distill");
    if (!existsSync(path.join(distill, "adapter.gguf"))) {
      const t0 = Date.now();
      await run(["distill", "--from-record", path.join(o.out, "record-train"), path.join(o.out, "record-held"), "--all-tenants", "--out", distill, "--held-out", String(o.heldOut), "--seed", String(o.splitSeed), "--model", o.upstream, "--offline", "--steps", String(o.steps), "--batch-size", String(o.batchSize), "--lr", String(o.lr), "--checkpoint-every", "10", "--json"], "distill");
      writeFileSync(path.join(o.out, "distill-seconds.txt"), `${Math.round((Date.now() - t0) / 1000)}\n`);
    }
    // The split is the one predicted: every held-out request came from record-held, and only those.
    const heldIds = new Set(jsonl(path.join(o.out, "record-held", "episodes.jsonl")).map((e) => e.id));
    const replayIds = jsonl(path.join(distill, "held-out-requests.jsonl")).map((r) => r.id);
    if (replayIds.length !== heldIds.size || !replayIds.every((id) => heldIds.has(id))) throw new Error(`the distilled split differs from the predicted one: ${replayIds.length} held-out requests, ${heldIds.size} recorded on the held-out side`);
    for (const key of Object.keys(ARMS)) {
      const t0 = Date.now();
      await armStage(o, key, path.join(distill, "adapter.gguf"));
      process.stderr.write(`arm ${key} in ${Math.round((Date.now() - t0) / 1000)} s\n`);
    }
  }
  const text = table(o, requests);
  // A run writes its tables beside it; --table only prints them (the table check runs it on the committed runs).
  if (!o.table) writeFileSync(path.join(o.out, "table.md"), `${text}\n`);
  console.log(text);
}

await main();
