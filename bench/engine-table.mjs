// Prints a table of strategies side by side (the engine table of BENCHMARKS.md) from run folders.
// Usage: node bench/engine-table.mjs [DIR_OR_RUN...]   (default bench/runs/engine)
// A DIR_OR_RUN with a summary.json is one run; any other folder contributes each run folder inside it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const args = process.argv.length > 2 ? process.argv.slice(2) : ["bench/runs/engine"];
const pct = (x) => (100 * x).toFixed(1);
const order = ["reflect-retry", "reflexion", "reflexion-same-item", "cascade", "self-refine-verifier", "self-refine-judge", "cascade-judge", "always-reflect"];
const rank = (dir) => order.indexOf(path.basename(dir));
const runs = args.flatMap((arg) =>
  existsSync(path.join(arg, "summary.json"))
    ? [arg]
    : readdirSync(arg)
        .map((n) => path.join(arg, n))
        .filter((dir) => existsSync(path.join(dir, "summary.json")))
        .sort((a, b) => rank(a) - rank(b)),
);
const single = args.length === 1 && !existsSync(path.join(args[0], "summary.json"));
console.log("| run | n | Acc@t1 [95% CI] | Acc at the last turn [95% CI] | Δ | solved at any attempt | calls/item | tokens/item | by role (tokens/item) | judge precision / recall | stopped by |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const dir of runs) {
  const name = single ? path.basename(dir) : dir;
  const s = JSON.parse(readFileSync(path.join(dir, "summary.json"), "utf8"));
  const acc = (t) => `${pct(s.accuracy[t])} [${pct(s.accuracy_ci95[t][0])}, ${pct(s.accuracy_ci95[t][1])}]`;
  const tokens = (s.tokens.prompt + s.tokens.completion) / s.n;
  const roles = Object.entries(s.per_episode_by_role).map(([role, u]) => `${role} ${u.tokens.toFixed(0)}`).join(", ");
  const judge = s.critics.length === 0 ? "—" : s.critics.map((c) => `${c.precision === null ? "n/a" : pct(c.precision)} / ${c.recall === null ? "n/a" : pct(c.recall)} (n ${c.n})`).join("; ");
  const stops = Object.entries(s.stopped_by).map(([k, v]) => `${k} ${v}`).join(", ");
  console.log(`| ${name} | ${s.n} | ${acc(0)} | ${acc(s.turns - 1)} | ${s.delta >= 0 ? "+" : ""}${pct(s.delta)} | ${pct(s.solved_any)} | ${s.model_calls_per_episode.toFixed(2)} | ${tokens.toFixed(0)} | ${roles} | ${judge} | ${stops} |`);
}
