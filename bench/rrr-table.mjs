// Prints the BENCHMARKS.md rows of the RRR run (bench/rrr.sh): held-out Acc@t1/Acc@t2 before and after training,
// untrained Gemma beside, and the training run's figures. Usage: node bench/rrr-table.mjs [RRR_DIR]
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { findLog, readLog } from "../dist/record/log.js";

const dir = process.argv[2] ?? "bench/runs/rrr";
const pct = (x) => (100 * x).toFixed(1);
const summary = (folder) => (existsSync(path.join(folder, "summary.json")) ? JSON.parse(readFileSync(path.join(folder, "summary.json"), "utf8")) : undefined);
const rows = [
  ["SmolLM2-135M-Instruct, untrained (the Q4_1 file)", "bench/runs/arithmetic-smollm2-135m-t2"],
  ["SmolLM2-135M-Instruct, untrained, exported f16", "bench/runs/rrr/untrained-export/eval"],
  ["SmolLM2-135M-Instruct, after RRR, exported f16", path.join(dir, "after")], // the first run's layout
  ["SmolLM2-135M-Instruct, after RRR, re-quantised to Q4_1", path.join(dir, "after-base")],
  ["SmolLM2-135M-Instruct, after RRR, exported f16", path.join(dir, "after-f16")],
  ["Gemma 3 270M, untrained", "bench/runs/arithmetic-gemma-3-270m-t2"],
].filter(([, folder]) => existsSync(folder) || !folder.startsWith(dir));
console.log("| model | n | Acc@t1 [95% CI] | Acc@t2 [95% CI] | Δ | wrong→right | right→wrong | wall s |");
console.log("|---|---|---|---|---|---|---|---|");
for (const [label, folder] of rows) {
  const s = summary(folder);
  if (s === undefined) {
    console.log(`| ${label} | (not run: ${folder}) |`);
    continue;
  }
  const acc = (t) => `${pct(s.accuracy[t])} [${pct(s.accuracy_ci95[t][0])}, ${pct(s.accuracy_ci95[t][1])}]`;
  console.log(`| ${label} | ${s.n} | ${acc(0)} | ${acc(1)} | ${s.delta >= 0 ? "+" : ""}${pct(s.delta)} | ${s.flips[0].wrong_to_right} | ${s.flips[0].right_to_wrong} | ${s.wall_seconds.toFixed(0)} |`);
}
const metricsFile = findLog(path.join(dir, "train"), "metrics");
if (metricsFile !== null) {
  const m = (await readLog(metricsFile, { noun: "metrics" })).values;
  const config = JSON.parse(readFileSync(path.join(dir, "train", "config.json"), "utf8"));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fifth = Math.max(1, Math.floor(m.length / 5));
  console.log();
  console.log(`training: ${m.length} steps, ${config.items} items in the pool, ${config.failures} failed at the first attempt`);
  console.log(`wall: ${mean(m.map((x) => x.seconds)).toFixed(1)} s/step (sampling ${mean(m.map((x) => x.sampleSeconds)).toFixed(1)} s, training ${mean(m.map((x) => x.trainSeconds)).toFixed(1)} s), ${(m.reduce((a, x) => a + x.seconds, 0) / 60).toFixed(1)} min in all`);
  console.log(`retry success (reward): first ${fifth} steps ${pct(mean(m.slice(0, fifth).map((x) => x.reward)))}%, last ${fifth} steps ${pct(mean(m.slice(-fifth).map((x) => x.reward)))}%`);
  console.log(`groups with a reward signal: ${m.reduce((a, x) => a + x.groupsWithSignal, 0)} of ${m.length * (config.flags?.batchSize ?? 0)}`);
  console.log(`reflection length: first ${fifth} steps ${mean(m.slice(0, fifth).map((x) => x.reflectionTokens)).toFixed(1)} tokens, last ${fifth} ${mean(m.slice(-fifth).map((x) => x.reflectionTokens)).toFixed(1)}`);
  const trained = m.filter((x) => x.tokensPerSecond > 0); // steps without a reward signal do no training
  console.log(`steps that trained: ${trained.length} of ${m.length}; training tokens/s (forward+backward+step): median ${median(trained.map((x) => x.tokensPerSecond)).toFixed(0)}`);
}
for (const name of ["trained.gguf.json", "trained-base.gguf.json", "trained-f16.gguf.json"]) {
  const exportFile = path.join(dir, name);
  if (!existsSync(exportFile)) continue;
  const e = JSON.parse(readFileSync(exportFile, "utf8"));
  if (e.check) console.log(`export check (${e.dtype}): mean |Δ log p| ${e.check.exportedMeanAbs.toFixed(3)} (max ${e.check.exportedMaxAbs.toFixed(3)}) over ${e.check.tokens} tokens; base file vs trained ${e.check.baseMeanAbs.toFixed(3)}; floor ${e.check.floorMeanAbs?.toFixed(3)}`);
}
