// The evidence grid's seeds pooled (BENCHMARKS.md, "Reflection against its controls, the scorer out of the loop"):
// for each reflection mode, Acc@t1 and final accuracy over every (item, seed), wrong→right and right→wrong flips,
// and each mode's paired difference in final correctness against a reference mode, with a 95 % bootstrap interval
// that resamples items (an item keeps all its seeds, so seeds of one item are not counted as independent).
//
// Usage: node bench/evidence-pool.mjs [--dir bench/runs/qwen/evidence-1.5b] [--strategy reflect-retry]
//          (a mode's runs are DIR/STRATEGY-MODE/seed-N; with --strategy "", DIR/MODE/seed-N, as bench/agent-expel.sh lays them out)
//          [--modes resample,model,placebo,none,placebo-other] [--seeds 1,2,3] [--against model] [--resamples 10000]
// Reads each run's episodes.jsonl (one line an episode: `correct` the final answer by the scorer, `attempts[0]`'s
// verdict the first). A run folder that is missing, or an episode line that does not parse, is an error naming it.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
// A seeded generator, so the intervals are the same on every run.
const { mulberry32: random } = await import(new URL("../dist/util/random.js", import.meta.url).href);

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      dir: { type: "string", default: "bench/runs/qwen/evidence-1.5b" },
      strategy: { type: "string", default: "reflect-retry" },
      modes: { type: "string", default: "resample,model,placebo,none,placebo-other" },
      seeds: { type: "string", default: "1,2,3" },
      against: { type: "string", default: "model" },
      resamples: { type: "string", default: "10000" },
    },
  });
  return { ...values, modes: values.modes.split(","), seeds: values.seeds.split(",").map(Number), resamples: Number(values.resamples) };
}

/** Each episode's item id, first-attempt and final correctness, of one run folder. */
function readRun(dir) {
  const file = path.join(dir, "episodes.jsonl");
  if (!existsSync(file)) throw new Error(`${file}: no such file — run bench/qwen-evidence.sh for this mode and seed first`);
  const out = new Map();
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      let episode;
      try {
        episode = JSON.parse(line);
      } catch (error) {
        throw new Error(`${file}:${i + 1}: not JSON (${error.message})`);
      }
      const first = episode.attempts?.[0]?.verdict?.correct;
      if (typeof episode.id !== "string" || typeof episode.correct !== "boolean" || typeof first !== "boolean") throw new Error(`${file}:${i + 1}: an episode needs id, correct and attempts[0].verdict.correct`);
      out.set(episode.id, { first, final: episode.correct, changed: codeChanged(episode) });
    });
  return out;
}

/** Whether a retried episode's second answer differs from its first (undefined when it was not retried). */
function codeChanged(episode) {
  if (episode.attempts.length < 2) return undefined;
  return episode.attempts[0].verdict?.answer !== episode.attempts[1].verdict?.answer;
}

function wilson(k, n) {
  const z = 1.959964;
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return [centre - half, centre + half];
}


const pct = (x) => (100 * x).toFixed(1);

function main() {
  const options = parseOptions(process.argv.slice(2));
  const runs = new Map();
  for (const mode of options.modes) runs.set(mode, options.seeds.map((seed) => readRun(path.join(options.dir, options.strategy === "" ? mode : `${options.strategy}-${mode}`, `seed-${seed}`))));
  const items = [...(runs.get(options.modes[0])?.[0]?.keys() ?? [])];
  for (const [mode, seeds] of runs) seeds.forEach((run, s) => {
    for (const id of items) if (!run.has(id)) throw new Error(`${mode} seed ${options.seeds[s]}: no episode of item ${id}, which the ${options.modes[0]} run has — the runs must cover the same items`);
  });
  const n = items.length * options.seeds.length;
  console.log(`${items.length} items × ${options.seeds.length} seeds (${options.seeds.join(", ")}) = ${n} episodes a mode; ${options.strategy || "runs"} under ${options.dir}\n`);
  console.log("| reflection | Acc@t1 | final [95% Wilson] | wrong→right / right→wrong | retries that changed the code | final by seed |");
  console.log("|---|---:|---:|---:|---:|---|");
  for (const [mode, seeds] of runs) {
    let first = 0;
    let final = 0;
    let up = 0;
    let down = 0;
    let retried = 0;
    let changed = 0;
    for (const run of seeds)
      for (const id of items) {
        const e = run.get(id);
        first += e.first ? 1 : 0;
        final += e.final ? 1 : 0;
        up += !e.first && e.final ? 1 : 0;
        down += e.first && !e.final ? 1 : 0;
        if (e.changed !== undefined) {
          retried += 1;
          changed += e.changed ? 1 : 0;
        }
      }
    const [lo, hi] = wilson(final, n);
    const bySeed = seeds.map((run) => pct([...run.values()].filter((e) => e.final).length / run.size)).join(" / ");
    console.log(`| ${mode} | ${pct(first / n)} | ${pct(final / n)} [${pct(lo)}, ${pct(hi)}] | ${up} / ${down} | ${changed} of ${retried} | ${bySeed} |`);
  }
  const reference = runs.get(options.against);
  if (reference === undefined) throw new Error(`--against ${options.against} is not one of the modes (${options.modes.join(", ")})`);
  console.log(`\nPaired by item against ${options.against}, final correctness, points [95% bootstrap over items, ${options.resamples} resamples]:`);
  for (const [mode, seeds] of runs) {
    if (mode === options.against) continue;
    // Per item: the sum over seeds of (mode correct − reference correct).
    const diffs = items.map((id) => seeds.reduce((sum, run, s) => sum + (run.get(id).final ? 1 : 0) - (reference[s].get(id).final ? 1 : 0), 0));
    const mean = diffs.reduce((a, b) => a + b, 0) / n;
    const next = random(1);
    const means = [];
    for (let r = 0; r < options.resamples; r++) {
      let sum = 0;
      for (let i = 0; i < items.length; i++) sum += diffs[Math.floor(next() * items.length)];
      means.push(sum / n);
    }
    means.sort((a, b) => a - b);
    const lo = means[Math.floor(0.025 * options.resamples)];
    const hi = means[Math.ceil(0.975 * options.resamples) - 1];
    console.log(`- ${mode} − ${options.against}: ${(100 * mean).toFixed(1)} [${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`);
  }
}

try {
  main();
} catch (error) {
  console.error(`evidence-pool: ${error.message}`);
  process.exit(2);
}
