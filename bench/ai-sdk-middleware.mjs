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
//   difference is a percentile bootstrap (2,000 resamples of each side, seeded; bench/median-interval.mjs, shared
//   with bench/gateway.mjs, on the project's mulberry32).
// Prints a markdown table for BENCHMARKS.md.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { generateText, jsonSchema, Output, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { reflectionMiddleware } from "reflectkit/ai-sdk";
import { medianDifferenceInterval, medianOf } from "./median-interval.mjs";

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
  const [lo, hi] = medianDifferenceInterval(bare, mid, seed + rows.length);
  rows.push(`| ${w.name} | ${calls} | ${medianOf(bare).toFixed(3)} | ${medianOf(mid).toFixed(3)} | ${(medianOf(mid) - medianOf(bare)).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] |`);
}
console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown"}), seed ${seed}`);
console.log("| workload | calls per side | bare generateText median (ms) | with reflectionMiddleware median (ms) | added (ms), 95 % CI |");
console.log("|---|---:|---:|---:|---:|");
for (const row of rows) console.log(row);
