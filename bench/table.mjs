// Prints BENCHMARKS.md tables from the run folders that bench/spine.sh wrote.
// Usage: node bench/table.mjs [OUT_DIR]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const out = process.argv[2] ?? "bench/runs";
const pct = (x) => (100 * x).toFixed(1);
const load = (name) => {
  const file = path.join(out, name, "summary.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
};

console.log("| run | n | Acc@t1 [95% CI] | Acc@t2 [95% CI] | Acc@tN [95% CI] | Δ (tN − t1) | wrong→right by turn | right→wrong | answer-change rate | calls/ep | completion tokens |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const name of readdirSync(out).sort()) {
  const s = load(name);
  if (s === undefined || (out.endsWith("runs") && !/^(arithmetic|countdown)-|^prefix-reuse-on$/.test(name))) continue;
  const acc = (t) => `${pct(s.accuracy[t])} [${pct(s.accuracy_ci95[t][0])}, ${pct(s.accuracy_ci95[t][1])}]`;
  console.log(`| ${name} | ${s.n} | ${acc(0)} | ${acc(1)} | ${acc(s.turns - 1)} (t${s.turns}) | ${s.delta >= 0 ? "+" : ""}${pct(s.delta)} | ${s.flips.map((f) => f.wrong_to_right).join(" / ")} | ${s.flips.map((f) => f.right_to_wrong).join(" / ")} | ${s.answer_change_rate === null ? "n/a" : pct(s.answer_change_rate)}% | ${s.model_calls_per_episode.toFixed(2)} | ${s.tokens.completion} |`);
}
console.log();
const [one, four] = [load("throughput-seq1"), load("throughput-seq4")];
if (one && four) {
  const rate = (s) => (s.n / s.wall_seconds) * 60;
  console.log("| parallel sequences | episodes | wall s | episodes/min | completion tokens/s |");
  console.log("|---|---|---|---|---|");
  for (const [k, s] of [[1, one], [4, four]]) console.log(`| ${k} | ${s.n} | ${s.wall_seconds.toFixed(1)} | ${rate(s).toFixed(1)} | ${(s.tokens.completion / s.wall_seconds).toFixed(1)} |`);
  console.log(`\nratio 4 vs 1: ${(rate(four) / rate(one)).toFixed(2)}×\n`);
}
const [on, off] = [load("prefix-reuse-on"), load("prefix-reuse-off")];
if (on && off) {
  console.log("| prefix reuse | episodes | prompt tokens/episode | evaluated prompt tokens/episode | completion tokens | wall s |");
  console.log("|---|---|---|---|---|---|");
  for (const [k, s] of [["on", on], ["off", off]]) console.log(`| ${k} | ${s.n} | ${s.tokens.prompt_per_episode.toFixed(0)} | ${s.tokens.evaluated_prompt_per_episode.toFixed(0)} | ${s.tokens.completion} | ${s.wall_seconds.toFixed(1)} |`);
  console.log(`\nevaluated prompt tokens, off vs on: ${(off.tokens.evaluated_prompt_per_episode / on.tokens.evaluated_prompt_per_episode).toFixed(2)}×`);
}
