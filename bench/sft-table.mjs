// Prints the BENCHMARKS.md rows of the SFT-on-D+ run (bench/sft.sh): Acc@t1/Acc@t2 with Wilson intervals on the
// spine's 100 arithmetic items and on the held-out subset (items whose question is not among D+'s), before and after,
// with the paired t1 changes. Usage: node bench/sft-table.mjs [SFT_DIR] [D_PLUS_JSONL]
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { summarize } from "../dist/eval/metrics.js";
import { findLog, readLog } from "../dist/record/log.js";

const dir = process.argv[2] ?? "bench/runs/sft";
const dataFile = process.argv[3] ?? "bench/runs/data/arithmetic-200-export/d_plus.trl-sft.jsonl";
const lines = (file) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const question = (r) => `What is ${r.a} ${r.op} ${r.b}?`;
const trained = new Set(lines(dataFile).map((row) => row.messages[0].content.split("?")[0] + "?"));
const pct = (x) => (100 * x).toFixed(1);
// Each trained model is compared with the untrained model through the same numeric path (its control): SmolLM2's
// arithmetic moves by 10 points between the Q4_1 file and the same weights in f16 (BENCHMARKS.md).
const rows = [
  { label: "untrained, the Q4_1 file", folder: "bench/runs/arithmetic-smollm2-135m-t2" },
  { label: "untrained, exported re-quantised to Q4_1 (--dtype base)", folder: path.join(dir, "control", "untrained-base-eval"), control: 0 },
  { label: "untrained, exported f16 (lr 0)", folder: "bench/runs/rrr/untrained-export/eval", control: 0 },
  { label: "after SFT on D+, exported re-quantised to Q4_1", folder: path.join(dir, "after-base"), control: 0 },
  { label: "after SFT on D+, exported f16", folder: path.join(dir, "after-f16"), control: 2 },
];
for (const [subset, keep] of [
  ["all 100 items", () => true],
  [`held out (question not in D+'s ${trained.size})`, (e) => !trained.has(question(e.record))],
]) {
  console.log(`\n${subset}\n`);
  console.log("| model | n | Acc@t1 [95% CI] | Acc@t2 [95% CI] | Δ | wrong→right | right→wrong | against its control: t1 gained / lost |");
  console.log("|---|---|---|---|---|---|---|---|");
  const firstRight = [];
  for (const [index, row] of rows.entries()) {
    const file = findLog(row.folder, "episodes");
    if (file === null) {
      console.log(`| ${row.label} | (not run: ${row.folder}) |`);
      continue;
    }
    const episodes = (await readLog(file, { noun: "episode" })).values.filter(keep);
    const s = summarize(episodes, 2);
    const acc = (t) => `${pct(s.accuracy[t])} [${pct(s.accuracy_ci95[t][0])}, ${pct(s.accuracy_ci95[t][1])}]`;
    firstRight[index] = new Map(episodes.map((e) => [e.id, e.attempts[0].verdict.correct === true]));
    let against = "";
    if (row.control !== undefined && firstRight[row.control] !== undefined) {
      const base = firstRight[row.control];
      let gained = 0;
      let lost = 0;
      for (const [id, ok] of firstRight[index]) {
        if (ok && !base.get(id)) gained++;
        if (!ok && base.get(id)) lost++;
      }
      against = `${gained} / ${lost} (vs "${rows[row.control].label}")`;
    }
    console.log(`| ${row.label} | ${s.n} | ${acc(0)} | ${acc(1)} | ${s.delta >= 0 ? "+" : ""}${pct(s.delta)} | ${s.flips[0].wrong_to_right} | ${s.flips[0].right_to_wrong} | ${against} |`);
  }
}
const metricsFile = findLog(path.join(dir, "train"), "metrics");
if (metricsFile !== null) {
  const m = (await readLog(metricsFile, { noun: "metrics" })).values;
  console.log(`\ntraining: ${m.length} steps, loss ${m[0].loss.toFixed(3)} → ${m.at(-1).loss.toFixed(3)}, ${(m.reduce((a, x) => a + x.seconds, 0) / 60).toFixed(1)} min`);
}
for (const dtype of ["base", "f16"]) {
  const f = path.join(dir, `trained-${dtype}.gguf.json`);
  if (!existsSync(f)) continue;
  const c = JSON.parse(readFileSync(f, "utf8")).check;
  if (c) console.log(`export ${dtype}: mean |Δ log p| vs trained ${c.exportedMeanAbs.toFixed(3)}; base file vs trained ${c.baseMeanAbs.toFixed(3)}; floor ${c.floorMeanAbs?.toFixed(3)}`);
}
