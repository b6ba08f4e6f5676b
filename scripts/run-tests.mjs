#!/usr/bin/env node
// Runs the compiled tests, one file at a time: every test (`npm test`, what CI runs), or with `--pure` the pure tier,
// every test whose source file names no tier (`.vllm`, `.worker`, `.model`, `.browser`, `.sandbox`, `.postgres`,
// `.stress`; see src/test-tiers.test.ts), two files at a time (`npm run test:unit`). The list comes from src/, so a test
// file renamed since the last build is not run from a stale copy left in dist/, and the files are named to `node --test`
// one by one, which every supported Node reads alike (Node 22 and later read a folder argument as a file, not a folder
// to search). Other arguments go to `node --test` (e.g. `--test-name-pattern=...`).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TIERED = /\.(?:vllm|worker|model|browser|sandbox|postgres|stress)\.(?:[a-z]+\.)*test\.ts$/;

const args = process.argv.slice(2);
const pure = args.includes("--pure");
const passed = args.filter((a) => a !== "--pure");

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.ts") && !(pure && TIERED.test(entry.name)) ? [full] : [];
  });
}

const files = testFiles(path.join(root, "src")).sort().map((file) => path.join(root, "dist", path.relative(path.join(root, "src"), file)).replace(/\.ts$/, ".js"));
const missing = files.filter((file) => !existsSync(file));
if (missing.length > 0) {
  process.stderr.write(`run-tests: ${missing.length} test files are not compiled (first: ${path.relative(root, missing[0])}) — run \`npx tsc -p tsconfig.json\`\n`);
  process.exit(1);
}
const run = spawnSync(process.execPath, ["--test", `--test-concurrency=${pure ? 2 : 1}`, ...passed, ...files], { cwd: root, stdio: "inherit" });
process.exit(run.status ?? 1);
