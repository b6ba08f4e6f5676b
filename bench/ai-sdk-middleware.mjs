// The time `reflectionMiddleware` adds to one AI SDK call whose draft passes (one attempt: the loop's machinery and
// the checks, no reflection), against a bare `generateText` on the same model, in one run.
//
// Usage (after npm ci, or npm run build):
//   node bench/ai-sdk-middleware.mjs [--calls 200] [--seed 1]
//
// - The model is the AI SDK's own MockLanguageModelV4 (`ai/test`) returning a fixed small reply at once, so the
//   figure is the middleware's cost, not a model's.
// - Two workloads: plain text with one caller check (a function), and `Output.object` with the call's JSON schema
//   checked (the schema check the gateway uses).
// - Each side gets --calls timed calls after a warm-up of 50, in two blocks run bare, middleware, middleware, bare
//   (ABBA), so drift over the run hits both alike. Added time = middleware − bare; its 95 % interval for the median
//   difference is a percentile bootstrap (2,000 resamples of each side, seeded).
// Prints a markdown table for BENCHMARKS.md.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { generateText, jsonSchema, Output, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { reflectionMiddleware } from "reflectkit/ai-sdk";

globalThis.AI_SDK_LOG_WARNINGS = false;

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const calls = flag("calls", 200);
const seed = flag("seed", 1);

function mockModel(text) {
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 11, text: 11, reasoning: undefined } },
      warnings: [],
    }),
  });
}

const digits = (output) => ({ source: "custom", pass: /\d/.test(output), score: 1, feedback: "" });
const schema = jsonSchema({ type: "object", properties: { answer: { type: "number" } }, required: ["answer"] });

const workloads = [
  {
    name: "text, one caller check",
    bare: mockModel("The answer is 42."),
    run: (model) => generateText({ model, prompt: "What is 6 * 7?", maxOutputTokens: 32 }),
    middleware: reflectionMiddleware({ checks: [digits] }),
  },
  {
    name: "Output.object, schema check",
    bare: mockModel('{"answer": 42}'),
    run: (model) => generateText({ model, prompt: "6 * 7 as JSON", output: Output.object({ schema }) }),
    middleware: reflectionMiddleware(),
  },
];

async function timeBlock(run, model, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await run(model);
    out.push(performance.now() - start);
  }
  return out;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function rng(state) {
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function bootstrapDiff(a, b, random) {
  const diffs = [];
  const pick = (xs) => Array.from(xs, () => xs[Math.floor(random() * xs.length)]);
  for (let i = 0; i < 2000; i++) diffs.push(median(pick(b)) - median(pick(a)));
  diffs.sort((x, y) => x - y);
  return [diffs[49], diffs[1949]];
}

const random = rng(seed);
const rows = [];
for (const w of workloads) {
  const wrapped = wrapLanguageModel({ model: w.bare, middleware: w.middleware });
  await timeBlock(w.run, w.bare, 50);
  await timeBlock(w.run, wrapped, 50);
  const half = Math.ceil(calls / 2);
  const bare = [...(await timeBlock(w.run, w.bare, half))];
  const mid = [...(await timeBlock(w.run, wrapped, half))];
  mid.push(...(await timeBlock(w.run, wrapped, calls - half)));
  bare.push(...(await timeBlock(w.run, w.bare, calls - half)));
  const [lo, hi] = bootstrapDiff(bare, mid, random);
  rows.push(`| ${w.name} | ${calls} | ${median(bare).toFixed(3)} | ${median(mid).toFixed(3)} | ${(median(mid) - median(bare)).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] |`);
}
console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown"}), seed ${seed}`);
console.log("| workload | calls per side | bare generateText median (ms) | with reflectionMiddleware median (ms) | added (ms), 95 % CI |");
console.log("|---|---:|---:|---:|---:|");
for (const row of rows) console.log(row);
