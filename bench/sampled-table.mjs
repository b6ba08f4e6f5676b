// Tables for bench/sampled.sh: per model, Acc@t1 and Acc@t2 averaged over the sampled seeds, with 95% intervals from
// a bootstrap over items (the seeds of one item are not independent, so items are the unit); then each model against
// its control, paired by item. Usage:
//   node bench/sampled-table.mjs OUT_DIR MODEL:CONTROL... [--exclude-sft D_PLUS_JSONL]
// MODEL and CONTROL are folders under OUT_DIR holding seed-N runs (paths such as controls/model work too); a name
// a+b+c pools the runs of several folders (several training seeds), each run weighted alike; a spec A:B:C:D prints
// the difference of differences (A − B) − (C − D), paired by item.
// --exclude-sft leaves out the items whose question is among the SFT file's (not held out from that training).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { bootstrapMean } from "../dist/eval/paired-bootstrap.js";
import { readLogIn } from "../dist/record/log.js";

const args = process.argv.slice(2);
const dir = args.shift();
let exclude = new Set();
const pairs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--exclude-sft") {
    const rows = readFileSync(args[++i], "utf8").trim().split("\n").map((l) => JSON.parse(l));
    exclude = new Set(rows.map((row) => row.messages[0].content.split("?")[0] + "?"));
  } else pairs.push(args[i].split(":"));
}
const question = (r) => `What is ${r.a} ${r.op} ${r.b}?`;

/** item id → [rate right at t1, rate right by t2] over the model's seeds. */
async function rates(name) {
  // Sampled runs only: a controls folder (bench/controls.sh) keeps its greedy run beside seed-1…3.
  const parts = name.split("+").map((part) => {
    const folder = path.join(dir, part);
    return existsSync(folder) ? readdirSync(folder).filter((s) => s.startsWith("seed-") && existsSync(path.join(folder, s, "summary.json"))).map((s) => path.join(folder, s)) : [];
  });
  // A pool is finished only when each of its folders has a finished run: never a pool of fewer folders under its name.
  if (parts.some((runs) => runs.length === 0)) return { seeds: 0, byItem: new Map() };
  const seeds = parts.flat();
  const byItem = new Map();
  for (const seed of seeds) {
    for (const e of (await readLogIn(seed, "episodes", { noun: "episode" })).values) {
      if (exclude.has(question(e.record))) continue;
      const r = byItem.get(e.id) ?? [0, 0];
      r[0] += e.attempts[0]?.verdict.correct === true ? 1 / seeds.length : 0;
      r[1] += e.attempts.slice(0, 2).some((a) => a.verdict.correct === true) ? 1 / seeds.length : 0;
      byItem.set(e.id, r);
    }
  }
  return { seeds: seeds.length, byItem };
}

/** Mean of values and its 95% percentile-bootstrap interval over items (the library's, src/eval/paired-bootstrap.ts). */
function bootstrap(values) {
  const { mean, lo, hi } = bootstrapMean(values);
  return [mean, lo, hi];
}
const pct = (x) => (100 * x).toFixed(1).replace(/^-0\.0$/, "0.0");
const fmt = ([m, lo, hi], sign = false) => `${sign && Number(pct(m)) >= 0 ? "+" : ""}${pct(m)} [${pct(lo)}, ${pct(hi)}]`;

const names = [...new Set(pairs.flat())];
const data = new Map((await Promise.all(names.map(async (n) => [n, await rates(n)]))).filter(([, r]) => r.seeds > 0));
const missing = [...new Set(pairs.flat())].filter((n) => !data.has(n));
if (missing.length > 0) console.log(`(no finished run yet: ${missing.join(", ")})\n`);
console.log("| model | items | seeds | Acc@t1 [95% CI] | Acc@t2 [95% CI] | Δ = t2 − t1 [95% CI] |");
console.log("|---|---|---|---|---|---|");
for (const [name, { seeds, byItem }] of data) {
  const r = [...byItem.values()];
  console.log(`| ${name} | ${r.length} | ${seeds} | ${fmt(bootstrap(r.map((x) => x[0])))} | ${fmt(bootstrap(r.map((x) => x[1])))} | ${fmt(bootstrap(r.map((x) => x[1] - x[0])), true)} |`);
}
console.log();
console.log("| model − control (paired by item) | items | Acc@t1 difference [95% CI] | Acc@t2 difference [95% CI] | Δ difference [95% CI] |");
console.log("|---|---|---|---|---|");
for (const [model, control] of pairs) {
  if (control === undefined || !data.has(model) || !data.has(control)) continue;
  const a = data.get(model).byItem;
  const b = data.get(control).byItem;
  const ids = [...a.keys()].filter((id) => b.has(id));
  const diff = (t) => ids.map((id) => a.get(id)[t] - b.get(id)[t]);
  const delta = ids.map((id) => a.get(id)[1] - a.get(id)[0] - (b.get(id)[1] - b.get(id)[0]));
  console.log(`| ${model} − ${control} | ${ids.length} | ${fmt(bootstrap(diff(0)), true)} | ${fmt(bootstrap(diff(1)), true)} | ${fmt(bootstrap(delta), true)} |`);
}

// A:B:C:D — a difference of differences, paired by item: (A − B) − (C − D) in Δ (for example a trained model's own
// reflection against its placebo, less the same for the untrained model: what training added to the reflection's content).
const quads = pairs.filter((p) => p.length === 4 && p.every((n) => data.has(n)));
if (quads.length > 0) {
  console.log();
  console.log("| (A − B) − (C − D), paired by item | items | Acc@t2 [95% CI] | Δ [95% CI] |");
  console.log("|---|---|---|---|");
  for (const names of quads) {
    const [a, b, c, d] = names.map((n) => data.get(n).byItem);
    const ids = [...a.keys()].filter((id) => b.has(id) && c.has(id) && d.has(id));
    const at = (m, id, t) => m.get(id)[t];
    const dd = (f) => ids.map((id) => f(a, id) - f(b, id) - (f(c, id) - f(d, id)));
    const t2 = dd((m, id) => at(m, id, 1));
    const delta = dd((m, id) => at(m, id, 1) - at(m, id, 0));
    console.log(`| (${names[0]} − ${names[1]}) − (${names[2]} − ${names[3]}) | ${ids.length} | ${fmt(bootstrap(t2), true)} | ${fmt(bootstrap(delta), true)} |`);
  }
}
