// What `import "reflectkit"` costs: for the root entry of a build, the wall time of the import, the modules it loads
// and the memory it leaves, each run in a fresh node process.
//
// Usage (after npm run build):
//   node bench/import-cost.mjs [--runs 20] [--dist dist] [--baseline OTHER_CHECKOUT/dist]
//
// - Two imports are measured: `await import("<dist>/index.js")` (the namespace) and `import { reflectRetry } from
//   "<dist>/index.js"` (a named import, as an application writes it). ES modules are linked whole either way; the
//   second row shows that a named import saves nothing by itself.
// - A child process per run: a resolve hook (`module.register`, as src/api.test.ts uses) writes every URL resolved to
//   a file, then the child times the import with `performance.now()` and reports `process.memoryUsage().rss` after it.
//   The hook's own start-up is outside the timed span; its cost per module is inside it, alike for both builds.
// - With --baseline, the other build (e.g. a `git worktree` at an earlier commit, built) is measured in the same run,
//   its runs interleaved with this build's, so drift over the run hits both alike.
// Prints a markdown table: wall ms as median (min–max) over --runs, modules loaded (the URLs ES modules resolve, and
// the packages among them; what a CommonJS package requires in turn the hook does not see),
// RSS after import in MiB (median).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}
const runs = Number(option("runs", "20"));
const builds = [{ label: "this build", dist: path.resolve(option("dist", "dist")) }];
const baseline = option("baseline", undefined);
if (baseline !== undefined) builds.push({ label: "baseline", dist: path.resolve(baseline) });
for (const { dist } of builds) {
  if (!existsSync(path.join(dist, "index.js"))) throw new Error(`no index.js in ${dist} — build it first (npx tsc -p tsconfig.json)`);
}
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs takes a positive whole number");

const HOOKS = `import { appendFileSync } from "node:fs"; let out; export async function initialize(data) { out = data.out; } export async function resolve(specifier, context, next) { const result = await next(specifier, context); appendFileSync(out, result.url + "\\n"); return result; }`;

const IMPORTS = {
  namespace: (url) => `await import(${JSON.stringify(url)});`,
  "{ reflectRetry }": (url) => `const { reflectRetry } = await import(${JSON.stringify(url)}); if (typeof reflectRetry !== "function") throw new Error("no reflectRetry");`,
};

/** One import of `dist`'s root in a fresh node: wall ms, URLs resolved, RSS bytes after. */
function measureOnce(dist, form) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-import-cost-"));
  try {
    const out = path.join(dir, "resolved.txt");
    const entry = pathToFileURL(path.join(dist, "index.js")).href;
    const script = [
      `import { register } from "node:module";`,
      `import { performance } from "node:perf_hooks";`,
      `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)}, { data: { out: ${JSON.stringify(out)} } });`,
      `const start = performance.now();`,
      IMPORTS[form](entry),
      `const ms = performance.now() - start;`,
      `process.stdout.write(JSON.stringify({ ms, rss: process.memoryUsage().rss }));`,
    ].join("\n");
    const reply = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: path.dirname(dist), encoding: "utf8" }));
    const urls = readFileSync(out, "utf8").split("\n").filter(Boolean);
    return { ...reply, urls };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function packageOf(url) {
  const at = url.lastIndexOf("/node_modules/");
  if (at === -1) return null;
  const parts = url.slice(at + "/node_modules/".length).split("/");
  return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const samples = new Map();
for (let run = 0; run < runs; run++) {
  for (const form of Object.keys(IMPORTS)) {
    // Alternate which build goes first, so neither always runs on a machine its sibling just warmed.
    const order = run % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const key = `${build.label}\u0000${form}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(measureOnce(build.dist, form));
    }
  }
}

console.log(`Root import cost, ${runs} fresh process(es) each, node ${process.version}, ${os.cpus().length} CPU(s).\n`);
console.log("| build | import | wall ms, median (min–max) | modules | packages | RSS MiB |");
console.log("|---|---|---|---|---|---|");
for (const build of builds) {
  for (const form of Object.keys(IMPORTS)) {
    const list = samples.get(`${build.label}\u0000${form}`);
    const ms = list.map((s) => s.ms);
    const modules = new Set(list[0].urls).size;
    const packages = new Set(list[0].urls.map(packageOf).filter((p) => p !== null)).size;
    const rss = median(list.map((s) => s.rss)) / 2 ** 20;
    console.log(`| ${build.label} | \`${form}\` | ${median(ms).toFixed(1)} (${Math.min(...ms).toFixed(1)}–${Math.max(...ms).toFixed(1)}) | ${modules} | ${packages} | ${rss.toFixed(1)} |`);
  }
}
if (builds.length > 1) {
  const [mine, base] = builds;
  const names = (build) => new Set(samples.get(`${build.label}\u0000namespace`)[0].urls.map(packageOf).filter((p) => p !== null));
  const gone = [...names(base)].filter((p) => !names(mine).has(p)).sort();
  const added = [...names(mine)].filter((p) => !names(base).has(p)).sort();
  console.log(`\nPackages the baseline loads and this build does not: ${gone.join(", ") || "none"}. Added: ${added.join(", ") || "none"}.`);
}
