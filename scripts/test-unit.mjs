#!/usr/bin/env node
// The pure tier: every compiled test whose source file names no tier (`.vllm`, `.worker`, `.model`, `.browser`, `.sandbox`, `.postgres`, `.stress`;
// see src/test-tiers.test.ts). The list comes from src/, so a test file renamed since the last build is not run from a
// stale copy left in dist/. Extra arguments go to `node --test` (e.g. `--test-name-pattern=...`).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TIERED = /\.(?:vllm|worker|model|browser|sandbox|postgres|stress)\.(?:[a-z]+\.)*test\.ts$/;

function pureTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return pureTests(full);
    return entry.name.endsWith(".test.ts") && !TIERED.test(entry.name) ? [full] : [];
  });
}

const files = pureTests(path.join(root, "src")).map((file) => path.join(root, "dist", path.relative(path.join(root, "src"), file)).replace(/\.ts$/, ".js"));
const missing = files.filter((file) => !existsSync(file));
if (missing.length > 0) {
  process.stderr.write(`test:unit: ${missing.length} test files are not compiled (first: ${path.relative(root, missing[0])}) — run \`npx tsc -p tsconfig.json\`\n`);
  process.exit(1);
}
const run = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...process.argv.slice(2), ...files], { cwd: root, stdio: "inherit" });
process.exit(run.status ?? 1);
