// Reads the runs of bench/rrr-sampler.sh (OUT_DIR/{worker,engine}-N/train/metrics.jsonl) and prints, per side, the
// median seconds per step — whole step, sampling (reflections, retries, the learner's re-rendering), the sampler's sync
// (adapter export and swap), training (log-probs, forward/backward, optimizer) — over every step of every run, the
// engine − worker difference of the step medians with its bootstrap 95 % interval, and the engine's mismatch.
// Usage: node bench/rrr-sampler-table.mjs [OUT_DIR]
import { readdirSync } from "node:fs";
import path from "node:path";
import { medianDifferenceInterval, medianOf } from "./median-interval.mjs";
import { findLog, readLog } from "../dist/record/log.js";

const out = process.argv[2] ?? "bench/runs/rrr-sampler";
const sides = { worker: [], engine: [] };
for (const entry of readdirSync(out).sort()) {
  const side = entry.split("-")[0];
  const file = findLog(path.join(out, entry, "train"), "metrics");
  if (!(side in sides) || file === null) continue;
  const { values: lines } = await readLog(file, { noun: "metrics" });
  sides[side].push(...lines.map((m) => ({ ...m, run: entry })));
}
const fields = [["seconds", "step"], ["sampleSeconds", "sampling"], ["syncSeconds", "sync"], ["trainSeconds", "training"]];
const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(2));
const rows = [["side", "runs", "steps", ...fields.map(([, name]) => `median ${name} s`), "mean mismatch", "tokens compared"]];
for (const [side, steps] of Object.entries(sides)) {
  if (steps.length === 0) continue;
  const compared = steps.reduce((a, m) => a + Number(m.mismatchTokens ?? 0), 0);
  const mismatch = compared === 0 ? null : steps.reduce((a, m) => a + (typeof m.mismatch === "number" ? m.mismatch * m.mismatchTokens : 0), 0) / compared;
  rows.push([side, String(new Set(steps.map((m) => m.run)).size), String(steps.length), ...fields.map(([f]) => fmt(medianOf(steps.map((m) => Number(m[f] ?? 0))))), mismatch === null ? "—" : mismatch.toFixed(3), String(compared)]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i])).join("  "));
if (sides.worker.length > 0 && sides.engine.length > 0) {
  console.log("");
  for (const [f, name] of fields) {
    const a = sides.worker.map((m) => Number(m[f] ?? 0));
    const b = sides.engine.map((m) => Number(m[f] ?? 0));
    const [lo, hi] = medianDifferenceInterval(a, b, 12345);
    console.log(`engine − worker, median ${name}: ${fmt(medianOf(b) - medianOf(a))} s (95 % bootstrap interval ${fmt(lo)} to ${fmt(hi)})`);
  }
}
