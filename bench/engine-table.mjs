// Prints the engine table of BENCHMARKS.md from the run folders bench/engine.sh wrote.
// Usage: node bench/engine-table.mjs [OUT_DIR]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const out = process.argv[2] ?? "bench/runs/engine";
const pct = (x) => (100 * x).toFixed(1);
const order = ["reflect-retry", "reflexion", "reflexion-same-item", "cascade", "self-refine-verifier", "self-refine-judge", "cascade-judge", "always-reflect"];
const names = readdirSync(out).filter((n) => existsSync(path.join(out, n, "summary.json"))).sort((a, b) => order.indexOf(a) - order.indexOf(b));
console.log("| run | n | Acc@t1 [95% CI] | Acc@t3 [95% CI] | Δ | solved at any attempt | calls/item | tokens/item | by role (tokens/item) | judge precision / recall | stopped by |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const name of names) {
  const s = JSON.parse(readFileSync(path.join(out, name, "summary.json"), "utf8"));
  const acc = (t) => `${pct(s.accuracy[t])} [${pct(s.accuracy_ci95[t][0])}, ${pct(s.accuracy_ci95[t][1])}]`;
  const tokens = (s.tokens.prompt + s.tokens.completion) / s.n;
  const roles = Object.entries(s.per_episode_by_role).map(([role, u]) => `${role} ${u.tokens.toFixed(0)}`).join(", ");
  const judge = s.critics.length === 0 ? "—" : s.critics.map((c) => `${c.precision === null ? "n/a" : pct(c.precision)} / ${c.recall === null ? "n/a" : pct(c.recall)} (n ${c.n})`).join("; ");
  const stops = Object.entries(s.stopped_by).map(([k, v]) => `${k} ${v}`).join(", ");
  console.log(`| ${name} | ${s.n} | ${acc(0)} | ${acc(s.turns - 1)} | ${s.delta >= 0 ? "+" : ""}${pct(s.delta)} | ${pct(s.solved_any)} | ${s.model_calls_per_episode.toFixed(2)} | ${tokens.toFixed(0)} | ${roles} | ${judge} | ${stops} |`);
}
